//! Operating on running instances over real HTTP, on SQLite and on PostgreSQL: suspend,
//! signal, message, delete, migrate (SPEC P13).

mod processes_support;

use processes_support::{Backend, as_map, one_task, server};
use serde_json::json;

/// Waits for a message and a signal side by side, then a task.
const EVENTS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="paid"/>
  <signal id="s" name="alarm"/>
  <process id="events" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="waitPaid"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="waitAlarm"/>
    <intermediateCatchEvent id="waitPaid"><messageEventDefinition messageRef="m"/></intermediateCatchEvent>
    <intermediateCatchEvent id="waitAlarm"><signalEventDefinition signalRef="s"/></intermediateCatchEvent>
    <sequenceFlow id="f4" sourceRef="waitPaid" targetRef="join"/>
    <sequenceFlow id="f5" sourceRef="waitAlarm" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f6" sourceRef="join" targetRef="ship"/>
    <userTask id="ship" name="Ship"/>
    <sequenceFlow id="f7" sourceRef="ship" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn instances_are_suspended_signalled_messaged_and_deleted(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("events", EVENTS).await;
    let a = srv.started("events", "EV-A", json!({})).await["id"].as_str().unwrap().to_string();
    let b = srv.started("events", "EV-B", json!({})).await["id"].as_str().unwrap().to_string();
    assert_eq!(srv.get("/runtime/process-instances?processDefinitionKey=events").await.ok(200)["total"], 2);

    // Variables, read and written.
    let r = srv.put(&format!("/runtime/process-instances/{a}/variables"), json!({"x": 1, "y": {"deep": [true]}})).await;
    let set = json!([
        {"name": "x", "type": "integer", "value": 1, "scope": "local"},
        {"name": "y", "type": "json", "value": {"deep": [true]}, "scope": "local"}
    ]);
    assert_eq!(r.ok(200).clone(), set);
    // Flowable's list form, read back as a list.
    let r = srv
        .put(
            &format!("/runtime/process-instances/{a}/variables"),
            json!([{"name": "z", "type": "long", "value": 5_000_000_000_i64}]),
        )
        .await;
    assert_eq!(r.ok(200)[0]["type"], json!("long"));
    let all = srv.get(&format!("/runtime/process-instances/{a}/variables")).await.ok(200).clone();
    assert_eq!(all.as_array().unwrap().len(), 3, "{all}");
    assert_eq!(all[2], json!({"name": "z", "type": "long", "value": 5_000_000_000_i64, "scope": "local"}));
    // POST creates only.
    srv.post(&format!("/runtime/process-instances/{a}/variables"), json!([{"name": "x", "value": 2}]))
        .await
        .refused(409, None);
    srv.post(&format!("/runtime/process-instances/{a}/variables"), json!([{"name": "w", "value": 2}])).await.ok(201);
    srv.put(
        &format!("/runtime/process-instances/{a}/variables"),
        json!([{"name": "x", "type": "integer", "value": "1"}]),
    )
    .await
    .refused(400, Some("variables"));

    // Suspend and activate.
    let p = format!("/runtime/process-instances/{a}");
    assert_eq!(srv.put(&p, json!({"action": "suspend"})).await.ok(200)["suspended"], true);
    let execs = srv.get(&format!("/runtime/executions?processInstanceId={a}")).await;
    assert!(execs.ok(200)["data"].as_array().unwrap().iter().all(|e| e["suspended"] == true), "{}", execs.text);
    assert_eq!(srv.put(&p, json!({"action": "activate"})).await.ok(200)["suspended"], false);

    // Two instances wait for "paid": the message must say which.
    let r = srv.post("/runtime/messages", json!({"messageName": "paid"})).await;
    assert!(r.refused(409, None).contains("businessKey"), "{}", r.text);
    let r = srv
        .post(
            "/runtime/messages",
            json!({"messageName": "paid", "businessKey": "EV-A", "variables": {"paidBy": "card"}}),
        )
        .await;
    assert_eq!(r.ok(200)["processInstanceId"], a.as_str());
    let r = srv.post("/runtime/messages", json!({"messageName": "paid", "processInstanceId": b})).await;
    assert_eq!(r.ok(200)["processInstanceId"], b.as_str());
    let r = srv.post("/runtime/signals", json!({"signalName": "alarm"})).await;
    r.ok(204);
    assert_eq!(r.header("kairos-received"), Some("2"));
    assert_eq!(as_map(srv.get(&format!("{p}/variables")).await.ok(200))["paidBy"], "card");
    assert_eq!(srv.tasks_of(&a).await[0]["taskDefinitionKey"], "ship");
    assert_eq!(srv.tasks_of(&b).await.len(), 1);

    // Delete one: 204, its history keeps the reason.
    assert_eq!(
        srv.delete(&format!("/runtime/process-instances/{b}?deleteReason=cancelled%20by%20customer")).await.status,
        204
    );
    srv.get(&format!("/runtime/process-instances/{b}")).await.refused(404, None);
    let r = srv.get(&format!("/history/historic-process-instances?processInstanceId={b}")).await;
    let h = r.ok(200)["data"][0].clone();
    assert_eq!((h["ended"].as_bool(), h["deleteReason"].as_str()), (Some(true), Some("cancelled by customer")), "{h}");
    let r = srv.get(&format!("/history/historic-task-instances?processInstanceId={b}")).await;
    let t = r.ok(200)["data"][0].clone();
    assert!(t["endTime"].is_string(), "the open task ended with the instance: {t}");
    assert_eq!(srv.get("/runtime/process-instances?processDefinitionKey=events").await.ok(200)["total"], 1);
    assert_eq!(srv.get(&format!("/runtime/executions?processInstanceId={b}")).await.ok(200)["total"], 0);
}

/// `POST /runtime/process-instances/{id}/migrate` (SPEC P13): a mapping problem is a 400
/// naming the activity; a good mapping moves the instance and its task.
async fn an_instance_migrates_over_http(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("mig", &one_task("mig")).await;
    let pi = srv.started("mig", "MIG-1", json!({})).await["id"].as_str().unwrap().to_string();
    let v2 = one_task("mig").replace("\"task\"", "\"approve\"").replace("name=\"Task\"", "name=\"Approve\"");
    let v2_id = srv.deployed("mig", &v2).await["processDefinitions"][0]["id"].as_str().unwrap().to_string();
    let path = format!("/runtime/process-instances/{pi}/migrate");
    let msg = srv.post(&path, json!({})).await.refused(400, Some("task")).to_string();
    assert!(msg.contains("has no 'task'"), "{msg}");
    srv.post(&path, json!({"activityMappings": [{"fromActivityId": "task"}]})).await.refused(400, Some("toActivityId"));
    srv.post(&path, json!({"toVersion": 2})).await.refused(400, None);
    let body = json!({"toProcessDefinitionVersion": 2, "activityMappings": [{"fromActivityId": "task", "toActivityId": "approve"}]});
    let moved = srv.post(&path, body).await.ok(200).clone();
    assert_eq!(moved["processDefinitionId"], v2_id.as_str());
    let task = &srv.tasks_of(&pi).await[0];
    assert_eq!((task["taskDefinitionKey"].as_str(), task["name"].as_str()), (Some("approve"), Some("Approve")));
    srv.post("/runtime/process-instances/nope/migrate", json!({})).await.refused(404, None);
    // Every running instance of a definition at once (here: v2's one, to the latest, v2).
    let all = srv.post(&format!("/repository/process-definitions/{v2_id}/migrate"), json!({})).await.ok(200).clone();
    assert_eq!(all["migrated"], 1, "{all}");
    assert_eq!(all["instances"][0]["processInstanceId"], pi.as_str(), "{all}");
    srv.post("/repository/process-definitions/nope/migrate", json!({})).await.refused(404, None);
}

on_both_backends!(an_instance_migrates_over_http, instances_are_suspended_signalled_messaged_and_deleted,);
