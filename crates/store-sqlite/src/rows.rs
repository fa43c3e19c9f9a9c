//! Rows of the job tables, the job log and the node table decoded into the core's types.
//!
//! Columns are read by name, so every statement may select `*` or a subset in any order.
//! TENANT_ID_ is stored as '' when absent (Activiti's default) and read back as `None`.

use crate::errors::{corrupt, db_err};
use crate::time::from_text;
use jiff::Timestamp;
use kairos_core::{Job, JobLogEntry, JobLogOutcome, JobTable, JobType, NodeInfo};
use kairos_store::{Error, ErrorKind, Result, Unreadable};
use serde::Deserialize;
use serde_json::Value as Json;
use serde_json::value::RawValue;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, TypeInfo, ValueRef};

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

/// One row of ACT_RU_JOB.
pub(crate) fn job(row: &SqliteRow) -> Result<Job> {
    job_of(JobTable::Runtime, row)
}

/// One row of a job table; a row that cannot be read is an [`ErrorKind::Unreadable`] error
/// naming its first bad column.
pub(crate) fn job_of(table: JobTable, row: &SqliteRow) -> Result<Job> {
    decode_job(row).map_err(|e| match unreadable_job(table, &row_values(row)) {
        Some(u) => Error::unreadable(u),
        None => e,
    })
}

fn decode_job(row: &SqliteRow) -> Result<Job> {
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

/// Jobs from the single JSON value of `sql/job_get_many_json.sql` (rows of ACT_RU_JOB), and the
/// rows among them that cannot be read. Each row is decoded on its own: one bad row never
/// hides the others.
pub(crate) fn jobs_from_json(text: &str) -> Result<(Vec<Job>, Vec<Unreadable>)> {
    let rows: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| corrupt(format!("job rows as JSON cannot be read: {e}")))?;
    let mut jobs = Vec::with_capacity(rows.len());
    let mut unreadable = Vec::new();
    for raw in rows {
        match serde_json::from_str::<JobJson>(raw.get()).ok().map(job_from_json) {
            Some(Ok(job)) => jobs.push(job),
            _ => {
                let values: Vec<Json> = serde_json::from_str(raw.get()).unwrap_or_default();
                match unreadable_job(JobTable::Runtime, &values) {
                    Some(u) => unreadable.push(u),
                    None => return Err(corrupt(format!("job row {} cannot be read", raw.get()))),
                }
            }
        }
    }
    Ok((jobs, unreadable))
}

fn job_from_json(j: JobJson) -> Result<Job> {
    let job_type = JobType::parse(&j.job_type)
        .ok_or_else(|| corrupt(format!("job {} has TYPE_ {:?}, which kairos does not know", j.id, j.job_type)))?;
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
}

/// Decodes every row as a job of ACT_RU_JOB.
pub(crate) fn jobs(rows: &[SqliteRow]) -> Result<Vec<Job>> {
    rows.iter().map(job).collect()
}

/// Decodes every row of `table` as a job; the rows that cannot be read come apart.
pub(crate) fn split_jobs(table: JobTable, rows: &[SqliteRow]) -> Result<(Vec<Job>, Vec<Unreadable>)> {
    let mut jobs = Vec::with_capacity(rows.len());
    let mut unreadable = Vec::new();
    for row in rows {
        match job_of(table, row) {
            Ok(j) => jobs.push(j),
            Err(Error { kind: ErrorKind::Unreadable, unreadable: Some(u), .. }) => unreadable.push(*u),
            Err(e) => return Err(e),
        }
    }
    Ok((jobs, unreadable))
}

/// The jobs of `table` that can be read (for the doctor's lists, which report unreadable rows
/// apart, see [`kairos_store::Store::job_unreadable`]).
pub(crate) fn readable_jobs(table: JobTable, rows: &[SqliteRow]) -> Result<Vec<Job>> {
    Ok(split_jobs(table, rows)?.0)
}

/// What a job column must hold.
#[derive(Debug, Clone, Copy)]
enum Want {
    Text,
    OptText,
    Int,
    Instant,
    OptInstant,
    Type,
}

/// The columns of a job table in table order: the order of `sql/job_get_many_json.sql`.
const JOB_COLUMNS: [(&str, Want); 28] = {
    use Want::*;
    [
        ("ID_", Text),
        ("REV_", Int),
        ("TYPE_", Type),
        ("LOCK_EXP_TIME_", OptInstant),
        ("LOCK_OWNER_", OptText),
        ("LOCK_TIME_", OptInstant),
        ("EXCLUSIVE_", Int),
        ("EXCLUSIVE_KEY_", OptText),
        ("EXECUTION_ID_", OptText),
        ("PROCESS_INSTANCE_ID_", OptText),
        ("PROC_DEF_ID_", OptText),
        ("ELEMENT_ID_", OptText),
        ("ELEMENT_NAME_", OptText),
        ("SCOPE_ID_", OptText),
        ("SCOPE_TYPE_", OptText),
        ("SCOPE_DEFINITION_ID_", OptText),
        ("RETRIES_", Int),
        ("ATTEMPTS_", Int),
        ("EXCEPTION_STACK_ID_", OptText),
        ("EXCEPTION_MSG_", OptText),
        ("DUEDATE_", OptInstant),
        ("REPEAT_", OptText),
        ("RETRY_CYCLE_", OptText),
        ("HANDLER_TYPE_", Text),
        ("HANDLER_CFG_", OptText),
        ("CUSTOMVALUES_ID_", OptText),
        ("CREATE_TIME_", Instant),
        ("TENANT_ID_", OptText),
    ]
};

/// Positions in [`JOB_COLUMNS`] of what a delete needs from a row it may not be able to read.
pub(crate) const LOCK_EXP_TIME: usize = 3;
pub(crate) const LOCK_OWNER: usize = 4;
pub(crate) const EXCEPTION_STACK_ID: usize = 18;
pub(crate) const CUSTOMVALUES_ID: usize = 25;

/// What is wrong with `v` as a value of a column that must hold `want`, if anything.
fn problem(want: Want, v: &Json) -> Option<&'static str> {
    use Want::*;
    match (want, v) {
        (OptText | OptInstant, Json::Null) => None,
        (_, Json::Null) => Some("is NULL where a value is required"),
        (Text | OptText, Json::String(_)) => None,
        (Text | OptText, _) => Some("is not text"),
        (Int, Json::Number(n)) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => None,
        (Int, _) => Some("is not a whole number (32 bits)"),
        (Instant | OptInstant, Json::String(s)) if from_text(s).is_ok() => None,
        (Instant | OptInstant, _) => Some("is not an instant (UTC, YYYY-MM-DD HH:MM:SS.SSS)"),
        (Type, Json::String(s)) if JobType::parse(s).is_some() => None,
        (Type, _) => Some("is not a job type kairos knows (message, timer, external-worker)"),
    }
}

/// A stored value as text, as an operator would see it in SQL (`None` for NULL).
pub(crate) fn raw_text(v: &Json) -> Option<String> {
    match v {
        Json::Null => None,
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The first column of a job row (its values in [`JOB_COLUMNS`] order) that cannot be read;
/// `None` when every column can.
fn unreadable_job(table: JobTable, values: &[Json]) -> Option<Unreadable> {
    let id = values.first().and_then(raw_text).unwrap_or_default();
    JOB_COLUMNS.iter().zip(values).find_map(|((column, want), v)| {
        problem(*want, v).map(|p| Unreadable::new(table.table_name(), id.clone(), *column, raw_text(v), p))
    })
}

/// A job row's values in [`JOB_COLUMNS`] order, each as the type SQLite actually holds.
pub(crate) fn row_values(row: &SqliteRow) -> Vec<Json> {
    JOB_COLUMNS.iter().map(|(column, _)| value(row, column)).collect()
}

fn value(row: &SqliteRow, column: &str) -> Json {
    let Ok(raw) = row.try_get_raw(column) else { return Json::Null };
    if raw.is_null() {
        return Json::Null;
    }
    let kind = raw.type_info().name().to_string();
    match kind.as_str() {
        "INTEGER" => row.try_get_unchecked::<i64, _>(column).map_or(Json::Null, Json::from),
        "REAL" => row.try_get_unchecked::<f64, _>(column).map_or(Json::Null, Json::from),
        "BLOB" => row.try_get_unchecked::<Vec<u8>, _>(column).map_or(Json::Null, |b| {
            Json::from(format!("x'{}'", b.iter().map(|x| format!("{x:02x}")).collect::<String>()))
        }),
        _ => row.try_get_unchecked::<String, _>(column).map_or(Json::Null, Json::from),
    }
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
