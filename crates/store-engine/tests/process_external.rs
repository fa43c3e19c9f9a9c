//! External tasks on both backends: lock (at most `max`, not a locked one), read back, the
//! lock's owner, the fence, a failure to zero retries making a dead letter.

mod common;
mod process_fixture;

use jiff::SignedDuration;
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process as tables;
use process_fixture::*;
use std::sync::Arc;

async fn two_external_tasks(store: &dyn Store) {
    let def = deploy(store, "k").await;
    started(store, &instance("p1", &def, "k")).await;
    started(store, &instance("p2", &def, "k")).await;
}

async fn a_worker_locks_due_tasks_of_its_topic_once(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    let now = store.db_now().await.unwrap();
    let until = now + SignedDuration::from_mins(5);
    assert_eq!(tables::external_lock(&*store, "other-topic", "w1", now, until, 10).await.unwrap(), 0);
    assert_eq!(tables::external_lock(&*store, "mail", "w1", now, until, 1).await.unwrap(), 1);
    let locked = tables::external_locked(&*store, "mail", "w1", now).await.unwrap();
    assert_eq!(locked.len(), 1);
    let t = &locked[0];
    assert_eq!((t.element_id.as_str(), t.retries, t.lock_expiration_time), ("review", 3, Some(until)));
    assert_eq!(t.execution_id, format!("{}-x", t.process_instance_id));
    // The other one is left for the next worker; the locked one is not taken from w1.
    assert_eq!(tables::external_lock(&*store, "mail", "w2", now, until, 10).await.unwrap(), 1);
    let w2 = tables::external_locked(&*store, "mail", "w2", now).await.unwrap();
    assert_ne!(w2[0].id, t.id);
    let lock = tables::external_lock_of(&*store, &t.id).await.unwrap().unwrap();
    assert_eq!(
        (lock.owner.as_deref(), lock.process_instance_id.as_str()),
        (Some("w1"), t.process_instance_id.as_str())
    );
    assert!(tables::external_lock_of(&*store, "nope").await.unwrap().is_none());
    assert_eq!(tables::external_retries(&*store, &t.id).await.unwrap(), Some(3));
}

async fn a_failure_without_retries_left_is_a_dead_letter_and_the_fence_holds(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    let now = store.db_now().await.unwrap();
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 10).await.unwrap();
    let id = "p1-j";
    let e = store.write_all(&[tables::external_fence(id, "w2")]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "another worker's outcome is fenced off");
    store.write_all(&tables::external_fail_writes(id, "w1", 2, "boom", None, now)).await.unwrap();
    let lock = tables::external_lock_of(&*store, id).await.unwrap().unwrap();
    assert_eq!(lock.owner, None, "the lock is released");
    assert_eq!(tables::external_retries(&*store, id).await.unwrap(), Some(2));
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 10).await.unwrap();
    store.write_all(&tables::external_fail_writes(id, "w1", 0, "boom", None, now)).await.unwrap();
    assert!(tables::external_lock_of(&*store, id).await.unwrap().is_none());
    assert_eq!(tables::instance_dead_letter(&*store, "p1").await.unwrap().as_deref(), Some(id));
}

async fn a_task_without_its_execution_is_named(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    store.sql_execute("UPDATE ACT_RU_JOB SET EXECUTION_ID_ = NULL WHERE ID_ = 'p1-j'", &[]).await.unwrap();
    let now = store.db_now().await.unwrap();
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 10).await.unwrap();
    let e = tables::external_locked(&*store, "mail", "w1", now).await.unwrap_err();
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_JOB", "p1-j", "EXECUTION_ID_"));
}

on_both_backends!(
    a_worker_locks_due_tasks_of_its_topic_once,
    a_failure_without_retries_left_is_a_dead_letter_and_the_fence_holds,
    a_task_without_its_execution_is_named,
);
