//! `kairos users` and `kairos serve --users` with the real binary: the first admin made from
//! the shell (password on standard input, kept as an Argon2id hash), roles from groups, an API
//! token printed once; bad input exits 2 and writes nothing; a node with users may listen
//! beyond loopback and lets in exactly the callers their credentials and roles allow.

mod support;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;
use support::{ChildGuard, Kairos, assert_one_line_error, first_line, wait_for_exit};

fn with_stdin(k: &Kairos, args: &[&str], input: &str) -> std::process::Output {
    let mut child =
        k.command().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// A GET with an Authorization header; the status code.
fn get_as(addr: &str, path: &str, auth: Option<&str>) -> u16 {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = auth.map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

#[test]
fn the_first_admin_is_made_from_the_shell_and_users_get_in_by_role() {
    let k = Kairos::new();
    let out =
        with_stdin(&k, &["users", "add", "kermit", "--admin", "--password-stdin"], "it is not easy being green\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = with_stdin(&k, &["users", "add", "gonzo", "--group", "sales", "--password-stdin"], "the great gonzo\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let users = k.json(&["users", "list"]);
    let roles: Vec<(String, String)> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["id"].as_str().unwrap().to_string(), u["role"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(roles, [("gonzo".to_string(), "user".to_string()), ("kermit".to_string(), "admin".to_string())]);
    assert!(!k.ok(&["users", "list"]).contains("green"));
    let token = k.ok(&["users", "token", "gonzo", "--name", "laptop"]).trim().to_string();
    assert!(token.starts_with("kairos_"), "{token}");

    // Bad input: exit 2, one line, nothing written.
    for (args, what) in [
        (vec!["users", "add", "a:b"], "':'"),
        (vec!["users", "add", "kermit"], "already exists"),
        (vec!["users", "passwd", "gonzo"], "--password-stdin"),
        (vec!["users", "delete", "nobody"], "no user"),
        (vec!["users", "token", "nobody"], "no user"),
        (vec!["users", "add", "x", "--group", "bad:group"], "':'"),
    ] {
        let line = assert_one_line_error(&k.run(&args), 2, &format!("{args:?}"));
        assert!(line.contains(what), "{args:?}: {line}");
    }
    let line = assert_one_line_error(&with_stdin(&k, &["users", "add", "y", "--password-stdin"], "\n"), 2, "empty");
    assert!(line.contains("empty"), "{line}");
    assert_eq!(k.json(&["users", "list"]).as_array().unwrap().len(), 2, "nothing was written");

    // --users is auth: the node may listen beyond loopback.
    // Logged at debug, every request included, into a file read at the end.
    let log = std::fs::File::create(k.path("serve.log")).unwrap();
    let mut guard = ChildGuard(
        k.command()
            .args(["serve", "--users", "--listen", "0.0.0.0:0", "--json", "--no-executor"])
            .env("RUST_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let child = &mut guard.0;
    let ready: serde_json::Value =
        serde_json::from_str(&first_line(child, Duration::from_secs(30)).expect("serve printed no start line"))
            .unwrap();
    assert_eq!(ready["users"], serde_json::json!(true));
    let port = ready["listen"].as_str().unwrap().rsplit(':').next().unwrap().to_string();
    let addr = format!("127.0.0.1:{port}");
    let kermit = basic("kermit", "it is not easy being green");
    assert_eq!(get_as(&addr, "/health", None), 200);
    assert_eq!(get_as(&addr, "/management/jobs", None), 401);
    assert_eq!(get_as(&addr, "/management/jobs", Some(&basic("kermit", "wrong"))), 401);
    assert_eq!(get_as(&addr, "/management/jobs", Some(&kermit)), 200);
    assert_eq!(get_as(&addr, "/identity/users", Some(&kermit)), 200);
    assert_eq!(get_as(&addr, "/runtime/tasks", Some(&format!("Bearer {token}"))), 200);
    assert_eq!(get_as(&addr, "/management/jobs", Some(&format!("Bearer {token}"))), 403);
    // A password changed from the shell takes effect on the running node.
    let out = with_stdin(&k, &["users", "passwd", "kermit", "--password-stdin"], "a new song\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(get_as(&addr, "/management/jobs", Some(&kermit)), 401);
    assert_eq!(get_as(&addr, "/management/jobs", Some(&basic("kermit", "a new song"))), 200);
    let kill = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert!(wait_for_exit(child, Duration::from_secs(10)).is_some_and(|s| s.success()));
    // No credential reached the log, in any form.
    let logged = std::fs::read_to_string(k.path("serve.log")).unwrap();
    assert!(logged.contains("http request"), "the requests were logged: {logged}");
    for secret in ["it is not easy being green", "a new song", &token, &token[7..], &kermit[6..]] {
        assert!(!logged.contains(secret), "the log holds a credential ({secret})");
    }
}
