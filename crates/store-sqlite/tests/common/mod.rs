//! A fresh SQLite store per test, in a temporary directory that is removed with the store.

#![allow(dead_code)]

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobLogEntry, JobTable, NewJob, NodeInfo};
use kairos_store::*;
use kairos_store_sqlite::SqliteStore;
use tempfile::TempDir;

/// A migrated [`SqliteStore`] on a file in its own temporary directory. Delegates every
/// operation; dropping it removes the directory.
#[derive(Debug)]
pub struct TempStore {
    pub store: SqliteStore,
    _dir: TempDir,
}

impl TempStore {
    pub async fn new() -> TempStore {
        let dir = tempfile::Builder::new().prefix("kairos-sqlite-").tempdir().expect("a temporary directory");
        let url = format!("sqlite://{}", dir.path().join("kairos.db").display());
        let store = SqliteStore::connect(&url).await.expect("connect");
        store.migrate().await.expect("migrate");
        TempStore { store, _dir: dir }
    }
}

#[async_trait]
impl Store for TempStore {
    fn backend(&self) -> Backend {
        self.store.backend()
    }
    fn write_concurrency(&self) -> WriteConcurrency {
        self.store.write_concurrency()
    }
    async fn migrate(&self) -> Result<()> {
        self.store.migrate().await
    }
    async fn job_insert(&self, job: &NewJob) -> Result<Job> {
        self.store.job_insert(job).await
    }
    async fn job_insert_many(&self, jobs: &[NewJob]) -> Result<u64> {
        self.store.job_insert_many(jobs).await
    }
    async fn job_get(&self, table: JobTable, id: &str) -> Result<Option<Job>> {
        self.store.job_get(table, id).await
    }
    async fn job_list(&self, filter: &JobFilter) -> Result<Page<Job>> {
        self.store.job_list(filter).await
    }
    async fn job_acquire(&self, params: &JobAcquireParams) -> Result<Acquired> {
        self.store.job_acquire(params).await
    }
    async fn job_lease_extend(&self, params: &LeaseExtendParams) -> Result<Vec<String>> {
        self.store.job_lease_extend(params).await
    }
    async fn job_complete_many(&self, completions: &[JobCompletion]) -> Result<Vec<bool>> {
        self.store.job_complete_many(completions).await
    }
    async fn job_release(&self, params: &JobReleaseParams) -> Result<u64> {
        self.store.job_release(params).await
    }
    async fn job_execute_now(&self, id: &str) -> Result<Job> {
        self.store.job_execute_now(id).await
    }
    async fn job_delete(&self, table: JobTable, id: &str, force: bool) -> Result<()> {
        self.store.job_delete(table, id, force).await
    }
    async fn job_unreadable(&self, limit: u32) -> Result<Vec<kairos_store::Unreadable>> {
        self.store.job_unreadable(limit).await
    }
    async fn job_next_due(&self) -> Result<NextDue> {
        self.store.job_next_due().await
    }
    async fn job_stacktrace(&self, table: JobTable, id: &str) -> Result<Option<String>> {
        self.store.job_stacktrace(table, id).await
    }
    async fn deadletter_move(&self, id: &str, retries: i32) -> Result<Job> {
        self.store.deadletter_move(id, retries).await
    }
    async fn job_counts(&self) -> Result<JobCounts> {
        self.store.job_counts().await
    }
    async fn job_diagnostics(&self, limit: u32) -> Result<JobDiagnostics> {
        self.store.job_diagnostics(limit).await
    }
    async fn job_log_list(&self, filter: &JobLogFilter) -> Result<Page<JobLogEntry>> {
        self.store.job_log_list(filter).await
    }
    async fn node_register(&self, node: &NodeRegistration) -> Result<NodeRegistered> {
        self.store.node_register(node).await
    }
    async fn node_heartbeat(&self, node: &NodeRegistration) -> Result<Timestamp> {
        self.store.node_heartbeat(node).await
    }
    async fn node_stop(&self, id: &str) -> Result<()> {
        self.store.node_stop(id).await
    }
    async fn node_list(&self) -> Result<Vec<NodeInfo>> {
        self.store.node_list().await
    }
    async fn node_reap_dead(&self, stale_after: SignedDuration) -> Result<Vec<String>> {
        self.store.node_reap_dead(stale_after).await
    }
    async fn sql_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.store.sql_query(sql, binds).await
    }
    async fn sql_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64> {
        self.store.sql_execute(sql, binds).await
    }
}

#[async_trait]
impl Sql for TempStore {
    fn dialect(&self) -> &'static Dialect {
        self.store.dialect()
    }

    async fn db_now(&self) -> Result<Timestamp> {
        self.store.db_now().await
    }

    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.store.read(sql, binds).await
    }

    async fn write_all(&self, writes: &[Write]) -> Result<Vec<u64>> {
        self.store.write_all(writes).await
    }
}
