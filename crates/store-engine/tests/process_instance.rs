//! `instance_load`, `instance_writes` and `instance_unreadable` on both backends: an
//! instance's rows round-trip, a command's writes are REV_-checked, a bad stored value is named.

mod common;
mod process_fixture;

use kairos_process::Instance;
use kairos_store::{ErrorKind, SqlValue, Store};
use kairos_store_engine::process::{self as tables, HistoryLevel};
use process_fixture::*;
use serde_json::json;
use std::sync::Arc;

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
}

async fn an_instance_written_by_a_start_loads_back_the_same(store: Arc<dyn Store>) {
    let def = deploy(&*store, "order").await;
    let inst = instance("pi1", &def, "order");
    let stored = started(&*store, &inst).await;
    let loaded = tables::instance_load(&*store, "pi1").await.unwrap().expect("the instance is there");
    assert_eq!(loaded, stored);
    assert!(tables::instance_load(&*store, "nope").await.unwrap().is_none());
    // Its history rows too.
    let h = tables::instance_get(&*store, "pi1").await.unwrap().unwrap();
    assert_eq!(
        (h.process_definition_key.as_str(), h.ended, h.business_key.as_deref()),
        ("order", false, Some("bk-pi1"))
    );
}

async fn a_command_writes_its_changes_once_under_the_instance_lock(store: Arc<dyn Store>) {
    let def = deploy(&*store, "order").await;
    let before = started(&*store, &instance("pi1", &def, "order")).await;
    let mut after = before.clone();
    after.variables.iter_mut().find(|v| v.name == "n").unwrap().value = json!("seven");
    after.variables.retain(|v| v.name != "z");
    after.tasks.clear();
    after.tasks.push(kairos_process::Task {
        id: "pi1-t2".into(),
        create_time: at("2026-12-01T11:00:00Z"),
        ..before.tasks[0].clone()
    });
    after.subscriptions.clear();
    after.seq = 3;
    let writes = tables::instance_writes(Some(&before), &after, HistoryLevel::Full);
    store.write_all(&writes).await.unwrap();
    let loaded = tables::instance_load(&*store, "pi1").await.unwrap().unwrap();
    assert_eq!(loaded.root_rev, 2, "the root's REV_ was bumped");
    assert_eq!(loaded.seq, 3);
    let n = loaded.variables.iter().find(|v| v.name == "n").unwrap();
    assert_eq!((n.value.clone(), n.rev), (json!("seven"), 2));
    assert!(loaded.variables.iter().all(|v| v.name != "z"));
    assert_eq!(loaded.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["pi1-t2"]);
    assert_eq!(loaded.tasks[0].candidate_users, ["bob"], "the new task's candidates");
    assert!(loaded.subscriptions.is_empty());
    // The same writes again: the REV_ they checked is gone, nothing commits.
    let e = store.write_all(&writes).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");
    assert_eq!(tables::instance_load(&*store, "pi1").await.unwrap().unwrap().root_rev, 2);
}

async fn an_ended_instance_leaves_its_history(store: Arc<dyn Store>) {
    let def = deploy(&*store, "order").await;
    let before = started(&*store, &instance("pi1", &def, "order")).await;
    let end = at("2026-12-01T12:00:00Z");
    let after = Instance {
        executions: Vec::new(),
        tasks: Vec::new(),
        variables: Vec::new(),
        subscriptions: Vec::new(),
        jobs: Vec::new(),
        activities: Vec::new(),
        ended: Some((end, Some("end".into()))),
        ..before.clone()
    };
    store.write_all(&tables::instance_writes(Some(&before), &after, HistoryLevel::Full)).await.unwrap();
    assert!(tables::instance_load(&*store, "pi1").await.unwrap().is_none());
    let h = tables::instance_get(&*store, "pi1").await.unwrap().unwrap();
    assert_eq!((h.ended, h.end_time), (true, Some(end)));
}

async fn a_variable_of_an_unknown_type_is_named_and_listed(store: Arc<dyn Store>) {
    let def = deploy(&*store, "order").await;
    started(&*store, &instance("bad", &def, "order")).await;
    started(&*store, &instance("good", &def, "order")).await;
    store
        .sql_execute("UPDATE ACT_RU_VARIABLE SET TYPE_ = 'serializable' WHERE ID_ = ?", &[text("bad-v2")])
        .await
        .unwrap();
    let e = tables::instance_load(&*store, "bad").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable, "{e}");
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_VARIABLE", "bad-v2", "TYPE_"));
    assert_eq!(u.raw.as_deref(), Some("serializable"));
    assert!(u.problem.contains("\"s\""), "names the variable: {}", u.problem);
    assert!(tables::instance_load(&*store, "good").await.unwrap().is_some(), "the other instance loads");
    let listed = tables::instance_unreadable(&*store, 10).await.unwrap();
    assert_eq!(listed.iter().map(|u| (u.id.as_str(), u.column.as_str())).collect::<Vec<_>>(), [("bad-v2", "TYPE_")]);
}

async fn an_execution_with_a_bad_start_time_is_named(store: Arc<dyn Store>) {
    let def = deploy(&*store, "order").await;
    started(&*store, &instance("bad", &def, "order")).await;
    started(&*store, &instance("good", &def, "order")).await;
    // SQLite keeps any text; PostgreSQL's timestamptz keeps `infinity`, which is no instant.
    let bad = match store.backend() {
        kairos_store::Backend::Sqlite => "garbage",
        kairos_store::Backend::Postgres => "infinity",
    };
    store
        .sql_execute(&format!("UPDATE ACT_RU_EXECUTION SET START_TIME_ = '{bad}' WHERE ID_ = 'bad-x'"), &[])
        .await
        .unwrap();
    let e = tables::instance_load(&*store, "bad").await.unwrap_err();
    let u = e.unreadable.expect("unreadable");
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_EXECUTION", "bad-x", "START_TIME_"));
    assert!(tables::instance_load(&*store, "good").await.unwrap().is_some(), "the other instance loads");
    let listed = tables::instance_unreadable(&*store, 10).await.unwrap();
    assert_eq!(listed.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(), ["bad-x"]);
}

on_both_backends!(
    an_instance_written_by_a_start_loads_back_the_same,
    a_command_writes_its_changes_once_under_the_instance_lock,
    an_ended_instance_leaves_its_history,
    a_variable_of_an_unknown_type_is_named_and_listed,
    an_execution_with_a_bad_start_time_is_named,
);
