//! Limits seen over HTTP (docs/limits.md): every instant field takes the same years and
//! refuses others naming the field; repeats faster than the engine's minimum and oversized
//! variables are 400s naming the field; nothing is written.

mod common;

use axum::http::StatusCode;
use common::app;
use serde_json::json;

fn field(r: &common::Reply) -> &str {
    r.json["error"]["field"].as_str().unwrap_or_else(|| panic!("no field: {}", r.text))
}

#[tokio::test]
async fn instants_outside_the_accepted_years_are_refused_naming_the_field_in_one_voice() {
    let app = app().await;
    let job = json!({"name": "j", "handler": "log"});
    assert_eq!(app.post("/scheduler/jobs", job).await.status, StatusCode::CREATED);
    for at in ["9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z"] {
        let cases = [
            ("/management/jobs", json!({"handler": "log", "dueDate": at}), "dueDate"),
            ("/scheduler/cron/next", json!({"expression": "0 0 12 * * ?", "from": at}), "from"),
            (
                "/scheduler/triggers",
                json!({"name": "t", "jobName": "j", "cron": {"expression": "0 0 12 * * ?"}, "startTime": at}),
                "startTime",
            ),
            (
                "/scheduler/triggers",
                json!({"name": "t", "jobName": "j", "cron": {"expression": "0 0 12 * * ?"}, "endTime": at}),
                "endTime",
            ),
        ];
        for (uri, body, name) in cases {
            let r = app.post(uri, body.clone()).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{uri} {body}: {}", r.text);
            assert_eq!(field(&r), name, "{}", r.text);
            assert!(r.error().1.contains("years 1970 through 9998"), "{uri} {body}: {}", r.text);
        }
    }
    // A repeat cycle's start names its field too (an instant jiff cannot hold at all, as
    // 9999-12-31T23:59:59Z, is refused by the cycle's parser with its own words).
    for at in ["0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z"] {
        let r = app.post("/management/jobs", json!({"handler": "log", "repeat": format!("R3/{at}/PT1H")})).await;
        assert_eq!((r.status, field(&r)), (StatusCode::BAD_REQUEST, "repeat"), "{}", r.text);
        assert!(r.error().1.contains("years 1970 through 9998"), "{}", r.text);
    }
    assert_eq!(app.job_rows().await, 0, "nothing written");
    for at in ["1970-01-01T00:00:00Z", "9998-12-31T23:59:59Z"] {
        let r = app.post("/management/jobs", json!({"handler": "log", "dueDate": at})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{at}: {}", r.text);
    }
}

#[tokio::test]
async fn a_repeat_below_the_minimum_interval_is_a_400_naming_the_field() {
    let app = app().await;
    let r = app.post("/management/jobs", json!({"handler": "log", "repeat": "R/PT0.001S"})).await;
    assert_eq!((r.status, field(&r)), (StatusCode::BAD_REQUEST, "repeat"), "{}", r.text);
    assert_eq!(app.post("/scheduler/jobs", json!({"name": "j", "handler": "log"})).await.status, StatusCode::CREATED);
    let r =
        app.post("/scheduler/triggers", json!({"name": "t", "jobName": "j", "simple": {"interval": "PT0.001S"}})).await;
    assert_eq!((r.status, field(&r)), (StatusCode::BAD_REQUEST, "simple.interval"), "{}", r.text);
    assert_eq!(app.job_rows().await, 0, "nothing written");
}
