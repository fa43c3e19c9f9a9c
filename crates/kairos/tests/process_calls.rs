//! Call activities on both backends: the called instance is linked through SUPER_EXEC_ (seed
//! 003's call chain), and an interrupted call activity takes what it called with it.

mod common;
mod process_support;

use common::{Backend, Fixture};
use kairos::store::SqlValue;
use process_support::{engine, start, trace, vars};
use serde_json::{Map, json};
use std::time::Duration;

const CALLER: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="purchase" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="callExec"/>
    <callActivity id="callExec" calledElement="execution">
      <extensionElements>
        <camunda:in businessKey="${execution.processBusinessKey}"/>
        <camunda:in source="amount" target="amount"/>
        <camunda:out source="orderNo" target="orderNo"/>
      </extensionElements>
    </callActivity>
    <sequenceFlow id="f2" sourceRef="callExec" targetRef="end"/>
    <endEvent id="end"/>
  </process>
  <process id="execution" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="g1" sourceRef="s" targetRef="place"/>
    <userTask id="place"/>
    <sequenceFlow id="g2" sourceRef="place" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;

/// Seed 003 §3.3, verbatim (the sub-process root id bound for its placeholder).
const SEED_003_CALL_CHAIN: &str = "SELECT e.PROC_INST_ID_ AS sub_process_id, pe.ID_ AS caller_execution_id, pe.PROC_INST_ID_ AS parent_process_id FROM ACT_RU_EXECUTION e LEFT JOIN ACT_RU_EXECUTION pe ON pe.ID_ = e.SUPER_EXEC_ID_ WHERE e.ID_ = ?;";

async fn a_call_activity_links_the_called_instance_through_super_exec(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("purchase.bpmn", CALLER).await.unwrap();
    let parent = p.start(start("purchase", "PO-7", json!({"amount": 12}))).await.unwrap();
    let subs = p.instances(None, Some("execution"), Some(false)).await.unwrap();
    assert_eq!(subs.len(), 1);
    let sub = &subs[0];
    assert_eq!(sub.business_key.as_deref(), Some("PO-7"), "business key passed in");
    assert_eq!(sub.super_process_instance_id.as_deref(), Some(parent.id.as_str()));
    assert_eq!(p.variables(&sub.id).await.unwrap()["amount"], json!(12), "in mapping");
    let chain = engine.store().sql_query(SEED_003_CALL_CHAIN, &[SqlValue::Text(sub.id.clone())]).await.unwrap();
    assert_eq!(chain.len(), 1);
    assert_eq!(chain[0][0].as_str(), Some(sub.id.as_str()));
    let caller_exec = chain[0][1].as_str().unwrap().to_string();
    assert_eq!(chain[0][2].as_str(), Some(parent.id.as_str()));
    let parent_execs = p.executions(&parent.id).await.unwrap();
    assert!(parent_execs.iter().any(|e| e.id == caller_exec && e.activity_id.as_deref() == Some("callExec")));
    // The called instance ends: the caller goes on, with the out mapping, in the same commit.
    let task = p.tasks(Some(&sub.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&task.id, vars(json!({"orderNo": "X-1"}))).await.unwrap();
    assert!(p.instance(&sub.id).await.unwrap().ended);
    let parent_now = p.instance(&parent.id).await.unwrap();
    assert!(parent_now.ended, "the caller continued to its end");
    assert_eq!(trace(&engine, &parent.id).await, ["start", "callExec", "end"]);
    // Deleting a caller deletes what it called (P10).
    let parent2 = p.start(start("purchase", "PO-8", json!({"amount": 1}))).await.unwrap();
    p.delete_instance(&parent2.id, "order withdrawn").await.unwrap();
    let running = p.instances(None, None, Some(false)).await.unwrap();
    assert!(running.is_empty(), "{running:?}");
    let hist = p.instances(Some("PO-8"), Some("execution"), None).await.unwrap();
    assert_eq!(hist[0].delete_reason.as_deref(), Some("order withdrawn"));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A call activity with an interrupting message boundary event, calling a process that itself
/// calls another.
const CALLER_INTERRUPTED: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="cancelMsg" name="cancel"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="callFulfil"/>
    <callActivity id="callFulfil" calledElement="fulfil"/>
    <sequenceFlow id="f2" sourceRef="callFulfil" targetRef="done"/>
    <endEvent id="done"/>
    <boundaryEvent id="cancelled" attachedToRef="callFulfil"><messageEventDefinition messageRef="cancelMsg"/></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="cancelled" targetRef="refund"/>
    <userTask id="refund"/>
    <sequenceFlow id="f4" sourceRef="refund" targetRef="undone"/>
    <endEvent id="undone"/>
  </process>
  <message id="retryMsg" name="retry"/>
  <process id="retrying" isExecutable="true">
    <startEvent id="rs"/>
    <sequenceFlow id="r1" sourceRef="rs" targetRef="callAgain"/>
    <callActivity id="callAgain" calledElement="pack"/>
    <sequenceFlow id="r2" sourceRef="callAgain" targetRef="re"/>
    <endEvent id="re"/>
    <boundaryEvent id="again" attachedToRef="callAgain"><messageEventDefinition messageRef="retryMsg"/></boundaryEvent>
    <sequenceFlow id="r3" sourceRef="again" targetRef="callAgain"/>
  </process>
  <process id="fulfil" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="g1" sourceRef="s" targetRef="callPack"/>
    <callActivity id="callPack" calledElement="pack"/>
    <sequenceFlow id="g2" sourceRef="callPack" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="pack" isExecutable="true">
    <startEvent id="ps"/>
    <sequenceFlow id="h1" sourceRef="ps" targetRef="box"/>
    <userTask id="box"/>
    <sequenceFlow id="h2" sourceRef="box" targetRef="pe"/>
    <endEvent id="pe"/>
  </process>
</definitions>"#;

/// An interrupted call activity takes what it called with it (Flowable deletes the called
/// instance): nothing is left running that would later try to continue a caller that moved on.
async fn an_interrupted_call_activity_deletes_the_instances_it_called(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("order.bpmn", CALLER_INTERRUPTED).await.unwrap();
    let order = p.start(start("order", "O-1", json!({}))).await.unwrap();
    let running = p.instances(None, None, Some(false)).await.unwrap();
    assert_eq!(running.len(), 3, "order → fulfil → pack: {running:?}");
    p.message("cancel", Some(&order.id), None, Map::new()).await.unwrap();
    let running: Vec<String> =
        p.instances(None, None, Some(false)).await.unwrap().into_iter().map(|i| i.process_definition_key).collect();
    assert_eq!(running, ["order"], "the called instances went with the call activity");
    for key in ["fulfil", "pack"] {
        let hist = p.instances(None, Some(key), None).await.unwrap();
        assert_eq!(hist.len(), 1, "{key}: {hist:?}");
        assert!(hist[0].ended, "{key} ended");
        let reason = hist[0].delete_reason.clone().unwrap_or_default();
        assert!(reason.contains("callFulfil"), "{key}: {reason}");
    }
    assert!(p.tasks(None, None, None, None).await.unwrap().iter().all(|t| t.task_definition_key == "refund"));
    let refund = p.tasks(Some(&order.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&refund.id, Map::new()).await.unwrap();
    assert!(p.instance(&order.id).await.unwrap().ended);
    assert_eq!(trace(&engine, &order.id).await, ["start", "callFulfil", "cancelled", "refund", "undone"]);

    // Interrupted and called again at once (the same execution): the first call goes, the
    // second one's end moves the caller on.
    let retrying = p.start(start("retrying", "R-1", json!({}))).await.unwrap();
    let packs = || async { p.instances(None, Some("pack"), Some(false)).await.unwrap() };
    let first = packs().await;
    assert_eq!(first.len(), 1, "{first:?}");
    p.message("retry", Some(&retrying.id), None, Map::new()).await.unwrap();
    let second = packs().await;
    assert_eq!(second.len(), 1, "the first call went, a second one runs: {second:?}");
    assert_ne!(second[0].id, first[0].id);
    let box_task = p.tasks(Some(&second[0].id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&box_task.id, Map::new()).await.unwrap();
    assert!(p.instance(&retrying.id).await.unwrap().ended, "the caller moved on");
    assert_eq!(trace(&engine, &retrying.id).await, ["rs", "callAgain", "again", "callAgain", "re"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    an_interrupted_call_activity_deletes_the_instances_it_called,
    a_call_activity_links_the_called_instance_through_super_exec,
);
