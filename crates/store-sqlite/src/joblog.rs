//! ACT_HI_JOB_LOG: one row per attempt (SPEC J12). Rows are written in batches — one
//! statement for all the attempts a transaction finishes — and outlive the job row.

use crate::SqliteStore;
use crate::errors::db_err;
use crate::rows;
use crate::time::opt_to_text;
use jiff::Timestamp;
use kairos_core::outcome::truncate_chars;
use kairos_core::{JobLogEntry, JobLogOutcome, new_id};
use kairos_store::{JobLogFilter, Page, Result};
use serde_json::{Value, json};
use sqlx::SqliteConnection;

/// ACT_HI_JOB_LOG.MESSAGE_ and EXCEPTION_MSG_ are varchar(4000) (seed 000 §2.1); longer text
/// is cut on a character boundary so both backends store the same thing.
pub(crate) const MESSAGE_MAX_CHARS: usize = 4000;

/// The job columns a log row copies, so the log still answers "what was job X" after the row
/// is gone.
#[derive(Debug, Clone)]
pub(crate) struct JobFacts {
    pub(crate) id: String,
    pub(crate) job_type: String,
    pub(crate) handler_type: String,
    pub(crate) process_instance_id: Option<String>,
    pub(crate) element_id: Option<String>,
    pub(crate) exclusive_key: Option<String>,
    /// DUEDATE_ as stored (text), copied verbatim.
    pub(crate) duedate: Option<String>,
    /// TENANT_ID_ as stored ('' when absent).
    pub(crate) tenant: String,
}

impl JobFacts {
    pub(crate) fn of_job(job: &kairos_core::Job) -> Result<JobFacts> {
        Ok(JobFacts {
            id: job.id.clone(),
            job_type: job.job_type.as_str().to_string(),
            handler_type: job.handler_type.clone(),
            process_instance_id: job.process_instance_id.clone(),
            element_id: job.element_id.clone(),
            exclusive_key: job.exclusive_key.clone(),
            duedate: opt_to_text(job.duedate)?,
            tenant: job.tenant_id.clone().unwrap_or_default(),
        })
    }
}

/// One attempt to record.
#[derive(Debug, Clone)]
pub(crate) struct LogRow {
    pub(crate) job: JobFacts,
    pub(crate) attempt: i32,
    pub(crate) node: Option<String>,
    pub(crate) start: Option<Timestamp>,
    pub(crate) end: Option<Timestamp>,
    pub(crate) outcome: JobLogOutcome,
    pub(crate) message: Option<String>,
}

impl LogRow {
    fn to_json(&self) -> Result<Value> {
        let j = &self.job;
        Ok(json!([
            new_id(),
            j.id,
            self.attempt,
            self.node,
            opt_to_text(self.start)?,
            opt_to_text(self.end)?,
            self.outcome.as_str(),
            self.message.as_deref().map(|m| truncate_chars(m, MESSAGE_MAX_CHARS)),
            j.job_type,
            j.handler_type,
            j.process_instance_id,
            j.element_id,
            j.exclusive_key,
            j.duedate,
            j.tenant,
        ]))
    }
}

/// Writes `rows` with one statement (nothing when empty).
pub(crate) async fn insert_log_rows(conn: &mut SqliteConnection, rows: &[LogRow], op: &'static str) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let json = Value::Array(rows.iter().map(LogRow::to_json).collect::<Result<_>>()?).to_string();
    sqlx::query(include_str!("sql/job_log_insert.sql")).bind(json).execute(&mut *conn).await.map_err(db_err(op))?;
    Ok(())
}

/// A row count or offset as SQLite's signed integer.
pub(crate) fn sql_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl SqliteStore {
    pub(crate) async fn log_list(&self, filter: &JobLogFilter) -> Result<Page<JobLogEntry>> {
        const OP: &str = "job_log_list";
        let data = sqlx::query(include_str!("sql/job_log_list.sql"))
            .bind(filter.job_id.as_deref())
            .bind(filter.process_instance_id.as_deref())
            .bind(sql_int(filter.size))
            .bind(sql_int(filter.start))
            .fetch_all(&self.pool)
            .await
            .map_err(db_err(OP))?
            .iter()
            .map(rows::log_entry)
            .collect::<Result<Vec<_>>>()?;
        let total_row = sqlx::query(include_str!("sql/job_log_count.sql"))
            .bind(filter.job_id.as_deref())
            .bind(filter.process_instance_id.as_deref())
            .fetch_one(&self.pool)
            .await
            .map_err(db_err(OP))?;
        let total = rows::count(&total_row, "TOTAL_")?;
        Ok(Page::of(data, total, filter.start))
    }
}
