//! The history a command writes and its pages (`historic_details`, `historic_tasks`) on both
//! backends: history levels, filters, paging, and a bad stored value named.

mod common;
mod process_fixture;

use kairos_process::{Instance, VariableChange};
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, DetailQuery, HistoryLevel};
use process_fixture::*;
use serde_json::json;
use std::sync::Arc;

/// Instance `pi` started with three changes of variable `n` (at level `level`).
async fn with_changes(store: &dyn Store, pi: &str, level: HistoryLevel) -> Instance {
    let def = deploy(store, &format!("k{pi}")).await;
    let mut inst = instance(pi, &def, &format!("k{pi}"));
    inst.variable_log = (0..3)
        .map(|n| VariableChange {
            variable_id: format!("{pi}-v1"),
            name: "n".into(),
            execution_id: pi.into(),
            task_id: None,
            value: json!(n),
            time: at(&format!("2026-12-01T10:00:0{n}Z")),
            activity_instance_id: Some(format!("{pi}-a")),
        })
        .collect();
    store.write_all(&tables::instance_writes(None, &inst, level)).await.unwrap();
    inst
}

async fn every_variable_change_is_a_detail_at_level_full(store: Arc<dyn Store>) {
    with_changes(&*store, "p1", HistoryLevel::Full).await;
    with_changes(&*store, "p2", HistoryLevel::Audit).await;
    let all = DetailQuery::default();
    let (page, total) = tables::historic_details(&*store, &all, 0, 10).await.unwrap();
    assert_eq!(total, 3, "only level full writes details");
    assert_eq!(page.iter().map(|d| d.variable.value.clone()).collect::<Vec<_>>(), [json!(0), json!(1), json!(2)]);
    assert_eq!((page[0].variable.var_type.as_str(), page[0].revision), ("integer", Some(1)));
    assert_eq!(page[0].activity_instance_id.as_deref(), Some("p1-a"));
    let (page, total) = tables::historic_details(&*store, &all, 1, 1).await.unwrap();
    assert_eq!((page.len(), total, page[0].variable.value.clone()), (1, 3, json!(1)));
    let q = DetailQuery { process_instance_id: Some("p2".into()), ..Default::default() };
    assert_eq!(tables::historic_details(&*store, &q, 0, 10).await.unwrap().1, 0);
    let q = DetailQuery { activity_instance_id: Some("p1-a".into()), ..Default::default() };
    assert_eq!(tables::historic_details(&*store, &q, 0, 10).await.unwrap().1, 3);
}

async fn a_detail_of_an_unknown_type_is_named(store: Arc<dyn Store>) {
    with_changes(&*store, "p1", HistoryLevel::Full).await;
    store.sql_execute("UPDATE ACT_HI_DETAIL SET VAR_TYPE_ = 'serializable'", &[]).await.unwrap();
    let e = tables::historic_details(&*store, &DetailQuery::default(), 0, 10).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    let u = e.unreadable.unwrap();
    assert_eq!(
        (u.table.as_str(), u.column.as_str(), u.raw.as_deref()),
        ("ACT_HI_DETAIL", "VAR_TYPE_", Some("serializable"))
    );
}

async fn historic_tasks_are_paged_and_filtered_by_end(store: Arc<dyn Store>) {
    let before = started(&*store, &instance("p1", &deploy(&*store, "k").await, "k")).await;
    started(&*store, &instance("p2", &before.definition_id, "k")).await;
    let mut after = before.clone();
    after.tasks.clear();
    after.ended_tasks.push(kairos_process::EndedTask {
        id: "p1-t".into(),
        start: before.tasks[0].create_time,
        end: at("2026-12-01T10:00:03.250Z"),
        reason: None,
    });
    store.write_all(&tables::instance_writes(Some(&before), &after, HistoryLevel::Audit)).await.unwrap();
    let (all, total) = tables::historic_tasks(&*store, None, None, None, (0, 10)).await.unwrap();
    assert_eq!((total, all.iter().map(|t| t.id.as_str()).collect::<Vec<_>>()), (2, vec!["p1-t", "p2-t"]));
    assert_eq!(all[0].duration_in_millis, Some(2000));
    let (done, total) = tables::historic_tasks(&*store, None, Some(true), None, (0, 10)).await.unwrap();
    assert_eq!((total, done[0].id.as_str()), (1, "p1-t"));
    let (open, _) = tables::historic_tasks(&*store, Some("p2"), Some(false), None, (0, 10)).await.unwrap();
    assert_eq!(open.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["p2-t"]);
    let (page, total) = tables::historic_tasks(&*store, None, None, None, (1, 1)).await.unwrap();
    assert_eq!((total, page.iter().map(|t| t.id.as_str()).collect::<Vec<_>>()), (2, vec!["p2-t"]));
    assert!(tables::historic_tasks(&*store, None, None, None, (0, 0)).await.unwrap().0.is_empty());
    assert_eq!(tables::task_ended(&*store, "p1-t").await.unwrap(), tables::TaskEnded::Completed);
}

async fn level_none_keeps_the_instance_only(store: Arc<dyn Store>) {
    with_changes(&*store, "p1", HistoryLevel::None).await;
    assert!(tables::instance_get(&*store, "p1").await.unwrap().is_some());
    assert!(tables::activity_history(&*store, "p1").await.unwrap().is_empty());
    assert_eq!(tables::historic_tasks(&*store, None, None, None, (0, 10)).await.unwrap().1, 0);
}

on_both_backends!(
    every_variable_change_is_a_detail_at_level_full,
    a_detail_of_an_unknown_type_is_named,
    historic_tasks_are_paged_and_filtered_by_end,
    level_none_keeps_the_instance_only,
);
