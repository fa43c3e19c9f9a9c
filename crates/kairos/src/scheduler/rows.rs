//! The QRTZ_* rows ↔ values, and the scheduler's statements. One statement text serves both
//! backends (`?` placeholders, BIGINT epoch ms, booleans bound as such).

use super::{SchedulerError, b, i, t, w};
use crate::Error;
use jiff::Timestamp;
use kairos_store::{SqlValue, Store, Write};
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// A job detail as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobView {
    pub name: String,
    pub group: String,
    pub handler: String,
    pub description: Option<String>,
    pub durable: bool,
    pub requests_recovery: bool,
    pub concurrent: bool,
    pub data: Map<String, Json>,
    pub retries: i32,
}

/// A firing whose work has not finished (QRTZ_FIRED_TRIGGERS).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FiredTriggerView {
    pub entry_id: String,
    pub trigger_name: String,
    pub trigger_group: String,
    pub job_name: Option<String>,
    pub job_group: Option<String>,
    /// The node that fired it (ACQUIRED) or runs it (EXECUTING).
    pub instance_name: String,
    pub fired_time: jiff::Timestamp,
    pub scheduled_time: jiff::Timestamp,
    pub priority: i32,
    pub state: String,
    pub nonconcurrent: bool,
    pub requests_recovery: bool,
}

/// A node's check-in (QRTZ_SCHEDULER_STATE).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerNodeView {
    pub instance_name: String,
    pub last_checkin_time: jiff::Timestamp,
    pub checkin_interval_ms: i64,
}

pub(crate) fn ms_to_ts(ms: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

pub(crate) fn ts_to_ms(t: jiff::Timestamp) -> i64 {
    t.as_millisecond()
}

fn text(v: &SqlValue) -> String {
    match v {
        SqlValue::Text(s) => s.clone(),
        SqlValue::Null => String::new(),
        other => other.as_i64().map(|n| n.to_string()).unwrap_or_default(),
    }
}

fn opt_text(v: &SqlValue) -> Option<String> {
    match v {
        SqlValue::Null => None,
        other => Some(text(other)),
    }
}

fn int(v: &SqlValue) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn boolean(v: &SqlValue) -> bool {
    v.as_bool().unwrap_or(false)
}

const JOB_COLS: &str = "JOB_NAME, JOB_GROUP, JOB_CLASS_NAME, DESCRIPTION, IS_DURABLE, REQUESTS_RECOVERY, IS_NONCONCURRENT, JOB_DATA, RETRIES";

/// [`JOB_COLS`] of the job details table aliased `jd`, for joins.
pub(crate) const JD_COLS: &str = "jd.JOB_NAME, jd.JOB_GROUP, jd.JOB_CLASS_NAME, jd.DESCRIPTION, jd.IS_DURABLE, \
    jd.REQUESTS_RECOVERY, jd.IS_NONCONCURRENT, jd.JOB_DATA, jd.RETRIES";

/// A job detail from [`JOB_COLS`] (or [`JD_COLS`]) at the start of `r`; None for a join that
/// found no job.
pub(crate) fn job_at(r: &[SqlValue]) -> Option<JobView> {
    (!matches!(r.first(), None | Some(SqlValue::Null))).then(|| job_of(r))
}

fn job_of(r: &[SqlValue]) -> JobView {
    let data = opt_text(&r[7])
        .and_then(|s| serde_json::from_str::<Json>(&s).ok())
        .and_then(|j| match j {
            Json::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    JobView {
        name: text(&r[0]),
        group: text(&r[1]),
        handler: text(&r[2]),
        description: opt_text(&r[3]),
        durable: boolean(&r[4]),
        requests_recovery: boolean(&r[5]),
        concurrent: !boolean(&r[6]),
        data,
        retries: int(&r[8]) as i32,
    }
}

pub(crate) async fn job_exists(store: &dyn Store, sched: &str, name: &str, group: &str) -> Result<bool, Error> {
    let rows = store
        .read(
            "SELECT 1 FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
            &[t(sched), t(name), t(group)],
        )
        .await?;
    Ok(!rows.is_empty())
}

pub(crate) fn job_upsert(sched: &str, j: &JobView, data: Option<String>, exists: bool) -> Write {
    let data = data.map(SqlValue::Text).unwrap_or(SqlValue::Null);
    if exists {
        w(
            "UPDATE QRTZ_JOB_DETAILS SET JOB_CLASS_NAME = ?, DESCRIPTION = ?, IS_DURABLE = ?, REQUESTS_RECOVERY = ?, \
             IS_NONCONCURRENT = ?, JOB_DATA = ?, RETRIES = ? WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
            vec![
                t(&j.handler),
                super::ot(&j.description),
                b(j.durable),
                b(j.requests_recovery),
                b(!j.concurrent),
                data,
                i(j.retries.into()),
                t(sched),
                t(&j.name),
                t(&j.group),
            ],
        )
    } else {
        w(
            "INSERT INTO QRTZ_JOB_DETAILS (SCHED_NAME, JOB_NAME, JOB_GROUP, DESCRIPTION, JOB_CLASS_NAME, IS_DURABLE, \
             IS_NONCONCURRENT, IS_UPDATE_DATA, REQUESTS_RECOVERY, JOB_DATA, RETRIES) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                t(sched),
                t(&j.name),
                t(&j.group),
                super::ot(&j.description),
                t(&j.handler),
                b(j.durable),
                b(!j.concurrent),
                b(false),
                b(j.requests_recovery),
                data,
                i(j.retries.into()),
            ],
        )
    }
}

pub(crate) async fn job_get(store: &dyn Store, sched: &str, group: &str, name: &str) -> Result<Option<JobView>, Error> {
    let rows = store
        .read(
            &format!("SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?"),
            &[t(sched), t(name), t(group)],
        )
        .await?;
    Ok(rows.first().map(|r| job_of(r)))
}

pub(crate) async fn job_list(store: &dyn Store, sched: &str, group: Option<&str>) -> Result<Vec<JobView>, Error> {
    let rows = match group {
        Some(g) => {
            store
                .read(
                    &format!(
                        "SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_GROUP = ? ORDER BY JOB_GROUP, JOB_NAME"
                    ),
                    &[t(sched), t(g)],
                )
                .await?
        }
        None => {
            store
                .read(
                    &format!("SELECT {JOB_COLS} FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? ORDER BY JOB_GROUP, JOB_NAME"),
                    &[t(sched)],
                )
                .await?
        }
    };
    Ok(rows.iter().map(|r| job_of(r)).collect())
}

pub(crate) fn job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
        vec![t(sched), t(name), t(group)],
    )
}

/// SCOPE_TYPE_ of a scheduler's jobs in ACT_RU_JOB: which scheduler they belong to
/// (SCOPE_ID_ = trigger name, SCOPE_DEFINITION_ID_ = trigger group).
pub(crate) fn scope_type(sched: &str) -> String {
    format!("quartz:{sched}")
}

/// The statements deleting one trigger's rows, its trigger job and its firings committed ahead
/// of their time that have not started (not the work of firings under way); the last one
/// deletes the trigger row.
pub(crate) fn trigger_delete(sched: &str, group: &str, name: &str, now: Timestamp) -> Vec<Write> {
    let key = || vec![t(sched), t(name), t(group)];
    let mut out = early_firings_cancel(
        sched,
        "TRIGGER_GROUP = ? AND TRIGGER_NAME = ?",
        "SCOPE_DEFINITION_ID_ = ? AND SCOPE_ID_ = ?",
        &[t(group), t(name)],
        now,
    );
    out.extend(
        ["QRTZ_SIMPLE_TRIGGERS", "QRTZ_CRON_TRIGGERS", "QRTZ_SIMPROP_TRIGGERS", "QRTZ_BLOB_TRIGGERS"].iter().map(
            |table| {
                w(
                    &format!("DELETE FROM {table} WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?"),
                    key(),
                )
            },
        ),
    );
    out.push(trigger_job_delete(sched, group, name));
    out.push(w("DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?", key()));
    out
}

/// Cancels firings committed ahead of their fire time (`SchedulerSettings::fire_ahead`) that no
/// node has started: their work jobs (due after `now`, never acquired), then the
/// QRTZ_FIRED_TRIGGERS rows left without a work job. `fired_filter` selects the triggers by
/// QRTZ_FIRED_TRIGGERS' columns, `job_filter` the same triggers by ACT_RU_JOB's scope columns;
/// `binds` serve both.
pub(crate) fn early_firings_cancel(
    sched: &str,
    fired_filter: &str,
    job_filter: &str,
    binds: &[SqlValue],
    now: Timestamp,
) -> Vec<Write> {
    vec![
        w(
            &format!(
                "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND {job_filter} \
                 AND LOCK_OWNER_ IS NULL AND ATTEMPTS_ = 0 AND DUEDATE_ > ?"
            ),
            [vec![t(&scope_type(sched)), t(super::WORK_HANDLER)], binds.to_vec(), vec![SqlValue::Timestamp(now)]]
                .concat(),
        ),
        w(
            &format!(
                "DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND {fired_filter} AND NOT EXISTS \
                 (SELECT 1 FROM ACT_RU_JOB j WHERE j.ID_ = QRTZ_FIRED_TRIGGERS.ENTRY_ID)"
            ),
            [vec![t(sched)], binds.to_vec()].concat(),
        ),
    ]
}

/// Deletes a trigger's trigger job, if it has one.
pub(crate) fn trigger_job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM ACT_RU_JOB WHERE SCOPE_ID_ = ? AND SCOPE_TYPE_ = ? AND SCOPE_DEFINITION_ID_ = ? AND HANDLER_TYPE_ = ?",
        vec![t(name), t(&scope_type(sched)), t(group), t(super::TRIGGER_HANDLER)],
    )
}

/// Deletes a job detail that is not durable and that no trigger points at any more (Quartz
/// deletes such a job with its last trigger).
pub(crate) fn orphan_job_delete(sched: &str, group: &str, name: &str) -> Write {
    w(
        "DELETE FROM QRTZ_JOB_DETAILS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ? AND IS_DURABLE = ? \
         AND NOT EXISTS (SELECT 1 FROM QRTZ_TRIGGERS t WHERE t.SCHED_NAME = ? AND t.JOB_NAME = ? AND t.JOB_GROUP = ?)",
        vec![t(sched), t(name), t(group), b(false), t(sched), t(name), t(group)],
    )
}

/// The statements deleting every trigger of a job (by subquery, so no read is needed first).
pub(crate) fn triggers_of_job_delete(sched: &str, group: &str, name: &str) -> Vec<Write> {
    let key = || vec![t(sched), t(sched), t(name), t(group)];
    let mut out: Vec<Write> = ["QRTZ_SIMPLE_TRIGGERS", "QRTZ_CRON_TRIGGERS", "QRTZ_SIMPROP_TRIGGERS", "QRTZ_BLOB_TRIGGERS"]
        .iter()
        .map(|table| {
            w(
                &format!(
                    "DELETE FROM {table} WHERE SCHED_NAME = ? AND (TRIGGER_NAME, TRIGGER_GROUP) IN \
                     (SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?)"
                ),
                key(),
            )
        })
        .collect();
    out.push(w(
        "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND (SCOPE_ID_, SCOPE_DEFINITION_ID_) IN \
         (SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?)",
        vec![t(&scope_type(sched)), t(super::TRIGGER_HANDLER), t(sched), t(name), t(group)],
    ));
    out.push(w(
        "DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
        vec![t(sched), t(name), t(group)],
    ));
    out
}

/// QRTZ_FIRED_TRIGGERS with the state each firing is really in: the row is written ACQUIRED
/// with the firing and not rewritten when its work starts (that would cost a commit per
/// firing); the work job's lock says whether it runs (EXECUTING, on the locking node).
pub(crate) const FIRED_SELECT: &str = "SELECT f.ENTRY_ID, f.TRIGGER_NAME, f.TRIGGER_GROUP, f.JOB_NAME, f.JOB_GROUP, \
    COALESCE(j.LOCK_OWNER_, f.INSTANCE_NAME), f.FIRED_TIME, f.SCHED_TIME, f.PRIORITY, \
    CASE WHEN j.LOCK_OWNER_ IS NOT NULL THEN 'EXECUTING' ELSE f.STATE END, f.IS_NONCONCURRENT, f.REQUESTS_RECOVERY \
    FROM QRTZ_FIRED_TRIGGERS f LEFT JOIN ACT_RU_JOB j ON j.ID_ = f.ENTRY_ID WHERE f.SCHED_NAME = ?";

pub(crate) async fn fired_list(store: &dyn Store, sched: &str) -> Result<Vec<FiredTriggerView>, Error> {
    let rows = store.read(&format!("{FIRED_SELECT} ORDER BY f.FIRED_TIME, f.ENTRY_ID"), &[t(sched)]).await?;
    Ok(rows
        .iter()
        .map(|r| FiredTriggerView {
            entry_id: text(&r[0]),
            trigger_name: text(&r[1]),
            trigger_group: text(&r[2]),
            job_name: opt_text(&r[3]),
            job_group: opt_text(&r[4]),
            instance_name: text(&r[5]),
            fired_time: ms_to_ts(int(&r[6])),
            scheduled_time: ms_to_ts(int(&r[7])),
            priority: int(&r[8]) as i32,
            state: text(&r[9]),
            nonconcurrent: boolean(&r[10]),
            requests_recovery: boolean(&r[11]),
        })
        .collect())
}

pub(crate) async fn checkin_list(store: &dyn Store, sched: &str) -> Result<Vec<SchedulerNodeView>, Error> {
    let rows = store
        .read(
            "SELECT INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? \
             ORDER BY LAST_CHECKIN_TIME DESC, INSTANCE_NAME",
            &[t(sched)],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| SchedulerNodeView {
            instance_name: text(&r[0]),
            last_checkin_time: ms_to_ts(int(&r[1])),
            checkin_interval_ms: int(&r[2]),
        })
        .collect())
}

/// Whether `group` is in QRTZ_PAUSED_TRIGGER_GRPS.
pub(crate) async fn group_paused(store: &dyn Store, sched: &str, group: &str) -> Result<bool, Error> {
    let rows = store
        .read(
            "SELECT 1 FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? AND TRIGGER_GROUP = ?",
            &[t(sched), t(group)],
        )
        .await?;
    Ok(!rows.is_empty())
}

pub(crate) fn not_found(what: String) -> Error {
    SchedulerError::NotFound(what).into()
}
