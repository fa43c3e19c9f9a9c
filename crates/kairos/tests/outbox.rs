//! The transactional outbox end to end (SPEC C4), on both backends, with a real HTTP sink: an
//! axum server on 127.0.0.1 that records each delivery's Idempotency-Key.

mod common;

use axum::http::{HeaderMap, StatusCode};
use common::{Backend, Fixture, count_rows, wait_until};
use kairos::outbox::http::{HttpSink, HttpSinkSettings};
use kairos::outbox::{NewEvent, OutboxSettings};
use kairos::{Engine, SignedDuration};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Deliveries the local sink took: (Idempotency-Key, body).
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A local HTTP sink: answers 400 to a body containing "poison", 503 to one containing
/// "flaky", 204 otherwise.
async fn local_sink() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/events",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let s = s.clone();
            async move {
                let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                let answer = if body.contains("poison") {
                    StatusCode::BAD_REQUEST
                } else if body.contains("flaky") {
                    StatusCode::SERVICE_UNAVAILABLE
                } else {
                    StatusCode::NO_CONTENT
                };
                s.lock().unwrap().push((key, body));
                answer
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/events"), seen)
}

/// Serves `app` on 127.0.0.1 and answers an http sink posting to `{url}{path}` through the
/// address guard with loopback allowed, with the request timeout `timeout` (or the default).
async fn sink_for(app: axum::Router, path: &str, timeout: Option<Duration>) -> HttpSink {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{path}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut settings = HttpSinkSettings {
        base_url: Some(url),
        allow_hosts: vec!["127.0.0.1".into()],
        allow_private: true,
        ..Default::default()
    };
    if let Some(t) = timeout {
        settings.timeout = t;
    }
    HttpSink::new(settings).unwrap()
}

async fn engine(fx: &Fixture, node: &str, url: &str) -> Engine {
    let http = HttpSink::new(HttpSinkSettings {
        base_url: Some(url.into()),
        allow_hosts: vec!["127.0.0.1".into()],
        allow_private: true,
        ..Default::default()
    })
    .unwrap();
    // The same allow-list without allow_private: the address guard's case.
    let guarded =
        HttpSink::new(HttpSinkSettings { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() }).unwrap();
    let e = fx
        .engine(node)
        .sink("http", http)
        .sink("guarded", guarded)
        .outbox(OutboxSettings {
            backoff: Duration::from_millis(10),
            backoff_max: Duration::from_millis(50),
            idle_poll: Duration::from_millis(50),
            max_attempts: 3,
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    e.start().await.unwrap();
    e
}

fn event(id: &str, agg: &str, payload: serde_json::Value) -> NewEvent {
    NewEvent {
        event_id: id.into(),
        aggregate_type: "ASSET_PUBLISH_APPLY".into(),
        aggregate_id: agg.into(),
        event_type: "ASSET_PUBLISH_REQUESTED".into(),
        payload_json: payload.to_string(),
        target: "http".into(),
        target_url: None,
        ordered: false,
        max_attempts: 3,
    }
}

async fn status(e: &Engine, id: &str) -> Option<String> {
    e.outbox().get(id).await.unwrap().map(|x| x.event_status)
}

/// Seed 002 §12: an event written in a transaction that rolls back never exists, so it is
/// never delivered; a committed one is delivered once, keyed by its id.
async fn a_rolled_back_event_is_never_delivered_and_a_committed_one_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    for (id, commit) in [("rolled-back", false), ("committed", true)] {
        let ev = event(id, "1001", serde_json::json!({"applyId": 1001}));
        match backend {
            Backend::Sqlite => {
                use sqlx::Connection;
                let mut conn = sqlx::SqliteConnection::connect(&fx.url).await.unwrap();
                let mut t = conn.begin_with("BEGIN IMMEDIATE").await.unwrap();
                {
                    let db = kairos_store_sqlite::InTransaction::new(&mut t);
                    e.outbox_write_in(&db, &ev).await.unwrap();
                }
                if commit { t.commit().await.unwrap() } else { t.rollback().await.unwrap() }
            }
            Backend::Postgres => {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&fx.url).await.unwrap();
                let mut t = conn.begin().await.unwrap();
                {
                    let db = kairos_store_postgres::InTransaction::new(&mut t);
                    e.outbox_write_in(&db, &ev).await.unwrap();
                }
                if commit { t.commit().await.unwrap() } else { t.rollback().await.unwrap() }
            }
        }
        e.outbox().wake();
    }
    wait_until(Duration::from_secs(20), "the committed event is published", || async {
        status(&e, "committed").await.as_deref() == Some("PUBLISHED")
    })
    .await;
    assert_eq!(status(&e, "rolled-back").await, None);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "committed", "Idempotency-Key is the event id");
    assert_eq!(seen[0].1, r#"{"applyId":1001}"#);
    e.shutdown(Duration::from_secs(5)).await;
}

/// One event the target refuses (400) is FAILED at once, one it keeps answering 503 after its
/// 3 attempts; the 1,000 beside them are all published.
async fn a_poison_event_fails_alone_while_the_others_publish(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    e.outbox_write(&event("poison", "p", serde_json::json!({"kind": "poison"}))).await.unwrap();
    e.outbox_write(&event("flaky", "f", serde_json::json!({"kind": "flaky"}))).await.unwrap();
    let writes: Vec<_> = (0..1000)
        .map(|i| {
            e.outbox()
                .insert(e.store().dialect(), &event(&format!("ok-{i}"), &format!("a{i}"), serde_json::json!({"i": i})))
                .unwrap()
        })
        .collect();
    for chunk in writes.chunks(100) {
        e.store().write_all(chunk).await.unwrap();
    }
    e.outbox().wake();
    wait_until(Duration::from_secs(120), "1,000 published and the poison FAILED", || async {
        let (_, counts) = e.outbox().counts().await.unwrap();
        let n = |s: &str| counts.iter().find(|c| c.status == s).unwrap().count;
        n("PUBLISHED") == 1000 && n("FAILED") == 2
    })
    .await;
    let p = e.outbox().get("poison").await.unwrap().unwrap();
    assert_eq!(p.last_error_code.as_deref(), Some("PERMANENT"), "a 400 is permanent: {p:?}");
    assert_eq!(p.last_error.as_deref(), Some("HTTP 400"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.iter().filter(|(k, _)| k == "poison").count(), 1, "a permanent refusal is not retried");
    let f = e.outbox().get("flaky").await.unwrap().unwrap();
    assert_eq!((f.last_error_code.as_deref(), f.retry_count), (Some("ATTEMPTS_EXHAUSTED"), 3), "{f:?}");
    assert_eq!(seen.iter().filter(|(k, _)| k == "flaky").count(), 3, "a 503 is tried max_attempts times");
    e.shutdown(Duration::from_secs(5)).await;
}

/// A publisher that claimed and then died (its lease expires): another takes the event over
/// and delivers it with the same key; the dead claim's late mark writes nothing.
async fn an_expired_lease_is_delivered_by_another_publisher_with_the_same_key(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let writer = fx.engine("writer").executor_enabled(false).build().await.unwrap();
    // The writer knows no base URL: the event names its URL (127.0.0.1 passes the writer's
    // check only as a listed host, so it is written with the store's insert directly).
    let mut ev = event("e1", "1", serde_json::json!({}));
    ev.target_url = Some(url.clone());
    writer.store().write_all(&[kairos_store_engine::outbox::insert(writer.store().dialect(), &ev)]).await.unwrap();
    let dead =
        kairos_store_engine::outbox::claim(writer.store().as_ref(), "dead-node", SignedDuration::from_millis(300), 10)
            .await
            .unwrap();
    assert_eq!(dead.len(), 1);
    let e = engine(&fx, "n2", &url).await;
    wait_until(Duration::from_secs(20), "the taken-over event is published", || async {
        status(&e, "e1").await.as_deref() == Some("PUBLISHED")
    })
    .await;
    assert!(!kairos_store_engine::outbox::mark_failed(e.store().as_ref(), &dead[0], "X", "late").await.unwrap());
    assert_eq!(status(&e, "e1").await.as_deref(), Some("PUBLISHED"));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["e1"]);
    e.shutdown(Duration::from_secs(5)).await;
}

/// An ordered aggregate's events arrive in the order they were written, although the
/// publisher delivers up to 16 at once.
async fn an_ordered_aggregate_keeps_its_order(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    let ids: Vec<String> = (0..20).map(|i| format!("{}-{i}", 99 - i)).collect();
    let writes: Vec<_> = ids
        .iter()
        .map(|id| {
            let mut ev = event(id, "agg-1", serde_json::json!({"id": id}));
            ev.ordered = true;
            e.outbox().insert(e.store().dialect(), &ev).unwrap()
        })
        .collect();
    e.store().write_all(&writes).await.unwrap();
    e.outbox().wake();
    wait_until(Duration::from_secs(30), "all 20 published", || async { seen.lock().unwrap().len() >= 20 }).await;
    let got: Vec<String> = seen.lock().unwrap().iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(got, ids);
    e.shutdown(Duration::from_secs(5)).await;
}

/// Bad input is refused before anything is written, naming the field.
async fn bad_input_names_the_field_and_writes_nothing(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, _seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    let big = event("big", "1", serde_json::json!({"x": "y".repeat(1024 * 1024)}));
    let mut off_list = event("off", "1", serde_json::json!({}));
    off_list.target_url = Some("http://example.com/hook".into());
    let mut private = event("private", "1", serde_json::json!({}));
    private.target = "guarded".into();
    private.target_url = Some(url.clone());
    let mut unknown = event("unknown", "1", serde_json::json!({}));
    unknown.target = "kafka".into();
    let mut empty = event("empty", "1", serde_json::json!({}));
    empty.event_type = String::new();
    for (ev, field) in [
        (big, "payload:"),
        (off_list, "targetUrl:"),
        (private, "targetUrl:"),
        (unknown, "target:"),
        (empty, "eventType:"),
    ] {
        let err = e.outbox_write(&ev).await.unwrap_err().to_string();
        assert!(err.starts_with(field), "{}: {err}", ev.event_id);
    }
    assert_eq!(count_rows(e.store(), "outbox_event").await, 0);
    e.shutdown(Duration::from_secs(5)).await;
}

const PUBLISHING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="publish" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="announce"/>
    <serviceTask id="announce" activiti:class="outbox">
      <extensionElements>
        <activiti:field name="eventType" stringValue="ASSET_PUBLISH_REQUESTED"/>
        <activiti:field name="aggregateType" stringValue="ASSET_PUBLISH_APPLY"/>
        <activiti:field name="aggregateId" expression="${applyId}"/>
        <activiti:field name="payload" expression="${apply}"/>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f2" sourceRef="announce" targetRef="wait"/>
    <userTask id="wait"/>
    <sequenceFlow id="f3" sourceRef="wait" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Seed 002 §11: a model publishes through the built-in `outbox` service task; the event is
/// written in the start's own transaction and then delivered.
async fn a_service_task_publishes_in_the_commands_transaction(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    e.processes().deploy("publish.bpmn", PUBLISHING).await.unwrap();
    let mut vars = serde_json::Map::new();
    vars.insert("applyId".into(), serde_json::json!("1001"));
    vars.insert("apply".into(), serde_json::json!({"asset": "A-7"}));
    let started = e
        .processes()
        .start(kairos::process::StartRequest {
            process_definition_key: Some("publish".into()),
            variables: vars,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!started.ended);
    let events = e
        .outbox()
        .list(&kairos::outbox::Filter { aggregate_id: Some("1001".into()), size: 10, ..Default::default() })
        .await
        .unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let id = events[0].event_id.clone();
    wait_until(Duration::from_secs(20), "the model's event is delivered", || async {
        seen.lock().unwrap().iter().any(|(k, _)| *k == id)
    })
    .await;
    let body = seen.lock().unwrap().iter().find(|(k, _)| *k == id).unwrap().1.clone();
    assert_eq!(body, r#"{"asset":"A-7"}"#);
    e.shutdown(Duration::from_secs(5)).await;
}

/// The built-in `http` job handler posts through the sink's code with Idempotency-Key = the
/// job id; a URL off the allow-list fails the job, naming `url`, and reaches nothing.
async fn the_http_job_handler_posts_with_the_job_id_as_key(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = local_sink().await;
    let e = engine(&fx, "n1", &url).await;
    let job = e
        .enqueue(&kairos::EnqueueRequest {
            handler: "http".into(),
            payload: Some(serde_json::json!({"url": url, "body": {"hello": "world"}})),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_until(Duration::from_secs(20), "the job's POST arrives", || async { !seen.lock().unwrap().is_empty() }).await;
    let got = seen.lock().unwrap().clone();
    assert_eq!(got, [(job.id.clone(), r#"{"hello":"world"}"#.to_owned())]);
    let off = e
        .enqueue(&kairos::EnqueueRequest {
            handler: "http".into(),
            payload: Some(serde_json::json!({"url": "http://example.com/x"})),
            retries: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_until(Duration::from_secs(20), "the off-list job is a dead letter", || async {
        e.store().job_get(kairos::JobTable::DeadLetter, &off.id).await.ok().flatten().is_some()
    })
    .await;
    let dead = e.store().job_get(kairos::JobTable::DeadLetter, &off.id).await.unwrap().unwrap();
    let msg = dead.exception_msg.unwrap_or_default();
    assert!(msg.contains("url:"), "{msg}");
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing else was posted");
    e.shutdown(Duration::from_secs(5)).await;
}

/// Seed 002 §40, "the target timed out but succeeded": the target creates its record and
/// answers after the sink's timeout, so the publisher counts a failure and delivers again; the
/// second request carries the same Idempotency-Key, the target finds its record by it and
/// answers it without creating another, and the event ends PUBLISHED after one retry.
async fn a_target_that_timed_out_but_succeeded_is_confirmed_by_the_key(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    // The target: one record per Idempotency-Key (its own unique key), every request seen.
    let records: Arc<Mutex<std::collections::HashMap<String, String>>> = Arc::default();
    let requests: Seen = Arc::default();
    let (r, q) = (records.clone(), requests.clone());
    let app = axum::Router::new().route(
        "/assets",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let (r, q) = (r.clone(), q.clone());
            async move {
                let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                q.lock().unwrap().push((key.clone(), body.clone()));
                let created = {
                    let mut r = r.lock().unwrap();
                    let fresh = !r.contains_key(&key);
                    r.entry(key).or_insert(body);
                    fresh
                };
                if created {
                    // The effect is done; the answer comes too late for the sink.
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let http = sink_for(app, "/assets", Some(Duration::from_millis(300))).await;
    let e = fx
        .engine("n1")
        .sink("http", http)
        .outbox(OutboxSettings {
            backoff: Duration::from_millis(10),
            idle_poll: Duration::from_millis(50),
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    e.start().await.unwrap();
    e.outbox_write(&event("publish-1001", "1001", serde_json::json!({"assetId": 1001}))).await.unwrap();
    wait_until(Duration::from_secs(30), "the event is published", || async {
        status(&e, "publish-1001").await.as_deref() == Some("PUBLISHED")
    })
    .await;
    let ev = e.outbox().get("publish-1001").await.unwrap().unwrap();
    assert_eq!((ev.retry_count, ev.last_error_code.as_deref()), (1, Some("RETRY")), "one timed-out attempt: {ev:?}");
    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests.iter().all(|(k, _)| k == "publish-1001"), "both requests carry the event id: {requests:?}");
    let records = records.lock().unwrap().clone();
    assert_eq!(records.len(), 1, "the target created its record once: {records:?}");
    e.shutdown(Duration::from_secs(5)).await;
}

/// A delivery starts only in the first half of its claim's lease: behind a slow target the rest
/// of a batch is handed back, not sent after the lease let another publisher take it too. With
/// a 400 ms lease, one delivery at a time and a target that takes 300 ms, every event is still
/// delivered exactly once.
async fn a_batch_behind_a_slow_target_is_handed_back_not_sent_twice(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/slow",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let s = s.clone();
            async move {
                let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                s.lock().unwrap().push((key, body));
                tokio::time::sleep(Duration::from_millis(300)).await;
                StatusCode::NO_CONTENT
            }
        }),
    );
    let http = sink_for(app, "/slow", None).await;
    let e = fx
        .engine("n1")
        .sink("http", http)
        .outbox(OutboxSettings {
            lease: SignedDuration::from_millis(400),
            concurrency: 1,
            publishers: 2,
            idle_poll: Duration::from_millis(20),
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    let writes: Vec<_> = (0..6)
        .map(|i| {
            e.outbox()
                .insert(e.store().dialect(), &event(&format!("slow-{i}"), &format!("s{i}"), serde_json::json!({})))
                .unwrap()
        })
        .collect();
    e.store().write_all(&writes).await.unwrap();
    e.start().await.unwrap();
    wait_until(Duration::from_secs(60), "all six published", || async {
        let (_, counts) = e.outbox().counts().await.unwrap();
        counts.iter().find(|c| c.status == "PUBLISHED").unwrap().count == 6
    })
    .await;
    let mut keys: Vec<String> = seen.lock().unwrap().iter().map(|(k, _)| k.clone()).collect();
    keys.sort();
    assert_eq!(keys, (0..6).map(|i| format!("slow-{i}")).collect::<Vec<_>>(), "each event sent once");
    e.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_batch_behind_a_slow_target_is_handed_back_not_sent_twice,
    a_target_that_timed_out_but_succeeded_is_confirmed_by_the_key,
    the_http_job_handler_posts_with_the_job_id_as_key,
    a_service_task_publishes_in_the_commands_transaction,
    a_rolled_back_event_is_never_delivered_and_a_committed_one_once,
    a_poison_event_fails_alone_while_the_others_publish,
    an_expired_lease_is_delivered_by_another_publisher_with_the_same_key,
    an_ordered_aggregate_keeps_its_order,
    bad_input_names_the_field_and_writes_nothing,
);
