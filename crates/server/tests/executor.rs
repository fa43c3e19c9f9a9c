//! With the executor on: a job enqueued over HTTP runs, and the job log says so.

mod common;

use axum::http::StatusCode;
use common::{app_with, ok_json};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_job_enqueued_over_http_succeeds() {
    let app = app_with(|b| b.executor_enabled(true).workers(2)).await;
    app.engine.start().await.unwrap();

    let r = app.post("/management/jobs", json!({"handler": "log", "payload": {"greeting": "hello"}})).await;
    let id = ok_json(&r, StatusCode::CREATED)["id"].as_str().unwrap().to_string();

    // A bounded wait on the condition itself: the job log shows the attempt.
    let deadline = Instant::now() + Duration::from_secs(20);
    let entry = loop {
        let r = app.get(&format!("/history/job-log?jobId={id}")).await;
        let log = ok_json(&r, StatusCode::OK);
        if let Some(e) = log["data"].as_array().and_then(|d| d.first()) {
            break e.clone();
        }
        if Instant::now() > deadline {
            let job = app.get(&format!("/management/jobs/{id}")).await;
            let doctor = kairos::doctor::diagnose(&app.engine, &Default::default()).await.unwrap();
            panic!("the job did not run within 20 s; it is now {}\n{doctor}", job.text);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(entry["outcome"], "succeeded", "{entry}");
    assert_eq!(entry["node"], "test-node");
    assert_eq!(entry["attempt"], 1);
    assert!(entry["message"].as_str().unwrap().contains("hello"), "the log handler writes its payload: {entry}");

    let r = app.get(&format!("/management/jobs/{id}")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "a finished job leaves ACT_RU_JOB");
    assert!(r.error().1.contains("job-log"), "{}", r.text);

    let r = app.get("/metrics").await;
    assert!(r.text.lines().any(|l| l.starts_with("kairos_job_attempts_total{outcome=\"succeeded\"} ")), "{}", r.text);
    let r = app.get("/management/doctor").await;
    let codes: Vec<String> =
        r.json["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect();
    assert!(codes.contains(&"nodes".to_string()) && !codes.contains(&"no-live-node".to_string()), "{codes:?}");

    app.engine.shutdown(Duration::from_secs(5)).await;
}
