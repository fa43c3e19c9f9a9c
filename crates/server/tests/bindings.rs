//! Business bindings over real HTTP (SPEC C3, seed 002 §4): a start names its business object,
//! a second start for the same lifecycle answers the first instance, the binding follows the
//! instance's end, and a bad binding is a 400 naming its field with nothing written.

mod processes_support;

use processes_support::{Backend, one_task, server};
use serde_json::json;

async fn a_start_with_a_binding_answers_its_lifecycles_instance(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("approval", &one_task("approval")).await;
    let body = |binding: serde_json::Value| json!({"processDefinitionKey": "approval", "binding": binding});
    let b = json!({"businessType": "CONTRACT", "businessId": "C-9"});
    let first = srv.post("/runtime/process-instances", body(b.clone())).await.ok(201).clone();
    assert_eq!(first["businessKey"], "C-9", "the business id is the business key");
    let again = srv.post("/runtime/process-instances", body(b.clone())).await.ok(201).clone();
    assert_eq!(again["id"], first["id"], "the same lifecycle answers the first instance");

    for (bad, field) in [
        (json!({"businessType": "CONTRACT", "businessId": "C-9", "colour": "red"}), None),
        (json!({"businessType": "", "businessId": "C-9"}), Some("binding.businessType")),
        (json!({"businessType": "CONTRACT"}), Some("binding.businessId")),
        (json!({"businessType": "CONTRACT", "businessId": "x".repeat(65)}), Some("binding.businessId")),
        (json!({"businessType": "CONTRACT", "businessId": "C-9", "lifecycle": 5}), Some("binding.lifecycle")),
        (json!({"businessType": "CONTRACT", "businessId": "C-9", "lifecycle": 0}), Some("binding.lifecycle")),
    ] {
        let r = srv.post("/runtime/process-instances", body(bad.clone())).await;
        let message = r.refused(400, field).to_string();
        if field.is_none() {
            assert!(message.contains("colour"), "the unknown field is named: {message}");
        }
    }
    assert_eq!(srv.rows("ACT_HI_PROCINST").await, 1, "refused starts wrote nothing");
    assert_eq!(srv.rows("business_process_binding").await, 1);

    let pi = first["id"].as_str().unwrap();
    let task = srv.tasks_of(pi).await[0]["id"].as_str().unwrap().to_string();
    srv.post(&format!("/runtime/tasks/{task}"), json!({"action": "complete"})).await;
    let second = srv.post("/runtime/process-instances", body(b)).await.ok(201).clone();
    assert_ne!(second["id"], first["id"], "a resubmission after the end is the next lifecycle");

    let r = srv.get("/bindings?businessType=CONTRACT&businessId=C-9").await;
    let rows = r.ok(200)["data"].as_array().unwrap().clone();
    let seen: Vec<_> = rows.iter().map(|b| (b["lifecycleNo"].as_i64().unwrap(), b["bindingStatus"].clone())).collect();
    assert_eq!(seen, vec![(1, json!("ENDED")), (2, json!("ACTIVE"))], "{}", r.text);
    assert_eq!(rows[0]["processType"], "approval", "the process type defaults to the definition's key");
    let r = srv.get(&format!("/bindings?processInstanceId={}", second["id"].as_str().unwrap())).await;
    assert_eq!(r.ok(200)["data"][0]["lifecycleNo"], 2);
    srv.get("/bindings?businessId=C-9").await.refused(400, Some("businessType"));
    srv.get("/bindings?businessType=CONTRACT&businessId=C-9&colour=red").await.refused(400, None);
}

on_both_backends!(a_start_with_a_binding_answers_its_lifecycles_instance);
