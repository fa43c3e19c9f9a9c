//! API.md "Scheduler": jobs, triggers, trigger groups, calendars, fired triggers and nodes over
//! HTTP; bad input is a 4xx naming the field, with nothing written.

mod common;

use axum::http::{Method, StatusCode};
use common::{App, app, ok_json};
use serde_json::{Value, json};

async fn put(app: &App, uri: &str, body: Value) -> common::Reply {
    app.send(Method::PUT, uri, Some(body.to_string().into_bytes())).await
}

async fn qrtz_rows(app: &App) -> i64 {
    let rows = app
        .engine
        .store()
        .sql_query("SELECT (SELECT COUNT(*) FROM QRTZ_TRIGGERS) + (SELECT COUNT(*) FROM QRTZ_JOB_DETAILS)", &[])
        .await
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

#[tokio::test]
async fn jobs_triggers_groups_and_calendars_round_trip() {
    let app = app().await;
    let r = app
        .post("/scheduler/jobs", json!({"name": "report", "handler": "log", "durable": true, "concurrent": false}))
        .await;
    let job = ok_json(&r, StatusCode::CREATED);
    assert_eq!((job["group"].as_str(), job["concurrent"].as_bool()), (Some("DEFAULT"), Some(false)), "{job}");
    let r = app.post("/scheduler/jobs", json!({"name": "report", "handler": "log"})).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

    let r = put(
        &app,
        "/scheduler/calendars/holidays",
        json!({"type": "holiday", "excludedDates": ["2099-12-25"], "timeZone": "Europe/Berlin"}),
    )
    .await;
    ok_json(&r, StatusCode::OK);
    let r = put(&app, "/scheduler/calendars/workdays", json!({"type": "weekly", "baseCalendar": "holidays"})).await;
    let cal = ok_json(&r, StatusCode::OK);
    assert_eq!(cal["baseCalendar"]["type"].as_str(), Some("holiday"), "the base is copied in: {cal}");
    let r = app.get("/scheduler/calendars").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["data"], json!(["holidays", "workdays"]));
    let r = app.get("/scheduler/calendars?start=1&size=1").await;
    let page = ok_json(&r, StatusCode::OK);
    assert_eq!((page["data"].clone(), page["total"].as_u64()), (json!(["workdays"]), Some(2)), "{page}");
    let r = app.get("/scheduler/calendars?sort=name").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "an unknown parameter is refused: {}", r.text);
    let r = app.get("/scheduler/calendars/%FF").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert!(r.text.contains("\"error\""), "the API's error shape: {}", r.text);

    let r = app
        .post(
            "/scheduler/triggers",
            json!({"name": "weekdays", "jobName": "report", "calendarName": "workdays", "misfirePolicy": "doNothing",
                   "cron": {"expression": "0 0 2 ? * MON-FRI", "timeZone": "Europe/Berlin"}}),
        )
        .await;
    let t = ok_json(&r, StatusCode::CREATED);
    assert_eq!(
        (t["state"].as_str(), t["type"].as_str(), t["misfirePolicy"].as_str()),
        (Some("WAITING"), Some("CRON"), Some("doNothing")),
        "{t}"
    );
    let next: jiff::Timestamp = t["nextFireTime"].as_str().unwrap().parse().unwrap();
    let local = next.to_zoned(jiff::tz::TimeZone::get("Europe/Berlin").unwrap());
    assert_eq!(local.hour(), 2, "{local}");
    assert!(!matches!(local.weekday(), jiff::civil::Weekday::Saturday | jiff::civil::Weekday::Sunday));

    let r = app.get("/scheduler/triggers/DEFAULT/weekdays").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["schedule"]["expression"].as_str(), Some("0 0 2 ? * MON-FRI"));
    let r = put(&app, "/scheduler/triggers/DEFAULT/weekdays", json!({"action": "pause"})).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["state"].as_str(), Some("PAUSED"));
    let r = put(&app, "/scheduler/triggers/DEFAULT/weekdays", json!({"action": "resume"})).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["state"].as_str(), Some("WAITING"));
    let r = put(&app, "/scheduler/triggers/DEFAULT/weekdays", json!({"action": "explode"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);

    let r = put(&app, "/scheduler/trigger-groups/nightly", json!({"action": "pause"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = app
        .post(
            "/scheduler/triggers",
            json!({"name": "n1", "group": "nightly", "jobName": "report", "simple": {"interval": "PT1H"}}),
        )
        .await;
    assert_eq!(
        ok_json(&r, StatusCode::CREATED)["state"].as_str(),
        Some("PAUSED"),
        "a paused group catches new triggers"
    );
    let r = app.get("/scheduler/triggers?state=PAUSED").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["total"], 1);
    let r = app.get("/scheduler/triggers?state=SLEEPING").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);

    let r = app.delete("/scheduler/calendars/workdays").await;
    assert_eq!(r.status, StatusCode::CONFLICT, "a calendar in use stays: {}", r.text);
    let r = app.delete("/scheduler/triggers/DEFAULT/weekdays").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = app.delete("/scheduler/calendars/workdays").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = app.get("/scheduler/fired-triggers").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["total"], 0);
    let r = app.get("/scheduler/nodes?start=0&size=10").await;
    ok_json(&r, StatusCode::OK);
    let r = app.get("/scheduler/fired-triggers?size=many").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = app.delete("/scheduler/jobs/DEFAULT/report").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(qrtz_rows(&app).await, 0, "the job went with its triggers");
}

#[tokio::test]
async fn bad_requests_name_the_field_and_write_nothing() {
    let app = app().await;
    ok_json(&app.post("/scheduler/jobs", json!({"name": "j", "handler": "log"})).await, StatusCode::CREATED);
    let before = qrtz_rows(&app).await;
    let cases = [
        (json!({"name": "t", "jobName": "j", "cron": {"expression": "0 0 12 ? * MON-FRX"}}), "cron.expression"),
        (
            json!({"name": "t", "jobName": "j", "cron": {"expression": "0 * * * * ?", "timeZone": "Atlantis/Capital"}}),
            "cron.timeZone",
        ),
        (
            json!({"name": "t", "jobName": "j", "simple": {"interval": "PT1S"}, "startTime": "2030-01-02T00:00:00Z", "endTime": "2030-01-01T00:00:00Z"}),
            "endTime",
        ),
        (json!({"name": "t", "jobName": "j", "simple": {"interval": "PT1S"}, "calendarName": "nope"}), "calendarName"),
        (json!({"name": "t", "jobName": "j", "simple": {"interval": "-PT5S"}}), "simple.interval"),
        (
            json!({"name": "t", "jobName": "j", "calendarInterval": {"interval": -1, "unit": "day"}}),
            "calendarInterval.interval",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/scheduler/triggers", body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        assert!(r.text.contains(field), "{body}: {} should name {field}", r.text);
    }
    // A calendar excluding every second of the cron years: Quartz's "will never fire", not a
    // first fire time in 2100 (where the cron years end).
    ok_json(
        &put(&app, "/scheduler/calendars/always", json!({"type": "cron", "expression": "* * * * * ?"})).await,
        StatusCode::OK,
    );
    for schedule in [
        json!({"simple": {"interval": "PT24H", "repeatCount": -1}}),
        json!({"calendarInterval": {"interval": 1, "unit": "day"}}),
        json!({"dailyTimeInterval": {"interval": 1, "unit": "hour"}}),
    ] {
        let mut body = json!({"name": "excluded", "group": "nightly", "jobName": "j", "calendarName": "always"});
        body.as_object_mut().unwrap().extend(schedule.as_object().unwrap().clone());
        let r = app.post("/scheduler/triggers", body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
        assert!(r.text.contains("nightly.excluded") && r.text.contains("never fire"), "{body}: {}", r.text);
    }
    let r = app.post("/scheduler/jobs", json!({"name": "k", "handler": "not-registered"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r =
        put(&app, "/scheduler/calendars/c", json!({"type": "daily", "rangeStart": "18:00", "rangeEnd": "08:00"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = app.get("/scheduler/triggers/DEFAULT/missing").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    // A job detail has no state: the filter is refused, not silently ignored.
    let r = app.get("/scheduler/jobs?state=PAUSED").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    let r = app.get("/scheduler/jobs?group=").await;
    assert_eq!(
        (r.status, r.json["total"].as_u64()),
        (StatusCode::OK, Some(1)),
        "an empty group is no filter: {}",
        r.text
    );
    assert_eq!(qrtz_rows(&app).await, before, "nothing written");
}
