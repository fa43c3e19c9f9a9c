//! `/management/jobs` and `/management/timer-jobs` in-process, against a real SQLite store.

mod common;

use axum::http::{Method, StatusCode};
use common::{app, big_payload_body, ok_json};
use kairos::{Completion, EnqueueRequest, SignedDuration};
use serde_json::json;

#[tokio::test]
async fn enqueue_returns_201_with_the_job_and_its_location() {
    let app = app().await;
    let r = app
        .post(
            "/management/jobs",
            json!({"handler": "log", "payload": {"hello": "world"}, "retries": 5, "exclusiveKey": "order-1", "tenantId": "acme"}),
        )
        .await;
    let job = ok_json(&r, StatusCode::CREATED);
    let id = job["id"].as_str().unwrap();
    assert_eq!(job["type"], "message");
    assert_eq!(job["state"], "executable");
    assert_eq!(job["handlerType"], "log");
    assert_eq!(job["payload"], json!({"hello": "world"}));
    assert_eq!(job["retries"], 5);
    assert_eq!(job["exclusive"], true);
    assert_eq!(job["exclusiveKey"], "order-1");
    assert_eq!(job["tenantId"], "acme");
    assert!(job["createTime"].as_str().unwrap().ends_with('Z'), "RFC 3339 UTC: {}", job["createTime"]);
    for key in [
        "processInstanceId",
        "executionId",
        "elementId",
        "exceptionMessage",
        "lockOwner",
        "lockExpirationTime",
        "repeat",
    ] {
        assert!(job.get(key).is_some_and(|v| v.is_null()), "{key} is present and null: {job}");
    }

    let got = app.get(&format!("/management/jobs/{id}")).await;
    assert_eq!(ok_json(&got, StatusCode::OK)["id"], id);
}

#[tokio::test]
async fn timers_are_listed_filtered_and_paged() {
    let app = app().await;
    let timer =
        app.post("/management/jobs", json!({"handler": "log", "repeat": "R3/PT5M", "retryCycle": "R2/PT1M"})).await;
    let timer = ok_json(&timer, StatusCode::CREATED).clone();
    assert_eq!(timer["type"], "timer");
    assert_eq!(timer["state"], "waiting");
    assert_eq!(timer["repeat"], "R3/PT5M");
    assert_eq!(timer["retryCycle"], "R2/PT1M");
    let later = app.post("/management/jobs", json!({"handler": "noop", "dueIn": "PT1H"})).await;
    assert_eq!(ok_json(&later, StatusCode::CREATED)["type"], "timer");
    for _ in 0..3 {
        ok_json(&app.post("/management/jobs", json!({"handler": "log"})).await, StatusCode::CREATED);
    }

    let all = app.get("/management/jobs").await;
    let all = ok_json(&all, StatusCode::OK);
    assert_eq!((all["total"].as_u64(), all["start"].as_u64(), all["size"].as_u64()), (Some(5), Some(0), Some(5)));

    let timers = app.get("/management/timer-jobs").await;
    assert_eq!(ok_json(&timers, StatusCode::OK)["total"], 2);
    let timers = app.get("/management/jobs?type=timer&handlerType=log").await;
    let timers = ok_json(&timers, StatusCode::OK);
    assert_eq!(timers["total"], 1);
    assert_eq!(timers["data"][0]["id"], timer["id"]);
    let messages = app.get("/management/jobs?type=message").await;
    assert_eq!(ok_json(&messages, StatusCode::OK)["total"], 3);

    let page = app.get("/management/jobs?start=1&size=2").await;
    let page = ok_json(&page, StatusCode::OK);
    assert_eq!((page["total"].as_u64(), page["start"].as_u64(), page["size"].as_u64()), (Some(5), Some(1), Some(2)));
    assert_eq!(page["data"].as_array().unwrap().len(), 2);

    let none = app.get("/management/jobs?processInstanceId=nobody").await;
    assert_eq!(ok_json(&none, StatusCode::OK)["total"], 0);
    let failing = app.get("/management/jobs?withException=true").await;
    assert_eq!(ok_json(&failing, StatusCode::OK)["total"], 0);
}

#[tokio::test]
async fn execute_makes_a_waiting_timer_due_now() {
    let app = app().await;
    let r = app.post("/management/jobs", json!({"handler": "log", "dueIn": "PT1H"})).await;
    let id = ok_json(&r, StatusCode::CREATED)["id"].as_str().unwrap().to_string();
    assert_eq!(r.json["state"], "waiting");

    let r = app.post(&format!("/management/jobs/{id}"), json!({"action": "execute"})).await;
    let job = ok_json(&r, StatusCode::OK);
    assert_eq!(job["state"], "executable");
    assert!(job["dueDate"].is_string(), "{job}");

    let r = app.post(&format!("/management/jobs/{id}"), json!({"action": "explode"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.error().1.contains("explode") && r.error().1.contains("execute"), "{}", r.text);

    let r = app.post("/management/jobs/no-such-job", json!({"action": "execute"})).await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"));
}

#[tokio::test]
async fn delete_removes_a_job_and_refuses_a_live_lease_unless_forced() {
    let app = app().await;
    let free =
        app.enqueue(EnqueueRequest { handler: "log".into(), due_in: Some("PT1H".into()), ..Default::default() }).await;
    let r = app.delete(&format!("/management/jobs/{}", free.id)).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    let r = app.get(&format!("/management/jobs/{}", free.id)).await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"));

    let busy = app.enqueue(EnqueueRequest { handler: "log".into(), ..Default::default() }).await;
    let locked = app.acquire("other-node", SignedDuration::from_mins(5)).await;
    assert_eq!(locked.len(), 1);
    let r = app.delete(&format!("/management/jobs/{}", busy.id)).await;
    assert_eq!((r.status, r.error().0), (StatusCode::CONFLICT, "conflict"), "{}", r.text);
    assert!(r.error().1.contains("force=true"), "{}", r.text);
    let r = app.get(&format!("/management/jobs/{}", busy.id)).await;
    assert_eq!(ok_json(&r, StatusCode::OK)["lockOwner"], "other-node");
    assert_eq!(r.json["state"], "running");

    let r = app.delete(&format!("/management/jobs/{}?force=maybe", busy.id)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app.delete(&format!("/management/jobs/{}?force=true", busy.id)).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(app.job_rows().await, 0);

    let r = app.delete("/management/jobs/no-such-job").await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"));
}

#[tokio::test]
async fn a_failing_job_shows_its_exception_and_stack_trace() {
    let app = app().await;
    let job = app.enqueue(EnqueueRequest { handler: "fail".into(), ..Default::default() }).await;
    let r = app.get(&format!("/management/jobs/{}/exception-stacktrace", job.id)).await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"), "no failure yet: {}", r.text);

    let locked = app.acquire("other-node", SignedDuration::from_mins(5)).await.pop().unwrap();
    let due = app.engine.store().db_now().await.unwrap() + SignedDuration::from_secs(10);
    let completion = Completion::Retry {
        retries: 2,
        due,
        message: "boom".into(),
        stack: "boom\ncaused by: the service is down".into(),
    };
    app.complete(&locked, completion).await;

    let r = app.get(&format!("/management/jobs/{}/exception-stacktrace", job.id)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.content_type.starts_with("text/plain"), "{}", r.content_type);
    assert!(r.text.contains("caused by: the service is down"), "{}", r.text);

    let r = app.get("/management/jobs?withException=true").await;
    let list = ok_json(&r, StatusCode::OK);
    assert_eq!(list["total"], 1);
    assert_eq!(list["data"][0]["exceptionMessage"], "boom");
    assert_eq!(list["data"][0]["retries"], 2);
    assert_eq!(list["data"][0]["attempts"], 1);
    assert_eq!(app.get("/management/jobs?withException=false").await.json["total"], 0);

    let r = app.get("/management/jobs/no-such-job/exception-stacktrace").await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"));
}

/// The bad-input list: each a 4xx in our error shape, naming the field, and nothing written.
#[tokio::test]
async fn bad_requests_name_the_field_and_write_nothing() {
    let app = app().await;
    ok_json(&app.post("/management/jobs", json!({"handler": "log"})).await, StatusCode::CREATED);
    let before = app.job_rows().await;

    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("unknown handler", json!({"handler": "nope"}).to_string(), "unknown-handler", "nope"),
        ("empty handler", json!({"handler": " "}).to_string(), "invalid-argument", "handler"),
        ("missing handler", json!({"payload": {}}).to_string(), "invalid-argument", "handler"),
        ("malformed JSON", r#"{"handler": "log", "#.to_string(), "invalid-json", "JSON"),
        ("not an object", "[1, 2]".to_string(), "invalid-json", "object"),
        ("empty body", String::new(), "invalid-json", "empty"),
        ("duplicate key", r#"{"handler": "log", "handler": "fail"}"#.to_string(), "invalid-json", "handler"),
        (
            "nested duplicate",
            r#"{"handler": "log", "payload": {"a": [{"b": 1, "b": 2}]}}"#.into(),
            "invalid-json",
            "payload.a[0].b",
        ),
        ("unknown field", json!({"handler": "log", "priority": 5}).to_string(), "invalid-argument", "priority"),
        ("wrong type", json!({"handler": "log", "retries": "three"}).to_string(), "invalid-argument", "retries"),
        ("dueIn not ISO", json!({"handler": "log", "dueIn": "5 minutes"}).to_string(), "invalid-argument", "dueIn"),
        ("repeat not ISO", json!({"handler": "log", "repeat": "R3/banana"}).to_string(), "invalid-argument", "repeat"),
        (
            "retryCycle not ISO",
            json!({"handler": "log", "retryCycle": "R5/PT10X"}).to_string(),
            "invalid-argument",
            "retryCycle",
        ),
        (
            "dueDate not RFC 3339",
            json!({"handler": "log", "dueDate": "tomorrow"}).to_string(),
            "invalid-argument",
            "dueDate",
        ),
        (
            "dueDate and dueIn",
            json!({"handler": "log", "dueDate": "2030-01-01T00:00:00Z", "dueIn": "PT1M"}).to_string(),
            "invalid-argument",
            "dueIn",
        ),
        ("negative retries", json!({"handler": "log", "retries": -1}).to_string(), "invalid-argument", "retries"),
        ("zero retries", json!({"handler": "log", "retries": 0}).to_string(), "invalid-argument", "retries"),
        (
            "retries overflow",
            json!({"handler": "log", "retries": 1u64 << 40}).to_string(),
            "invalid-argument",
            "retries",
        ),
        (
            "long exclusiveKey",
            json!({"handler": "log", "exclusiveKey": "k".repeat(300)}).to_string(),
            "invalid-argument",
            "exclusiveKey",
        ),
    ];
    for (what, body, code, needle) in cases {
        let r = app.send(Method::POST, "/management/jobs", Some(body.into_bytes())).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{what}: {}", r.text);
        let (got_code, message) = r.error();
        assert_eq!(got_code, code, "{what}: {}", r.text);
        assert!(message.contains(needle), "{what}: the message names {needle:?}: {message}");
        assert!(r.content_type.starts_with("application/json"), "{what}: {}", r.content_type);
        if (code == "invalid-argument" && what != "not an object") || what.contains("duplicate") {
            assert_eq!(r.json["error"]["field"], needle, "{what}: the field member names it: {}", r.text);
        }
    }

    // Over 1 MiB of payload: read, validated, refused by name.
    let r = app.send(Method::POST, "/management/jobs", Some(big_payload_body(1024 * 1024 + 10))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    assert_eq!(r.json["error"]["field"], "payload");
    assert!(r.error().1.contains("payload"), "{}", r.text);
    // Over the body limit: not even read.
    let r = app.send(Method::POST, "/management/jobs", Some(big_payload_body(3 * 1024 * 1024))).await;
    assert_eq!((r.status, r.error().0), (StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large"), "{}", r.text);

    // Not JSON at all.
    let req = axum::http::Request::post("/management/jobs")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(axum::body::Body::from("handler=log"))
        .unwrap();
    let r = app.call(req).await;
    assert_eq!((r.status, r.error().0), (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type"));

    assert_eq!(app.job_rows().await, before, "no bad request wrote a job");
}

#[tokio::test]
async fn bad_query_parameters_are_400s_naming_them() {
    let app = app().await;
    let cases = [
        ("/management/jobs?size=-1", "size"),
        ("/management/jobs?size=5000", "size"),
        ("/management/jobs?start=x", "start"),
        ("/management/jobs?type=bogus", "type"),
        ("/management/jobs?withException=yes", "withException"),
        ("/management/jobs?procesInstanceId=x", "procesInstanceId"),
        ("/management/timer-jobs?type=message", "type"),
        ("/management/deadletter-jobs?size=abc", "size"),
        ("/history/job-log?size=-3", "size"),
        ("/history/job-log?job=x", "job"),
    ];
    for (uri, needle) in cases {
        let r = app.get(uri).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{uri}: {}", r.text);
        assert!(r.error().1.contains(needle), "{uri}: {}", r.text);
    }
}

#[tokio::test]
async fn an_unknown_job_id_is_a_404_everywhere() {
    let app = app().await;
    for uri in
        ["/management/jobs/nope", "/management/jobs/nope/exception-stacktrace", "/management/deadletter-jobs/nope"]
    {
        let r = app.get(uri).await;
        assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "not-found"), "{uri}");
        assert!(r.error().1.contains("nope"), "{uri}: {}", r.text);
    }
    let r = app.post("/management/deadletter-jobs/nope", json!({"action": "move"})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app.delete("/management/deadletter-jobs/nope").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// Issue 14 item 1: a job row kairos cannot read answers in the list beside the good rows,
/// by id, column and stored text; GET names it (422, no 500); a forced DELETE removes it; the
/// listing route names it too.
#[tokio::test]
async fn an_unreadable_job_row_is_listed_named_and_deletable() {
    let app = app().await;
    let good = app.enqueue(EnqueueRequest { handler: "log".into(), ..Default::default() }).await;
    let bad = app.enqueue(EnqueueRequest { handler: "log".into(), ..Default::default() }).await;
    let store = app.engine.store();
    store
        .sql_execute(
            "UPDATE ACT_RU_JOB SET DUEDATE_ = '0000-garbage' WHERE ID_ = ?",
            &[kairos::store::SqlValue::Text(bad.id.clone())],
        )
        .await
        .unwrap();

    let r = app.get("/management/jobs").await;
    let list = ok_json(&r, StatusCode::OK);
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["data"][0]["id"], good.id.as_str());
    assert_eq!(list["size"], 2);
    assert_eq!(
        list["unreadable"],
        json!([{"table": "ACT_RU_JOB", "id": bad.id, "column": "DUEDATE_", "raw": "0000-garbage",
                "problem": "is not an instant (UTC, YYYY-MM-DD HH:MM:SS.SSS)"}])
    );

    let r = app.get(&format!("/management/jobs/{}", bad.id)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{r:?}");
    let (code, message) = r.error();
    assert_eq!(code, "unreadable-row");
    assert!(message.contains(&bad.id) && message.contains("DUEDATE_") && message.contains("0000-garbage"), "{message}");

    let r = app.get("/management/unreadable-rows").await;
    let rows = ok_json(&r, StatusCode::OK);
    assert_eq!(rows["data"][0]["id"], bad.id.as_str(), "{rows}");
    assert_eq!(rows["data"][0]["column"], "DUEDATE_");

    let r = app.delete(&format!("/management/jobs/{}?force=true", bad.id)).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{r:?}");
    let r = app.get("/management/unreadable-rows").await;
    assert_eq!(ok_json(&r, StatusCode::OK)["data"], json!([]));
    let r = app.get("/management/jobs").await;
    assert!(ok_json(&r, StatusCode::OK).get("unreadable").is_none(), "no key when every row reads");
}

/// A job string longer than its ACT_RU_JOB column is a 400 naming the field, before any write,
/// on every store (SQLite stored it; PostgreSQL answered with its raw "value too long").
#[tokio::test]
async fn a_job_string_longer_than_its_column_is_a_400_naming_the_field() {
    let app = app().await;
    let every: Vec<String> = (0..60).map(|n| n.to_string()).collect();
    let long_cron = format!("{} {} 12 * * ?", every.join(","), every.join(","));
    assert!(long_cron.len() > 255);
    let r = app.post("/management/jobs", json!({"handler": "log", "repeat": long_cron})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{r:?}");
    let body: serde_json::Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(body["error"]["field"], "repeat", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("at most 255"), "{body}");
    assert_eq!(app.job_rows().await, 0, "nothing written");
}
