//! SPEC C1: a job enqueued inside the caller's own transaction commits or rolls back with the
//! caller's business rows.

use kairos_core::enqueue::Due;
use kairos_core::{EnqueueRequest, JobTable, NewJob};
use kairos_store::{SqlValue, Store};
use kairos_store_postgres::job_insert_in;
use kairos_store_postgres::test_support::test_store;

fn job() -> NewJob {
    EnqueueRequest { handler: "ship-order".into(), ..Default::default() }.validate(|_| true).unwrap()
}

async fn orders(store: &dyn Store, id: &str) -> i64 {
    let rows = store
        .sql_query("SELECT count(*) FROM business_order WHERE id = ?", &[SqlValue::Text(id.into())])
        .await
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

#[tokio::test]
async fn a_job_enqueued_in_the_callers_transaction_rolls_back_and_commits_with_it() {
    let Some(store) = test_store().await else { return };
    store.sql_execute("CREATE TABLE business_order (id TEXT PRIMARY KEY, total INTEGER NOT NULL)", &[]).await.unwrap();

    let rolled_back = job();
    let mut tx = store.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO business_order (id, total) VALUES ('o-1', 42)").execute(&mut *tx).await.unwrap();
    let stored = job_insert_in(&mut tx, &rolled_back).await.unwrap();
    assert_eq!(stored.id, rolled_back.id);
    tx.rollback().await.unwrap();
    assert_eq!(orders(&store, "o-1").await, 0);
    assert!(store.job_get(JobTable::Runtime, &rolled_back.id).await.unwrap().is_none(), "the job rolled back too");

    // A relative due date is resolved by the clock of the caller's transaction.
    let committed = NewJob { due: Due::In("PT5M".parse().unwrap()), ..job() };
    let mut tx = store.pool().begin().await.unwrap();
    sqlx::query("INSERT INTO business_order (id, total) VALUES ('o-1', 42)").execute(&mut *tx).await.unwrap();
    let tx_now: jiff_sqlx::Timestamp =
        sqlx::query_scalar("SELECT date_trunc('milliseconds', now())").fetch_one(&mut *tx).await.unwrap();
    let stored = job_insert_in(&mut tx, &committed).await.unwrap();
    assert_eq!(stored.duedate, Some(tx_now.to_jiff() + jiff::SignedDuration::from_mins(5)));
    tx.commit().await.unwrap();
    assert_eq!(orders(&store, "o-1").await, 1);
    assert!(store.job_get(JobTable::Runtime, &committed.id).await.unwrap().is_some(), "the job committed too");
}
