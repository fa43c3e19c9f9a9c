//! Compensation through the whole engine on both backends: the rows a completed activity
//! leaves for it (ACT_RU_EVENT_SUBSCR EVENT_TYPE_ 'compensate', the event-scope snapshot of a
//! completed sub-process with its variables) survive between commands and go with their scope;
//! a handler that fails its job ends as a dead letter while the throw waits, and goes on once
//! an operator moves the job back. Handlers appear in ACT_HI_ACTINST like any activity.

mod common;
mod process_support;

use common::{Backend, Fixture, bind_text, wait_until};
use kairos::store::SqlValue;
use process_support::{LIMIT, start, trace};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

const TRIP: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="trip" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="booking"/>
    <subProcess id="booking">
      <extensionElements><camunda:inputOutput><camunda:inputParameter name="bookingId">B-7</camunda:inputParameter></camunda:inputOutput></extensionElements>
      <startEvent id="bookingStart"/>
      <sequenceFlow id="s1" sourceRef="bookingStart" targetRef="bookHotel"/>
      <serviceTask id="bookHotel" camunda:class="noop"/>
      <boundaryEvent id="hotelBooked" attachedToRef="bookHotel"><compensateEventDefinition/></boundaryEvent>
      <userTask id="cancelHotel" isForCompensation="true"/>
      <association id="a1" sourceRef="hotelBooked" targetRef="cancelHotel" associationDirection="One"/>
      <sequenceFlow id="s2" sourceRef="bookHotel" targetRef="bookingEnd"/>
      <endEvent id="bookingEnd"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="booking" targetRef="charge"/>
    <serviceTask id="charge" camunda:class="noop"/>
    <boundaryEvent id="charged" attachedToRef="charge"><compensateEventDefinition/></boundaryEvent>
    <serviceTask id="refund" isForCompensation="true" camunda:class="refund" camunda:asyncBefore="true">
      <extensionElements><camunda:failedJobRetryTimeCycle>R1/PT1S</camunda:failedJobRetryTimeCycle></extensionElements>
    </serviceTask>
    <association id="a2" sourceRef="charged" targetRef="refund" associationDirection="One"/>
    <sequenceFlow id="f3" sourceRef="charge" targetRef="decide"/>
    <userTask id="decide"/>
    <sequenceFlow id="f4" sourceRef="decide" targetRef="undo"/>
    <intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent>
    <sequenceFlow id="f5" sourceRef="undo" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn rows(engine: &kairos::Engine, sql: &str, pi: &str) -> Vec<Vec<SqlValue>> {
    engine.store().sql_query(sql, &[bind_text(pi)]).await.unwrap()
}

fn text(v: &SqlValue) -> String {
    v.as_str().unwrap_or_default().to_string()
}

async fn complete(engine: &kairos::Engine, pi: &str, key: &str) {
    let p = engine.processes();
    let task = p.tasks(Some(pi), None, None, None).await.unwrap().into_iter().find(|t| t.task_definition_key == key);
    let task = task.unwrap_or_else(|| panic!("no task {key}"));
    p.complete_task(&task.id, Default::default()).await.unwrap();
}

async fn a_compensation_runs_from_rows_and_waits_for_a_dead_lettered_handler(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let healthy = Arc::new(AtomicBool::new(false));
    let refunds = Arc::new(AtomicUsize::new(0));
    let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (h, r, k) = (healthy.clone(), refunds.clone(), keys.clone());
    let engine = fx
        .engine("n1")
        .configure(|c| c.poll_interval = Duration::from_millis(20))
        .handler("noop", kairos::handler_fn(|_ctx| async { Ok(None) }))
        .handler(
            "refund",
            kairos::handler_fn(move |ctx| {
                let ok = h.load(Ordering::SeqCst);
                r.fetch_add(1, Ordering::SeqCst);
                k.lock().unwrap().push(ctx.job_id.clone());
                async move { if ok { Ok(None) } else { Err("the payment service refuses the refund".into()) } }
            }),
        )
        .build()
        .await
        .unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    p.deploy("trip.bpmn", TRIP).await.unwrap();
    let pi = p.start(start("trip", "T-1", json!({}))).await.unwrap().id;

    // What the completed activities left, as Flowable keeps it: a 'compensate' subscription
    // per completed activity with a handler; the completed sub-process as an event-scope
    // execution holding its own and its inner one, with a copy of its variables.
    let subs = rows(
        &engine,
        "SELECT s.EVENT_TYPE_, s.ACTIVITY_ID_, e.ACT_ID_, e.IS_EVENT_SCOPE_ FROM ACT_RU_EVENT_SUBSCR s \
         JOIN ACT_RU_EXECUTION e ON e.ID_ = s.EXECUTION_ID_ WHERE s.PROC_INST_ID_ = ? ORDER BY s.ACTIVITY_ID_",
        &pi,
    )
    .await;
    let subs: Vec<(String, String, String, bool)> = subs
        .iter()
        .map(|r| (text(&r[0]), text(&r[1]), text(&r[2]), r[3].as_i64() == Some(1) || r[3] == SqlValue::Bool(true)))
        .collect();
    let snapshot = ("booking".to_string(), true);
    assert_eq!(subs.len(), 3, "{subs:?}");
    assert!(subs.iter().all(|s| s.0 == "compensate"), "{subs:?}");
    assert_eq!((subs[0].1.as_str(), (subs[0].2.clone(), subs[0].3)), ("bookHotel", snapshot.clone()), "{subs:?}");
    assert_eq!((subs[1].1.as_str(), (subs[1].2.clone(), subs[1].3)), ("booking", snapshot), "{subs:?}");
    assert_eq!(
        (subs[2].1.as_str(), subs[2].2.as_str(), subs[2].3),
        ("charge", "", false),
        "held by the root: {subs:?}"
    );
    let copied = rows(
        &engine,
        "SELECT v.TEXT_ FROM ACT_RU_VARIABLE v JOIN ACT_RU_EXECUTION e ON e.ID_ = v.EXECUTION_ID_ \
         WHERE v.PROC_INST_ID_ = ? AND v.NAME_ = 'bookingId' AND e.IS_EVENT_SCOPE_ = TRUE",
        &pi,
    )
    .await;
    assert_eq!(copied.len(), 1, "the snapshot keeps the sub-process's variable");
    // `kairos doctor` says it waits for a person, not for 'compensate' events (no wait).
    let query = kairos::doctor::DoctorQuery { process_instance_id: Some(pi.clone()), ..Default::default() };
    let report = kairos::doctor::diagnose(&engine, &query).await.unwrap();
    let waiting = report.findings.iter().find(|f| f.code == "waiting").expect("a waiting finding");
    assert!(
        waiting.detail.contains("user task decide") && !waiting.detail.contains("compensate"),
        "{}",
        waiting.detail
    );

    // The throw: refund (charge completed last) is an async job that fails until it dead-letters.
    complete(&engine, &pi, "decide").await;
    let dead = || async {
        rows(&engine, "SELECT ELEMENT_ID_, ID_ FROM ACT_RU_DEADLETTER_JOB WHERE PROCESS_INSTANCE_ID_ = ?", &pi).await
    };
    wait_until(LIMIT, "the refund job dead-lettered", || async { !dead().await.is_empty() }).await;
    let job = dead().await.remove(0);
    assert_eq!(text(&job[0]), "refund");
    assert_eq!(refunds.load(Ordering::SeqCst), 2, "R1: the first attempt and one retry");
    let waiting =
        rows(&engine, "SELECT ACT_ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ? AND ACT_ID_ = 'undo'", &pi);
    assert_eq!(waiting.await.len(), 1, "the throw waits for its handler");
    assert!(p.tasks(Some(&pi), None, None, None).await.unwrap().is_empty(), "cancelHotel waits its turn");
    assert_eq!(
        trace(&engine, &pi).await,
        ["start", "booking", "bookingStart", "bookHotel", "bookingEnd", "charge", "decide", "undo"]
    );

    // /metrics's compensation failures see it, told from other jobs by its execution.
    let (retrying, dead_letters, oldest) = engine.incidents().compensation_failures().await.unwrap();
    assert_eq!((retrying, dead_letters, oldest.is_some()), (0, 1, true));

    // The operator fixes the service and moves the job back: the refund runs, then the hotel.
    healthy.store(true, Ordering::SeqCst);
    engine.store().deadletter_move(&text(&job[1]), 1).await.unwrap();
    wait_until(LIMIT, "cancelHotel's task", || async {
        p.tasks(Some(&pi), None, None, None).await.unwrap().iter().any(|t| t.task_definition_key == "cancelHotel")
    })
    .await;
    complete(&engine, &pi, "cancelHotel").await;
    let left = rows(&engine, "SELECT COUNT(*) FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ?", &pi).await;
    assert_eq!(left[0][0].as_i64(), Some(0), "nothing left to compensate, nothing left behind");
    assert_eq!(
        trace(&engine, &pi).await,
        [
            "start",
            "booking",
            "bookingStart",
            "bookHotel",
            "bookingEnd",
            "charge",
            "decide",
            "undo",
            "refund",
            "cancelHotel",
            "end"
        ]
    );
    assert_eq!(refunds.load(Ordering::SeqCst), 3);
    // Every attempt got the same idempotency key: the execution is named after the completion.
    let keys = keys.lock().unwrap().clone();
    assert!(keys.iter().all(|k| k == &keys[0]) && keys[0].starts_with(&format!("{pi}:c")), "{keys:?}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// The compensations of a scope go when the scope ends: an instance that ends without a throw
/// leaves no 'compensate' row behind.
async fn compensations_go_with_their_scope(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let noop = || kairos::handler_fn(|_ctx| async { Ok(None) });
    let engine = fx.engine("n1").handler("noop", noop()).handler("refund", noop()).build().await.unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    let model = TRIP.replace(r#"targetRef="undo"/>"#, r#"targetRef="end"/>"#).replace(
        r#"<intermediateThrowEvent id="undo"><compensateEventDefinition/></intermediateThrowEvent>
    <sequenceFlow id="f5" sourceRef="undo" targetRef="end"/>"#,
        "",
    );
    p.deploy("trip.bpmn", &model).await.unwrap();
    let pi = p.start(start("trip", "T-2", json!({}))).await.unwrap().id;
    let count = |table: &'static str| {
        let (engine, pi) = (&engine, &pi);
        async move {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE PROC_INST_ID_ = ?");
            rows(engine, &sql, pi).await[0][0].as_i64().unwrap_or(-1)
        }
    };
    assert_eq!(count("ACT_RU_EVENT_SUBSCR").await, 3);
    complete(&engine, &pi, "decide").await;
    assert_eq!(count("ACT_RU_EVENT_SUBSCR").await, 0);
    assert_eq!(count("ACT_RU_EXECUTION").await, 0);
    assert_eq!(count("ACT_RU_VARIABLE").await, 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_compensation_runs_from_rows_and_waits_for_a_dead_lettered_handler,
    compensations_go_with_their_scope
);
