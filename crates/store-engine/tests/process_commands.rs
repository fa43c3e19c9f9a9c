//! What commands read and write beyond one instance, on both backends: recorded requestIds,
//! the history cleanup, migration's checks and rows, called instances, message and signal
//! waits, suspension's job moves and the business key.

mod common;
mod process_fixture;

use jiff::SignedDuration;
use kairos_process::Instance;
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, HistoryLevel};
use process_fixture::*;
use std::sync::Arc;

async fn a_request_is_recorded_once(store: Arc<dyn Store>) {
    assert_eq!(tables::request_get(&*store, "r1").await.unwrap(), None);
    store.write_all(&[tables::request_insert("r1", "start", "f1", Some("{\"id\":1}".into()))]).await.unwrap();
    let got = tables::request_get(&*store, "r1").await.unwrap().unwrap();
    assert_eq!(
        (got.command.as_str(), got.fingerprint.as_str(), got.result.as_deref()),
        ("start", "f1", Some("{\"id\":1}"))
    );
    let e = store.write_all(&[tables::request_insert("r1", "start", "f2", None)]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "the primary key decides: {e}");
    store.sql_execute("UPDATE KAIROS_REQUEST SET COMMAND_ = NULL WHERE REQUEST_ID_ = 'r1'", &[]).await.ok();
    if let Err(e) = tables::request_get(&*store, "r1").await {
        assert_eq!(e.unreadable.unwrap().column, "COMMAND_");
    }
    // Retention: older than the cutoff goes, oldest first, at most `limit`.
    let later = store.db_now().await.unwrap() + SignedDuration::from_hours(1);
    assert_eq!(tables::requests_delete_older(&*store, later, 10).await.unwrap(), 1);
    assert_eq!(tables::request_get(&*store, "r1").await.unwrap(), None);
}

async fn ended(store: &dyn Store, before: &Instance, at_: &str) {
    let after = Instance {
        executions: Vec::new(),
        tasks: Vec::new(),
        variables: Vec::new(),
        subscriptions: Vec::new(),
        jobs: Vec::new(),
        activities: Vec::new(),
        ended: Some((at(at_), None)),
        ..before.clone()
    };
    store.write_all(&tables::instance_writes(Some(before), &after, HistoryLevel::Full)).await.unwrap();
}

async fn history_past_its_time_to_live_is_found_and_deleted(store: Arc<dyn Store>) {
    let def = deploy(&*store, "k").await; // HISTORY_TTL_ 7 days
    let p1 = started(&*store, &instance("p1", &def, "k")).await;
    let p2 = started(&*store, &instance("p2", &def, "k")).await;
    started(&*store, &instance("p3", &def, "k")).await;
    ended(&*store, &p1, "2026-12-01T12:00:00Z").await;
    ended(&*store, &p2, "2026-12-01T13:00:00Z").await;
    assert_eq!(tables::history_ttls(&*store).await.unwrap(), [7]);
    let cutoff = at("2026-12-01T12:30:00Z");
    assert_eq!(tables::history_expired(&*store, 7, cutoff, 10).await.unwrap(), ["p1"]);
    let cutoff = at("2026-12-09T00:00:00Z");
    assert_eq!(tables::history_expired(&*store, 7, cutoff, 1).await.unwrap(), ["p1"], "the earliest ended first");
    let both = tables::history_expired(&*store, 7, cutoff, 10).await.unwrap();
    assert_eq!(both, ["p1", "p2"], "a running instance is not expired");
    store.write_all(&tables::history_delete(&both)).await.unwrap();
    assert!(tables::instance_get(&*store, "p1").await.unwrap().is_none());
    assert!(tables::activity_history(&*store, "p2").await.unwrap().is_empty());
    assert!(tables::instance_get(&*store, "p3").await.unwrap().is_some());
    let later = store.db_now().await.unwrap() + SignedDuration::from_hours(1);
    assert_eq!(tables::job_log_delete_older(&*store, later, 10).await.unwrap(), 0, "no job ran");
}

async fn migration_checks_and_moves_the_rows_the_diff_leaves(store: Arc<dyn Store>) {
    let v1 = deploy(&*store, "k").await;
    let before = started(&*store, &instance("p1", &v1, "k")).await;
    assert_eq!(tables::instances_of_definition(&*store, &v1).await.unwrap(), ["p1"]);
    assert_eq!(tables::instance_running_job(&*store, "p1").await.unwrap(), None);
    assert_eq!(tables::instance_dead_letter(&*store, "p1").await.unwrap(), None);
    let v2 = deploy(&*store, "k2").await;
    let mut after = Instance { definition_id: v2.clone(), definition_key: "k2".into(), ..before.clone() };
    after.tasks[0].task_def_key = "check".into();
    after.activities[0].activity_id = "check".into();
    after.jobs[0].activity_id = "check".into();
    let mut writes = tables::instance_writes(Some(&before), &after, HistoryLevel::Full);
    writes.push(tables::migration_guard(store.dialect(), "p1"));
    writes.extend(tables::migration_writes(&before, &after));
    store.write_all(&writes).await.unwrap();
    let loaded = tables::instance_load(&*store, "p1").await.unwrap().unwrap();
    assert_eq!((loaded.definition_id.as_str(), loaded.definition_key.as_str()), (v2.as_str(), "k2"));
    assert_eq!(loaded.tasks[0].task_def_key, "check");
    assert_eq!(loaded.jobs[0].activity_id, "check");
    assert_eq!(tables::instance_get(&*store, "p1").await.unwrap().unwrap().process_definition_key, "k2");
    // A job locked now: refused by the check, and by the guard at commit.
    let now = store.db_now().await.unwrap();
    tables::external_lock(&*store, "mail", "w1", now, now + SignedDuration::from_mins(5), 1).await.unwrap();
    assert_eq!(tables::instance_running_job(&*store, "p1").await.unwrap(), Some(("p1-j".into(), "w1".into())));
    let e = store.write_all(&[tables::migration_guard(store.dialect(), "p1")]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
}

async fn called_instances_are_found_by_their_call_activity(store: Arc<dyn Store>) {
    let def = deploy(&*store, "k").await;
    started(&*store, &instance("caller", &def, "k")).await;
    let mut called = instance("called", &def, "k");
    called.super_exec = Some("caller-x".into());
    called.super_instance = Some("caller".into());
    called.executions[0].super_exec = Some("caller-x".into());
    let called = started(&*store, &called).await;
    assert_eq!(tables::called_instances(&*store, "caller-x").await.unwrap(), ["called"]);
    assert_eq!(tables::called_by_instance(&*store, "caller").await.unwrap(), ["called"]);
    assert!(tables::called_by_instance(&*store, "called").await.unwrap().is_empty());
    let loaded = tables::instance_load(&*store, "called").await.unwrap().unwrap();
    assert_eq!(loaded, called, "the caller's instance is read with it");
}

async fn messages_and_signals_find_their_waiting_instances(store: Arc<dyn Store>) {
    let def = deploy(&*store, "k").await;
    for pi in ["p1", "p2"] {
        let mut inst = instance(pi, &def, "k");
        inst.subscriptions.push(kairos_process::Subscription {
            id: format!("{pi}-sig"),
            event_type: kairos_process::EventType::Signal,
            event_name: "alarm".into(),
            ..inst.subscriptions[0].clone()
        });
        started(&*store, &inst).await;
    }
    store
        .write_all(&[tables::start_subscription_insert(
            "signal",
            "alarm",
            "start",
            (&def, ""),
            at("2026-12-01T10:00:00Z"),
        )])
        .await
        .unwrap();
    assert_eq!(tables::message_waiting(&*store, "poke", None, None, None).await.unwrap(), ["p1", "p2"]);
    assert_eq!(tables::message_waiting(&*store, "poke", Some("p2"), None, None).await.unwrap(), ["p2"]);
    assert_eq!(tables::message_waiting(&*store, "poke", None, Some("bk-p1"), None).await.unwrap(), ["p1"]);
    assert!(tables::message_waiting(&*store, "alarm", None, None, None).await.unwrap().is_empty());
    assert_eq!(tables::signal_waiting(&*store, "alarm", None).await.unwrap(), ["p1", "p2"], "not the start event");
    let starts = tables::start_subscriptions(&*store, tables::StartTrigger::Signal, "alarm", None).await.unwrap();
    assert_eq!(starts.iter().map(|s| s.activity_id.as_str()).collect::<Vec<_>>(), ["start"]);
}

async fn suspension_moves_the_jobs_and_the_business_key_reaches_every_execution(store: Arc<dyn Store>) {
    let def = deploy(&*store, "k").await;
    started(&*store, &instance("p1", &def, "k")).await;
    let count = |table: &'static str| {
        let store = store.clone();
        async move {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE PROCESS_INSTANCE_ID_ = 'p1'");
            store.sql_query(&sql, &[]).await.unwrap()[0][0].as_i64().unwrap()
        }
    };
    store.write_all(&tables::instance_jobs_move("p1", true)).await.unwrap();
    assert_eq!((count("ACT_RU_JOB").await, count("ACT_RU_SUSPENDED_JOB").await), (0, 1));
    store.write_all(&tables::instance_jobs_move("p1", false)).await.unwrap();
    assert_eq!((count("ACT_RU_JOB").await, count("ACT_RU_SUSPENDED_JOB").await), (1, 0));
    store.write_all(&[tables::instance_business_key("p1", &Some("new".into()))]).await.unwrap();
    let keys = store
        .sql_query("SELECT DISTINCT BUSINESS_KEY_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = 'p1'", &[])
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0][0].as_str(), Some("new"));
}

on_both_backends!(
    a_request_is_recorded_once,
    history_past_its_time_to_live_is_found_and_deleted,
    migration_checks_and_moves_the_rows_the_diff_leaves,
    called_instances_are_found_by_their_call_activity,
    messages_and_signals_find_their_waiting_instances,
    suspension_moves_the_jobs_and_the_business_key_reaches_every_execution,
);
