//! Tasks in the pure runtime: a user task's row, a service task's handler call and its three
//! answers, an expression service task, and an external worker's job.

mod support;

use kairos_process::{Command, ErrorKind, JobKind, ServiceResult};
use serde_json::json;
use support::{Driver, vars};

#[test]
fn a_user_task_row_takes_its_assignee_candidates_priority_and_due_date() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve" camunda:assignee="${boss}" camunda:candidateUsers="kermit, gonzo"
      camunda:candidateGroups="${groups}" camunda:priority="${level * 10}" camunda:dueDate="P2D" camunda:formKey="approve.form"/>"#,
    );
    d.start(json!({"boss": "piggy", "groups": ["sales", "legal"], "level": 6}));
    let t = &d.inst.tasks[0];
    assert_eq!((t.task_def_key.as_str(), t.name.as_deref()), ("approve", Some("Approve")));
    assert_eq!(t.assignee.as_deref(), Some("piggy"));
    assert_eq!(t.candidate_users, ["kermit", "gonzo"]);
    assert_eq!(t.candidate_groups, ["sales", "legal"]);
    assert_eq!(t.priority, 60);
    assert_eq!(t.due_date.map(|d| d.to_string()).as_deref(), Some("2026-01-07T09:00:00Z"));
    assert_eq!(t.form_key.as_deref(), Some("approve.form"));
    // Its history row names it and its assignee.
    let open = &d.inst.activities[d.inst.activities.len() - 1];
    assert_eq!((open.task_id.as_ref(), open.assignee.as_deref()), (Some(&t.id), Some("piggy")));
}

#[test]
fn claiming_a_task_claimed_by_someone_else_is_a_conflict() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/><sequenceFlow id="f0" sourceRef="start" targetRef="t"/><userTask id="t"/>"#,
    );
    d.start(json!({}));
    let task_id = d.task_id("t");
    d.run(Command::ClaimTask { task_id: task_id.clone(), assignee: "ann".into() });
    assert_eq!(d.inst.tasks[0].assignee.as_deref(), Some("ann"));
    assert_eq!(d.inst.tasks[0].claim_time.map(|t| t.to_string()).as_deref(), Some(support::T0));
    let err = d.try_run(Command::ClaimTask { task_id: task_id.clone(), assignee: "bob".into() }).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Conflict);
    assert_eq!(err.message, format!("task {task_id} is already claimed by ann"));
}

const SERVICE: &str = r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" kairos:handler="charge-card" camunda:resultVariable="receipt">
      <extensionElements>
        <camunda:field name="currency" stringValue="EUR"/>
        <camunda:field name="amount" expression="${total * 2}"/>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f1" sourceRef="charge" targetRef="after"/>
    <userTask id="after"/>
    <boundaryEvent id="declined" attachedToRef="charge"><errorEventDefinition errorRef="e1"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="declined" targetRef="retry"/>
    <userTask id="retry"/>"#;

#[test]
fn a_service_task_asks_for_its_handler_with_the_variables_and_fields_and_stores_the_result() {
    let mut d = Driver::of(SERVICE);
    d.answers.push_back(ServiceResult::Done(Some(json!("R-1"))));
    d.start(json!({"total": 21}));
    assert_eq!(d.last.calls.len(), 1);
    let call = &d.last.calls[0];
    assert_eq!((call.activity_id.as_str(), call.handler.as_str()), ("charge", "charge-card"));
    assert_eq!(call.payload, json!({"total": 21, "fields": {"currency": "EUR", "amount": 42}}));
    assert_eq!(d.var("receipt"), Some(&json!("R-1")));
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.trace(), ["start", "charge", "after"]);
}

#[test]
fn a_bpmn_error_from_a_handler_goes_to_the_error_boundary() {
    let mut d = Driver::of(SERVICE);
    d.answers.push_back(ServiceResult::BpmnError("E1".into()));
    d.start(json!({"total": 1}));
    assert_eq!(d.tasks(), ["retry"]);
    assert_eq!(d.var("receipt"), None);
    assert_eq!(d.ends_of("charge"), [Some("error E1 caught by declined".to_string())]);
}

#[test]
fn a_failed_handler_fails_the_command_naming_the_task() {
    let mut d = Driver::of(SERVICE);
    d.answers.push_back(ServiceResult::Failed("card expired".into()));
    let err = d.try_run(Command::Start { variables: vars(json!({"total": 1})), start_user: None, start_event: None });
    let err = err.unwrap_err();
    assert_eq!((err.kind, err.element_id.as_deref()), (ErrorKind::Handler, Some("charge")));
    assert_eq!(err.message, "service task 'charge' failed: card expired");
}

#[test]
fn an_expression_service_task_evaluates_in_the_runtime() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="calc"/>
    <serviceTask id="calc" camunda:expression="${price * qty}" camunda:resultVariable="sum"/>
    <sequenceFlow id="f1" sourceRef="calc" targetRef="after"/>
    <userTask id="after"/>"#,
    );
    d.start(json!({"price": 3, "qty": 4}));
    assert!(d.last.calls.is_empty(), "no handler runs");
    assert_eq!(d.var("sum"), Some(&json!(12)));
    assert_eq!(d.tasks(), ["after"]);
}

#[test]
fn an_external_task_waits_for_its_worker_through_a_job_with_its_topic() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge-card"/>
    <sequenceFlow id="f1" sourceRef="charge" targetRef="after"/>
    <userTask id="after"/>"#,
    );
    d.start(json!({}));
    assert_eq!(d.jobs(), ["external-worker@charge"]);
    let job = d.job_at("charge", JobKind::External);
    assert_eq!(job.topic.as_deref(), Some("charge-card"));
    assert_eq!(d.tree(), "- scope inactive\n  charge");
    d.run(Command::CompleteExternal {
        job_id: job.id.clone(),
        variables: vars(json!({"paid": true})),
        local_variables: serde_json::Map::new(),
    });
    assert_eq!(d.var("paid"), Some(&json!(true)));
    assert_eq!(d.tasks(), ["after"]);
    assert_eq!(d.last.changes.jobs_deleted, [job.id]);
}

#[test]
fn a_user_task_name_that_is_an_expression_is_evaluated() {
    let mut d = Driver::of(
        r#"<startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review ${customer} (${loopCounter})">
      <multiInstanceLoopCharacteristics><loopCardinality>2</loopCardinality></multiInstanceLoopCharacteristics>
    </userTask>"#,
    );
    d.start(json!({"customer": "Ada"}));
    let names: Vec<_> = d.inst.tasks.iter().map(|t| t.name.clone().unwrap_or_default()).collect();
    assert_eq!(names, ["Review Ada (0)", "Review Ada (1)"]);
}
