//! The storage seam of kairos.
//!
//! One trait, [`Store`], lists every operation the engine performs on its tables, named
//! noun-then-verb (`job_acquire`, `job_complete_many`, `node_heartbeat`). Each backend crate
//! (`kairos-store-sqlite`, `kairos-store-postgres`) implements it with SQL in `.sql` files of
//! its own; nothing outside those crates writes SQL. The [`conformance`] suite pins every
//! behaviour and runs against both backends, so "the store does X" means "the suite checks X".
//!
//! Time: every operation that compares due dates or leases uses the database's clock. Where a
//! test must pin time, the params carry `now: Option<Timestamp>` (`None` in production), the
//! `coalesce(@now, now())` habit of River.

mod coalesce;
mod error;
mod params;
mod sql;
mod unreadable;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use coalesce::{coalesce, varies_with_rows};
pub use error::{Error, ErrorKind, Result, write_conflict};
pub use params::*;
pub use sql::Sql;
pub use unreadable::Unreadable;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobLogEntry, JobTable, NewJob, NodeInfo};

/// Which database a store runs on. Callers use it for display only; behaviour differences are
/// expressed as methods of [`Store`], never as `if postgres` in callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// How many write transactions a backend runs at once: what the executor's completer asks
/// before it writes several batches side by side ([`Store::write_concurrency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteConcurrency {
    /// One writer at a time (SQLite: a write transaction holds the database's one write lock).
    /// Concurrent writes are still correct, but they queue for that lock, so a caller that
    /// would open several gains nothing and spends the busy timeout: write in turn.
    One,
    /// Many writers at once (PostgreSQL: row locks, one connection per transaction), so
    /// transactions touching different rows commit side by side.
    Many,
}

/// The few spellings in which the two backends' SQL differs, for the statements the engine
/// writes once for both ([`Sql::read`], [`Sql::write_all`]): callers put these into their
/// text instead of asking which backend they are on.
#[derive(Debug)]
pub struct Dialect {
    /// The function that makes a JSON array of its arguments.
    pub json_array: &'static str,
    /// The database's now, cut to the milliseconds the columns keep, in the form
    /// [`Sql::read`] returns instants: the value [`Sql::db_now`] gives, inside any statement.
    pub now: &'static str,
    /// Empties a table, then names it: `TRUNCATE` on PostgreSQL (no dead rows left behind for
    /// vacuum), `DELETE FROM` on SQLite.
    pub empty_table: &'static str,
    /// Appended to a sub-select that picks rows to claim: ` FOR UPDATE SKIP LOCKED` on
    /// PostgreSQL (concurrent claimers take different rows instead of queueing on one), empty
    /// on SQLite (one writer at a time: the claim's statement is already alone).
    pub skip_locked: &'static str,
}

/// Every operation kairos performs on its tables.
#[async_trait]
pub trait Store: Sql + Send + Sync + std::fmt::Debug + 'static {
    fn backend(&self) -> Backend;

    /// Whether this backend takes concurrent write transactions. The completer writes up to
    /// `completion_writers` batches at once on a store that answers [`WriteConcurrency::Many`],
    /// one after another on [`WriteConcurrency::One`]: a capability of the store, so callers
    /// never ask which database they are on. Either way every write must be correct when
    /// callers do overlap (the conformance suite writes batches side by side on both).
    fn write_concurrency(&self) -> WriteConcurrency;

    /// Creates or upgrades the schema (embedded migrations). Idempotent; safe to run from several
    /// nodes at once.
    async fn migrate(&self) -> Result<()>;

    /// Why this node cannot write, if it cannot: the message of the last write that failed
    /// because the database could not take it ([`ErrorKind::Unavailable`]: a full disk, an I/O
    /// error, a read-only file, a lock held past the busy timeout), while no write has committed
    /// since. `GET /health` answers 503 with it, so a node that can still read (and hence looks
    /// alive) but cannot write leaves the load balancer's rotation, and comes back by itself at
    /// the first write that commits (the executor's heartbeat, at the latest). A backend whose
    /// reads fail as soon as its writes do may keep the default: nothing to report.
    fn write_failure(&self) -> Option<String> {
        None
    }

    // ----- jobs ---------------------------------------------------------------------------

    /// Inserts one job; its due date is resolved against the database clock in the same
    /// transaction. Returns the stored row.
    async fn job_insert(&self, job: &NewJob) -> Result<Job>;

    /// Inserts many jobs in one transaction (bulk enqueue). Returns how many were inserted.
    async fn job_insert_many(&self, jobs: &[NewJob]) -> Result<u64>;

    /// One job of one table, or `None`.
    async fn job_get(&self, table: JobTable, id: &str) -> Result<Option<Job>>;

    /// A page of jobs of one table, ordered by DUEDATE_ then ID_. Rows of the page that cannot
    /// be read are in [`Page::unreadable`], not in its data. `job_get` of such a row fails with
    /// [`ErrorKind::Unreadable`], naming the column.
    async fn job_list(&self, filter: &JobFilter) -> Result<Page<Job>>;

    /// Acquisition (SPEC J2, seed 001): locks up to `limit` executable jobs for `node`, ordered
    /// by due date. See [`JobAcquireParams`] for the exact rules.
    async fn job_acquire(&self, params: &JobAcquireParams) -> Result<Acquired>;

    /// Extends the leases of jobs still held by `node` with the given attempt numbers. Returns
    /// the ids whose lease was extended; a missing id means the lease was lost.
    async fn job_lease_extend(&self, params: &LeaseExtendParams) -> Result<Vec<String>>;

    /// Finishes attempts, all in one transaction, each fenced by its lease (id + owner +
    /// attempt). Returns, in input order, whether each completion is applied (`false`: the lease
    /// was lost and nothing was written for that job). Writes one ACT_HI_JOB_LOG row per
    /// applied completion. A completion an earlier call already applied (its COMMIT succeeded
    /// but the answer was lost, and the caller sent it again) answers `true` without writing
    /// anything again: its attempt's log row tells "already applied" from "lease lost". A job
    /// listed twice in one call is applied once; the repeat answers `false`.
    async fn job_complete_many(&self, completions: &[JobCompletion]) -> Result<Vec<bool>>;

    /// Hands running jobs back on graceful shutdown: clears their locks without spending a
    /// retry and logs each attempt as `abandoned`. Returns how many were released.
    async fn job_release(&self, params: &JobReleaseParams) -> Result<u64>;

    /// Makes a waiting job due now (`POST /management/jobs/{id}` `execute`). `NotFound` if it is
    /// not in ACT_RU_JOB.
    async fn job_execute_now(&self, id: &str) -> Result<Job>;

    /// Deletes a job of one table with its ACT_GE_BYTEARRAY rows. `NotFound` if absent;
    /// `Conflict` if it is in ACT_RU_JOB with an unexpired lease and `force` is false. Works on
    /// rows that cannot be read (a lease that cannot be read is judged live: force it).
    async fn job_delete(&self, table: JobTable, id: &str, force: bool) -> Result<()>;

    /// Rows of the three job tables that cannot be read, at most `limit`, in table then id
    /// order. Acquisition sets such rows aside as it meets them ([`Acquired::set_aside`]).
    async fn job_unreadable(&self, limit: u32) -> Result<Vec<Unreadable>>;

    /// When the executor should look again: the database's now and the earliest DUEDATE_ among
    /// unlocked jobs with retries left (`None` when there are none).
    async fn job_next_due(&self) -> Result<NextDue>;

    /// The full error chain of a job's last failure (ACT_GE_BYTEARRAY via EXCEPTION_STACK_ID_).
    /// `NotFound` if the job is absent; `Ok(None)` if it has no stored exception.
    async fn job_stacktrace(&self, table: JobTable, id: &str) -> Result<Option<String>>;

    /// Moves a dead letter back to ACT_RU_JOB (SPEC J4): RETRIES_ = `retries`, due now, lock and
    /// exception cleared, the old stack bytes deleted. `NotFound` if absent.
    async fn deadletter_move(&self, id: &str, retries: i32) -> Result<Job>;

    /// Counts for metrics and the doctor, by the database clock.
    async fn job_counts(&self) -> Result<JobCounts>;

    /// SPEC J11's job findings: orphan jobs (seed 000 §4.3), jobs of ended instances, expired
    /// locks, dead letters; at most `limit` rows of each.
    async fn job_diagnostics(&self, limit: u32) -> Result<JobDiagnostics>;

    // ----- job log ------------------------------------------------------------------------

    /// ACT_HI_JOB_LOG rows, oldest attempt first.
    async fn job_log_list(&self, filter: &JobLogFilter) -> Result<Page<JobLogEntry>>;

    // ----- nodes --------------------------------------------------------------------------

    /// Registers a node that is starting, before its first acquisition: upserts its row as
    /// `running` with a new STARTED_ and, in the same transaction, expires every unexpired lease
    /// under its id. A node that has not acquired yet holds no lease, so such leases belong to a
    /// previous incarnation: one restarted under a fixed id (`--node-id`, as Flowable users fix
    /// the lock owner) heartbeats again at once, the reaper never declares it dead, and its jobs
    /// would wait out the full lock time. Acquisition takes them over like any expired lease
    /// (abandoned attempt logged, retry spent). Node ids must hence be unique among live
    /// processes. Returns the database now and how many leases were expired.
    async fn node_register(&self, node: &NodeRegistration) -> Result<NodeRegistered>;

    /// Records the heartbeat of a running node (state `running`), registering it if its row is
    /// missing; returns the database now. Unlike [`Store::node_register`] it leaves the node's
    /// leases alone: the node is running attempts under them.
    async fn node_heartbeat(&self, node: &NodeRegistration) -> Result<Timestamp>;

    /// Marks a node `stopped` after a clean shutdown.
    async fn node_stop(&self, id: &str) -> Result<()>;

    /// Every known node, most recent heartbeat first.
    async fn node_list(&self) -> Result<Vec<NodeInfo>>;

    /// Declares `running` nodes whose heartbeat is older than `stale_after` (database clock)
    /// `dead`, and expires the leases they hold so their jobs are taken over now rather than at
    /// LOCK_EXP_TIME_ (SPEC J8). Returns the ids declared dead.
    async fn node_reap_dead(&self, stale_after: SignedDuration) -> Result<Vec<String>>;

    // ----- the engine's own SQL (process engine) ------------------------------------------

    // (read and write_all: the supertrait [`Sql`], which a caller's transaction has too.)

    // ----- operator SQL ------------------------------------------------------------------

    /// Runs an operator's read query (the seeds' diagnostic SQL) with `?` placeholders bound in
    /// order, returning rows of loosely typed values. The engine itself never uses this.
    async fn sql_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>>;

    /// Runs an operator's write statement with `?` placeholders; returns rows affected. For test
    /// fixtures and repair tooling; the engine itself never uses this.
    async fn sql_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64>;
}
