//! `/management/deadletter-jobs` in-process, against a real SQLite store.

mod common;

use axum::http::StatusCode;
use common::{app, ok_json};
use serde_json::json;

#[tokio::test]
async fn a_dead_letter_is_listed_read_and_moved_back() {
    let app = app().await;
    let dl = app.dead_letter("fail").await;
    let other = app
        .enqueue(kairos::EnqueueRequest { handler: "log".into(), due_in: Some("PT1H".into()), ..Default::default() })
        .await;

    let r = app.get("/management/deadletter-jobs").await;
    let list = ok_json(&r, StatusCode::OK);
    assert_eq!(list["total"], 1);
    assert_eq!(list["data"][0]["id"], dl.id.as_str());
    assert_eq!(list["data"][0]["state"], "dead-letter");
    assert_eq!(list["data"][0]["exceptionMessage"], "boom: the service said no");
    assert_eq!(app.get("/management/deadletter-jobs?processInstanceId=none").await.json["total"], 0);

    let r = app.get(&format!("/management/deadletter-jobs/{}", dl.id)).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["retries"], 0);
    // Asked for in the wrong table, the 404 says where it is.
    let r = app.get(&format!("/management/jobs/{}", dl.id)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.error().1.contains("/management/deadletter-jobs/"), "{}", r.text);
    let r = app.get(&format!("/management/deadletter-jobs/{}", other.id)).await;
    assert!(r.error().1.contains("/management/jobs/"), "{}", r.text);

    let r = app.get(&format!("/management/deadletter-jobs/{}/exception-stacktrace", dl.id)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.content_type.starts_with("text/plain"));
    assert!(r.text.contains("connection refused"), "{}", r.text);

    // Bad moves change nothing.
    for (body, needle) in [
        (json!({"action": "move", "retries": 0}), "retries"),
        (json!({"action": "move", "retries": -2}), "retries"),
        (json!({"action": "resurrect"}), "move"),
        (json!({"action": "move", "retriez": 3}), "retriez"),
    ] {
        let r = app.post(&format!("/management/deadletter-jobs/{}", dl.id), body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        assert!(r.error().1.contains(needle), "{body}: {}", r.text);
    }
    assert_eq!(app.get("/management/deadletter-jobs").await.json["total"], 1);

    let r = app.post(&format!("/management/deadletter-jobs/{}", dl.id), json!({"action": "move", "retries": 4})).await;
    let job = ok_json(&r, StatusCode::OK);
    assert_eq!(job["id"], dl.id.as_str());
    assert_eq!(job["retries"], 4);
    assert_eq!(job["state"], "executable");
    assert!(job["exceptionMessage"].is_null() && job["lockOwner"].is_null(), "{job}");
    assert_eq!(app.get("/management/deadletter-jobs").await.json["total"], 0);
    let r = app.get(&format!("/management/jobs/{}", dl.id)).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["retries"], 4);
    // Its old stack bytes went with the move.
    let r = app.get(&format!("/management/jobs/{}/exception-stacktrace", dl.id)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
}

#[tokio::test]
async fn moving_without_retries_gives_three() {
    let app = app().await;
    let dl = app.dead_letter("fail").await;
    let r = app.post(&format!("/management/deadletter-jobs/{}", dl.id), json!({"action": "move"})).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["retries"], 3);
}

#[tokio::test]
async fn a_dead_letter_can_be_deleted() {
    let app = app().await;
    let dl = app.dead_letter("fail").await;
    let r = app.delete(&format!("/management/deadletter-jobs/{}", dl.id)).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(app.job_rows().await, 0);
    let r = app.get(&format!("/management/deadletter-jobs/{}", dl.id)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Its log remains, and the 404 says so.
    assert!(r.error().1.contains("/history/job-log?jobId="), "{}", r.text);
    let r = app.get(&format!("/history/job-log?jobId={}", dl.id)).await;
    let log = ok_json(&r, StatusCode::OK);
    assert_eq!(log["total"], 1);
    assert_eq!(log["data"][0]["outcome"], "dead-lettered");
    assert_eq!(log["data"][0]["node"], "other-node");
    assert_eq!(log["data"][0]["attempt"], 1);
    assert_eq!(log["data"][0]["message"], "boom: the service said no");
}
