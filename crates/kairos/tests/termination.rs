//! Withdraw, terminate and delete with their record (seed 002 §27), both backends: the record
//! says who, why, where the instance was, which tasks, jobs and waits were open, the business
//! state, pending external actions and the compensation plan; it is written with the end and
//! kept after it. A withdrawal is the starter's, and only before any task was completed.

mod common;
mod process_support;

use common::{Backend, Fixture};
use kairos::process::{StartRequest, TerminateRequest, TerminationKind};
use process_support::vars;
use serde_json::json;

const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="cancelRequested"/>
  <process id="contract" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="split"/>
    <parallelGateway id="split"/>
    <sequenceFlow id="f1" sourceRef="split" targetRef="legal"/>
    <sequenceFlow id="f2" sourceRef="split" targetRef="finance"/>
    <userTask id="legal" name="Legal review"/>
    <boundaryEvent id="remind" attachedToRef="legal" cancelActivity="false">
      <timerEventDefinition><timeDuration>P1D</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f3" sourceRef="remind" targetRef="reminded"/>
    <endEvent id="reminded"/>
    <userTask id="finance" name="Finance review"/>
    <boundaryEvent id="cancel" attachedToRef="finance">
      <messageEventDefinition messageRef="m"/>
    </boundaryEvent>
    <sequenceFlow id="f4" sourceRef="cancel" targetRef="cancelled"/>
    <endEvent id="cancelled"/>
    <sequenceFlow id="f5" sourceRef="legal" targetRef="join"/>
    <sequenceFlow id="f6" sourceRef="finance" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f7" sourceRef="join" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn started(e: &kairos::Engine, user: &str) -> String {
    let req = StartRequest {
        process_definition_key: Some("contract".into()),
        start_user: Some(user.into()),
        ..Default::default()
    };
    e.processes().start(req).await.unwrap().id
}

async fn a_termination_records_what_the_instance_still_had(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let e = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = e.processes();
    p.deploy("contract.bpmn", MODEL).await.unwrap();
    let pi = started(&e, "ann").await;
    let req = TerminateRequest {
        kind: TerminationKind::Terminate,
        user: Some("admin".into()),
        reason: "supplier went bankrupt".into(),
        business_state: Some("APPROVING".into()),
        pending_actions: Some("contract number C-77 reserved".into()),
        compensation_plan: Some("release C-77; notify the requester".into()),
        ..Default::default()
    };
    let r = p.terminate(&pi, &req).await.unwrap();
    assert_eq!(
        (r.kind.as_str(), r.user.as_deref(), r.reason.as_str()),
        ("TERMINATE", Some("admin"), "supplier went bankrupt")
    );
    let mut activities: Vec<String> = serde_json::from_value(r.activities.clone()).unwrap();
    activities.sort();
    assert_eq!(activities, ["finance", "legal"], "{r:?}");
    let mut tasks: Vec<&str> =
        r.tasks.as_array().unwrap().iter().map(|t| t["taskDefinitionKey"].as_str().unwrap()).collect();
    tasks.sort_unstable();
    assert_eq!(tasks, ["finance", "legal"]);
    assert_eq!(r.jobs.as_array().unwrap().len(), 1, "the reminder timer: {}", r.jobs);
    assert_eq!(r.jobs[0]["activityId"], "remind");
    assert_eq!(r.waits[0]["eventName"], "cancelRequested", "{}", r.waits);
    assert_eq!(r.business_state.as_deref(), Some("APPROVING"));
    assert_eq!(r.compensation_plan.as_deref(), Some("release C-77; notify the requester"));
    assert_eq!(r.node_id.as_deref(), Some("n1"));
    // The instance ended with it, and the record stays.
    assert!(p.tasks(Some(&pi), None, None, None).await.unwrap().is_empty());
    let hist = p.instance(&pi).await.unwrap();
    assert_eq!(hist.delete_reason.as_deref(), Some("terminate: supplier went bankrupt"));
    assert_eq!(p.termination(&pi).await.unwrap().unwrap(), r);
    // Ended once: a second termination finds nothing running and writes nothing.
    assert!(p.terminate(&pi, &req).await.is_err());
    // Bad input changes nothing.
    let other = started(&e, "ann").await;
    for (bad, field) in [
        (TerminateRequest { user: None, ..req.clone() }, "user"),
        (TerminateRequest { reason: " ".into(), ..req.clone() }, "reason"),
        (TerminateRequest { compensation_plan: Some("x".repeat(4001)), ..req.clone() }, "compensationPlan"),
    ] {
        let err = p.terminate(&other, &bad).await.unwrap_err();
        let kairos::Error::Process(pe) = &err else { panic!("{err:?}") };
        assert_eq!(pe.element_id.as_deref(), Some(field), "{err}");
    }
    assert_eq!(p.tasks(Some(&other), None, None, None).await.unwrap().len(), 2, "refused terminations changed nothing");
    // A plain delete is recorded too.
    p.delete_instance(&other, "duplicate request").await.unwrap();
    let d = p.termination(&other).await.unwrap().unwrap();
    assert_eq!((d.kind.as_str(), d.user, d.reason.as_str()), ("DELETE", None, "duplicate request"));
}

async fn only_the_starter_withdraws_and_only_before_a_task_was_done(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let e = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = e.processes();
    p.deploy("contract.bpmn", MODEL).await.unwrap();
    let withdraw = |user: &str| TerminateRequest {
        kind: TerminationKind::Withdraw,
        user: Some(user.into()),
        reason: "submitted by mistake".into(),
        ..Default::default()
    };
    let pi = started(&e, "ann").await;
    let err = p.terminate(&pi, &withdraw("bob")).await.unwrap_err();
    assert!(err.to_string().contains("only the user who started"), "{err}");
    let done = p.terminate(&pi, &withdraw("ann")).await.unwrap();
    assert_eq!(done.kind, "WITHDRAW");
    let late = started(&e, "ann").await;
    let task = p
        .tasks(Some(&late), None, None, None)
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.task_definition_key == "legal")
        .unwrap();
    p.complete_task(&task.id, vars(json!({}))).await.unwrap();
    let err = p.terminate(&late, &withdraw("ann")).await.unwrap_err();
    assert!(err.to_string().contains("too late to withdraw"), "{err}");
    assert!(p.termination(&late).await.unwrap().is_none());
    assert_eq!(
        p.tasks(Some(&late), None, None, None).await.unwrap().len(),
        1,
        "the refused withdrawal changed nothing"
    );
}

on_both_backends!(
    a_termination_records_what_the_instance_still_had,
    only_the_starter_withdraws_and_only_before_a_task_was_done,
);
