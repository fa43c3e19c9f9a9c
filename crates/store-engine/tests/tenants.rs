//! Whose a row is (`tenants::tenant_of`) on both backends: an instance's tenant reaches every
//! row it writes (executions, tasks, jobs, subscriptions, history) and the lists and lookups
//! narrowed to a tenant keep only its rows.

mod common;
mod process_fixture;

use kairos_store::Store;
use kairos_store_engine::process::{self as tables, InstanceFilter, Lookup, TaskFilter};
use kairos_store_engine::tenants::{Owned, tenant_of};
use process_fixture::*;
use std::sync::Arc;

async fn every_row_of_an_instance_is_its_tenants(store: Arc<dyn Store>) {
    let s = &*store;
    let def = deploy(s, "order").await;
    let mut acme = instance("p-acme", &def, "order");
    acme.tenant_id = "acme".into();
    started(s, &acme).await;
    started(s, &instance("p-none", &def, "order")).await;

    let of = |kind, id: &'static str| async move { tenant_of(s, kind, id).await.unwrap() };
    assert_eq!(of(Owned::Instance, "p-acme").await.as_deref(), Some("acme"));
    assert_eq!(of(Owned::Execution, "p-acme-x").await.as_deref(), Some("acme"));
    assert_eq!(of(Owned::Task, "p-acme-t").await.as_deref(), Some("acme"));
    assert_eq!(of(Owned::Job, "p-acme-j").await.as_deref(), Some("acme"));
    assert_eq!(of(Owned::Subscription, "p-acme-s").await.as_deref(), Some("acme"));
    assert_eq!(of(Owned::Instance, "p-none").await.as_deref(), Some(""), "of no tenant");
    assert_eq!(of(Owned::ProcessDefinition, "order:1").await.as_deref(), Some(""));
    assert_eq!(of(Owned::Deployment, "dep-order").await.as_deref(), Some(""));
    assert_eq!(of(Owned::Instance, "nope").await, None, "no such row");
    assert_eq!(of(Owned::User, "nobody").await, None);

    let filter = InstanceFilter { tenant: Some("acme"), ..Default::default() };
    let listed: Vec<String> = tables::instance_list(s, &filter).await.unwrap().into_iter().map(|i| i.id).collect();
    assert_eq!(listed, ["p-acme"]);
    let all = tables::instance_list(s, &InstanceFilter::default()).await.unwrap();
    assert_eq!(all.iter().map(|i| i.tenant_id.as_str()).collect::<Vec<_>>(), ["acme", ""]);
    let tasks = tables::task_list(s, &TaskFilter { tenant: Some(""), ..Default::default() }).await.unwrap();
    assert_eq!(tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["p-none-t"]);
    assert_eq!(tasks[0].tenant_id, "");
    let (hist, total) = tables::historic_tasks(s, None, None, Some("acme"), (0, 10)).await.unwrap();
    assert_eq!((hist.len(), total, hist[0].tenant_id.as_str()), (1, 1, "acme"));
    assert_eq!(tables::message_waiting(s, "poke", None, None, Some("acme")).await.unwrap(), ["p-acme"]);
    assert_eq!(tables::message_waiting(s, "poke", None, None, None).await.unwrap().len(), 2);
    let external = tables::ExternalQuery { tenant: Some("acme".into()), max: 10, ..Default::default() };
    let rows = tables::external_list(s, &external).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.tenant_id.as_str()).collect::<Vec<_>>(), ["acme"]);
}

async fn a_key_resolves_within_its_tenant(store: Arc<dyn Store>) {
    let s = &*store;
    let now = at("2026-12-01T10:00:00Z");
    let mut writes = Vec::new();
    for (tenant, version) in [("", 1), ("", 2), ("acme", 1)] {
        let (id, dep) = (format!("k:{tenant}:{version}"), format!("d-{tenant}-{version}"));
        writes.push(tables::deployment_insert_keyed(&dep, "k", None, tenant, now));
        writes.push(tables::resource_insert(&dep, "k.bpmn20.xml", "<definitions/>"));
        writes.push(tables::definition_insert(&tables::NewDefinition {
            id: &id,
            key: "k",
            version,
            name: None,
            category: None,
            deployment_id: &dep,
            resource_name: "k.bpmn20.xml",
            has_diagram: false,
            history_ttl_days: None,
            tenant,
        }));
    }
    s.write_all(&writes).await.unwrap();
    let latest = |tenant: &'static str| async move {
        tables::definition_lookup(s, Lookup::LatestOf("k", tenant)).await.unwrap().map(|(d, _)| d.id)
    };
    assert_eq!(latest("").await.as_deref(), Some("k::2"));
    assert_eq!(latest("acme").await.as_deref(), Some("k:acme:1"), "acme's own version 1");
    assert_eq!(latest("globex").await, None);
    let acme = tables::DefinitionFilter { tenant: Some("acme"), latest_only: true, ..Default::default() };
    let ids: Vec<String> = tables::definition_query(s, &acme).await.unwrap().into_iter().map(|d| d.id).collect();
    assert_eq!(ids, ["k:acme:1"]);
    assert_eq!(tenant_of(s, Owned::ProcessDefinition, "k:acme:1").await.unwrap().as_deref(), Some("acme"));
    assert_eq!(tenant_of(s, Owned::Deployment, "d-acme-1").await.unwrap().as_deref(), Some("acme"));
}

on_both_backends!(every_row_of_an_instance_is_its_tenants, a_key_resolves_within_its_tenant);
