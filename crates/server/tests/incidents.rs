//! `/reconcile` and `/incidents` over real HTTP (SPEC C7, seed 002 §28–§31): a node without a
//! configuration says so; with one, a pass opens an incident for a DRAFT record whose process
//! already runs; the incident is approved by one user, refused to the same user as executor,
//! executed by another (the business row written back through the reconciler), and closed,
//! with before/after and the audit trail in its JSON; bad input is a 400 naming the field.

mod processes_support;

use kairos::store::SqlValue;
use processes_support::{Backend, one_task, server};
use serde_json::json;

async fn an_incident_goes_through_its_life_over_http(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.post("/reconcile", json!({})).await.refused(409, None);
    let store = srv.engine.store().clone();
    store
        .sql_execute("CREATE TABLE contract (id VARCHAR(32) PRIMARY KEY, state VARCHAR(16) NOT NULL)", &[])
        .await
        .unwrap();
    store.sql_execute("INSERT INTO contract (id, state) VALUES ('C-1', 'draft')", &[]).await.unwrap();
    srv.deployed("approval", &one_task("approval")).await;
    srv.post(
        "/runtime/process-instances",
        json!({"processDefinitionKey": "approval", "binding": {"businessType": "CONTRACT", "businessId": "C-1"}}),
    )
    .await
    .ok(201);
    let config = kairos::reconcile::Config::parse(
        &json!({"sources": [{"businessType": "CONTRACT", "table": "contract", "statusColumn": "state",
            "processType": "approval", "states": {"DRAFT": ["draft"], "APPROVING": ["in_review"], "APPROVED": ["signed"]}}]})
        .to_string(),
    )
    .unwrap();
    srv.engine.set_reconciler(srv.engine.reconciler_for(config).unwrap()).unwrap();

    let dry = srv.post("/reconcile?dryRun=true", json!({})).await.ok(200).clone();
    assert_eq!((dry["dryRun"].clone(), dry["incidentsOpened"].clone()), (json!(true), json!(1)), "{dry}");
    assert_eq!(srv.get("/incidents").await.ok(200)["total"], 0, "a dry run writes nothing");
    let report = srv.post("/reconcile", json!({})).await.ok(200).clone();
    assert_eq!(report["findings"][0]["ruleId"], "draft-with-instance", "{report}");
    let listed = srv.get("/incidents?status=OPEN&kind=incident").await.ok(200).clone();
    let id = listed["data"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(listed["data"][0]["evidence"]["businessStatus"], "draft", "evidence is JSON: {listed}");

    srv.post(&format!("/incidents/{id}/approve"), json!({})).await.refused(400, Some("user"));
    srv.post(&format!("/incidents/{id}/approve"), json!({"user": "alice", "colour": "red"})).await.refused(400, None);
    srv.post(&format!("/incidents/{id}/approve"), json!({"user": "alice", "plan": "write back in_review"}))
        .await
        .ok(200);
    srv.post(&format!("/incidents/{id}/approve"), json!({"user": "alice"})).await.refused(409, None);
    let action = json!({"type": "write-back", "to": "APPROVING"});
    srv.post(&format!("/incidents/{id}/execute"), json!({"user": "alice", "action": action})).await.refused(409, None);
    srv.post(&format!("/incidents/{id}/execute"), json!({"user": "bob", "action": {"type": "jump"}}))
        .await
        .refused(400, Some("action"));
    let rows = store.sql_query("SELECT state FROM contract WHERE id = 'C-1'", &[]).await.unwrap();
    assert_eq!(rows[0][0], SqlValue::Text("draft".into()), "refused executions changed nothing");
    let done =
        srv.post(&format!("/incidents/{id}/execute"), json!({"user": "bob", "action": action})).await.ok(200).clone();
    assert_eq!((done["status"].clone(), done["executedBy"].clone()), (json!("EXECUTED"), json!("bob")));
    assert_eq!(done["before"]["businessStatus"], "draft");
    assert_eq!(done["after"]["businessStatus"], "in_review");
    assert_eq!(done["action"]["type"], "write-back");
    let rows = store.sql_query("SELECT state FROM contract WHERE id = 'C-1'", &[]).await.unwrap();
    assert_eq!(rows[0][0], SqlValue::Text("in_review".into()));
    srv.post(&format!("/incidents/{id}/close"), json!({"user": "carol"})).await.refused(400, Some("note"));
    let closed =
        srv.post(&format!("/incidents/{id}/close"), json!({"user": "carol", "note": "ok"})).await.ok(200).clone();
    assert_eq!(closed["audit"].as_array().unwrap().len(), 4, "{closed}");
    assert_eq!(srv.get(&format!("/incidents/{id}")).await.ok(200)["status"], "CLOSED");
    srv.get("/incidents/nope").await.refused(404, None);
    srv.get("/incidents?status=DONE").await.refused(400, Some("status"));
    let metrics = srv.get("/metrics").await.text;
    assert!(metrics.contains("kairos_reconcile_passes_total 1"), "{metrics}");
    assert!(metrics.contains("kairos_incidents{kind=\"incident\",status=\"CLOSED\"} 1"), "{metrics}");
    assert!(metrics.contains("kairos_reconcile_differences{rule=\"draft-with-instance\"} 1"), "{metrics}");
}

on_both_backends!(an_incident_goes_through_its_life_over_http);
