//! Deployments as a whole on both backends: listed and read, their resources, the instances of
//! their definitions (running, by suspension, ended), the definition filters, and the guarded
//! deletion (refused whole while an instance runs, everything of the deployment gone after).

mod common;
mod process_fixture;

use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, DefinitionFilter, ResourceRow};
use process_fixture::*;
use std::sync::Arc;

async fn counts(store: &dyn Store) -> Vec<i64> {
    let mut out = Vec::new();
    for t in [
        "ACT_RE_DEPLOYMENT",
        "ACT_RE_PROCDEF",
        "ACT_GE_BYTEARRAY",
        "ACT_RU_EXECUTION",
        "ACT_RU_JOB",
        "ACT_RU_EVENT_SUBSCR",
    ] {
        let rows = store.sql_query(&format!("SELECT COUNT(*) FROM {t}"), &[]).await.unwrap();
        out.push(rows[0][0].as_i64().unwrap());
    }
    out
}

async fn deployments_their_resources_and_instances_are_read(store: Arc<dyn Store>) {
    let order = deploy(&*store, "order").await;
    let other = deploy(&*store, "other").await;
    let keyed = tables::deployment_insert_keyed("dep-k", "keyed", Some("the-key"), "acme", at("2026-12-02T10:00:00Z"));
    store.write_all(&[keyed]).await.unwrap();
    let all = tables::deployment_list(&*store, None, None, None).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.contains(&"dep-order") && ids.contains(&"dep-k"), "{ids:?}");
    assert_eq!(tables::deployment_list(&*store, Some("other"), None, None).await.unwrap()[0].id, "dep-other");
    assert!(tables::deployment_list(&*store, None, Some("x"), None).await.unwrap().is_empty());
    let acme = tables::deployment_list(&*store, None, None, Some("acme")).await.unwrap();
    assert_eq!(acme.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["dep-k"], "a tenant's deployments only");
    assert_eq!(tables::deployment_list(&*store, None, None, Some("")).await.unwrap().len(), 2, "of no tenant");
    let k = tables::deployment_get(&*store, "dep-k").await.unwrap().unwrap();
    assert_eq!((k.key.as_deref(), k.name.as_deref(), k.tenant_id.as_str()), (Some("the-key"), Some("keyed"), "acme"));
    assert_eq!(k.deploy_time, at("2026-12-02T10:00:00Z"));
    assert!(tables::deployment_get(&*store, "nope").await.unwrap().is_none());

    store.write_all(&[tables::resource_insert("dep-order", "notes.txt", "hello")]).await.unwrap();
    let res = tables::deployment_resources(&*store, "dep-order").await.unwrap();
    assert_eq!(
        res,
        [
            ResourceRow { name: "notes.txt".into(), is_definition: false },
            ResourceRow { name: "order.bpmn20.xml".into(), is_definition: true }
        ]
    );
    let data = tables::deployment_resource_data(&*store, "dep-order", "notes.txt").await.unwrap();
    assert_eq!(data.as_deref(), Some(&b"hello"[..]));
    assert!(tables::deployment_resource_data(&*store, "dep-other", "notes.txt").await.unwrap().is_none());

    // Definition filters.
    let f = |f: DefinitionFilter<'static>| {
        let store = store.clone();
        async move { tables::definition_query(&*store, &f).await.unwrap().into_iter().map(|d| d.id).collect::<Vec<_>>() }
    };
    assert_eq!(f(DefinitionFilter { name: Some("The order"), ..Default::default() }).await, vec![order.clone()]);
    assert_eq!(
        f(DefinitionFilter { deployment_id: Some("dep-other"), ..Default::default() }).await,
        vec![other.clone()]
    );
    assert_eq!(
        f(DefinitionFilter { resource_name: Some("order.bpmn20.xml"), ..Default::default() }).await,
        vec![order.clone()]
    );
    assert_eq!(f(DefinitionFilter { version: Some(1), ..Default::default() }).await.len(), 2);
    assert!(f(DefinitionFilter { version: Some(2), ..Default::default() }).await.is_empty());
    assert_eq!(f(DefinitionFilter { suspended: Some(false), ..Default::default() }).await.len(), 2);
    assert!(f(DefinitionFilter { suspended: Some(true), ..Default::default() }).await.is_empty());
    let d = tables::definition_query(&*store, &DefinitionFilter::default()).await.unwrap();
    assert_eq!((d[0].tenant_id.as_str(), d[0].graphical_notation_defined, d[0].start_form_defined), ("", false, false));

    // Instances: running, by suspension, ended.
    started(&*store, &instance("pi-1", &order, "order")).await;
    started(&*store, &instance("pi-2", &order, "order")).await;
    let running = tables::deployment_running_instances(&*store, "dep-order", 10).await.unwrap();
    assert_eq!(running.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["pi-1", "pi-2"]);
    assert_eq!(running[0].definition_id, order);
    assert_eq!(tables::deployment_running_instances(&*store, "dep-order", 1).await.unwrap().len(), 1);
    assert!(tables::deployment_running_instances(&*store, "dep-other", 10).await.unwrap().is_empty());
    store
        .sql_execute("UPDATE ACT_RU_EXECUTION SET SUSPENSION_STATE_ = 2 WHERE PROC_INST_ID_ = 'pi-2'", &[])
        .await
        .unwrap();
    assert_eq!(tables::definition_instances(&*store, &order, false, 10).await.unwrap(), ["pi-1"]);
    assert_eq!(tables::definition_instances(&*store, &order, true, 10).await.unwrap(), ["pi-2"]);
    assert!(tables::deployment_ended_instances(&*store, "dep-order", 10).await.unwrap().is_empty());
    store.sql_execute("DELETE FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = 'pi-1'", &[]).await.unwrap();
    assert_eq!(tables::deployment_ended_instances(&*store, "dep-order", 10).await.unwrap(), ["pi-1"]);
}

async fn a_deployment_is_deleted_whole_or_not_at_all(store: Arc<dyn Store>) {
    let order = deploy(&*store, "order").await;
    deploy(&*store, "other").await;
    let now = at("2026-12-01T10:00:00Z");
    store
        .write_all(&[
            tables::timer_start_insert((&order, ""), "tick", now, Some("R/PT1H".into()), now),
            tables::start_subscription_insert("message", "go", "start", (&order, ""), now),
        ])
        .await
        .unwrap();
    started(&*store, &instance("pi-1", &order, "order")).await;
    let before = counts(&*store).await;
    let e = store.write_all(&tables::deployment_delete("dep-order", vec![])).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "an execution of its definition: {e}");
    assert_eq!(counts(&*store).await, before, "rolled back whole, its timer start job included");

    // Gone the instance, gone everything of the deployment; the other one stays.
    store.sql_execute("DELETE FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = 'pi-1'", &[]).await.unwrap();
    store.write_all(&tables::deployment_delete("dep-order", vec![])).await.unwrap();
    assert!(tables::deployment_get(&*store, "dep-order").await.unwrap().is_none());
    assert!(tables::deployment_resources(&*store, "dep-order").await.unwrap().is_empty());
    let defs = tables::definition_query(&*store, &DefinitionFilter::default()).await.unwrap();
    assert_eq!(defs.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["other:1"]);
    let left = store
        .sql_query(
            &format!(
                "SELECT (SELECT COUNT(*) FROM ACT_RU_EVENT_SUBSCR WHERE PROC_DEF_ID_ = '{order}'), \
                 (SELECT COUNT(*) FROM ACT_RU_JOB WHERE PROC_DEF_ID_ = '{order}')"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!((left[0][0].as_i64(), left[0][1].as_i64()), (Some(0), Some(0)));
    assert!(tables::deployment_get(&*store, "dep-other").await.unwrap().is_some());

    // A deployment already gone: the guard refuses, nothing happens.
    let e = store.write_all(&tables::deployment_delete("dep-order", vec![])).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
}

on_both_backends!(deployments_their_resources_and_instances_are_read, a_deployment_is_deleted_whole_or_not_at_all);
