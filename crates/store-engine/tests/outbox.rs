//! `outbox_event` on both backends: the claim's lease, its fence, the ordered aggregate, retry
//! due times, and the metrics' counts (SPEC C4).

mod common;

use jiff::SignedDuration;
use kairos_store::{ErrorKind, Store, Write};
use kairos_store_engine::outbox::{self, Filter, NewEvent};
use std::sync::Arc;

fn ev(id: &str, agg: &str, ordered: bool) -> NewEvent {
    NewEvent {
        event_id: id.into(),
        aggregate_type: "ORDER".into(),
        aggregate_id: agg.into(),
        event_type: "ORDER_PLACED".into(),
        payload_json: format!("{{\"id\":\"{id}\"}}"),
        target: "http".into(),
        target_url: None,
        ordered,
        max_attempts: 3,
    }
}

async fn write(store: &Arc<dyn Store>, events: &[NewEvent]) {
    let writes: Vec<Write> = events.iter().map(|e| outbox::insert(store.dialect(), e)).collect();
    store.write_all(&writes).await.unwrap();
}

const LEASE: SignedDuration = SignedDuration::from_secs(30);

async fn a_claimed_event_is_published_once(store: Arc<dyn Store>) {
    write(&store, &[ev("e1", "a1", false), ev("e2", "a2", false)]).await;
    let got = outbox::claim(&*store, "node-a", LEASE, 10).await.unwrap();
    assert_eq!(got.iter().map(|e| e.event_id.as_str()).collect::<Vec<_>>(), ["e1", "e2"]);
    assert!(got.iter().all(|e| e.event_status == "PROCESSING" && e.owner.as_deref() == Some("node-a")));
    // Taken events are not claimed again while their lease holds.
    assert!(outbox::claim(&*store, "node-b", LEASE, 10).await.unwrap().is_empty());
    assert!(outbox::mark_published(&*store, &got[0]).await.unwrap());
    // A second mark of the same claim finds the event no longer PROCESSING.
    assert!(!outbox::mark_published(&*store, &got[0]).await.unwrap());
    let e1 = outbox::get(&*store, "e1").await.unwrap().unwrap();
    assert_eq!(e1.event_status, "PUBLISHED");
    assert!(e1.published_at.is_some() && e1.owner.is_none());
    let (_, counts) = outbox::counts(&*store).await.unwrap();
    let n = |s: &str| counts.iter().find(|c| c.status == s).unwrap().count;
    assert_eq!((n("PUBLISHED"), n("PROCESSING"), n("PENDING")), (1, 1, 0));
}

async fn an_expired_lease_is_taken_over_and_the_old_claim_writes_nothing(store: Arc<dyn Store>) {
    write(&store, &[ev("e1", "a1", false)]).await;
    let old = outbox::claim(&*store, "node-a", SignedDuration::from_millis(1), 10).await.unwrap();
    assert_eq!(old.len(), 1);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let new = outbox::claim(&*store, "node-b", LEASE, 10).await.unwrap();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].event_id, "e1");
    assert_ne!(new[0].claim_id, old[0].claim_id);
    // The stalled publisher's marks are fenced off.
    assert!(!outbox::mark_published(&*store, &old[0]).await.unwrap());
    assert!(!outbox::mark_retry(&*store, &old[0], LEASE, "X", "late").await.unwrap());
    assert!(!outbox::mark_failed(&*store, &old[0], "X", "late").await.unwrap());
    let e = outbox::get(&*store, "e1").await.unwrap().unwrap();
    assert_eq!(
        (e.event_status.as_str(), e.owner.as_deref(), e.retry_count),
        ("PROCESSING", Some("node-b"), 1),
        "the abandoned claim counts as an attempt"
    );
    assert!(outbox::mark_published(&*store, &new[0]).await.unwrap());
}

/// An event whose every publisher stops before reporting (it crashes them) spends its attempts
/// on the expired leases and ends FAILED, instead of cycling for ever.
async fn an_event_abandoned_on_every_attempt_ends_failed(store: Arc<dyn Store>) {
    write(&store, &[ev("crasher", "c1", false), ev("fine", "f1", false)]).await;
    let short = SignedDuration::from_millis(1);
    for attempt in 0..3 {
        let got = outbox::claim(&*store, &format!("node-{attempt}"), short, 1).await.unwrap();
        assert_eq!(got.iter().map(|e| e.event_id.as_str()).collect::<Vec<_>>(), ["crasher"], "attempt {attempt}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The third lease expired too: out of attempts, never claimed again; the sweep ends it.
    let next = outbox::claim(&*store, "node-x", LEASE, 10).await.unwrap();
    assert_eq!(next.iter().map(|e| e.event_id.as_str()).collect::<Vec<_>>(), ["fine"]);
    assert_eq!(outbox::get(&*store, "crasher").await.unwrap().unwrap().event_status, "PROCESSING");
    assert_eq!(outbox::abandon_expired(&*store).await.unwrap(), 1);
    let c = outbox::get(&*store, "crasher").await.unwrap().unwrap();
    assert_eq!(
        (c.event_status.as_str(), c.last_error_code.as_deref(), c.retry_count),
        ("FAILED", Some("ABANDONED"), 3)
    );
    assert!(c.owner.is_none() && c.claim_id.is_none());
}

async fn a_retry_waits_for_its_due_time_and_failed_needs_an_operator(store: Arc<dyn Store>) {
    write(&store, &[ev("e1", "a1", false)]).await;
    let got = outbox::claim(&*store, "n", LEASE, 10).await.unwrap();
    assert!(outbox::mark_retry(&*store, &got[0], SignedDuration::from_secs(3600), "HTTP_503", "busy").await.unwrap());
    let e = outbox::get(&*store, "e1").await.unwrap().unwrap();
    assert_eq!((e.event_status.as_str(), e.retry_count), ("RETRY", 1));
    assert_eq!((e.last_error_code.as_deref(), e.last_error.as_deref()), (Some("HTTP_503"), Some("busy")));
    assert!(outbox::claim(&*store, "n", LEASE, 10).await.unwrap().is_empty(), "not due for an hour");
    write(&store, &[ev("e2", "a2", false)]).await;
    let got = outbox::claim(&*store, "n", LEASE, 10).await.unwrap();
    assert_eq!(got.len(), 1);
    assert!(outbox::mark_retry(&*store, &got[0], SignedDuration::ZERO, "T", &"x".repeat(5000)).await.unwrap());
    let again = outbox::claim(&*store, "n", LEASE, 10).await.unwrap();
    assert_eq!(again.len(), 1, "a retry due now is claimed");
    assert_eq!(again[0].last_error.as_ref().unwrap().len(), outbox::MAX_ERROR_CHARS, "the error is bounded");
    assert!(outbox::mark_failed(&*store, &again[0], "HTTP_400", "refused").await.unwrap());
    assert!(outbox::claim(&*store, "n", LEASE, 10).await.unwrap().is_empty(), "FAILED is never claimed");
    assert!(outbox::retry_failed(&*store, "e2").await.unwrap());
    assert!(!outbox::retry_failed(&*store, "e2").await.unwrap(), "PENDING now, not FAILED");
    assert_eq!(outbox::claim(&*store, "n", LEASE, 10).await.unwrap().len(), 1);
}

async fn an_ordered_aggregate_is_delivered_one_at_a_time_in_order(store: Arc<dyn Store>) {
    write(&store, &[ev("z3", "a1", true), ev("y2", "a1", true), ev("x1", "a1", true), ev("u", "a2", false)]).await;
    write(&store, &[ev("w4", "a1", true)]).await;
    let mut order = Vec::new();
    for _ in 0..6 {
        let got = outbox::claim(&*store, "n", LEASE, 10).await.unwrap();
        let ordered: Vec<_> = got.iter().filter(|e| e.aggregate_id == "a1").collect();
        assert!(ordered.len() <= 1, "two events of an ordered aggregate at once: {ordered:?}");
        for e in &got {
            if e.aggregate_id == "a1" {
                order.push(e.event_id.clone());
                // A retry of the head holds the rest back until it is delivered.
                if e.event_id == "y2" && e.retry_count == 0 {
                    outbox::mark_retry(&*store, e, SignedDuration::ZERO, "T", "again").await.unwrap();
                    continue;
                }
            }
            outbox::mark_published(&*store, e).await.unwrap();
        }
    }
    assert_eq!(order, ["z3", "y2", "y2", "x1", "w4"]);
}

async fn the_claim_respects_its_limit_and_list_filters(store: Arc<dyn Store>) {
    let events: Vec<_> = (0..25).map(|i| ev(&format!("e{i:02}"), &format!("a{}", i % 5), false)).collect();
    write(&store, &events).await;
    assert_eq!(outbox::claim(&*store, "n", LEASE, 10).await.unwrap().len(), 10);
    let f = Filter { aggregate_id: Some("a1".into()), size: 100, ..Filter::default() };
    assert_eq!(outbox::list(&*store, &f).await.unwrap().len(), 5);
    let f = Filter { status: Some("PENDING".into()), size: 7, start: 10, ..Filter::default() };
    assert_eq!(outbox::list(&*store, &f).await.unwrap().len(), 5);
    let f = Filter { status: Some("nope".into()), ..Filter::default() };
    let e = outbox::list(&*store, &f).await.unwrap_err();
    assert!(e.message.starts_with("status:"), "{}", e.message);
}

async fn an_event_in_a_list_that_fails_is_never_written(store: Arc<dyn Store>) {
    write(&store, &[ev("e1", "a1", false)]).await;
    // The same id again, with a new event: the list fails on the key and neither is written.
    let writes = vec![
        outbox::insert(store.dialect(), &ev("e2", "a1", false)),
        outbox::insert(store.dialect(), &ev("e1", "a1", false)),
    ];
    assert!(store.write_all(&writes).await.is_err());
    assert!(outbox::get(&*store, "e2").await.unwrap().is_none());
}

#[test]
fn checks_name_the_field() {
    let mut e = ev("e1", "a1", false);
    e.payload_json = format!("\"{}\"", "x".repeat(outbox::MAX_PAYLOAD_BYTES));
    assert!(e.check().unwrap_err().message.starts_with("payload:"));
    let mut e = ev("e1", "a1", false);
    e.event_type = "t".repeat(129);
    assert!(e.check().unwrap_err().message.starts_with("eventType:"));
    let mut e = ev("e1", "a1", false);
    e.aggregate_type = String::new();
    let err = e.check().unwrap_err();
    assert_eq!(err.kind, ErrorKind::Invalid);
    assert!(err.message.starts_with("aggregateType:"));
    let mut e = ev("e1", "a1", false);
    e.payload_json = "{not json".into();
    assert!(e.check().unwrap_err().message.starts_with("payload:"));
    assert!(ev("e1", "a1", false).check().is_ok());
}

on_both_backends!(
    an_event_abandoned_on_every_attempt_ends_failed,
    a_claimed_event_is_published_once,
    an_expired_lease_is_taken_over_and_the_old_claim_writes_nothing,
    a_retry_waits_for_its_due_time_and_failed_needs_an_operator,
    an_ordered_aggregate_is_delivered_one_at_a_time_in_order,
    the_claim_respects_its_limit_and_list_filters,
    an_event_in_a_list_that_fails_is_never_written,
);
