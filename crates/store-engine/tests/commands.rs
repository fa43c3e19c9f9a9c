//! workflow_command (SPEC C6) on both backends: the schema applies twice, a claim takes a row
//! once, a mark is fenced by its owner, an expired lease lets another worker take the row over.

mod common;

use jiff::SignedDuration;
use kairos_store::{Sql, Store};
use kairos_store_engine::commands::{self, NewCommand, Outcome, Status};
use std::sync::Arc;

fn cmd(id: &str) -> NewCommand {
    NewCommand {
        request_id: id.into(),
        command_type: commands::START_PROCESS.into(),
        business_type: "order".into(),
        business_id: format!("biz-{id}"),
        lifecycle_no: Some(1),
        payload: serde_json::json!({"processDefinitionKey": "p"}),
    }
}

async fn schema_insert_get_list(store: Arc<dyn Store>) {
    let db: &dyn Sql = &*store;
    commands::schema(db).await.unwrap();
    commands::schema(db).await.expect("the schema applies twice");
    db.write_all(&[commands::insert(db, &cmd("r1"))]).await.unwrap();
    let again = db.write_all(&[commands::insert(db, &cmd("r1"))]).await;
    assert!(again.is_err(), "a second insert of one request id must fail");
    let c = commands::get(db, "r1").await.unwrap().expect("the command");
    assert_eq!(c.status, Status::Pending);
    assert_eq!(c.business_id, "biz-r1");
    assert_eq!(c.lifecycle_no, Some(1));
    assert_eq!(c.payload["processDefinitionKey"], "p");
    assert!(commands::get(db, "nope").await.unwrap().is_none());
    db.write_all(&[commands::insert(db, &cmd("r2"))]).await.unwrap();
    let filter = commands::Filter { business_id: Some("biz-r2".into()), ..Default::default() };
    let l = commands::list(db, &filter, 10).await.unwrap();
    assert_eq!(l.iter().map(|c| c.request_id.as_str()).collect::<Vec<_>>(), ["r2"]);
    let filter = commands::Filter { status: Some(Status::Pending), ..Default::default() };
    assert_eq!(commands::list(db, &filter, 10).await.unwrap().len(), 2);
    let stats = commands::stats(db).await.unwrap();
    assert_eq!(stats.by_status, vec![(Status::Pending, 2)]);
    assert!(stats.oldest_waiting_due.is_some());
}

async fn claim_once_and_fenced_mark(store: Arc<dyn Store>) {
    let db: &dyn Sql = &*store;
    commands::schema(db).await.unwrap();
    db.write_all(&[commands::insert(db, &cmd("c1"))]).await.unwrap();
    let lease = SignedDuration::from_secs(60);
    let a = commands::claim(db, "worker-a", lease, 10).await.unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].status, Status::Processing);
    assert_eq!(a[0].attempts, 1);
    assert_eq!(a[0].owner.as_deref(), Some("worker-a"));
    assert!(commands::claim(db, "worker-b", lease, 10).await.unwrap().is_empty(), "a leased row is not claimed twice");
    let done = Outcome::Succeeded { process_instance_id: Some("pi-1".into()), result_code: "STARTED".into() };
    assert!(!commands::mark(db, "c1", "worker-b", &done).await.unwrap(), "another owner's mark must not be written");
    assert!(commands::mark(db, "c1", "worker-a", &done).await.unwrap());
    let c = commands::get(db, "c1").await.unwrap().unwrap();
    assert_eq!(c.status, Status::Succeeded);
    assert_eq!(c.process_instance_id.as_deref(), Some("pi-1"));
    assert!(commands::claim(db, "worker-b", lease, 10).await.unwrap().is_empty(), "a SUCCEEDED row is done");
    assert!(!commands::mark(db, "c1", "worker-a", &done).await.unwrap(), "a mark is written once");
}

async fn expired_lease_is_taken_over_and_retry_waits(store: Arc<dyn Store>) {
    let db: &dyn Sql = &*store;
    commands::schema(db).await.unwrap();
    db.write_all(&[commands::insert(db, &cmd("e1"))]).await.unwrap();
    let a = commands::claim(db, "worker-a", SignedDuration::from_millis(-1000), 10).await.unwrap();
    assert_eq!(a.len(), 1);
    let b = commands::claim(db, "worker-b", SignedDuration::from_secs(60), 10).await.unwrap();
    assert_eq!(b.len(), 1, "a passed lease lets another worker take the row");
    assert_eq!(b[0].attempts, 2);
    let failed = Outcome::Failed { result_code: "X".into(), error: None };
    assert!(!commands::mark(db, "e1", "worker-a", &failed).await.unwrap(), "the crashed owner is fenced out");
    let retry = Outcome::Retry { error: "db down".into(), backoff: SignedDuration::from_secs(3600) };
    assert!(commands::mark(db, "e1", "worker-b", &retry).await.unwrap());
    let c = commands::get(db, "e1").await.unwrap().unwrap();
    assert_eq!(c.status, Status::Retry);
    assert_eq!(c.last_error.as_deref(), Some("db down"));
    assert!(
        commands::claim(db, "worker-c", SignedDuration::from_secs(60), 10).await.unwrap().is_empty(),
        "not due yet"
    );
    assert!(commands::requeue(db, "e1").await.unwrap());
    assert_eq!(commands::claim(db, "worker-c", SignedDuration::from_secs(60), 10).await.unwrap().len(), 1);
}

on_both_backends!(schema_insert_get_list, claim_once_and_fenced_mark, expired_lease_is_taken_over_and_retry_waits);
