//! `POST /scheduler/cron/next`: the fire-time preview of a Quartz cron expression.

mod common;

use axum::http::StatusCode;
use common::{app, ok_json};
use serde_json::json;

#[tokio::test]
async fn answers_the_next_fire_times() {
    let app = app().await;
    let r = app
        .post(
            "/scheduler/cron/next",
            json!({"expression": "0 15 10 ? * MON-FRI", "from": "2024-06-01T00:00:00Z", "count": 3}),
        )
        .await;
    assert_eq!(
        *ok_json(&r, StatusCode::OK),
        json!({"times": ["2024-06-03T10:15:00Z", "2024-06-04T10:15:00Z", "2024-06-05T10:15:00Z"]})
    );
}

#[tokio::test]
async fn reads_local_times_in_the_time_zone() {
    let app = app().await;
    // Berlin falls back on 2024-10-27: 02:30 occurs twice and fires once, at the first (CEST).
    let body =
        json!({"expression": "0 30 2 * * ?", "timeZone": "Europe/Berlin", "from": "2024-10-26T12:00:00Z", "count": 2});
    let r = app.post("/scheduler/cron/next", body).await;
    assert_eq!(*ok_json(&r, StatusCode::OK), json!({"times": ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z"]}));
}

#[tokio::test]
async fn defaults_to_five_times_from_the_database_clock() {
    let app = app().await;
    let r = app.post("/scheduler/cron/next", json!({"expression": "0 * * * * ?"})).await;
    let times = ok_json(&r, StatusCode::OK)["times"].as_array().unwrap().clone();
    assert_eq!(times.len(), 5);
    let first: jiff::Timestamp = times[0].as_str().unwrap().parse().unwrap();
    let now = app.engine.store().db_now().await.unwrap();
    assert!(first > now && (first - now).get_seconds() <= 60, "{first} vs {now}");
}

#[tokio::test]
async fn stops_when_the_expression_stops_firing() {
    let app = app().await;
    let body = json!({"expression": "0 0 0 1 1 ? 2030", "from": "2029-06-01T00:00:00Z", "count": 10});
    let r = app.post("/scheduler/cron/next", body).await;
    assert_eq!(*ok_json(&r, StatusCode::OK), json!({"times": ["2030-01-01T00:00:00Z"]}));
}

#[tokio::test]
async fn an_invalid_expression_is_a_400_naming_field_and_position() {
    let app = app().await;
    let r = app.post("/scheduler/cron/next", json!({"expression": "0 0 12 ? * MON-FRX"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let (code, message) = r.error();
    assert_eq!(code, "invalid-argument");
    assert!(message.contains("day-of-week field, position 16"), "{message}");
    assert_eq!(r.json["error"]["field"], "expression");
}

#[tokio::test]
async fn invalid_zone_count_and_from_are_400s() {
    let app = app().await;
    for (body, field) in [
        (json!({"expression": "0 0 12 * * ?", "timeZone": "Mars/Olympus"}), "timeZone"),
        (json!({"expression": "0 0 12 * * ?", "count": 0}), "count"),
        (json!({"expression": "0 0 12 * * ?", "count": 1001}), "count"),
        (json!({"expression": "0 0 12 * * ?", "from": "yesterday"}), "from"),
    ] {
        let r = app.post("/scheduler/cron/next", body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        assert_eq!(r.json["error"]["field"], field, "{body}: {}", r.text);
    }
    let r = app.post("/scheduler/cron/next", json!({"expr": "0 0 12 * * ?"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
}
