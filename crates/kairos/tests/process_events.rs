//! Timers, start events, signals and conditional events on both backends, through the executor:
//! cycle and boundary timers, message/signal/timer/cron start events, a signal reaching other
//! instances, conditions that fire when variables make them true.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::store::SqlValue;
use process_support::{LIMIT, TIMERS, engine, start, trace, vars};
use serde_json::{Map, json};
use std::time::Duration;

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

on_both_backends!(
    conditional_events_fire_when_variables_make_them_true,
    a_signal_thrown_in_one_instance_reaches_the_others,
    a_cron_timer_start_event_starts_instances_on_schedule,
    message_signal_and_timer_start_events_start_instances,
    boundary_timers_fire_on_time_through_the_executor,
    a_cycle_timer_gets_its_retries_back_on_every_fire,
);
