//! What operators and metrics read: job counts, the doctor's job findings (SPEC J11) and the job
//! log (SPEC J12).

use crate::error::DbResultExt;
use crate::rows::{self, count, get};
use kairos_core::JobLogEntry;
use kairos_store::{JobCounts, JobDiagnostics, JobLogFilter, Page, Result};
use sqlx::PgPool;

const COUNTS: &str = include_str!("sql/job_counts.sql");
const ORPHANS: &str = include_str!("sql/diag_orphans.sql");
const ENDED: &str = include_str!("sql/diag_ended.sql");
const EXPIRED: &str = include_str!("sql/diag_expired.sql");
const DEAD_LETTERS: &str = include_str!("sql/diag_dead_letters.sql");
const LOG_LIST: &str = include_str!("sql/job_log_list.sql");
const LOG_COUNT: &str = include_str!("sql/job_log_count.sql");

pub(crate) async fn counts(pool: &PgPool) -> Result<JobCounts> {
    let row = sqlx::query(COUNTS).fetch_one(pool).await.db()?;
    // A due date that cannot be read (`-infinity`) is no age; the row is reported apart.
    let oldest: Option<jiff_sqlx::Timestamp> = get(&row, "oldest_executable_due_").ok().flatten();
    Ok(JobCounts {
        executable: count(&row, "executable_")?,
        waiting: count(&row, "waiting_")?,
        running: count(&row, "running_")?,
        expired_locks: count(&row, "expired_locks_")?,
        failing: count(&row, "failing_")?,
        dead_letters: count(&row, "dead_letters_")?,
        suspended: count(&row, "suspended_")?,
        oldest_executable_due: oldest.map(|t| t.to_jiff()),
    })
}

pub(crate) async fn diagnostics(pool: &PgPool, limit: u32) -> Result<JobDiagnostics> {
    let limit = i64::from(limit);
    let jobs = |sql: &'static str| async move {
        let found = sqlx::query(sql).bind(limit).fetch_all(pool).await.db()?;
        // Rows that cannot be read are the doctor's finding of their own (job_unreadable).
        rows::split_jobs(kairos_core::JobTable::Runtime, &found).map(|(jobs, _)| jobs)
    };
    Ok(JobDiagnostics {
        counts: counts(pool).await?,
        orphan_jobs: jobs(ORPHANS).await?,
        jobs_of_ended_instances: jobs(ENDED).await?,
        expired_locks: jobs(EXPIRED).await?,
        dead_letters: jobs(DEAD_LETTERS).await?,
    })
}

pub(crate) async fn job_log_list(pool: &PgPool, filter: &JobLogFilter) -> Result<Page<JobLogEntry>> {
    let total =
        sqlx::query(LOG_COUNT).bind(&filter.job_id).bind(&filter.process_instance_id).fetch_one(pool).await.db()?;
    let found = sqlx::query(LOG_LIST)
        .bind(&filter.job_id)
        .bind(&filter.process_instance_id)
        .bind(i64::try_from(filter.size).unwrap_or(i64::MAX))
        .bind(i64::try_from(filter.start).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await
        .db()?;
    let data = found.iter().map(rows::job_log).collect::<Result<Vec<_>>>()?;
    Ok(Page::of(data, count(&total, "total_")?, filter.start))
}
