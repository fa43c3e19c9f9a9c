//! Retention on both backends: history past its definition's time to live is cleaned up
//! (SPEC P11), the job log is kept for its retention time.

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::store::SqlValue;
use process_support::{LEAVE, LIMIT, engine, start};
use serde_json::json;
use std::time::Duration;

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

on_both_backends!(the_job_log_is_kept_for_its_retention_time, history_past_its_time_to_live_is_cleaned_up,);
