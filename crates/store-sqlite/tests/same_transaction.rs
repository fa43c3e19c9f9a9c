//! SPEC C1: a job inserted inside the caller's own transaction commits or rolls back with the
//! caller's business row. And writers from another "process" (a second pool on the same file)
//! wait for the lock instead of failing.

mod common;

use common::TempStore;
use kairos_core::{EnqueueRequest, NewJob};
use kairos_store::Store;
use kairos_store_sqlite::{SqliteStore, job_insert_in};
use std::time::Duration;

fn ship(order: &str) -> NewJob {
    EnqueueRequest {
        handler: "ship-order".into(),
        payload: Some(serde_json::json!({ "order": order })),
        ..Default::default()
    }
    .validate(|_| true)
    .expect("a valid request")
}

async fn orders(store: &SqliteStore, id: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM orders WHERE id = ?")
        .bind(id)
        .fetch_one(store.pool())
        .await
        .expect("counting orders")
}

#[tokio::test]
async fn a_job_commits_and_rolls_back_with_the_callers_business_row() {
    let t = TempStore::new().await;
    let pool = t.store.pool();
    sqlx::query("CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER NOT NULL)").execute(pool).await.unwrap();

    // Rolled back: neither the order nor its job exists.
    let job = ship("o-1");
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.unwrap();
    sqlx::query("INSERT INTO orders (id, total) VALUES (?, ?)").bind("o-1").bind(42).execute(&mut *tx).await.unwrap();
    let stored = job_insert_in(&mut tx, &job).await.expect("job_insert_in");
    assert_eq!(stored.id, job.id);
    assert_eq!(stored.handler_cfg.as_deref(), Some(r#"{"order":"o-1"}"#));
    tx.rollback().await.unwrap();
    assert_eq!(orders(&t.store, "o-1").await, 0);
    assert_eq!(t.job_get(kairos_core::JobTable::Runtime, &job.id).await.unwrap(), None, "the job rolled back too");

    // Committed: both exist, and the job is an ordinary job.
    let job = ship("o-2");
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.unwrap();
    sqlx::query("INSERT INTO orders (id, total) VALUES (?, ?)").bind("o-2").bind(7).execute(&mut *tx).await.unwrap();
    let stored = job_insert_in(&mut tx, &job).await.expect("job_insert_in");
    tx.commit().await.unwrap();
    assert_eq!(orders(&t.store, "o-2").await, 1);
    assert_eq!(t.job_get(kairos_core::JobTable::Runtime, &job.id).await.unwrap(), Some(stored));
}

#[tokio::test]
async fn a_second_process_waits_for_the_writer_instead_of_failing() {
    let t = TempStore::new().await;
    let url = format!("sqlite://{}", t.store.pool().connect_options().get_filename().display());
    let other = SqliteStore::connect(&url).await.expect("a second store on the same file");

    // The first "process" holds the write lock...
    let mut tx = t.store.pool().begin_with("BEGIN IMMEDIATE").await.unwrap();
    let held = ship("o-1");
    job_insert_in(&mut tx, &held).await.unwrap();

    // ...so the second one's insert waits (busy_timeout) rather than failing with SQLITE_BUSY.
    let waiting = tokio::spawn(async move {
        let job = ship("o-2");
        other.job_insert(&job).await.map(|j| j.id)
    });
    let mut waiting = std::pin::pin!(waiting);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut waiting).await.is_err(),
        "the second writer should be waiting for the lock"
    );
    tx.commit().await.unwrap();
    let id = waiting.await.unwrap().expect("the waiting insert succeeds once the lock is free");
    assert!(t.job_get(kairos_core::JobTable::Runtime, &id).await.unwrap().is_some());
    assert!(t.job_get(kairos_core::JobTable::Runtime, &held.id).await.unwrap().is_some());
}
