//! A full disk: writes fail with a clear "full" error while it lasts and resume by themselves
//! once space returns, on every write path (job inserts, the engine's group commit, operator SQL).
//!
//! The disk is SQLite's own `max_page_count`, set on every connection as it leaves the pool: the
//! database may not grow past it, so a write that needs a new page fails with SQLITE_FULL exactly
//! as on a full disk (SQLite then rolls the transaction back itself), without filling a real
//! file system on a shared machine.

use kairos_core::enqueue::Due;
use kairos_core::{JobType, NewJob, new_id};
use kairos_store::Sql;
use kairos_store::{ErrorKind, SqlValue, Store, Write};
use kairos_store_sqlite::SqliteStore;
use sqlx::AssertSqlSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The page limit meaning "no more room": SQLite raises a limit below the file's size to it.
const FULL: u32 = 1;
/// SQLite's default page limit.
const ROOMY: u32 = 4_294_967_294;

/// Sets the page limit of one connection (SQLite keeps it per connection).
async fn apply(conn: &mut sqlx::SqliteConnection, pages: u32) -> sqlx::Result<()> {
    sqlx::query(AssertSqlSafe(format!("PRAGMA max_page_count = {pages}"))).execute(conn).await.map(drop)
}

/// A migrated store whose connections may grow the file only to `limit` pages.
async fn limited_store(dir: &tempfile::TempDir) -> (SqliteStore, Arc<AtomicU32>) {
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
    let store = SqliteStore::from_pool(pool);
    store.migrate().await.unwrap();
    (store, limit)
}

/// A job with a 4 KiB payload, so that every few inserts need a new page.
fn bulky() -> NewJob {
    NewJob {
        id: new_id(),
        job_type: JobType::Message,
        due: Due::Now,
        exclusive: false,
        exclusive_key: None,
        execution_id: None,
        process_instance_id: None,
        proc_def_id: None,
        element_id: None,
        element_name: None,
        retries: 3,
        retry_cycle: None,
        repeat: None,
        handler_type: "bulky".to_string(),
        handler_cfg: Some(serde_json::json!({ "pad": "x".repeat(4096) }).to_string()),
        tenant_id: None,
    }
}

/// An engine-style write list (through the group commit) that needs room.
fn engine_insert() -> Vec<Write> {
    vec![Write::new(
        "INSERT INTO ACT_GE_BYTEARRAY (ID_, NAME_, BYTES_) VALUES (?, 'pad', ?)",
        vec![SqlValue::Text(new_id()), SqlValue::Bytes(vec![7; 3000])],
    )]
}

fn assert_full(e: &kairos_store::Error, what: &str) {
    assert_eq!(e.kind, ErrorKind::Unavailable, "{what}: {e:?}");
    assert!(e.message.contains("full"), "{what} must say the database is full: {}", e.message);
}

#[tokio::test]
async fn writes_fail_clearly_while_the_disk_is_full_and_resume_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (store, limit) = limited_store(&dir).await;
    store.job_insert(&bulky()).await.expect("a first insert while there is room");
    assert_eq!(store.write_failure(), None);

    limit.store(FULL, Ordering::SeqCst);
    let mut full = None;
    for _ in 0..1_000 {
        if let Err(e) = store.job_insert(&bulky()).await {
            full = Some(e);
            break;
        }
    }
    assert_full(&full.expect("the disk fills up"), "the first failed insert");
    // The engine's tables may still have room in pages they hold.
    let mut full = None;
    for _ in 0..1_000 {
        if let Err(e) = store.write_all(&engine_insert()).await {
            full = Some(e);
            break;
        }
    }
    assert_full(&full.expect("the engine's writes fill up too"), "the first failed write_all");
    // Every later write, on every path and on whichever pooled connection, says the same thing
    // (before the fix: "attempted to call begin_with at non-zero transaction depth").
    for round in 0..20 {
        assert_full(&store.job_insert(&bulky()).await.unwrap_err(), &format!("insert {round}"));
        assert_full(&store.write_all(&engine_insert()).await.unwrap_err(), &format!("write_all {round}"));
    }

    let why = store.write_failure().expect("the store knows it cannot write");
    assert!(why.contains("full"), "{why}");

    limit.store(ROOMY, Ordering::SeqCst);
    for round in 0..20 {
        store.job_insert(&bulky()).await.unwrap_or_else(|e| panic!("insert {round} once space returned: {e:?}"));
        store.write_all(&engine_insert()).await.unwrap_or_else(|e| panic!("write_all {round}: {e:?}"));
        store
            .sql_execute("UPDATE ACT_RU_JOB SET RETRIES_ = 3", &[])
            .await
            .unwrap_or_else(|e| panic!("sql {round}: {e:?}"));
    }
    assert_eq!(store.write_failure(), None, "a committed write clears it");
    let counts = store.job_counts().await.unwrap();
    assert!(counts.executable >= 21, "{counts:?}");
}
