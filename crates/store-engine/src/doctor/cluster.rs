//! The cluster-wide findings' queries on the job, history and job-log tables (seed 000 §4,
//! seed 003 §5.1).

use super::Shown;
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, SqlValue, Store};

/// Due, unlocked jobs with retries of one TYPE_ (seed 000 §4.5's backlog by type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BacklogOfType {
    pub job_type: String,
    pub count: i64,
    /// The oldest DUEDATE_ (or CREATE_TIME_ of a job without one).
    pub oldest: Option<Shown>,
}

/// Seed 000 §4.5's `SELECT TYPE_, COUNT(*) … GROUP BY TYPE_`, on the jobs due and unlocked (or
/// whose lease expired) at `now`, by TYPE_.
pub async fn backlog_by_type(store: &dyn Store, now: Timestamp) -> Result<Vec<BacklogOfType>> {
    let rows = store
        .sql_query(
            "SELECT TYPE_, COUNT(*), MIN(COALESCE(DUEDATE_, CREATE_TIME_)) FROM ACT_RU_JOB \
             WHERE RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= ?) AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?) \
             GROUP BY TYPE_ ORDER BY TYPE_",
            &[SqlValue::Timestamp(now), SqlValue::Timestamp(now)],
        )
        .await?;
    let rows = Rows::new("ACT_RU_JOB", &["TYPE_", "COUNT", "OLDEST"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(BacklogOfType { job_type: r.text("TYPE_")?, count: r.int("COUNT")?, oldest: Shown::of(&r, "OLDEST")? })
        })
        .collect()
}

/// IDs of jobs in ACT_RU_JOB with RETRIES_ <= 0, at most `limit`, by ID_.
pub async fn jobs_without_retries(store: &dyn Store, limit: u32) -> Result<Vec<String>> {
    let rows = store
        .sql_query(&format!("SELECT ID_ FROM ACT_RU_JOB WHERE RETRIES_ <= 0 ORDER BY ID_ LIMIT {limit}"), &[])
        .await?;
    let rows = Rows::new("ACT_RU_JOB", &["ID_"], rows)?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// An instance ended in history whose root execution is still in ACT_RU_EXECUTION.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedWithRuntimeRows {
    pub process_instance_id: String,
    /// ACT_HI_PROCINST.END_TIME_.
    pub end_time: Option<Shown>,
}

/// Seed 003 §5.1: instances ACT_HI_PROCINST says ended, yet whose root execution remains, at
/// most `limit`, by id.
pub async fn ended_with_runtime_rows(store: &dyn Store, limit: u32) -> Result<Vec<EndedWithRuntimeRows>> {
    let rows = store
        .sql_query(
            &format!(
                "SELECT e.ID_, h.END_TIME_ FROM ACT_RU_EXECUTION e JOIN ACT_HI_PROCINST h ON h.PROC_INST_ID_ = e.ID_ \
                 WHERE e.PARENT_ID_ IS NULL AND h.END_TIME_ IS NOT NULL ORDER BY e.ID_ LIMIT {limit}"
            ),
            &[],
        )
        .await?;
    let rows = Rows::new("ACT_RU_EXECUTION", &["ID_", "END_TIME_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(EndedWithRuntimeRows { process_instance_id: r.text("ID_")?, end_time: Shown::of(&r, "END_TIME_")? })
        })
        .collect()
}

/// One finished attempt of ACT_HI_JOB_LOG, for its handler's duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptTimes {
    pub handler: String,
    pub start: Option<Shown>,
    pub end: Option<Shown>,
    pub job_id: String,
}

/// The last `limit` finished attempts that were not abandoned, latest first (seed 000 §4.4:
/// a lock time shorter than what handlers take).
pub async fn recent_attempt_times(store: &dyn Store, limit: u32) -> Result<Vec<AttemptTimes>> {
    let rows = store
        .sql_query(
            &format!(
                "SELECT HANDLER_TYPE_, START_TIME_, END_TIME_, JOB_ID_ FROM ACT_HI_JOB_LOG \
                 WHERE START_TIME_ IS NOT NULL AND END_TIME_ IS NOT NULL AND OUTCOME_ <> 'abandoned' \
                 ORDER BY END_TIME_ DESC LIMIT {limit}"
            ),
            &[],
        )
        .await?;
    let rows = Rows::new("ACT_HI_JOB_LOG", &["HANDLER_TYPE_", "START_TIME_", "END_TIME_", "JOB_ID_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(AttemptTimes {
                handler: r.text("HANDLER_TYPE_")?,
                start: Shown::of(&r, "START_TIME_")?,
                end: Shown::of(&r, "END_TIME_")?,
                job_id: r.text("JOB_ID_")?,
            })
        })
        .collect()
}

/// Compensation handlers' jobs that failed (SPEC C8, seed 002 §39): (still retrying, dead
/// letters, when the oldest of them was created). A handler runs on an execution named
/// `{instance}:c{order}` (a process execution id has no colon), which is how its jobs are told
/// from the others.
pub async fn compensation_failures(db: &dyn kairos_store::Sql) -> Result<(i64, i64, Option<Timestamp>)> {
    let sql = "SELECT (SELECT COUNT(*) FROM ACT_RU_JOB WHERE EXECUTION_ID_ LIKE '%:c%' AND EXCEPTION_MSG_ IS NOT NULL) AS r, \
               (SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB WHERE EXECUTION_ID_ LIKE '%:c%') AS d, \
               (SELECT MIN(CREATE_TIME_) FROM ACT_RU_DEADLETTER_JOB WHERE EXECUTION_ID_ LIKE '%:c%') AS t";
    let rows = crate::Rows::read(db, "ACT_RU_JOB", &["r", "d", "t"], sql, &[]).await?;
    match rows.first() {
        Some(r) => Ok((r.int("r")?, r.int("d")?, r.opt_instant("t")?)),
        None => Ok((0, 0, None)),
    }
}
