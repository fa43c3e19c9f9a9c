//! The read models (`instance_get`/`instance_list`, `task_list`, `task_instance`,
//! `task_ended`, `execution_list`, `activity_history`) on both backends: filters, order, and a
//! bad stored value named.

mod common;
mod process_fixture;

use kairos_process::Instance;
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, HistoryLevel, InstanceFilter, TaskEnded, TaskFilter};
use process_fixture::*;
use std::sync::Arc;

/// Instances a1 (ended), a2 (running, key `order`) and b1 (running, key `other`).
async fn three_instances(store: &dyn Store) -> Instance {
    let order = deploy(store, "order").await;
    let other = deploy(store, "other").await;
    let a1 = started(store, &instance("a1", &order, "order")).await;
    started(store, &instance("a2", &order, "order")).await;
    started(store, &instance("b1", &other, "other")).await;
    let ended = Instance {
        executions: Vec::new(),
        tasks: Vec::new(),
        variables: Vec::new(),
        subscriptions: Vec::new(),
        jobs: Vec::new(),
        activities: Vec::new(),
        ended: Some((at("2026-12-01T12:00:00Z"), None)),
        ended_tasks: vec![kairos_process::EndedTask {
            id: "a1-t".into(),
            start: a1.tasks[0].create_time,
            end: at("2026-12-01T12:00:00Z"),
            reason: Some("deleted".into()),
        }],
        ..a1.clone()
    };
    store.write_all(&tables::instance_writes(Some(&a1), &ended, HistoryLevel::Full)).await.unwrap();
    a1
}

async fn instances_are_filtered_by_key_business_key_and_end(store: Arc<dyn Store>) {
    three_instances(&*store).await;
    let ids = |v: Vec<tables::InstanceView>| v.into_iter().map(|i| i.id).collect::<Vec<_>>();
    let all = tables::instance_list(&*store, &InstanceFilter::default()).await.unwrap();
    assert_eq!(ids(all), ["a1", "a2", "b1"]);
    let f = InstanceFilter { definition_key: Some("order"), ..Default::default() };
    assert_eq!(ids(tables::instance_list(&*store, &f).await.unwrap()), ["a1", "a2"]);
    let f = InstanceFilter { finished: Some(true), ..Default::default() };
    assert_eq!(ids(tables::instance_list(&*store, &f).await.unwrap()), ["a1"]);
    let f = InstanceFilter { finished: Some(false), business_key: Some("bk-b1"), ..Default::default() };
    assert_eq!(ids(tables::instance_list(&*store, &f).await.unwrap()), ["b1"]);
    let a1 = tables::instance_get(&*store, "a1").await.unwrap().unwrap();
    assert!(a1.ended && !a1.suspended);
    assert!(tables::instance_get(&*store, "zz").await.unwrap().is_none());
}

async fn tasks_are_filtered_by_instance_assignee_and_candidates(store: Arc<dyn Store>) {
    three_instances(&*store).await;
    let ids = |v: Vec<tables::TaskView>| v.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(tables::task_list(&*store, &TaskFilter::default()).await.unwrap()), ["a2-t", "b1-t"]);
    let f = TaskFilter { instance: Some("b1"), ..Default::default() };
    let b1 = tables::task_list(&*store, &f).await.unwrap();
    assert_eq!((b1[0].task_definition_key.as_str(), b1[0].priority, b1[0].suspended), ("review", 50, false));
    for f in [
        TaskFilter { candidate_user: Some("bob"), ..Default::default() },
        TaskFilter { candidate_group: Some("clerks"), ..Default::default() },
    ] {
        assert_eq!(ids(tables::task_list(&*store, &f).await.unwrap()), ["a2-t", "b1-t"]);
    }
    let f = TaskFilter { candidate_user: Some("eve"), ..Default::default() };
    assert!(tables::task_list(&*store, &f).await.unwrap().is_empty());
    let f = TaskFilter { assignee: Some("bob"), ..Default::default() };
    assert!(tables::task_list(&*store, &f).await.unwrap().is_empty());
    assert_eq!(tables::task_instance(&*store, "a2-t").await.unwrap().as_deref(), Some("a2"));
    assert_eq!(tables::task_instance(&*store, "a1-t").await.unwrap(), None);
    assert_eq!(tables::task_ended(&*store, "a1-t").await.unwrap(), TaskEnded::Cancelled("deleted".into()));
    assert_eq!(tables::task_ended(&*store, "a2-t").await.unwrap(), TaskEnded::Unknown, "still open");
    assert_eq!(tables::task_ended(&*store, "zz").await.unwrap(), TaskEnded::Unknown);
}

async fn executions_and_activities_of_an_instance_in_start_order(store: Arc<dyn Store>) {
    three_instances(&*store).await;
    let execs = tables::execution_list(&*store, "a2").await.unwrap();
    assert_eq!(execs.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["a2", "a2-x"]);
    assert_eq!(
        (execs[1].activity_id.as_deref(), execs[1].is_concurrent, execs[0].is_scope),
        (Some("review"), true, true)
    );
    let acts = tables::activity_history(&*store, "a2").await.unwrap();
    assert_eq!(acts.iter().map(|a| a.activity_id.as_str()).collect::<Vec<_>>(), ["review"]);
    assert_eq!(acts[0].task_id.as_deref(), Some("a2-t"));
}

async fn a_task_without_its_key_is_named(store: Arc<dyn Store>) {
    three_instances(&*store).await;
    store.sql_execute("UPDATE ACT_RU_TASK SET TASK_DEF_KEY_ = NULL WHERE ID_ = 'b1-t'", &[]).await.unwrap();
    let e = tables::task_list(&*store, &TaskFilter::default()).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_TASK", "b1-t", "TASK_DEF_KEY_"));
}

on_both_backends!(
    instances_are_filtered_by_key_business_key_and_end,
    tasks_are_filtered_by_instance_assignee_and_candidates,
    executions_and_activities_of_an_instance_in_start_order,
    a_task_without_its_key_is_named,
);
