//! Parameter and result types of the [`crate::Store`] operations.

use jiff::{SignedDuration, Timestamp};
use kairos_core::{Completion, Job, JobTable, JobType};
use serde::Serialize;

/// A page of results, in the API's list shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub total: u64,
    pub start: u64,
    pub size: u64,
    /// Rows of this page that cannot be read: counted in `total` and `size`, left out of `data`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<crate::Unreadable>,
}

impl<T> Page<T> {
    /// A page whose rows could all be read.
    pub fn of(data: Vec<T>, total: u64, start: u64) -> Self {
        Page { size: data.len() as u64, data, total, start, unreadable: Vec::new() }
    }
}

/// Which jobs to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFilter {
    pub table: JobTable,
    pub process_instance_id: Option<String>,
    pub handler_type: Option<String>,
    pub job_type: Option<JobType>,
    /// Only jobs with (true) or without (false) EXCEPTION_MSG_.
    pub with_exception: Option<bool>,
    /// Only this tenant's jobs (`""`: of no tenant); `None`: every tenant's.
    pub tenant: Option<String>,
    pub start: u64,
    pub size: u64,
}

impl Default for JobFilter {
    fn default() -> Self {
        JobFilter {
            table: JobTable::Runtime,
            process_instance_id: None,
            handler_type: None,
            job_type: None,
            with_exception: None,
            tenant: None,
            start: 0,
            size: 100,
        }
    }
}

/// Acquisition of executable jobs for one node.
///
/// A job is taken when — exactly as seed 001's query says — RETRIES_ > 0, DUEDATE_ is null or
/// due, the lock is free or expired, and the job has no execution or its process instance has
/// SUSPENSION_STATE_ = 1; and, beyond the seed, TYPE_ is not `external-worker` (those are
/// fetched by external workers) and, for an exclusive job, no other job with the same
/// EXCLUSIVE_KEY_ holds an unexpired lock. At most one job per exclusive key is taken per call.
/// Jobs come in DUEDATE_ order (nulls first), at most `limit`.
///
/// Each taken row gets LOCK_OWNER_ = node, LOCK_TIME_ = now, LOCK_EXP_TIME_ = now + lock_time,
/// ATTEMPTS_ + 1, REV_ + 1. A row taken over from an expired lease also gets RETRIES_ - 1 (an
/// abandoned attempt counts, unlike Camunda #2858) and an ACT_HI_JOB_LOG row with outcome
/// `abandoned` for the previous owner's attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobAcquireParams {
    pub node: String,
    pub limit: u32,
    pub lock_time: SignedDuration,
    /// Pins the database clock for tests; `None` in production.
    pub now: Option<Timestamp>,
    /// Also take jobs due up to this long after now (zero: only due ones). The executor then
    /// starts each at its due date, not before: the acquisition's round trip is paid ahead of
    /// time instead of as lateness.
    pub lookahead: SignedDuration,
}

/// What one acquisition took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acquired {
    /// The database clock when the locks were taken (the start of each attempt).
    pub db_now: Timestamp,
    pub jobs: Vec<AcquiredJob>,
    /// Rows met that cannot be read: moved to ACT_RU_DEADLETTER_JOB as they were (their
    /// EXCEPTION_MSG_ says why), so they are not met again and the other jobs run.
    pub set_aside: Vec<crate::Unreadable>,
}

/// One job as locked for this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquiredJob {
    /// The row after locking.
    pub job: Job,
    /// The node whose expired lease this acquisition took over, if any.
    pub abandoned_by: Option<String>,
}

/// Lease extension for jobs a node is still running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseExtendParams {
    pub node: String,
    /// (job id, attempt) pairs: the lease is the pair plus the owner.
    pub jobs: Vec<(String, i32)>,
    pub lock_time: SignedDuration,
    /// This extension marks the start of the handler of a job taken ahead of its due date
    /// (the runner, just before it starts): LOCK_TIME_ moves from the acquisition to the due
    /// date, and a take-over from then on counts the attempt. The keeper's periodic renewals
    /// leave it alone: a job still waiting for its due date has not started, however often its
    /// lease is renewed.
    pub start: bool,
}

/// The end of one attempt, fenced by its lease.
#[derive(Debug, Clone, PartialEq)]
pub struct JobCompletion {
    pub job_id: String,
    pub node: String,
    pub attempt: i32,
    /// Start and end of the attempt on the database's clock (acquisition time plus the node's
    /// monotonic elapsed time), for ACT_HI_JOB_LOG.
    pub started: Timestamp,
    pub finished: Timestamp,
    pub completion: Completion,
    /// Writes the handler staged to commit with this completion (see [`JobEffect`]).
    pub effects: Vec<JobEffect>,
}

/// A write a handler stages to run in the transaction that completes its attempt, after the
/// lease check and only if it holds. This is what makes a job's own database effects happen
/// exactly once although the job itself may run more than once (a node paused past its lease
/// runs the handler again elsewhere, but only one completion passes the fence). A write that
/// fails makes the completion fail as a whole; the executor then records the attempt as a dead
/// letter that says why.
///
/// An effect with [`Write::expect`] set that affects another number of rows fails the
/// completion with [`crate::ErrorKind::Conflict`]: the process engine's optimistic lock. The
/// executor then hands the job back (no retry spent) so that it runs again on fresh state.
pub type JobEffect = Write;

/// One statement of [`crate::Sql::write_all`], with the number of rows it must affect.
///
/// The process engine writes a command's whole outcome (executions, tasks, variables, history,
/// jobs) as one list of these: `expect` is how optimistic locking on REV_ is enforced (an
/// `UPDATE … WHERE ID_ = ? AND REV_ = ?` that finds no row means another command changed the row
/// first), and one statement generator serves both backends.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// One statement with `?` placeholders.
    pub sql: String,
    pub binds: Vec<SqlValue>,
    /// Rows the statement must affect; `None` for any number.
    pub expect: Option<u64>,
    /// The statement's conditions pin a unique key, so it affects at most one row; see
    /// [`Write::keyed`].
    pub keyed: bool,
    /// As a job's staged effect: it commutes with the other jobs' staged effects; see
    /// [`Write::commutes`].
    pub commutes: bool,
    /// Its commit need not wait for the disk; see [`Write::relaxed`].
    pub relaxed: bool,
}

impl Write {
    pub fn new(sql: impl Into<String>, binds: Vec<SqlValue>) -> Write {
        Write { sql: sql.into(), binds, expect: None, keyed: false, commutes: false, relaxed: false }
    }

    /// Declares that the statement's equality conditions include a unique key (it affects at
    /// most one row). Checked key deletes of one text can then be merged by
    /// [`crate::coalesce`]: the merged statement affects the expected sum exactly when each
    /// one would have affected its own expected count.
    pub fn keyed(mut self) -> Write {
        self.keyed = true;
        self
    }

    /// Declares, for a write a job stages, that running it before or after any staged write of
    /// another job gives the same result: it writes rows of its own (fresh ids, its own
    /// trigger or instance), and rows it shares with other jobs are guarded by a checked write
    /// (the process engine's instance lock, the scheduler's fire-time check). A completion
    /// batch whose effects all commute runs them round by round with their single-row
    /// statements merged ([`crate::coalesce`]); one effect that does not (a handler's own
    /// `write_on_success`) makes the batch run each job's effects in turn, as one transaction
    /// per job would.
    pub fn commutes(mut self) -> Write {
        self.commutes = true;
        self
    }

    /// Declares that losing this write in a crash of the database (after its commit was
    /// answered) costs only a repetition the engine is built for — an outbox claim or mark: the
    /// event is claimed and delivered again with its idempotency key. A list made only of such
    /// writes commits without waiting for its WAL flush on PostgreSQL (`synchronous_commit` off
    /// for that transaction), which keeps disk latency off the publisher's path; it is still
    /// atomic and visible at once. SQLite ignores it. Never for a fact a caller was told about.
    pub fn relaxed(mut self) -> Write {
        self.relaxed = true;
        self
    }

    /// The statement must affect exactly `n` rows, or the whole transaction is rolled back with
    /// an [`crate::ErrorKind::Conflict`].
    pub fn expect(mut self, n: u64) -> Write {
        self.expect = Some(n);
        self
    }
}

/// Jobs handed back by a node that is shutting down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobReleaseParams {
    pub node: String,
    pub jobs: Vec<(String, i32)>,
    pub reason: String,
}

/// The database's now and the next due date of an unlocked job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextDue {
    pub db_now: Timestamp,
    pub next: Option<Timestamp>,
}

/// Job counts by the database clock, for metrics and the doctor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobCounts {
    /// Due, unlocked (or lease expired), retries left: the executable backlog.
    pub executable: u64,
    /// Due in the future.
    pub waiting: u64,
    /// Locked with an unexpired lease.
    pub running: u64,
    /// Locked with an expired lease (seed 000 §5.2).
    pub expired_locks: u64,
    /// In ACT_RU_JOB with an exception message: failed at least once, retrying (seed 000 §5.2).
    pub failing: u64,
    pub dead_letters: u64,
    pub suspended: u64,
    /// DUEDATE_ of the oldest executable job: how far behind the executor is.
    pub oldest_executable_due: Option<jiff::Timestamp>,
}

/// SPEC J11's job findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobDiagnostics {
    pub counts: JobCounts,
    /// Jobs whose EXECUTION_ID_ names no row of ACT_RU_EXECUTION (seed 000 §4.3).
    pub orphan_jobs: Vec<Job>,
    /// Jobs whose process instance has ended (ACT_HI_PROCINST.END_TIME_ set).
    pub jobs_of_ended_instances: Vec<Job>,
    /// Jobs locked with an expired lease.
    pub expired_locks: Vec<Job>,
    pub dead_letters: Vec<Job>,
}

/// Which job log rows to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLogFilter {
    pub job_id: Option<String>,
    pub process_instance_id: Option<String>,
    pub start: u64,
    pub size: u64,
}

impl Default for JobLogFilter {
    fn default() -> Self {
        JobLogFilter { job_id: None, process_instance_id: None, start: 0, size: 100 }
    }
}

/// What a node says about itself when it registers and heartbeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRegistration {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub workers: i32,
    /// Recorded in KAIROS_NODE for the doctor; `None` keeps what the row holds.
    pub settings: Option<kairos_core::NodeSettings>,
}

impl NodeRegistration {
    /// The settings as KAIROS_NODE stores them: LOCK_TIME_MS_, HEARTBEAT_MS_, DEAD_AFTER_MS_,
    /// LOOKAHEAD_MS_, POLL_MS_ (milliseconds), then TIME_ZONE_; all null without settings.
    pub fn settings_columns(&self) -> ([Option<i64>; 5], Option<&str>) {
        let Some(s) = &self.settings else { return ([None; 5], None) };
        let ms = |d: jiff::SignedDuration| Some(i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        (
            [ms(s.lock_time), ms(s.heartbeat_interval), ms(s.dead_after), ms(s.lookahead), ms(s.poll_interval)],
            Some(s.time_zone.as_str()),
        )
    }
}

/// Node settings read back from the columns [`NodeRegistration::settings_columns`] writes;
/// `None` when the row has none (written before they were recorded, or by a tool).
pub fn node_settings_from_columns(
    ms: [Option<i64>; 5],
    time_zone: Option<String>,
) -> Option<kairos_core::NodeSettings> {
    let d = |i: usize| ms[i].map(jiff::SignedDuration::from_millis);
    Some(kairos_core::NodeSettings {
        lock_time: d(0)?,
        heartbeat_interval: d(1)?,
        dead_after: d(2)?,
        lookahead: d(3)?,
        poll_interval: d(4)?,
        time_zone: time_zone.unwrap_or_default(),
    })
}

/// What a node's registration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRegistered {
    /// The database clock at registration: the node's STARTED_ and first HEARTBEAT_.
    pub db_now: Timestamp,
    /// Leases of a previous incarnation of this node id that the registration expired.
    pub released: u64,
}

/// A loosely typed SQL value for operator queries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SqlValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Timestamp(Timestamp),
    Bytes(Vec<u8>),
}

impl SqlValue {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            SqlValue::Int(i) => Some(*i),
            SqlValue::Bool(b) => Some(i64::from(*b)),
            SqlValue::Float(f) => Some(*f as i64),
            SqlValue::Text(s) => s.parse().ok(),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            SqlValue::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, SqlValue::Null)
    }
    /// A boolean column of either backend (SQLite stores 0/1).
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            SqlValue::Bool(b) => Some(*b),
            SqlValue::Int(i) => Some(*i != 0),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SqlValue::Float(f) => Some(*f),
            SqlValue::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    /// An instant column of either backend: PostgreSQL's `timestamptz`, SQLite's stored text
    /// `YYYY-MM-DD HH:MM:SS.SSS` (UTC), or an instant in JSON (RFC 3339, with its offset).
    pub fn as_timestamp(&self) -> Option<Timestamp> {
        match self {
            SqlValue::Timestamp(t) => Some(*t),
            SqlValue::Text(s) => s.parse::<Timestamp>().ok().or_else(|| {
                let dt: jiff::civil::DateTime = s.replacen(' ', "T", 1).parse().ok()?;
                dt.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|z| z.timestamp())
            }),
            _ => None,
        }
    }
    /// Text, or `None` for NULL.
    pub fn into_string(self) -> Option<String> {
        match self {
            SqlValue::Text(s) => Some(s),
            _ => None,
        }
    }
}
