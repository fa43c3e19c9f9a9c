//! `kairos serve`, `kairos doctor` and `kairos bench jobs`, through the real binary.

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;
use support::{ChildGuard, Kairos, assert_one_line_error, eventually, first_line, http_get, wait_for_exit};

#[test]
fn serve_runs_a_job_enqueued_before_and_stops_cleanly_on_sigterm() {
    let k = Kairos::new();
    let id = k.ok(&["jobs", "enqueue", "--handler", "log", "--payload", r#"{"hello":"serve"}"#]).trim().to_string();
    let failing =
        k.ok(&["jobs", "enqueue", "--handler", "fail", "--payload", r#"{"message":"drill"}"#, "--retries", "1"]);
    let failing = failing.trim().to_string();

    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--listen", "127.0.0.1:0", "--node-id", "cli-test", "--json", "--shutdown-grace", "PT5S"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let Some(ready) = first_line(child, Duration::from_secs(30)) else {
        let status = wait_for_exit(child, Duration::from_secs(1));
        panic!("serve printed no start line (exit {status:?})");
    };
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    assert_eq!(
        (ready["node"].as_str(), ready["store"].as_str(), ready["executor"].as_bool()),
        (Some("cli-test"), Some("sqlite"), Some(true))
    );
    let addr = ready["listen"].as_str().unwrap().to_string();

    let health = eventually(Duration::from_secs(10), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200));
    let (_, body) = health.expect("GET /health never answered 200");
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((health["status"].as_str(), health["node"].as_str()), (Some("ok"), Some("cli-test")));

    // The job ran: its attempt is in the job log and its row is gone.
    let ran = eventually(Duration::from_secs(15), || {
        let log = k.json(&["jobs", "log", "--job", &id]);
        log["data"].as_array().and_then(|rows| rows.iter().find(|r| r["outcome"] == "succeeded").cloned())
    });
    let entry = ran.expect("the job never ran");
    assert_eq!(entry["node"], "cli-test");
    // The failing job used its only attempt and became a dead letter.
    let dead = eventually(Duration::from_secs(15), || {
        let page = k.json(&["jobs", "--dead"]);
        (page["total"] == 1).then(|| page["data"][0].clone())
    });
    let dead = dead.expect("the failing job never became a dead letter");
    assert_eq!((dead["id"].as_str(), dead["exceptionMessage"].as_str()), (Some(failing.as_str()), Some("drill")));
    assert!(k.job_ids().is_empty());

    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let status = wait_for_exit(child, Duration::from_secs(10)).expect("serve did not exit within 10 s of SIGTERM");
    assert_eq!(status.code(), Some(0), "serve's exit status after SIGTERM");

    // With the node stopped: the dead letter's stack trace, then back to ACT_RU_JOB.
    let trace = k.ok(&["jobs", "stacktrace", &failing]);
    assert!(trace.contains("drill") && trace.contains("caused by"), "{trace}");
    let log = k.json(&["jobs", "log", "--job", &failing]);
    assert_eq!(log["data"][0]["outcome"], "dead-lettered");
    let moved = k.json(&["jobs", "retry", &failing, "--retries", "2"]);
    assert_eq!((moved["id"].as_str(), moved["retries"].as_i64()), (Some(failing.as_str()), Some(2)));
    assert_eq!(k.job_ids(), vec![failing.clone()]);
    assert_eq!(k.json(&["jobs", "--dead"])["total"], 0);
    assert_one_line_error(&k.run(&["jobs", "retry", &failing]), 2, "retrying a job that is no dead letter");
}

#[test]
fn serve_refuses_an_address_in_use() {
    let k = Kairos::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let mut guard = ChildGuard(
        k.command().args(["serve", "--listen", &addr]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap(),
    );
    let child = &mut guard.0;
    let status = wait_for_exit(child, Duration::from_secs(30)).expect("serve did not give up on a taken port");
    assert_eq!(status.code(), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.lines().any(|l| l.starts_with("error: cannot listen on")), "{stderr}");
}

#[test]
fn doctor_prints_findings_and_exits_by_severity() {
    let k = Kairos::new();
    let out = k.run(&["doctor", "--json"]);
    let code = out.status.code();
    assert!(matches!(code, Some(0) | Some(3)), "doctor exit {code:?}: {}", String::from_utf8_lossy(&out.stderr));
    let _: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    let text = k.run(&["doctor"]);
    assert_eq!(text.status.code(), code);
    assert!(!text.stdout.is_empty());
}

#[test]
fn bench_prints_one_json_line_and_refuses_a_non_empty_job_table() {
    let k = Kairos::new();
    k.ok(&["jobs", "enqueue", "--handler", "log", "--in", "PT1H"]);
    let args = [
        "bench",
        "jobs",
        "--jobs",
        "2000",
        "--workers",
        "8",
        "--timers-pending",
        "1000",
        "--timers",
        "50",
        "--spread",
        "PT1S",
    ];
    let line = assert_one_line_error(&k.run(&args), 2, "bench on a non-empty job table");
    assert!(line.contains("--reset"), "{line}");

    let mut with_reset = args.to_vec();
    with_reset.push("--reset");
    let out = k.ok(&with_reset);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let r: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!((r["store"].as_str(), r["jobs"].as_u64(), r["workers"].as_u64()), (Some("sqlite"), Some(2000), Some(8)));
    assert_eq!((r["timers_pending"].as_u64(), r["timers"].as_u64()), (Some(1000), Some(50)));
    for field in [
        "enqueue_per_s",
        "drain_per_s",
        "drain_lateness_p50_ms",
        "drain_lateness_p99_ms",
        "timer_lateness_p50_ms",
        "timer_lateness_p99_ms",
        "timer_lateness_max_ms",
    ] {
        assert!(r[field].as_f64().is_some_and(|v| v.is_finite()), "{field} in {r}");
    }
    assert!(r["drain_per_s"].as_f64().unwrap() > 0.0);
    // The bench cleans up after itself: a second run needs no --reset.
    assert!(k.job_ids().is_empty());
}

/// `kairos serve` with an API token (from KAIROS_API_TOKEN): the API answers 401 without it,
/// works with it, and /health stays open; a token too short to be a secret is refused.
#[test]
fn serve_with_an_api_token_lets_only_its_holders_in() {
    let k = Kairos::new();
    let out = k.run(&["serve", "--listen", "127.0.0.1:0", "--api-token", "short"]);
    let line = assert_one_line_error(&out, 2, "a short token");
    assert!(line.contains("16 characters"), "{line}");

    let token = "cli-test-token-0123456789";
    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--listen", "127.0.0.1:0", "--json", "--no-executor"])
            .env("KAIROS_API_TOKEN", token)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let ready = first_line(child, Duration::from_secs(30)).expect("serve printed no start line");
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    assert_eq!(ready["apiToken"], true, "{ready}");
    let addr = ready["listen"].as_str().unwrap().to_string();
    let health = eventually(Duration::from_secs(10), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200));
    assert!(health.is_some(), "GET /health is open");
    let (status, body) = http_get(&addr, "/management/jobs").unwrap();
    assert_eq!(status, 401, "{body}");
    let get_with = |auth: &str| -> (u16, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET /management/jobs HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        (text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0), text)
    };
    assert_eq!(get_with("Bearer not-the-token-0123456789").0, 401);
    let (status, text) = get_with(&format!("Bearer {token}"));
    assert_eq!(status, 200, "{text}");
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert!(wait_for_exit(child, Duration::from_secs(10)).is_some_and(|s| s.success()));
}

/// `--help` says PT0S keeps every job log row and switches the history cleanup off: the flags
/// take it (they answered "zero-length durations are not allowed") and the node starts.
#[test]
fn serve_takes_pt0s_for_the_cleanup_and_the_job_log_retention() {
    let k = Kairos::new();
    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--listen", "127.0.0.1:0", "--json", "--no-executor"])
            .args(["--history-cleanup-every", "PT0S", "--job-log-retention", "PT0S"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let Some(ready) = first_line(child, Duration::from_secs(30)) else {
        let status = wait_for_exit(child, Duration::from_secs(5));
        let mut stderr = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr);
        panic!("serve printed no start line (exit {status:?}): {stderr}");
    };
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    let addr = ready["listen"].as_str().unwrap().to_string();
    let health = eventually(Duration::from_secs(10), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200));
    assert!(health.is_some(), "the node answers");
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert!(wait_for_exit(child, Duration::from_secs(10)).is_some_and(|s| s.success()));

    let out = k.run(&["serve", "--listen", "127.0.0.1:0", "--job-log-retention", "PT5X"]);
    assert_one_line_error(&out, 2, "a malformed retention");
}

/// `kairos serve --max-connections --header-read-timeout`: 300 half-sent requests neither
/// exhaust the node nor stop `/health`; they are closed, and a web page's Host is refused.
#[test]
fn serve_stays_healthy_through_a_flood_of_half_sent_requests() {
    use std::io::{Read, Write};
    let k = Kairos::new();
    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--listen", "127.0.0.1:0", "--json", "--no-executor"])
            .args(["--max-connections", "64", "--header-read-timeout", "PT2S"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let ready = first_line(child, Duration::from_secs(30)).expect("serve printed no start line");
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    let addr = ready["listen"].as_str().unwrap().to_string();
    assert!(
        eventually(Duration::from_secs(10), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200)).is_some()
    );

    let mut flood: Vec<std::net::TcpStream> = (0..300)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
            s
        })
        .collect();
    let (status, body) = http_get(&addr, "/health").expect("GET /health during the flood");
    assert_eq!(status, 200, "{body}");
    for (i, s) in flood.iter_mut().enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut rest = Vec::new();
        // Closed: end of stream, or a reset (the server dropped the unread half request).
        match s.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "half-sent connection {i}: {e}"),
        }
    }
    let (status, body) = http_get(&addr, "/health").unwrap();
    assert_eq!(status, 200, "{body}");

    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /management/jobs HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 403") && reply.contains("host-not-allowed"), "{reply}");

    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert!(wait_for_exit(child, Duration::from_secs(10)).is_some_and(|s| s.success()));
}

#[test]
fn serve_refuses_bad_handler_bindings_before_it_starts() {
    let k = Kairos::new();
    let file = k.dir.path().join("bindings.json");
    std::fs::write(&file, r#"{"com.acme.Mailer": 7}"#).unwrap();
    let file = file.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["serve", "--bind-handler", "mailer"], "write NAME=TARGET"),
        (vec!["serve", "--bind-handler", "mailer=smtp"], "is no binding: write topic:NAME"),
        (vec!["serve", "--bind-handler", "mailer=topic:"], "topic: names nothing"),
        (vec!["serve", "--bind-handler", "=topic:x"], "names no handler"),
        (vec!["serve", "--bind-handler", "svc.post=http:ftp://x/y"], "must be an http or https URL"),
        (vec!["serve", "--handler-bindings", &file], "'com.acme.Mailer' must be a string TARGET"),
    ];
    for (args, expected) in cases {
        let line = assert_one_line_error(&k.run(&args), 2, &format!("{args:?}"));
        assert!(line.contains(expected), "kairos {args:?}: {line}");
    }
}

/// Deny by default: without a token, a node asked to listen beyond loopback refuses to start
/// (and touches no store); `--allow-no-auth` serves it open on purpose, loopback needs neither.
#[test]
fn serve_beyond_loopback_needs_a_token_or_allow_no_auth() {
    let k = Kairos::new();
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let line = assert_one_line_error(&k.run(&["serve", "--listen", listen]), 2, listen);
        assert!(line.contains("--allow-no-auth") && line.contains("KAIROS_API_TOKEN"), "{line}");
    }
    assert!(!k.path("kairos.db").exists(), "the refused start created no store");
    let line = assert_one_line_error(
        &k.run(&["serve", "--listen", "0.0.0.0:0", "--allow-no-auth", "--api-token", "cli-test-token-0123456789"]),
        2,
        "both",
    );
    assert!(line.contains("--allow-no-auth"), "{line}");

    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--listen", "0.0.0.0:0", "--allow-no-auth", "--json", "--no-executor"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let ready = first_line(child, Duration::from_secs(30)).expect("serve printed no start line");
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    let port = ready["listen"].as_str().unwrap().rsplit(':').next().unwrap().to_string();
    let addr = format!("127.0.0.1:{port}");
    let health = eventually(Duration::from_secs(10), || http_get(&addr, "/health").ok().filter(|(s, _)| *s == 200));
    assert!(health.is_some(), "an open node on purpose serves");
    let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert!(wait_for_exit(child, Duration::from_secs(10)).is_some_and(|s| s.success()));
}
