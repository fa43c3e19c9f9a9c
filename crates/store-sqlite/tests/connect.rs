//! Opening SQLite stores: URLs, concurrent migration, and the durability pragmas.

use kairos_store::{ErrorKind, Store};
use kairos_store_sqlite::SqliteStore;

#[tokio::test]
async fn in_memory_urls_are_refused_with_a_reason() {
    let e = SqliteStore::connect("sqlite::memory:").await.expect_err("in-memory");
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(e.message.contains("sqlite://PATH"), "{}", e.message);
}

#[tokio::test]
async fn two_processes_can_migrate_the_same_new_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("k.db").display());
    let (a, b) = (SqliteStore::connect(&url).await.unwrap(), SqliteStore::connect(&url).await.unwrap());
    let (ra, rb) = tokio::join!(a.migrate(), b.migrate());
    ra.expect("first migration");
    rb.expect("second migration");
    a.migrate().await.expect("migrating again is a no-op");
    assert!(b.job_counts().await.is_ok());
}

#[tokio::test]
async fn connections_are_durable_and_wait_for_writers() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::connect(&format!("sqlite://{}", dir.path().join("k.db").display())).await.unwrap();
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(store.pool()).await.unwrap();
    assert_eq!(journal, "wal");
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(store.pool()).await.unwrap();
    assert_eq!(sync, 2, "synchronous=FULL");
    let busy: i64 = sqlx::query_scalar("PRAGMA busy_timeout").fetch_one(store.pool()).await.unwrap();
    assert_eq!(busy, 30_000);
}

#[tokio::test]
async fn operator_queries_decode_each_value_by_its_stored_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::connect(&format!("sqlite://{}", dir.path().join("k.db").display())).await.unwrap();
    use kairos_store::SqlValue::*;
    let rows = store
        .sql_query(
            "SELECT 1.5, 2, 'x', NULL, x'00ff', ?, ?",
            &[Bool(true), Timestamp("2026-01-02T03:04:05.678Z".parse().unwrap())],
        )
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Float(1.5),
            Int(2),
            Text("x".into()),
            Null,
            Bytes(vec![0, 255]),
            Int(1),
            Text("2026-01-02 03:04:05.678".into())
        ]]
    );
    let e = store.sql_query("SELEC 1", &[]).await.expect_err("a syntax error");
    assert_eq!(e.kind, ErrorKind::Invalid, "the operator's SQL is the operator's input: {e}");
}
