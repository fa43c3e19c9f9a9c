//! Conditional events in the pure runtime: a condition naming a variable that does not exist
//! yet is false until the variable appears (as Camunda reads it), while gateways and
//! sequence-flow conditions stay strict.

mod support;

use jiff::Timestamp;
use kairos_bpmn::Definitions;
use kairos_process::*;
use serde_json::{Map, Value, json};

fn model(body: &str) -> Definitions {
    let xml = format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <process id="p">
    <startEvent id="start"/>
    {body}
  </process>
</definitions>"#
    );
    kairos_bpmn::parse(&xml).unwrap_or_else(|e| panic!("{e}"))
}

fn vars(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Applies `commands` in turn to a new instance of `defs`, each in its own runtime as the
/// engine runs them; the instance after the last one, or the first error.
fn run(defs: &Definitions, commands: Vec<Command>) -> Result<Instance> {
    let mut n = 0u64;
    let mut ids = move || {
        n += 1;
        format!("id-{n:04}")
    };
    let now: Timestamp = "2026-01-05T09:00:00Z".parse().unwrap();
    let process = &defs.processes[0];
    let mut inst = Runtime::new_instance(&mut Env { definitions: defs, process, now, ids: &mut ids }, "def-1", None);
    for command in commands {
        let mut rt = Runtime::new(Env { definitions: defs, process, now, ids: &mut ids }, inst);
        let step = rt.apply(command)?;
        assert!(matches!(step, Step::Done), "the command ran to a wait");
        inst = rt.into_instance();
    }
    Ok(inst)
}

fn start(v: Value) -> Command {
    Command::Start { variables: vars(v), start_user: None, start_event: None }
}

const CATCH: &str = r#"<sequenceFlow id="f1" sourceRef="start" targetRef="waitPaid"/>
    <intermediateCatchEvent id="waitPaid"><conditionalEventDefinition><condition>${paid}</condition></conditionalEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="waitPaid" targetRef="ship"/>
    <userTask id="ship"/>
    <sequenceFlow id="f3" sourceRef="ship" targetRef="end"/>
    <endEvent id="end"/>"#;

#[test]
fn an_event_condition_on_a_missing_variable_waits_until_it_appears() {
    let defs = model(CATCH);
    let waiting = run(&defs, vec![start(json!({}))]).expect("an undefined variable is no error here");
    assert!(waiting.tasks.is_empty());
    let sub: Vec<_> = waiting.subscriptions.iter().map(|s| (s.event_type.as_str(), s.event_name.as_str())).collect();
    assert_eq!(sub, [("conditional", "false")]);

    let other = Command::SetVariables { variables: vars(json!({"note": "x"})) };
    let still = run(&defs, vec![start(json!({})), other]).unwrap();
    assert!(still.tasks.is_empty(), "still waiting while 'paid' does not exist");

    let paid = Command::SetVariables { variables: vars(json!({"paid": true})) };
    let shipped = run(&defs, vec![start(json!({})), paid]).unwrap();
    let tasks: Vec<&str> = shipped.tasks.iter().map(|t| t.task_def_key.as_str()).collect();
    assert_eq!(tasks, ["ship"], "the condition became true");
}

#[test]
fn other_failures_of_an_event_condition_are_still_errors() {
    let defs = model(&CATCH.replace("${paid}", "${amount / 0 > 1}"));
    let err = run(&defs, vec![start(json!({"amount": 5}))]).unwrap_err();
    assert!(err.to_string().contains("division by zero"), "{err}");
    assert!(err.to_string().contains("waitPaid"), "{err}");
}

#[test]
fn gateway_conditions_on_a_missing_variable_stay_errors() {
    let defs = model(
        r#"<sequenceFlow id="f1" sourceRef="start" targetRef="gw"/>
    <exclusiveGateway id="gw" default="no"/>
    <sequenceFlow id="yes" sourceRef="gw" targetRef="end"><conditionExpression>${paid}</conditionExpression></sequenceFlow>
    <sequenceFlow id="no" sourceRef="gw" targetRef="end"/>
    <endEvent id="end"/>"#,
    );
    let err = run(&defs, vec![start(json!({}))]).unwrap_err();
    assert!(err.to_string().contains("undefined variable 'paid'"), "{err}");
}

#[test]
fn a_conditional_boundary_event_interrupts_its_task_when_the_condition_becomes_true() {
    let mut d = support::Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <boundaryEvent id="cancelled" attachedToRef="task"><conditionalEventDefinition><condition>${cancel == true}</condition></conditionalEventDefinition></boundaryEvent>
    <sequenceFlow id="f1" sourceRef="cancelled" targetRef="refund"/>
    <userTask id="refund"/>"#,
    );
    d.start(json!({"cancel": false}));
    assert_eq!(d.subscriptions(), ["conditional:false@cancelled"]);
    d.set(json!({"cancel": false}));
    assert_eq!(d.subscriptions(), ["conditional:false@cancelled"]);
    assert!(d.last.changes.subscriptions_inserted.is_empty(), "a value that stays is not written again");
    d.set(json!({"cancel": true}));
    assert_eq!(d.tasks(), ["refund"]);
    assert!(d.subscriptions().is_empty());
    assert_eq!(d.ends_of("task"), [Some("boundary event cancelled".to_string())]);
}

#[test]
fn a_non_interrupting_conditional_event_sub_process_fires_each_time_the_condition_becomes_true() {
    let mut d = support::Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <subProcess id="esp" triggeredByEvent="true">
      <startEvent id="low" isInterrupting="false"><conditionalEventDefinition camunda:variableName="stock"><condition>${stock &lt; 10}</condition></conditionalEventDefinition></startEvent>
      <sequenceFlow id="sf1" sourceRef="low" targetRef="reorder"/>
      <userTask id="reorder"/>
    </subProcess>"#,
    );
    d.start(json!({"stock": 50}));
    assert_eq!(d.subscriptions(), ["conditional:false@low"]);
    d.set(json!({"stock": 5}));
    assert_eq!(d.tasks(), ["task", "reorder"]);
    // Edge-triggered: the value is kept as a new row, and staying true fires nothing.
    assert_eq!(d.subscriptions(), ["conditional:true@low"]);
    assert_eq!((d.last.changes.subscriptions_inserted.len(), d.last.changes.subscriptions_deleted.len()), (1, 1));
    d.set(json!({"stock": 3}));
    assert_eq!(d.tasks(), ["task", "reorder"]);
    // Back above the threshold it is false again, and the next drop fires again.
    d.set(json!({"stock": 50}));
    assert_eq!(d.subscriptions(), ["conditional:false@low"]);
    d.set(json!({"stock": 1}));
    assert_eq!(d.tasks(), ["task", "reorder", "reorder"]);
}
