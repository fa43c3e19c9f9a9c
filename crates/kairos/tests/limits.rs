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

const WAIT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="wait" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

fn vars(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap()
}

/// A string whose JSON is `bytes` long (its two quotes included).
fn blob(bytes: usize) -> serde_json::Value {
    serde_json::Value::String("x".repeat(bytes - 2))
}

async fn variables_are_capped_per_value_and_per_instance_naming_the_variable(backend: Backend) {
    use kairos::process::limits::{MAX_INSTANCE_VARIABLE_BYTES, MAX_VARIABLE_BYTES};
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    p.deploy("wait.bpmn", WAIT).await.unwrap();
    let start = |v| kairos::process::StartRequest {
        process_definition_key: Some("wait".into()),
        variables: vars(v),
        ..Default::default()
    };
    // One value over 1 MiB: refused at start, nothing written.
    let e = p.start(start(serde_json::json!({"big": blob(MAX_VARIABLE_BYTES + 1)}))).await.unwrap_err();
    assert!(matches!(&e, kairos::Error::Process(p) if p.kind == kairos_process::ErrorKind::Invalid), "{e}");
    assert!(e.to_string().contains("variable 'big'") && e.to_string().contains("1 MiB"), "{e}");
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0, "nothing written");
    let inst = p.start(start(serde_json::json!({"v0": blob(MAX_VARIABLE_BYTES)}))).await.unwrap();
    let e = p.set_variables(&inst.id, vars(serde_json::json!({"big": blob(MAX_VARIABLE_BYTES + 1)}))).await.unwrap_err();
    assert!(e.to_string().contains("variable 'big'"), "{e}");
    // Values at the limit each, until the instance's total would pass 10 MiB.
    let fit = MAX_INSTANCE_VARIABLE_BYTES / MAX_VARIABLE_BYTES;
    for i in 1..fit {
        p.set_variables(&inst.id, vars(serde_json::json!({format!("v{i}"): blob(MAX_VARIABLE_BYTES)}))).await.unwrap();
    }
    let e = p.set_variables(&inst.id, vars(serde_json::json!({"one_more": blob(1000)}))).await.unwrap_err();
    assert!(e.to_string().contains("(10 MiB) per instance") && e.to_string().contains("variable 'v"), "{e}");
    let kept = p.variables(&inst.id).await.unwrap();
    assert_eq!(kept.len(), fit, "the refused variable was not written");
    // Replacing a value by a smaller one is fine.
    p.set_variables(&inst.id, vars(serde_json::json!({"v1": 1}))).await.unwrap();
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    variables_are_capped_per_value_and_per_instance_naming_the_variable,
    a_repeat_below_the_minimum_interval_is_refused_naming_the_field,
    a_bpmn_timer_cycle_below_the_minimum_is_refused_naming_the_element,
);
