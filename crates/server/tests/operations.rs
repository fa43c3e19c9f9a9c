//! Health, engine, doctor, metrics, history, unknown routes, a broken database, and `serve` on
//! a real socket.

mod common;

use axum::http::{Method, StatusCode};
use common::{App, app, ok_json};
use kairos::store::NodeRegistration;
use kairos::{Engine, EnqueueRequest};
use serde_json::json;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn health_names_the_node_and_the_store() {
    let app = app().await;
    let r = app.get("/health").await;
    assert_eq!(*ok_json(&r, StatusCode::OK), json!({"status": "ok", "node": "test-node", "store": "sqlite"}));
}

#[tokio::test]
async fn engine_shows_settings_handlers_and_nodes() {
    let app = app().await;
    let reg = NodeRegistration { id: "node-b".into(), host: "host-b".into(), pid: 42, workers: 8, settings: None };
    app.engine.store().node_heartbeat(&reg).await.unwrap();
    let r = app.get("/management/engine").await;
    let e = ok_json(&r, StatusCode::OK);
    assert_eq!(e["node"], "test-node");
    assert_eq!(e["store"], "sqlite");
    assert_eq!(e["settings"]["executorEnabled"], false);
    assert_eq!(e["settings"]["lockTime"], "PT5M");
    assert!(e["settings"]["workers"].as_u64().unwrap() >= 1);
    let handlers: Vec<&str> = e["handlers"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
    for h in ["log", "sleep", "fail", "noop"] {
        assert!(handlers.contains(&h), "{h} in {handlers:?}");
    }
    let node = &e["nodes"][0];
    assert_eq!(node["id"], "node-b");
    assert_eq!(node["host"], "host-b");
    assert_eq!(node["state"], "running");
    assert_eq!(node["alive"], true);
    assert!(node["lastHeartbeat"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn doctor_answers_over_http() {
    let app = app().await;
    let r = app.get("/management/doctor").await;
    let report = ok_json(&r, StatusCode::OK);
    let codes: Vec<&str> = report["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"executor-off") && codes.contains(&"no-live-node"), "{codes:?}");
    let f = &report["findings"][0];
    for key in ["severity", "code", "title", "detail", "action", "jobId", "triggerGroup", "triggerName"] {
        assert!(f.get(key).is_some(), "{key} in {f}");
    }

    let r = app.get("/management/doctor?businessKey=order-42").await;
    let report = ok_json(&r, StatusCode::OK);
    let first = &report["findings"][0];
    assert_eq!((first["code"].as_str(), first["severity"].as_str()), (Some("no-instance"), Some("error")));
    assert!(first["title"].as_str().unwrap().contains("order-42"));

    let r = app.get("/management/doctor?businessKey=a&processInstanceId=b").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = app.get("/management/doctor?instance=b").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}

#[tokio::test]
async fn metrics_carry_the_executor_and_the_job_gauges() {
    let app = app().await;
    app.dead_letter("fail").await;
    app.enqueue(EnqueueRequest { handler: "log".into(), ..Default::default() }).await;
    app.enqueue(EnqueueRequest { handler: "log".into(), due_in: Some("PT1H".into()), ..Default::default() }).await;
    let r = app.get("/metrics").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.content_type.contains("openmetrics-text") || r.content_type.starts_with("text/plain"),
        "{}",
        r.content_type
    );
    for line in [
        "kairos_jobs_executable 1",
        "kairos_jobs_waiting 1",
        "kairos_jobs_running 0",
        "kairos_jobs_expired_locks 0",
        "kairos_jobs_failing 0",
        "kairos_jobs_dead_letters 1",
        "kairos_store_up 1",
        "kairos_executor_enabled 0",
    ] {
        assert!(r.text.lines().any(|l| l == line), "{line:?} in\n{}", r.text);
    }
    assert!(r.text.contains("kairos_jobs_oldest_executable_age_seconds "), "{}", r.text);
    assert!(r.text.contains("kairos_job_lease_lost_total 0"), "the executor's metrics are there: {}", r.text);
    assert!(r.text.contains("kairos_job_handler_seconds_bucket"), "{}", r.text);
}

#[tokio::test]
async fn the_job_log_lists_attempts_by_job_and_paged() {
    let app = app().await;
    let a = app.dead_letter("fail").await;
    let b = app.dead_letter("fail").await;
    let r = app.get("/history/job-log").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["total"], 2);
    let r = app.get(&format!("/history/job-log?jobId={}", b.id)).await;
    let log = ok_json(&r, StatusCode::OK);
    assert_eq!(log["total"], 1);
    let entry = &log["data"][0];
    assert_eq!(entry["jobId"], b.id.as_str());
    for key in
        ["attempt", "node", "start", "end", "outcome", "message", "handlerType", "processInstanceId", "elementId"]
    {
        assert!(entry.get(key).is_some(), "{key} in {entry}");
    }
    let r = app.get("/history/job-log?size=1&start=1").await;
    let page = ok_json(&r, StatusCode::OK);
    assert_eq!((page["total"].as_u64(), page["size"].as_u64(), page["start"].as_u64()), (Some(2), Some(1), Some(1)));
    assert_ne!(page["data"][0]["jobId"], json!(a.id), "oldest first: the second page holds the second job");
    assert_eq!(app.get("/history/job-log?processInstanceId=none").await.json["total"], 0);
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let app = app().await;
    let r = app.get("/management/nothing-here").await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"));
    let r = app.send(Method::PUT, "/management/jobs", Some(b"{}".to_vec())).await;
    assert_eq!((r.status, r.error().0), (StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed"), "{}", r.text);
    let r = app.send(Method::DELETE, "/health", None).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

/// A database that stopped answering: health says 503, API errors leak nothing, metrics still
/// answer with `kairos_store_up 0`.
#[tokio::test]
async fn a_broken_database_gives_503s_that_leak_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/k.db", dir.path().display());
    let store = Arc::new(kairos_store_sqlite::SqliteStore::connect(&url).await.unwrap());
    let engine = Engine::builder(url).store(store.clone()).executor_enabled(false).node_id("n1").build().await.unwrap();
    let app = App::from_engine(Arc::new(engine));
    store.pool().close().await;

    let r = app.get("/health").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.json["status"], "unavailable");
    assert_eq!(r.json["node"], "n1");

    let r = app.get("/management/jobs").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);
    let (code, message) = r.error();
    assert_eq!(code, "unavailable");
    assert!(message.contains("reference"), "{message}");
    assert!(!message.to_lowercase().contains("pool") && !message.contains("sqlite"), "nothing leaks: {message}");

    let r = app.post("/management/jobs", json!({"handler": "log"})).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);
    let r = app.get("/management/doctor").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.text);

    let r = app.get("/metrics").await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.text.lines().any(|l| l == "kairos_store_up 0"), "{}", r.text);
    assert!(!r.text.contains("kairos_jobs_executable"), "{}", r.text);
}

#[tokio::test]
async fn serve_answers_on_a_socket_and_stops_gracefully() {
    let app = app().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(kairos_server::serve(app.engine.clone(), listener, async {
        let _ = stopped.await;
    }));

    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut reply = String::new();
    tokio::time::timeout(std::time::Duration::from_secs(10), conn.read_to_string(&mut reply)).await.unwrap().unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""status":"ok""#), "{reply}");

    stop.send(()).unwrap();
    let result = tokio::time::timeout(std::time::Duration::from_secs(10), server).await.unwrap().unwrap();
    assert!(result.is_ok(), "{result:?}");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "the listener is closed");
}
