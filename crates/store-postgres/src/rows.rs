//! Rows to core types, and instants to the TIMESTAMP(3) columns.
//!
//! Columns are read by name (PostgreSQL folds the unquoted ACT_* names to lower case), so a
//! statement may return `j.*` plus extra columns of its own without positional bookkeeping.

use crate::error::db;
use jiff::{RoundMode, Timestamp, TimestampRound, Unit};
use jiff_sqlx::ToSqlx;
use kairos_core::{Job, JobLogEntry, JobLogOutcome, JobTable, JobType, NodeInfo};
use kairos_store::{Error, ErrorKind, Result, Unreadable};
use sqlx::postgres::{PgRow, PgValueFormat};
use sqlx::{Row, ValueRef};

/// `t` cut to whole milliseconds (towards the past). Every instant we bind goes through here:
/// the columns keep milliseconds, and cutting instead of rounding keeps an estimate of the
/// database clock from ever landing after the reading that follows it.
pub(crate) fn ms(t: Timestamp) -> Timestamp {
    t.round(TimestampRound::new().smallest(Unit::Millisecond).mode(RoundMode::Floor)).unwrap_or(t)
}

/// An instant ready to bind.
pub(crate) fn bind_ts(t: Timestamp) -> jiff_sqlx::Timestamp {
    ms(t).to_sqlx()
}

pub(crate) fn opt_ts(t: Option<Timestamp>) -> Option<jiff_sqlx::Timestamp> {
    t.map(bind_ts)
}

fn ts(row: &PgRow, col: &str) -> Result<Option<Timestamp>> {
    Ok(row.try_get::<Option<jiff_sqlx::Timestamp>, _>(col).map_err(db)?.map(|t| t.to_jiff()))
}

fn req_ts(row: &PgRow, col: &str) -> Result<Timestamp> {
    ts(row, col)?.ok_or_else(|| Error::new(ErrorKind::Other, format!("{col} is null")))
}

pub(crate) fn get<'r, T>(row: &'r PgRow, col: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    row.try_get(col).map_err(db)
}

/// The database's instant in column `col` (e.g. `db_now_`).
pub(crate) fn instant(row: &PgRow, col: &str) -> Result<Timestamp> {
    req_ts(row, col)
}

/// TENANT_ID_ is stored as '' when absent (Activiti's default); callers see `None`.
fn tenant(row: &PgRow) -> Result<Option<String>> {
    Ok(get::<Option<String>>(row, "tenant_id_")?.filter(|t| !t.is_empty()))
}

fn job_type(row: &PgRow) -> Result<JobType> {
    let raw: String = get(row, "type_")?;
    JobType::parse(&raw).ok_or_else(|| {
        let id: String = get(row, "id_").unwrap_or_default();
        Error::new(ErrorKind::Other, format!("job {id} has TYPE_ '{raw}', which kairos does not know"))
    })
}

/// A row of ACT_RU_JOB.
pub(crate) fn job(row: &PgRow) -> Result<Job> {
    job_of(JobTable::Runtime, row)
}

/// Why a column of a job row cannot be read: the column, its stored text, the problem.
type Bad = (&'static str, Option<String>, &'static str);

/// An instant column of a job row; one PostgreSQL holds but kairos cannot represent
/// (`infinity`, years beyond ±9999) is [`Bad`].
fn job_ts(row: &PgRow, col: &'static str) -> std::result::Result<Option<Timestamp>, Bad> {
    row.try_get::<Option<jiff_sqlx::Timestamp>, _>(col)
        .map(|t| t.map(|t| t.to_jiff()))
        .map_err(|_| (col, raw_instant(row, col), "is not an instant kairos can represent (years -9999..=9999)"))
}

/// The stored text of an instant column jiff cannot hold.
fn raw_instant(row: &PgRow, col: &str) -> Option<String> {
    let raw = row.try_get_raw(col).ok()?;
    if raw.is_null() {
        return None;
    }
    match raw.format() {
        PgValueFormat::Text => raw.as_str().ok().map(str::to_string),
        PgValueFormat::Binary => {
            let micros = i64::from_be_bytes(raw.as_bytes().ok()?.try_into().ok()?);
            Some(match micros {
                i64::MAX => "infinity".to_string(),
                i64::MIN => "-infinity".to_string(),
                m => format!("{m} microseconds after 2000-01-01 00:00:00 UTC"),
            })
        }
    }
}

/// A row of ACT_RU_JOB, ACT_RU_DEADLETTER_JOB or ACT_RU_SUSPENDED_JOB (`table`); one that
/// cannot be read is an [`ErrorKind::Unreadable`] error naming the column.
pub(crate) fn job_of(table: JobTable, row: &PgRow) -> Result<Job> {
    let id: String = get(row, "id_")?;
    decode_job(row, id.clone())?.map_err(|(column, raw, problem)| {
        Error::unreadable(Unreadable::new(table.table_name(), id, column.to_uppercase(), raw, problem))
    })
}

fn decode_job(row: &PgRow, id: String) -> Result<std::result::Result<Job, Bad>> {
    let raw_type: String = get(row, "type_")?;
    let Some(job_type) = JobType::parse(&raw_type) else {
        return Ok(Err(("type_", Some(raw_type), "is not a job type kairos knows (message, timer, external-worker)")));
    };
    let instants = (|| {
        let create_time =
            job_ts(row, "create_time_")?.ok_or(("create_time_", None, "is NULL where a value is required"))?;
        Ok((job_ts(row, "lock_exp_time_")?, job_ts(row, "lock_time_")?, job_ts(row, "duedate_")?, create_time))
    })();
    let (lock_exp_time, lock_time, duedate, create_time) = match instants {
        Ok(t) => t,
        Err(bad) => return Ok(Err(bad)),
    };
    Ok(Ok(Job {
        id,
        rev: get(row, "rev_")?,
        job_type,
        lock_owner: get(row, "lock_owner_")?,
        lock_exp_time,
        lock_time,
        exclusive: get(row, "exclusive_")?,
        exclusive_key: get(row, "exclusive_key_")?,
        execution_id: get(row, "execution_id_")?,
        process_instance_id: get(row, "process_instance_id_")?,
        proc_def_id: get(row, "proc_def_id_")?,
        element_id: get(row, "element_id_")?,
        element_name: get(row, "element_name_")?,
        scope_id: get(row, "scope_id_")?,
        scope_type: get(row, "scope_type_")?,
        scope_definition_id: get(row, "scope_definition_id_")?,
        retries: get(row, "retries_")?,
        attempts: get(row, "attempts_")?,
        exception_stack_id: get(row, "exception_stack_id_")?,
        exception_msg: get(row, "exception_msg_")?,
        duedate,
        repeat: get(row, "repeat_")?,
        retry_cycle: get(row, "retry_cycle_")?,
        handler_type: get(row, "handler_type_")?,
        handler_cfg: get(row, "handler_cfg_")?,
        customvalues_id: get(row, "customvalues_id_")?,
        create_time,
        tenant_id: tenant(row)?,
    }))
}

/// Every row of `table` as a job; the rows that cannot be read come apart.
pub(crate) fn split_jobs(table: JobTable, rows: &[PgRow]) -> Result<(Vec<Job>, Vec<Unreadable>)> {
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

/// A row of ACT_HI_JOB_LOG.
pub(crate) fn job_log(row: &PgRow) -> Result<JobLogEntry> {
    let outcome: String = get(row, "outcome_")?;
    Ok(JobLogEntry {
        id: get(row, "id_")?,
        job_id: get(row, "job_id_")?,
        attempt: get(row, "attempt_")?,
        node: get(row, "node_id_")?,
        start: ts(row, "start_time_")?,
        end: ts(row, "end_time_")?,
        outcome: JobLogOutcome::parse(&outcome).ok_or_else(|| {
            Error::new(ErrorKind::Other, format!("ACT_HI_JOB_LOG has OUTCOME_ '{outcome}', which kairos does not know"))
        })?,
        message: get(row, "message_")?,
        handler_type: get(row, "handler_type_")?,
        job_type: job_type(row)?,
        process_instance_id: get(row, "process_instance_id_")?,
        element_id: get(row, "element_id_")?,
        exclusive_key: get(row, "exclusive_key_")?,
        duedate: ts(row, "duedate_")?,
        tenant_id: tenant(row)?,
    })
}

/// A row of KAIROS_NODE.
pub(crate) fn node(row: &PgRow) -> Result<NodeInfo> {
    Ok(NodeInfo {
        id: get(row, "id_")?,
        host: get(row, "host_")?,
        pid: get(row, "pid_")?,
        workers: get(row, "workers_")?,
        started: req_ts(row, "started_")?,
        heartbeat: req_ts(row, "heartbeat_")?,
        state: get(row, "state_")?,
        settings: kairos_store::node_settings_from_columns(
            [
                get(row, "lock_time_ms_")?,
                get(row, "heartbeat_ms_")?,
                get(row, "dead_after_ms_")?,
                get(row, "lookahead_ms_")?,
                get(row, "poll_ms_")?,
            ],
            get(row, "time_zone_")?,
        ),
    })
}

/// A count column (`count(*)` is bigint) as the seam's `u64`.
pub(crate) fn count(row: &PgRow, col: &str) -> Result<u64> {
    Ok(u64::try_from(get::<i64>(row, col)?).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_cut_to_milliseconds_towards_the_past() {
        let t: Timestamp = "2026-01-01T00:00:00.123999Z".parse().unwrap();
        assert_eq!(ms(t), "2026-01-01T00:00:00.123Z".parse().unwrap());
        let t: Timestamp = "1969-12-31T23:59:59.9995Z".parse().unwrap();
        assert_eq!(ms(t), "1969-12-31T23:59:59.999Z".parse().unwrap());
    }
}
