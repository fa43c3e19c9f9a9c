//! Camunda 7's own clients against a kairos node, unchanged, on SQLite and on PostgreSQL
//! (issue 18): `camunda-external-task-client-js`, `camunda-external-task-client-python3` and
//! `pycamunda` run their examples' flows (clients/camunda/*) against `/engine-rest` — fetch
//! and lock with long polling, complete with variables, fail with retries and a retry timeout
//! and see the task again, throw a BPMN error caught by a boundary event — and the test checks
//! through the API what the engine recorded.

mod clients_support;
mod processes_support;

use processes_support::{Backend, Server, server, server_with};
use serde_json::{Value, json};

/// A payment model as Camunda Modeler saves it: an external task on topic `charge-card`, an
/// error boundary event catching `CARD_DECLINED`.
const PAYMENT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:modeler="http://camunda.org/schema/modeler/1.0" id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn" exporter="Camunda Modeler" exporterVersion="5.20.0" modeler:executionPlatform="Camunda Platform" modeler:executionPlatformVersion="7.20.0">
  <bpmn:process id="payment" name="Payment" isExecutable="true" camunda:historyTimeToLive="180">
    <bpmn:startEvent id="StartEvent_1" name="Payment requested">
      <bpmn:outgoing>Flow_1</bpmn:outgoing>
    </bpmn:startEvent>
    <bpmn:sequenceFlow id="Flow_1" sourceRef="StartEvent_1" targetRef="charge" />
    <bpmn:serviceTask id="charge" name="Charge card" camunda:type="external" camunda:topic="charge-card">
      <bpmn:incoming>Flow_1</bpmn:incoming>
      <bpmn:outgoing>Flow_2</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="Flow_2" sourceRef="charge" targetRef="paid" />
    <bpmn:endEvent id="paid" name="Payment received">
      <bpmn:incoming>Flow_2</bpmn:incoming>
    </bpmn:endEvent>
    <bpmn:boundaryEvent id="card_declined" name="Card declined" attachedToRef="charge">
      <bpmn:outgoing>Flow_3</bpmn:outgoing>
      <bpmn:errorEventDefinition id="ErrorEventDefinition_1" errorRef="Error_declined" />
    </bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="Flow_3" sourceRef="card_declined" targetRef="declined" />
    <bpmn:endEvent id="declined" name="Payment declined">
      <bpmn:incoming>Flow_3</bpmn:incoming>
    </bpmn:endEvent>
  </bpmn:process>
  <bpmn:error id="Error_declined" name="Card declined" errorCode="CARD_DECLINED" />
  <bpmndi:BPMNDiagram id="BPMNDiagram_1">
    <bpmndi:BPMNPlane id="BPMNPlane_1" bpmnElement="payment">
      <bpmndi:BPMNShape id="charge_di" bpmnElement="charge"><dc:Bounds x="270" y="77" width="100" height="80" /></bpmndi:BPMNShape>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
</bpmn:definitions>
"#;

/// Starts `payment` through Camunda's path with typed variables; returns the instance id.
async fn start(s: &Server, business_key: &str, kind: &str, amount: i64) -> String {
    let body = json!({
        "businessKey": business_key,
        "variables": {"kind": {"value": kind, "type": "String"}, "amount": {"value": amount, "type": "Integer"}},
    });
    let r = s.post("/engine-rest/process-definition/key/payment/start", body).await;
    let v = r.ok(200);
    assert_eq!(v["definitionKey"], "payment", "{v}");
    assert_eq!(v["businessKey"], business_key);
    v["id"].as_str().unwrap().to_string()
}

/// The last values of an instance's variables, by name, from Camunda's history path.
async fn history_variables(s: &Server, pi: &str) -> serde_json::Map<String, Value> {
    let r = s.get(&format!("/engine-rest/history/variable-instance?processInstanceId={pi}")).await;
    r.ok(200).as_array().unwrap().iter().map(|v| (v["name"].as_str().unwrap().to_string(), v.clone())).collect()
}

/// The activity ids an instance went through, from Camunda's history path.
async fn activities(s: &Server, pi: &str) -> Vec<String> {
    let r = s.get(&format!("/engine-rest/history/activity-instance?processInstanceId={pi}")).await;
    r.ok(200).as_array().unwrap().iter().map(|a| a["activityId"].as_str().unwrap().to_string()).collect()
}

/// What every client's flow must leave behind: all three instances ended (in history,
/// COMPLETED), the paid ones through `paid` with `charged`, the declined one through the
/// boundary event with the BPMN error's variable, no external task left.
async fn check_outcome(s: &Server, ok: &str, flaky: &str, declined: &str, charged_by: &str) {
    for pi in [ok, flaky, declined] {
        let r = s.get(&format!("/engine-rest/history/process-instance?processInstanceId={pi}")).await;
        let h = &r.ok(200)[0];
        assert_eq!(h["state"], "COMPLETED", "{h}");
        assert!(h["endTime"].is_string(), "{h}");
        s.get(&format!("/engine-rest/process-instance/{pi}")).await.ok(404);
    }
    for pi in [ok, flaky] {
        let vars = history_variables(s, pi).await;
        assert_eq!(vars["charged"]["value"], true, "{vars:?}");
        assert_eq!(vars["charged"]["type"], "Boolean");
        assert_eq!(vars["chargedBy"]["value"], charged_by);
        assert!(activities(s, pi).await.contains(&"paid".to_string()));
    }
    let vars = history_variables(s, declined).await;
    assert_eq!(vars["declineReason"]["value"], "insufficient funds", "{vars:?}");
    assert!(!vars.contains_key("charged"));
    let path = activities(s, declined).await;
    assert!(path.contains(&"card_declined".to_string()) && path.contains(&"declined".to_string()), "{path:?}");
    assert!(!path.contains(&"paid".to_string()), "{path:?}");
    let left = s.get("/engine-rest/external-task/count?topicName=charge-card").await;
    assert_eq!(left.ok(200)["count"], 0);
}

/// The ids of the lines with `step` = `name`.
fn steps<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["step"] == name).collect()
}

/// camunda-external-task-client-js: the README's flow. The model is deployed through
/// Flowable's path and started through Camunda's: one engine under both faces.
async fn the_js_client_runs_its_flow(backend: Backend) {
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let ok = start(&s, "js-ok", "ok", 10).await;
    let flaky = start(&s, "js-flaky", "flaky", 20).await;
    let declined = start(&s, "js-declined", "declined", 999).await;
    let base = format!("http://{}", s.addr);
    let ran = clients_support::node(&clients, "camunda", "worker.mjs", &base).await;
    let lines = &ran.lines;
    assert_eq!(steps(lines, "done").len(), 1, "{}", ran.stdout);
    // The failed task came back, with the retries the worker left it.
    let failed = steps(lines, "failed");
    assert_eq!(failed.len(), 1, "{}", ran.stdout);
    let again: Vec<_> = steps(lines, "fetched").into_iter().filter(|l| l["id"] == failed[0]["id"]).collect();
    assert_eq!(again.len(), 2, "fetched before and after the retry timeout: {}", ran.stdout);
    assert_eq!(again[1]["retries"].as_i64(), again[0]["retries"].as_i64().map(|r| r - 1), "{}", ran.stdout);
    assert_eq!(again[0]["businessKey"], "js-flaky");
    check_outcome(&s, &ok, &flaky, &declined, "js").await;
    // Process variables as typed, and the local one on the instance (the task's scope).
    let vars = history_variables(&s, &ok).await;
    assert_eq!(vars["receipt"]["type"], "Json", "{vars:?}");
    let receipt: Value = serde_json::from_str(vars["receipt"]["value"].as_str().unwrap()).unwrap();
    assert_eq!(receipt, json!({"number": 42, "lines": [10]}));
    assert_eq!(vars["winningDate"]["value"], "2026-01-02T03:04:05.678Z", "{vars:?}");
    // The same instance as Flowable's face shows it.
    let flowable = s.get(&format!("/history/historic-process-instances?processInstanceId={ok}")).await;
    assert!(flowable.ok(200).to_string().contains(&ok));
}

/// camunda-external-task-client-python3: its README's handler, complete / failure / bpmn_error.
async fn the_python_client_runs_its_flow(backend: Backend) {
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let ok = start(&s, "py-ok", "ok", 10).await;
    let flaky = start(&s, "py-flaky", "flaky", 20).await;
    let declined = start(&s, "py-declined", "declined", 999).await;
    let base = format!("http://{}", s.addr);
    let ran = clients_support::python(&clients, "camunda", "worker.py", &base).await;
    assert_eq!(steps(&ran.lines, "done").len(), 1, "{}", ran.stdout);
    let fetched = steps(&ran.lines, "fetched");
    assert_eq!(
        fetched.iter().filter(|l| l["kind"] == "flaky").count(),
        2,
        "seen again after the failure: {}",
        ran.stdout
    );
    check_outcome(&s, &ok, &flaky, &declined, "python").await;
    let vars = history_variables(&s, &ok).await;
    assert_eq!(vars["receipt"]["type"], "Json", "{vars:?}");
}

/// pycamunda: deploy (multipart), start by key, fetch and lock, unlock, extend, complete,
/// fail (error details listed), BPMN error, count.
async fn pycamunda_runs_its_flow(backend: Backend) {
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server(backend).await else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("payment.bpmn");
    std::fs::write(&model, PAYMENT).unwrap();
    let base = format!("http://{}", s.addr);
    let py = clients.join(".venv/bin/python");
    let ran = clients_support::run(
        &clients.join("camunda"),
        py.to_str().unwrap(),
        &["pycamunda_flow.py", &base, model.to_str().unwrap()],
        std::time::Duration::from_secs(120),
    )
    .await;
    let done = steps(&ran.lines, "done");
    assert_eq!(done.len(), 1, "{}", ran.stdout);
    assert_eq!(done[0]["open_external_tasks"], 0);
    let started: Vec<(String, String)> = steps(&ran.lines, "started")
        .iter()
        .map(|l| (l["kind"].as_str().unwrap().to_string(), l["id"].as_str().unwrap().to_string()))
        .collect();
    let id = |k: &str| started.iter().find(|(kind, _)| kind == k).unwrap().1.clone();
    assert_eq!(steps(&ran.lines, "unlocked").len(), 2, "{}", ran.stdout);
    check_outcome(&s, &id("ok"), &id("flaky"), &id("declined"), "pycamunda").await;
    // Deployed once through Camunda's face, seen through Flowable's.
    let defs = s.get("/repository/process-definitions?key=payment").await;
    assert_eq!(defs.ok(200)["total"], 1);
}

/// A node with an API token: both external task clients present it as their READMEs show
/// authentication (Basic credentials, the token as the password) and run the flow; without it
/// `/engine-rest` answers 401 in Camunda's shape.
async fn the_clients_authenticate_with_the_token(backend: Backend) {
    const TOKEN: &str = "kairos-test-token-0123456789";
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server_with(backend, Some(TOKEN)).await else { return };
    let refused = s.get("/engine-rest/external-task/count").await;
    assert_eq!(
        (refused.status, refused.json["type"].as_str()),
        (401, Some("AuthenticationException")),
        "{}",
        refused.text
    );
    // Deployed and started through the engine: the test's own HTTP client sends no token.
    let p = s.engine.processes();
    p.deploy("payment.bpmn", PAYMENT).await.unwrap();
    let base = format!("http://{}", s.addr);
    for (program, run) in [("worker.mjs", 0), ("worker.py", 1)] {
        let mut ids = Vec::new();
        for (kind, amount) in [("ok", 10), ("flaky", 20), ("declined", 999)] {
            let req = kairos::process::StartRequest {
                process_definition_key: Some("payment".into()),
                business_key: Some(format!("{run}-{kind}")),
                variables: json!({"kind": kind, "amount": amount}).as_object().unwrap().clone(),
                ..Default::default()
            };
            ids.push(p.start(req).await.unwrap().id);
        }
        let ran = if run == 0 {
            clients_support::node_with(&clients, "camunda", program, &[&base, "3", TOKEN]).await
        } else {
            clients_support::python_with(&clients, "camunda", program, &[&base, "3", TOKEN]).await
        };
        assert_eq!(steps(&ran.lines, "done").len(), 1, "{}", ran.stdout);
        for pi in &ids {
            assert!(p.instance(pi).await.unwrap().ended, "{program}: {pi} ended");
        }
    }
}

on_both_backends!(
    the_js_client_runs_its_flow,
    the_python_client_runs_its_flow,
    pycamunda_runs_its_flow,
    the_clients_authenticate_with_the_token,
);
