//! Rows of the job tables, the job log and the node table decoded into the core's types.
//!
//! Columns are read by name, so every statement may select `*` or a subset in any order.
//! TENANT_ID_ is stored as '' when absent (Activiti's default) and read back as `None`.

use crate::errors::{corrupt, db_err};
use crate::time::from_text;
use jiff::Timestamp;
use kairos_core::{Job, JobLogEntry, JobLogOutcome, JobType, NodeInfo};
use kairos_store::Result;
use serde::Deserialize;
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

/// ACT_RU_JOB as one element of the JSON array `sql/job_get_many_json.sql` returns: the
/// columns in table order, so serde reads the array positionally.
#[derive(Debug, Deserialize)]
struct JobJson {
    id: String,
    rev: i32,
    job_type: String,
    lock_exp_time: Option<String>,
    lock_owner: Option<String>,
    lock_time: Option<String>,
    exclusive: i64,
    exclusive_key: Option<String>,
    execution_id: Option<String>,
    process_instance_id: Option<String>,
    proc_def_id: Option<String>,
    element_id: Option<String>,
    element_name: Option<String>,
    scope_id: Option<String>,
    scope_type: Option<String>,
    scope_definition_id: Option<String>,
    retries: i32,
    attempts: i32,
    exception_stack_id: Option<String>,
    exception_msg: Option<String>,
    duedate: Option<String>,
    repeat: Option<String>,
    retry_cycle: Option<String>,
    handler_type: String,
    handler_cfg: Option<String>,
    customvalues_id: Option<String>,
    create_time: String,
    tenant_id: Option<String>,
}

fn opt_from_text(s: Option<String>) -> Result<Option<Timestamp>> {
    s.as_deref().map(from_text).transpose()
}

/// Jobs from the single JSON value of `sql/job_get_many_json.sql`.
pub(crate) fn jobs_from_json(text: &str) -> Result<Vec<Job>> {
    let rows: Vec<JobJson> =
        serde_json::from_str(text).map_err(|e| corrupt(format!("job rows as JSON cannot be read: {e}")))?;
    rows.into_iter()
        .map(|j| {
            let job_type = JobType::parse(&j.job_type).ok_or_else(|| {
                corrupt(format!("job {} has TYPE_ {:?}, which kairos does not know", j.id, j.job_type))
            })?;
            Ok(Job {
                rev: j.rev,
                job_type,
                lock_owner: j.lock_owner,
                lock_exp_time: opt_from_text(j.lock_exp_time)?,
                lock_time: opt_from_text(j.lock_time)?,
                exclusive: j.exclusive != 0,
                exclusive_key: j.exclusive_key,
                execution_id: j.execution_id,
                process_instance_id: j.process_instance_id,
                proc_def_id: j.proc_def_id,
                element_id: j.element_id,
                element_name: j.element_name,
                scope_id: j.scope_id,
                scope_type: j.scope_type,
                scope_definition_id: j.scope_definition_id,
                retries: j.retries,
                attempts: j.attempts,
                exception_stack_id: j.exception_stack_id,
                exception_msg: j.exception_msg,
                duedate: opt_from_text(j.duedate)?,
                repeat: j.repeat,
                retry_cycle: j.retry_cycle,
                handler_type: j.handler_type,
                handler_cfg: j.handler_cfg,
                customvalues_id: j.customvalues_id,
                create_time: from_text(&j.create_time)?,
                tenant_id: j.tenant_id.filter(|t| !t.is_empty()),
                id: j.id,
            })
        })
        .collect()
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
        settings: kairos_store::node_settings_from_columns(
            [
                get(row, "LOCK_TIME_MS_")?,
                get(row, "HEARTBEAT_MS_")?,
                get(row, "DEAD_AFTER_MS_")?,
                get(row, "LOOKAHEAD_MS_")?,
                get(row, "POLL_MS_")?,
            ],
            opt_text(row, "TIME_ZONE_")?,
        ),
    })
}

/// Reads a count column.
pub(crate) fn count(row: &SqliteRow, col: &'static str) -> Result<u64> {
    let v = get::<i64>(row, col)?;
    Ok(u64::try_from(v).unwrap_or(0))
}
