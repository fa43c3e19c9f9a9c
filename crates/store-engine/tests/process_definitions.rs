//! Deployments and definitions on both backends: versions, lookups, the resource, suspension,
//! the start events of the latest version, and a bad stored value named.

mod common;
mod process_fixture;

use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, Lookup, NewDefinition, StartTrigger};
use process_fixture::*;
use std::sync::Arc;

async fn version(store: &dyn Store, key: &str, version: i64, xml: &str) -> String {
    let (id, dep) = (format!("{key}:{version}"), format!("dep-{key}-{version}"));
    let resource = format!("{key}.bpmn20.xml");
    let now = at("2026-12-01T10:00:00Z");
    let mut writes = vec![
        tables::deployment_insert(&dep, key, now),
        tables::resource_insert(&dep, &resource, xml),
        tables::definition_insert(&NewDefinition {
            id: &id,
            key,
            version,
            name: None,
            category: Some("urn:x".into()),
            deployment_id: &dep,
            resource_name: &resource,
            has_diagram: true,
            history_ttl_days: None,
            tenant: "",
        }),
    ];
    writes.extend(tables::start_events_clear(key, ""));
    writes.push(tables::start_subscription_insert("message", "go", "start", (&id, ""), now));
    writes.push(tables::timer_start_insert((&id, ""), "tick", now, Some("R/PT1H".into()), now));
    store.write_all(&writes).await.unwrap();
    id
}

async fn the_latest_version_is_found_and_listed(store: Arc<dyn Store>) {
    version(&*store, "order", 1, "<one/>").await;
    version(&*store, "order", 2, "<two/>").await;
    version(&*store, "other", 1, "<other/>").await;
    let (latest, now) = tables::definition_lookup(&*store, Lookup::LatestOf("order", "")).await.unwrap().unwrap();
    assert_eq!((latest.id.as_str(), latest.version, latest.suspended), ("order:2", 2, false));
    assert!(now > at("2026-01-01T00:00:00Z"), "the database's now: {now}");
    let (first, _) = tables::definition_lookup(&*store, Lookup::Id("order:1")).await.unwrap().unwrap();
    assert_eq!((first.key.as_str(), first.deployment_id.as_str()), ("order", "dep-order-1"));
    assert!(tables::definition_lookup(&*store, Lookup::LatestOf("nope", "")).await.unwrap().is_none());
    let ids = |v: Vec<tables::DefinitionInfo>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    assert_eq!(ids(tables::definition_list(&*store, None, false).await.unwrap()), ["order:1", "order:2", "other:1"]);
    assert_eq!(ids(tables::definition_list(&*store, None, true).await.unwrap()), ["order:2", "other:1"]);
    assert_eq!(ids(tables::definition_list(&*store, Some("order"), false).await.unwrap()), ["order:1", "order:2"]);
    assert_eq!(tables::definition_resource(&*store, "order:1").await.unwrap().as_deref(), Some("<one/>"));
    assert_eq!(tables::definition_resource(&*store, "nope").await.unwrap(), None);
}

async fn a_definition_is_suspended_and_activated(store: Arc<dyn Store>) {
    version(&*store, "order", 1, "<one/>").await;
    assert!(tables::definition_set_suspended(&*store, "order:1", true).await.unwrap());
    let (d, _) = tables::definition_lookup(&*store, Lookup::Id("order:1")).await.unwrap().unwrap();
    assert!(d.suspended);
    assert!(tables::definition_set_suspended(&*store, "order:1", false).await.unwrap());
    let (d, _) = tables::definition_lookup(&*store, Lookup::Id("order:1")).await.unwrap().unwrap();
    assert!(!d.suspended);
    assert!(!tables::definition_set_suspended(&*store, "nope", true).await.unwrap());
}

async fn only_the_latest_version_starts_by_events(store: Arc<dyn Store>) {
    version(&*store, "order", 1, "<one/>").await;
    version(&*store, "order", 2, "<two/>").await;
    let starts = tables::start_subscriptions(&*store, StartTrigger::Message, "go", None).await.unwrap();
    assert_eq!(starts.len(), 1);
    assert_eq!((starts[0].definition_id.as_str(), starts[0].activity_id.as_str()), ("order:2", "start"));
    assert!(tables::start_subscriptions(&*store, StartTrigger::Signal, "go", None).await.unwrap().is_empty());
    let timers = store
        .sql_query("SELECT PROC_DEF_ID_, REPEAT_ FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'timer-start-event'", &[])
        .await
        .unwrap();
    assert_eq!(timers.len(), 1, "{timers:?}");
    assert_eq!((timers[0][0].as_str(), timers[0][1].as_str()), (Some("order:2"), Some("R/PT1H")));
}

async fn a_definition_without_its_resource_name_is_named(store: Arc<dyn Store>) {
    version(&*store, "order", 1, "<one/>").await;
    store.sql_execute("UPDATE ACT_RE_PROCDEF SET RESOURCE_NAME_ = NULL WHERE ID_ = 'order:1'", &[]).await.unwrap();
    let e = tables::definition_list(&*store, None, false).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RE_PROCDEF", "order:1", "RESOURCE_NAME_"));
}

on_both_backends!(
    the_latest_version_is_found_and_listed,
    a_definition_is_suspended_and_activated,
    only_the_latest_version_starts_by_events,
    a_definition_without_its_resource_name_is_named,
);
