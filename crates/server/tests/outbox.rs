//! The outbox API over real HTTP (SPEC C4): write, list, read, retry a FAILED event; bad input
//! is a 400 naming the field with nothing written; `/metrics` shows the outbox by status.

mod processes_support;

use processes_support::{Backend, server};
use serde_json::json;

async fn events_are_written_listed_read_and_retried(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let body = |id: &str, url: &str| {
        json!({"eventId": id, "aggregateType": "ORDER", "aggregateId": "o-1", "eventType": "ORDER_PLACED",
               "payload": {"n": 1}, "targetUrl": url})
    };
    // The default http sink has an empty allow-list: every URL is refused, naming the field.
    srv.post("/outbox/events", body("e1", "https://hooks.example.com/x")).await.refused(400, Some("targetUrl"));
    let mut big = body("e1", "https://hooks.example.com/x");
    big["payload"] = json!("x".repeat(1024 * 1024 + 1));
    srv.post("/outbox/events", big).await.refused(400, Some("payload"));
    let mut unknown = body("e1", "https://hooks.example.com/x");
    unknown["target"] = json!("kafka");
    srv.post("/outbox/events", unknown).await.refused(400, Some("target"));
    let mut extra = body("e1", "https://hooks.example.com/x");
    extra["colour"] = json!("red");
    srv.post("/outbox/events", extra).await.refused(400, None);
    assert_eq!(srv.rows("outbox_event").await, 0, "refused events wrote nothing");

    // A sink of its own (no URL): written, listed, read.
    let mut ok = body("e1", "");
    ok.as_object_mut().unwrap().remove("targetUrl");
    ok["target"] = json!("http");
    // Without a base URL the http sink takes no event: still refused, naming targetUrl.
    srv.post("/outbox/events", ok.clone()).await.refused(400, Some("targetUrl"));
    // Written through the store directly (as a handler's staged write would), then FAILED by a
    // claim and a mark, so the API can retry it.
    let ev = kairos::outbox::NewEvent {
        event_id: "e2".into(),
        aggregate_type: "ORDER".into(),
        aggregate_id: "o-1".into(),
        event_type: "ORDER_PLACED".into(),
        payload_json: "{}".into(),
        target: "http".into(),
        target_url: None,
        ordered: false,
        max_attempts: 1,
    };
    let store = srv.engine.store();
    store.write_all(&[kairos_store_engine::outbox::insert(store.dialect(), &ev)]).await.unwrap();
    let got = srv.get("/outbox/events/e2").await;
    assert_eq!(got.ok(200)["eventStatus"], "PENDING");
    srv.post("/outbox/events/e2/retry", json!({})).await.refused(409, None);
    let claimed = kairos_store_engine::outbox::claim(store.as_ref(), "n", kairos::SignedDuration::from_secs(30), 10)
        .await
        .unwrap();
    kairos_store_engine::outbox::mark_failed(store.as_ref(), &claimed[0], "PERMANENT", "HTTP 400").await.unwrap();
    let list = srv.get("/outbox/events?status=FAILED&aggregateType=ORDER").await;
    assert_eq!(list.ok(200)["total"], 1);
    assert_eq!(list.json["data"][0]["lastError"], "HTTP 400");
    srv.get("/outbox/events?status=LOST").await.refused(400, None);
    let r = srv.post("/outbox/events/e2/retry", json!({})).await;
    assert_eq!(r.ok(200)["eventStatus"], "PENDING");
    srv.get("/outbox/events/nope").await.refused(404, None);
    let m = srv.get("/metrics").await;
    assert!(m.text.contains("kairos_outbox_events{status=\"PENDING\"} 1"), "{}", m.text);
    assert!(m.text.contains("kairos_outbox_oldest_age_seconds{status=\"PENDING\"}"), "{}", m.text);
    assert!(m.text.contains("kairos_outbox_deliveries_total{outcome=\"delivered\"} 0"), "{}", m.text);
}

on_both_backends!(events_are_written_listed_read_and_retried);
