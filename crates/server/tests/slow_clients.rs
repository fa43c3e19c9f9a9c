//! Slow and half-sent requests against a real listener (issue 14, item 4): they cannot hold a
//! node's connections or descriptors, and `/health` keeps answering through a flood of them.

mod common;

use common::app;
use kairos_server::{Access, ConnLimits};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longer than any wait below: the test fails if it needed a timeout to pass.
const FOREVER: Duration = Duration::from_secs(600);
/// The bound on every wait for the server (a slow, shared machine; never a measurement).
const BOUND: Duration = Duration::from_secs(60);

/// A node serving on a free loopback port with `limits` until the returned sender is dropped.
async fn serve(limits: ConnLimits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>, common::App) {
    let app = app().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let engine = app.engine.clone();
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stopped.await;
        };
        kairos_server::serve_with(engine, listener, stopped, &Access::default(), limits).await
    });
    (addr, stop, app)
}

/// Connects and sends a request head without its final blank line.
async fn half_sent(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n").await.unwrap();
    s
}

/// Waits (bounded) until the server closes `s`: whatever it sent, then end of stream or reset.
async fn closed_by_server(s: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    match tokio::time::timeout(BOUND, s.read_to_end(&mut got)).await {
        Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
        Err(_) => None,
    }
}

/// One whole request on a fresh connection; its answer, within the bound.
async fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    tokio::time::timeout(BOUND, s.read_to_string(&mut reply))
        .await
        .unwrap_or_else(|_| panic!("no answer to {request:?} within {BOUND:?}"))
        .unwrap();
    reply
}

const HEALTH: &str = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

#[tokio::test]
async fn a_flood_of_half_sent_requests_leaves_health_answering() {
    let limits = ConnLimits { header_read_timeout: FOREVER, body_read_timeout: FOREVER, max_connections: 8 };
    let (addr, _stop, _app) = serve(limits).await;
    let mut flood = Vec::new();
    for _ in 0..40 {
        flood.push(half_sent(addr).await);
    }
    // No timeout can have freed anything: /health answers because the longest-waiting
    // half-sent connections made room.
    let reply = exchange(addr, HEALTH).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""status":"ok""#), "{reply}");
    // At most 8 are held: the 32 oldest were closed, without an answer.
    for (i, s) in flood.iter_mut().take(32).enumerate() {
        let got = closed_by_server(s).await;
        assert_eq!(got.as_deref(), Some(""), "half-sent connection {i} was not closed to make room");
    }
    // And the node still answers a second time, with the flood's newest connections held.
    assert!(exchange(addr, HEALTH).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn half_sent_requests_are_closed_after_the_header_timeout() {
    let limits =
        ConnLimits { header_read_timeout: Duration::from_secs(1), body_read_timeout: FOREVER, max_connections: 512 };
    let (addr, _stop, _app) = serve(limits).await;
    let mut slow = Vec::new();
    for _ in 0..5 {
        slow.push(half_sent(addr).await);
    }
    for (i, s) in slow.iter_mut().enumerate() {
        let got = closed_by_server(s).await;
        assert!(got.is_some(), "half-sent connection {i} was still open after {BOUND:?}");
    }
    // A kept-alive connection that goes quiet is closed the same way.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let reply = closed_by_server(&mut idle).await.expect("an idle kept-alive connection stays open");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(exchange(addr, HEALTH).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_body_that_does_not_arrive_is_answered_408_and_writes_nothing() {
    let limits =
        ConnLimits { header_read_timeout: FOREVER, body_read_timeout: Duration::from_secs(1), max_connections: 512 };
    let (addr, _stop, app) = serve(limits).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = "POST /management/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n";
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(br#"{"handler": "#).await.unwrap();
    let reply = closed_by_server(&mut s).await.expect("the server never answered the slow body");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains(r#""code":"request-timeout""#), "{reply}");
    assert_eq!(app.job_rows().await, 0);

    // A deployment, as one document or as a form, the same way.
    for ct in ["application/xml", "multipart/form-data; boundary=b"] {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /repository/deployments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ct}\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.bpmn\"\r\n\r\n<definitions")
            .await
            .unwrap();
        let reply = closed_by_server(&mut s).await.expect("the server never answered the slow deployment");
        assert!(reply.starts_with("HTTP/1.1 408") && reply.contains("request-timeout"), "{ct}: {reply}");
    }
    assert!(exchange(addr, HEALTH).await.starts_with("HTTP/1.1 200"));
}
