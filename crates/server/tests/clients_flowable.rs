//! Flowable's official external worker clients — `@flowable-oss/external-worker-client` (npm)
//! and `flowable-external-worker-client` (PyPI), pinned in clients/flowable/ — run unchanged
//! against a kairos node on SQLite and on PostgreSQL: fetch and lock, complete with typed
//! variables, fail with retries and a retry timeout and get the job again, throw a BPMN error
//! caught by a boundary event. Then the engine's own records are checked.

mod clients_support;
mod processes_support;

use processes_support::{Backend, Server, server, server_with};
use serde_json::{Value, json};

/// A Flowable-designer-style model: an external worker task with an error boundary event.
const PAYMENT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="http://flowable.org/test">
  <error id="declined" errorCode="CARD_DECLINED"/>
  <process id="payment" name="Payment" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" name="Charge card" flowable:type="external-worker" flowable:topic="charge-card"/>
    <boundaryEvent id="cardDeclined" attachedToRef="charge"><errorEventDefinition errorRef="declined"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="charge" targetRef="ship"/>
    <userTask id="ship" name="Ship the order"/>
    <sequenceFlow id="f3" sourceRef="ship" targetRef="done"/>
    <endEvent id="done"/>
    <sequenceFlow id="f4" sourceRef="cardDeclined" targetRef="callCustomer"/>
    <userTask id="callCustomer" name="Call the customer"/>
    <sequenceFlow id="f5" sourceRef="callCustomer" targetRef="declinedEnd"/>
    <endEvent id="declinedEnd"/>
  </process>
</definitions>"#;

/// Deploys the model and starts one instance per case; returns the instance ids by case.
async fn started(s: &Server) -> Vec<(&'static str, String)> {
    s.deployed("payment.bpmn20.xml", PAYMENT).await;
    let mut out = Vec::new();
    for (case, amount) in [("ok", 120), ("flaky", 35), ("decline", 990)] {
        // Flowable's typed variable list on start, as its REST clients send it.
        let body = json!({"processDefinitionKey": "payment", "businessKey": format!("order-{case}"), "variables": [
            {"name": "case", "type": "string", "value": case},
            {"name": "amount", "type": "integer", "value": amount}
        ]});
        let pi = s.post("/runtime/process-instances", body).await.ok(201)["id"].as_str().unwrap().to_string();
        out.push((case, pi));
    }
    out
}

/// The variables of a running instance as a map, read through Flowable's list answer.
async fn variables(s: &Server, pi: &str) -> serde_json::Map<String, Value> {
    let list = s.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200).clone();
    list.as_array()
        .unwrap_or_else(|| panic!("Flowable answers a list: {list}"))
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_string(), v["value"].clone()))
        .collect()
}

/// What every client must have left behind.
async fn check_outcome(s: &Server, instances: &[(&str, String)], ran: &clients_support::Ran) {
    let by_case = |case: &str| instances.iter().find(|(c, _)| *c == case).unwrap().1.clone();
    let (ok, flaky, decline) = (by_case("ok"), by_case("flaky"), by_case("decline"));

    let tasks = s.tasks_of(&ok).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["taskDefinitionKey"], json!("ship"));
    let vars = variables(s, &ok).await;
    assert_eq!(vars["receipt"], json!("R-120"), "{vars:?}");
    assert_eq!(vars["charged"], json!(120));

    let tasks = s.tasks_of(&flaky).await;
    assert_eq!(tasks[0]["taskDefinitionKey"], json!("ship"), "the retried job completed");
    assert_eq!(variables(s, &flaky).await["attempts"], json!(2));
    let times: Vec<f64> = ran
        .lines
        .iter()
        .filter(|l| l["case"] == json!("flaky") && (l["step"] == json!("failed") || l["step"] == json!("acquired")))
        .map(|l| l["time"].as_f64().unwrap())
        .collect();
    assert_eq!(times.len(), 3, "acquired, failed, acquired again: {}", ran.stdout);
    // Seconds (Python) or milliseconds (Node): the job came back no sooner than its retryTimeout.
    let gap = times[2] - times[1];
    let gap_s = if gap > 100.0 { gap / 1000.0 } else { gap };
    assert!(gap_s >= 0.9, "the job came back {gap_s} s after failing, before its 1 s retry timeout");

    let tasks = s.tasks_of(&decline).await;
    assert_eq!(tasks[0]["taskDefinitionKey"], json!("callCustomer"), "the boundary event caught CARD_DECLINED");
    assert_eq!(variables(s, &decline).await["reason"], json!("insufficient funds"));

    let left = s.get("/external-job-api/jobs").await.ok(200).clone();
    assert_eq!(left["total"], json!(0), "no external job is left: {left}");
}

async fn javascript_client_runs_its_flows(backend: Backend) {
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server(backend).await else { return };
    let instances = started(&s).await;
    let ran = clients_support::node(&clients, "flowable", "worker.mjs", &format!("http://{}", s.addr)).await;
    check_outcome(&s, &instances, &ran).await;
}

async fn python_client_runs_its_flows(backend: Backend) {
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server(backend).await else { return };
    let instances = started(&s).await;
    let ran = clients_support::python(&clients, "flowable", "worker.py", &format!("http://{}", s.addr)).await;
    check_outcome(&s, &instances, &ran).await;
}

/// A node with an API token: the JavaScript client presents it as its bearer token, the Python
/// client as the password of Basic credentials; without it the client gets 401.
async fn clients_authenticate_with_the_token(backend: Backend) {
    const TOKEN: &str = "kairos-test-token-0123456789";
    let Some(clients) = clients_support::clients() else { return };
    let Some(s) = server_with(backend, Some(TOKEN)).await else { return };
    assert_eq!(s.get("/external-job-api/jobs").await.status, 401);
    // Deploy and start through the engine: the test's own HTTP client sends no token.
    let xml = PAYMENT.to_string();
    s.engine.processes().deploy("payment.bpmn20.xml", &xml).await.unwrap();
    let mut instances = Vec::new();
    for (case, amount) in [("ok", 120), ("flaky", 35), ("decline", 990)] {
        let vars = json!({"case": case, "amount": amount}).as_object().unwrap().clone();
        let req = kairos::process::StartRequest {
            process_definition_key: Some("payment".into()),
            variables: vars,
            ..Default::default()
        };
        instances.push((case, s.engine.processes().start(req).await.unwrap().id));
    }
    let base = format!("http://{}", s.addr);
    clients_support::node_with(&clients, "flowable", "worker.mjs", &[&base, TOKEN]).await;
    for (case, pi) in &instances {
        let tasks = s.engine.processes().tasks(Some(pi), None, None, None).await.unwrap();
        let want = if *case == "decline" { "callCustomer" } else { "ship" };
        assert_eq!(tasks[0].task_definition_key, want, "{case}");
    }
    // The Python client, with Basic credentials, on a second round of instances.
    let mut again = Vec::new();
    for (case, amount) in [("ok", 1), ("flaky", 2), ("decline", 3)] {
        let vars = json!({"case": case, "amount": amount}).as_object().unwrap().clone();
        let req = kairos::process::StartRequest {
            process_definition_key: Some("payment".into()),
            variables: vars,
            ..Default::default()
        };
        again.push(s.engine.processes().start(req).await.unwrap().id);
    }
    clients_support::python_with(&clients, "flowable", "worker.py", &[&base, TOKEN, "basic"]).await;
    for pi in &again {
        assert_eq!(s.engine.processes().tasks(Some(pi), None, None, None).await.unwrap().len(), 1, "{pi} moved on");
    }
}

on_both_backends!(javascript_client_runs_its_flows, python_client_runs_its_flows, clients_authenticate_with_the_token);
