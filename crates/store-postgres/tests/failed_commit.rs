//! A COMMIT that fails, or a connection that breaks inside a transaction, must not poison the
//! pool: on a pool of ONE session, every later write still succeeds. (SQLite's counterpart is
//! `crates/store-sqlite/tests/disk_full.rs`.)

use kairos_core::EnqueueRequest;
use kairos_store::{ErrorKind, SqlValue, Store};
use kairos_store_postgres::PgStore;
use kairos_store_postgres::test_support::fresh_schema_url;
use sqlx::{Connection, Executor, Row};

/// A migrated store of one session, so a poisoned session would fail everything after it.
async fn one_session_store() -> Option<PgStore> {
    let url = fresh_schema_url().await?;
    let store = PgStore::connect_with(url.parse().unwrap(), 1).await.unwrap();
    store.migrate().await.unwrap();
    Some(store)
}

async fn writes_still_commit(store: &PgStore, what: &str) {
    for round in 0..5 {
        let job = EnqueueRequest { handler: "log".into(), ..Default::default() }.validate(|_| true).unwrap();
        store.job_insert(&job).await.unwrap_or_else(|e| panic!("{what}: insert {round}: {e:?}"));
        store
            .sql_execute(
                "UPDATE ACT_RU_JOB SET RETRIES_ = ? WHERE ID_ = ?",
                &[SqlValue::Int(3), SqlValue::Text(job.id)],
            )
            .await
            .unwrap_or_else(|e| panic!("{what}: update {round}: {e:?}"));
    }
}

#[tokio::test]
async fn a_commit_refused_by_the_server_leaves_the_session_usable() {
    let Some(store) = one_session_store().await else { return };
    store.sql_execute("CREATE TABLE deferred_check (x INT UNIQUE DEFERRABLE INITIALLY DEFERRED)", &[]).await.unwrap();
    // The duplicate is only found at COMMIT, which then fails and ends the transaction.
    let mut tx = store.pool().begin().await.unwrap();
    tx.execute("INSERT INTO deferred_check VALUES (1), (1)").await.unwrap();
    let e = tx.commit().await.expect_err("the deferred unique check fails the COMMIT");
    assert!(e.to_string().contains("duplicate"), "{e}");
    writes_still_commit(&store, "after a refused COMMIT").await;
}

#[tokio::test]
async fn a_session_killed_inside_a_transaction_is_replaced() {
    let Some(store) = one_session_store().await else { return };
    let mut tx = store.pool().begin().await.unwrap();
    let pid: i32 = tx.fetch_one("SELECT pg_backend_pid()").await.unwrap().get(0);
    tx.execute("INSERT INTO deferred_check_missing_is_fine SELECT 1 WHERE FALSE").await.expect_err("no such table");
    // The transaction is now aborted; kill its session from another connection, then commit.
    let mut admin = sqlx::PgConnection::connect(&std::env::var("KAIROS_TEST_PG_URL").unwrap()).await.unwrap();
    let killed: bool =
        sqlx::query_scalar("SELECT pg_terminate_backend($1)").bind(pid).fetch_one(&mut admin).await.unwrap();
    assert!(killed);
    assert!(tx.commit().await.is_err(), "the session is gone");
    writes_still_commit(&store, "after the session died").await;
    // And through the store's own path: a store write whose session dies fails as Unavailable
    // (not as the caller's mistake), and the next write gets a fresh session.
    let pid: i64 = match &store.sql_query("SELECT pg_backend_pid()", &[]).await.unwrap()[0][0] {
        SqlValue::Int(p) => *p,
        other => panic!("{other:?}"),
    };
    let killed: bool =
        sqlx::query_scalar("SELECT pg_terminate_backend($1)").bind(pid as i32).fetch_one(&mut admin).await.unwrap();
    assert!(killed);
    // The idle session's end reaches the pool only when it is next used.
    for _ in 0..100 {
        let gone: bool = sqlx::query_scalar("SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
            .bind(pid as i32)
            .fetch_one(&mut admin)
            .await
            .unwrap();
        if gone {
            break;
        }
        tokio::task::yield_now().await;
    }
    if let Err(e) = store.sql_query("SELECT 1", &[]).await {
        assert_eq!(e.kind, ErrorKind::Unavailable, "a dead session is the database's trouble, not the caller's: {e:?}");
    }
    writes_still_commit(&store, "after the store's session died").await;
}
