//! Idempotency on both backends (SPEC C2): requestIds on starts, completions, messages and
//! signals, and retried signal deliveries that reach each instance once.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::process::StartRequest;
use kairos_process::ErrorKind as kairos_process_kind;
use process_support::{LEAVE, LIMIT, engine, start, vars};
use serde_json::{Map, json};
use std::time::Duration;

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

on_both_backends!(
    a_retried_signal_request_reaches_each_instance_once,
    messages_and_signals_are_idempotent_by_request_id,
    duplicate_completions_succeed_once_at_every_history_level,
    a_retried_signal_delivery_reaches_each_instance_once,
    a_request_id_is_remembered_for_its_retention_time,
);
