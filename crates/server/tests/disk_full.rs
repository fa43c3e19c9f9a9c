//! A full disk on SQLite: enqueues answer 503 saying so, `GET /health` answers 503 with the
//! reason while the node cannot write, and both recover by themselves once space returns.
//!
//! The disk is SQLite's own `max_page_count` on every connection (the database may not grow
//! past it, so writes that need a page fail with SQLITE_FULL as on a full disk), rather than a
//! real file system filled up on a shared machine.

mod common;

use axum::http::StatusCode;
use common::App;
use kairos::Engine;
use kairos_store_sqlite::SqliteStore;
use serde_json::json;
use sqlx::AssertSqlSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// SQLite raises a limit below the file's size to the size: no more room.
const FULL: u32 = 1;
const ROOMY: u32 = 4_294_967_294;

async fn apply(conn: &mut sqlx::SqliteConnection, pages: u32) -> sqlx::Result<()> {
    sqlx::query(AssertSqlSafe(format!("PRAGMA max_page_count = {pages}"))).execute(conn).await.map(drop)
}

/// An app (executor off: no heartbeat writes behind the test's back) on a SQLite file whose
/// connections may grow it only to `limit` pages.
async fn limited_app(dir: &tempfile::TempDir) -> (App, Arc<AtomicU32>) {
    let limit = Arc::new(AtomicU32::new(ROOMY));
    let url = format!("sqlite://{}", dir.path().join("k.db").display());
    let (on_acquire, on_connect) = (limit.clone(), limit.clone());
    let pool = SqliteStore::pool_options()
        .after_connect(move |conn, _| Box::pin(apply(conn, on_connect.load(Ordering::SeqCst))))
        .before_acquire(move |conn, _| {
            let pages = on_acquire.load(Ordering::SeqCst);
            Box::pin(async move { apply(conn, pages).await.map(|()| true) })
        })
        .connect_with(SqliteStore::connect_options(&url).unwrap())
        .await
        .unwrap();
    let engine = Engine::builder(url)
        .node_id("test-node")
        .store(Arc::new(SqliteStore::from_pool(pool)))
        .executor_enabled(false)
        .build()
        .await
        .unwrap();
    (App::from_engine(Arc::new(engine)), limit)
}

fn bulky() -> serde_json::Value {
    json!({ "handler": "log", "payload": { "pad": "x".repeat(4096) } })
}

#[tokio::test]
async fn health_is_503_with_the_reason_while_the_disk_is_full_and_200_once_writes_commit_again() {
    let dir = tempfile::tempdir().unwrap();
    let (app, limit) = limited_app(&dir).await;
    assert_eq!(app.get("/health").await.status, StatusCode::OK);

    limit.store(FULL, Ordering::SeqCst);
    let mut refused = None;
    for _ in 0..1_000 {
        let r = app.post("/management/jobs", bulky()).await;
        if r.status != StatusCode::CREATED {
            refused = Some(r);
            break;
        }
    }
    let refused = refused.expect("the disk fills up");
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.text);
    assert!(refused.error().1.contains("database or disk is full"), "the 503 says why: {}", refused.text);
    for _ in 0..5 {
        let r = app.post("/management/jobs", bulky()).await;
        assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "every later write says the same: {}", r.text);
        assert!(r.error().1.contains("full"), "{}", r.text);
    }
    let h = app.get("/health").await;
    assert_eq!(h.status, StatusCode::SERVICE_UNAVAILABLE, "{}", h.text);
    assert_eq!(h.json["status"], "unavailable");
    let (code, message) = h.error();
    assert_eq!(code, "unavailable");
    assert!(message.contains("cannot be written") && message.contains("full"), "{message}");

    limit.store(ROOMY, Ordering::SeqCst);
    let r = app.post("/management/jobs", bulky()).await;
    assert_eq!(r.status, StatusCode::CREATED, "writes resume once space returns: {}", r.text);
    let h = app.get("/health").await;
    assert_eq!(h.status, StatusCode::OK, "{}", h.text);
    for _ in 0..5 {
        assert_eq!(app.post("/management/jobs", bulky()).await.status, StatusCode::CREATED);
    }
}
