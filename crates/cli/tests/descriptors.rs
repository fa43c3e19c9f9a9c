//! A node under a low descriptor limit (issue 14, item 4): its connection limit is fitted to
//! `ulimit -n`, so a flood of half-sent requests is met by evicting them, never by `accept`
//! failing with "too many open files" while `/health` waits for a header timeout.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::node::free_port;
use support::{ChildGuard, Kairos, eventually, http_get};

/// Far longer than the waits below: `/health` must not need a header timeout to answer.
const HEADER_TIMEOUT: &str = "PT300S";

#[test]
fn health_answers_through_a_flood_of_half_sent_requests_under_a_low_descriptor_limit() {
    let k = Kairos::new();
    let addr = format!("127.0.0.1:{}", free_port());
    let log = k.path("node.log");
    let out = std::fs::File::create(&log).unwrap();
    // `ulimit -n` sets the soft and the hard limit: the node cannot raise it.
    let child = Command::new("sh")
        .args(["-c", "ulimit -n 256 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_kairos"))
        .args(["serve", "--db", &k.db, "--listen", &addr, "--header-read-timeout", HEADER_TIMEOUT])
        .env("RUST_LOG", "info")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let _node = ChildGuard(child);
    let up = eventually(Duration::from_secs(60), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200));
    assert!(up.is_some(), "the node did not come up: {}", std::fs::read_to_string(&log).unwrap_or_default());

    // Four times the descriptors the node may open, each holding a request head without its end.
    let mut flood = Vec::new();
    let started = std::time::Instant::now();
    for _ in 0..1_024 {
        if started.elapsed() > Duration::from_secs(60) {
            break;
        }
        let Ok(mut s) = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(2)) else { continue };
        if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n").is_ok() {
            flood.push(s);
        }
    }
    assert!(flood.len() > 256, "only {} of the flood's connections were made", flood.len());
    eprintln!("{} half-sent requests open after {:?}", flood.len(), started.elapsed());

    let answered = eventually(Duration::from_secs(30), || health(&addr).filter(|s| s.starts_with("HTTP/1.1 200")));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(answered.is_some(), "/health did not answer through the flood; node log:\n{text}");
    assert!(text.contains("fewer HTTP connections than asked"), "no warning about the fitted limit:\n{text}");
    assert!(!text.contains("Too many open files"), "accept ran out of descriptors:\n{text}");
    drop(flood);
}

/// `GET /health`, each step bounded (a node out of descriptors leaves the connection in the
/// listen queue, where a plain connect waits for minutes): the answer's text, or `None`.
fn health(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(text)
}
