//! Execution and task listeners at the pure level: each runs at its event, in model order,
//! before the step it precedes; a handler listener pauses the command like a service task and
//! its answer's variables land where it ran; expression listeners are evaluated; a failing
//! listener fails the whole command.

mod support;

use kairos_process::*;
use serde_json::{Map, json};
use support::{Driver, vars};

const BODY: &str = r#"
    <extensionElements>
      <camunda:executionListener event="start" class="com.acme.ProcessStarted"/>
      <camunda:executionListener event="end" delegateExpression="${processEnded}"/>
    </extensionElements>
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review">
      <extensionElements><camunda:executionListener class="com.acme.Taken"/></extensionElements>
    </sequenceFlow>
    <userTask id="review" camunda:assignee="${who}">
      <extensionElements>
        <camunda:executionListener event="start" expression="${who}"/>
        <camunda:taskListener event="create" class="com.acme.Created"/>
        <camunda:taskListener event="assignment" expression="${audit.assigned(task, who)}"/>
        <camunda:taskListener event="complete" class="com.acme.Completed">
          <camunda:field name="channel" stringValue="mail"/>
        </camunda:taskListener>
        <camunda:executionListener event="end" class="com.acme.Left"/>
      </extensionElements>
    </userTask>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>"#;

fn handlers(d: &Driver) -> Vec<String> {
    d.last.calls.iter().map(|c| format!("{}@{}", c.handler, c.activity_id)).collect()
}

#[test]
fn listeners_run_at_their_events_in_order() {
    let mut d = Driver::checked(BODY);
    d.answers.extend([
        ServiceResult::Output { result: None, variables: vars(json!({"startedBy": "listener"})) },
        ServiceResult::Done(None),
        ServiceResult::Done(None),
        ServiceResult::Done(None),
    ]);
    d.start(json!({"who": "kermit"}));
    assert_eq!(
        handlers(&d),
        ["com.acme.ProcessStarted@p", "com.acme.Taken@f1", "audit.assigned@review", "com.acme.Created@review"],
        "process start, flow taken, then the task: assignment before create"
    );
    assert_eq!(d.var("startedBy"), Some(&json!("listener")));
    let assigned = &d.last.calls[2].payload;
    let task = d.task_id("review");
    assert_eq!(assigned["arguments"], json!([task, "kermit"]), "the task argument is its id");
    assert_eq!(assigned["listener"]["event"], json!("assignment"));
    assert_eq!(d.tasks(), ["review"]);

    d.complete("review", json!({"ok": true}));
    assert_eq!(
        handlers(&d),
        ["com.acme.Completed@review", "com.acme.Left@review", "processEnded@p"],
        "complete, the activity's end, the process's end"
    );
    assert_eq!(d.last.calls[0].payload["fields"], json!({"channel": "mail"}));
    assert_eq!(d.last.calls[0].payload["ok"], json!(true));
    assert!(d.ended());
}

#[test]
fn a_failing_listener_fails_the_command_and_nothing_changes() {
    let mut d = Driver::checked(BODY);
    d.answers.push_back(ServiceResult::Failed("audit store is down".into()));
    let e =
        d.try_run(Command::Start { variables: vars(json!({"who": "kermit"})), start_user: None, start_event: None });
    let e = e.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Handler);
    assert!(e.to_string().contains("the start listener of 'p' failed: audit store is down"), "{e}");
    assert!(d.tasks().is_empty());

    let mut d = Driver::checked(BODY);
    d.answers.push_back(ServiceResult::BpmnError("E1".into()));
    let e = d.try_run(Command::Start { variables: Map::new(), start_user: None, start_event: None }).unwrap_err();
    assert!(e.to_string().contains("a listener cannot throw one"), "{e}");
}

#[test]
fn an_expression_listener_with_an_undefined_variable_fails() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="t"/>
    <userTask id="t"><extensionElements><camunda:executionListener event="start" expression="${missing > 1}"/></extensionElements></userTask>"#,
    );
    let e = d.try_run(Command::Start { variables: Map::new(), start_user: None, start_event: None }).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
}

/// A task with a delete listener, cancelled by an interrupting timer, by a terminate end event
/// on a parallel branch, or with the instance.
const DELETED: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f1" sourceRef="fork" targetRef="review"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="stop"/>
    <userTask id="review">
      <extensionElements>
        <camunda:taskListener event="delete" class="com.acme.Withdrawn"><camunda:field name="why" stringValue="cancelled"/></camunda:taskListener>
        <camunda:taskListener event="complete" class="com.acme.Completed"/>
      </extensionElements>
    </userTask>
    <boundaryEvent id="late" attachedToRef="review"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="late" targetRef="chase"/>
    <userTask id="chase"/>
    <sequenceFlow id="f4" sourceRef="review" targetRef="done"/>
    <endEvent id="done"/>
    <userTask id="stop"/>
    <sequenceFlow id="f5" sourceRef="stop" targetRef="halt"/>
    <endEvent id="halt"><terminateEventDefinition/></endEvent>"#;

#[test]
fn a_delete_listener_runs_when_its_task_is_cancelled_not_when_it_is_completed() {
    let mut d = Driver::of(DELETED);
    d.start(json!({"amount": 3}));
    let review = d.task_id("review");
    d.fire_timer("late");
    assert_eq!(handlers(&d), ["com.acme.Withdrawn@review"]);
    let call = &d.last.calls[0].payload;
    assert_eq!(call["listener"], json!({"event": "delete", "elementId": "review", "taskId": review}));
    assert_eq!(call["fields"], json!({"why": "cancelled"}));
    assert_eq!(call["amount"], json!(3), "it sees the variables of where the task was");
    assert_eq!(d.tasks(), ["stop", "chase"]);

    let mut d = Driver::of(DELETED);
    d.start(json!({}));
    d.complete("review", json!({}));
    assert_eq!(handlers(&d), ["com.acme.Completed@review"], "a completed task is not deleted");
}

#[test]
fn a_delete_listener_runs_before_a_terminate_end_or_a_deletion_ends_the_instance() {
    let mut d = Driver::of(DELETED);
    d.start(json!({"amount": 3}));
    d.complete("stop", json!({}));
    assert_eq!(handlers(&d), ["com.acme.Withdrawn@review"]);
    assert_eq!(d.last.calls[0].payload["amount"], json!(3));
    assert!(d.ended());
    assert_eq!(d.inst.delete_reason, None, "a terminate end event is an end, not a deletion");

    let mut d = Driver::of(DELETED);
    d.start(json!({}));
    d.run(Command::Delete { reason: "order withdrawn".into(), skip_listeners: false });
    assert_eq!(handlers(&d), ["com.acme.Withdrawn@review"]);
    assert!(d.ended());
    assert_eq!(d.inst.delete_reason.as_deref(), Some("order withdrawn"));

    // A failing delete listener fails the deletion: the instance stays as it was.
    let mut d = Driver::of(DELETED);
    d.start(json!({}));
    d.answers.push_back(ServiceResult::Failed("inbox is down".into()));
    let e = d.try_run(Command::Delete { reason: "order withdrawn".into(), skip_listeners: false }).unwrap_err();
    assert!(e.to_string().contains("the delete listener of 'review' failed: inbox is down"), "{e}");
    assert_eq!(d.tasks(), ["review", "stop"]);
    // Camunda's skipCustomListeners: the deletion goes through without them.
    d.run(Command::Delete { reason: "order withdrawn".into(), skip_listeners: true });
    assert!(handlers(&d).is_empty());
    assert!(d.ended());
}

#[test]
fn update_listeners_run_when_an_open_task_changes_before_assignment_ones() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review">
      <extensionElements>
        <camunda:taskListener event="assignment" class="com.acme.Assigned"/>
        <camunda:taskListener event="update" class="com.acme.Updated"/>
      </extensionElements>
    </userTask>"#,
    );
    d.start(json!({}));
    assert!(handlers(&d).is_empty(), "creating a task is no update");
    let task = d.task_id("review");
    d.run(Command::ClaimTask { task_id: task.clone(), assignee: "kermit".into() });
    assert_eq!(handlers(&d), ["com.acme.Updated@review", "com.acme.Assigned@review"]);
    assert_eq!(d.last.calls[0].payload["listener"]["event"], json!("update"));
    let update = |priority| TaskUpdate { priority: Some(priority), ..TaskUpdate::default() };
    d.run(Command::UpdateTask { task_id: task.clone(), update: update(80) });
    assert_eq!(handlers(&d), ["com.acme.Updated@review"]);
    d.run(Command::UpdateTask { task_id: task.clone(), update: update(80) });
    assert!(handlers(&d).is_empty(), "nothing changed");
    d.run(Command::SetTaskVariables { task_id: task.clone(), variables: vars(json!({"note": "x"})), local: true });
    assert_eq!(handlers(&d), ["com.acme.Updated@review"], "a task-local variable is part of the task");
    d.run(Command::SetTaskVariables { task_id: task, variables: vars(json!({"note": "x"})), local: false });
    assert!(handlers(&d).is_empty(), "an instance variable is not");
}

#[test]
fn listener_and_task_expressions_set_variables_as_camunda_models_do() {
    let mut d = Driver::checked(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="mark"/>
    <serviceTask id="mark" camunda:expression="${execution.setVariable('marked', amount * 2)}"/>
    <sequenceFlow id="f2" sourceRef="mark" targetRef="review"/>
    <userTask id="review">
      <extensionElements>
        <camunda:executionListener event="start" expression="${execution.setVariable('listenerStartInvoked', true)}"/>
        <camunda:executionListener event="end" expression="${execution.setVariableLocal('left', 'yes')}"/>
      </extensionElements>
    </userTask>
    <sequenceFlow id="f3" sourceRef="review" targetRef="gw"/>
    <exclusiveGateway id="gw" default="f5"/>
    <sequenceFlow id="f4" sourceRef="gw" targetRef="end"><conditionExpression>${execution.setVariable('sneaky', 1) == null}</conditionExpression></sequenceFlow>
    <sequenceFlow id="f5" sourceRef="gw" targetRef="end"/>
    <endEvent id="end"/>"#,
    );
    d.start(json!({"amount": 21}));
    assert!(handlers(&d).is_empty(), "they are expressions, not handler names");
    assert_eq!(d.var("marked"), Some(&json!(42)));
    assert_eq!(d.var("listenerStartInvoked"), Some(&json!(true)));
    // A condition must not change the instance while it is read.
    let task = d.task_id("review");
    let e = d.try_run(Command::CompleteTask { task_id: task, variables: Map::new() }).unwrap_err();
    assert!(e.to_string().contains("allowed only in a listener's or a service task's expression"), "{e}");
}
