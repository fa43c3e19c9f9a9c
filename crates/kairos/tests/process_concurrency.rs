//! Optimistic locking under concurrency on both backends: a parallel join completed from many
//! tasks at once fires once, one task completed twice at once has one winner, and exclusive
//! async jobs of one instance never overlap.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::Engine;
use kairos_process::ErrorKind as kairos_process_kind;
use process_support::{LEAVE, LIMIT, engine, start, trace};
use serde_json::{Map, json};
use std::time::Duration;

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

on_both_backends!(
    exclusive_async_jobs_of_one_instance_never_overlap,
    a_parallel_join_of_ten_branches_completed_concurrently_fires_once,
    two_simultaneous_completions_of_one_task_exactly_one_wins,
);
