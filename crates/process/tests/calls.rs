//! Call activities in the pure runtime: what the engine is asked to start, the `in` and `out`
//! mappings, a called instance that ends at once, and one cancelled by a boundary event.

mod support;

use kairos_process::{CalledStart, Command};
use serde_json::json;
use support::{Driver, vars};

fn caller(extra: &str) -> Driver {
    Driver::of(&format!(
        r##"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="call"/>
    <callActivity id="call" calledElement="${{which}}">
      <extensionElements>
        <camunda:in businessKey="#{{execution.processBusinessKey}}"/>
        <camunda:in source="orderId" target="orderId"/>
        <camunda:in sourceExpression="${{items * 2}}" target="units"/>
        <camunda:out source="lockId" target="lockId"/>
      </extensionElements>
    </callActivity>
    <sequenceFlow id="f1" sourceRef="call" targetRef="after"/>
    <userTask id="after"/>
    {extra}"##
    ))
}

#[test]
fn a_call_activity_asks_to_start_its_process_with_the_in_mappings_and_waits() {
    let mut d = caller("");
    d.start(json!({"which": "stockLock", "orderId": "A-1", "items": 3, "secret": 1}));
    let token = d.inst.children(&d.inst.id)[0].id.clone();
    assert_eq!(
        d.last.called,
        [CalledStart {
            execution_id: token.clone(),
            activity_id: "call".into(),
            process_key: "stockLock".into(),
            business_key: Some("BK-1".into()),
            variables: vars(json!({"orderId": "A-1", "units": 6})),
        }]
    );
    assert_eq!(d.tree(), "- scope inactive\n  call");
    assert!(d.tasks().is_empty() && d.jobs().is_empty() && d.subscriptions().is_empty());

    d.run(Command::CalledEnded { execution_id: token, variables: vars(json!({"lockId": "L-9", "junk": 1})) });
    assert_eq!(d.var("lockId"), Some(&json!("L-9")));
    assert_eq!(d.var("junk"), None, "only what the out mappings name comes back");
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.trace(), ["start", "call", "after"]);
}

#[test]
fn a_called_instance_that_ends_at_once_lets_the_call_activity_go_on_in_the_same_command() {
    let mut d = caller("");
    d.called_ends_with = Some(vars(json!({"lockId": "L-1"})));
    d.start(json!({"which": "stockLock", "orderId": "A-1", "items": 1}));
    assert_eq!(d.last.called.len(), 1);
    assert_eq!(d.var("lockId"), Some(&json!("L-1")));
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.ends_of("call"), [None]);
}

#[test]
fn a_call_activity_cancelled_by_its_boundary_event_is_noted_for_the_engine() {
    let mut d = caller(
        r#"<boundaryEvent id="late" attachedToRef="call"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="late" targetRef="chase"/>
    <userTask id="chase"/>"#,
    );
    d.start(json!({"which": "stockLock", "orderId": "A-1", "items": 1}));
    let token = d.inst.children(&d.inst.id)[0].id.clone();
    assert!(d.last.interrupted_calls.is_empty());
    d.fire_timer("late");
    assert_eq!(d.last.interrupted_calls, [(token, "call".to_string())], "the engine deletes what it called");
    assert_eq!(d.tasks(), ["chase"]);
    assert_eq!(d.ends_of("call"), [Some("boundary event late".to_string())]);
}

#[test]
fn a_called_ended_for_an_execution_not_at_a_call_activity_is_refused() {
    let mut d = caller("");
    d.called_ends_with = Some(vars(json!({})));
    d.start(json!({"which": "x", "orderId": "A-1", "items": 1}));
    let token = d.inst.children(&d.inst.id)[0].id.clone();
    let err = d.try_run(Command::CalledEnded { execution_id: token.clone(), variables: vars(json!({})) }).unwrap_err();
    assert_eq!(err.kind, kairos_process::ErrorKind::Conflict);
    assert_eq!(err.message, format!("execution {token} is not at a call activity"));
}
