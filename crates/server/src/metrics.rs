//! `GET /metrics` (SPEC I6): the executor's counters and histograms, plus job gauges read from
//! the database at scrape time (seed 000 §5.2's daily checks as time series). No label carries
//! a job id, so cardinality stays flat however many jobs pass.

use crate::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// prometheus-client writes OpenMetrics text; Prometheus reads it under this type.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn gauge(registry: &mut Registry, name: &str, help: &str, value: i64) {
    let g = Gauge::<i64>::default();
    g.set(value);
    registry.register(name, help, g);
}

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `GET /metrics`. When the database does not answer, the job gauges are left out and
/// `kairos_store_up` is 0, so the scrape itself still succeeds and alerts can fire on it.
pub async fn metrics(State(app): State<AppState>) -> Response {
    let engine = &app.engine;
    let mut registry = Registry::default();
    engine.metrics().register(&mut registry);
    gauge(
        &mut registry,
        "kairos_executor_enabled",
        "1 when this node's job executor is switched on",
        i64::from(engine.settings().executor_enabled),
    );
    gauge(
        &mut registry,
        "kairos_executor_running",
        "Attempts running on this node now",
        count(engine.running() as u64),
    );
    let store = engine.store();
    let counts = match (store.job_counts().await, store.db_now().await) {
        (Ok(c), Ok(now)) => Some((c, now)),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error = %e, "metrics: job counts unavailable");
            None
        }
    };
    gauge(&mut registry, "kairos_store_up", "1 when the database answered this scrape", i64::from(counts.is_some()));
    let store_up = counts.is_some();
    if let Some((c, now)) = counts {
        gauge(
            &mut registry,
            "kairos_jobs_executable",
            "Jobs due, unlocked (or lease expired), with retries left: the backlog",
            count(c.executable),
        );
        gauge(&mut registry, "kairos_jobs_waiting", "Jobs due in the future", count(c.waiting));
        gauge(&mut registry, "kairos_jobs_running", "Jobs locked with an unexpired lease", count(c.running));
        gauge(
            &mut registry,
            "kairos_jobs_expired_locks",
            "Jobs locked with an expired lease (seed 000 5.2)",
            count(c.expired_locks),
        );
        gauge(
            &mut registry,
            "kairos_jobs_failing",
            "Live jobs that failed at least once and are retrying",
            count(c.failing),
        );
        gauge(&mut registry, "kairos_jobs_dead_letters", "Jobs in the dead-letter table", count(c.dead_letters));
        gauge(&mut registry, "kairos_jobs_suspended", "Jobs of suspended process instances", count(c.suspended));
        let age = c.oldest_executable_due.map_or(0.0, |due| (now.duration_since(due).as_secs_f64()).max(0.0));
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(age);
        registry.register(
            "kairos_jobs_oldest_executable_age_seconds",
            "How long the oldest executable job has been due (0 when none): how far behind the executors are",
            g,
        );
    }
    // Seed 002 §39: a failed write-back leaves an instance unbound; a broken idempotency, two
    // active instances for one business object.
    if store_up && let Ok((unbound, duplicated)) = engine.processes().binding_health().await {
        gauge(
            &mut registry,
            "kairos_instances_without_binding",
            "Running process instances with no business binding (counted up to 10,000)",
            unbound,
        );
        gauge(
            &mut registry,
            "kairos_bindings_duplicate_active",
            "Business objects with more than one ACTIVE binding of one process type (counted up to 10,000)",
            duplicated,
        );
    }
    // Seed 002 §39: commands of the business database by status, and how long the oldest
    // waiting one has been due (a stuck cross-database start shows here first).
    if let Some(db) = engine.business_db()
        && let (Ok(stats), Ok(now)) = (kairos::commands::table::stats(db.as_ref()).await, db.db_now().await)
    {
        let by_status = Family::<[(&'static str, &'static str); 1], Gauge>::default();
        for (status, n) in &stats.by_status {
            by_status.get_or_create(&[("status", status.as_str())]).set(count(*n));
        }
        registry.register(
            "kairos_commands",
            "Commands of the business database (workflow_command) by status",
            by_status,
        );
        let age = stats.oldest_waiting_due.map_or(0.0, |due| now.duration_since(due).as_secs_f64().max(0.0));
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(age);
        registry.register(
            "kairos_commands_oldest_waiting_age_seconds",
            "How long the oldest PENDING or RETRY command has been due (0 when none)",
            g,
        );
    }
    let (first, duplicate) = kairos::business::inbox_deliveries();
    let deliveries = Family::<[(&'static str, &'static str); 1], Counter>::default();
    deliveries.get_or_create(&[("outcome", "first")]).inc_by(first);
    deliveries.get_or_create(&[("outcome", "duplicate")]).inc_by(duplicate);
    registry.register(
        "kairos_inbox_deliveries",
        "Inbox deliveries seen by this process: the first of an event, or a duplicate dropped (seed 002 §39)",
        deliveries,
    );
    outbox_metrics(&mut registry, engine).await;
    if store_up {
        reconcile_metrics(&mut registry, engine).await;
    }
    let mut body = String::new();
    if let Err(e) = encode(&mut body, &registry) {
        return crate::error::ApiError::internal(format!("metrics encoding failed: {e}")).into_response();
    }
    (StatusCode::OK, [(header::CONTENT_TYPE, CONTENT_TYPE)], body).into_response()
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct StatusLabel {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct RuleLabel {
    rule: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct IncidentLabel {
    kind: String,
    status: String,
}

/// Reconciliation (SPEC C7, seed 002 §39): the last pass's differences by rule, auto-repairs
/// made and refused since start, incidents by kind and status (the manual backlog is kind
/// incident, OPEN or APPROVED) and the age of the oldest one waiting for a person. Labels are
/// rule ids, kinds and statuses, never a business or instance id.
async fn reconcile_metrics(registry: &mut Registry, engine: &kairos::Engine) {
    use prometheus_client::metrics::family::Family;
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(r) = engine.reconciler() {
        let stats = r.stats();
        let by_rule = Family::<RuleLabel, Gauge<i64>>::default();
        for (rule, n) in stats.last_by_rule.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            by_rule.get_or_create(&RuleLabel { rule: rule.clone() }).set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
        registry.register(
            "kairos_reconcile_differences",
            "Records the last reconciliation pass found different, by rule",
            by_rule,
        );
        let repairs = Family::<OutcomeLabel, prometheus_client::metrics::counter::Counter>::default();
        repairs.get_or_create(&OutcomeLabel { outcome: "repaired".into() }).inc_by(stats.repaired.load(Relaxed));
        repairs.get_or_create(&OutcomeLabel { outcome: "refused".into() }).inc_by(stats.refused.load(Relaxed));
        registry.register(
            "kairos_reconcile_repairs",
            "Auto-repairs on this node since start: made, or refused by seed 002 §30's bounds (an incident instead)",
            repairs,
        );
        let passes = prometheus_client::metrics::counter::Counter::<u64>::default();
        passes.inc_by(stats.passes.load(Relaxed));
        registry.register("kairos_reconcile_passes", "Reconciliation passes on this node since start", passes);
    }
    let db = engine.store();
    if let Ok(counts) = engine.incidents().counts().await {
        let family = Family::<IncidentLabel, Gauge<i64>>::default();
        for (kind, status, n) in counts {
            family.get_or_create(&IncidentLabel { kind, status }).set(n);
        }
        registry.register("kairos_incidents", "Reconciliation incidents and repairs by kind and status", family);
    }
    if let (Ok((retrying, dead, oldest)), Ok(now)) =
        (engine.incidents().compensation_failures().await, db.db_now().await)
    {
        let family = Family::<StatusLabel, Gauge<i64>>::default();
        family.get_or_create(&StatusLabel { status: "retrying".into() }).set(retrying);
        family.get_or_create(&StatusLabel { status: "dead-letter".into() }).set(dead);
        registry.register(
            "kairos_compensation_failures",
            "Compensation handlers' jobs that failed: still retrying, or dead letters waiting for an operator",
            family,
        );
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(oldest.map_or(0.0, |t| now.duration_since(t).as_secs_f64().max(0.0)));
        registry.register(
            "kairos_compensation_oldest_failure_age_seconds",
            "Age of the oldest dead-letter job of a compensation handler (0 when none)",
            g,
        );
    }
    if let (Ok(oldest), Ok(now)) = (engine.incidents().oldest_open().await, db.db_now().await) {
        let g = Gauge::<f64, AtomicU64>::default();
        g.set(oldest.map_or(0.0, |t| now.duration_since(t).as_secs_f64().max(0.0)));
        registry.register(
            "kairos_incidents_oldest_open_age_seconds",
            "Age of the oldest incident waiting for a person (OPEN or APPROVED; 0 when none)",
            g,
        );
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct OutcomeLabel {
    outcome: String,
}

/// The outbox (SPEC C4, seed 002 §39): events by status, the age of the oldest PENDING and
/// RETRY event by the database clock, and this node's delivery outcomes since start. Labels
/// are the five statuses and four outcomes, never an event or aggregate id.
async fn outbox_metrics(registry: &mut Registry, engine: &kairos::Engine) {
    use prometheus_client::metrics::family::Family;
    let outbox = engine.outbox();
    match outbox.counts().await {
        Ok((now, counts)) => {
            let by_status = Family::<StatusLabel, Gauge<i64>>::default();
            let age = Family::<StatusLabel, Gauge<f64, AtomicU64>>::default();
            for c in &counts {
                by_status.get_or_create(&StatusLabel { status: c.status.clone() }).set(c.count);
                if c.status == "PENDING" || c.status == "RETRY" {
                    let secs = c.oldest_created_at.map_or(0.0, |t| now.duration_since(t).as_secs_f64().max(0.0));
                    age.get_or_create(&StatusLabel { status: c.status.clone() }).set(secs);
                }
            }
            registry.register("kairos_outbox_events", "Outbox events by status", by_status);
            registry.register(
                "kairos_outbox_oldest_age_seconds",
                "Age of the oldest PENDING / RETRY outbox event (0 when none): how far behind the publishers are",
                age,
            );
        }
        Err(e) => tracing::warn!(error = %e, "metrics: outbox counts unavailable"),
    }
    let m = outbox.metrics();
    let outcomes = Family::<OutcomeLabel, prometheus_client::metrics::counter::Counter>::default();
    use std::sync::atomic::Ordering::Relaxed;
    for (name, n) in [
        ("delivered", m.delivered.load(Relaxed)),
        ("retry", m.retried.load(Relaxed)),
        ("failed", m.failed.load(Relaxed)),
        ("fenced", m.fenced.load(Relaxed)),
    ] {
        outcomes.get_or_create(&OutcomeLabel { outcome: name.into() }).inc_by(n);
    }
    registry.register(
        "kairos_outbox_deliveries",
        "Outbox delivery outcomes on this node since start (fenced: the claim was lost, the mark wrote nothing)",
        outcomes,
    );
}
