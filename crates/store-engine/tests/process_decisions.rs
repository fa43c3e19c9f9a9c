//! Decision definitions on both backends (ACT_RE_DECISION_DEF): versions of a key found by
//! latest, number, tag and deployment; the DMN XML read back; a second row of the same key and
//! version refused; the rows deleted with their deployment.

mod common;
mod process_fixture;

use kairos_store::{ErrorKind, Store};
use kairos_store_engine::process::{self as tables, DecisionDefinition, DecisionLookup};
use process_fixture::*;
use std::sync::Arc;

fn decision(key: &str, version: i64, deployment: &str, tag: Option<&str>) -> DecisionDefinition {
    DecisionDefinition {
        id: format!("{key}:{version}:{deployment}"),
        key: key.into(),
        version,
        name: Some(format!("The {key}")),
        category: Some("http://camunda.org/schema/1.0/dmn".into()),
        deployment_id: deployment.into(),
        resource_name: format!("{deployment}.dmn"),
        tenant_id: String::new(),
        history_ttl_days: Some(30),
        version_tag: tag.map(str::to_owned),
    }
}

async fn deploy_decisions(store: &dyn Store, deployment: &str, rows: &[DecisionDefinition]) {
    let mut w = vec![
        tables::deployment_insert(deployment, deployment, at("2026-12-01T10:00:00Z")),
        tables::resource_insert(deployment, &format!("{deployment}.dmn"), &format!("<definitions id='{deployment}'/>")),
    ];
    w.extend(rows.iter().map(tables::decision_insert));
    store.write_all(&w).await.unwrap();
}

async fn decisions_are_versioned_found_and_deleted_with_their_deployment(store: Arc<dyn Store>) {
    let v1 = decision("classify", 1, "d1", Some("2026.1"));
    let assign = decision("assign", 1, "d1", None);
    let v2 = decision("classify", 2, "d2", None);
    deploy_decisions(&*store, "d1", &[v1.clone(), assign.clone()]).await;
    deploy_decisions(&*store, "d2", std::slice::from_ref(&v2)).await;
    let find = |w: DecisionLookup<'static>| {
        let store = store.clone();
        async move { tables::decision_find(&*store, w).await.unwrap() }
    };
    assert_eq!(find(DecisionLookup::Latest("classify", "")).await, Some(v2.clone()));
    assert_eq!(find(DecisionLookup::Version("classify", 1, "")).await, Some(v1.clone()));
    assert_eq!(find(DecisionLookup::Tag("classify", "2026.1", "")).await, Some(v1.clone()));
    assert_eq!(find(DecisionLookup::InDeployment("classify", "d1")).await, Some(v1.clone()));
    assert_eq!(find(DecisionLookup::Id("assign:1:d1")).await, Some(assign.clone()));
    assert_eq!(find(DecisionLookup::Latest("nope", "")).await, None);
    assert_eq!(find(DecisionLookup::Version("classify", 3, "")).await, None);

    let all = tables::decision_list(&*store, None, None, false, None).await.unwrap();
    assert_eq!(all, [assign.clone(), v1.clone(), v2.clone()]);
    assert_eq!(tables::decision_list(&*store, None, None, true, None).await.unwrap(), [assign.clone(), v2.clone()]);
    assert_eq!(
        tables::decision_list(&*store, Some("classify"), Some("d1"), false, None).await.unwrap(),
        std::slice::from_ref(&v1)
    );
    let xml = tables::decision_resource(&*store, &v2.id).await.unwrap();
    assert_eq!(xml.as_deref(), Some("<definitions id='d2'/>"));
    assert_eq!(tables::decision_resource(&*store, "nope").await.unwrap(), None);

    // Key and version are unique: a racing deployment of the same version fails whole.
    let again = DecisionDefinition { id: "other".into(), ..v2.clone() };
    let w = vec![tables::deployment_insert("d3", "d3", at("2026-12-01T11:00:00Z")), tables::decision_insert(&again)];
    assert_eq!(store.write_all(&w).await.unwrap_err().kind, ErrorKind::Conflict);
    assert!(tables::deployment_get(&*store, "d3").await.unwrap().is_none());

    // Deleting a deployment deletes its decisions and its DMN resource.
    store.write_all(&tables::deployment_delete("d1", vec![])).await.unwrap();
    assert_eq!(tables::decision_list(&*store, None, None, false, None).await.unwrap(), std::slice::from_ref(&v2));
    assert_eq!(find(DecisionLookup::Latest("classify", "")).await, Some(v2));
}

on_both_backends!(decisions_are_versioned_found_and_deleted_with_their_deployment);
