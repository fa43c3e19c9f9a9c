//! Business bindings over real HTTP (SPEC C3, seed 002 §4): a start names its business object,
//! a second start for the same lifecycle answers the first instance, the binding follows the
//! instance's end, and a bad binding is a 400 naming its field with nothing written; an
//! incoming message delivered twice by event id is correlated once (the inbox, SPEC C5).

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
    let metrics = srv.get("/metrics").await;
    assert!(metrics.text.contains("kairos_instances_without_binding 0"), "{}", metrics.text);
    assert!(metrics.text.contains("kairos_bindings_duplicate_active 0"), "{}", metrics.text);
    srv.started("approval", "UNBOUND-1", json!({})).await;
    let metrics = srv.get("/metrics").await;
    assert!(metrics.text.contains("kairos_instances_without_binding 1"), "{}", metrics.text);
    srv.get("/bindings?businessId=C-9").await.refused(400, Some("businessType"));
    srv.get("/bindings?businessType=CONTRACT&businessId=C-9&colour=red").await.refused(400, None);
}

const WAITS_FOR_PAYMENT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="paid"/>
  <process id="pay" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <receiveTask id="wait" messageRef="m"/>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="ship"/>
    <userTask id="ship"/>
    <sequenceFlow id="f3" sourceRef="ship" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;

/// An incoming event delivered twice (the publisher crashed before marking it sent) reaches
/// its instance once: the inbox drops the second copy, which answers the first's instance.
async fn a_message_delivered_twice_by_event_id_is_correlated_once(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("pay", WAITS_FOR_PAYMENT).await;
    let pi = srv.started("pay", "ORDER-1", json!({})).await["id"].as_str().unwrap().to_string();
    let msg = json!({"messageName": "paid", "businessKey": "ORDER-1", "eventId": "evt-1", "variables": {"n": 1}});
    let first = srv.post("/runtime/messages", msg.clone()).await.ok(200).clone();
    assert_eq!(first["processInstanceId"], pi.as_str());
    assert!(first.get("duplicate").is_none(), "{first}");
    let again = srv.post("/runtime/messages", msg).await.ok(200).clone();
    assert_eq!((again["processInstanceId"].clone(), again["duplicate"].clone()), (json!(pi), json!(true)));
    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let waits = r.ok(200)["data"].as_array().unwrap().iter().filter(|a| a["activityId"] == "wait").count();
    assert_eq!(waits, 1, "delivered once: {}", r.text);
    assert_eq!(srv.rows("inbox_message").await, 1);
    let metrics = srv.get("/metrics").await.text;
    let dropped = metrics
        .lines()
        .find_map(|l| l.strip_prefix("kairos_inbox_deliveries_total{outcome=\"duplicate\"} "))
        .and_then(|n| n.parse::<u64>().ok());
    assert!(dropped.is_some_and(|n| n >= 1), "the duplicate is counted: {metrics}");
    let both = json!({"messageName": "paid", "eventId": "evt-2", "requestId": "r-2"});
    srv.post("/runtime/messages", both).await.refused(400, Some("eventId"));
    let long = json!({"messageName": "paid", "eventId": "e".repeat(65)});
    srv.post("/runtime/messages", long).await.refused(400, Some("eventId"));
    assert_eq!(srv.rows("inbox_message").await, 1, "refused deliveries wrote nothing");
}

on_both_backends!(
    a_start_with_a_binding_answers_its_lifecycles_instance,
    a_message_delivered_twice_by_event_id_is_correlated_once
);
