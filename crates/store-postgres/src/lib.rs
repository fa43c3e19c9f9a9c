//! The PostgreSQL backend of the kairos storage seam: cluster mode, where any number of nodes
//! share one database and split the work between them (SPEC J8).
//!
//! Every statement lives in a `.sql` file under `src/sql/` and is loaded with `include_str!`;
//! this file only wires the [`Store`] trait to the modules that carry each concern out:
//!
//! | module | concern |
//! |---|---|
//! | [`connect`] | pool, session timeouts, embedded migrations |
//! | `jobs` | insert (also inside a caller's transaction, C1), get, list, delete, dead letters |
//! | `acquire` | acquisition with `FOR UPDATE SKIP LOCKED` and cluster-wide exclusive keys |
//! | `complete` | batched, lease-fenced completions; lease extension; release on shutdown |
//! | `nodes` | registration, heartbeats, reaping dead nodes |
//! | `diagnostics` | counts, the doctor's findings, the job log |
//! | `operator_sql` | the seeds' diagnostic SQL with `?` placeholders |
//! | [`two_phase`] | the opt-in two-phase commit: its coordinator log, prepared transactions (C11) |
//! | `fuse`, `group` | the engine's write lists: runs of inserts as one statement; concurrent insert-only lists (process starts) committed together |
//!
//! Time: every comparison uses the database clock (`coalesce($now, now())` where a test may pin
//! it), and every instant written is cut to whole milliseconds first, because the columns are
//! TIMESTAMP(3): cutting (rather than letting PostgreSQL round half up) keeps an attempt's logged
//! end never later than the clock reading that followed it, so exclusive jobs' log intervals
//! cannot appear to overlap.

pub mod connect;

mod acquire;
mod complete;
mod diagnostics;
mod error;
mod fuse;
mod group;
mod jobs;
mod nodes;
mod operator_sql;
mod rows;
mod session;
mod tables;
pub mod two_phase;

#[cfg(feature = "test-support")]
pub mod test_support;

pub use connect::SessionTimeouts;
pub use jobs::job_insert_in;
pub use session::InTransaction;

/// PostgreSQL's spellings of what SQL does not agree on.
pub(crate) const DIALECT: Dialect = Dialect {
    json_array: "json_build_array",
    now: "date_trunc('milliseconds', now())",
    empty_table: "TRUNCATE",
    skip_locked: " FOR UPDATE SKIP LOCKED",
};

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobLogEntry, JobTable, NewJob, NodeInfo};
use kairos_store::{
    Acquired, Backend, Dialect, JobAcquireParams, JobCompletion, JobCounts, JobDiagnostics, JobFilter, JobLogFilter,
    JobReleaseParams, LeaseExtendParams, NextDue, NodeRegistered, NodeRegistration, Page, Result, SqlValue, Store,
    WriteConcurrency,
};
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The PostgreSQL store. Cheap to clone: clones share one pool.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    /// Set when the last acquisition met exclusive candidates, so the next one starts directly
    /// with the transactional path instead of paying a wasted fast-path statement first.
    exclusive_hint: Arc<AtomicBool>,
    /// Concurrent lists of inserts (process starts) written together ([`group`]).
    group: Arc<group::GroupCommit>,
}

impl PgStore {
    /// The pool the engine's sessions come from. Business code may begin its own transaction
    /// on it and enqueue with [`job_insert_in`] so both commit together (SPEC C1).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[async_trait]
impl Store for PgStore {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn write_concurrency(&self) -> WriteConcurrency {
        WriteConcurrency::Many
    }

    async fn migrate(&self) -> Result<()> {
        connect::migrate(&self.pool).await
    }

    async fn job_insert(&self, job: &NewJob) -> Result<Job> {
        jobs::insert(&self.pool, job).await
    }

    async fn job_insert_many(&self, jobs: &[NewJob]) -> Result<u64> {
        jobs::insert_many(&self.pool, jobs).await
    }

    async fn job_get(&self, table: JobTable, id: &str) -> Result<Option<Job>> {
        jobs::get(&self.pool, table, id).await
    }

    async fn job_list(&self, filter: &JobFilter) -> Result<Page<Job>> {
        jobs::list(&self.pool, filter).await
    }

    async fn job_acquire(&self, params: &JobAcquireParams) -> Result<Acquired> {
        acquire::acquire(&self.pool, &self.exclusive_hint, params).await
    }

    async fn job_lease_extend(&self, params: &LeaseExtendParams) -> Result<Vec<String>> {
        complete::lease_extend(&self.pool, params).await
    }

    async fn job_complete_many(&self, completions: &[JobCompletion]) -> Result<Vec<bool>> {
        complete::complete_many(&self.pool, completions).await
    }

    async fn job_release(&self, params: &JobReleaseParams) -> Result<u64> {
        complete::release(&self.pool, params).await
    }

    async fn job_execute_now(&self, id: &str) -> Result<Job> {
        jobs::execute_now(&self.pool, id).await
    }

    async fn job_delete(&self, table: JobTable, id: &str, force: bool) -> Result<()> {
        jobs::delete(&self.pool, table, id, force).await
    }

    async fn job_unreadable(&self, limit: u32) -> Result<Vec<kairos_store::Unreadable>> {
        jobs::unreadable(&self.pool, limit).await
    }

    async fn job_next_due(&self) -> Result<NextDue> {
        jobs::next_due(&self.pool).await
    }

    async fn job_stacktrace(&self, table: JobTable, id: &str) -> Result<Option<String>> {
        jobs::stacktrace(&self.pool, table, id).await
    }

    async fn deadletter_move(&self, id: &str, retries: i32) -> Result<Job> {
        jobs::deadletter_move(&self.pool, id, retries).await
    }

    async fn job_counts(&self) -> Result<JobCounts> {
        diagnostics::counts(&self.pool).await
    }

    async fn job_diagnostics(&self, limit: u32) -> Result<JobDiagnostics> {
        diagnostics::diagnostics(&self.pool, limit).await
    }

    async fn job_log_list(&self, filter: &JobLogFilter) -> Result<Page<JobLogEntry>> {
        diagnostics::job_log_list(&self.pool, filter).await
    }

    async fn node_register(&self, node: &NodeRegistration) -> Result<NodeRegistered> {
        nodes::register(&self.pool, node).await
    }

    async fn node_heartbeat(&self, node: &NodeRegistration) -> Result<Timestamp> {
        nodes::heartbeat(&self.pool, node).await
    }

    async fn node_stop(&self, id: &str) -> Result<()> {
        nodes::stop(&self.pool, id).await
    }

    async fn node_list(&self) -> Result<Vec<NodeInfo>> {
        nodes::list(&self.pool).await
    }

    async fn node_reap_dead(&self, stale_after: SignedDuration) -> Result<Vec<String>> {
        nodes::reap_dead(&self.pool, stale_after).await
    }

    async fn sql_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        operator_sql::query(&self.pool, sql, binds).await
    }

    async fn sql_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64> {
        operator_sql::execute(&self.pool, sql, binds).await
    }
}

#[async_trait]
impl kairos_store::Sql for PgStore {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    async fn db_now(&self) -> Result<Timestamp> {
        jobs::db_now(&self.pool).await
    }

    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        operator_sql::engine_read(&self.pool, sql, binds).await
    }

    async fn write_all(&self, writes: &[kairos_store::Write]) -> Result<Vec<u64>> {
        if group::eligible(writes) {
            return self.group.write(&self.pool, writes).await;
        }
        operator_sql::engine_write_all(&self.pool, writes, true).await
    }
}
