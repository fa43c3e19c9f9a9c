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
    let e =
        p.set_variables(&inst.id, vars(serde_json::json!({"big": blob(MAX_VARIABLE_BYTES + 1)}))).await.unwrap_err();
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

fn one_task(key: &str, task_id: &str, assignee: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="{key}" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="{task_id}"/>
    <userTask id="{task_id}" camunda:assignee="{assignee}"/>
    <sequenceFlow id="f2" sourceRef="{task_id}" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#
    )
}

fn field_of(e: &kairos::Error) -> Option<String> {
    match e {
        kairos::Error::Process(p) if p.kind == kairos_process::ErrorKind::Invalid => p.element_id.clone(),
        _ => None,
    }
}

async fn a_long_key_gets_an_id_that_fits_and_starts_by_it(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    let key = "a_process_key_well_over_twenty_five_characters_long";
    let d = p.deploy("long.bpmn", &one_task(key, "task", "kermit")).await.unwrap();
    let def = &d.process_definitions[0];
    assert!(def.id.chars().count() <= 64, "{}", def.id);
    assert_eq!((def.key.as_str(), def.version), (key, 1));
    let by_id = kairos::process::StartRequest { process_definition_id: Some(def.id.clone()), ..Default::default() };
    assert!(!p.start(by_id).await.unwrap().ended);
    let by_key = kairos::process::StartRequest { process_definition_key: Some(key.into()), ..Default::default() };
    p.start(by_key).await.unwrap();
    // A short key keeps Flowable's key:version:uuid.
    let d = p.deploy("short.bpmn", &one_task("short", "task", "kermit")).await.unwrap();
    assert!(d.process_definitions[0].id.starts_with("short:1:"), "{}", d.process_definitions[0].id);
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn strings_that_do_not_fit_their_column_are_refused_alike_on_both_stores(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    // At deploy: process ids that cannot be reached by path, ids and names over 255 characters.
    let long = "t".repeat(256);
    for (xml, names) in [
        (one_task("a/b", "task", "kermit"), "process 'a/b'"),
        (one_task("o'brien", "task", "kermit"), "process 'o'brien'"),
        (one_task("two words", "task", "kermit"), "process 'two words'"),
        (one_task(&long, "task", "kermit"), "is 256 characters long"),
        (one_task("p", &long, "kermit"), "is 256 characters long"),
    ] {
        let e = p.deploy("bad.bpmn", &xml).await.unwrap_err();
        assert!(matches!(&e, kairos::Error::Process(p) if p.kind == kairos_process::ErrorKind::Invalid), "{e}");
        assert!(e.to_string().contains(names), "{e}");
    }
    let e = p.deploy(&"n".repeat(300), &one_task("p", "task", "kermit")).await.unwrap_err();
    assert_eq!(field_of(&e).as_deref(), Some("name"), "{e}");
    assert_eq!(count_rows(engine.store(), "ACT_RE_PROCDEF").await, 0, "nothing written");
    assert_eq!(count_rows(engine.store(), "ACT_RE_DEPLOYMENT").await, 0);

    // At start and completion: whatever the strings came from, the same 400 on both stores.
    p.deploy("p.bpmn", &one_task("p", "task", "${who}")).await.unwrap();
    let start = |bk: Option<&str>, v: serde_json::Value| kairos::process::StartRequest {
        process_definition_key: Some("p".into()),
        business_key: bk.map(str::to_string),
        variables: vars(v),
        ..Default::default()
    };
    let cases = [
        (start(None, serde_json::json!({"who": "k".repeat(256)})), "assignee"),
        (start(None, serde_json::json!({"who": "kermit\u{0}"})), "assignee"),
        (start(Some(&"b".repeat(256)), serde_json::json!({"who": "kermit"})), "businessKey"),
        (start(Some("nul\u{0}"), serde_json::json!({"who": "kermit"})), "businessKey"),
        (start(None, serde_json::json!({"who": "kermit", "note": "a\u{0}b"})), "note"),
    ];
    for (req, field) in cases {
        let e = p.start(req).await.unwrap_err();
        assert_eq!(field_of(&e).as_deref(), Some(field), "{e}");
    }
    // Variable names were refused over 255 characters already (by the runtime).
    let e = p.start(start(None, serde_json::json!({"who": "kermit", "v".repeat(256): 1}))).await.unwrap_err();
    assert!(e.to_string().contains("must be 1 to 255 characters"), "{e}");
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0, "nothing written");
    let ok = p.start(start(Some(&"b".repeat(255)), serde_json::json!({"who": "k".repeat(255)}))).await.unwrap();
    let e = p.set_variables(&ok.id, vars(serde_json::json!({"x": "\u{0}"}))).await.unwrap_err();
    assert_eq!(field_of(&e).as_deref(), Some("x"), "{e}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const EACH: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="each" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" camunda:assignee="${item}">
      <multiInstanceLoopCharacteristics camunda:collection="items" camunda:elementVariable="item"/>
    </userTask>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn a_multi_instance_collection_is_capped_and_a_big_one_below_the_cap_starts(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    p.deploy("each.bpmn", EACH).await.unwrap();
    let start = |n: usize| kairos::process::StartRequest {
        process_definition_key: Some("each".into()),
        variables: vars(serde_json::json!({"items": (0..n).map(|i| format!("u{i}")).collect::<Vec<_>>()})),
        ..Default::default()
    };
    let e = p.start(start(kairos_process::MAX_MULTI_INSTANCE + 1)).await.unwrap_err();
    assert!(matches!(&e, kairos::Error::Process(p) if p.element_id.as_deref() == Some("review")), "{e}");
    assert!(e.to_string().contains("collection 'items'") && e.to_string().contains("limit is 10000"), "{e}");
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0, "nothing written");
    // A big collection below the cap starts every instance (its cost is linear: see
    // crates/process/tests/limits.rs).
    let n = 2_000;
    let inst = p.start(start(n)).await.unwrap();
    assert!(!inst.ended);
    assert_eq!(count_rows(engine.store(), "ACT_RU_TASK").await, n as i64);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_multi_instance_collection_is_capped_and_a_big_one_below_the_cap_starts,
    a_long_key_gets_an_id_that_fits_and_starts_by_it,
    strings_that_do_not_fit_their_column_are_refused_alike_on_both_stores,
    variables_are_capped_per_value_and_per_instance_naming_the_variable,
    a_repeat_below_the_minimum_interval_is_refused_naming_the_field,
    a_bpmn_timer_cycle_below_the_minimum_is_refused_naming_the_element,
);
