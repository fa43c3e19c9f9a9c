//! Compensation in the pure runtime (BPMN 2.0 §10.7): what a completed activity leaves behind
//! (a `compensate` subscription on its scope, a snapshot of a completed sub-process), the
//! order and the once-only rule of handlers, throws that wait across commands, and what must
//! not be compensated (activities still running, cancelled, never reached).

mod support;

use kairos_process::{Command, JobKind, ServiceResult};
use serde_json::json;
use support::Driver;

/// A compensation boundary event on `activity` with its handler `handler` (a `tag`).
fn handled(activity: &str, handler: &str, tag: &str) -> String {
    format!(
        r#"<boundaryEvent id="{activity}_comp" attachedToRef="{activity}"><compensateEventDefinition/></boundaryEvent>
    <{tag} id="{handler}" isForCompensation="true"/>
    <association id="{activity}_assoc" sourceRef="{activity}_comp" targetRef="{handler}" associationDirection="One"/>"#
    )
}

fn sequence(nodes: &[&str]) -> String {
    nodes
        .windows(2)
        .map(|w| format!(r#"<sequenceFlow id="{0}_{1}" sourceRef="{0}" targetRef="{1}"/>"#, w[0], w[1]))
        .collect()
}

#[test]
fn a_completed_activity_leaves_a_compensate_subscription_on_its_scope_and_a_waiting_one_none() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><userTask id="a"/><userTask id="b"/><endEvent id="end"/>
        {} {} {}"#,
        sequence(&["start", "a", "b", "end"]),
        handled("a", "undoA", "userTask"),
        handled("b", "undoB", "userTask"),
    ));
    d.start(json!({}));
    assert!(d.subscriptions().is_empty(), "a waiting activity has nothing to compensate yet");
    d.complete("a", json!({}));
    let [s] = d.inst.subscriptions.as_slice() else { panic!("{:?}", d.subscriptions()) };
    assert_eq!((s.event_type.as_str(), s.activity_id.as_str()), ("compensate", "a"));
    assert_eq!(s.execution_id, d.inst.id, "held by the scope execution, not the token that moved on");
    assert_eq!(d.last.changes.subscriptions_inserted.len(), 1, "written in the completing command");
    d.complete("b", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "a", "b", "end"], "no throw, no handler");
}

#[test]
fn handlers_run_one_at_a_time_the_last_completed_first_and_the_throw_waits_for_them() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><userTask id="a"/><userTask id="b"/>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent>
        <userTask id="after"/><endEvent id="end"/>
        {} {} {}"#,
        sequence(&["start", "a", "b", "undo", "after", "end"]),
        handled("a", "undoA", "userTask"),
        handled("b", "undoB", "userTask"),
    ));
    d.start(json!({})).complete("a", json!({})).complete("b", json!({}));
    assert_eq!(d.tasks(), ["undoB"], "b completed last: its handler first, and alone");
    assert_eq!(d.tree(), "- scope inactive\n  undo inactive\n    undoB");
    assert_eq!(d.subscriptions().len(), 1, "a's is claimed by the throw, b's used up");
    assert_eq!(d.inst.subscriptions[0].activity_id, "a");
    d.complete("undoB", json!({}));
    assert_eq!(d.tasks(), ["undoA"], "the throw still waits");
    d.complete("undoA", json!({}));
    assert_eq!(d.tasks(), ["after"], "the throw went on once no handler was left");
    assert!(d.subscriptions().is_empty());
    assert_eq!(d.ends_of("undo"), [None]);
    d.complete("after", json!({}));
    assert_eq!(d.trace(), ["start", "a", "b", "undo", "undoB", "undoA", "after", "end"]);
}

#[test]
fn each_completion_is_compensated_once() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><serviceTask id="a" kairos:handler="a"/>
        <intermediateThrowEvent id="first"><compensateEventDefinition/></intermediateThrowEvent>
        <intermediateThrowEvent id="again"><compensateEventDefinition activityRef="a"/></intermediateThrowEvent>
        <endEvent id="end"/>
        {} {}"#,
        sequence(&["start", "a", "first", "again", "end"]),
        handled("a", "undoA", "serviceTask kairos:handler=\"undoA\""),
    ));
    d.start(json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "a", "first", "undoA", "again", "end"]);
    let handlers: Vec<&str> = d.last.calls.iter().map(|c| c.handler.as_str()).collect();
    assert_eq!(handlers, ["a", "undoA"]);
}

const SUB_PROCESS: &str = r#"<startEvent id="start"/>
    <subProcess id="sub">
      <extensionElements><camunda:inputOutput><camunda:inputParameter name="bookingId">B-7</camunda:inputParameter></camunda:inputOutput></extensionElements>
      <startEvent id="subStart"/><serviceTask id="book" kairos:handler="book"/><userTask id="confirm"/><endEvent id="subEnd"/>
      INNER
    </subProcess>
    <intermediateThrowEvent id="undo"><compensateEventDefinition activityRef="sub"/></intermediateThrowEvent>
    <userTask id="after"/><endEvent id="end"/>
    FLOWS"#;

fn sub_process(extra: &str) -> Driver {
    let inner = format!(
        "{} {}",
        sequence(&["subStart", "book", "confirm", "subEnd"]),
        handled("book", "cancel", "serviceTask kairos:handler=\"cancel\"")
    );
    Driver::of(
        &SUB_PROCESS
            .replace("INNER", &inner)
            .replace("FLOWS", &format!("{} {extra}", sequence(&["start", "sub", "undo", "after", "end"]))),
    )
}

#[test]
fn a_completed_sub_process_keeps_a_snapshot_whose_handlers_see_its_variables() {
    let mut d = sub_process("");
    d.start(json!({}));
    assert_eq!(d.inst.subscriptions.len(), 1);
    assert_eq!(d.inst.subscriptions[0].activity_id, "book");
    let sub_exec = d.inst.executions.iter().find(|e| e.activity.as_deref() == Some("confirm")).unwrap();
    assert_eq!(
        d.inst.subscriptions[0].execution_id,
        sub_exec.parent_id.clone().unwrap(),
        "held by the sub-process scope"
    );
    d.complete("confirm", json!({}));
    // The sub-process completed and its throw ran at once: book's handler saw its variables.
    let cancel = d.last.calls.iter().find(|c| c.handler == "cancel").expect("the handler ran");
    assert_eq!(cancel.payload["bookingId"], json!("B-7"), "the snapshot's copy of the sub-process's variable");
    assert_eq!(d.var("bookingId"), None, "the input stayed local to the sub-process");
    assert_eq!(d.tree(), "- scope inactive\n  after", "the snapshot went with its compensation");
    assert!(d.subscriptions().is_empty());
    assert_eq!(d.trace(), ["start", "sub", "subStart", "book", "confirm", "subEnd", "undo", "cancel", "after"]);
}

#[test]
fn the_snapshot_waits_between_commands_as_rows() {
    // Without the throw: the completed sub-process's snapshot is an event-scope execution at
    // the sub-process, holding the inner subscription and its own.
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <subProcess id="sub"><startEvent id="subStart"/><task id="book"/><endEvent id="subEnd"/>{} {}</subProcess>
        <userTask id="wait"/>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{}"#,
        sequence(&["subStart", "book", "subEnd"]),
        handled("book", "cancel", "userTask"),
        sequence(&["start", "sub", "wait", "undo", "end"]),
    ));
    d.start(json!({}));
    assert_eq!(d.tree(), "- scope inactive\n  wait\n  sub event-scope inactive");
    let kinds: Vec<String> = d.subscriptions();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert!(kinds.iter().all(|k| k.starts_with("compensate:")), "{kinds:?}");
    d.complete("wait", json!({}));
    assert_eq!(d.tasks(), ["cancel"]);
    assert_eq!(d.tree(), "- scope inactive\n  undo inactive\n    sub event-scope inactive\n      cancel");
    d.complete("cancel", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "sub", "subStart", "book", "subEnd", "wait", "undo", "cancel", "end"]);
}

#[test]
fn a_cancelled_sub_process_is_not_compensated() {
    let mut d = sub_process(
        r#"<boundaryEvent id="stop" attachedToRef="sub"><messageEventDefinition messageRef="m2"/></boundaryEvent>
        <sequenceFlow id="stop_undo" sourceRef="stop" targetRef="undo"/>"#,
    );
    d.start(json!({}));
    assert_eq!(d.subscriptions().len(), 2, "book completed inside the running sub-process");
    d.message("stop");
    assert!(d.last.calls.iter().all(|c| c.handler != "cancel"), "{:?}", d.last.calls);
    assert_eq!(d.tasks(), ["after"]);
    assert!(d.subscriptions().is_empty(), "the interrupted scope took its compensations with it");
    assert!(!d.trace().contains(&"cancel".to_string()));
}

#[test]
fn an_error_event_sub_process_compensates_what_its_sub_process_completed() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <subProcess id="sub">
          <startEvent id="subStart"/><task id="reserve"/><task id="charge"/><endEvent id="fail"><errorEventDefinition errorRef="e1"/></endEvent>
          {} {} {}
          <subProcess id="onError" triggeredByEvent="true">
            <startEvent id="caught"><errorEventDefinition errorRef="e1"/></startEvent>
            <intermediateThrowEvent id="undoAll"><compensateEventDefinition/></intermediateThrowEvent>
            <endEvent id="handled"/>{}
          </subProcess>
        </subProcess>
        <endEvent id="end"/>{}"#,
        sequence(&["subStart", "reserve", "charge", "fail"]),
        handled("reserve", "release", "task"),
        handled("charge", "refund", "task"),
        sequence(&["caught", "undoAll", "handled"]),
        sequence(&["start", "sub", "end"]),
    ));
    d.start(json!({}));
    assert!(d.ended());
    assert_eq!(
        d.trace(),
        [
            "start", "sub", "subStart", "reserve", "charge", "fail", "caught", "undoAll", "refund", "release",
            "handled", "end"
        ]
    );
}

#[test]
fn a_multi_instance_activity_is_compensated_once_per_completed_instance() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <userTask id="book"><multiInstanceLoopCharacteristics camunda:collection="rooms" camunda:elementVariable="room">
          <completionCondition>${{nrOfCompletedInstances >= 2}}</completionCondition>
        </multiInstanceLoopCharacteristics></userTask>
        <intermediateThrowEvent id="undo"><compensateEventDefinition activityRef="book"/></intermediateThrowEvent>
        <endEvent id="end"/>{} {}"#,
        sequence(&["start", "book", "undo", "end"]),
        handled("book", "cancel", "serviceTask kairos:handler=\"cancel\""),
    ));
    d.start(json!({"rooms": ["r1", "r2", "r3"]}));
    d.complete("book", json!({})).complete("book", json!({}));
    assert!(d.ended(), "the completion condition held after two; the third was cancelled");
    let cancels = d.last.calls.iter().filter(|c| c.handler == "cancel").count();
    assert_eq!(cancels, 2, "once per completed instance, none for the cancelled one");
}

#[test]
fn a_failing_async_handler_keeps_the_throw_waiting_and_nothing_changes() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><serviceTask id="a" kairos:handler="a"/>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{}
        <boundaryEvent id="a_comp" attachedToRef="a"><compensateEventDefinition/></boundaryEvent>
        <serviceTask id="undoA" isForCompensation="true" kairos:handler="undoA" camunda:asyncBefore="true"/>
        <association id="as" sourceRef="a_comp" targetRef="undoA"/>"#,
        sequence(&["start", "a", "undo", "end"]),
    ));
    d.start(json!({}));
    assert_eq!(d.jobs(), ["async-continuation@undoA"]);
    let before = d.inst.clone();
    let job = d.job_at("undoA", JobKind::AsyncBefore);
    d.answers.push_back(ServiceResult::Failed("the refund service is down".into()));
    let err = d.try_run(Command::RunJob { job_id: job.id.clone() }).expect_err("the handler failed");
    assert!(err.to_string().contains("the refund service is down"), "{err}");
    assert_eq!(d.inst, before, "a failed command writes nothing: the throw still waits");
    d.run(Command::RunJob { job_id: job.id });
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "a", "undo", "undoA", "end"]);
}

#[test]
fn a_migrated_instance_keeps_what_it_completed_and_compensates_with_the_new_version() {
    let body = |handler: &str| {
        format!(
            r#"<startEvent id="start"/><userTask id="a"/><userTask id="wait"/>
            <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{} {}"#,
            sequence(&["start", "a", "wait", "undo", "end"]),
            handled("a", handler, "userTask"),
        )
    };
    let mut d = Driver::of(&body("undoA"));
    d.start(json!({})).complete("a", json!({}));
    assert_eq!(d.subscriptions().len(), 1);
    let target = kairos_bpmn::parse(&support::process(&body("undoAv2"))).unwrap();
    let migration = kairos_process::migrate::plan(&d.inst, &d.defs.processes[0], &target.processes[0], &[]).unwrap();
    let mut n = 0;
    let mut ids = || {
        n += 1;
        format!("mig-{n:04}")
    };
    let env = kairos_process::Env { definitions: &target, process: &target.processes[0], now: d.now, ids: &mut ids };
    let mut rt = kairos_process::Runtime::new(env, d.inst.clone());
    rt.migrate(&migration, "def-2", "p").unwrap();
    d.inst = rt.into_instance();
    d.defs = target;
    assert_eq!(d.subscriptions().len(), 1, "a's completion survived the migration");
    d.complete("wait", json!({}));
    assert_eq!(d.tasks(), ["undoAv2"], "the target version's handler");
}

#[test]
fn a_throw_inside_a_sub_process_compensates_that_scope_only() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><task id="outer"/>
        <subProcess id="sub"><startEvent id="subStart"/><task id="inner"/>
          <intermediateThrowEvent id="undoInner"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="subEnd"/>{} {}
        </subProcess><endEvent id="end"/>{} {}"#,
        sequence(&["subStart", "inner", "undoInner", "subEnd"]),
        handled("inner", "unInner", "task"),
        sequence(&["start", "outer", "sub", "end"]),
        handled("outer", "unOuter", "task"),
    ));
    d.start(json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "outer", "sub", "subStart", "inner", "undoInner", "unInner", "subEnd", "end"]);
}

#[test]
fn a_sub_process_ended_by_a_terminate_end_completed_and_is_compensated_with_its_nested_ones() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <subProcess id="outer"><startEvent id="outerStart"/>
          <subProcess id="nested"><startEvent id="nestedStart"/><task id="book"/><endEvent id="nestedEnd"/>{} {}</subProcess>
          <task id="pay"/><endEvent id="stop"><terminateEventDefinition/></endEvent>{} {}
        </subProcess>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{}"#,
        sequence(&["nestedStart", "book", "nestedEnd"]),
        handled("book", "unbook", "task"),
        sequence(&["outerStart", "nested", "pay", "stop"]),
        handled("pay", "refund", "task"),
        sequence(&["start", "outer", "undo", "end"]),
    ));
    d.start(json!({}));
    assert!(d.ended());
    assert_eq!(
        d.trace(),
        [
            "start",
            "outer",
            "outerStart",
            "nested",
            "nestedStart",
            "book",
            "nestedEnd",
            "pay",
            "stop",
            "undo",
            "refund",
            "unbook",
            "end"
        ]
    );
}

#[test]
fn nested_snapshots_are_compensated_scope_by_scope_under_the_waiting_throw() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <subProcess id="outer"><startEvent id="outerStart"/>
          <subProcess id="nested"><startEvent id="nestedStart"/><task id="book"/><endEvent id="nestedEnd"/>{} {}</subProcess>
          <endEvent id="outerEnd"/>{}
        </subProcess>
        <intermediateThrowEvent id="undo"><compensateEventDefinition activityRef="outer"/></intermediateThrowEvent><endEvent id="end"/>{}"#,
        sequence(&["nestedStart", "book", "nestedEnd"]),
        handled("book", "unbook", "userTask"),
        sequence(&["outerStart", "nested", "outerEnd"]),
        sequence(&["start", "outer", "undo", "end"]),
    ));
    d.start(json!({}));
    assert_eq!(
        d.tree(),
        "- scope inactive\n  undo inactive\n    outer event-scope inactive\n      nested event-scope inactive\n        unbook"
    );
    d.complete("unbook", json!({}));
    assert!(d.ended());
    assert!(d.inst.executions.is_empty() && d.inst.subscriptions.is_empty());
}

#[test]
fn a_throw_that_does_not_wait_goes_on_and_its_scope_waits_for_the_handlers() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><userTask id="a"/>
        <intermediateThrowEvent id="undo"><compensateEventDefinition waitForCompletion="false"/></intermediateThrowEvent>
        <userTask id="b"/><endEvent id="end"/>{} {}"#,
        sequence(&["start", "a", "undo", "b", "end"]),
        handled("a", "undoA", "userTask"),
    ));
    d.start(json!({})).complete("a", json!({}));
    assert_eq!(d.tasks(), ["undoA", "b"], "the handler runs beside the token that went on");
    assert_eq!(d.ends_of("undo"), [None], "the throw event is done");
    d.complete("b", json!({}));
    assert!(!d.ended(), "the process waits for its compensation like for any token");
    assert_eq!(d.tree(), "- scope inactive\n  undo inactive\n    undoA");
    d.complete("undoA", json!({}));
    assert!(d.ended());
    assert_eq!(d.trace(), ["start", "a", "undo", "undoA", "b", "end"]);
}

#[test]
fn each_instance_of_a_multi_instance_sub_process_is_compensated_with_its_own_variables() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/>
        <subProcess id="leg"><multiInstanceLoopCharacteristics isSequential="true" camunda:collection="legs" camunda:elementVariable="city"/>
          <startEvent id="legStart"/><serviceTask id="book" kairos:handler="book"/><endEvent id="legEnd"/>{} {}
        </subProcess>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{}"#,
        sequence(&["legStart", "book", "legEnd"]),
        handled("book", "unbook", "serviceTask kairos:handler=\"unbook\""),
        sequence(&["start", "leg", "undo", "end"]),
    ));
    d.start(json!({"legs": ["Oslo", "Rome", "Lima"]}));
    assert!(d.ended());
    let cities: Vec<&serde_json::Value> =
        d.last.calls.iter().filter(|c| c.handler == "unbook").map(|c| &c.payload["city"]).collect();
    assert_eq!(cities, [&json!("Lima"), &json!("Rome"), &json!("Oslo")], "the last leg first, each with its city");
}

#[test]
fn a_handler_runs_on_an_execution_named_after_the_completion_it_compensates() {
    let mut d = Driver::of(&format!(
        r#"<startEvent id="start"/><serviceTask id="charge" kairos:handler="charge"/><userTask id="wait"/>
        <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent><endEvent id="end"/>{} {}"#,
        sequence(&["start", "charge", "wait", "undo", "end"]),
        handled("charge", "refund", "serviceTask kairos:handler=\"refund\""),
    ));
    d.start(json!({}));
    let order = d.inst.subscriptions[0].event_name.clone();
    let wait = d.task_id("wait");
    // The refund fails: nothing of the command is written; run again, it gets the same execution.
    d.answers.push_back(ServiceResult::Failed("the payment service is down".into()));
    d.try_run(Command::CompleteTask { task_id: wait.clone(), variables: Default::default() }).expect_err("it failed");
    d.run(Command::CompleteTask { task_id: wait, variables: Default::default() });
    let refund = d.last.calls.iter().find(|c| c.handler == "refund").unwrap();
    assert_eq!(refund.execution_id, format!("{}:c{order}", d.inst.id), "the idempotency key of the compensation");
    assert!(d.ended());
}
