//! Models as real modelers write them, on both backends: a `timeDuration` of `PT0S` (due at
//! once), conditional events on variables that do not exist yet, and expression service tasks
//! (`flowable:expression`, `camunda:expression`, `activiti:expression`).

mod common;

use common::{Backend, Fixture, wait_until};
use kairos::Engine;
use kairos::process::StartRequest;
use serde_json::{Map, json};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn start(key: &str, v: serde_json::Value) -> StartRequest {
    StartRequest {
        process_definition_key: Some(key.into()),
        variables: v.as_object().cloned().unwrap_or_default(),
        ..Default::default()
    }
}

async fn engine(fx: &Fixture) -> Engine {
    let e = fx.engine("n1").build().await.unwrap();
    e.start().await.unwrap();
    e
}

async fn task_keys(engine: &Engine, pi: &str) -> Vec<String> {
    let tasks = engine.processes().tasks(Some(pi), None, None, None).await.unwrap();
    let mut keys: Vec<String> = tasks.into_iter().map(|t| t.task_definition_key).collect();
    keys.sort();
    keys
}

const ZERO_TIMERS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="zeroTimers" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="now"/>
    <intermediateCatchEvent id="now"><timerEventDefinition><timeDuration>PT0S</timeDuration></timerEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="now" targetRef="work"/>
    <userTask id="work"/>
    <boundaryEvent id="late" attachedToRef="work"><timerEventDefinition><timeDuration>${wait}</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="work" targetRef="end"/>
    <endEvent id="end"/>
    <sequenceFlow id="f4" sourceRef="late" targetRef="escalated"/>
    <userTask id="escalated"/>
    <sequenceFlow id="f5" sourceRef="escalated" targetRef="end2"/>
    <endEvent id="end2"/>
  </process>
</definitions>"#;

/// `PT0S` is valid ISO 8601 and means "now": a catch event's timer and a boundary timer (here
/// from an expression) are due at once and fired by the executor.
async fn a_zero_time_duration_fires_at_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("zero.bpmn", ZERO_TIMERS).await.unwrap();
    let pi = p.start(start("zeroTimers", json!({"wait": "PT0S"}))).await.unwrap().id;
    wait_until(LIMIT, "both zero timers fired", || {
        let (engine, pi) = (&engine, pi.clone());
        async move { task_keys(engine, &pi).await == ["escalated"] }
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}

const EXPRESSIONS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="expressions" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="yes"/>
    <serviceTask id="yes" flowable:expression="${true}" flowable:resultVariable="ok"/>
    <sequenceFlow id="f2" sourceRef="yes" targetRef="double"/>
    <serviceTask id="double" camunda:expression="${amount * 2}" camunda:resultVariable="doubled"/>
    <sequenceFlow id="f3" sourceRef="double" targetRef="plain"/>
    <serviceTask id="plain" activiti:expression="${doubled > 40}"/>
    <sequenceFlow id="f4" sourceRef="plain" targetRef="wait"/>
    <userTask id="wait"/>
    <sequenceFlow id="f5" sourceRef="wait" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// `flowable:expression="${true}"` (and camunda:, activiti:) is an expression service task:
/// evaluated, its value stored in `resultVariable` when one is named, and the token goes on.
/// A bean method call, which kairos cannot evaluate, is refused at deployment naming the
/// element; an expression failing at run time fails the command naming it too.
async fn expression_service_tasks_evaluate_and_store_their_result(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("expressions.bpmn", EXPRESSIONS).await.unwrap();
    let pi = p.start(start("expressions", json!({"amount": 21}))).await.unwrap().id;
    assert_eq!(task_keys(&engine, &pi).await, ["wait"]);
    let v = p.variables(&pi).await.unwrap();
    assert_eq!((v.get("ok"), v.get("doubled")), (Some(&json!(true)), Some(&json!(42))), "{v:?}");
    assert_eq!(v.len(), 3, "no result variable for 'plain': {v:?}");

    let err = p.start(start("expressions", json!({}))).await.unwrap_err().to_string();
    assert!(err.contains("double") && err.contains("amount"), "{err}");

    let bean = EXPRESSIONS.replace("${amount * 2}", "${myBean.doIt()}").replace("\"expressions\"", "\"beans\"");
    let err = p.deploy("beans.bpmn", &bean).await.unwrap_err().to_string();
    assert!(err.contains("'double'") && err.contains("doIt"), "{err}");
    assert!(p.definitions_list(Some("beans"), false).await.unwrap().is_empty(), "nothing deployed");
    engine.shutdown(Duration::from_secs(5)).await;
}

const ORDERS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="orders" isExecutable="true">
    <startEvent id="every"><timerEventDefinition><timeDuration>PT0S</timeDuration></timerEventDefinition></startEvent>
    <sequenceFlow id="f1" sourceRef="every" targetRef="waitPaid"/>
    <intermediateCatchEvent id="waitPaid"><conditionalEventDefinition><condition>${paid}</condition></conditionalEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="waitPaid" targetRef="ship"/>
    <userTask id="ship"/>
    <sequenceFlow id="f3" sourceRef="ship" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// camunda-bpm-examples' order handling: a timer start leads to a conditional catch on a
/// variable that does not exist yet. As in Camunda, the condition is false until the variable
/// appears: the started instance waits (the timer start no longer fails and dead-letters),
/// and setting the variable fires it.
async fn a_conditional_event_waits_for_a_variable_that_does_not_exist_yet(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("orders.bpmn", ORDERS).await.unwrap();
    wait_until(LIMIT, "the timer start started an instance", || async {
        !p.instances(None, Some("orders"), None).await.unwrap().is_empty()
    })
    .await;
    let pi = p.instances(None, Some("orders"), None).await.unwrap().remove(0).id;
    let dead = engine.store().sql_query("SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB", &[]).await.unwrap();
    assert_eq!(dead[0][0].as_i64(), Some(0));
    assert!(task_keys(&engine, &pi).await.is_empty(), "waiting for 'paid'");
    p.set_variables(&pi, vars(json!({"paid": true}))).await.unwrap();
    assert_eq!(task_keys(&engine, &pi).await, ["ship"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_zero_time_duration_fires_at_once,
    expression_service_tasks_evaluate_and_store_their_result,
    a_conditional_event_waits_for_a_variable_that_does_not_exist_yet,
);

fn vars(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}
