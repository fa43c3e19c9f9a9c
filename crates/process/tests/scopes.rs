//! Scopes in the pure runtime: embedded sub-processes, event sub-processes (interrupting and
//! not) and input/output mappings local to an activity.

mod support;

use serde_json::json;
use support::Driver;

#[test]
fn an_embedded_sub_process_is_a_scope_execution_holding_its_tokens() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="sub"/>
    <subProcess id="sub">
      <startEvent id="subStart"/>
      <sequenceFlow id="sf1" sourceRef="subStart" targetRef="work"/>
      <userTask id="work"/>
      <sequenceFlow id="sf2" sourceRef="work" targetRef="subEnd"/>
      <endEvent id="subEnd"/>
    </subProcess>
    <sequenceFlow id="f1" sourceRef="sub" targetRef="after"/>
    <userTask id="after"/>"#,
    );
    d.start(json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  sub scope inactive\n    work");
    assert_eq!(d.inserted_executions(), ["-", "sub", "work"]);
    d.complete("work", json!({"done": true}));
    // The scope execution becomes a plain token again and moves on.
    assert_eq!(d.tree(), "- scope inactive\n  after");
    assert_eq!(d.var("done"), Some(&json!(true)), "a variable set in the sub-process lands on the instance");
    assert_eq!(d.last.changes.executions_deleted.len(), 1);
    assert_eq!(d.trace(), ["start", "sub", "subStart", "work", "subEnd", "after"]);
    assert_eq!(d.ends_of("sub"), [None]);
}

const WITH_EVENT_SUB_PROCESS: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <sequenceFlow id="f1" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
    <subProcess id="esp" triggeredByEvent="true">
      START
      <sequenceFlow id="sf1" sourceRef="espStart" targetRef="handle"/>
      <userTask id="handle"/>
      <sequenceFlow id="sf2" sourceRef="handle" targetRef="espEnd"/>
      <endEvent id="espEnd"/>
    </subProcess>"#;

#[test]
fn an_interrupting_event_sub_process_ends_what_its_scope_does() {
    let mut d = Driver::of(
        &WITH_EVENT_SUB_PROCESS
            .replace("START", r#"<startEvent id="espStart"><messageEventDefinition messageRef="m2"/></startEvent>"#),
    );
    d.start(json!({}));
    assert_eq!(d.subscriptions(), ["message:stop@espStart"]);
    assert_eq!(d.inst.subscriptions[0].execution_id, d.inst.id, "the root scope listens");

    d.message("stop");
    assert_eq!(d.tasks(), ["handle"]);
    assert_eq!(d.ends_of("task"), [Some("interrupted by event sub-process esp".to_string())]);
    assert_eq!(d.tree(), "- scope inactive\n  esp scope inactive\n    handle");
    assert!(d.subscriptions().is_empty(), "the scope's event sub-processes stop listening");

    d.complete("handle", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "task", "espStart", "handle", "espEnd"]);
}

#[test]
fn a_non_interrupting_event_sub_process_runs_beside_its_scope() {
    let mut d = Driver::of(&WITH_EVENT_SUB_PROCESS.replace(
        "START",
        r#"<startEvent id="espStart" isInterrupting="false"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></startEvent>"#,
    ));
    d.start(json!({}));
    assert_eq!(d.jobs(), ["trigger-timer@espStart due 2026-01-05T10:00:00Z"]);
    d.fire_timer("espStart");
    assert_eq!(d.tasks(), ["task", "handle"]);
    assert_eq!(d.tree(), "- scope inactive\n  task concurrent\n  esp scope concurrent inactive\n    handle");
    assert!(d.jobs().is_empty(), "a duration timer fires once");
    d.complete("handle", json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  task");
    d.complete("task", json!({}));
    assert!(d.ended());
}

#[test]
fn input_mappings_are_local_to_the_activity_and_outputs_land_outside() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="task"/>
    <userTask id="task"><extensionElements><camunda:inputOutput>
      <camunda:inputParameter name="x">${a + 1}</camunda:inputParameter>
      <camunda:inputParameter name="label">fixed</camunda:inputParameter>
      <camunda:outputParameter name="y">${x * 2}</camunda:outputParameter>
    </camunda:inputOutput></extensionElements></userTask>
    <sequenceFlow id="f1" sourceRef="task" targetRef="after"/>
    <userTask id="after"/>"#,
    );
    d.start(json!({"a": 1}));
    assert_eq!(d.locals_at("task"), [support::vars(json!({"x": 2, "label": "fixed"}))]);
    assert_eq!(d.var("x"), None);
    d.complete("task", json!({}));
    assert_eq!(d.var("y"), Some(&json!(4)));
    assert!(d.inst.variables.iter().all(|v| v.name != "x" && v.name != "label"), "the inputs go with the activity");
    let logged: Vec<&str> = d.last.variable_log.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(logged, ["y"]);
}
