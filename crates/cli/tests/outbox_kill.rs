//! Seed 002 §40's outbox rows with real processes (SPEC C4), on PostgreSQL: an event committed
//! while no publisher ran is sent by a node started later; that node delivers it and is killed
//! with SIGKILL before it can mark it PUBLISHED; the next node sends it again with the same
//! `Idempotency-Key`, and the consumer's inbox applies it once.
//!
//! Needs `KAIROS_TEST_PG_URL`; skips without it unless `KAIROS_REQUIRE_PG=1`.

mod support;

use kairos::Engine;
use kairos::outbox::NewEvent;
use kairos::outbox::http::{HttpSink, HttpSinkSettings};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::node::{Node, free_port};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the consumer saw: each delivery's Idempotency-Key, and how many it applied.
#[derive(Default)]
struct Consumer {
    keys: Vec<String>,
    applied: usize,
}

/// A consumer over plain HTTP/1.1 on 127.0.0.1: applies each event once (its inbox is
/// `kairos::business::inbox_first` on a SQLite file), then answers 204 — except the first
/// delivery, which it applies and never answers (the publisher's node dies waiting).
async fn consumer(inbox: Arc<dyn kairos::Sql>) -> (String, Arc<Mutex<Consumer>>) {
    let seen = Arc::new(Mutex::new(Consumer::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/events", listener.local_addr().unwrap());
    let s = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let (s, inbox) = (s.clone(), inbox.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let key = loop {
                    let n = sock.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let head = &text[..end].to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .map_or(0, |n| n.trim().parse::<usize>().unwrap_or(0));
                        if buf.len() >= end + 4 + len {
                            let key = head.lines().find_map(|l| l.strip_prefix("idempotency-key: ")).unwrap_or("");
                            break key.trim().to_string();
                        }
                    }
                };
                let first = kairos::business::inbox_first(inbox.as_ref(), "directory", &key, None).await.unwrap();
                let hang = {
                    let mut c = s.lock().unwrap();
                    c.keys.push(key);
                    c.applied += usize::from(first);
                    c.keys.len() == 1
                };
                if hang {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                let _ = sock.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n").await;
            });
        }
    });
    (url, seen)
}

fn serve(db: &str, sink: &str, name: &str, dir: &std::path::Path) -> Node {
    let log = dir.join(format!("{name}.log"));
    let out = std::fs::File::create(&log).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_kairos"))
        .args(["serve", "--db", db, "--node-id", name, "--listen"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .args(["--outbox-base-url", sink, "--outbox-allow-host", "127.0.0.1", "--outbox-allow-private"])
        .args(["--outbox-lease", "PT2S"])
        .env("RUST_LOG", "info")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("start kairos serve");
    Node { name: name.into(), child, log }
}

async fn wait_for<F: std::future::Future<Output = bool>>(what: &str, node: &Node, mut f: impl FnMut() -> F) {
    let start = Instant::now();
    while !f().await {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not happen:\n{}", node.log_text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_delivered_by_a_node_killed_before_published_is_sent_again_and_applied_once() {
    let Some(db) = kairos_store_postgres::test_support::fresh_schema_url().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let inbox = kairos::business::connect(&format!("sqlite://{}/consumer.db", dir.path().display())).await.unwrap();
    let store = kairos::open_store(&format!("sqlite://{}/consumer.db", dir.path().display())).await.unwrap();
    store.migrate().await.unwrap(); // the consumer's inbox_message table
    let (sink, seen) = consumer(inbox).await;

    // Committed by a node with no publisher running (its executor off): nothing is sent yet.
    let http = HttpSink::new(HttpSinkSettings {
        base_url: Some(sink.clone()),
        allow_hosts: vec!["127.0.0.1".into()],
        allow_private: true,
        ..Default::default()
    })
    .unwrap();
    let writer =
        Engine::builder(&db).node_id("writer").executor_enabled(false).sink("http", http).build().await.unwrap();
    let event = NewEvent {
        event_id: "evt-publish-1001".into(),
        aggregate_type: "ASSET_PUBLISH_APPLY".into(),
        aggregate_id: "1001".into(),
        event_type: "ASSET_PUBLISH_REQUESTED".into(),
        payload_json: r#"{"applyId":1001}"#.into(),
        target: "http".into(),
        target_url: None,
        ordered: false,
        max_attempts: 5,
    };
    writer.outbox_write(&event).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(seen.lock().unwrap().keys.is_empty(), "no publisher ran yet");

    let mut a = serve(&db, &sink, "a", dir.path());
    wait_for("a's delivery", &a, || async { !seen.lock().unwrap().keys.is_empty() }).await;
    let status = |e: &Engine| {
        let o = e.outbox().clone();
        async move { o.get("evt-publish-1001").await.unwrap().unwrap().event_status }
    };
    assert_eq!(status(&writer).await, "PROCESSING", "delivered, not yet marked");
    a.kill9();

    let mut b = serve(&db, &sink, "b", dir.path());
    wait_for("b's delivery and mark", &b, || async { status(&writer).await == "PUBLISHED" }).await;
    b.terminate();
    let c = seen.lock().unwrap();
    assert_eq!(c.keys, vec!["evt-publish-1001".to_string(); 2], "sent again, with the same key");
    assert_eq!(c.applied, 1, "the consumer's inbox applied it once");
}
