//! Firing: a trigger's trigger job (the `quartz-trigger` row in ACT_RU_JOB, due ahead of its
//! NEXT_FIRE_TIME), a firing's work job (`quartz-job`) and its QRTZ_FIRED_TRIGGERS row, and the
//! statements giving a trigger its trigger job back (resume, unblock).

use super::jobs::JobDetail;
use super::triggers::{TriggerKeyRow, key_rows};
use super::{TRIGGER_HANDLER, TriggerState, WORK_HANDLER, b, epoch_ms, i, placeholders, scope_type, t, ts_to_ms, w};
use crate::Rows;
use jiff::{SignedDuration, Timestamp};
use kairos_store::{Result, SqlValue, Store, Write};
use serde::Serialize;
use serde_json::json;

/// Attempts a trigger job gets: its work is a few statements, so a failure is the database
/// being away; it is tried again, and its last failure leaves a dead letter naming the trigger.
pub const TRIGGER_JOB_RETRIES: i64 = 5;

/// The columns and values of trigger `group.name`'s trigger job for fire time `fire` (its
/// NEXT_FIRE_TIME): due `ahead` of it (`SchedulerSettings::fire_ahead`), the fire time in its
/// configuration.
fn trigger_job_values(
    sched: &str,
    group: &str,
    name: &str,
    fire: Timestamp,
    now: Timestamp,
    ahead: SignedDuration,
) -> (&'static str, Vec<SqlValue>) {
    (
        "ID_, REV_, TYPE_, EXCLUSIVE_, RETRIES_, ATTEMPTS_, DUEDATE_, HANDLER_TYPE_, HANDLER_CFG_, SCOPE_ID_, SCOPE_TYPE_, \
         SCOPE_DEFINITION_ID_, CREATE_TIME_, TENANT_ID_",
        vec![
            t(&kairos_core::new_id()),
            i(1),
            t("timer"),
            b(false),
            i(TRIGGER_JOB_RETRIES),
            i(0),
            SqlValue::Timestamp(fire.checked_sub(ahead).unwrap_or(fire)),
            t(TRIGGER_HANDLER),
            t(&json!({"scheduler": sched, "group": group, "name": name, "fireTime": ts_to_ms(fire)}).to_string()),
            t(name),
            t(&scope_type(sched)),
            t(group),
            SqlValue::Timestamp(now),
            t(""),
        ],
    )
}

/// Inserts trigger `group.name`'s trigger job for fire time `fire`, due `ahead` of it, with the
/// trigger's priority: trigger jobs due at the same instant are acquired higher priority first,
/// so simultaneous firings happen (and their work jobs run) in Quartz's order.
pub fn trigger_job_insert(
    sched: &str,
    group: &str,
    name: &str,
    priority: i32,
    fire: Timestamp,
    now: Timestamp,
    ahead: SignedDuration,
) -> Write {
    let (cols, mut values) = trigger_job_values(sched, group, name, fire, now, ahead);
    values.push(i(priority.into()));
    Write::new(format!("INSERT INTO ACT_RU_JOB ({cols}, PRIORITY_) VALUES ({})", placeholders(values.len())), values)
}

/// Gives trigger `group.name` its trigger job back if it is still `from` (with NEXT_FIRE_TIME
/// `next`, epoch ms): the job for `next` (or now, if it has none, with the trigger's PRIORITY),
/// then the state `to`. Safe to run twice or concurrently: the job is inserted only while the
/// row is still `from`, before the state moves, in one transaction.
#[allow(clippy::too_many_arguments)]
pub fn trigger_wake(
    sched: &str,
    group: &str,
    name: &str,
    next: Option<i64>,
    now: Timestamp,
    ahead: SignedDuration,
    from: TriggerState,
    to: TriggerState,
) -> Vec<Write> {
    let fire = next.and_then(|ms| Timestamp::from_millisecond(ms).ok()).unwrap_or(now);
    let key = || vec![t(sched), t(name), t(group), t(from.as_str())];
    let (cols, values) = trigger_job_values(sched, group, name, fire, now, ahead);
    vec![
        Write::new(
            format!(
                "INSERT INTO ACT_RU_JOB ({cols}, PRIORITY_) SELECT {}, COALESCE(PRIORITY, {}) FROM QRTZ_TRIGGERS \
                 WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? AND TRIGGER_STATE = ?",
                placeholders(values.len()),
                kairos_schedule::DEFAULT_PRIORITY
            ),
            values.into_iter().chain(key()).collect(),
        ),
        w(
            "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = ? WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
             AND TRIGGER_STATE = ?",
            [vec![t(to.as_str())], key()].concat(),
        ),
    ]
}

/// One firing's work: the job detail's handler runs it at the fire time (its due date), with
/// the job engine's retries, dead letters and job log.
#[derive(Debug, Clone)]
pub struct WorkJob<'a> {
    /// ID_ of the work job, and ENTRY_ID of its QRTZ_FIRED_TRIGGERS row.
    pub id: &'a str,
    pub job: &'a JobDetail,
    /// EXCLUSIVE_KEY_ of a non-concurrent job's work.
    pub exclusive_key: Option<String>,
    pub trigger_group: &'a str,
    pub trigger_name: &'a str,
    /// The fire time: the work job's due date, the firing's SCHED_TIME.
    pub scheduled: Timestamp,
    /// When it fired (FIRED_TIME, CREATE_TIME_).
    pub now: Timestamp,
    pub priority: i32,
    /// HANDLER_CFG_: what the work handler needs (handler, job, trigger, merged data).
    pub config: String,
}

/// The work job, due at the fire time with the trigger's priority: firings due at the same
/// instant run higher priority first (Quartz: NEXT_FIRE_TIME, then PRIORITY DESC). It is its
/// job detail's tenant's.
pub fn work_job_insert(sched: &str, wj: &WorkJob<'_>) -> Write {
    w(
        "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, \
         DUEDATE_, HANDLER_TYPE_, HANDLER_CFG_, SCOPE_ID_, SCOPE_TYPE_, SCOPE_DEFINITION_ID_, CREATE_TIME_, TENANT_ID_, \
         PRIORITY_) VALUES (?, 1, 'message', ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            t(wj.id),
            b(!wj.job.concurrent),
            wj.exclusive_key.as_deref().map(t).unwrap_or(SqlValue::Null),
            t(&wj.job.name),
            t(&wj.job.group),
            i(wj.job.retries.into()),
            SqlValue::Timestamp(wj.scheduled),
            t(WORK_HANDLER),
            t(&wj.config),
            t(wj.trigger_name),
            t(&scope_type(sched)),
            t(wj.trigger_group),
            SqlValue::Timestamp(wj.now),
            t(&wj.job.tenant_id),
            i(wj.priority.into()),
        ],
    )
}

/// The firing's QRTZ_FIRED_TRIGGERS row, ACQUIRED by `node`, until its work succeeds.
pub fn fired_insert(sched: &str, wj: &WorkJob<'_>, node: &str) -> Write {
    w(
        "INSERT INTO QRTZ_FIRED_TRIGGERS (SCHED_NAME, ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_TIME, \
         SCHED_TIME, PRIORITY, STATE, JOB_NAME, JOB_GROUP, IS_NONCONCURRENT, REQUESTS_RECOVERY) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'ACQUIRED', ?, ?, ?, ?)",
        vec![
            t(sched),
            t(wj.id),
            t(wj.trigger_name),
            t(wj.trigger_group),
            t(node),
            i(ts_to_ms(wj.now)),
            i(ts_to_ms(wj.scheduled)),
            i(wj.priority.into()),
            t(&wj.job.name),
            t(&wj.job.group),
            b(!wj.job.concurrent),
            b(wj.job.requests_recovery),
        ],
    )
}

/// Deletes a firing's row (its work succeeded: staged with the work job's completion).
pub fn fired_delete(sched: &str, entry_id: &str) -> Write {
    w("DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND ENTRY_ID = ?", vec![t(sched), t(entry_id)])
}

/// Whether a firing of the job has not finished (its QRTZ_FIRED_TRIGGERS row is there).
pub async fn job_busy(store: &dyn Store, sched: &str, group: &str, name: &str) -> Result<bool> {
    let rows = store
        .read(
            "SELECT 1 FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
            &[t(sched), t(name), t(group)],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// The BLOCKED and PAUSED_BLOCKED triggers of a job (unblocked when its firing succeeds).
pub async fn triggers_blocked_of_job(
    store: &dyn Store,
    sched: &str,
    job_group: &str,
    job_name: &str,
) -> Result<Vec<TriggerKeyRow>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "NEXT_FIRE_TIME"],
        "SELECT TRIGGER_NAME, TRIGGER_GROUP, NEXT_FIRE_TIME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? \
         AND JOB_GROUP = ? AND TRIGGER_STATE IN ('BLOCKED', 'PAUSED_BLOCKED')",
        &[t(sched), t(job_name), t(job_group)],
    )
    .await?;
    key_rows(&rows)
}

/// A firing whose work has not finished (QRTZ_FIRED_TRIGGERS).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FiredTrigger {
    pub entry_id: String,
    pub trigger_name: String,
    pub trigger_group: String,
    pub job_name: Option<String>,
    pub job_group: Option<String>,
    /// The node that fired it (ACQUIRED) or runs it (EXECUTING).
    pub instance_name: String,
    pub fired_time: Timestamp,
    pub scheduled_time: Timestamp,
    pub priority: i32,
    pub state: String,
    pub nonconcurrent: bool,
    pub requests_recovery: bool,
}

/// QRTZ_FIRED_TRIGGERS with the state each firing is really in: the row is written ACQUIRED
/// with the firing and not rewritten when its work starts (that would cost a commit per
/// firing); the work job's lock says whether it runs (EXECUTING, on the locking node).
const FIRED_SELECT: &str = "SELECT f.ENTRY_ID, f.TRIGGER_NAME, f.TRIGGER_GROUP, f.JOB_NAME, f.JOB_GROUP, \
    COALESCE(j.LOCK_OWNER_, f.INSTANCE_NAME), f.FIRED_TIME, f.SCHED_TIME, f.PRIORITY, \
    CASE WHEN j.LOCK_OWNER_ IS NOT NULL THEN 'EXECUTING' ELSE f.STATE END, f.IS_NONCONCURRENT, f.REQUESTS_RECOVERY \
    FROM QRTZ_FIRED_TRIGGERS f LEFT JOIN ACT_RU_JOB j ON j.ID_ = f.ENTRY_ID WHERE f.SCHED_NAME = ?";

const FIRED_COLUMNS: &[&str] = &[
    "ENTRY_ID",
    "TRIGGER_NAME",
    "TRIGGER_GROUP",
    "JOB_NAME",
    "JOB_GROUP",
    "INSTANCE_NAME",
    "FIRED_TIME",
    "SCHED_TIME",
    "PRIORITY",
    "STATE",
    "IS_NONCONCURRENT",
    "REQUESTS_RECOVERY",
];

/// The firings whose work has not finished, oldest first (`order` is the ORDER BY: the API
/// lists by FIRED_TIME then ENTRY_ID, the doctor by FIRED_TIME).
async fn fired_read(store: &dyn Store, sched: &str, order: &str) -> Result<Vec<FiredTrigger>> {
    let rows = Rows::read(
        store,
        "QRTZ_FIRED_TRIGGERS",
        FIRED_COLUMNS,
        &format!("{FIRED_SELECT} ORDER BY {order}"),
        &[t(sched)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(FiredTrigger {
                entry_id: r.text("ENTRY_ID")?,
                trigger_name: r.text("TRIGGER_NAME")?,
                trigger_group: r.text("TRIGGER_GROUP")?,
                job_name: r.opt_text("JOB_NAME")?,
                job_group: r.opt_text("JOB_GROUP")?,
                instance_name: r.text("INSTANCE_NAME")?,
                fired_time: epoch_ms(&r, "FIRED_TIME")?,
                scheduled_time: epoch_ms(&r, "SCHED_TIME")?,
                priority: super::jobs::int32(&r, "PRIORITY")?,
                state: r.text("STATE")?,
                nonconcurrent: r.opt_flag("IS_NONCONCURRENT")?.unwrap_or(false),
                requests_recovery: r.opt_flag("REQUESTS_RECOVERY")?.unwrap_or(false),
            })
        })
        .collect()
}

/// QRTZ_FIRED_TRIGGERS: firings whose work has not finished, by FIRED_TIME and ENTRY_ID.
pub async fn fired_list(store: &dyn Store, sched: &str) -> Result<Vec<FiredTrigger>> {
    fired_read(store, sched, "f.FIRED_TIME, f.ENTRY_ID").await
}

/// The same, by FIRED_TIME only (the doctor's order, seed 004 §5.3).
pub async fn fired_by_time(store: &dyn Store, sched: &str) -> Result<Vec<FiredTrigger>> {
    fired_read(store, sched, "f.FIRED_TIME").await
}
