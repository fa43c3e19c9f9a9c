//! The transactional outbox (SPEC C4, seed 002 §12–§14): `outbox_event`.
//!
//! An event is written by [`insert`] as one more [`Write`] of whatever list commits the state it
//! announces (a caller's transaction, a process command, a handler's staged writes): if that
//! list rolls back, the event never existed (§12). A publisher takes events by a lease in one
//! short statement ([`claim`]), commits, delivers outside any transaction (§13: no row lock held
//! across a remote call), then records the outcome with a mark fenced by its claim: a publisher
//! whose lease expired and was taken over writes nothing. Delivery is therefore at least once,
//! with the stable event id as the consumer's idempotency key (§14).

use crate::{Row, Rows};
use jiff::{SignedDuration, Timestamp};
use kairos_store::{Dialect, Error, ErrorKind, Result, Sql, SqlValue, Write};

/// The largest payload an event takes: a message, not a document store.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Characters of a failure's message kept in `last_error`.
pub const MAX_ERROR_CHARS: usize = 2000;

/// The statuses of §13.
pub const STATUSES: &[&str] = &["PENDING", "PROCESSING", "PUBLISHED", "RETRY", "FAILED"];

const COLUMNS: &[&str] = &[
    "event_id",
    "aggregate_type",
    "aggregate_id",
    "event_type",
    "payload_json",
    "event_status",
    "retry_count",
    "next_retry_at",
    "created_at",
    "published_at",
    "last_error_code",
    "owner",
    "lease_until",
    "claim_id",
    "max_attempts",
    "ordered",
    "seq",
    "target",
    "target_url",
    "last_error",
];

const SELECT: &str = "SELECT event_id, aggregate_type, aggregate_id, event_type, payload_json, event_status, \
     retry_count, next_retry_at, created_at, published_at, last_error_code, owner, lease_until, claim_id, \
     max_attempts, ordered, seq, target, target_url, last_error FROM outbox_event";

/// An event to write.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// The stable id every delivery carries (the consumer's idempotency key).
    pub event_id: String,
    pub aggregate_type: String,
    pub aggregate_id: String,
    pub event_type: String,
    /// JSON text.
    pub payload_json: String,
    /// The sink to deliver to, by name.
    pub target: String,
    /// Where the http sink posts it (`None`: the sink's base URL).
    pub target_url: Option<String>,
    /// Keep the order of this aggregate's ordered events: one delivered at a time, oldest first.
    pub ordered: bool,
    /// Deliveries before the event is FAILED.
    pub max_attempts: i64,
}

impl NewEvent {
    /// The checks of the columns' bounds, before anything is written; the error names the field.
    /// (Whether the target is a sink this engine knows is the engine's check.)
    pub fn check(&self) -> Result<()> {
        bounded("eventId", &self.event_id, 64)?;
        bounded("aggregateType", &self.aggregate_type, 64)?;
        bounded("aggregateId", &self.aggregate_id, 64)?;
        bounded("eventType", &self.event_type, 128)?;
        bounded("target", &self.target, 64)?;
        if let Some(url) = &self.target_url {
            bounded("targetUrl", url, 2048)?;
        }
        if self.payload_json.len() > MAX_PAYLOAD_BYTES {
            return Err(invalid(format!(
                "payload: {} bytes, more than the {MAX_PAYLOAD_BYTES} an event takes",
                self.payload_json.len()
            )));
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&self.payload_json) {
            return Err(invalid(format!("payload: not JSON ({e})")));
        }
        if !(1..=1000).contains(&self.max_attempts) {
            return Err(invalid(format!("maxAttempts: {} is outside 1..=1000", self.max_attempts)));
        }
        Ok(())
    }
}

fn bounded(field: &str, value: &str, max: usize) -> Result<()> {
    if value.trim().is_empty() {
        return Err(invalid(format!("{field}: must not be empty")));
    }
    if value.chars().count() > max {
        return Err(invalid(format!("{field}: longer than {max} characters")));
    }
    Ok(())
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::Invalid, message)
}

/// One row of `outbox_event`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEvent {
    pub event_id: String,
    pub aggregate_type: String,
    pub aggregate_id: String,
    pub event_type: String,
    pub payload_json: String,
    pub event_status: String,
    pub retry_count: i64,
    pub next_retry_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub published_at: Option<Timestamp>,
    pub last_error_code: Option<String>,
    pub owner: Option<String>,
    pub lease_until: Option<Timestamp>,
    /// The claim that holds it (PROCESSING); the fence of every mark.
    pub claim_id: Option<String>,
    pub max_attempts: i64,
    pub ordered: bool,
    pub seq: i64,
    pub target: String,
    pub target_url: Option<String>,
    pub last_error: Option<String>,
}

fn event_row(r: &Row<'_>) -> Result<OutboxEvent> {
    Ok(OutboxEvent {
        event_id: r.text("event_id")?,
        aggregate_type: r.text("aggregate_type")?,
        aggregate_id: r.text("aggregate_id")?,
        event_type: r.text("event_type")?,
        payload_json: r.text("payload_json")?,
        event_status: r.text("event_status")?,
        retry_count: r.int("retry_count")?,
        next_retry_at: r.opt_instant("next_retry_at")?,
        created_at: r.instant("created_at")?,
        published_at: r.opt_instant("published_at")?,
        last_error_code: r.opt_text("last_error_code")?,
        owner: r.opt_text("owner")?,
        lease_until: r.opt_instant("lease_until")?,
        claim_id: r.opt_text("claim_id")?,
        max_attempts: r.int("max_attempts")?,
        ordered: r.int("ordered")? != 0,
        seq: r.int("seq")?,
        target: r.text("target")?,
        target_url: r.opt_text("target_url")?,
        last_error: r.opt_text("last_error")?,
    })
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

/// The insert of a PENDING event, for any write list; it must insert its row (a second event
/// with the same id fails the list on the primary key). `seq` is one more than the aggregate's
/// highest: events of one aggregate written in one transaction keep their order, and an
/// ordered aggregate is delivered in it.
pub fn insert(dialect: &Dialect, e: &NewEvent) -> Write {
    Write::new(
        format!(
            "INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload_json, \
             event_status, retry_count, created_at, max_attempts, ordered, seq, target, target_url) \
             VALUES (?, ?, ?, ?, ?, 'PENDING', 0, {}, ?, ?, \
             (SELECT COALESCE(MAX(s.seq), 0) + 1 FROM outbox_event s WHERE s.aggregate_type = ? AND s.aggregate_id = ?), \
             ?, ?)",
            dialect.now
        ),
        vec![
            t(&e.event_id),
            t(&e.aggregate_type),
            t(&e.aggregate_id),
            t(&e.event_type),
            t(&e.payload_json),
            SqlValue::Int(e.max_attempts),
            SqlValue::Int(i64::from(e.ordered)),
            t(&e.aggregate_type),
            t(&e.aggregate_id),
            t(&e.target),
            e.target_url.as_deref().map_or(SqlValue::Null, t),
        ],
    )
    .expect(1)
}

/// Takes up to `limit` deliverable events for `owner` until the database's now + `lease`, in
/// one statement, and answers them (PROCESSING, with this claim's id). Deliverable: PENDING, or
/// RETRY whose next_retry_at has come, or PROCESSING whose lease has expired (a crashed or
/// stalled publisher's events come back, that attempt counted; its late marks are then
/// refused; an event out of attempts that way is FAILED `ABANDONED`). Of an ordered
/// aggregate only the oldest event not yet PUBLISHED or FAILED may be taken, so a later one
/// never overtakes it — also not while it waits for its retry. On PostgreSQL concurrent
/// claimers skip each other's locked rows instead of waiting ([`Dialect::skip_locked`]).
pub async fn claim(db: &dyn Sql, owner: &str, lease: SignedDuration, limit: u32) -> Result<Vec<OutboxEvent>> {
    if owner.is_empty() || owner.chars().count() > 255 {
        return Err(invalid("owner: must be 1..=255 characters".into()));
    }
    let now = db.db_now().await?;
    let until = now.checked_add(lease).map_err(|e| invalid(format!("lease: {e}")))?;
    let claim_id = uuid::Uuid::now_v7().to_string();
    let sql = format!(
        "UPDATE outbox_event SET event_status = 'PROCESSING', owner = ?, lease_until = ?, claim_id = ?, \
         retry_count = CASE WHEN event_status = 'PROCESSING' THEN retry_count + 1 ELSE retry_count END \
         WHERE event_id IN (SELECT e.event_id FROM outbox_event e WHERE \
         ((e.event_status IN ('PENDING', 'RETRY') AND (e.next_retry_at IS NULL OR e.next_retry_at <= ?)) \
          OR (e.event_status = 'PROCESSING' AND e.lease_until <= ? AND e.retry_count + 1 < e.max_attempts)) \
         AND (e.ordered = 0 OR NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.aggregate_type = e.aggregate_type \
              AND o.aggregate_id = e.aggregate_id AND o.ordered = 1 \
              AND o.event_status IN ('PENDING', 'RETRY', 'PROCESSING') \
              AND (o.seq < e.seq OR (o.seq = e.seq AND o.event_id < e.event_id)))) \
         ORDER BY e.created_at, e.event_id LIMIT ?{})",
        db.dialect().skip_locked
    );
    let binds = vec![
        t(owner),
        SqlValue::Timestamp(until),
        t(&claim_id),
        SqlValue::Timestamp(now),
        SqlValue::Timestamp(now),
        SqlValue::Int(i64::from(limit)),
    ];
    let n = db.write_all(&[Write::new(sql, binds).relaxed()]).await?;
    if n.first().copied().unwrap_or(0) == 0 {
        return Ok(Vec::new());
    }
    let sql = format!("{SELECT} WHERE claim_id = ? AND event_status = 'PROCESSING' ORDER BY seq, created_at, event_id");
    let rows = Rows::read(db, "outbox_event", COLUMNS, &sql, &[t(&claim_id)]).await?;
    rows.iter().map(|r| event_row(&r)).collect()
}

/// Marks FAILED `ABANDONED` the events whose lease expired on their last attempt: a lease that
/// expired is an attempt that never reported (its publisher crashed or stalled, maybe in the
/// middle of the delivery), so an event that kills every publisher taking it ends here after its
/// attempts instead of cycling for ever. [`claim`] no longer takes such an event; this sweep (run
/// now and then by the publisher) records the end. Answers how many it marked.
pub async fn abandon_expired(db: &dyn Sql) -> Result<u64> {
    let now = db.db_now().await?;
    let n = db
        .write_all(&[Write::new(
            "UPDATE outbox_event SET event_status = 'FAILED', retry_count = retry_count + 1, next_retry_at = NULL, \
             last_error_code = 'ABANDONED', last_error = 'the publisher holding it stopped before reporting, on every attempt', \
             owner = NULL, lease_until = NULL, claim_id = NULL \
             WHERE event_status = 'PROCESSING' AND lease_until <= ? AND retry_count + 1 >= max_attempts",
            vec![SqlValue::Timestamp(now)],
        )
        .relaxed()])
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

/// The fence of every mark: the event is still PROCESSING under the claim that took it.
const FENCE: &str = "WHERE event_id = ? AND event_status = 'PROCESSING' AND owner = ? AND claim_id = ?";

fn fence_binds(e: &OutboxEvent) -> Vec<SqlValue> {
    vec![t(&e.event_id), e.owner.as_deref().map_or(SqlValue::Null, t), e.claim_id.as_deref().map_or(SqlValue::Null, t)]
}

fn bound_error(error: &str) -> SqlValue {
    t(&error.chars().take(MAX_ERROR_CHARS).collect::<String>())
}

fn bound_code(code: &str) -> SqlValue {
    t(&code.chars().take(128).collect::<String>())
}

async fn fenced(db: &dyn Sql, set: &str, mut binds: Vec<SqlValue>, e: &OutboxEvent) -> Result<bool> {
    binds.extend(fence_binds(e));
    let n = db.write_all(&[Write::new(format!("UPDATE outbox_event SET {set} {FENCE}"), binds).relaxed()]).await?;
    Ok(n.first().copied().unwrap_or(0) == 1)
}

/// Records the delivery of a claimed event. `false`: the claim was lost (its lease expired and
/// another publisher took the event), nothing written.
pub async fn mark_published(db: &dyn Sql, e: &OutboxEvent) -> Result<bool> {
    let set = format!(
        "event_status = 'PUBLISHED', published_at = {}, owner = NULL, lease_until = NULL, claim_id = NULL",
        db.dialect().now
    );
    fenced(db, &set, vec![], e).await
}

/// Records the delivery of several events of one claim in one statement (a publisher's round:
/// one commit instead of one per event). Answers how many were still held by the claim; the
/// others were taken over and are left to their new owner.
pub async fn mark_published_all(db: &dyn Sql, owner: &str, claim_id: &str, event_ids: &[&str]) -> Result<u64> {
    let mut marked = 0;
    for chunk in event_ids.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let sql = format!(
            "UPDATE outbox_event SET event_status = 'PUBLISHED', published_at = {}, owner = NULL, lease_until = NULL, \
             claim_id = NULL WHERE event_status = 'PROCESSING' AND owner = ? AND claim_id = ? AND event_id IN ({marks})",
            db.dialect().now
        );
        let mut binds = vec![t(owner), t(claim_id)];
        binds.extend(chunk.iter().map(|id| t(id)));
        marked += db.write_all(&[Write::new(sql, binds).relaxed()]).await?.first().copied().unwrap_or(0);
    }
    Ok(marked)
}

/// Hands events of one claim back undelivered (PENDING, due now), so another round takes them
/// at once instead of after the lease. Answers how many were still held by the claim.
pub async fn release(db: &dyn Sql, owner: &str, claim_id: &str, event_ids: &[&str]) -> Result<u64> {
    let mut released = 0;
    for chunk in event_ids.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let sql = format!(
            "UPDATE outbox_event SET event_status = 'PENDING', next_retry_at = NULL, owner = NULL, lease_until = NULL, \
             claim_id = NULL WHERE event_status = 'PROCESSING' AND owner = ? AND claim_id = ? AND event_id IN ({marks})"
        );
        let mut binds = vec![t(owner), t(claim_id)];
        binds.extend(chunk.iter().map(|id| t(id)));
        released += db.write_all(&[Write::new(sql, binds).relaxed()]).await?.first().copied().unwrap_or(0);
    }
    Ok(released)
}

/// Records a failed delivery that may succeed later: retry_count + 1, due again `delay` after
/// the database's now. `false`: the claim was lost, nothing written.
pub async fn mark_retry(db: &dyn Sql, e: &OutboxEvent, delay: SignedDuration, code: &str, error: &str) -> Result<bool> {
    let now = db.db_now().await?;
    let at = now.checked_add(delay).map_err(|x| invalid(format!("delay: {x}")))?;
    let set = "event_status = 'RETRY', retry_count = retry_count + 1, next_retry_at = ?, last_error_code = ?, \
               last_error = ?, owner = NULL, lease_until = NULL, claim_id = NULL";
    fenced(db, set, vec![SqlValue::Timestamp(at), bound_code(code), bound_error(error)], e).await
}

/// Records a delivery that will not succeed (a permanent refusal, or the last attempt):
/// FAILED, kept with its error for an operator ([`retry_failed`]). `false`: the claim was lost.
pub async fn mark_failed(db: &dyn Sql, e: &OutboxEvent, code: &str, error: &str) -> Result<bool> {
    let set = "event_status = 'FAILED', retry_count = retry_count + 1, next_retry_at = NULL, last_error_code = ?, \
               last_error = ?, owner = NULL, lease_until = NULL, claim_id = NULL";
    fenced(db, set, vec![bound_code(code), bound_error(error)], e).await
}

/// An operator's retry of a FAILED event: PENDING again with a fresh count of attempts.
/// `false`: no FAILED event has this id.
pub async fn retry_failed(db: &dyn Sql, event_id: &str) -> Result<bool> {
    let n = db
        .write_all(&[Write::new(
            "UPDATE outbox_event SET event_status = 'PENDING', retry_count = 0, next_retry_at = NULL \
             WHERE event_id = ? AND event_status = 'FAILED'",
            vec![t(event_id)],
        )])
        .await?;
    Ok(n.first().copied().unwrap_or(0) == 1)
}

/// The event `event_id`, if any.
pub async fn get(db: &dyn Sql, event_id: &str) -> Result<Option<OutboxEvent>> {
    let sql = format!("{SELECT} WHERE event_id = ?");
    let rows = Rows::read(db, "outbox_event", COLUMNS, &sql, &[t(event_id)]).await?;
    rows.first().map(|r| event_row(&r)).transpose()
}

/// Which events [`list`] answers; `None` matches all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<String>,
    pub aggregate_type: Option<String>,
    pub aggregate_id: Option<String>,
    pub start: u64,
    pub size: u64,
}

/// Events by filter, oldest first (created_at, then the aggregate's order), a page of `size`
/// (at most 1000) from `start`.
pub async fn list(db: &dyn Sql, f: &Filter) -> Result<Vec<OutboxEvent>> {
    if let Some(s) = &f.status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(invalid(format!("status: {s:?} is none of {}", STATUSES.join(", "))));
    }
    let opt = |v: &Option<String>| v.as_deref().map_or(SqlValue::Null, t);
    let sql = format!(
        "{SELECT} WHERE (CAST(? AS VARCHAR(32)) IS NULL OR event_status = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR aggregate_type = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR aggregate_id = ?) \
         ORDER BY created_at, seq, event_id LIMIT ? OFFSET ?"
    );
    let size = f.size.clamp(1, 1000);
    let binds = [
        opt(&f.status),
        opt(&f.status),
        opt(&f.aggregate_type),
        opt(&f.aggregate_type),
        opt(&f.aggregate_id),
        opt(&f.aggregate_id),
        SqlValue::Int(size as i64),
        SqlValue::Int(i64::try_from(f.start).unwrap_or(i64::MAX)),
    ];
    let rows = Rows::read(db, "outbox_event", COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| event_row(&r)).collect()
}

/// How many events [`list`] would answer without paging.
pub async fn list_total(db: &dyn Sql, f: &Filter) -> Result<i64> {
    let opt = |v: &Option<String>| v.as_deref().map_or(SqlValue::Null, t);
    let sql = "SELECT COUNT(*) AS n FROM outbox_event WHERE (CAST(? AS VARCHAR(32)) IS NULL OR event_status = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR aggregate_type = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR aggregate_id = ?)";
    let binds = [
        opt(&f.status),
        opt(&f.status),
        opt(&f.aggregate_type),
        opt(&f.aggregate_type),
        opt(&f.aggregate_id),
        opt(&f.aggregate_id),
    ];
    let rows = Rows::read(db, "outbox_event", &["n"], sql, &binds).await?;
    rows.first().map_or(Ok(0), |r| r.int("n"))
}

/// Events of one status, and the created_at of its oldest, for `/metrics`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCount {
    pub status: String,
    pub count: i64,
    pub oldest_created_at: Option<Timestamp>,
}

/// Counts by status (every status of [`STATUSES`], 0 when none), with the database's now, so a
/// caller computes ages by the one clock.
pub async fn counts(db: &dyn Sql) -> Result<(Timestamp, Vec<StatusCount>)> {
    let now = db.db_now().await?;
    let rows = Rows::read(
        db,
        "outbox_event",
        &["event_status", "n", "oldest"],
        "SELECT event_status, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox_event GROUP BY event_status",
        &[],
    )
    .await?;
    let mut out: Vec<StatusCount> =
        STATUSES.iter().map(|s| StatusCount { status: (*s).to_owned(), count: 0, oldest_created_at: None }).collect();
    for r in rows.iter() {
        let status = r.text("event_status")?;
        if let Some(c) = out.iter_mut().find(|c| c.status == status) {
            c.count = r.int("n")?;
            c.oldest_created_at = r.opt_instant("oldest")?;
        }
    }
    Ok((now, out))
}

/// The open and failed events grouped as seed 002 §37 says to look at a backlog: by event type,
/// status and error code, with the oldest of each group; the largest groups first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BacklogGroup {
    pub event_type: String,
    pub target: String,
    pub status: String,
    pub last_error_code: Option<String>,
    pub count: i64,
    pub max_retry_count: i64,
    pub oldest_created_at: Timestamp,
}

pub async fn backlog_groups(db: &dyn Sql, limit: u32) -> Result<Vec<BacklogGroup>> {
    let sql = "SELECT event_type, target, event_status, last_error_code, COUNT(*) AS n, MAX(retry_count) AS r, \
               MIN(created_at) AS t FROM outbox_event WHERE event_status IN ('PENDING', 'PROCESSING', 'RETRY', 'FAILED') \
               GROUP BY event_type, target, event_status, last_error_code ORDER BY COUNT(*) DESC LIMIT ?";
    const COLS: &[&str] = &["event_type", "target", "event_status", "last_error_code", "n", "r", "t"];
    let rows = Rows::read(db, "outbox_event", COLS, sql, &[SqlValue::Int(i64::from(limit))]).await?;
    rows.iter()
        .map(|r| {
            Ok(BacklogGroup {
                event_type: r.text("event_type")?,
                target: r.text("target")?,
                status: r.text("event_status")?,
                last_error_code: r.opt_text("last_error_code")?,
                count: r.int("n")?,
                max_retry_count: r.int("r")?,
                oldest_created_at: r.instant("t")?,
            })
        })
        .collect()
}
