//! Camunda's fetch and lock at the engine, on both backends (issue 18): several topics with
//! their filters, local variables, the hold that gives back locks never delivered, long
//! polling, and extendLock / lock / unlock by their rules.

mod common;

use common::{Backend, Fixture, wait_until};
use kairos::SignedDuration;
use kairos::process::{ExternalQuery, FetchTopic, StartRequest};
use serde_json::{Map, json};
use std::time::Duration;

const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="pay" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="a" sourceRef="s" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge"/>
    <sequenceFlow id="b" sourceRef="charge" targetRef="ship"/>
    <serviceTask id="ship" camunda:type="external" camunda:topic="ship"/>
    <sequenceFlow id="c" sourceRef="ship" targetRef="e"/><endEvent id="e"/>
  </process>
</definitions>"#;

fn vars(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

async fn start(engine: &kairos::Engine, bk: &str) -> String {
    let req = StartRequest {
        process_definition_key: Some("pay".into()),
        business_key: Some(bk.into()),
        variables: vars(json!({"amount": 5, "note": "x"})),
        ..Default::default()
    };
    engine.processes().start(req).await.unwrap().id
}

fn locked() -> ExternalQuery {
    ExternalQuery { locked: Some(true), ..Default::default() }
}

/// A fetch's locks stay once delivered and go back when its hold is dropped undelivered.
async fn undelivered_fetches_give_their_locks_back(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    p.deploy("pay", MODEL).await.unwrap();
    start(&engine, "o1").await;
    start(&engine, "o2").await;
    let lock = SignedDuration::from_mins(5);
    let (tasks, hold) = p.external_fetch("w", 1, false, &[FetchTopic::new("charge", lock)]).await.unwrap();
    assert_eq!(tasks.len(), 1);
    drop(hold);
    wait_until(Duration::from_secs(5), "the undelivered lock is released", || async {
        p.external_task_count(&locked()).await.unwrap() == 0
    })
    .await;
    let (tasks, hold) = p.external_fetch("w", 5, false, &[FetchTopic::new("charge", lock)]).await.unwrap();
    assert_eq!(tasks.len(), 2, "both are free again");
    hold.delivered();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(p.external_task_count(&locked()).await.unwrap(), 2, "delivered locks stay");
}

/// Topics in order up to maxTasks, filters by business key, asked variables, local variables.
async fn a_fetch_takes_topics_in_order_with_their_filters(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    p.deploy("pay", MODEL).await.unwrap();
    let o1 = start(&engine, "o1").await;
    start(&engine, "o2").await;
    let lock = SignedDuration::from_mins(5);
    let mut only_o1 = FetchTopic::new("charge", lock);
    only_o1.business_key = Some("o1".into());
    only_o1.variables = Some(vec!["amount".into()]);
    let (tasks, hold) = p.external_fetch("w", 5, false, &[only_o1]).await.unwrap();
    hold.delivered();
    assert_eq!(tasks.len(), 1);
    assert_eq!((tasks[0].process_instance_id.as_str(), tasks[0].business_key.as_deref()), (o1.as_str(), Some("o1")));
    assert_eq!(tasks[0].variables, vars(json!({"amount": 5})));
    assert_eq!(tasks[0].process_definition_key.as_deref(), Some("pay"));
    // Completing with a local variable: in the task's scope (here the instance, as Camunda).
    p.external_complete_with(&tasks[0].id, "w", vars(json!({"paid": true})), vars(json!({"receipt": 7})))
        .await
        .unwrap();
    let mut local = FetchTopic::new("ship", lock);
    local.local_variables = true;
    let (tasks, hold) = p.external_fetch("w", 1, false, &[FetchTopic::new("nothing", lock), local]).await.unwrap();
    hold.delivered();
    assert_eq!(tasks.len(), 1, "the second topic fills the fetch");
    assert_eq!(tasks[0].topic, "ship");
    let v = p.variables(&o1).await.unwrap();
    assert_eq!((v["paid"].clone(), v["receipt"].clone()), (json!(true), json!(7)), "{v:?}");
}

/// A waiting fetch is woken by a start on this node; without work it answers nothing at the end.
async fn a_waiting_fetch_is_woken_by_new_work(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = std::sync::Arc::new(fx.engine("n1").executor_enabled(false).build().await.unwrap());
    engine.processes().deploy("pay", MODEL).await.unwrap();
    let lock = SignedDuration::from_mins(5);
    let t = std::time::Instant::now();
    let (none, _) = engine
        .processes()
        .external_fetch_wait("w", 1, false, &[FetchTopic::new("charge", lock)], Duration::from_millis(600))
        .await
        .unwrap();
    assert!(none.is_empty() && t.elapsed() >= Duration::from_millis(550), "{:?}", t.elapsed());
    let e = engine.clone();
    let waiting = tokio::spawn(async move {
        let (tasks, hold) = e
            .processes()
            .external_fetch_wait("w", 1, false, &[FetchTopic::new("charge", lock)], Duration::from_secs(20))
            .await
            .unwrap();
        hold.delivered();
        (tasks, std::time::Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    start(&engine, "o1").await;
    let (tasks, at) = waiting.await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert!(
        at.duration_since(started) < Duration::from_millis(700),
        "woken, not polled: {:?}",
        at.duration_since(started)
    );
}

/// extendLock only by the holder of an unexpired lock; lock by id not over another's; unlock.
async fn locks_follow_camundas_rules(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let p = engine.processes();
    p.deploy("pay", MODEL).await.unwrap();
    start(&engine, "o1").await;
    let (tasks, hold) =
        p.external_fetch("w1", 1, false, &[FetchTopic::new("charge", SignedDuration::from_millis(300))]).await.unwrap();
    hold.delivered();
    let id = tasks[0].id.clone();
    let e = p.external_extend_lock(&id, "w2", SignedDuration::from_mins(1)).await.unwrap_err();
    assert!(e.to_string().contains("w1"), "{e}");
    assert!(p.external_lock_one(&id, "w2", SignedDuration::from_mins(1)).await.is_err(), "w1 still holds it");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let e = p.external_extend_lock(&id, "w1", SignedDuration::from_mins(1)).await.unwrap_err();
    assert!(e.to_string().contains("expired"), "{e}");
    p.external_lock_one(&id, "w2", SignedDuration::from_mins(1)).await.unwrap();
    p.external_extend_lock(&id, "w2", SignedDuration::from_mins(2)).await.unwrap();
    assert_eq!(p.external_task(&id).await.unwrap().worker_id.as_deref(), Some("w2"));
    p.external_unlock(&id).await.unwrap();
    assert_eq!(p.external_task(&id).await.unwrap().worker_id, None);
    assert!(p.external_unlock("nope").await.is_err());
}

on_both_backends!(
    undelivered_fetches_give_their_locks_back,
    a_fetch_takes_topics_in_order_with_their_filters,
    a_waiting_fetch_is_woken_by_new_work,
    locks_follow_camundas_rules,
);
