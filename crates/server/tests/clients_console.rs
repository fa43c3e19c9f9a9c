//! The web console in a real headless Chromium (Debian's, driven by playwright-core from npm:
//! `clients/console/console.mjs`) against a node served on 127.0.0.1 with users: every page
//! loads without a console error; an admin deploys a file, sees its diagram with per-activity
//! counts, edits an instance's variables, moves a dead letter back and pauses a trigger; an
//! operator is not offered the admin's actions; a user claims and completes a task from the
//! tasklist through its form. Screenshots go to
//! `target/console-screenshots/` (kept as the test's artifacts).

mod clients_support;

use kairos::Engine;
use kairos::identity::{Group, NewUser, User};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const WORK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
  xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" xmlns:di="http://www.omg.org/spec/DD/20100524/DI"
  xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:kairos="urn:kairos:bpmn" targetNamespace="t">
  <process id="work" name="Work" isExecutable="true">
    <startEvent id="start"/>
    <parallelGateway id="fork"/>
    <userTask id="review" name="Review" camunda:candidateGroups="sales">
      <extensionElements><camunda:formData>
        <camunda:formField id="approved" label="Approved?" type="boolean"/>
        <camunda:formField id="amount" label="Amount" type="long"><camunda:validation><camunda:constraint name="required"/></camunda:validation></camunda:formField>
      </camunda:formData></extensionElements>
    </userTask>
    <serviceTask id="charge" name="Charge" kairos:handler="fail" camunda:asyncBefore="true">
      <extensionElements><camunda:failedJobRetryTimeCycle>R0/PT1S</camunda:failedJobRetryTimeCycle></extensionElements>
    </serviceTask>
    <endEvent id="end"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <sequenceFlow id="f1" sourceRef="fork" targetRef="review"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="charge"/>
    <sequenceFlow id="f3" sourceRef="review" targetRef="end"/>
  </process>
  <bpmndi:BPMNDiagram id="d"><bpmndi:BPMNPlane id="p" bpmnElement="work">
    <bpmndi:BPMNShape id="s_start" bpmnElement="start"><dc:Bounds x="100" y="120" width="36" height="36"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="s_fork" bpmnElement="fork"><dc:Bounds x="190" y="113" width="50" height="50"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="s_review" bpmnElement="review"><dc:Bounds x="300" y="40" width="100" height="80"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="s_charge" bpmnElement="charge"><dc:Bounds x="300" y="170" width="100" height="80"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="s_end" bpmnElement="end"><dc:Bounds x="470" y="62" width="36" height="36"/></bpmndi:BPMNShape>
    <bpmndi:BPMNEdge id="e0" bpmnElement="f0"><di:waypoint x="136" y="138"/><di:waypoint x="190" y="138"/></bpmndi:BPMNEdge>
    <bpmndi:BPMNEdge id="e1" bpmnElement="f1"><di:waypoint x="215" y="113"/><di:waypoint x="215" y="80"/><di:waypoint x="300" y="80"/></bpmndi:BPMNEdge>
    <bpmndi:BPMNEdge id="e2" bpmnElement="f2"><di:waypoint x="215" y="163"/><di:waypoint x="215" y="210"/><di:waypoint x="300" y="210"/></bpmndi:BPMNEdge>
    <bpmndi:BPMNEdge id="e3" bpmnElement="f3"><di:waypoint x="400" y="80"/><di:waypoint x="470" y="80"/></bpmndi:BPMNEdge>
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
</definitions>"#;

const DROPPED: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="dropped" name="dropped" isExecutable="true"><startEvent id="s"/><sequenceFlow id="f" sourceRef="s" targetRef="e"/><endEvent id="e"/></process>
</definitions>"#;

/// A JSON POST with kermit's Basic credentials; the status.
async fn post_as_kermit(addr: std::net::SocketAddr, path: &str, body: &serde_json::Value) -> u16 {
    use base64::Engine as _;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let auth = base64::engine::general_purpose::STANDARD.encode("kermit:kermit-password");
    let body = body.to_string();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {auth}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    raw.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

async fn count(engine: &Engine, sql: &str) -> i64 {
    engine.store().sql_query(sql, &[]).await.unwrap()[0][0].as_i64().unwrap()
}

async fn user(engine: &Engine, id: &str, group: &str) {
    let identity = engine.identity();
    let user = User { id: id.into(), ..User::default() };
    identity.create_user(NewUser { user, password: Some(format!("{id}-password")) }).await.unwrap();
    if identity.group(group).await.is_err() {
        identity.create_group(Group { id: group.into(), ..Group::default() }).await.unwrap();
    }
    identity.add_member(group, id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_end_to_end_in_chromium() {
    let Some(clients) = clients_support::clients() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/k.db", dir.path().display());
    let engine = Arc::new(Engine::builder(url).node_id("console-node").build().await.unwrap());
    engine.start().await.unwrap();
    user(&engine, "kermit", "kairos-admin").await;
    user(&engine, "gonzo", "sales").await;
    user(&engine, "fozzie", "kairos-operator").await;
    let processes = engine.processes();
    processes.deploy("work.bpmn", WORK).await.unwrap();
    for i in 0..2 {
        let start = kairos::process::StartRequest {
            process_definition_key: Some("work".into()),
            business_key: Some(format!("W-{i}")),
            ..Default::default()
        };
        processes.start(start).await.unwrap();
    }
    // The failing service tasks end as dead letters (no retries).
    let dead = async {
        while count(&engine, "SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB").await < 2 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), dead).await.expect("two dead letters within 30 s");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let access = kairos_server::Access { users: true, ..Default::default() };
    let served = engine.clone();
    tokio::spawn(async move {
        kairos_server::serve_with(
            served,
            listener,
            async {
                let _ = stopped.await;
            },
            &access,
            Default::default(),
        )
        .await
    });
    let base = format!("http://{addr}");
    // A scheduler trigger to pause, made through the API as an admin would.
    let job = json!({"name": "report", "handler": "log", "durable": true});
    assert_eq!(post_as_kermit(addr, "/scheduler/jobs", &job).await, 201);
    let trigger = json!({"name": "nightly", "jobName": "report", "cron": {"expression": "0 0 2 * * ?"}});
    assert_eq!(post_as_kermit(addr, "/scheduler/triggers", &trigger).await, 201);

    let file = dir.path().join("dropped.bpmn");
    std::fs::write(&file, DROPPED).unwrap();
    let shots = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/console-screenshots");
    let ran = clients_support::node_with(
        &clients,
        "console",
        "console.mjs",
        &[&base, shots.to_str().unwrap(), file.to_str().unwrap()],
    )
    .await;
    assert!(ran.lines.iter().any(|l| l["step"] == "done"), "{}", ran.stdout);
    let ms: Vec<u64> = ran.lines.iter().filter_map(|l| l["interactiveMs"].as_u64()).collect();
    eprintln!("console: first page interactive in {ms:?} ms (login form shown)");

    // What the browser did is in the store.
    assert_eq!(count(&engine, "SELECT COUNT(*) FROM ACT_RE_PROCDEF WHERE KEY_ = 'dropped'").await, 1);
    // The dead letter moved back ran again (and, failing without retries, is a dead letter again).
    let again = async {
        while count(&engine, "SELECT COUNT(*) FROM ACT_HI_JOB_LOG").await < 3 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), again).await.expect("the moved job ran a second attempt");
    assert_eq!(
        count(
            &engine,
            "SELECT COUNT(*) FROM QRTZ_TRIGGERS WHERE TRIGGER_NAME = 'nightly' AND TRIGGER_STATE = 'PAUSED'"
        )
        .await,
        1
    );
    let open = processes.tasks(None, None, None, None).await.unwrap();
    assert_eq!(open.len(), 1, "gonzo completed one of the two reviews");
    // With the values of the task's form, typed as its fields say.
    let rows = engine
        .store()
        .sql_query(
            "SELECT NAME_, LONG_, TEXT_ FROM ACT_HI_VARINST WHERE NAME_ IN ('approved', 'amount') ORDER BY NAME_",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][1].as_i64(), Some(250), "{rows:?}");
    let _ = stop.send(());
    engine.shutdown(Duration::from_secs(5)).await;
}
