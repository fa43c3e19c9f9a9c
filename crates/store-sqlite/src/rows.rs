//! Rows of the job tables, the job log and the node table decoded into the core's types.
//!
//! Columns are read by name, so every statement may select `*` or a subset in any order.
//! TENANT_ID_ is stored as '' when absent (Activiti's default) and read back as `None`.

use crate::errors::{corrupt, db_err};
use crate::time::from_text;
use jiff::Timestamp;
use kairos_core::{Job, JobLogEntry, JobLogOutcome, JobType, NodeInfo};
use kairos_store::Result;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

fn get<'r, T>(row: &'r SqliteRow, col: &'static str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
{
    row.try_get(col).map_err(db_err("reading a row"))
}

pub(crate) fn text(row: &SqliteRow, col: &'static str) -> Result<String> {
    get::<String>(row, col)
}

pub(crate) fn opt_text(row: &SqliteRow, col: &'static str) -> Result<Option<String>> {
    get::<Option<String>>(row, col)
}

pub(crate) fn int(row: &SqliteRow, col: &'static str) -> Result<i32> {
    let v = get::<i64>(row, col)?;
    i32::try_from(v).map_err(|_| corrupt(format!("{col} = {v} is out of range")))
}

pub(crate) fn instant(row: &SqliteRow, col: &'static str) -> Result<Timestamp> {
    from_text(&text(row, col)?)
}

pub(crate) fn opt_instant(row: &SqliteRow, col: &'static str) -> Result<Option<Timestamp>> {
    opt_text(row, col)?.as_deref().map(from_text).transpose()
}

fn tenant(row: &SqliteRow) -> Result<Option<String>> {
    Ok(opt_text(row, "TENANT_ID_")?.filter(|t| !t.is_empty()))
}

fn job_type(row: &SqliteRow, id: &str) -> Result<JobType> {
    let t = text(row, "TYPE_")?;
    JobType::parse(&t).ok_or_else(|| corrupt(format!("job {id} has TYPE_ {t:?}, which kairos does not know")))
}

/// One row of ACT_RU_JOB, ACT_RU_DEADLETTER_JOB or ACT_RU_SUSPENDED_JOB.
pub(crate) fn job(row: &SqliteRow) -> Result<Job> {
    let id = text(row, "ID_")?;
    Ok(Job {
        rev: int(row, "REV_")?,
        job_type: job_type(row, &id)?,
        lock_owner: opt_text(row, "LOCK_OWNER_")?,
        lock_exp_time: opt_instant(row, "LOCK_EXP_TIME_")?,
        lock_time: opt_instant(row, "LOCK_TIME_")?,
        exclusive: get::<i64>(row, "EXCLUSIVE_")? != 0,
        exclusive_key: opt_text(row, "EXCLUSIVE_KEY_")?,
        execution_id: opt_text(row, "EXECUTION_ID_")?,
        process_instance_id: opt_text(row, "PROCESS_INSTANCE_ID_")?,
        proc_def_id: opt_text(row, "PROC_DEF_ID_")?,
        element_id: opt_text(row, "ELEMENT_ID_")?,
        element_name: opt_text(row, "ELEMENT_NAME_")?,
        scope_id: opt_text(row, "SCOPE_ID_")?,
        scope_type: opt_text(row, "SCOPE_TYPE_")?,
        scope_definition_id: opt_text(row, "SCOPE_DEFINITION_ID_")?,
        retries: int(row, "RETRIES_")?,
        attempts: int(row, "ATTEMPTS_")?,
        exception_stack_id: opt_text(row, "EXCEPTION_STACK_ID_")?,
        exception_msg: opt_text(row, "EXCEPTION_MSG_")?,
        duedate: opt_instant(row, "DUEDATE_")?,
        repeat: opt_text(row, "REPEAT_")?,
        retry_cycle: opt_text(row, "RETRY_CYCLE_")?,
        handler_type: text(row, "HANDLER_TYPE_")?,
        handler_cfg: opt_text(row, "HANDLER_CFG_")?,
        customvalues_id: opt_text(row, "CUSTOMVALUES_ID_")?,
        create_time: instant(row, "CREATE_TIME_")?,
        tenant_id: tenant(row)?,
        id,
    })
}

/// Decodes every row as a job.
pub(crate) fn jobs(rows: &[SqliteRow]) -> Result<Vec<Job>> {
    rows.iter().map(job).collect()
}

/// One row of ACT_HI_JOB_LOG.
pub(crate) fn log_entry(row: &SqliteRow) -> Result<JobLogEntry> {
    let id = text(row, "ID_")?;
    let outcome = text(row, "OUTCOME_")?;
    Ok(JobLogEntry {
        job_id: text(row, "JOB_ID_")?,
        attempt: int(row, "ATTEMPT_")?,
        node: opt_text(row, "NODE_ID_")?,
        start: opt_instant(row, "START_TIME_")?,
        end: opt_instant(row, "END_TIME_")?,
        outcome: JobLogOutcome::parse(&outcome)
            .ok_or_else(|| corrupt(format!("job log row {id} has OUTCOME_ {outcome:?}")))?,
        message: opt_text(row, "MESSAGE_")?,
        handler_type: text(row, "HANDLER_TYPE_")?,
        job_type: job_type(row, &id)?,
        process_instance_id: opt_text(row, "PROCESS_INSTANCE_ID_")?,
        element_id: opt_text(row, "ELEMENT_ID_")?,
        exclusive_key: opt_text(row, "EXCLUSIVE_KEY_")?,
        duedate: opt_instant(row, "DUEDATE_")?,
        tenant_id: tenant(row)?,
        id,
    })
}

/// One row of KAIROS_NODE.
pub(crate) fn node(row: &SqliteRow) -> Result<NodeInfo> {
    Ok(NodeInfo {
        id: text(row, "ID_")?,
        host: text(row, "HOST_")?,
        pid: get::<i64>(row, "PID_")?,
        workers: int(row, "WORKERS_")?,
        started: instant(row, "STARTED_")?,
        heartbeat: instant(row, "HEARTBEAT_")?,
        state: text(row, "STATE_")?,
    })
}

/// Reads a count column.
pub(crate) fn count(row: &SqliteRow, col: &'static str) -> Result<u64> {
    let v = get::<i64>(row, col)?;
    Ok(u64::try_from(v).unwrap_or(0))
}
