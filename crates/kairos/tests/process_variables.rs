//! Variables on both backends: every kind comes back as stored, people expressions read them,
//! input/output mappings scope them to their activity, a caught error code lands in one.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::process::StartRequest;
use kairos::store::SqlValue;
use process_support::{LEAVE, LIMIT, engine, start, trace, vars};
use serde_json::{Map, json};
use std::time::Duration;

/// An instance is loaded as JSON built by the database (rows::load): every kind of value must
/// come back as it was stored, extremes and odd text included.
async fn variables_of_every_kind_come_back_unchanged(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let given = json!({
        "applicant": "a",
        "max": i64::MAX,
        "min": i64::MIN,
        "huge": 1.5e300,
        "tenth": 0.1,
        "negative": -2.75,
        "text": "quote \" backslash \\ newline \n tab \t ü 😀 ' %s $1 ?",
        "empty": "",
        "yes": true,
        "no": false,
        "nothing": null,
        "object": {"a": [1, 2.5, "x", null], "b": {"c": true}},
    });
    let inst = p.start(start("leaveProcess", "VARS-1", given.clone())).await.unwrap();
    assert_eq!(serde_json::Value::Object(p.variables(&inst.id).await.unwrap()), given);
    // Changed through a command (load, compare, write back), then read again.
    let changed = json!({"max": -1, "text": "second ✓", "nothing": 7});
    p.set_variables(&inst.id, vars(changed.clone())).await.unwrap();
    let mut want = given.as_object().cloned().unwrap();
    want.extend(vars(changed));
    assert_eq!(p.variables(&inst.id).await.unwrap(), want);
    // The loaded instance still runs: the task's assignee came from a variable.
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.iter().map(|t| t.assignee.as_deref()).collect::<Vec<_>>(), vec![Some("a")]);
    p.complete_task(&tasks[0].id, Map::new()).await.unwrap();
    assert_eq!(trace(&engine, &inst.id).await, ["start", "fill", "approve"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

const PEOPLE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="people" isExecutable="true">
    <startEvent id="start" flowable:initiator="initiator"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" flowable:assignee="${initiator}" flowable:candidateUsers="${reviewers}" flowable:candidateGroups="${groups}"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Assignee and candidate expressions as Flowable and Camunda read them: null is nobody (the
/// initiator variable of an instance nobody known started is null), a list gives one candidate
/// per item; a list as the assignee or an undefined variable is an error that starts nothing.
async fn people_expressions_take_null_and_lists(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("people.bpmn", PEOPLE).await.unwrap();
    let inst = p.start(start("people", "P1", json!({"reviewers": ["gonzo", "piggy"], "groups": null}))).await.unwrap();
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].assignee, None, "a null ${{initiator}} leaves the task unassigned");
    assert_eq!(p.tasks(None, None, Some("piggy"), None).await.unwrap().len(), 1, "each list item is a candidate");
    let vars = p.variables(&inst.id).await.unwrap();
    assert_eq!(vars.get("initiator"), Some(&serde_json::Value::Null), "{vars:?}");

    let by_kermit = StartRequest {
        start_user: Some("kermit".into()),
        ..start("people", "P2", json!({"reviewers": "gonzo, piggy", "groups": "editors"}))
    };
    let inst = p.start(by_kermit).await.unwrap();
    let t = &p.tasks(Some(&inst.id), None, None, None).await.unwrap()[0];
    assert_eq!(t.assignee.as_deref(), Some("kermit"));
    assert_eq!(p.tasks(None, None, None, Some("editors")).await.unwrap().len(), 0, "assigned tasks are not offered");

    let before = p.instances(None, Some("people"), None).await.unwrap().len();
    let err = p
        .start(start("people", "P3", json!({"initiator": ["a", "b"], "reviewers": null, "groups": null})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gave a list; one user id or null is needed"), "{err}");
    let err = p.start(start("people", "P4", json!({"groups": null}))).await.unwrap_err();
    assert!(err.to_string().contains("undefined variable 'reviewers'"), "{err}");
    assert_eq!(p.instances(None, Some("people"), None).await.unwrap().len(), before, "nothing started");
    engine.shutdown(Duration::from_secs(5)).await;
}

const IO: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <message id="m" name="stop"/>
  <process id="io" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="greeting">Hello ${name}</camunda:inputParameter>
          <camunda:inputParameter name="limit">${total * 2}</camunda:inputParameter>
          <camunda:inputParameter name="twice">${limit + limit}</camunda:inputParameter>
          <camunda:inputParameter name="items"><camunda:list><camunda:value>${name}</camunda:value><camunda:value>fixed</camunda:value></camunda:list></camunda:inputParameter>
          <camunda:inputParameter name="cfg"><camunda:map><camunda:entry key="max">${total}</camunda:entry><camunda:entry key="none"></camunda:entry></camunda:map></camunda:inputParameter>
          <camunda:inputParameter name="nothing"></camunda:inputParameter>
          <camunda:outputParameter name="result">${greeting}</camunda:outputParameter>
          <camunda:outputParameter name="doubled">${twice}</camunda:outputParameter>
          <camunda:outputParameter name="both">${items}</camunda:outputParameter>
          <camunda:outputParameter name="settings">${cfg}</camunda:outputParameter>
          <camunda:outputParameter name="approvedCopy">${approved}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </userTask>
    <sequenceFlow id="f2" sourceRef="review" targetRef="wait"/>
    <userTask id="wait">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="scratch">temporary</camunda:inputParameter>
          <camunda:outputParameter name="leaked">${scratch}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </userTask>
    <boundaryEvent id="stopped" attachedToRef="wait"><messageEventDefinition messageRef="m"/></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="wait" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="stopped" targetRef="last"/>
    <userTask id="last"/>
    <sequenceFlow id="f5" sourceRef="last" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Camunda's input/output mappings: inputs are local to the activity while it runs (later
/// ones see earlier ones; text, expressions, lists, maps, null); outputs see them and land in
/// the enclosing scope when it completes; then the inputs are gone. An interrupted activity
/// maps no outputs and leaves no inputs behind.
async fn input_output_mappings_scope_variables_to_their_activity(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("io.bpmn", IO).await.unwrap();
    let inst = p.start(start("io", "IO1", json!({"name": "kermit", "total": 20}))).await.unwrap();
    let task = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    let names_at = |exec: String| {
        let store = engine.store().clone();
        async move {
            let rows = store
                .sql_query(
                    "SELECT NAME_ FROM ACT_RU_VARIABLE WHERE EXECUTION_ID_ = ? ORDER BY NAME_",
                    &[SqlValue::Text(exec)],
                )
                .await
                .unwrap();
            rows.iter().map(|r| r[0].as_str().unwrap().to_string()).collect::<Vec<_>>()
        }
    };
    assert_eq!(names_at(task.execution_id.clone()).await, ["cfg", "greeting", "items", "limit", "nothing", "twice"]);
    let root = p.variables(&inst.id).await.unwrap();
    assert!(!root.contains_key("greeting"), "inputs stay local: {root:?}");

    p.complete_task(&task.id, vars(json!({"approved": true}))).await.unwrap();
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("result"), Some(&json!("Hello kermit")));
    assert_eq!(root.get("doubled"), Some(&json!(80)));
    assert_eq!(root.get("both"), Some(&json!(["kermit", "fixed"])));
    assert_eq!(root.get("settings"), Some(&json!({"max": 20, "none": null})));
    assert_eq!(root.get("approvedCopy"), Some(&json!(true)));
    let wait = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    assert_eq!(names_at(wait.execution_id.clone()).await, ["scratch"], "review's inputs are gone");

    p.message("stop", Some(&inst.id), None, Map::new()).await.unwrap();
    let all = engine
        .store()
        .sql_query("SELECT NAME_ FROM ACT_RU_VARIABLE WHERE PROC_INST_ID_ = ?", &[SqlValue::Text(inst.id.clone())])
        .await
        .unwrap();
    let all: Vec<&str> = all.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(!all.contains(&"scratch") && !all.contains(&"leaked"), "interrupted: no inputs left, no outputs: {all:?}");
    assert_eq!(p.tasks(Some(&inst.id), None, None, None).await.unwrap()[0].task_definition_key, "last");
    engine.shutdown(Duration::from_secs(5)).await;
}

const IO_MI: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="ioMi" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="each"/>
    <userTask id="each">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="label">#${loopCounter}: ${item}</camunda:inputParameter>
          <camunda:outputParameter name="lastLabel">${label}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
      <multiInstanceLoopCharacteristics isSequential="true" camunda:collection="${items}" camunda:elementVariable="item"/>
    </userTask>
    <sequenceFlow id="f2" sourceRef="each" targetRef="work"/>
    <serviceTask id="work" camunda:class="log" camunda:asyncAfter="true">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="x">one</camunda:inputParameter>
          <camunda:outputParameter name="y">${x}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f3" sourceRef="work" targetRef="done"/>
    <userTask id="done"/>
    <sequenceFlow id="f4" sourceRef="done" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Input/output mappings run per multi-instance instance (seeing its loopCounter and element
/// variable), and once across an async-after job.
async fn input_output_mappings_per_instance_and_across_async_after(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("io-mi.bpmn", IO_MI).await.unwrap();
    let inst = p.start(start("ioMi", "IO2", json!({"items": ["a", "b"]}))).await.unwrap();
    for _ in 0..2 {
        let t = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
        p.complete_task(&t.id, Map::new()).await.unwrap();
    }
    wait_until(LIMIT, "the async-after job to reach the last task", || async {
        p.tasks(Some(&inst.id), None, None, None).await.unwrap().iter().any(|t| t.task_definition_key == "done")
    })
    .await;
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("lastLabel"), Some(&json!("#1: b")), "{root:?}");
    assert_eq!(root.get("y"), Some(&json!("one")), "{root:?}");
    let left = engine
        .store()
        .sql_query("SELECT NAME_ FROM ACT_RU_VARIABLE WHERE PROC_INST_ID_ = ?", &[SqlValue::Text(inst.id.clone())])
        .await
        .unwrap();
    let left: Vec<&str> = left.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(!left.contains(&"label") && !left.contains(&"x"), "inputs are gone: {left:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const CAUGHT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="caught" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge"/>
    <boundaryEvent id="anyError" attachedToRef="charge">
      <errorEventDefinition camunda:errorCodeVariable="errorCode" camunda:errorMessageVariable="errorMessage"/>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="charge" targetRef="end"/>
    <sequenceFlow id="f3" sourceRef="anyError" targetRef="decide"/>
    <exclusiveGateway id="decide"/>
    <sequenceFlow id="f4" sourceRef="decide" targetRef="retryLater"><conditionExpression>${errorCode == 'CARD_EXPIRED'}</conditionExpression></sequenceFlow>
    <sequenceFlow id="f5" sourceRef="decide" targetRef="end"><conditionExpression>${errorCode != 'CARD_EXPIRED'}</conditionExpression></sequenceFlow>
    <userTask id="retryLater"/>
    <sequenceFlow id="f6" sourceRef="retryLater" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A catch-all error boundary stores the caught code in its `camunda:errorCodeVariable` (and
/// null in its message variable), so the flow after it can tell errors apart.
async fn a_caught_error_code_is_stored_in_its_variable(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("caught.bpmn", CAUGHT).await.unwrap();
    let inst = p.start(start("caught", "E1", json!({}))).await.unwrap();
    let got = p.external_acquire("charge", kairos::SignedDuration::from_mins(1), 1, "w1").await.unwrap();
    p.external_bpmn_error(&got[0].id, "w1", "CARD_EXPIRED", Map::new()).await.unwrap();
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("errorCode"), Some(&json!("CARD_EXPIRED")), "{root:?}");
    assert_eq!(root.get("errorMessage"), Some(&json!(null)), "{root:?}");
    assert_eq!(trace(&engine, &inst.id).await, ["start", "charge", "anyError", "decide", "retryLater"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_caught_error_code_is_stored_in_its_variable,
    input_output_mappings_per_instance_and_across_async_after,
    input_output_mappings_scope_variables_to_their_activity,
    people_expressions_take_null_and_lists,
    variables_of_every_kind_come_back_unchanged,
);
