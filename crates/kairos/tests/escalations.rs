//! Escalations and BPMN errors where they cross a boundary, on both backends: thrown from a
//! user task (Camunda's `handleEscalation` / `handleBpmnError`), and raised by a called
//! instance to its call activity — at its start, or by a later command — caught there
//! interrupting (the called instance is deleted in the same commit) or not (both go on).

mod common;
mod process_support;

use common::{Backend, Fixture};
use process_support::{engine, start, trace, vars};
use serde_json::{Map, json};
use std::time::Duration;

const NS: &str = r#"xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t""#;

/// A review whose reviewer can escalate (non-interrupting: a manager is told, the review stays)
/// or reject with a BPMN error (interrupting, with errorCodeVariable / errorMessageVariable).
fn review() -> String {
    format!(
        r#"<definitions {NS}>
  <escalation id="Esc_late" escalationCode="LATE"/>
  <escalation id="Esc_stop" escalationCode="STOP"/>
  <error id="Err_reject" errorCode="REJECTED"/>
  <process id="review" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="check"/>
    <userTask id="check" camunda:assignee="kermit"/>
    <boundaryEvent id="late" attachedToRef="check" cancelActivity="false"><escalationEventDefinition escalationRef="Esc_late"/></boundaryEvent>
    <boundaryEvent id="stopped" attachedToRef="check"><escalationEventDefinition escalationRef="Esc_stop"/></boundaryEvent>
    <boundaryEvent id="rejected" attachedToRef="check">
      <errorEventDefinition errorRef="Err_reject" camunda:errorCodeVariable="code" camunda:errorMessageVariable="why"/>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="check" targetRef="done"/>
    <endEvent id="done"/>
    <sequenceFlow id="f3" sourceRef="late" targetRef="tellManager"/>
    <userTask id="tellManager"/>
    <sequenceFlow id="f4" sourceRef="tellManager" targetRef="told"/>
    <endEvent id="told"/>
    <sequenceFlow id="f5" sourceRef="stopped" targetRef="halted"/>
    <endEvent id="halted"/>
    <sequenceFlow id="f6" sourceRef="rejected" targetRef="refused"/>
    <endEvent id="refused"/>
  </process>
</definitions>"#
    )
}

/// ACT_HI_VARINST of an instance: (name, value).
async fn history_variables(p: &kairos::process::Processes, pi: &str) -> Vec<(String, serde_json::Value)> {
    let q = kairos::process::VariableQuery { process_instance_id: Some(pi.into()), ..Default::default() };
    let (rows, _) = p.historic_variables(&q, 0, 100).await.unwrap();
    rows.into_iter().map(|r| (r.variable.name, r.variable.value)).collect()
}

async fn open_task(p: &kairos::process::Processes, pi: &str, key: &str) -> String {
    let tasks = p.tasks(Some(pi), None, None, None).await.unwrap();
    tasks.into_iter().find(|t| t.task_definition_key == key).unwrap_or_else(|| panic!("no open task {key}")).id
}

async fn a_user_task_throws_escalations_and_errors_to_its_boundary_events(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("review.bpmn", &review()).await.unwrap();

    // Non-interrupting: the manager's task runs beside the review, which stays open.
    let a = p.start(start("review", "R-1", json!({}))).await.unwrap();
    let check = open_task(p, &a.id, "check").await;
    p.task_escalation(&check, "LATE", vars(json!({"daysLate": 3}))).await.unwrap();
    let mut keys: Vec<String> =
        p.tasks(Some(&a.id), None, None, None).await.unwrap().into_iter().map(|t| t.task_definition_key).collect();
    keys.sort();
    assert_eq!(keys, ["check", "tellManager"]);
    assert_eq!(p.variables(&a.id).await.unwrap()["daysLate"], json!(3));
    p.complete_task(&open_task(p, &a.id, "tellManager").await, Map::new()).await.unwrap();
    p.complete_task(&check, Map::new()).await.unwrap();
    assert!(p.instance(&a.id).await.unwrap().ended);
    assert_eq!(trace(&engine, &a.id).await, ["start", "check", "late", "tellManager", "told", "done"]);

    // Interrupting: the task is cancelled and the instance leaves by the boundary event.
    let b = p.start(start("review", "R-2", json!({}))).await.unwrap();
    let check = open_task(p, &b.id, "check").await;
    p.task_escalation(&check, "STOP", Map::new()).await.unwrap();
    assert!(p.instance(&b.id).await.unwrap().ended);
    assert_eq!(trace(&engine, &b.id).await, ["start", "check", "stopped", "halted"]);
    let cancelled = p.activity_history(&b.id).await.unwrap().into_iter().find(|a| a.activity_id == "check").unwrap();
    assert!(cancelled.end_time.is_some(), "the cancelled task's history row is closed");

    // Nothing catches it: a clear error naming the code and the task, and nothing changes.
    let c = p.start(start("review", "R-3", json!({}))).await.unwrap();
    let check = open_task(p, &c.id, "check").await;
    let err = p.task_escalation(&check, "NOBODY", vars(json!({"x": 1}))).await.unwrap_err().to_string();
    assert!(err.contains("'NOBODY'") && err.contains("check") && err.contains("not caught"), "{err}");
    assert!(!p.variables(&c.id).await.unwrap().contains_key("x"), "the variables went with the failed command");
    assert_eq!(open_task(p, &c.id, "check").await, check);
    let err = p.task_escalation(&check, " ", Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("empty"), "{err}");

    // A BPMN error from the task: its code and message land in the catching event's variables.
    p.task_bpmn_error(&check, "REJECTED", Some("budget gone"), Map::new()).await.unwrap();
    assert!(p.instance(&c.id).await.unwrap().ended);
    assert_eq!(trace(&engine, &c.id).await, ["start", "check", "rejected", "refused"]);
    let hist = history_variables(p, &c.id).await;
    let value = |n: &str| hist.iter().find(|v| v.0 == n).map(|v| v.1.clone());
    assert_eq!(value("code"), Some(json!("REJECTED")));
    assert_eq!(value("why"), Some(json!("budget gone")));

    let d = p.start(start("review", "R-4", json!({}))).await.unwrap();
    let check = open_task(p, &d.id, "check").await;
    let err = p.task_bpmn_error(&check, "OTHER", None, Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("'OTHER'") && err.contains("not caught"), "{err}");
    assert_eq!(open_task(p, &d.id, "check").await, check, "an uncaught error changes nothing");
    let err = p.task_escalation("no-such-task", "LATE", Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("no-such-task"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A caller whose call activity catches what the called `supply` raises: a non-interrupting
/// escalation (LOW_STOCK, thrown at the called instance's start), an interrupting one
/// (GIVE_UP, an escalation end after its task) and an error (NO_SUPPLIER, an error end).
fn supply_chain() -> String {
    format!(
        r#"<definitions {NS}>
  <escalation id="Esc_low" escalationCode="LOW_STOCK"/>
  <escalation id="Esc_give_up" escalationCode="GIVE_UP"/>
  <error id="Err_none" errorCode="NO_SUPPLIER"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="callSupply"/>
    <callActivity id="callSupply" calledElement="supply">
      <extensionElements><camunda:in source="path" target="path"/><camunda:out source="supplied" target="supplied"/></extensionElements>
    </callActivity>
    <boundaryEvent id="lowStock" attachedToRef="callSupply" cancelActivity="false"><escalationEventDefinition escalationRef="Esc_low"/></boundaryEvent>
    <boundaryEvent id="gaveUp" attachedToRef="callSupply"><escalationEventDefinition escalationRef="Esc_give_up"/></boundaryEvent>
    <boundaryEvent id="noSupplier" attachedToRef="callSupply">
      <errorEventDefinition errorRef="Err_none" camunda:errorCodeVariable="failure"/>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="callSupply" targetRef="end"/>
    <endEvent id="end"/>
    <sequenceFlow id="f3" sourceRef="lowStock" targetRef="reorder"/>
    <userTask id="reorder"/>
    <sequenceFlow id="f4" sourceRef="reorder" targetRef="reordered"/>
    <endEvent id="reordered"/>
    <sequenceFlow id="f5" sourceRef="gaveUp" targetRef="cancelOrder"/>
    <endEvent id="cancelOrder"/>
    <sequenceFlow id="f6" sourceRef="noSupplier" targetRef="apologise"/>
    <endEvent id="apologise"/>
  </process>
  <process id="supply" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="g1" sourceRef="s" targetRef="warn"/>
    <intermediateThrowEvent id="warn"><escalationEventDefinition escalationRef="Esc_low"/></intermediateThrowEvent>
    <sequenceFlow id="g2" sourceRef="warn" targetRef="route"/>
    <exclusiveGateway id="route"/>
    <sequenceFlow id="g3" sourceRef="route" targetRef="source"><conditionExpression>${{path == 'normal' || path == 'giveUp'}}</conditionExpression></sequenceFlow>
    <sequenceFlow id="g4" sourceRef="route" targetRef="failNow"><conditionExpression>${{path == 'failNow'}}</conditionExpression></sequenceFlow>
    <userTask id="source"/>
    <sequenceFlow id="g5" sourceRef="source" targetRef="how"/>
    <exclusiveGateway id="how"/>
    <sequenceFlow id="g6" sourceRef="how" targetRef="e"><conditionExpression>${{path == 'normal' &amp;&amp; !failLater}}</conditionExpression></sequenceFlow>
    <sequenceFlow id="g7" sourceRef="how" targetRef="giveUp"><conditionExpression>${{path == 'giveUp'}}</conditionExpression></sequenceFlow>
    <sequenceFlow id="g8" sourceRef="how" targetRef="failLate"><conditionExpression>${{path == 'normal' &amp;&amp; failLater}}</conditionExpression></sequenceFlow>
    <endEvent id="e"/>
    <endEvent id="giveUp"><escalationEventDefinition escalationRef="Esc_give_up"/></endEvent>
    <endEvent id="failNow"><errorEventDefinition errorRef="Err_none"/></endEvent>
    <endEvent id="failLate"><errorEventDefinition errorRef="Err_none"/></endEvent>
  </process>
</definitions>"#
    )
}

async fn called_instances_raise_escalations_and_errors_to_their_call_activity(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("supply.bpmn", &supply_chain()).await.unwrap();
    let called = |pi: String| async move {
        let subs = p.instances(None, Some("supply"), None).await.unwrap();
        subs.into_iter().filter(|s| s.super_process_instance_id.as_deref() == Some(pi.as_str())).collect::<Vec<_>>()
    };

    // LOW_STOCK at the called instance's start: caught beside the call, which goes on.
    let a = p.start(start("order", "O-1", json!({"path": "normal"}))).await.unwrap();
    let sub = called(a.id.clone()).await.remove(0);
    assert!(!sub.ended);
    p.complete_task(&open_task(p, &a.id, "reorder").await, Map::new()).await.unwrap();
    p.complete_task(&open_task(p, &sub.id, "source").await, vars(json!({"supplied": 5, "failLater": false})))
        .await
        .unwrap();
    assert!(p.instance(&a.id).await.unwrap().ended, "the called instance's end moved the caller on");
    assert!(history_variables(p, &a.id).await.iter().any(|v| v.0 == "supplied" && v.1 == json!(5)), "out mapping");
    assert_eq!(trace(&engine, &a.id).await, ["start", "callSupply", "lowStock", "reorder", "reordered", "end"]);
    assert_eq!(trace(&engine, &sub.id).await, ["s", "warn", "route", "source", "how", "e"]);

    // GIVE_UP, an escalation end after the task: the call activity is interrupted and the
    // called instance deleted, in the same commit as the task's completion.
    let b = p.start(start("order", "O-2", json!({"path": "giveUp"}))).await.unwrap();
    let sub = called(b.id.clone()).await.remove(0);
    p.complete_task(&open_task(p, &sub.id, "source").await, Map::new()).await.unwrap();
    let sub = p.instance(&sub.id).await.unwrap();
    assert!(sub.ended);
    assert!(sub.delete_reason.as_deref().unwrap_or_default().contains("callSupply"), "{:?}", sub.delete_reason);
    let tasks: Vec<String> =
        p.tasks(Some(&b.id), None, None, None).await.unwrap().into_iter().map(|t| t.task_definition_key).collect();
    assert_eq!(tasks, ["reorder"], "the non-interrupting catch at the start still holds its task");
    p.complete_task(&open_task(p, &b.id, "reorder").await, Map::new()).await.unwrap();
    assert!(p.instance(&b.id).await.unwrap().ended);
    assert_eq!(
        trace(&engine, &b.id).await,
        ["start", "callSupply", "lowStock", "reorder", "gaveUp", "cancelOrder", "reordered"]
    );

    // NO_SUPPLIER at once (the error end is reached in the called instance's start): the
    // caller catches it, and the called instance is stored already deleted.
    let c = p.start(start("order", "O-3", json!({"path": "failNow"}))).await.unwrap();
    let sub = called(c.id.clone()).await.remove(0);
    assert!(sub.ended && sub.delete_reason.is_some(), "{sub:?}");
    let hist = history_variables(p, &c.id).await;
    assert!(hist.iter().any(|v| v.0 == "failure" && v.1 == json!("NO_SUPPLIER")), "{hist:?}");
    assert_eq!(trace(&engine, &c.id).await, ["start", "callSupply", "lowStock", "noSupplier", "reorder", "apologise"]);

    // NO_SUPPLIER later, from a task's completion in the called instance.
    let d = p.start(start("order", "O-4", json!({"path": "normal"}))).await.unwrap();
    let sub = called(d.id.clone()).await.remove(0);
    p.complete_task(&open_task(p, &sub.id, "source").await, vars(json!({"failLater": true}))).await.unwrap();
    assert!(p.instance(&sub.id).await.unwrap().delete_reason.is_some());
    let tasks: Vec<String> =
        p.tasks(Some(&d.id), None, None, None).await.unwrap().into_iter().map(|t| t.task_definition_key).collect();
    assert_eq!(tasks, ["reorder"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// An error out of a called instance that its caller does not catch fails the command that
/// raised it and changes nothing; an escalation nobody catches is no failure.
async fn an_uncaught_error_from_a_called_instance_changes_nothing(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let xml = format!(
        r#"<definitions {NS}>
  <process id="outer" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="call"/>
    <callActivity id="call" calledElement="inner"/>
    <sequenceFlow id="f2" sourceRef="call" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="inner" isExecutable="true">
    <startEvent id="is"/>
    <sequenceFlow id="g1" sourceRef="is" targetRef="shout"/>
    <intermediateThrowEvent id="shout"><escalationEventDefinition/></intermediateThrowEvent>
    <sequenceFlow id="g2" sourceRef="shout" targetRef="work"/>
    <userTask id="work"/>
    <sequenceFlow id="g3" sourceRef="work" targetRef="boom"/>
    <endEvent id="boom"><errorEventDefinition errorRef="BOOM"/></endEvent>
  </process>
</definitions>"#
    );
    p.deploy("outer.bpmn", &xml).await.unwrap();
    let outer = p.start(start("outer", "X-1", json!({}))).await.unwrap();
    let inner = p.instances(None, Some("inner"), Some(false)).await.unwrap().remove(0);
    let work = open_task(p, &inner.id, "work").await;
    let err = p.complete_task(&work, Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("'BOOM'") && err.contains("not caught"), "{err}");
    assert_eq!(open_task(p, &inner.id, "work").await, work, "the task is still open");
    assert!(!p.instance(&outer.id).await.unwrap().ended);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_user_task_throws_escalations_and_errors_to_its_boundary_events,
    called_instances_raise_escalations_and_errors_to_their_call_activity,
    an_uncaught_error_from_a_called_instance_changes_nothing,
);
