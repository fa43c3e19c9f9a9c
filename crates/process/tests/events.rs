//! Events in the pure runtime: boundary events (interrupting and not), signals thrown inside
//! the instance, errors and terminate end events, and what each leaves in the instance.

mod support;

use kairos_process::ErrorKind;
use serde_json::json;
use support::Driver;

fn task_with_boundary(boundary: &str) -> String {
    format!(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <sequenceFlow id="f1" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
    {boundary}
    <sequenceFlow id="f2" sourceRef="on" targetRef="next"/>
    <userTask id="next"/>"#
    )
}

#[test]
fn an_interrupting_boundary_timer_cancels_its_task_and_leaves_by_the_event() {
    let mut d = Driver::of(&task_with_boundary(
        r#"<boundaryEvent id="on" attachedToRef="task"><timerEventDefinition><timeDuration>PT2H</timeDuration></timerEventDefinition></boundaryEvent>"#,
    ));
    d.start(json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  task\n    on event-scope inactive");
    assert_eq!(d.jobs(), ["trigger-timer@on due 2026-01-05T11:00:00Z"]);
    let timer = d.job_at("on", kairos_process::JobKind::Timer);
    let event_scope = d.inst.executions.iter().find(|e| e.is_event_scope).unwrap().id.clone();
    assert_eq!(timer.execution_id, event_scope, "the event-scope execution holds the timer");

    d.fire_timer("on");
    assert_eq!(d.tasks(), ["next"]);
    assert_eq!(d.tree(), "- scope inactive\n  next");
    assert!(d.jobs().is_empty());
    assert_eq!(d.ends_of("task"), [Some("boundary event on".to_string())]);
    assert_eq!(d.last.ended_tasks.len(), 1);
    assert_eq!(d.last.ended_tasks[0].reason.as_deref(), Some("boundary event on"));
    assert_eq!(d.last.changes.executions_deleted.len(), 1, "the event scope goes");
    assert_eq!(d.trace(), ["start", "task", "on", "next"]);
}

#[test]
fn a_boundary_event_is_disarmed_when_its_task_completes() {
    let mut d = Driver::of(&task_with_boundary(
        r#"<boundaryEvent id="on" attachedToRef="task"><timerEventDefinition><timeDuration>PT2H</timeDuration></timerEventDefinition></boundaryEvent>"#,
    ));
    d.start(json!({})).complete("task", json!({}));
    assert!(d.ended());
    assert_eq!(d.last.changes.jobs_deleted.len(), 1);
    assert_eq!(d.trace(), ["start", "task", "end"]);
}

#[test]
fn a_non_interrupting_boundary_message_starts_a_token_beside_its_task() {
    let mut d = Driver::of(&task_with_boundary(
        r#"<boundaryEvent id="on" attachedToRef="task" cancelActivity="false"><messageEventDefinition messageRef="m1"/></boundaryEvent>"#,
    ));
    d.start(json!({}));
    assert_eq!(d.subscriptions(), ["message:go@on"]);
    d.message("go");
    assert_eq!(d.tasks(), ["task", "next"]);
    // A message is used up; its event scope stays while the task runs.
    assert!(d.subscriptions().is_empty());
    assert_eq!(d.tree(), "- scope inactive\n  task concurrent\n    on event-scope inactive\n  next concurrent");
    assert_eq!(d.ends_of("task"), Vec::<Option<String>>::new(), "the task runs on");
    assert_eq!(d.trace(), ["start", "task", "on", "next"]);
}

#[test]
fn a_non_interrupting_boundary_signal_keeps_listening() {
    let mut d = Driver::of(&task_with_boundary(
        r#"<boundaryEvent id="on" attachedToRef="task" cancelActivity="false"><signalEventDefinition signalRef="s1"/></boundaryEvent>"#,
    ));
    d.start(json!({})).signal("alarm").signal("alarm");
    assert_eq!(d.tasks(), ["task", "next", "next"]);
    assert_eq!(d.subscriptions(), ["signal:alarm@on"]);
}

#[test]
fn a_signal_thrown_inside_the_instance_reaches_its_own_catch_at_once() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="wait"/>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="go"/>
    <intermediateCatchEvent id="wait"><signalEventDefinition signalRef="s1"/></intermediateCatchEvent>
    <sequenceFlow id="fa2" sourceRef="wait" targetRef="caught"/>
    <userTask id="caught"/>
    <userTask id="go"/>
    <sequenceFlow id="fb2" sourceRef="go" targetRef="throw"/>
    <intermediateThrowEvent id="throw"><signalEventDefinition signalRef="s1"/></intermediateThrowEvent>
    <sequenceFlow id="fb3" sourceRef="throw" targetRef="end"/>
    <endEvent id="end"/>"#,
    );
    d.start(json!({}));
    assert_eq!(d.subscriptions(), ["signal:alarm@wait"]);
    d.complete("go", json!({}));
    assert_eq!(d.tasks(), ["caught"]);
    assert!(d.subscriptions().is_empty());
    assert_eq!(d.last.thrown_signals, ["alarm"], "other instances get it after the commit");
    assert_eq!(d.tree(), "- scope inactive\n  caught");
    assert_eq!(d.trace(), ["start", "fork", "wait", "go", "throw", "caught", "end"]);
}

const ERROR_IN_SUB_PROCESS: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="sub"/>
    <subProcess id="sub">
      <startEvent id="subStart"/>
      <sequenceFlow id="sf1" sourceRef="subStart" targetRef="work"/>
      <userTask id="work"/>
      <sequenceFlow id="sf2" sourceRef="work" targetRef="fail"/>
      <endEvent id="fail"><errorEventDefinition errorRef="e1"/></endEvent>
    </subProcess>
    <sequenceFlow id="f1" sourceRef="sub" targetRef="end"/>
    <endEvent id="end"/>
    CATCH"#;

#[test]
fn an_error_end_event_is_caught_by_the_boundary_of_its_sub_process() {
    let catch = r#"<boundaryEvent id="on" attachedToRef="sub"><errorEventDefinition errorRef="e1" camunda:errorCodeVariable="code"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="on" targetRef="fix"/>
    <userTask id="fix"/>"#;
    let mut d = Driver::of(&ERROR_IN_SUB_PROCESS.replace("CATCH", catch));
    d.start(json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  sub scope inactive\n    work");
    d.complete("work", json!({}));
    assert_eq!(d.tasks(), ["fix"]);
    assert_eq!(d.var("code"), Some(&json!("E1")));
    assert_eq!(d.tree(), "- scope inactive\n  fix");
    assert_eq!(d.ends_of("sub"), [Some("error E1 caught by on".to_string())]);
    assert_eq!(d.trace(), ["start", "sub", "subStart", "work", "fail", "on", "fix"]);
}

#[test]
fn an_error_nobody_catches_fails_the_command_naming_the_thrower() {
    let mut d = Driver::of(&ERROR_IN_SUB_PROCESS.replace("CATCH", ""));
    d.start(json!({}));
    let loaded = d.inst.clone();
    let task_id = d.task_id("work");
    let err = d.try_run(kairos_process::Command::CompleteTask { task_id, variables: Default::default() }).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Model);
    assert_eq!(err.element_id.as_deref(), Some("fail"));
    assert_eq!(err.message, "error 'E1' thrown by 'fail' is not caught by any boundary event");
    assert_eq!(d.inst, loaded);
}

#[test]
fn a_terminate_end_event_ends_every_token_of_its_scope() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="fa" sourceRef="fork" targetRef="a"/>
    <sequenceFlow id="fb" sourceRef="fork" targetRef="b"/>
    <userTask id="a"/>
    <userTask id="b"/>
    <sequenceFlow id="fb2" sourceRef="b" targetRef="kill"/>
    <endEvent id="kill"><terminateEventDefinition/></endEvent>"#,
    );
    d.start(json!({}));
    d.complete("b", json!({}));
    assert!(d.ended());
    assert_eq!(d.inst.ended.as_ref().map(|(_, at)| at.clone()), Some(Some("kill".to_string())));
    assert_eq!(d.ends_of("a"), [Some("terminated by kill".to_string())]);
    // b's task completed (no reason), a's was cancelled.
    let reasons: Vec<Option<String>> = d.last.ended_tasks.iter().map(|t| t.reason.clone()).collect();
    assert_eq!(reasons, [None, Some("terminated by kill".to_string())]);
    assert!(d.inst.executions.is_empty() && d.inst.tasks.is_empty());
    assert_eq!(d.tree(), "");
}

#[test]
fn an_escalation_caught_without_interrupting_runs_beside_the_sub_process() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="sub"/>
    <subProcess id="sub">
      <startEvent id="subStart"/>
      <sequenceFlow id="sf1" sourceRef="subStart" targetRef="raise"/>
      <intermediateThrowEvent id="raise"><escalationEventDefinition escalationRef="x1"/></intermediateThrowEvent>
      <sequenceFlow id="sf2" sourceRef="raise" targetRef="work"/>
      <userTask id="work"/>
    </subProcess>
    <boundaryEvent id="on" attachedToRef="sub" cancelActivity="false"><escalationEventDefinition escalationRef="x1"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="on" targetRef="notify"/>
    <userTask id="notify"/>"#,
    );
    d.start(json!({}));
    assert_eq!(d.tasks(), ["notify", "work"]);
    assert_eq!(d.tree(), "- scope inactive\n  sub scope concurrent inactive\n    work\n  notify concurrent");
}
