//! The process engine end to end on both backends: deployments, the execution tree, tasks,
//! timers and async continuations through the executor, optimistic locking under concurrency,
//! and seed 003's SQL verbatim.

mod common;

use common::{Backend, Fixture, wait_until};
use kairos::Engine;
use kairos::process::{MigrateRequest, StartRequest};
use kairos::store::SqlValue;
use serde_json::{Map, json};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn vars(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn start(key: &str, bk: &str, v: serde_json::Value) -> StartRequest {
    StartRequest {
        process_definition_key: Some(key.into()),
        business_key: Some(bk.into()),
        variables: vars(v),
        ..Default::default()
    }
}

const LEAVE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="leaveProcess" name="Leave" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fill"/>
    <userTask id="fill" name="Fill in" activiti:assignee="${applicant}"/>
    <sequenceFlow id="f2" sourceRef="fill" targetRef="approve"/>
    <userTask id="approve" name="Approve" activiti:candidateGroups="managers"/>
    <sequenceFlow id="f3" sourceRef="approve" targetRef="gw"/>
    <exclusiveGateway id="gw" default="no"/>
    <sequenceFlow id="yes" sourceRef="gw" targetRef="notify"><conditionExpression>${approved}</conditionExpression></sequenceFlow>
    <sequenceFlow id="no" sourceRef="gw" targetRef="rejected"/>
    <serviceTask id="notify" activiti:class="log"/>
    <sequenceFlow id="f4" sourceRef="notify" targetRef="end"/>
    <endEvent id="end"/>
    <endEvent id="rejected"/>
  </process>
</definitions>"#;

async fn engine(fx: &Fixture) -> Engine {
    let e = fx.engine("n1").build().await.unwrap();
    e.start().await.unwrap();
    e
}

async fn trace(engine: &Engine, pi: &str) -> Vec<String> {
    engine.processes().activity_history(pi).await.unwrap().into_iter().map(|a| a.activity_id).collect()
}

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

const PARALLEL10: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="p10" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="s" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    BRANCHES
    <parallelGateway id="join"/>
    <sequenceFlow id="e" sourceRef="join" targetRef="after"/>
    <userTask id="after"/>
    <sequenceFlow id="e2" sourceRef="after" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn a_parallel_join_of_ten_branches_completed_concurrently_fires_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let branches: String = (0..10)
        .map(|i| {
            format!(
                r#"<sequenceFlow id="a{i}" sourceRef="fork" targetRef="t{i}"/><userTask id="t{i}"/><sequenceFlow id="b{i}" sourceRef="t{i}" targetRef="join"/>"#
            )
        })
        .collect();
    let p = engine.processes();
    p.deploy("p10.bpmn", &PARALLEL10.replace("BRANCHES", &branches)).await.unwrap();
    let inst = p.start(start("p10", "P10", json!({}))).await.unwrap();
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.len(), 10);
    let execs = p.executions(&inst.id).await.unwrap();
    let root = execs.iter().find(|e| e.id == inst.id).unwrap();
    assert!(!root.is_active, "the root only contains the branches (seed 003 §3.2)");
    assert_eq!(execs.iter().filter(|e| e.is_concurrent && !e.is_scope).count(), 10, "§5.3: concurrent branches");
    let mut handles = Vec::new();
    for t in tasks {
        let store_url = fx.url.clone();
        handles.push(tokio::spawn(async move {
            // Each completion on its own engine (connection pool), as ten requests would be.
            let e = Engine::builder(store_url).executor_enabled(false).skip_migrations().build().await.unwrap();
            e.processes().complete_task(&t.id, Map::new()).await
        }));
    }
    for h in handles {
        h.await.unwrap().unwrap();
    }
    let after = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    let keys: Vec<_> = after.iter().map(|t| t.task_definition_key.clone()).collect();
    assert_eq!(after.len(), 1, "the join fired exactly once: {keys:?} {:?}", trace(&engine, &inst.id).await);
    assert_eq!(after[0].task_definition_key, "after");
    let joins = trace(&engine, &inst.id).await.iter().filter(|a| *a == "join").count();
    assert_eq!(joins, 1);
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn two_simultaneous_completions_of_one_task_exactly_one_wins(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    for round in 0..5 {
        let inst = p.start(start("leaveProcess", &format!("L{round}"), json!({"applicant": "a"}))).await.unwrap();
        let task = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
        let url = fx.url.clone();
        let run = |url: String, id: String| async move {
            let e = Engine::builder(url).executor_enabled(false).skip_migrations().build().await.unwrap();
            e.processes().complete_task(&id, Map::new()).await
        };
        let (a, b) = tokio::join!(run(url.clone(), task.id.clone()), run(url, task.id.clone()));
        let oks = [&a, &b].iter().filter(|r| r.is_ok()).count();
        assert_eq!(oks, 1, "exactly one completion wins: {a:?} {b:?}");
        let loser = if a.is_err() { a } else { b }.unwrap_err();
        let kind = match &loser {
            kairos::Error::Process(p) => p.kind,
            other => panic!("unexpected error {other}"),
        };
        assert!(
            matches!(kind, kairos_process_kind::Conflict | kairos_process_kind::NotFound),
            "the loser is told the task is gone or changed: {loser}"
        );
        let t = trace(&engine, &inst.id).await;
        assert_eq!(t.iter().filter(|a| *a == "fill").count(), 1, "{t:?}");
        assert_eq!(p.tasks(Some(&inst.id), None, None, None).await.unwrap().len(), 1, "only approve is open");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

use kairos_process::ErrorKind as kairos_process_kind;

const TIMERS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="timers" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="prep"/>
    <serviceTask id="prep" camunda:asyncBefore="true" camunda:class="log"/>
    <sequenceFlow id="f2" sourceRef="prep" targetRef="approve"/>
    <userTask id="approve"/>
    <boundaryEvent id="remind" attachedToRef="approve" cancelActivity="false">
      <timerEventDefinition><timeCycle>R3/PT1S</timeCycle></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f3" sourceRef="remind" targetRef="reminded"/>
    <endEvent id="reminded"/>
    <boundaryEvent id="timeout" attachedToRef="approve">
      <timerEventDefinition><timeDuration>PT5S</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f4" sourceRef="timeout" targetRef="escalated"/>
    <endEvent id="escalated"/>
    <sequenceFlow id="f5" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A cycle timer whose every fire fails once (`failedJobRetryTimeCycle` R1/PT1S: two attempts
/// per fire): each fire starts with the retries the timer was created with, as Flowable's new
/// job per fire does, so failures spread over its fires never dead-letter it.
async fn a_cycle_timer_gets_its_retries_back_on_every_fire(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let engine = fx
        .engine("n1")
        .handler(
            "flaky",
            kairos::handler_fn(move |_ctx| {
                let n = c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    if n.is_multiple_of(2) { Err("the first attempt of every fire fails".into()) } else { Ok(None) }
                }
            }),
        )
        .build()
        .await
        .unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    let model = TIMERS
        .replace("R3/PT1S</timeCycle></timerEventDefinition>", "R3/PT1S</timeCycle></timerEventDefinition>\n      <extensionElements><camunda:failedJobRetryTimeCycle>R1/PT1S</camunda:failedJobRetryTimeCycle></extensionElements>")
        .replace(r#"targetRef="reminded"/>"#, r#"targetRef="call"/>
    <serviceTask id="call" camunda:class="flaky"/>
    <sequenceFlow id="f6" sourceRef="call" targetRef="reminded"/>"#)
        .replace("PT5S", "PT1H");
    p.deploy("timers.bpmn", &model).await.unwrap();
    let inst = p.start(start("timers", "T1", json!({}))).await.unwrap();
    let store = engine.store().clone();
    let dead = || async {
        store.sql_query("SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB", &[]).await.unwrap()[0][0].as_i64().unwrap_or(0)
    };
    wait_until(LIMIT, "three reminders or a dead letter", || async {
        dead().await > 0 || trace(&engine, &inst.id).await.iter().filter(|a| *a == "remind").count() == 3
    })
    .await;
    assert_eq!(dead().await, 0, "no fire of the timer ran out of retries");
    let t = trace(&engine, &inst.id).await;
    assert_eq!(t.iter().filter(|a| *a == "call").count(), 3, "{t:?}");
    let log = store
        .job_log_list(&kairos::store::JobLogFilter { process_instance_id: Some(inst.id.clone()), ..Default::default() })
        .await
        .unwrap()
        .data;
    let remind: Vec<_> = log.iter().filter(|e| e.element_id.as_deref() == Some("remind")).map(|e| e.outcome).collect();
    use kairos::JobLogOutcome::{Failed, Rescheduled, Succeeded};
    assert_eq!(remind, [Failed, Rescheduled, Failed, Rescheduled, Failed, Succeeded], "{log:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn boundary_timers_fire_on_time_through_the_executor(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("timers.bpmn", TIMERS).await.unwrap();
    let inst = p.start(start("timers", "T1", json!({}))).await.unwrap();
    // async before: a job row, run by the executor.
    let store = engine.store().clone();
    wait_until(LIMIT, "the async job to reach the user task", || async {
        !p.tasks(Some(&inst.id), None, None, None).await.unwrap().is_empty()
    })
    .await;
    let timers = store
        .sql_query(
            "SELECT ELEMENT_ID_, TYPE_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? ORDER BY ELEMENT_ID_",
            &[SqlValue::Text(inst.id.clone())],
        )
        .await
        .unwrap();
    assert_eq!(timers.len(), 2, "{timers:?}");
    assert!(timers.iter().all(|r| r[1].as_str() == Some("timer")), "visible in ACT_RU_JOB as TYPE_ 'timer'");
    let started = std::time::Instant::now();
    wait_until(LIMIT, "the interrupting timeout to end the instance", || async {
        p.instance(&inst.id).await.unwrap().ended
    })
    .await;
    let took = started.elapsed();
    let t = trace(&engine, &inst.id).await;
    assert_eq!(t.iter().filter(|a| *a == "remind").count(), 3, "R3/PT1S fired three times while approve waited: {t:?}");
    assert!(t.contains(&"timeout".to_string()) && t.contains(&"escalated".to_string()), "{t:?}");
    assert!(!t.contains(&"end".to_string()));
    assert!(took < Duration::from_secs(20), "the PT5S timeout fired in {took:?}");
    let left = store
        .sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ?", &[SqlValue::Text(inst.id.clone())])
        .await
        .unwrap();
    assert_eq!(left[0][0].as_i64(), Some(0), "no job of the ended instance is left");
    let hist = p.activity_history(&inst.id).await.unwrap();
    let approve = hist.iter().find(|a| a.activity_id == "approve").unwrap();
    assert!(approve.delete_reason.as_deref().unwrap_or_default().contains("timeout"), "{approve:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

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

const CALLER: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="purchase" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="callExec"/>
    <callActivity id="callExec" calledElement="execution">
      <extensionElements>
        <camunda:in businessKey="${execution.processBusinessKey}"/>
        <camunda:in source="amount" target="amount"/>
        <camunda:out source="orderNo" target="orderNo"/>
      </extensionElements>
    </callActivity>
    <sequenceFlow id="f2" sourceRef="callExec" targetRef="end"/>
    <endEvent id="end"/>
  </process>
  <process id="execution" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="g1" sourceRef="s" targetRef="place"/>
    <userTask id="place"/>
    <sequenceFlow id="g2" sourceRef="place" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;

/// Seed 003 §3.3, verbatim (the sub-process root id bound for its placeholder).
const SEED_003_CALL_CHAIN: &str = "SELECT e.PROC_INST_ID_ AS sub_process_id, pe.ID_ AS caller_execution_id, pe.PROC_INST_ID_ AS parent_process_id FROM ACT_RU_EXECUTION e LEFT JOIN ACT_RU_EXECUTION pe ON pe.ID_ = e.SUPER_EXEC_ID_ WHERE e.ID_ = ?;";

async fn a_call_activity_links_the_called_instance_through_super_exec(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("purchase.bpmn", CALLER).await.unwrap();
    let parent = p.start(start("purchase", "PO-7", json!({"amount": 12}))).await.unwrap();
    let subs = p.instances(None, Some("execution"), Some(false)).await.unwrap();
    assert_eq!(subs.len(), 1);
    let sub = &subs[0];
    assert_eq!(sub.business_key.as_deref(), Some("PO-7"), "business key passed in");
    assert_eq!(sub.super_process_instance_id.as_deref(), Some(parent.id.as_str()));
    assert_eq!(p.variables(&sub.id).await.unwrap()["amount"], json!(12), "in mapping");
    let chain = engine.store().sql_query(SEED_003_CALL_CHAIN, &[SqlValue::Text(sub.id.clone())]).await.unwrap();
    assert_eq!(chain.len(), 1);
    assert_eq!(chain[0][0].as_str(), Some(sub.id.as_str()));
    let caller_exec = chain[0][1].as_str().unwrap().to_string();
    assert_eq!(chain[0][2].as_str(), Some(parent.id.as_str()));
    let parent_execs = p.executions(&parent.id).await.unwrap();
    assert!(parent_execs.iter().any(|e| e.id == caller_exec && e.activity_id.as_deref() == Some("callExec")));
    // The called instance ends: the caller goes on, with the out mapping, in the same commit.
    let task = p.tasks(Some(&sub.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&task.id, vars(json!({"orderNo": "X-1"}))).await.unwrap();
    assert!(p.instance(&sub.id).await.unwrap().ended);
    let parent_now = p.instance(&parent.id).await.unwrap();
    assert!(parent_now.ended, "the caller continued to its end");
    assert_eq!(trace(&engine, &parent.id).await, ["start", "callExec", "end"]);
    // Deleting a caller deletes what it called (P10).
    let parent2 = p.start(start("purchase", "PO-8", json!({"amount": 1}))).await.unwrap();
    p.delete_instance(&parent2.id, "order withdrawn").await.unwrap();
    let running = p.instances(None, None, Some(false)).await.unwrap();
    assert!(running.is_empty(), "{running:?}");
    let hist = p.instances(Some("PO-8"), Some("execution"), None).await.unwrap();
    assert_eq!(hist[0].delete_reason.as_deref(), Some("order withdrawn"));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A call activity with an interrupting message boundary event, calling a process that itself
/// calls another.
const CALLER_INTERRUPTED: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="cancelMsg" name="cancel"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="callFulfil"/>
    <callActivity id="callFulfil" calledElement="fulfil"/>
    <sequenceFlow id="f2" sourceRef="callFulfil" targetRef="done"/>
    <endEvent id="done"/>
    <boundaryEvent id="cancelled" attachedToRef="callFulfil"><messageEventDefinition messageRef="cancelMsg"/></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="cancelled" targetRef="refund"/>
    <userTask id="refund"/>
    <sequenceFlow id="f4" sourceRef="refund" targetRef="undone"/>
    <endEvent id="undone"/>
  </process>
  <message id="retryMsg" name="retry"/>
  <process id="retrying" isExecutable="true">
    <startEvent id="rs"/>
    <sequenceFlow id="r1" sourceRef="rs" targetRef="callAgain"/>
    <callActivity id="callAgain" calledElement="pack"/>
    <sequenceFlow id="r2" sourceRef="callAgain" targetRef="re"/>
    <endEvent id="re"/>
    <boundaryEvent id="again" attachedToRef="callAgain"><messageEventDefinition messageRef="retryMsg"/></boundaryEvent>
    <sequenceFlow id="r3" sourceRef="again" targetRef="callAgain"/>
  </process>
  <process id="fulfil" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="g1" sourceRef="s" targetRef="callPack"/>
    <callActivity id="callPack" calledElement="pack"/>
    <sequenceFlow id="g2" sourceRef="callPack" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="pack" isExecutable="true">
    <startEvent id="ps"/>
    <sequenceFlow id="h1" sourceRef="ps" targetRef="box"/>
    <userTask id="box"/>
    <sequenceFlow id="h2" sourceRef="box" targetRef="pe"/>
    <endEvent id="pe"/>
  </process>
</definitions>"#;

/// An interrupted call activity takes what it called with it (Flowable deletes the called
/// instance): nothing is left running that would later try to continue a caller that moved on.
async fn an_interrupted_call_activity_deletes_the_instances_it_called(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("order.bpmn", CALLER_INTERRUPTED).await.unwrap();
    let order = p.start(start("order", "O-1", json!({}))).await.unwrap();
    let running = p.instances(None, None, Some(false)).await.unwrap();
    assert_eq!(running.len(), 3, "order → fulfil → pack: {running:?}");
    p.message("cancel", Some(&order.id), None, Map::new()).await.unwrap();
    let running: Vec<String> =
        p.instances(None, None, Some(false)).await.unwrap().into_iter().map(|i| i.process_definition_key).collect();
    assert_eq!(running, ["order"], "the called instances went with the call activity");
    for key in ["fulfil", "pack"] {
        let hist = p.instances(None, Some(key), None).await.unwrap();
        assert_eq!(hist.len(), 1, "{key}: {hist:?}");
        assert!(hist[0].ended, "{key} ended");
        let reason = hist[0].delete_reason.clone().unwrap_or_default();
        assert!(reason.contains("callFulfil"), "{key}: {reason}");
    }
    assert!(p.tasks(None, None, None, None).await.unwrap().iter().all(|t| t.task_definition_key == "refund"));
    let refund = p.tasks(Some(&order.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&refund.id, Map::new()).await.unwrap();
    assert!(p.instance(&order.id).await.unwrap().ended);
    assert_eq!(trace(&engine, &order.id).await, ["start", "callFulfil", "cancelled", "refund", "undone"]);

    // Interrupted and called again at once (the same execution): the first call goes, the
    // second one's end moves the caller on.
    let retrying = p.start(start("retrying", "R-1", json!({}))).await.unwrap();
    let packs = || async { p.instances(None, Some("pack"), Some(false)).await.unwrap() };
    let first = packs().await;
    assert_eq!(first.len(), 1, "{first:?}");
    p.message("retry", Some(&retrying.id), None, Map::new()).await.unwrap();
    let second = packs().await;
    assert_eq!(second.len(), 1, "the first call went, a second one runs: {second:?}");
    assert_ne!(second[0].id, first[0].id);
    let box_task = p.tasks(Some(&second[0].id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&box_task.id, Map::new()).await.unwrap();
    assert!(p.instance(&retrying.id).await.unwrap().ended, "the caller moved on");
    assert_eq!(trace(&engine, &retrying.id).await, ["rs", "callAgain", "again", "callAgain", "re"]);
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

const STARTS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m1" name="newOrder"/>
  <signal id="s1" name="goLive"/>
  <process id="byMessage" isExecutable="true">
    <startEvent id="onOrder"><messageEventDefinition messageRef="m1"/></startEvent>
    <sequenceFlow id="a" sourceRef="onOrder" targetRef="t"/>
    <userTask id="t"/>
    <sequenceFlow id="b" sourceRef="t" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="bySignal" isExecutable="true">
    <startEvent id="onGoLive"><signalEventDefinition signalRef="s1"/></startEvent>
    <sequenceFlow id="c" sourceRef="onGoLive" targetRef="e2"/>
    <endEvent id="e2"/>
  </process>
  <process id="byTimer" isExecutable="true">
    <startEvent id="every"><timerEventDefinition><timeCycle>R2/PT1S</timeCycle></timerEventDefinition></startEvent>
    <sequenceFlow id="d" sourceRef="every" targetRef="e3"/>
    <endEvent id="e3"/>
  </process>
</definitions>"#;

async fn message_signal_and_timer_start_events_start_instances(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("starts.bpmn", STARTS).await.unwrap();
    let timer_jobs = engine
        .store()
        .sql_query("SELECT TYPE_, REPEAT_ FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'timer-start-event'", &[])
        .await
        .unwrap();
    assert_eq!(timer_jobs.len(), 1, "one timer job for the timer start event: {timer_jobs:?}");
    let id = p.message("newOrder", None, Some("ORD-1"), vars(json!({"total": 3}))).await.unwrap();
    let inst = p.instance(&id).await.unwrap();
    assert_eq!((inst.process_definition_key.as_str(), inst.business_key.as_deref()), ("byMessage", Some("ORD-1")));
    assert_eq!(trace(&engine, &id).await, ["onOrder", "t"]);
    assert_eq!(p.signal("goLive", Map::new()).await.unwrap(), 1);
    assert_eq!(p.instances(None, Some("bySignal"), Some(true)).await.unwrap().len(), 1);
    wait_until(LIMIT, "the R2/PT1S timer start to start two instances", || async {
        p.instances(None, Some("byTimer"), Some(true)).await.unwrap().len() == 2
    })
    .await;
    let err = p.message("noSuchMessage", None, None, Map::new()).await.unwrap_err().to_string();
    assert!(err.contains("noSuchMessage"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const CRON_START: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="everySecond" isExecutable="true">
    <startEvent id="tick"><timerEventDefinition><timeCycle>* * * * * ?</timeCycle></timerEventDefinition></startEvent>
    <sequenceFlow id="f" sourceRef="tick" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;

/// Issue 4: a timer start event with a Quartz cron starts instances on schedule, its job waiting
/// in ACT_RU_JOB as a timer (REPEAT_ keeps the cron) between fires.
async fn a_cron_timer_start_event_starts_instances_on_schedule(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("cron.bpmn", CRON_START).await.unwrap();
    let job = || async {
        engine
            .store()
            .sql_query("SELECT TYPE_, REPEAT_, DUEDATE_ FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'timer-start-event'", &[])
            .await
            .unwrap()
    };
    let first = job().await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!((first[0][0].as_str(), first[0][1].as_str()), (Some("timer"), Some("* * * * * ?")));
    let due = first[0][2].as_timestamp().unwrap();
    assert_eq!(due.subsec_nanosecond(), 0, "due on a whole second: {due}");
    wait_until(LIMIT, "three instances started by the cron", || async {
        p.instances(None, Some("everySecond"), None).await.unwrap().len() >= 3
    })
    .await;
    let mut starts: Vec<_> =
        p.instances(None, Some("everySecond"), None).await.unwrap().into_iter().filter_map(|i| i.start_time).collect();
    starts.sort();
    assert!(starts[0] >= due, "not before its fire time: {:?} vs {due}", starts[0]);
    let again = job().await;
    assert_eq!(again.len(), 1, "one row, moved on: {again:?}");
    assert!(again[0][2].as_timestamp().unwrap() > due, "the timer moved to a later fire time");
    let bad = p.deploy("bad.bpmn", &CRON_START.replace("* * * * * ?", "0 61 * * * ?")).await.unwrap_err().to_string();
    assert!(bad.contains("minute field, position 3"), "{bad}");
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

const EXCLUSIVE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="excl" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="a" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="b" sourceRef="fork" targetRef="one"/>
    <sequenceFlow id="c" sourceRef="fork" targetRef="two"/>
    <serviceTask id="one" camunda:asyncBefore="true" camunda:class="slow"/>
    <serviceTask id="two" camunda:asyncBefore="true" camunda:class="slow"/>
    <sequenceFlow id="d" sourceRef="one" targetRef="join"/>
    <sequenceFlow id="e" sourceRef="two" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f" sourceRef="join" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Two exclusive async jobs of one instance never run at the same time (their EXCLUSIVE_KEY_ is
/// the instance), while jobs of different instances do.
async fn exclusive_async_jobs_of_one_instance_never_overlap(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    type Runs = std::sync::Arc<std::sync::Mutex<Vec<(String, std::time::Instant, std::time::Instant)>>>;
    let runs: Runs = Default::default();
    let r = runs.clone();
    let engine = fx
        .engine("n1")
        .handler(
            "slow",
            kairos::handler_fn(move |ctx| {
                let r = r.clone();
                async move {
                    let t0 = std::time::Instant::now();
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    let pi = ctx.process_instance_id.clone().unwrap_or_default();
                    r.lock().unwrap().push((pi, t0, std::time::Instant::now()));
                    Ok(None)
                }
            }),
        )
        .build()
        .await
        .unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    p.deploy("excl.bpmn", EXCLUSIVE).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(p.start(start("excl", &format!("E{i}"), json!({}))).await.unwrap().id);
    }
    wait_until(LIMIT, "every instance to end", || async {
        let mut all = true;
        for id in &ids {
            all &= p.instance(id).await.unwrap().ended;
        }
        all
    })
    .await;
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 8, "two service tasks per instance ran once each");
    for id in &ids {
        let mine: Vec<_> = runs.iter().filter(|r| &r.0 == id).collect();
        assert_eq!(mine.len(), 2);
        let (a, b) = (mine[0], mine[1]);
        assert!(a.2 <= b.1 || b.2 <= a.1, "the two jobs of instance {id} overlapped");
    }
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

/// An instance is loaded as JSON built by the database (rows::load): every kind of value must
/// come back as it was stored, extremes and odd text included.
async fn variables_of_every_kind_come_back_unchanged(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let given = json!({
        "applicant": "a",
        "max": i64::MAX,
        "min": i64::MIN,
        "huge": 1.5e300,
        "tenth": 0.1,
        "negative": -2.75,
        "text": "quote \" backslash \\ newline \n tab \t ü 😀 ' %s $1 ?",
        "empty": "",
        "yes": true,
        "no": false,
        "nothing": null,
        "object": {"a": [1, 2.5, "x", null], "b": {"c": true}},
    });
    let inst = p.start(start("leaveProcess", "VARS-1", given.clone())).await.unwrap();
    assert_eq!(serde_json::Value::Object(p.variables(&inst.id).await.unwrap()), given);
    // Changed through a command (load, compare, write back), then read again.
    let changed = json!({"max": -1, "text": "second ✓", "nothing": 7});
    p.set_variables(&inst.id, vars(changed.clone())).await.unwrap();
    let mut want = given.as_object().cloned().unwrap();
    want.extend(vars(changed));
    assert_eq!(p.variables(&inst.id).await.unwrap(), want);
    // The loaded instance still runs: the task's assignee came from a variable.
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.iter().map(|t| t.assignee.as_deref()).collect::<Vec<_>>(), vec![Some("a")]);
    p.complete_task(&tasks[0].id, Map::new()).await.unwrap();
    assert_eq!(trace(&engine, &inst.id).await, ["start", "fill", "approve"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

fn short_lived(key: &str, ttl: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="{key}" isExecutable="true" {ttl}>
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <serviceTask id="work" camunda:class="log"/>
    <sequenceFlow id="f2" sourceRef="work" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#
    )
}

/// SPEC P11: history past its definition's time to live goes, in batches, through the call and
/// the running engine's loop; running instances and definitions without one keep theirs.
async fn history_past_its_time_to_live_is_cleaned_up(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").history_cleanup_every(Some(Duration::from_millis(200))).build().await.unwrap();
    let p = engine.processes();
    p.deploy("gone.bpmn", &short_lived("gone", r#"camunda:historyTimeToLive="0""#)).await.unwrap();
    p.deploy("kept.bpmn", &short_lived("kept", r#"camunda:historyTimeToLive="P30D""#)).await.unwrap();
    p.deploy("forever.bpmn", &short_lived("forever", "")).await.unwrap();
    p.deploy("leave.bpmn", &LEAVE.replace(r#"name="Leave""#, r#"activiti:historyTimeToLive="0""#)).await.unwrap();
    let mut gone = Vec::new();
    for _ in 0..3 {
        gone.push(p.start(start("gone", "G", json!({}))).await.unwrap().id);
    }
    let kept = p.start(start("kept", "K", json!({}))).await.unwrap().id;
    let forever = p.start(start("forever", "F", json!({}))).await.unwrap().id;
    let running = p.start(start("leaveProcess", "R", json!({"applicant": "a"}))).await.unwrap().id;
    let ttl =
        engine.store().sql_query("SELECT KEY_, HISTORY_TTL_ FROM ACT_RE_PROCDEF ORDER BY KEY_", &[]).await.unwrap();
    assert_eq!(ttl[2][1], SqlValue::Int(30), "P30D is kept as 30 days: {ttl:?}");
    let history = |id: String| {
        let store = engine.store().clone();
        async move {
            let mut n = 0;
            for table in ["ACT_HI_PROCINST", "ACT_HI_ACTINST"] {
                let sql = format!("SELECT COUNT(*) FROM {table} WHERE PROC_INST_ID_ = ?");
                n += store.sql_query(&sql, &[SqlValue::Text(id.clone())]).await.unwrap()[0][0].as_i64().unwrap();
            }
            n
        }
    };
    tokio::time::sleep(Duration::from_millis(20)).await; // ended before the cleanup's now
    assert_eq!(p.clean_history(1).await.unwrap(), 1, "one batch of one");
    let mut left = 0;
    for id in &gone {
        left += usize::from(history(id.clone()).await > 0);
    }
    assert_eq!(left, 2);
    engine.start().await.unwrap();
    wait_until(LIMIT, "the engine's cleanup loop deletes the rest", || async {
        let mut rows = 0;
        for id in &gone {
            rows += history(id.clone()).await;
        }
        rows == 0
    })
    .await;
    for id in [kept, forever, running] {
        assert!(history(id.clone()).await > 0, "instance {id} keeps its history");
    }
    assert_eq!(p.clean_history(100).await.unwrap(), 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// The job log keeps rows for its retention time, then the cleanup deletes them in batches.
async fn the_job_log_is_kept_for_its_retention_time(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    for _ in 0..3 {
        let req = kairos::EnqueueRequest { handler: "log".into(), payload: Some(json!({})), ..Default::default() };
        engine.enqueue(&req).await.unwrap();
    }
    let store = engine.store().clone();
    let logged = || {
        let store = store.clone();
        async move { store.sql_query("SELECT COUNT(*) FROM ACT_HI_JOB_LOG", &[]).await.unwrap()[0][0].as_i64().unwrap() }
    };
    wait_until(LIMIT, "three attempts logged", || async { logged().await == 3 }).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let p = engine.processes();
    assert_eq!(p.clean_job_log(kairos::SignedDuration::from_hours(24), 10).await.unwrap(), 0, "a day: all kept");
    assert_eq!(p.clean_job_log(kairos::SignedDuration::ZERO, 2).await.unwrap(), 2, "a batch of two");
    assert_eq!(logged().await, 1);
    assert_eq!(p.clean_job_log(kairos::SignedDuration::ZERO, 2).await.unwrap(), 1);
    assert_eq!(logged().await, 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Idempotent starts (SPEC C2) from the library: a retry gets the first instance until the
/// requestId is forgotten after its retention; then the same request starts a new one.
async fn a_request_id_is_remembered_for_its_retention_time(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("leave.bpmn", LEAVE).await.unwrap();
    let req =
        StartRequest { request_id: Some("r-1".into()), ..start("leaveProcess", "B-1", json!({"applicant": "kermit"})) };
    let first = p.start(req.clone()).await.unwrap();
    assert_eq!(p.start(req.clone()).await.unwrap().id, first.id, "a retry gets the first instance");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(p.clean_requests(kairos::SignedDuration::from_hours(24), 10).await.unwrap(), 0, "a day: kept");
    assert_eq!(p.start(req.clone()).await.unwrap().id, first.id);
    assert_eq!(p.clean_requests(kairos::SignedDuration::ZERO, 10).await.unwrap(), 1);
    let later = p.start(req).await.unwrap();
    assert_ne!(later.id, first.id, "forgotten: the same request starts a new instance");
    assert_eq!(p.instances(Some("B-1"), Some("leaveProcess"), Some(false)).await.unwrap().len(), 2);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Concurrent duplicate completions (one requestId) all succeed and complete the task once,
/// with and without task history; a retry after them succeeds, a plain completion does not.
/// (Without history a loser that looks the task up only after the winner's commit finds no
/// trace of it, a NotFound that `settle` also resolves; that interleaving is not forced here.)
async fn duplicate_completions_succeed_once_at_every_history_level(backend: Backend) {
    for level in [kairos::process::HistoryLevel::None, kairos::process::HistoryLevel::Audit] {
        let Some(fx) = Fixture::new(backend).await else { return };
        let engine = fx.engine("n1").history_level(level).build().await.unwrap();
        engine.start().await.unwrap();
        let p = engine.processes();
        p.deploy("leave.bpmn", LEAVE).await.unwrap();
        let pi = p.start(start("leaveProcess", "L-1", json!({"applicant": "kermit"}))).await.unwrap().id;
        let task = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
        let complete = || p.complete_task_once(&task.id, Map::new(), "done-1");
        let (a, b, c) = tokio::join!(complete(), complete(), complete());
        for r in [a, b, c] {
            r.unwrap_or_else(|e| panic!("{level:?}: every duplicate succeeds: {e}"));
        }
        let tasks = p.tasks(Some(&pi), None, None, None).await.unwrap();
        let keys: Vec<&str> = tasks.iter().map(|t| t.task_definition_key.as_str()).collect();
        assert_eq!(keys, ["approve"], "{level:?}: the fill task was completed once");
        complete().await.unwrap();
        let err = p.complete_task(&task.id, Map::new()).await.unwrap_err();
        assert!(
            matches!(&err, kairos::Error::Process(e) if matches!(e.kind, kairos_process_kind::Conflict | kairos_process_kind::NotFound)),
            "{err}"
        );
        engine.shutdown(Duration::from_secs(5)).await;
    }
}

const SIGNALS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <signal id="goSignal" name="go"/>
  <process id="thrower" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="t1" sourceRef="start" targetRef="throw"/>
    <intermediateThrowEvent id="throw"><signalEventDefinition signalRef="goSignal"/></intermediateThrowEvent>
    <sequenceFlow id="t2" sourceRef="throw" targetRef="end"/>
    <endEvent id="end"/>
  </process>
  <process id="catcher" isExecutable="true">
    <startEvent id="begin"/>
    <sequenceFlow id="c1" sourceRef="begin" targetRef="wait"/>
    <intermediateCatchEvent id="wait"><signalEventDefinition signalRef="goSignal"/></intermediateCatchEvent>
    <sequenceFlow id="c2" sourceRef="wait" targetRef="done"/>
    <endEvent id="done"/>
  </process>
</definitions>"#;

/// SPEC P7: a signal thrown in one instance reaches the instances waiting for it elsewhere,
/// through a job committed with the throw (delivered after the commit, never lost).
async fn a_signal_thrown_in_one_instance_reaches_the_others(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("signals.bpmn", SIGNALS).await.unwrap();
    let waiting: Vec<String> = {
        let mut v = Vec::new();
        for bk in ["W1", "W2"] {
            v.push(p.start(start("catcher", bk, json!({}))).await.unwrap().id);
        }
        v
    };
    let thrower = p.start(start("thrower", "T", json!({}))).await.unwrap();
    assert!(thrower.ended, "the thrower runs through: the delivery is not its work");
    for id in &waiting {
        let id = id.clone();
        wait_until(LIMIT, "the catcher got the signal", || {
            let (engine, id) = (&engine, id.clone());
            async move { trace(engine, &id).await == ["begin", "wait", "done"] }
        })
        .await;
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

const SIGNAL_BOUNDARY: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <signal id="goSignal" name="go"/>
  <process id="thrower" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="t1" sourceRef="start" targetRef="throw"/>
    <intermediateThrowEvent id="throw"><signalEventDefinition signalRef="goSignal"/></intermediateThrowEvent>
    <sequenceFlow id="t2" sourceRef="throw" targetRef="end"/>
    <endEvent id="end"/>
  </process>
  <process id="watcher" isExecutable="true">
    <startEvent id="begin"/>
    <sequenceFlow id="w1" sourceRef="begin" targetRef="work"/>
    <userTask id="work"/>
    <sequenceFlow id="w2" sourceRef="work" targetRef="done"/>
    <endEvent id="done"/>
    <boundaryEvent id="heard" attachedToRef="work" cancelActivity="false"><signalEventDefinition signalRef="goSignal"/></boundaryEvent>
    <sequenceFlow id="w3" sourceRef="heard" targetRef="note"/>
    <userTask id="note"/>
    <sequenceFlow id="w4" sourceRef="note" targetRef="noted"/>
    <endEvent id="noted"/>
  </process>
</definitions>"#;

/// A signal's delivery job that fails half-way (the database gone for one delivery) is
/// retried; the instances its first attempt reached are not signalled again: a
/// non-interrupting signal boundary event fires once in each.
async fn a_retried_signal_delivery_reaches_each_instance_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = common::faulty::Faulty::open(&fx).await;
    let engine = fx.engine("n1").store(db.clone()).build().await.unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    p.deploy("signal-boundary.bpmn", SIGNAL_BOUNDARY).await.unwrap();
    let mut watchers = Vec::new();
    for bk in ["W1", "W2", "W3"] {
        watchers.push(p.start(start("watcher", bk, json!({}))).await.unwrap().id);
    }
    // Deliveries go in instance order: the first two commit, the third fails, the job retries.
    db.fail_write_binding(&watchers[2]);
    p.start(start("thrower", "T", json!({}))).await.unwrap();
    let store = engine.store().clone();
    let count = |sql: &'static str| {
        let store = store.clone();
        async move { store.sql_query(sql, &[]).await.unwrap()[0][0].as_i64().unwrap() }
    };
    wait_until(LIMIT, "the delivery job failed once, then succeeded", || async {
        count("SELECT COUNT(*) FROM ACT_HI_JOB_LOG WHERE HANDLER_TYPE_ = 'signal-throw' AND OUTCOME_ = 'failed'").await
            == 1
            && count(
                "SELECT COUNT(*) FROM ACT_HI_JOB_LOG WHERE HANDLER_TYPE_ = 'signal-throw' AND OUTCOME_ = 'succeeded'",
            )
            .await
                == 1
    })
    .await;
    for id in &watchers {
        let notes = p.tasks(Some(id), None, None, None).await.unwrap();
        let keys: Vec<&str> = notes.iter().map(|t| t.task_definition_key.as_str()).collect();
        assert_eq!(keys.iter().filter(|k| **k == "note").count(), 1, "instance {id} heard the signal once: {keys:?}");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

const PEOPLE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="people" isExecutable="true">
    <startEvent id="start" flowable:initiator="initiator"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" flowable:assignee="${initiator}" flowable:candidateUsers="${reviewers}" flowable:candidateGroups="${groups}"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Assignee and candidate expressions as Flowable and Camunda read them: null is nobody (the
/// initiator variable of an instance nobody known started is null), a list gives one candidate
/// per item; a list as the assignee or an undefined variable is an error that starts nothing.
async fn people_expressions_take_null_and_lists(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("people.bpmn", PEOPLE).await.unwrap();
    let inst = p.start(start("people", "P1", json!({"reviewers": ["gonzo", "piggy"], "groups": null}))).await.unwrap();
    let tasks = p.tasks(Some(&inst.id), None, None, None).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].assignee, None, "a null ${{initiator}} leaves the task unassigned");
    assert_eq!(p.tasks(None, None, Some("piggy"), None).await.unwrap().len(), 1, "each list item is a candidate");
    let vars = p.variables(&inst.id).await.unwrap();
    assert_eq!(vars.get("initiator"), Some(&serde_json::Value::Null), "{vars:?}");

    let by_kermit = StartRequest {
        start_user: Some("kermit".into()),
        ..start("people", "P2", json!({"reviewers": "gonzo, piggy", "groups": "editors"}))
    };
    let inst = p.start(by_kermit).await.unwrap();
    let t = &p.tasks(Some(&inst.id), None, None, None).await.unwrap()[0];
    assert_eq!(t.assignee.as_deref(), Some("kermit"));
    assert_eq!(p.tasks(None, None, None, Some("editors")).await.unwrap().len(), 0, "assigned tasks are not offered");

    let before = p.instances(None, Some("people"), None).await.unwrap().len();
    let err = p
        .start(start("people", "P3", json!({"initiator": ["a", "b"], "reviewers": null, "groups": null})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("gave a list; one user id or null is needed"), "{err}");
    let err = p.start(start("people", "P4", json!({"groups": null}))).await.unwrap_err();
    assert!(err.to_string().contains("undefined variable 'reviewers'"), "{err}");
    assert_eq!(p.instances(None, Some("people"), None).await.unwrap().len(), before, "nothing started");
    engine.shutdown(Duration::from_secs(5)).await;
}

const IO: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <message id="m" name="stop"/>
  <process id="io" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="greeting">Hello ${name}</camunda:inputParameter>
          <camunda:inputParameter name="limit">${total * 2}</camunda:inputParameter>
          <camunda:inputParameter name="twice">${limit + limit}</camunda:inputParameter>
          <camunda:inputParameter name="items"><camunda:list><camunda:value>${name}</camunda:value><camunda:value>fixed</camunda:value></camunda:list></camunda:inputParameter>
          <camunda:inputParameter name="cfg"><camunda:map><camunda:entry key="max">${total}</camunda:entry><camunda:entry key="none"></camunda:entry></camunda:map></camunda:inputParameter>
          <camunda:inputParameter name="nothing"></camunda:inputParameter>
          <camunda:outputParameter name="result">${greeting}</camunda:outputParameter>
          <camunda:outputParameter name="doubled">${twice}</camunda:outputParameter>
          <camunda:outputParameter name="both">${items}</camunda:outputParameter>
          <camunda:outputParameter name="settings">${cfg}</camunda:outputParameter>
          <camunda:outputParameter name="approvedCopy">${approved}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </userTask>
    <sequenceFlow id="f2" sourceRef="review" targetRef="wait"/>
    <userTask id="wait">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="scratch">temporary</camunda:inputParameter>
          <camunda:outputParameter name="leaked">${scratch}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </userTask>
    <boundaryEvent id="stopped" attachedToRef="wait"><messageEventDefinition messageRef="m"/></boundaryEvent>
    <sequenceFlow id="f3" sourceRef="wait" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="stopped" targetRef="last"/>
    <userTask id="last"/>
    <sequenceFlow id="f5" sourceRef="last" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Camunda's input/output mappings: inputs are local to the activity while it runs (later
/// ones see earlier ones; text, expressions, lists, maps, null); outputs see them and land in
/// the enclosing scope when it completes; then the inputs are gone. An interrupted activity
/// maps no outputs and leaves no inputs behind.
async fn input_output_mappings_scope_variables_to_their_activity(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("io.bpmn", IO).await.unwrap();
    let inst = p.start(start("io", "IO1", json!({"name": "kermit", "total": 20}))).await.unwrap();
    let task = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    let names_at = |exec: String| {
        let store = engine.store().clone();
        async move {
            let rows = store
                .sql_query(
                    "SELECT NAME_ FROM ACT_RU_VARIABLE WHERE EXECUTION_ID_ = ? ORDER BY NAME_",
                    &[SqlValue::Text(exec)],
                )
                .await
                .unwrap();
            rows.iter().map(|r| r[0].as_str().unwrap().to_string()).collect::<Vec<_>>()
        }
    };
    assert_eq!(names_at(task.execution_id.clone()).await, ["cfg", "greeting", "items", "limit", "nothing", "twice"]);
    let root = p.variables(&inst.id).await.unwrap();
    assert!(!root.contains_key("greeting"), "inputs stay local: {root:?}");

    p.complete_task(&task.id, vars(json!({"approved": true}))).await.unwrap();
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("result"), Some(&json!("Hello kermit")));
    assert_eq!(root.get("doubled"), Some(&json!(80)));
    assert_eq!(root.get("both"), Some(&json!(["kermit", "fixed"])));
    assert_eq!(root.get("settings"), Some(&json!({"max": 20, "none": null})));
    assert_eq!(root.get("approvedCopy"), Some(&json!(true)));
    let wait = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    assert_eq!(names_at(wait.execution_id.clone()).await, ["scratch"], "review's inputs are gone");

    p.message("stop", Some(&inst.id), None, Map::new()).await.unwrap();
    let all = engine
        .store()
        .sql_query("SELECT NAME_ FROM ACT_RU_VARIABLE WHERE PROC_INST_ID_ = ?", &[SqlValue::Text(inst.id.clone())])
        .await
        .unwrap();
    let all: Vec<&str> = all.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(!all.contains(&"scratch") && !all.contains(&"leaked"), "interrupted: no inputs left, no outputs: {all:?}");
    assert_eq!(p.tasks(Some(&inst.id), None, None, None).await.unwrap()[0].task_definition_key, "last");
    engine.shutdown(Duration::from_secs(5)).await;
}

const IO_MI: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="ioMi" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="each"/>
    <userTask id="each">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="label">#${loopCounter}: ${item}</camunda:inputParameter>
          <camunda:outputParameter name="lastLabel">${label}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
      <multiInstanceLoopCharacteristics isSequential="true" camunda:collection="${items}" camunda:elementVariable="item"/>
    </userTask>
    <sequenceFlow id="f2" sourceRef="each" targetRef="work"/>
    <serviceTask id="work" camunda:class="log" camunda:asyncAfter="true">
      <extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="x">one</camunda:inputParameter>
          <camunda:outputParameter name="y">${x}</camunda:outputParameter>
        </camunda:inputOutput>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f3" sourceRef="work" targetRef="done"/>
    <userTask id="done"/>
    <sequenceFlow id="f4" sourceRef="done" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Input/output mappings run per multi-instance instance (seeing its loopCounter and element
/// variable), and once across an async-after job.
async fn input_output_mappings_per_instance_and_across_async_after(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("io-mi.bpmn", IO_MI).await.unwrap();
    let inst = p.start(start("ioMi", "IO2", json!({"items": ["a", "b"]}))).await.unwrap();
    for _ in 0..2 {
        let t = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
        p.complete_task(&t.id, Map::new()).await.unwrap();
    }
    wait_until(LIMIT, "the async-after job to reach the last task", || async {
        p.tasks(Some(&inst.id), None, None, None).await.unwrap().iter().any(|t| t.task_definition_key == "done")
    })
    .await;
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("lastLabel"), Some(&json!("#1: b")), "{root:?}");
    assert_eq!(root.get("y"), Some(&json!("one")), "{root:?}");
    let left = engine
        .store()
        .sql_query("SELECT NAME_ FROM ACT_RU_VARIABLE WHERE PROC_INST_ID_ = ?", &[SqlValue::Text(inst.id.clone())])
        .await
        .unwrap();
    let left: Vec<&str> = left.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(!left.contains(&"label") && !left.contains(&"x"), "inputs are gone: {left:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const CAUGHT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="caught" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge"/>
    <boundaryEvent id="anyError" attachedToRef="charge">
      <errorEventDefinition camunda:errorCodeVariable="errorCode" camunda:errorMessageVariable="errorMessage"/>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="charge" targetRef="end"/>
    <sequenceFlow id="f3" sourceRef="anyError" targetRef="decide"/>
    <exclusiveGateway id="decide"/>
    <sequenceFlow id="f4" sourceRef="decide" targetRef="retryLater"><conditionExpression>${errorCode == 'CARD_EXPIRED'}</conditionExpression></sequenceFlow>
    <sequenceFlow id="f5" sourceRef="decide" targetRef="end"><conditionExpression>${errorCode != 'CARD_EXPIRED'}</conditionExpression></sequenceFlow>
    <userTask id="retryLater"/>
    <sequenceFlow id="f6" sourceRef="retryLater" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A catch-all error boundary stores the caught code in its `camunda:errorCodeVariable` (and
/// null in its message variable), so the flow after it can tell errors apart.
async fn a_caught_error_code_is_stored_in_its_variable(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("caught.bpmn", CAUGHT).await.unwrap();
    let inst = p.start(start("caught", "E1", json!({}))).await.unwrap();
    let got = p.external_acquire("charge", kairos::SignedDuration::from_mins(1), 1, "w1").await.unwrap();
    p.external_bpmn_error(&got[0].id, "w1", "CARD_EXPIRED", Map::new()).await.unwrap();
    let root = p.variables(&inst.id).await.unwrap();
    assert_eq!(root.get("errorCode"), Some(&json!("CARD_EXPIRED")), "{root:?}");
    assert_eq!(root.get("errorMessage"), Some(&json!(null)), "{root:?}");
    assert_eq!(trace(&engine, &inst.id).await, ["start", "charge", "anyError", "decide", "retryLater"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

const REPEATABLE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="nudge"/>
  <message id="ms" name="open"/>
  <signal id="s" name="alarm"/>
  <process id="repeatable" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <userTask id="wait"/>
    <boundaryEvent id="nudged" attachedToRef="wait" cancelActivity="false"><messageEventDefinition messageRef="m"/></boundaryEvent>
    <boundaryEvent id="alarmed" attachedToRef="wait" cancelActivity="false"><signalEventDefinition signalRef="s"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="end"/>
    <sequenceFlow id="f3" sourceRef="nudged" targetRef="note"/>
    <sequenceFlow id="f4" sourceRef="alarmed" targetRef="note"/>
    <userTask id="note"/>
    <sequenceFlow id="f5" sourceRef="note" targetRef="end"/>
    <endEvent id="end"/>
  </process>
  <process id="byMessage" isExecutable="true">
    <startEvent id="ms_start"><messageEventDefinition messageRef="ms"/></startEvent>
    <sequenceFlow id="g1" sourceRef="ms_start" targetRef="opened"/>
    <userTask id="opened"/>
    <sequenceFlow id="g2" sourceRef="opened" targetRef="ms_end"/>
    <endEvent id="ms_end"/>
  </process>
</definitions>"#;

/// Messages and signals take a requestId too (SPEC C2): a retry answers as the first call did
/// and has no second effect (a non-interrupting boundary, which would fire again, counts
/// them); concurrent duplicates have one effect; the same requestId for another request is a
/// 409 naming requestId.
async fn messages_and_signals_are_idempotent_by_request_id(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("repeatable.bpmn", REPEATABLE).await.unwrap();
    let a = p.start(start("repeatable", "A", json!({}))).await.unwrap().id;
    let b = p.start(start("repeatable", "B", json!({}))).await.unwrap().id;
    let notes = |pi: String| {
        let p = engine.processes();
        async move {
            let tasks = p.tasks(Some(&pi), None, None, None).await.unwrap();
            tasks.iter().filter(|t| t.task_definition_key == "note").count()
        }
    };
    for _ in 0..2 {
        let got = p.message_once("nudge", Some(&a), None, Map::new(), "msg-1").await.unwrap();
        assert_eq!(got, a);
    }
    assert_eq!(notes(a.clone()).await, 1, "the retry delivered nothing");
    let err = p.message_once("nudge", Some(&a), None, vars(json!({"x": 1})), "msg-1").await.unwrap_err();
    assert!(err.to_string().contains("requestId 'msg-1' was already used"), "{err}");

    let (x, y) = tokio::join!(
        p.message_once("nudge", None, Some("B"), Map::new(), "msg-2"),
        p.message_once("nudge", None, Some("B"), Map::new(), "msg-2"),
    );
    assert_eq!((x.unwrap(), y.unwrap()), (b.clone(), b.clone()));
    assert_eq!(notes(b.clone()).await, 1, "concurrent duplicates delivered once");

    let first = p.message_once("open", None, Some("OPEN-1"), Map::new(), "msg-3").await.unwrap();
    let again = p.message_once("open", None, Some("OPEN-1"), Map::new(), "msg-3").await.unwrap();
    assert_eq!(first, again, "a message start is not repeated");
    assert_eq!(p.instances(None, Some("byMessage"), None).await.unwrap().len(), 1);

    let (x, y) = tokio::join!(p.signal_once("alarm", Map::new(), "sig-1"), p.signal_once("alarm", Map::new(), "sig-1"));
    assert_eq!((x.unwrap(), y.unwrap()), (2, 2));
    assert_eq!(p.signal_once("alarm", Map::new(), "sig-1").await.unwrap(), 2);
    assert_eq!((notes(a.clone()).await, notes(b.clone()).await), (2, 2), "each instance got the signal once");
    let err = p.signal_once("alarm", Map::new(), "msg-1").await.unwrap_err();
    assert!(err.to_string().contains("by another command"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A signal broadcast with a requestId that fails half-way (the database refuses the third
/// instance's delivery) is retried by its caller with the same requestId: the instances the
/// first call reached do not get it twice, the rest get it once.
async fn a_retried_signal_request_reaches_each_instance_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = common::faulty::Faulty::open(&fx).await;
    let engine = fx.engine("n1").store(db.clone()).build().await.unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    p.deploy("repeatable.bpmn", REPEATABLE).await.unwrap();
    let mut ids = Vec::new();
    for bk in ["A", "B", "C"] {
        ids.push(p.start(start("repeatable", bk, json!({}))).await.unwrap().id);
    }
    ids.sort(); // deliveries go in instance order
    db.fail_write_binding(&ids[2]);
    p.signal_once("alarm", Map::new(), "sig-9").await.expect_err("the third delivery fails");
    assert_eq!(p.signal_once("alarm", Map::new(), "sig-9").await.unwrap(), 3);
    for id in &ids {
        let tasks = p.tasks(Some(id), None, None, None).await.unwrap();
        let notes = tasks.iter().filter(|t| t.task_definition_key == "note").count();
        assert_eq!(notes, 1, "instance {id} heard the signal once");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

const ORDER_V1: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="paid" name="paid"/>
  <message id="cancel" name="cancel"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review"/>
    <boundaryEvent id="late" attachedToRef="review"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="review" targetRef="waitPay"/>
    <intermediateCatchEvent id="waitPay"><messageEventDefinition messageRef="paid"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="waitPay" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="late" targetRef="end"/>
    <endEvent id="end"/>
    <subProcess id="onCancel" triggeredByEvent="true">
      <startEvent id="cancelStart"><messageEventDefinition messageRef="cancel"/></startEvent>
      <sequenceFlow id="c1" sourceRef="cancelStart" targetRef="cancelEnd"/>
      <endEvent id="cancelEnd"/>
    </subProcess>
  </process>
</definitions>"#;

/// Version 2: the review became "check", the message names changed, a boundary event was
/// added; the timer is the same.
const ORDER_V2: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="paid" name="payment-received"/>
  <message id="cancel" name="cancelOrder"/>
  <message id="esc" name="escalate"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="check"/>
    <userTask id="check" name="Check"/>
    <boundaryEvent id="late" attachedToRef="check"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <boundaryEvent id="escalated" attachedToRef="check" cancelActivity="false"><messageEventDefinition messageRef="esc"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="check" targetRef="waitPay"/>
    <intermediateCatchEvent id="waitPay"><messageEventDefinition messageRef="paid"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="waitPay" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="late" targetRef="end"/>
    <sequenceFlow id="f5" sourceRef="escalated" targetRef="end"/>
    <endEvent id="end"/>
    <subProcess id="onCancel" triggeredByEvent="true">
      <startEvent id="cancelStart"><messageEventDefinition messageRef="cancel"/></startEvent>
      <sequenceFlow id="c1" sourceRef="cancelStart" targetRef="cancelEnd"/>
      <endEvent id="cancelEnd"/>
    </subProcess>
  </process>
</definitions>"#;

/// SPEC P13: a running instance moves to version 2 with a mapping. Its task takes the new key
/// and name, the unchanged timer keeps its due date, renamed messages are listened for under
/// their new names, a new boundary event is armed, history follows; it then runs on the new
/// model. A bad mapping names the activity and changes nothing; a running job refuses it.
async fn a_running_instance_migrates_to_a_new_version(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let store = engine.store().clone();
    let v1 = p.deploy("order.bpmn", ORDER_V1).await.unwrap().process_definitions[0].id.clone();
    let a = p.start(start("order", "A", json!({}))).await.unwrap().id;
    let b = p.start(start("order", "B", json!({}))).await.unwrap().id;
    let d = p.start(start("order", "D", json!({}))).await.unwrap().id;
    let t = p.tasks(Some(&d), None, None, None).await.unwrap().remove(0);
    p.complete_task(&t.id, Map::new()).await.unwrap(); // D waits at waitPay for "paid"
    let rows = |sql: &'static str, pi: String| {
        let store = store.clone();
        async move { store.sql_query(sql, &[SqlValue::Text(pi)]).await.unwrap() }
    };
    let due = |pi: String| async {
        let r =
            rows("SELECT DUEDATE_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? AND ELEMENT_ID_ = 'late'", pi).await;
        r[0][0].as_timestamp().unwrap()
    };
    let due_before = due(a.clone()).await;
    let v2 = p.deploy("order.bpmn", ORDER_V2).await.unwrap().process_definitions[0].id.clone();
    assert_ne!(v1, v2);

    // No mapping for the review: refused, naming it, nothing changed.
    let err = p.migrate_instance(&b, &MigrateRequest::latest()).await.unwrap_err();
    assert!(err.to_string().contains("activity 'review' is active but the target definition has no 'review'"), "{err}");
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("review", "waitPay")).await.unwrap_err();
    assert!(err.to_string().contains("another kind of element"), "{err}");
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("reviw", "check")).await.unwrap_err();
    assert!(err.to_string().contains("fromActivityId 'reviw'"), "{err}");
    let def_of = |pi: String| async { rows("SELECT PROC_DEF_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ?", pi).await };
    assert_eq!(def_of(b.clone()).await[0][0].as_str(), Some(v1.as_str()), "nothing changed");

    // A job running right now: refused.
    store
        .sql_query(
            "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = 'elsewhere', LOCK_EXP_TIME_ = ? WHERE PROCESS_INSTANCE_ID_ = ?",
            &[
                SqlValue::Timestamp(kairos::Timestamp::now() + kairos::SignedDuration::from_hours(1)),
                SqlValue::Text(b.clone()),
            ],
        )
        .await
        .unwrap();
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("review", "check")).await.unwrap_err();
    assert!(err.to_string().contains("is running now (locked by elsewhere)"), "{err}");

    // The move.
    let moved = p.migrate_instance(&a, &MigrateRequest::to_definition(&v2).map("review", "check")).await.unwrap();
    assert_eq!(moved.process_definition_id, v2);
    let task = p.tasks(Some(&a), None, None, None).await.unwrap().remove(0);
    assert_eq!((task.task_definition_key.as_str(), task.name.as_deref()), ("check", Some("Check")));
    assert_eq!(due(a.clone()).await, due_before, "the unchanged timer keeps its due date");
    let subs =
        rows("SELECT EVENT_NAME_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY EVENT_NAME_", a.clone())
            .await;
    let subs: Vec<&str> = subs.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(subs, ["cancelOrder", "escalate"], "re-armed from version 2");
    for sql in [
        "SELECT PROC_DEF_ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_RU_TASK WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_HI_PROCINST WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_HI_ACTINST WHERE PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
    ] {
        let r = rows(sql, a.clone()).await;
        assert!(!r.is_empty() && r.iter().all(|r| r[0].as_str() == Some(v2.as_str())), "{sql}: {r:?}");
    }
    p.complete_task(&task.id, Map::new()).await.unwrap();
    p.message("payment-received", Some(&a), None, Map::new()).await.unwrap();
    assert!(p.instance(&a).await.unwrap().ended);
    assert_eq!(trace(&engine, &a).await, ["start", "check", "waitPay", "end"]);

    // A token waiting at a catch event listens under the new name.
    p.migrate_instance(&d, &MigrateRequest::latest()).await.unwrap();
    let subs =
        rows("SELECT EVENT_NAME_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY EVENT_NAME_", d.clone())
            .await;
    let subs: Vec<&str> = subs.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(subs, ["cancelOrder", "payment-received"]);
    p.message("payment-received", Some(&d), None, Map::new()).await.unwrap();
    assert!(p.instance(&d).await.unwrap().ended);
    engine.shutdown(Duration::from_secs(5)).await;
}

const NESTED_V1: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="nested" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="sp"/>
    <subProcess id="sp">
      <startEvent id="s0"/>
      <sequenceFlow id="i1" sourceRef="s0" targetRef="inner"/>
      <userTask id="inner"/>
      <sequenceFlow id="i2" sourceRef="inner" targetRef="e0"/>
      <endEvent id="e0"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="sp" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

const NESTED_V2: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="nested" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="stage"/>
    <subProcess id="stage">
      <startEvent id="s0"/>
      <sequenceFlow id="i1" sourceRef="s0" targetRef="work"/>
      <userTask id="work"/>
      <sequenceFlow id="i2" sourceRef="work" targetRef="e0"/>
      <endEvent id="e0"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="stage" targetRef="outside"/>
    <userTask id="outside"/>
    <sequenceFlow id="f3" sourceRef="outside" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A token inside a sub-process moves only into the sub-process its scope maps to.
async fn migration_keeps_tokens_in_their_scope(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("nested.bpmn", NESTED_V1).await.unwrap();
    let pi = p.start(start("nested", "N", json!({}))).await.unwrap().id;
    p.deploy("nested.bpmn", NESTED_V2).await.unwrap();
    let err = p.migrate_instance(&pi, &MigrateRequest::latest().map("inner", "work")).await.unwrap_err();
    assert!(err.to_string().contains("activity 'sp' is active but the target definition has no 'sp'"), "{err}");
    let wrong = MigrateRequest::latest().map("sp", "stage").map("inner", "outside");
    let err = p.migrate_instance(&pi, &wrong).await.unwrap_err();
    assert!(err.to_string().contains("which is not in sub-process 'stage'"), "{err}");
    p.migrate_instance(&pi, &MigrateRequest::latest().map("sp", "stage").map("inner", "work")).await.unwrap();
    let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    assert_eq!(t.task_definition_key, "work");
    p.complete_task(&t.id, Map::new()).await.unwrap();
    let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    assert_eq!(t.task_definition_key, "outside", "the instance runs on version 2");
    engine.shutdown(Duration::from_secs(5)).await;
}

const REMIND: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="remind" name="Remind" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <userTask id="work"/>
    <boundaryEvent id="reminder" attachedToRef="work" cancelActivity="false"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="work" targetRef="end"/>
    <sequenceFlow id="f3" sourceRef="reminder" targetRef="nudge"/>
    <userTask id="nudge"/>
    <sequenceFlow id="f4" sourceRef="nudge" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A one-shot wait used up before the migration (a non-interrupting timer that fired) is not
/// armed again by it; the same process with the timer still waiting keeps it.
async fn migration_does_not_rearm_used_up_waits(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let store = engine.store().clone();
    p.deploy("remind.bpmn", REMIND).await.unwrap();
    let fired = p.start(start("remind", "R1", json!({}))).await.unwrap().id;
    let waiting = p.start(start("remind", "R2", json!({}))).await.unwrap().id;
    let timers = |pi: String| {
        let store = store.clone();
        async move {
            let sql = "SELECT ID_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? AND ELEMENT_ID_ = 'reminder'";
            store.sql_query(sql, &[SqlValue::Text(pi)]).await.unwrap()
        }
    };
    let job = timers(fired.clone()).await[0][0].as_str().unwrap().to_string();
    store.job_execute_now(&job).await.unwrap();
    engine.wake();
    wait_until(LIMIT, "the reminder to fire", || async {
        p.tasks(Some(&fired), None, None, None).await.unwrap().iter().any(|t| t.task_definition_key == "nudge")
    })
    .await;
    assert!(timers(fired.clone()).await.is_empty());
    p.deploy("remind.bpmn", &REMIND.replace("name=\"Remind\"", "name=\"Remind v2\"")).await.unwrap();
    p.migrate_instance(&fired, &MigrateRequest::latest()).await.unwrap();
    p.migrate_instance(&waiting, &MigrateRequest::latest()).await.unwrap();
    assert!(timers(fired).await.is_empty(), "the reminder that fired is not armed again");
    assert_eq!(timers(waiting).await.len(), 1, "the waiting reminder still waits");
    engine.shutdown(Duration::from_secs(5)).await;
}

const CONDITIONS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="conditions" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="waitApproval"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="review"/>
    <intermediateCatchEvent id="waitApproval"><conditionalEventDefinition><condition>${approved}</condition></conditionalEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="f4" sourceRef="waitApproval" targetRef="approvedEnd"/>
    <endEvent id="approvedEnd"/>
    <userTask id="review"/>
    <boundaryEvent id="cancelled" attachedToRef="review">
      <conditionalEventDefinition camunda:variableName="trigger"><condition>${flag}</condition></conditionalEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f5" sourceRef="review" targetRef="reviewedEnd"/>
    <endEvent id="reviewedEnd"/>
    <sequenceFlow id="f6" sourceRef="cancelled" targetRef="cancelledEnd"/>
    <endEvent id="cancelledEnd"/>
    <subProcess id="big" triggeredByEvent="true">
      <startEvent id="bigStart" isInterrupting="false"><conditionalEventDefinition><condition>${amount > 1000}</condition></conditionalEventDefinition></startEvent>
      <sequenceFlow id="b1" sourceRef="bigStart" targetRef="notify"/>
      <userTask id="notify"/>
      <sequenceFlow id="b2" sourceRef="notify" targetRef="bigEnd"/>
      <endEvent id="bigEnd"/>
    </subProcess>
  </process>
</definitions>"#;

/// Conditional events: a catch waits until its condition holds after a variable change, a
/// boundary with `camunda:variableName` checks only when that variable changes, a
/// non-interrupting event sub-process starts when its condition becomes true; the waits are
/// ACT_RU_EVENT_SUBSCR rows of type 'conditional'. A condition naming a variable that does
/// not exist yet is false until it appears (Camunda's reading).
async fn conditional_events_fire_when_variables_make_them_true(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("conditions.bpmn", CONDITIONS).await.unwrap();
    let early = p.start(start("conditions", "C0", json!({"approved": false}))).await.unwrap().id;
    assert!(!p.instance(&early).await.unwrap().ended, "'flag' and 'amount' do not exist yet: it waits");
    let v = json!({"approved": false, "flag": false, "amount": 10});
    let pi = p.start(start("conditions", "C1", v)).await.unwrap().id;
    let subs = engine
        .store()
        .sql_query(
            "SELECT COUNT(*) FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? AND EVENT_TYPE_ = 'conditional'",
            &[SqlValue::Text(pi.clone())],
        )
        .await
        .unwrap();
    assert_eq!(subs[0][0].as_i64(), Some(3), "catch, boundary, event sub-process start");
    let keys = |pi: String| {
        let p = engine.processes();
        async move {
            let mut k: Vec<String> = p
                .tasks(Some(&pi), None, None, None)
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.task_definition_key)
                .collect();
            k.sort();
            k
        }
    };
    p.set_variables(&pi, vars(json!({"amount": 5000}))).await.unwrap();
    assert_eq!(keys(pi.clone()).await, ["notify", "review"], "the event sub-process started beside");
    p.set_variables(&pi, vars(json!({"flag": true}))).await.unwrap();
    assert_eq!(keys(pi.clone()).await, ["notify", "review"], "the boundary only checks when 'trigger' changes");
    p.set_variables(&pi, vars(json!({"approved": true, "trigger": 1}))).await.unwrap();
    assert_eq!(keys(pi.clone()).await, ["notify"], "the boundary interrupted the review");
    let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    p.complete_task(&t.id, Map::new()).await.unwrap();
    assert!(p.instance(&pi).await.unwrap().ended);
    let trace = trace(&engine, &pi).await;
    for id in ["waitApproval", "approvedEnd", "cancelled", "cancelledEnd", "bigStart", "notify"] {
        assert!(trace.iter().any(|a| a == id), "{id} in {trace:?}");
    }
    assert!(!trace.iter().any(|a| a == "reviewedEnd"), "{trace:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Every running instance of a retired version moves, each on its own: a suspended one is
/// reported with why and stays where it was.
async fn all_instances_of_a_version_migrate_each_on_its_own(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let v1 = p.deploy("nested.bpmn", NESTED_V1).await.unwrap().process_definitions[0].id.clone();
    let mut ids = Vec::new();
    for bk in ["N1", "N2", "N3"] {
        ids.push(p.start(start("nested", bk, json!({}))).await.unwrap().id);
    }
    p.set_instance_suspended(&ids[1], true).await.unwrap();
    let v2 = p.deploy("nested.bpmn", NESTED_V2).await.unwrap().process_definitions[0].id.clone();
    let req = MigrateRequest::latest().map("sp", "stage").map("inner", "work");
    let outcomes = p.migrate_instances_of(&v1, &req).await.unwrap();
    assert_eq!(outcomes.len(), 3);
    for o in &outcomes {
        let now = p.instance(&o.process_instance_id).await.unwrap().process_definition_id;
        if o.process_instance_id == ids[1] {
            assert!(o.error.as_deref().is_some_and(|e| e.contains("suspended")), "{o:?}");
            assert_eq!(now, v1, "the suspended one stays");
        } else {
            assert_eq!((o.error.as_deref(), now.as_str()), (None, v2.as_str()), "{o:?}");
        }
    }
    let err = p.migrate_instances_of("no-such-definition", &req).await.unwrap_err();
    assert!(err.to_string().contains("no-such-definition"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    all_instances_of_a_version_migrate_each_on_its_own,
    conditional_events_fire_when_variables_make_them_true,
    migration_does_not_rearm_used_up_waits,
    migration_keeps_tokens_in_their_scope,
    a_running_instance_migrates_to_a_new_version,
    a_retried_signal_request_reaches_each_instance_once,
    messages_and_signals_are_idempotent_by_request_id,
    a_caught_error_code_is_stored_in_its_variable,
    input_output_mappings_per_instance_and_across_async_after,
    input_output_mappings_scope_variables_to_their_activity,
    people_expressions_take_null_and_lists,
    duplicate_completions_succeed_once_at_every_history_level,
    a_retried_signal_delivery_reaches_each_instance_once,
    an_interrupted_call_activity_deletes_the_instances_it_called,
    a_request_id_is_remembered_for_its_retention_time,
    a_signal_thrown_in_one_instance_reaches_the_others,
    the_job_log_is_kept_for_its_retention_time,
    history_past_its_time_to_live_is_cleaned_up,
    variables_of_every_kind_come_back_unchanged,
    a_cron_timer_start_event_starts_instances_on_schedule,
    the_business_key_can_be_changed,
    exclusive_async_jobs_of_one_instance_never_overlap,
    scope_and_concurrency_flags_follow_seed_003,
    message_signal_and_timer_start_events_start_instances,
    a_call_activity_links_the_called_instance_through_super_exec,
    a_suspended_instance_keeps_its_jobs_apart_and_refuses_task_completion,
    a_user_task_flow_runs_with_history_and_an_unchanged_redeploy_adds_no_version,
    a_parallel_join_of_ten_branches_completed_concurrently_fires_once,
    two_simultaneous_completions_of_one_task_exactly_one_wins,
    boundary_timers_fire_on_time_through_the_executor,
    a_cycle_timer_gets_its_retries_back_on_every_fire,
    bad_deployments_are_refused_with_the_line_and_nothing_is_written,
);
