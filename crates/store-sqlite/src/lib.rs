//! The SQLite backend of the kairos storage seam.
//!
//! One database file, zero set-up. Every statement lives in a `.sql` file under `src/sql/`,
//! loaded with `include_str!` so its text is static and sqlx caches it as a prepared statement.
//!
//! Concurrency: SQLite has one writer at a time. Every write transaction starts with
//! `BEGIN IMMEDIATE`, which takes the write lock up front (a deferred transaction that reads and
//! then writes gets SQLITE_BUSY without waiting), and waits up to [`BUSY_TIMEOUT`] for another
//! process's writer. Inside one process the store also queues its own writers on an async mutex,
//! so they wait in FIFO order instead of in SQLite's sleeping busy handler. Because the whole
//! read-then-write of an acquisition runs under the write lock, it is atomic (seed 000 §3.2).
//!
//! Time: instants are UTC text in SQLite's own `strftime('%Y-%m-%d %H:%M:%f')` format (see
//! [`time`]), and "now" is always the database clock read inside the transaction, unless a
//! test pins it through the params.

mod acquire;
mod complete;
mod connect;
mod diagnostics;
mod errors;
mod joblog;
mod jobs;
mod lease;
mod nodes;
mod now;
mod operator;
mod rows;
mod session;
mod time;

pub use connect::BUSY_TIMEOUT;
pub use jobs::job_insert_in;
pub use session::InTransaction;

/// SQLite's spellings of what SQL does not agree on.
pub(crate) const DIALECT: Dialect = Dialect {
    json_array: "json_array",
    now: "strftime('%Y-%m-%d %H:%M:%f', 'now')",
    empty_table: "DELETE FROM",
    skip_locked: "",
};

use async_trait::async_trait;
use errors::db_err;
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobLogEntry, JobTable, NewJob, NodeInfo};
use kairos_store::*;
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};
use std::sync::Arc;
use tokio::sync::{Mutex, MutexGuard};

/// A kairos store on one SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// Queues this process's write transactions (see the crate docs).
    writer: Arc<Mutex<()>>,
    /// The engine's write lists waiting for the next group commit (see `Sql::write_all`).
    group: Arc<std::sync::Mutex<Vec<operator::Pending>>>,
    /// Why the last write failed, while no write has committed since (`Store::write_failure`).
    write_failure: Arc<std::sync::Mutex<Option<String>>>,
}

/// A write transaction together with the in-process writer slot it holds.
pub(crate) struct WriteTx<'a> {
    pub(crate) tx: Transaction<'static, Sqlite>,
    _slot: MutexGuard<'a, ()>,
}

impl WriteTx<'_> {
    pub(crate) async fn commit(self, op: &'static str) -> Result<()> {
        self.tx.commit().await.map_err(db_err(op))
    }
}

impl SqliteStore {
    /// Wraps an existing pool. The pool's connections should use the pragmas
    /// [`SqliteStore::connect`] sets (WAL, synchronous=FULL, a busy timeout); this constructor
    /// does not change them.
    pub fn from_pool(pool: SqlitePool) -> SqliteStore {
        SqliteStore { pool, writer: Arc::new(Mutex::new(())), group: Arc::default(), write_failure: Arc::default() }
    }

    /// The pool, for callers that run kairos commands inside their own transaction (C1, see
    /// [`job_insert_in`]). Open such transactions with `pool.begin_with("BEGIN IMMEDIATE")`.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Starts a write transaction with `BEGIN IMMEDIATE`, after this process's earlier writers.
    pub(crate) async fn write(&self, op: &'static str) -> Result<WriteTx<'_>> {
        let slot = self.writer.lock().await;
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(db_err(op))?;
        Ok(WriteTx { tx, _slot: slot })
    }
}

impl SqliteStore {
    /// Notes the outcome of a write operation for [`Store::write_failure`]: a failure to reach
    /// or write the database is remembered; an operation that committed a change (`wrote`)
    /// clears it. Conflicts and bad input say nothing about the disk and change nothing.
    fn noted<T>(&self, result: Result<T>, wrote: impl FnOnce(&T) -> bool) -> Result<T> {
        let update = match &result {
            Ok(done) if wrote(done) => Some(None),
            Err(e) if e.kind == ErrorKind::Unavailable => Some(Some(e.message.clone())),
            _ => None,
        };
        if let Some(state) = update {
            *self.write_failure.lock().unwrap_or_else(|e| e.into_inner()) = state;
        }
        result
    }
}

/// For [`SqliteStore::noted`]: every successful call of the operation committed a change.
fn always<T>(_: &T) -> bool {
    true
}

/// The instant a transaction works at: `pinned` (tests) or the database clock, read on `conn`.
pub(crate) async fn now_on(
    conn: &mut SqliteConnection,
    pinned: Option<Timestamp>,
    op: &'static str,
) -> Result<Timestamp> {
    let pinned = time::opt_to_text(pinned)?;
    let row = sqlx::query(include_str!("sql/now.sql")).bind(pinned).fetch_one(&mut *conn).await.map_err(db_err(op))?;
    rows::instant(&row, "NOW_")
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    fn write_concurrency(&self) -> WriteConcurrency {
        WriteConcurrency::One
    }

    async fn migrate(&self) -> Result<()> {
        self.run_migrations().await
    }

    fn write_failure(&self) -> Option<String> {
        self.write_failure.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    async fn job_insert(&self, job: &NewJob) -> Result<Job> {
        self.noted(self.insert_one(job).await, always)
    }

    async fn job_insert_many(&self, jobs: &[NewJob]) -> Result<u64> {
        self.noted(self.insert_many(jobs).await, |n| *n > 0)
    }

    async fn job_get(&self, table: JobTable, id: &str) -> Result<Option<Job>> {
        self.get(table, id).await
    }

    async fn job_list(&self, filter: &JobFilter) -> Result<Page<Job>> {
        self.list(filter).await
    }

    async fn job_acquire(&self, params: &JobAcquireParams) -> Result<Acquired> {
        self.noted(self.acquire(params).await, |a| !a.jobs.is_empty())
    }

    async fn job_lease_extend(&self, params: &LeaseExtendParams) -> Result<Vec<String>> {
        self.noted(self.lease_extend(params).await, |kept| !kept.is_empty())
    }

    async fn job_complete_many(&self, completions: &[JobCompletion]) -> Result<Vec<bool>> {
        self.noted(self.complete_many(completions).await, |done| done.iter().any(|&applied| applied))
    }

    async fn job_release(&self, params: &JobReleaseParams) -> Result<u64> {
        self.noted(self.release(params).await, |n| *n > 0)
    }

    async fn job_execute_now(&self, id: &str) -> Result<Job> {
        self.noted(self.execute_now(id).await, always)
    }

    async fn job_delete(&self, table: JobTable, id: &str, force: bool) -> Result<()> {
        self.noted(self.delete(table, id, force).await, always)
    }

    async fn job_unreadable(&self, limit: u32) -> Result<Vec<kairos_store::Unreadable>> {
        self.unreadable(limit).await
    }

    async fn job_next_due(&self) -> Result<NextDue> {
        self.next_due().await
    }

    async fn job_stacktrace(&self, table: JobTable, id: &str) -> Result<Option<String>> {
        self.stacktrace(table, id).await
    }

    async fn deadletter_move(&self, id: &str, retries: i32) -> Result<Job> {
        self.noted(self.move_dead_letter(id, retries).await, always)
    }

    async fn job_counts(&self) -> Result<JobCounts> {
        self.counts().await
    }

    async fn job_diagnostics(&self, limit: u32) -> Result<JobDiagnostics> {
        self.diagnostics(limit).await
    }

    async fn job_log_list(&self, filter: &JobLogFilter) -> Result<Page<JobLogEntry>> {
        self.log_list(filter).await
    }

    async fn node_register(&self, node: &NodeRegistration) -> Result<NodeRegistered> {
        self.noted(self.register(node).await, always)
    }

    async fn node_heartbeat(&self, node: &NodeRegistration) -> Result<Timestamp> {
        self.noted(self.heartbeat(node).await, always)
    }

    async fn node_stop(&self, id: &str) -> Result<()> {
        self.noted(self.stop(id).await, always)
    }

    async fn node_list(&self) -> Result<Vec<NodeInfo>> {
        self.nodes().await
    }

    async fn node_reap_dead(&self, stale_after: SignedDuration) -> Result<Vec<String>> {
        self.reap_dead(stale_after).await
    }

    async fn sql_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.operator_query(sql, binds).await
    }

    async fn sql_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64> {
        self.noted(self.operator_execute(sql, binds).await, |n| *n > 0)
    }
}

#[async_trait]
impl kairos_store::Sql for SqliteStore {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    async fn db_now(&self) -> Result<Timestamp> {
        let mut conn = self.pool.acquire().await.map_err(db_err("db_now"))?;
        now_on(&mut conn, None, "db_now").await
    }

    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.engine_read(sql, binds).await
    }

    async fn write_all(&self, writes: &[kairos_store::Write]) -> Result<Vec<u64>> {
        self.noted(self.engine_write_all(writes).await, always)
    }
}
