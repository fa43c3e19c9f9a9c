//! External tasks on both backends: lock (at most `max`, not a locked one; by definition key,
//! id, business key, priority), read back, the lock's owner, the fence, a failure to zero
//! retries making a dead letter; extending, taking and releasing a lock; errorDetails; the
//! list and count over running, suspended and dead-letter tasks.

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

async fn a_fetch_filters_by_definition_business_key_and_priority(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    let other = deploy(&*store, "other").await;
    started(&*store, &instance("p3", &other, "other")).await;
    store.sql_execute("UPDATE ACT_RU_JOB SET PRIORITY_ = 9 WHERE ID_ = 'p2-j'", &[]).await.unwrap();
    let now = store.db_now().await.unwrap();
    let until = now + SignedDuration::from_mins(5);
    let st: &dyn Store = &*store;
    let only = |f: tables::ExternalFilter| async move {
        let n = tables::external_lock_filtered(st, &f, "w", now, until, 1).await.unwrap();
        let ids: Vec<String> =
            tables::external_locked(st, "mail", "w", now).await.unwrap().into_iter().map(|r| r.id).collect();
        for id in &ids {
            st.write_all(&[tables::external_unlock(id)]).await.unwrap();
        }
        (n, ids)
    };
    let mail = || tables::ExternalFilter { topic: "mail".into(), ..Default::default() };
    let by_key = tables::ExternalFilter { definition_keys: vec!["other".into()], ..mail() };
    assert_eq!(only(by_key).await, (1, vec!["p3-j".to_string()]));
    let by_id = tables::ExternalFilter { definition_ids: vec!["nope:1".into()], ..mail() };
    assert_eq!(only(by_id).await.0, 0);
    let by_bk = tables::ExternalFilter { business_key: Some("bk-p2".into()), ..mail() };
    assert_eq!(only(by_bk).await, (1, vec!["p2-j".to_string()]));
    // Oldest first, unless by priority.
    assert_eq!(only(mail()).await, (1, vec!["p1-j".to_string()]));
    let by_priority = tables::ExternalFilter { by_priority: true, ..mail() };
    assert_eq!(only(by_priority).await, (1, vec!["p2-j".to_string()]));
}

async fn locks_are_extended_taken_and_released_by_their_rules(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    let now = store.db_now().await.unwrap();
    let soon = now + SignedDuration::from_mins(5);
    let later = now + SignedDuration::from_mins(50);
    store.write_all(&[tables::external_lock_one("p1-j", "w1", now, soon)]).await.unwrap();
    let e = store.write_all(&[tables::external_lock_one("p1-j", "w2", now, soon)]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "another worker's unexpired lock is not taken");
    let e = store.write_all(&[tables::external_extend_lock("p1-j", "w2", now, later)]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "only the holder extends");
    store.write_all(&[tables::external_extend_lock("p1-j", "w1", now, later)]).await.unwrap();
    let q = tables::ExternalQuery { id: Some("p1-j".into()), max: 10, ..Default::default() };
    let row = tables::external_list(&*store, &q).await.unwrap().pop().unwrap();
    assert_eq!((row.worker_id.as_deref(), row.lock_expiration_time), (Some("w1"), Some(later)));
    // An expired lock cannot be extended; it can be taken.
    let after = later + SignedDuration::from_secs(1);
    let e = store.write_all(&[tables::external_extend_lock("p1-j", "w1", after, after)]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    store
        .write_all(&[tables::external_lock_one("p1-j", "w2", after, after + SignedDuration::from_mins(1))])
        .await
        .unwrap();
    // An undelivered lock is given back only while it is the very lock taken.
    store.write_all(&[tables::external_unlock_undelivered("p1-j", "w2", now)]).await.unwrap();
    assert_eq!(tables::external_lock_of(&*store, "p1-j").await.unwrap().unwrap().owner.as_deref(), Some("w2"));
    store.write_all(&[tables::external_unlock_undelivered("p1-j", "w2", after)]).await.unwrap();
    assert_eq!(tables::external_lock_of(&*store, "p1-j").await.unwrap().unwrap().owner, None);
    store.write_all(&[tables::external_unlock("p1-j")]).await.unwrap();
    let e = store.write_all(&[tables::external_unlock("nope")]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "no such task: no row");
}

async fn failures_keep_error_details_and_lists_show_every_table(store: Arc<dyn Store>) {
    two_external_tasks(&*store).await;
    let now = store.db_now().await.unwrap();
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 10).await.unwrap();
    assert_eq!(tables::external_details(&*store, "p1-j").await.unwrap(), Some(None));
    assert_eq!(tables::external_details(&*store, "nope").await.unwrap(), None);
    let bytes = || async {
        store.sql_query("SELECT COUNT(*) FROM ACT_GE_BYTEARRAY", &[]).await.unwrap()[0][0].as_i64().unwrap()
    };
    let before = bytes().await;
    store.write_all(&tables::external_fail_writes("p1-j", "w1", 2, "boom", Some("trace 1"), now)).await.unwrap();
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 10).await.unwrap();
    store.write_all(&tables::external_fail_writes("p1-j", "w1", 0, "boom", Some("trace 2"), now)).await.unwrap();
    assert_eq!(bytes().await, before + 1, "the earlier details are replaced, not left behind");
    assert_eq!(tables::external_details(&*store, "p1-j").await.unwrap(), Some(Some("trace 2".to_string())));
    let all = tables::ExternalQuery { max: 10, ..Default::default() };
    let rows = tables::external_list(&*store, &all).await.unwrap();
    assert_eq!(rows.len(), 2, "the dead letter is listed too");
    let dead = rows.iter().find(|r| r.id == "p1-j").unwrap();
    assert_eq!((dead.retries, dead.worker_id.as_deref(), dead.error_message.as_deref()), (0, None, Some("boom")));
    assert_eq!((dead.process_definition_key.as_deref(), dead.business_key.as_deref()), (Some("k"), Some("bk-p1")));
    let st: &dyn Store = &*store;
    let count = |q: tables::ExternalQuery| async move { tables::external_count(st, &q).await.unwrap() };
    assert_eq!(count(tables::ExternalQuery { retries_left: Some(false), ..Default::default() }).await, 1);
    assert_eq!(count(tables::ExternalQuery { locked: Some(true), ..Default::default() }).await, 1);
    assert_eq!(count(tables::ExternalQuery { worker_id: Some("w1".into()), ..Default::default() }).await, 1);
    assert_eq!(count(tables::ExternalQuery { topic: Some("other".into()), ..Default::default() }).await, 0);
    assert_eq!(count(tables::ExternalQuery { suspended: Some(true), ..Default::default() }).await, 0);
    let page = tables::ExternalQuery {
        order: tables::ExternalOrder::Id,
        descending: true,
        first: 1,
        max: 5,
        ..Default::default()
    };
    let ids: Vec<String> = tables::external_list(&*store, &page).await.unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, vec!["p1-j".to_string()]);
}

on_both_backends!(
    a_worker_locks_due_tasks_of_its_topic_once,
    a_failure_without_retries_left_is_a_dead_letter_and_the_fence_holds,
    a_task_without_its_execution_is_named,
    a_fetch_filters_by_definition_business_key_and_priority,
    locks_are_extended_taken_and_released_by_their_rules,
    failures_keep_error_details_and_lists_show_every_table,
);
