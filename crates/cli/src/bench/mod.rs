//! Benchmarks: measurements printed as one JSON line, not tests. Each starts from a known state
//! (an empty job table) so that two runs measure the same thing.

pub mod jobs;
pub mod outbox;
pub mod process;
pub mod reconcile;
mod recorder;
pub mod scheduler;

pub use recorder::{Recorder, percentile_ms};

use crate::exit::CliError;
use kairos_store::{SqlValue, Store};

/// The tenant of every job the benchmark enqueues: it finds and deletes its own rows by it.
pub const BENCH_TENANT: &str = "kairos-bench";

/// A `SELECT COUNT(*) ...` through the operator SQL seam.
pub async fn count(store: &dyn Store, sql: &str, binds: &[SqlValue]) -> Result<u64, CliError> {
    let rows = store.sql_query(sql, binds).await?;
    let n = rows.first().and_then(|r| r.first()).and_then(SqlValue::as_i64).unwrap_or(0);
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Refuses to measure on a store another node is working on, or whose job table is not empty
/// (unless `reset`, which deletes every job and the job log first).
pub async fn prepare(store: &dyn Store, reset: bool) -> Result<(), CliError> {
    let now = store.db_now().await?;
    let recent = now.checked_sub(jiff::SignedDuration::from_secs(30)).unwrap_or(now);
    if let Some(node) = store.node_list().await?.into_iter().find(|n| n.state == "running" && n.heartbeat > recent) {
        return Err(CliError::bad_input(format!(
            "node {} is running against this database (heartbeat {}); stop it first, or its executor would take the benchmark's jobs",
            node.id, node.heartbeat
        )));
    }
    if reset {
        reset_jobs(store).await?;
        return Ok(());
    }
    let jobs = count(store, "SELECT COUNT(*) FROM ACT_RU_JOB", &[]).await?;
    if jobs > 0 {
        return Err(CliError::bad_input(format!(
            "ACT_RU_JOB holds {jobs} jobs; a fresh measurement needs an empty job table: rerun with --reset to delete all jobs and the job log, or use another --db"
        )));
    }
    Ok(())
}

/// Deletes every job of the three job tables, their stack traces and the job log.
pub(crate) async fn reset_jobs(store: &dyn Store) -> Result<(), CliError> {
    let mut statements = Vec::new();
    for table in ["ACT_RU_JOB", "ACT_RU_DEADLETTER_JOB", "ACT_RU_SUSPENDED_JOB"] {
        for column in ["EXCEPTION_STACK_ID_", "CUSTOMVALUES_ID_"] {
            statements.push(format!(
                "DELETE FROM ACT_GE_BYTEARRAY WHERE ID_ IN (SELECT {column} FROM {table} WHERE {column} IS NOT NULL)"
            ));
        }
    }
    for sql in &statements {
        store.sql_execute(sql, &[]).await?;
    }
    empty_tables(store, &["ACT_RU_JOB", "ACT_RU_DEADLETTER_JOB", "ACT_RU_SUSPENDED_JOB", "ACT_HI_JOB_LOG"]).await
}

/// Deletes every row of `tables` (on PostgreSQL by TRUNCATE: a mass DELETE leaves the tables
/// and their indexes full of dead rows until autovacuum comes by, and the next run would
/// measure the bloat — runs after a reset measured ever slower, 826 → 679 → 581 instances/s).
pub(crate) async fn empty_tables(store: &dyn Store, tables: &[&str]) -> Result<(), CliError> {
    for table in tables {
        store.sql_execute(&format!("{} {table}", store.dialect().empty_table), &[]).await?;
    }
    Ok(())
}
