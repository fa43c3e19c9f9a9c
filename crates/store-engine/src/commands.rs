//! `workflow_command`: the command table of seed 002 §8, in the BUSINESS database (SPEC C6).
//!
//! A team inserts a command ([`insert`]) in the same transaction as its business change, so
//! the intent to start a process or complete a task commits or rolls back with the business
//! row. kairos's command worker then [`claim`]s due rows under a lease, runs them against the
//! engine and [`mark`]s the outcome, fenced by its owner name: a worker whose lease expired
//! (it crashed, or stalled past the lease) cannot overwrite the outcome of the worker that
//! took the row over. Statuses: PENDING → PROCESSING → SUCCEEDED | RETRY | FAILED; a RETRY row
//! is claimed again at its `next_attempt_at`, a PROCESSING row whose lease passed is claimed
//! again by any worker.
//!
//! The claim is a conditional UPDATE per candidate (`WHERE request_id = ? AND <still due>`),
//! which one worker wins on both backends without row locks held across the run: PostgreSQL
//! re-checks the condition on the row's newest version, SQLite serialises writers.

use crate::Rows;
use jiff::{SignedDuration, Timestamp};
use kairos_store::{Error, ErrorKind, Result, Sql, SqlValue, Write};
use serde::Serialize;
use serde_json::Value as Json;

/// The table's DDL on PostgreSQL (idempotent: `CREATE … IF NOT EXISTS`).
pub const SCHEMA_POSTGRES: &str = include_str!("../sql/business/workflow_command.postgres.sql");
/// The table's DDL on SQLite (idempotent: `CREATE … IF NOT EXISTS`).
pub const SCHEMA_SQLITE: &str = include_str!("../sql/business/workflow_command.sqlite.sql");

/// The command types the worker runs.
pub const START_PROCESS: &str = "START_PROCESS";
pub const COMPLETE_TASK: &str = "COMPLETE_TASK";

/// A command's status (seed 002 §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pending,
    Processing,
    Succeeded,
    Retry,
    Failed,
}

impl Status {
    pub const ALL: [Status; 5] =
        [Status::Pending, Status::Processing, Status::Succeeded, Status::Retry, Status::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::Processing => "PROCESSING",
            Status::Succeeded => "SUCCEEDED",
            Status::Retry => "RETRY",
            Status::Failed => "FAILED",
        }
    }

    /// Parses a status as the table (and the API) spell it; None for anything else.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// Whether `db` is a PostgreSQL session. The dialect is the only thing a [`Sql`] says about
/// its backend; its JSON-array function tells the two apart.
fn is_postgres(db: &dyn Sql) -> bool {
    db.dialect().json_array == "json_build_array"
}

/// Creates the table and its indexes if they do not exist (`kairos commands schema`). Runs on
/// a database kairos does not own, so it only ever adds what is missing.
pub async fn schema(db: &dyn Sql) -> Result<()> {
    let ddl = if is_postgres(db) { SCHEMA_POSTGRES } else { SCHEMA_SQLITE };
    let writes: Vec<Write> = statements(ddl).map(|s| Write::new(s, vec![])).collect();
    db.write_all(&writes).await.map(drop)
}

/// The statements of a DDL file: comment lines dropped, split at `;`.
fn statements(ddl: &str) -> impl Iterator<Item = String> + '_ {
    let text: String = ddl.lines().filter(|l| !l.trim_start().starts_with("--")).map(|l| format!("{l}\n")).collect();
    text.split(';').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect::<Vec<_>>().into_iter()
}

/// A command as a team submits it.
#[derive(Debug, Clone)]
pub struct NewCommand {
    pub request_id: String,
    pub command_type: String,
    pub business_type: String,
    pub business_id: String,
    pub lifecycle_no: Option<i64>,
    pub payload: Json,
}

/// The insert of a PENDING command, due now: a [`Write`], so the team runs it in its own
/// business transaction ([`Sql::write_all`] on that transaction). A second insert of the same
/// request_id fails on the primary key, so a command is never queued twice.
pub fn insert(db: &dyn Sql, c: &NewCommand) -> Write {
    let now = db.dialect().now;
    Write::new(
        format!(
            "INSERT INTO workflow_command (request_id, command_type, business_type, business_id, lifecycle_no, \
             payload_json, command_status, attempts, next_attempt_at, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, 'PENDING', 0, {now}, {now}, {now})"
        ),
        vec![
            t(&c.request_id),
            t(&c.command_type),
            t(&c.business_type),
            t(&c.business_id),
            c.lifecycle_no.map(SqlValue::Int).unwrap_or(SqlValue::Null),
            t(&c.payload.to_string()),
        ],
    )
    .expect(1)
}

/// A stored command.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    pub request_id: String,
    pub command_type: String,
    pub business_type: String,
    pub business_id: String,
    pub lifecycle_no: Option<i64>,
    pub payload: Json,
    pub status: Status,
    pub process_instance_id: Option<String>,
    pub result_code: Option<String>,
    pub attempts: i64,
    pub next_attempt_at: Timestamp,
    pub owner: Option<String>,
    pub lease_until: Option<Timestamp>,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

const COLUMNS: &[&str] = &[
    "request_id",
    "command_type",
    "business_type",
    "business_id",
    "lifecycle_no",
    "payload_json",
    "command_status",
    "process_instance_id",
    "result_code",
    "attempts",
    "next_attempt_at",
    "owner",
    "lease_until",
    "last_error",
    "created_at",
    "updated_at",
];

fn select() -> String {
    format!("SELECT {} FROM workflow_command", COLUMNS.join(", "))
}

fn decode(rows: &Rows) -> Result<Vec<Command>> {
    rows.iter()
        .map(|r| {
            let payload_text = r.text("payload_json")?;
            let payload = serde_json::from_str(&payload_text)
                .map_err(|e| r.unreadable("payload_json", &format!("is not JSON: {e}")))?;
            let status_text = r.text("command_status")?;
            let status = Status::parse(&status_text)
                .ok_or_else(|| r.unreadable("command_status", &format!("{status_text:?} is no command status")))?;
            Ok(Command {
                request_id: r.text("request_id")?,
                command_type: r.text("command_type")?,
                business_type: r.text("business_type")?,
                business_id: r.text("business_id")?,
                lifecycle_no: r.opt_int("lifecycle_no")?,
                payload,
                status,
                process_instance_id: r.opt_text("process_instance_id")?,
                result_code: r.opt_text("result_code")?,
                attempts: r.int("attempts")?,
                next_attempt_at: r.instant("next_attempt_at")?,
                owner: r.opt_text("owner")?,
                lease_until: r.opt_instant("lease_until")?,
                last_error: r.opt_text("last_error")?,
                created_at: r.instant("created_at")?,
                updated_at: r.instant("updated_at")?,
            })
        })
        .collect()
}

/// One command by request id.
pub async fn get(db: &dyn Sql, request_id: &str) -> Result<Option<Command>> {
    let sql = format!("{} WHERE request_id = ?", select());
    let rows = Rows::read(db, "workflow_command", COLUMNS, &sql, &[t(request_id)]).await?;
    Ok(decode(&rows)?.into_iter().next())
}

/// Which commands [`list`] answers; None = any.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<Status>,
    pub business_type: Option<String>,
    pub business_id: Option<String>,
}

/// Commands matching `filter`, oldest first, at most `limit`.
pub async fn list(db: &dyn Sql, filter: &Filter, limit: u32) -> Result<Vec<Command>> {
    let mut sql = format!("{} WHERE 1 = 1", select());
    let mut binds = vec![];
    if let Some(s) = filter.status {
        sql.push_str(" AND command_status = ?");
        binds.push(t(s.as_str()));
    }
    if let Some(bt) = &filter.business_type {
        sql.push_str(" AND business_type = ?");
        binds.push(t(bt));
    }
    if let Some(bi) = &filter.business_id {
        sql.push_str(" AND business_id = ?");
        binds.push(t(bi));
    }
    sql.push_str(" ORDER BY created_at, request_id LIMIT ?");
    binds.push(SqlValue::Int(i64::from(limit)));
    let rows = Rows::read(db, "workflow_command", COLUMNS, &sql, &binds).await?;
    decode(&rows)
}

/// The condition of a row a worker may claim: due and waiting, or PROCESSING under a lease
/// that has passed (its worker crashed or stalled).
fn due(now: &str) -> String {
    format!(
        "((command_status IN ('PENDING', 'RETRY') AND next_attempt_at <= {now}) \
         OR (command_status = 'PROCESSING' AND lease_until < {now}))"
    )
}

/// Claims up to `limit` due commands for `owner` until now + `lease`: each becomes PROCESSING
/// with its attempts counted up (a command that crashes its worker every time still reaches
/// its attempt limit). Each row is taken by a conditional UPDATE of its own, so of two workers
/// racing for a row exactly one gets it, and a row's short transaction holds no lock while the
/// command runs. Answers the claimed rows.
pub async fn claim(db: &dyn Sql, owner: &str, lease: SignedDuration, limit: u32) -> Result<Vec<Command>> {
    let now = db.dialect().now;
    let candidates = Rows::read(
        db,
        "workflow_command",
        &["request_id"],
        &format!(
            "SELECT request_id FROM workflow_command WHERE {} ORDER BY next_attempt_at, request_id LIMIT ?",
            due(now)
        ),
        &[SqlValue::Int(i64::from(limit))],
    )
    .await?;
    let until = lease_until(db, lease).await?;
    let mut claimed = vec![];
    for r in candidates.iter() {
        let id = r.text("request_id")?;
        let write = Write::new(
            format!(
                "UPDATE workflow_command SET command_status = 'PROCESSING', owner = ?, lease_until = ?, \
                 attempts = attempts + 1, updated_at = {now} WHERE request_id = ? AND {}",
                due(now)
            ),
            vec![t(owner), SqlValue::Timestamp(until), t(&id)],
        )
        .keyed();
        if db.write_all(&[write]).await?.first() == Some(&1)
            && let Some(c) = get(db, &id).await?
        {
            claimed.push(c);
        }
    }
    Ok(claimed)
}

async fn lease_until(db: &dyn Sql, lease: SignedDuration) -> Result<Timestamp> {
    let now = db.db_now().await?;
    now.checked_add(lease).map_err(|e| Error::new(ErrorKind::Invalid, format!("lease {lease:?} is out of range: {e}")))
}

/// Extends `owner`'s lease on a command it is running; false when the row is no longer its.
pub async fn renew(db: &dyn Sql, request_id: &str, owner: &str, lease: SignedDuration) -> Result<bool> {
    let until = lease_until(db, lease).await?;
    let write = Write::new(
        "UPDATE workflow_command SET lease_until = ? WHERE request_id = ? AND owner = ? AND command_status = 'PROCESSING'",
        vec![SqlValue::Timestamp(until), t(request_id), t(owner)],
    )
    .keyed();
    Ok(db.write_all(&[write]).await?.first() == Some(&1))
}

/// What a run of a command came to.
#[derive(Debug, Clone)]
pub enum Outcome {
    Succeeded {
        process_instance_id: Option<String>,
        result_code: String,
    },
    /// A transient failure: the command is claimed again after `backoff`.
    Retry {
        error: String,
        backoff: SignedDuration,
    },
    Failed {
        result_code: String,
        error: Option<String>,
    },
}

/// Writes `owner`'s outcome of a command, fenced: only while the row is still PROCESSING under
/// `owner` (a worker that lost its lease writes nothing). Answers whether it was written.
pub async fn mark(db: &dyn Sql, request_id: &str, owner: &str, outcome: &Outcome) -> Result<bool> {
    let now = db.dialect().now;
    let fence = "WHERE request_id = ? AND owner = ? AND command_status = 'PROCESSING'";
    let write = match outcome {
        Outcome::Succeeded { process_instance_id, result_code } => Write::new(
            format!(
                "UPDATE workflow_command SET command_status = 'SUCCEEDED', \
                 process_instance_id = COALESCE(?, process_instance_id), result_code = ?, last_error = NULL, \
                 lease_until = NULL, updated_at = {now} {fence}"
            ),
            vec![ot(process_instance_id), t(result_code), t(request_id), t(owner)],
        ),
        Outcome::Retry { error, backoff } => {
            let at = lease_until(db, *backoff).await?;
            Write::new(
                format!(
                    "UPDATE workflow_command SET command_status = 'RETRY', next_attempt_at = ?, last_error = ?, \
                     lease_until = NULL, updated_at = {now} {fence}"
                ),
                vec![SqlValue::Timestamp(at), t(error), t(request_id), t(owner)],
            )
        }
        Outcome::Failed { result_code, error } => Write::new(
            format!(
                "UPDATE workflow_command SET command_status = 'FAILED', result_code = ?, last_error = ?, \
                 lease_until = NULL, updated_at = {now} {fence}"
            ),
            vec![t(result_code), ot(error), t(request_id), t(owner)],
        ),
    };
    Ok(db.write_all(&[write.keyed()]).await?.first() == Some(&1))
}

/// Puts a command back to PENDING, due now, unowned (an operator's re-run; the worker's
/// idempotence makes a re-run of a command that already took effect converge, not repeat).
/// Answers whether the command exists.
pub async fn requeue(db: &dyn Sql, request_id: &str) -> Result<bool> {
    let now = db.dialect().now;
    let write = Write::new(
        format!(
            "UPDATE workflow_command SET command_status = 'PENDING', owner = NULL, lease_until = NULL, \
             next_attempt_at = {now}, updated_at = {now} WHERE request_id = ?"
        ),
        vec![t(request_id)],
    )
    .keyed();
    Ok(db.write_all(&[write]).await?.first() == Some(&1))
}

/// What the metrics show: how many commands are in each status, and since when the oldest
/// waiting (PENDING or RETRY) command has been due.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub by_status: Vec<(Status, u64)>,
    pub oldest_waiting_due: Option<Timestamp>,
}

pub async fn stats(db: &dyn Sql) -> Result<Stats> {
    let rows = Rows::read(
        db,
        "workflow_command",
        &["command_status", "n"],
        "SELECT command_status, COUNT(*) AS n FROM workflow_command GROUP BY command_status",
        &[],
    )
    .await?;
    let mut by_status = vec![];
    for r in rows.iter() {
        let s = r.text("command_status")?;
        let status = Status::parse(&s).ok_or_else(|| r.unreadable("command_status", "is no command status"))?;
        by_status.push((status, u64::try_from(r.int("n")?).unwrap_or(0)));
    }
    let oldest = Rows::read(
        db,
        "workflow_command",
        &["due"],
        "SELECT MIN(next_attempt_at) AS due FROM workflow_command WHERE command_status IN ('PENDING', 'RETRY')",
        &[],
    )
    .await?;
    let oldest_waiting_due = match oldest.first() {
        Some(r) => r.opt_instant("due")?,
        None => None,
    };
    Ok(Stats { by_status, oldest_waiting_due })
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
fn ot(s: &Option<String>) -> SqlValue {
    s.as_deref().map(t).unwrap_or(SqlValue::Null)
}
