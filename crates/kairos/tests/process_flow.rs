//! A process runs end to end on both backends: a deployment (and a redeploy that changes
//! nothing), user tasks, the execution tree's flags, the business key, suspension, and seed
//! 003's SQL verbatim.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::store::SqlValue;
use kairos_process::ErrorKind as kairos_process_kind;
use process_support::{LEAVE, LIMIT, TIMERS, engine, start, trace, vars};
use serde_json::{Map, json};
use std::time::Duration;

async fn a_user_task_flow_runs_with_history_and_an_unchanged_redeploy_adds_no_version(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let d1 = p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let d2 = p.deploy("leave.bpmn", LEAVE).await.unwrap();
    assert_eq!(d1.process_definitions[0].version, 1);
    assert_eq!(d2.process_definitions[0].id, d1.process_definitions[0].id, "an unchanged redeploy adds no version");
    let d3 = p.deploy("leave.bpmn", &LEAVE.replace("Leave", "Leave v2")).await.unwrap();
    assert_eq!(d3.process_definitions[0].version, 2);

    let inst = p.start(start("leaveProcess", "LEAVE001", json!({"applicant": "kermit"}))).await.unwrap();
    assert_eq!(inst.process_definition_id, d3.process_definitions[0].id, "starts the latest version");
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].task_definition_key, "fill");
    assert_eq!(tasks[0].assignee.as_deref(), Some("kermit"), "assignee expression evaluated");

    // Seed 003 §1.2 / §4.2: root + one child at the task; the query by business key finds the task.
    let execs = p.executions(&inst.id).await.unwrap();
    assert_eq!(execs.len(), 2, "{execs:?}");
    let root = execs.iter().find(|e| e.id == inst.id).unwrap();
    assert!(root.is_scope && !root.is_concurrent && root.parent_id.is_none());
    let child = execs.iter().find(|e| e.id != inst.id).unwrap();
    assert_eq!(child.activity_id.as_deref(), Some("fill"));
    assert!(child.is_active && !child.is_scope && !child.is_concurrent);
    let stuck = engine.store().sql_query(SEED_003_STUCK, &[]).await.unwrap();
    assert_eq!(stuck.len(), 1, "{stuck:?}");
    assert_eq!(stuck[0][1].as_str(), Some("fill"));
    assert_eq!(stuck[0][5].as_str(), Some("kermit"));
    let running = engine.store().sql_query(SEED_003_RUNNING, &[]).await.unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(running[0][3].as_str(), Some("leaveProcess"));

    p.complete_task(&tasks[0].id, Map::new()).await.unwrap();
    let approve = p.tasks(None, None, Some("someone"), Some("managers")).await.unwrap();
    assert!(approve.is_empty(), "candidate user AND group filters both apply");
    let approve = p.tasks(None, None, None, Some("managers")).await.unwrap();
    assert_eq!(approve.len(), 1);
    p.complete_task(&approve[0].id, vars(json!({"approved": true}))).await.unwrap();
    let done = p.instance(&inst.id).await.unwrap();
    assert!(done.ended);
    assert_eq!(trace(&engine, &inst.id).await, ["start", "fill", "approve", "gw", "notify", "end"]);
    assert!(p.executions(&inst.id).await.unwrap().is_empty(), "no runtime rows left");
    let err = p.complete_task(&approve[0].id, Map::new()).await.unwrap_err();
    assert!(err.to_string().contains("already completed"), "a completed task is a conflict: {err}");
    assert!(matches!(&err, kairos::Error::Process(e) if e.kind == kairos_process_kind::Conflict));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Seed 003 §4.1, verbatim.
const SEED_003_RUNNING: &str = "SELECT e.ID_ AS execution_id, e.PROC_INST_ID_, e.BUSINESS_KEY_, d.KEY_ AS process_key, d.NAME_ AS process_name, e.START_ACT_ID_ AS start_activity, e.ACT_ID_ AS current_activity, e.SUSPENSION_STATE_ FROM ACT_RU_EXECUTION e LEFT JOIN ACT_RE_PROCDEF d ON d.ID_ = e.PROC_DEF_ID_ WHERE e.PARENT_ID_ IS NULL ORDER BY e.START_TIME_ DESC;";

/// Seed 003 §4.2, verbatim (business key LEAVE001).
const SEED_003_STUCK: &str = "SELECT e.PROC_INST_ID_, e.ACT_ID_ AS current_activity_id, d.KEY_ AS process_key, t.ID_ AS task_id, t.NAME_ AS task_name, t.ASSIGNEE_ AS current_assignee, t.CREATE_TIME_ FROM ACT_RU_EXECUTION e LEFT JOIN ACT_RE_PROCDEF d ON d.ID_ = e.PROC_DEF_ID_ LEFT JOIN ACT_RU_TASK t ON t.EXECUTION_ID_ = e.ID_ WHERE e.BUSINESS_KEY_ = 'LEAVE001' AND e.IS_ACTIVE_ = true;";

async fn bad_deployments_are_refused_with_the_line_and_nothing_is_written(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let cases = [
        ("<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><definitions/>", "line 1"),
        (&LEAVE.replace("targetRef=\"approve\"", "targetRef=\"nowhere\"")[..], "nowhere"),
        (&LEAVE.replace("activiti:class=\"log\"", "activiti:class=\"no-such-handler\"")[..], "no-such-handler"),
        (&LEAVE.replace("<endEvent id=\"end\"/>", "<scriptTask id=\"s\"/><endEvent id=\"end\"/>")[..], "scriptTask"),
        ("<definitions", "line 1"),
        (&LEAVE.replace("${approved}", "${approved +}")[..], "yes"),
        (&TIMERS.replace("PT5S", "5 seconds")[..], "timeout"),
    ];
    for (xml, want) in cases {
        let err = p.deploy("bad.bpmn", xml).await.unwrap_err().to_string();
        assert!(err.contains(want), "error names {want}: {err}");
    }
    assert!(p.definitions_list(None, false).await.unwrap().is_empty(), "nothing deployed");
    let n = engine.store().sql_query("SELECT COUNT(*) FROM ACT_RE_DEPLOYMENT", &[]).await.unwrap();
    assert_eq!(n[0][0].as_i64(), Some(0));
    // An undefined variable in a condition is an error the caller sees, and nothing is written.
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let inst = p.start(start("leaveProcess", "U1", json!({"applicant": "x"}))).await.unwrap();
    let t = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&t.id, Map::new()).await.unwrap();
    let t = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    let err = p.complete_task(&t.id, Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("approved") && err.contains("yes"), "names the variable and the flow: {err}");
    assert_eq!(p.tasks(Some(&inst.id), None, None, None).await.unwrap()[0].id, t.id, "the task is still open");
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_suspended_instance_keeps_its_jobs_apart_and_refuses_task_completion(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("timers.bpmn", &TIMERS.replace("PT5S", "PT1H").replace("R3/PT1S", "R3/PT1H")).await.unwrap();
    let inst = p.start(start("timers", "S1", json!({}))).await.unwrap();
    wait_until(LIMIT, "the user task", || async {
        !p.tasks(Some(&inst.id), None, None, None).await.unwrap().is_empty()
    })
    .await;
    let count = |table: &'static str| {
        let store = engine.store().clone();
        let id = inst.id.clone();
        async move {
            store
                .sql_query(
                    &format!("SELECT COUNT(*) FROM {table} WHERE PROCESS_INSTANCE_ID_ = ?"),
                    &[SqlValue::Text(id)],
                )
                .await
                .unwrap()[0][0]
                .as_i64()
                .unwrap()
        }
    };
    assert_eq!((count("ACT_RU_JOB").await, count("ACT_RU_SUSPENDED_JOB").await), (2, 0));
    p.set_instance_suspended(&inst.id, true).await.unwrap();
    assert_eq!((count("ACT_RU_JOB").await, count("ACT_RU_SUSPENDED_JOB").await), (0, 2));
    let task = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    assert!(task.suspended);
    let err = p.complete_task(&task.id, Map::new()).await.unwrap_err();
    assert!(err.to_string().contains("suspended"), "{err}");
    p.set_instance_suspended(&inst.id, false).await.unwrap();
    assert_eq!((count("ACT_RU_JOB").await, count("ACT_RU_SUSPENDED_JOB").await), (2, 0));
    p.complete_task(&task.id, Map::new()).await.unwrap();
    assert!(p.instance(&inst.id).await.unwrap().ended);
    // A suspended definition refuses new starts.
    let def = p.definitions_list(Some("timers"), true).await.unwrap().remove(0);
    p.set_definition_suspended(&def.id, true).await.unwrap();
    let err = p.start(start("timers", "S2", json!({}))).await.unwrap_err();
    assert!(err.to_string().contains("suspended"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const SHAPES: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="shapes" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="a" sourceRef="start" targetRef="sub"/>
    <subProcess id="sub">
      <startEvent id="ss"/>
      <sequenceFlow id="b" sourceRef="ss" targetRef="review"/>
      <userTask id="review" camunda:assignee="${reviewer}">
        <multiInstanceLoopCharacteristics camunda:collection="${reviewers}" camunda:elementVariable="reviewer">
          <completionCondition>${nrOfCompletedInstances >= 2}</completionCondition>
        </multiInstanceLoopCharacteristics>
      </userTask>
      <sequenceFlow id="c" sourceRef="review" targetRef="se"/>
      <endEvent id="se"/>
    </subProcess>
    <sequenceFlow id="d" sourceRef="sub" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Seed 003 §5.3's IS_SCOPE_ / IS_CONCURRENT_ combinations, for a sub-process and a
/// multi-instance task inside it; the completion condition ends the body after two of three.
async fn scope_and_concurrency_flags_follow_seed_003(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("shapes.bpmn", SHAPES).await.unwrap();
    let inst = p.start(start("shapes", "MI", json!({"reviewers": ["ann", "bob", "cid"]}))).await.unwrap();
    let execs = p.executions(&inst.id).await.unwrap();
    let by_act = |a: &str| execs.iter().filter(|e| e.activity_id.as_deref() == Some(a)).collect::<Vec<_>>();
    let sub = by_act("sub");
    assert_eq!(sub.len(), 1);
    assert!(sub[0].is_scope && !sub[0].is_concurrent, "sub-process root: scope, not concurrent");
    let review = by_act("review");
    let mi_root: Vec<_> = review.iter().filter(|e| e.is_scope).collect();
    assert_eq!(mi_root.len(), 1);
    assert!(mi_root[0].is_concurrent, "multi-instance root: scope and concurrent (§5.3's rare case)");
    let children: Vec<_> = review.iter().filter(|e| !e.is_scope).collect();
    assert_eq!(children.len(), 3);
    assert!(children.iter().all(|e| e.is_concurrent && e.parent_id.as_deref() == Some(mi_root[0].id.as_str())));
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    let mut who: Vec<_> = tasks.iter().filter_map(|t| t.assignee.clone()).collect();
    who.sort();
    assert_eq!(who, ["ann", "bob", "cid"], "element variable per instance");
    p.complete_task(&tasks[0].id, Map::new()).await.unwrap();
    p.complete_task(&tasks[1].id, Map::new()).await.unwrap();
    assert!(p.instance(&inst.id).await.unwrap().ended, "the completion condition held after two");
    let hist = p.activity_history(&inst.id).await.unwrap();
    let cancelled = hist.iter().filter(|a| a.activity_id == "review" && a.delete_reason.is_some()).count();
    assert_eq!(cancelled, 1, "the third review was cancelled: {hist:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// SPEC P9: a business key can be changed; every execution and the history follow.
async fn the_business_key_can_be_changed(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let inst = p.start(start("leaveProcess", "OLD-1", json!({"applicant": "a"}))).await.unwrap();
    p.set_business_key(&inst.id, Some("LEAVE001".into())).await.unwrap();
    assert_eq!(p.instance(&inst.id).await.unwrap().business_key.as_deref(), Some("LEAVE001"));
    let stuck = engine.store().sql_query(SEED_003_STUCK, &[]).await.unwrap();
    assert_eq!(stuck.len(), 1, "seed 003 §4.2 finds the task under the new key: {stuck:?}");
    assert!(p.instances(Some("OLD-1"), None, None).await.unwrap().is_empty());
    let err = p.set_business_key(&inst.id, Some(String::new())).await.unwrap_err();
    assert!(err.to_string().contains("business key"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    the_business_key_can_be_changed,
    scope_and_concurrency_flags_follow_seed_003,
    a_suspended_instance_keeps_its_jobs_apart_and_refuses_task_completion,
    a_user_task_flow_runs_with_history_and_an_unchanged_redeploy_adds_no_version,
    bad_deployments_are_refused_with_the_line_and_nothing_is_written,
);
