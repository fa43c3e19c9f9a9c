//! Bounded cost on both backends (docs/limits.md): repeats faster than the engine's minimum
//! interval, oversized variables, overlong ids and strings are refused naming the field, and
//! nothing is written.

mod common;

use common::{Backend, Fixture, count_rows};
use kairos::EnqueueRequest;
use kairos::SignedDuration;
use std::time::Duration;

fn every(repeat: &str) -> EnqueueRequest {
    EnqueueRequest { handler: "log".into(), repeat: Some(repeat.into()), ..Default::default() }
}

async fn a_repeat_below_the_minimum_interval_is_refused_naming_the_field(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    for fast in ["R/PT0.001S", "R5/PT0.999S"] {
        let e = engine.enqueue(&every(fast)).await.unwrap_err().to_string();
        assert!(e.contains("invalid repeat") && e.contains("shorter than the minimum of 1s"), "{fast}: {e}");
    }
    assert_eq!(count_rows(engine.store(), "ACT_RU_JOB").await, 0, "nothing written");
    for ok in ["R/PT1S", "R/P1M", "0/1 * * * * ?"] {
        engine.enqueue(&every(ok)).await.unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    engine.shutdown(Duration::from_secs(5)).await;
    // The minimum is the engine's to set.
    let engine = fx.engine("n2").executor_enabled(false).min_repeat_interval(SignedDuration::from_millis(10));
    let engine = engine.build().await.unwrap();
    engine.enqueue(&every("R3/PT0.01S")).await.unwrap();
    assert!(engine.enqueue(&every("R3/PT0.009S")).await.is_err());
    engine.shutdown(Duration::from_secs(5)).await;
}

const FAST_TIMER: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="fast" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <userTask id="wait"/>
    <boundaryEvent id="nag" attachedToRef="wait" cancelActivity="false">
      <timerEventDefinition><timeCycle>CYCLE</timeCycle></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="nag" targetRef="nagged"/>
    <endEvent id="nagged"/>
    <sequenceFlow id="f3" sourceRef="wait" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn a_bpmn_timer_cycle_below_the_minimum_is_refused_naming_the_element(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    let e = p.deploy("fast.bpmn", &FAST_TIMER.replace("CYCLE", "R/PT0.001S")).await.unwrap_err().to_string();
    assert!(e.contains("'nag'") && e.contains("timeCycle") && e.contains("shorter than the minimum"), "{e}");
    assert_eq!(count_rows(engine.store(), "ACT_RE_PROCDEF").await, 0, "nothing written");
    p.deploy("fast.bpmn", &FAST_TIMER.replace("CYCLE", "R3/PT1S")).await.unwrap();
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_repeat_below_the_minimum_interval_is_refused_naming_the_field,
    a_bpmn_timer_cycle_below_the_minimum_is_refused_naming_the_element,
);
