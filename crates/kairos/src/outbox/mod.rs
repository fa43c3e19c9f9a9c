//! The transactional outbox's publisher (SPEC C4, seed 002 §12–§14).
//!
//! An event is written with the state it announces ([`Outbox::write_in`] on a caller's
//! transaction, [`Outbox::write`] on its own), so it exists exactly when that state committed.
//! A publisher loop per node claims due events under a lease in one short statement, commits,
//! and only then delivers them (no row lock held across a remote call, §13), concurrently, each
//! to its [`Sink`]; the outcome is marked with a write fenced by the claim, so a publisher whose
//! lease was taken over writes nothing. Delivery is at least once with the stable event id as
//! the consumer's idempotency key (§14). One event that keeps failing spends its own attempts
//! (RETRY with backoff, then FAILED) and never holds back the others — except later events of
//! its own ordered aggregate, whose order is the point of `ordered`.

use async_trait::async_trait;
use jiff::SignedDuration;
use kairos_store::{ErrorKind, Sql, Store};
pub mod handlers;
pub mod http;
pub use kairos_store_engine::outbox::{Filter, NewEvent, OutboxEvent, StatusCount};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a delivered event may wait for the statement that marks it and its round's
/// other deliveries PUBLISHED.
pub const MARK_EVERY: Duration = Duration::from_millis(20);

/// What a sink answers for one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The target took the event.
    Delivered,
    /// It may take it later (a timeout, a 5xx, a refused connection): RETRY with backoff.
    Retry(String),
    /// It never will (a 4xx that is not about load): FAILED at once.
    Permanent(String),
}

/// Where events go: a library user plugs in Kafka, NATS, …; kairos has `http` built in.
/// `deliver` is called after the claim committed, possibly more than once for one event (a
/// publisher that stalled past its lease): the target must deduplicate by `event.event_id`.
#[async_trait]
pub trait Sink: Send + Sync + 'static {
    async fn deliver(&self, event: &OutboxEvent) -> Delivery;

    /// Checks an event's `target_url` before it is written (the http sink's allow-list); the
    /// message names the field. Default: a sink that takes no URL refuses one.
    fn check_url(&self, url: Option<&str>) -> Result<(), String> {
        match url {
            None => Ok(()),
            Some(_) => Err("targetUrl: this target takes no URL".into()),
        }
    }
}

/// The publisher's settings.
#[derive(Debug, Clone)]
pub struct OutboxSettings {
    /// Run the publisher loop on this node (with the executor).
    pub enabled: bool,
    /// Events per claim.
    pub batch: u32,
    /// How long a claim holds its events: more than twice a delivery's timeout (a delivery
    /// starts only in the first half of its claim's lease).
    pub lease: SignedDuration,
    /// Default attempts of an event before FAILED.
    pub max_attempts: i64,
    /// First retry's delay; doubled per attempt, capped at `backoff_max`.
    pub backoff: Duration,
    pub backoff_max: Duration,
    /// Deliveries in flight at once, per publisher loop.
    pub concurrency: usize,
    /// Publisher loops on this node, each claiming its own batch: a round waits for its slowest
    /// delivery, so a second loop keeps events flowing meanwhile (and overlaps one loop's
    /// claim with another's deliveries).
    pub publishers: usize,
    /// The poll interval when idle (a local write wakes the loop at once).
    pub idle_poll: Duration,
}

impl Default for OutboxSettings {
    fn default() -> Self {
        OutboxSettings {
            enabled: true,
            batch: 500,
            lease: SignedDuration::from_secs(60),
            max_attempts: 10,
            backoff: Duration::from_secs(1),
            backoff_max: Duration::from_secs(300),
            concurrency: 64,
            publishers: 2,
            idle_poll: Duration::from_millis(200),
        }
    }
}

impl OutboxSettings {
    /// The delay before retry number `retry_count + 1`: backoff · 2^retry_count, capped.
    pub fn delay(&self, retry_count: i64) -> Duration {
        let exp = u32::try_from(retry_count.clamp(0, 30)).unwrap_or(30);
        self.backoff.saturating_mul(2u32.saturating_pow(exp)).min(self.backoff_max)
    }
}

/// Delivery outcomes since start, for `/metrics` (no ids as labels).
#[derive(Debug, Default)]
pub struct OutboxMetrics {
    pub delivered: AtomicU64,
    pub retried: AtomicU64,
    pub failed: AtomicU64,
    /// Marks refused because the claim was lost (another publisher took the event over).
    pub fenced: AtomicU64,
}

/// The engine's outbox: its sinks, settings, and the publisher's wake-up.
pub struct Outbox {
    store: Arc<dyn Store>,
    sinks: HashMap<String, Arc<dyn Sink>>,
    settings: OutboxSettings,
    owner: String,
    notify: tokio::sync::Notify,
    metrics: OutboxMetrics,
    /// When this node last swept the events abandoned on their last attempt.
    swept: std::sync::Mutex<Option<std::time::Instant>>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("sinks", &self.sinks.keys().collect::<Vec<_>>())
            .field("settings", &self.settings)
            .finish()
    }
}

fn invalid(message: impl Into<String>) -> crate::Error {
    crate::Error::Store(kairos_store::Error::new(ErrorKind::Invalid, message))
}

impl Outbox {
    pub fn new(
        store: Arc<dyn Store>,
        sinks: HashMap<String, Arc<dyn Sink>>,
        settings: OutboxSettings,
        owner: String,
    ) -> Outbox {
        Outbox {
            store,
            sinks,
            settings,
            owner,
            notify: tokio::sync::Notify::new(),
            metrics: OutboxMetrics::default(),
            swept: std::sync::Mutex::new(None),
        }
    }

    pub fn settings(&self) -> &OutboxSettings {
        &self.settings
    }

    pub fn metrics(&self) -> &OutboxMetrics {
        &self.metrics
    }

    /// Every check before an event is written; the error names the field and nothing is written.
    pub fn check(&self, e: &NewEvent) -> Result<(), crate::Error> {
        e.check()?;
        let Some(sink) = self.sinks.get(&e.target) else {
            let mut known: Vec<_> = self.sinks.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(invalid(format!(
                "target: {:?} is no sink of this engine (known: {})",
                e.target,
                known.join(", ")
            )));
        };
        sink.check_url(e.target_url.as_deref()).map_err(invalid)
    }

    /// The checked insert of `e`, to commit with any write list (a handler's staged writes).
    pub fn insert(&self, dialect: &kairos_store::Dialect, e: &NewEvent) -> Result<kairos_store::Write, crate::Error> {
        self.check(e)?;
        Ok(kairos_store_engine::outbox::insert(dialect, e))
    }

    /// Writes `e` in a transaction of its own, then wakes this node's publisher.
    pub async fn write(&self, e: &NewEvent) -> Result<(), crate::Error> {
        let w = self.insert(self.store.dialect(), e)?;
        self.store.write_all(&[w]).await?;
        self.wake();
        Ok(())
    }

    /// Writes `e` on `db` (a caller's transaction: the event commits or rolls back with it).
    /// Call [`Outbox::wake`] after the commit to skip the poll interval.
    pub async fn write_in(&self, db: &dyn Sql, e: &NewEvent) -> Result<(), crate::Error> {
        let w = self.insert(db.dialect(), e)?;
        db.write_all(&[w]).await?;
        Ok(())
    }

    /// Asks this node's publisher to claim now.
    pub fn wake(&self) {
        self.notify.notify_one();
    }

    /// One round of the publisher: claim (committed), deliver concurrently, mark each. Answers
    /// the number of events claimed. Deliveries are marked PUBLISHED together, one statement
    /// at most every [`MARK_EVERY`] (one commit per event capped the rate at the database's
    /// commits per second); a failure is marked alone, at once.
    pub async fn publish_once(&self) -> Result<usize, crate::Error> {
        let db: &dyn Sql = self.store.as_ref();
        self.sweep_abandoned().await;
        let events =
            kairos_store_engine::outbox::claim(db, &self.owner, self.settings.lease, self.settings.batch).await?;
        let n = events.len();
        let Some(first) = events.first() else { return Ok(0) };
        let claim_id = first.claim_id.clone().unwrap_or_default();
        let sem = Arc::new(tokio::sync::Semaphore::new(self.settings.concurrency.max(1)));
        let mut set = tokio::task::JoinSet::new();
        // A delivery must end inside the claim's lease, or another publisher takes the event
        // over while it is still being sent: one that could not start within the first half of
        // the lease (a slow target ahead of it in the batch) is handed back instead.
        let claimed = tokio::time::Instant::now();
        let start_by = self.settings.lease.unsigned_abs() / 2;
        let mut late = Vec::new();
        for e in events {
            let sink = self.sinks.get(&e.target).cloned();
            let permit = sem.clone().acquire_owned().await.ok();
            if claimed.elapsed() > start_by {
                late.push(e.event_id);
                continue;
            }
            set.spawn(async move {
                let _permit = permit;
                let outcome = match sink {
                    Some(s) => s.deliver(&e).await,
                    None => Delivery::Permanent(format!("target {:?} is no sink of this node", e.target)),
                };
                (e, outcome)
            });
        }
        if !late.is_empty() {
            let ids: Vec<&str> = late.iter().map(String::as_str).collect();
            if let Err(err) = kairos_store_engine::outbox::release(db, &self.owner, &claim_id, &ids).await {
                tracing::warn!(events = ids.len(), error = %err, "outbox: handing back late events failed; their lease brings them back");
            }
        }
        let mut delivered: Vec<String> = Vec::new();
        let mut flush_at: Option<tokio::time::Instant> = None;
        loop {
            let done = tokio::select! {
                done = set.join_next() => done,
                _ = tokio::time::sleep_until(flush_at.unwrap_or_else(tokio::time::Instant::now)), if flush_at.is_some() => {
                    flush_at = None;
                    self.mark_delivered(&claim_id, &mut delivered).await;
                    continue;
                }
            };
            match done {
                None => break,
                // A sink that panicked: the event's lease brings it back.
                Some(Err(_)) => {}
                Some(Ok((e, Delivery::Delivered))) => {
                    self.metrics.delivered.fetch_add(1, Ordering::Relaxed);
                    delivered.push(e.event_id);
                    flush_at.get_or_insert_with(|| tokio::time::Instant::now() + MARK_EVERY);
                }
                Some(Ok((e, outcome))) => {
                    if let Err(err) = self.mark(&e, outcome).await {
                        tracing::warn!(event = %e.event_id, error = %err, "outbox: marking a delivery failed; its lease brings it back");
                    }
                }
            }
        }
        self.mark_delivered(&claim_id, &mut delivered).await;
        Ok(n)
    }

    /// Ends the events abandoned on their last attempt, at most every quarter lease (1 s to
    /// 1 min): not on every claim, whose latency is the point.
    async fn sweep_abandoned(&self) {
        let every = (self.settings.lease.unsigned_abs() / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
        {
            let mut last = self.swept.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < every) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        match kairos_store_engine::outbox::abandon_expired(self.store.as_ref()).await {
            Ok(n) if n > 0 => {
                self.metrics.failed.fetch_add(n, Ordering::Relaxed);
                tracing::warn!(events = n, "outbox: events abandoned on their last attempt are FAILED");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "outbox: sweeping abandoned events failed"),
        }
    }

    /// Marks `delivered` (events of this node's claim `claim_id`) PUBLISHED in one statement.
    async fn mark_delivered(&self, claim_id: &str, delivered: &mut Vec<String>) {
        if delivered.is_empty() {
            return;
        }
        let ids: Vec<&str> = delivered.iter().map(String::as_str).collect();
        match kairos_store_engine::outbox::mark_published_all(self.store.as_ref(), &self.owner, claim_id, &ids).await {
            Ok(marked) => {
                let lost = u64::try_from(ids.len()).unwrap_or(u64::MAX).saturating_sub(marked);
                self.metrics.fenced.fetch_add(lost, Ordering::Relaxed);
            }
            Err(err) => {
                tracing::warn!(events = ids.len(), error = %err, "outbox: marking deliveries failed; their lease brings them back");
            }
        }
        delivered.clear();
    }

    async fn mark(&self, e: &OutboxEvent, outcome: Delivery) -> Result<(), crate::Error> {
        use kairos_store_engine::outbox as ob;
        let db: &dyn Sql = self.store.as_ref();
        let marked = match outcome {
            Delivery::Delivered => {
                self.metrics.delivered.fetch_add(1, Ordering::Relaxed);
                ob::mark_published(db, e).await?
            }
            Delivery::Retry(why) if e.retry_count + 1 < e.max_attempts => {
                self.metrics.retried.fetch_add(1, Ordering::Relaxed);
                let delay = SignedDuration::try_from(self.settings.delay(e.retry_count)).unwrap_or(SignedDuration::MAX);
                ob::mark_retry(db, e, delay, "RETRY", &why).await?
            }
            Delivery::Retry(why) => {
                self.metrics.failed.fetch_add(1, Ordering::Relaxed);
                ob::mark_failed(db, e, "ATTEMPTS_EXHAUSTED", &why).await?
            }
            Delivery::Permanent(why) => {
                self.metrics.failed.fetch_add(1, Ordering::Relaxed);
                ob::mark_failed(db, e, "PERMANENT", &why).await?
            }
        };
        if !marked {
            self.metrics.fenced.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The publisher: `publishers` loops, each running rounds while there is work, then waiting
    /// for a local write or the idle poll; all stop when `stopped` turns true.
    pub fn spawn(self: &Arc<Self>, stopped: tokio::sync::watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let mut loops = tokio::task::JoinSet::new();
        for _ in 0..self.settings.publishers.max(1) {
            loops.spawn(self.clone().publish_loop(stopped.clone()));
        }
        tokio::spawn(async move { while loops.join_next().await.is_some() {} })
    }

    async fn publish_loop(self: Arc<Self>, mut stopped: tokio::sync::watch::Receiver<bool>) {
        loop {
            if *stopped.borrow() {
                return;
            }
            let busy = match self.publish_once().await {
                Ok(n) => n > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "outbox: a claim failed");
                    false
                }
            };
            if busy {
                continue;
            }
            tokio::select! {
                _ = self.notify.notified() => {}
                _ = tokio::time::sleep(self.settings.idle_poll) => {}
                _ = stopped.changed() => {}
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<OutboxEvent>, crate::Error> {
        Ok(kairos_store_engine::outbox::get(self.store.as_ref(), id).await?)
    }

    pub async fn list(&self, f: &Filter) -> Result<Vec<OutboxEvent>, crate::Error> {
        Ok(kairos_store_engine::outbox::list(self.store.as_ref(), f).await?)
    }

    /// How many events match `f`, unpaged.
    pub async fn list_total(&self, f: &Filter) -> Result<i64, crate::Error> {
        Ok(kairos_store_engine::outbox::list_total(self.store.as_ref(), f).await?)
    }

    /// FAILED → PENDING (an operator's retry); `false` when no FAILED event has this id.
    pub async fn retry(&self, id: &str) -> Result<bool, crate::Error> {
        let done = kairos_store_engine::outbox::retry_failed(self.store.as_ref(), id).await?;
        if done {
            self.wake();
        }
        Ok(done)
    }

    pub async fn counts(&self) -> Result<(jiff::Timestamp, Vec<StatusCount>), crate::Error> {
        Ok(kairos_store_engine::outbox::counts(self.store.as_ref()).await?)
    }
}
