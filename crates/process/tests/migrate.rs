//! The migration check (SPEC P13) on instances run in the pure runtime: each rule refuses a
//! move that would leave the instance stuck or wrong, naming the activity.

use jiff::Timestamp;
use kairos_bpmn::Definitions;
use kairos_process::migrate::plan;
use kairos_process::*;
use serde_json::Map;

fn model(body: &str) -> Definitions {
    let xml = format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <message id="m" name="go"/>
  <process id="p">
    <startEvent id="start"/>
    {body}
  </process>
</definitions>"#
    );
    kairos_bpmn::parse(&xml).unwrap_or_else(|e| panic!("{e}"))
}

/// An instance of `defs` started with `vars` and run until it waits.
fn started(defs: &Definitions, vars: serde_json::Value) -> Instance {
    let mut n = 0u64;
    let mut ids = move || {
        n += 1;
        format!("id-{n:04}")
    };
    let now: Timestamp = "2026-01-05T09:00:00Z".parse().unwrap();
    let process = &defs.processes[0];
    let mut env = Env { definitions: defs, process, now, ids: &mut ids };
    let inst = Runtime::new_instance(&mut env, "def-1", None);
    let mut rt = Runtime::new(env, inst);
    let variables: Map<String, serde_json::Value> = vars.as_object().cloned().unwrap_or_default();
    let step = rt.apply(Command::Start { variables, start_user: None, start_event: None }).unwrap();
    assert!(matches!(step, Step::Done), "the instance waits");
    rt.into_instance()
}

fn refusal(source: &Definitions, target: &Definitions, inst: &Instance, mappings: &[(&str, &str)]) -> String {
    let mappings: Vec<(String, String)> = mappings.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    let err = plan(inst, &source.processes[0], &target.processes[0], &mappings).expect_err("refused");
    assert_eq!(err.kind, ErrorKind::Invalid, "{err}");
    err.to_string()
}

const MI: &str = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="each"/>
    <userTask id="each"><multiInstanceLoopCharacteristics isSequential="SEQ" camunda:collection="${items}"/></userTask>
    <sequenceFlow id="f2" sourceRef="each" targetRef="end"/><endEvent id="end"/>"#;

#[test]
fn a_multi_instance_loop_keeps_its_kind() {
    let sequential = model(&MI.replace("SEQ", "true"));
    let inst = started(&sequential, serde_json::json!({"items": [1, 2, 3]}));
    let parallel = model(&MI.replace("SEQ", "false"));
    let why = refusal(&sequential, &parallel, &inst, &[]);
    assert!(why.contains("activity 'each'") && why.contains("multi-instance loops differ"), "{why}");
    let same = plan(&inst, &sequential.processes[0], &sequential.processes[0], &[]).unwrap();
    assert_eq!(same.target_of("each"), "each");
}

const JOIN: &str = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="a" sourceRef="fork" targetRef="join"/>
    <sequenceFlow id="b" sourceRef="fork" targetRef="task"/>
    <userTask id="task"/>
    <sequenceFlow id="c" sourceRef="task" targetRef="join"/>
    EXTRA
    <parallelGateway id="join"/>
    <sequenceFlow id="d" sourceRef="join" targetRef="end"/><endEvent id="end"/>"#;

#[test]
fn a_waiting_join_needs_as_many_incoming_flows() {
    let source = model(&JOIN.replace("EXTRA", ""));
    let inst = started(&source, serde_json::json!({}));
    let three = model(&JOIN.replace(
        "EXTRA",
        r#"<sequenceFlow id="e" sourceRef="fork" targetRef="other"/><userTask id="other"/><sequenceFlow id="g" sourceRef="other" targetRef="join"/>"#,
    ));
    let why = refusal(&source, &three, &inst, &[]);
    assert!(why.contains("tokens wait at join 'join' (2 incoming flows) but 'join' has 3"), "{why}");
    let inclusive =
        model(&JOIN.replace("EXTRA", "").replace("parallelGateway id=\"join\"", "inclusiveGateway id=\"join\""));
    let inst = started(&inclusive, serde_json::json!({}));
    let why = refusal(&inclusive, &inclusive, &inst, &[]);
    assert!(why.contains("inclusive join 'join'"), "{why}");
}

#[test]
fn a_complex_gateway_absorbing_late_tokens_is_not_migrated() {
    let body = JOIN.replace("EXTRA", "").replace(
        r#"<parallelGateway id="join"/>"#,
        r#"<complexGateway id="join"><activationCondition>${activationCount >= 1}</activationCondition></complexGateway>"#,
    );
    let source = model(&body);
    let inst = started(&source, serde_json::json!({}));
    assert!(inst.executions.iter().any(|e| e.is_event_scope), "the gateway fired and waits for the task's token");
    let why = refusal(&source, &source, &inst, &[]);
    assert!(why.contains("complex gateway 'join' fired and still absorbs tokens"), "{why}");
}

#[test]
fn a_catch_event_moves_only_to_one_that_can_be_armed() {
    let body = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <intermediateCatchEvent id="wait"><messageEventDefinition messageRef="m"/></intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="end"/><endEvent id="end"/>
    <intermediateCatchEvent id="linked"><linkEventDefinition name="L"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="linked" targetRef="end"/>"#;
    let defs = model(body);
    let inst = started(&defs, serde_json::json!({}));
    let why = refusal(&defs, &defs, &inst, &[("wait", "linked")]);
    assert!(why.contains("waits for nothing it can be armed with"), "{why}");
}

#[test]
fn input_output_mappings_must_match() {
    let body = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <userTask id="task"><extensionElements><camunda:inputOutput><camunda:inputParameter name="x">X</camunda:inputParameter></camunda:inputOutput></extensionElements></userTask>
    <sequenceFlow id="f2" sourceRef="task" targetRef="end"/><endEvent id="end"/>"#;
    let source = model(body);
    let inst = started(&source, serde_json::json!({}));
    let target = model(&body.replace(">X<", ">Y<"));
    let why = refusal(&source, &target, &inst, &[]);
    assert!(why.contains("input/output mappings differ"), "{why}");
}

#[test]
fn a_mapping_names_activities_of_both_models() {
    let body = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="task"/><userTask id="task"/>
    <sequenceFlow id="f2" sourceRef="task" targetRef="end"/><endEvent id="end"/>"#;
    let defs = model(body);
    let inst = started(&defs, serde_json::json!({}));
    assert!(refusal(&defs, &defs, &inst, &[("nope", "task")]).contains("fromActivityId 'nope'"));
    assert!(refusal(&defs, &defs, &inst, &[("task", "nope")]).contains("toActivityId 'nope'"));
    assert!(refusal(&defs, &defs, &inst, &[("task", "end")]).contains("another kind of element"));
}
