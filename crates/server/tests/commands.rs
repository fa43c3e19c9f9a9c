//! `/commands` over real HTTP (SPEC C6): a START_PROCESS submitted to the business database
//! answers 202 and PENDING, a resubmission the same command, a different one under the same
//! requestId 409; the worker runs it and `GET /commands/{id}` shows SUCCEEDED with the instance.
//! Bad input is a 400 naming the field, with nothing written; a node without a business
//! database says so.

mod processes_support;

use processes_support::{Backend, one_task, server};
use serde_json::json;

async fn a_submitted_command_is_accepted_then_run(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let body = json!({"requestId": "r-1", "commandType": "START_PROCESS", "businessType": "CONTRACT",
                      "businessId": "C-1", "lifecycleNo": 1, "payload": {"processDefinitionKey": "approval"}});
    srv.post("/commands", body.clone()).await.refused(409, None);
    let dir = tempfile::tempdir().unwrap();
    let business = kairos::business::connect(&format!("sqlite://{}/business.db", dir.path().display())).await.unwrap();
    kairos::commands::table::schema(business.as_ref()).await.unwrap();
    srv.engine.set_business_db(business.clone()).unwrap();
    srv.deployed("approval", &one_task("approval")).await;

    let accepted = srv.post("/commands", body.clone()).await.ok(202).clone();
    assert_eq!((accepted["requestId"].clone(), accepted["status"].clone()), (json!("r-1"), json!("PENDING")));
    assert_eq!(srv.post("/commands", body.clone()).await.ok(202)["requestId"], "r-1", "a resubmission answers it");
    let mut other = body.clone();
    other["businessId"] = json!("C-2");
    srv.post("/commands", other).await.refused(409, Some("requestId"));
    for (field, bad) in [
        ("commandType", json!({"commandType": "DROP_TABLE"})),
        ("businessId", json!({"businessId": ""})),
        ("lifecycleNo", json!({"lifecycleNo": 0})),
        ("payload", json!({"payload": [1, 2]})),
        ("requestId", json!({"requestId": "x".repeat(65)})),
    ] {
        let mut b = body.clone();
        for (k, v) in bad.as_object().unwrap() {
            b[k] = v.clone();
        }
        b["requestId"] = if field == "requestId" { bad["requestId"].clone() } else { json!(format!("bad-{field}")) };
        srv.post("/commands", b).await.refused(400, Some(field));
    }
    srv.post("/commands", json!({"requestId": "r-9", "colour": "red"})).await.refused(400, None);
    let listed = srv.get("/commands").await.ok(200).clone();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1, "refused submissions wrote nothing: {listed}");

    let worker = kairos::commands::Worker::new(business, srv.engine.clone(), kairos::commands::WorkerConfig::new("w1"));
    assert_eq!(worker.run_once().await.unwrap(), 1);
    let done = srv.get("/commands/r-1").await.ok(200).clone();
    assert_eq!(done["status"], "SUCCEEDED", "{done}");
    let pi = done["processInstanceId"].as_str().unwrap();
    let b = srv.get(&format!("/bindings?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!((b["data"][0]["businessId"].clone(), b["data"][0]["lifecycleNo"].clone()), (json!("C-1"), json!(1)));
    assert_eq!(
        srv.get("/commands?status=SUCCEEDED&businessType=CONTRACT").await.ok(200)["data"][0]["requestId"],
        "r-1"
    );
    srv.get("/commands?status=DONE").await.refused(400, Some("status"));
    srv.get("/commands/nope").await.refused(404, None);
    let metrics = srv.get("/metrics").await.text;
    assert!(metrics.contains("kairos_commands{status=\"SUCCEEDED\"} 1"), "{metrics}");
    assert!(metrics.contains("kairos_commands_oldest_waiting_age_seconds 0"), "{metrics}");
}

on_both_backends!(a_submitted_command_is_accepted_then_run);
