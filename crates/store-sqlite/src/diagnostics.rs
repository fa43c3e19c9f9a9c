//! What the executor, the metrics and the doctor read: the next due date, job counts by the
//! database clock, and SPEC J11's findings (orphans, jobs of ended instances, expired locks,
//! dead letters). Read-only; WAL lets these run beside the writer.

use crate::errors::db_err;
use crate::time::to_text;
use crate::{SqliteStore, now_on, rows};
use kairos_core::JobTable;
use kairos_store::{JobCounts, JobDiagnostics, NextDue, Result};
use sqlx::SqliteConnection;

impl SqliteStore {
    pub(crate) async fn next_due(&self) -> Result<NextDue> {
        let row = sqlx::query(include_str!("sql/job_next_due.sql"))
            .fetch_one(&self.pool)
            .await
            .map_err(db_err("job_next_due"))?;
        // A due date that cannot be read is no wake-up: the next poll's acquisition sets its
        // row aside.
        Ok(NextDue { db_now: rows::instant(&row, "NOW_")?, next: rows::opt_instant(&row, "NEXT_").ok().flatten() })
    }

    pub(crate) async fn counts(&self) -> Result<JobCounts> {
        let mut conn = self.pool.acquire().await.map_err(db_err("job_counts"))?;
        counts_on(&mut conn).await
    }

    pub(crate) async fn diagnostics(&self, limit: u32) -> Result<JobDiagnostics> {
        const OP: &str = "job_diagnostics";
        // One read transaction, so the counts and the lists describe the same moment.
        let mut tx = self.pool.begin().await.map_err(db_err(OP))?;
        let counts = counts_on(&mut tx).await?;
        let now = to_text(now_on(&mut tx, None, OP).await?)?;
        let limit = i64::from(limit);
        let orphan_jobs = sqlx::query(include_str!("sql/diag_orphans.sql"))
            .bind(limit)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err(OP))?;
        let jobs_of_ended_instances = sqlx::query(include_str!("sql/diag_ended.sql"))
            .bind(limit)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err(OP))?;
        let expired_locks = sqlx::query(include_str!("sql/diag_expired.sql"))
            .bind(&now)
            .bind(limit)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err(OP))?;
        let dead_letters = sqlx::query(include_str!("sql/diag_deadletters.sql"))
            .bind(limit)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err(OP))?;
        tx.commit().await.map_err(db_err(OP))?;
        Ok(JobDiagnostics {
            counts,
            // Rows that cannot be read are the doctor's finding of their own (job_unreadable).
            orphan_jobs: rows::readable_jobs(JobTable::Runtime, &orphan_jobs)?,
            jobs_of_ended_instances: rows::readable_jobs(JobTable::Runtime, &jobs_of_ended_instances)?,
            expired_locks: rows::readable_jobs(JobTable::Runtime, &expired_locks)?,
            dead_letters: rows::readable_jobs(JobTable::DeadLetter, &dead_letters)?,
        })
    }
}

async fn counts_on(conn: &mut SqliteConnection) -> Result<JobCounts> {
    const OP: &str = "job_counts";
    let now = to_text(now_on(conn, None, OP).await?)?;
    let row =
        sqlx::query(include_str!("sql/job_counts.sql")).bind(now).fetch_one(&mut *conn).await.map_err(db_err(OP))?;
    Ok(JobCounts {
        executable: rows::count(&row, "EXECUTABLE_")?,
        waiting: rows::count(&row, "WAITING_")?,
        running: rows::count(&row, "RUNNING_")?,
        expired_locks: rows::count(&row, "EXPIRED_")?,
        failing: rows::count(&row, "FAILING_")?,
        dead_letters: rows::count(&row, "DEAD_LETTERS_")?,
        suspended: rows::count(&row, "SUSPENDED_")?,
        oldest_executable_due: rows::opt_instant(&row, "OLDEST_DUE_").ok().flatten(),
    })
}
