//! Reading triggers: QRTZ_TRIGGERS with its type tables (Quartz's own column mapping, its JDBC
//! delegates': QRTZ_SIMPLE_TRIGGERS, QRTZ_CRON_TRIGGERS, or QRTZ_SIMPROP_TRIGGERS for
//! calendar-interval and daily-time-interval triggers) into a [`kairos_schedule::Trigger`],
//! and QRTZ_PAUSED_TRIGGER_GRPS.
//!
//! A trigger row that cannot be read — written by hand or by another tool — is set aside: each
//! read answers it as an [`Unreadable`] naming the trigger (`group.name`), the column and its
//! stored text, so the lists skip it and the firing path puts it in ERROR, and the other
//! triggers go on.

use super::jobs::{JD_COLS, JOB_COLUMNS, JobDetail, data_of, int32, job_of};
use super::{TriggerState, epoch_ms, t};
use crate::{Row, Rows};
use kairos_schedule::{
    CalendarIntervalSchedule, CronSchedule, DailyTimeIntervalSchedule, DaysOfWeek, IntervalUnit, JobKey,
    MisfireInstruction, Schedule, SimpleSchedule, TimeOfDay, Trigger, TriggerKey, TriggerKind, Zone,
};
use kairos_store::{Error, Result, SqlValue, Store, Unreadable};
use serde_json::{Map, Value as Json};

/// The columns read to rebuild a trigger: QRTZ_TRIGGERS and every type table, joined.
pub const TRIGGER_SELECT: &str = "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.JOB_NAME, tr.JOB_GROUP, \
    tr.DESCRIPTION, tr.NEXT_FIRE_TIME, tr.PREV_FIRE_TIME, tr.PRIORITY, tr.TRIGGER_STATE, tr.TRIGGER_TYPE, tr.START_TIME, \
    tr.END_TIME, tr.CALENDAR_NAME, tr.MISFIRE_INSTR, tr.JOB_DATA, \
    st.REPEAT_COUNT, st.REPEAT_INTERVAL, st.TIMES_TRIGGERED, \
    ct.CRON_EXPRESSION, ct.TIME_ZONE_ID, \
    sp.STR_PROP_1, sp.STR_PROP_2, sp.STR_PROP_3, sp.INT_PROP_1, sp.INT_PROP_2, sp.LONG_PROP_1, sp.BOOL_PROP_1, \
    sp.BOOL_PROP_2, sp.TIME_ZONE_ID \
    FROM QRTZ_TRIGGERS tr \
    LEFT JOIN QRTZ_SIMPLE_TRIGGERS st ON st.SCHED_NAME = tr.SCHED_NAME AND st.TRIGGER_NAME = tr.TRIGGER_NAME AND st.TRIGGER_GROUP = tr.TRIGGER_GROUP \
    LEFT JOIN QRTZ_CRON_TRIGGERS ct ON ct.SCHED_NAME = tr.SCHED_NAME AND ct.TRIGGER_NAME = tr.TRIGGER_NAME AND ct.TRIGGER_GROUP = tr.TRIGGER_GROUP \
    LEFT JOIN QRTZ_SIMPROP_TRIGGERS sp ON sp.SCHED_NAME = tr.SCHED_NAME AND sp.TRIGGER_NAME = tr.TRIGGER_NAME AND sp.TRIGGER_GROUP = tr.TRIGGER_GROUP";

/// The names of [`TRIGGER_SELECT`]'s columns, in its order (the two TIME_ZONE_IDs told apart).
pub const TRIGGER_COLUMNS: &[&str] = &[
    "TRIGGER_NAME",
    "TRIGGER_GROUP",
    "JOB_NAME",
    "JOB_GROUP",
    "DESCRIPTION",
    "NEXT_FIRE_TIME",
    "PREV_FIRE_TIME",
    "PRIORITY",
    "TRIGGER_STATE",
    "TRIGGER_TYPE",
    "START_TIME",
    "END_TIME",
    "CALENDAR_NAME",
    "MISFIRE_INSTR",
    "JOB_DATA",
    "REPEAT_COUNT",
    "REPEAT_INTERVAL",
    "TIMES_TRIGGERED",
    "CRON_EXPRESSION",
    "TIME_ZONE_ID",
    "STR_PROP_1",
    "STR_PROP_2",
    "STR_PROP_3",
    "INT_PROP_1",
    "INT_PROP_2",
    "LONG_PROP_1",
    "BOOL_PROP_1",
    "BOOL_PROP_2",
    "QRTZ_SIMPROP_TRIGGERS.TIME_ZONE_ID",
];

/// A stored trigger: the model, its state and its own data.
#[derive(Debug, Clone)]
pub struct StoredTrigger {
    pub trigger: Trigger,
    pub state: TriggerState,
    pub data: Map<String, Json>,
}

/// A trigger row read: the trigger, or why it cannot be used.
pub type TriggerRead = std::result::Result<StoredTrigger, Unreadable>;

/// The error of a column as the trigger's [`Unreadable`], named `group.name`.
fn set_aside(e: Error, id: &str) -> Unreadable {
    match e.unreadable {
        Some(mut u) => {
            u.id = id.to_string();
            *u
        }
        None => Unreadable::new("QRTZ_TRIGGERS", id, "?", None, e.message),
    }
}

/// Rebuilds a trigger from a row of [`TRIGGER_COLUMNS`]. An error names the column that is
/// wrong; the caller sets the trigger aside, never panics.
pub fn trigger_of(r: &Row<'_>) -> TriggerRead {
    let id = format!("{}.{}", r.opt_text("TRIGGER_GROUP").ok().flatten().unwrap_or_default(), r.id());
    decode(r).map_err(|e| set_aside(e, &id))
}

fn decode(r: &Row<'_>) -> Result<StoredTrigger> {
    let name = r.text("TRIGGER_NAME")?;
    let group = r.text("TRIGGER_GROUP")?;
    let next = r.opt_int("NEXT_FIRE_TIME")?.map(|_| epoch_ms(r, "NEXT_FIRE_TIME")).transpose()?;
    let prev = match r.opt_int("PREV_FIRE_TIME")? {
        Some(ms) if ms >= 0 => Some(epoch_ms(r, "PREV_FIRE_TIME")?),
        _ => None,
    };
    let start = epoch_ms(r, "START_TIME")?;
    let end = r.opt_int("END_TIME")?.map(|_| epoch_ms(r, "END_TIME")).transpose()?;
    let kind_text = r.text("TRIGGER_TYPE")?;
    let kind = TriggerKind::from_quartz_type(&kind_text)
        .ok_or_else(|| r.unreadable("TRIGGER_TYPE", "is not one kairos runs (SIMPLE, CRON, CAL_INT, DAILY_I)"))?;
    let missing = |table: &str| r.unreadable("TRIGGER_TYPE", &format!("has no {table} row"));
    let schedule = match kind {
        TriggerKind::Simple => {
            if r.value("REPEAT_COUNT")?.is_null() {
                return Err(missing("QRTZ_SIMPLE_TRIGGERS"));
            }
            Schedule::Simple(SimpleSchedule {
                repeat_count: int32(r, "REPEAT_COUNT")?,
                interval_ms: r.int("REPEAT_INTERVAL")?,
                times_triggered: int32(r, "TIMES_TRIGGERED")?,
            })
        }
        TriggerKind::Cron => {
            let text = r.opt_text("CRON_EXPRESSION")?.ok_or_else(|| missing("QRTZ_CRON_TRIGGERS"))?;
            let expression = kairos_cron::CronExpr::parse(&text)
                .map_err(|e| r.unreadable("CRON_EXPRESSION", &format!("does not parse: {e}")))?;
            let time_zone = r.opt_text("TIME_ZONE_ID")?.map(Zone::new).unwrap_or_else(Zone::utc);
            Schedule::Cron(CronSchedule { expression, time_zone })
        }
        TriggerKind::CalendarInterval => {
            if r.value("INT_PROP_1")?.is_null() {
                return Err(missing("QRTZ_SIMPROP_TRIGGERS"));
            }
            let zone = r.opt_text("STR_PROP_2")?.map(Zone::new).unwrap_or_else(Zone::utc);
            let mut c = CalendarIntervalSchedule::new(int32(r, "INT_PROP_1")?, unit(r)?, zone);
            c.times_triggered = opt_int32(r, "INT_PROP_2")?.unwrap_or(0);
            c.preserve_hour_of_day_across_dst = r.opt_flag("BOOL_PROP_1")?.unwrap_or(false);
            c.skip_day_if_hour_does_not_exist = r.opt_flag("BOOL_PROP_2")?.unwrap_or(false);
            Schedule::CalendarInterval(c)
        }
        TriggerKind::DailyTimeInterval => {
            if r.value("INT_PROP_1")?.is_null() {
                return Err(missing("QRTZ_SIMPROP_TRIGGERS"));
            }
            let zone = r.opt_text("QRTZ_SIMPROP_TRIGGERS.TIME_ZONE_ID")?.map(Zone::new).unwrap_or_else(Zone::utc);
            let mut d = DailyTimeIntervalSchedule::new(int32(r, "INT_PROP_1")?, unit(r)?, zone);
            d.times_triggered = opt_int32(r, "INT_PROP_2")?.unwrap_or(0);
            d.repeat_count = opt_int32(r, "LONG_PROP_1")?.unwrap_or(-1);
            if let Some(days) = r.opt_text("STR_PROP_2")?.filter(|x| !x.is_empty()) {
                let nums: Option<Vec<i64>> = days.split(',').map(|x| x.trim().parse().ok()).collect();
                d.days_of_week = nums
                    .and_then(|n| DaysOfWeek::from_quartz_numbers(&n))
                    .ok_or_else(|| r.unreadable("STR_PROP_2", "is not a set of days"))?;
            }
            if let Some(tod) = r.opt_text("STR_PROP_3")? {
                let p: Option<Vec<u8>> = tod.split(',').map(|x| x.trim().parse().ok()).collect();
                let Some(p) = p.filter(|p| p.len() == 6) else {
                    return Err(r.unreadable("STR_PROP_3", "is not a start and end time of day (h,m,s,h,m,s)"));
                };
                d.start_time_of_day = TimeOfDay::new(p[0], p[1], p[2]);
                d.end_time_of_day = TimeOfDay::new(p[3], p[4], p[5]);
            }
            Schedule::DailyTimeInterval(d)
        }
    };
    let mut tr = Trigger::new(
        TriggerKey::new(name, group),
        JobKey::new(r.text("JOB_NAME")?, r.text("JOB_GROUP")?),
        start,
        schedule,
    );
    tr.description = r.opt_text("DESCRIPTION")?;
    tr.next_fire_time = next;
    tr.previous_fire_time = prev;
    tr.priority = opt_int32(r, "PRIORITY")?.unwrap_or(kairos_schedule::DEFAULT_PRIORITY);
    tr.end_time = end;
    tr.calendar_name = r.opt_text("CALENDAR_NAME")?;
    tr.misfire_instruction = MisfireInstruction::from_code(opt_int32(r, "MISFIRE_INSTR")?.unwrap_or(0), kind)
        .map_err(|e| r.unreadable("MISFIRE_INSTR", &e.to_string()))?;
    let state = TriggerState::parse(&r.text("TRIGGER_STATE")?)
        .ok_or_else(|| r.unreadable("TRIGGER_STATE", "is not one kairos uses"))?;
    let data = data_of(r, "JOB_DATA")?;
    Ok(StoredTrigger { trigger: tr, state, data })
}

fn opt_int32(r: &Row<'_>, column: &str) -> Result<Option<i32>> {
    if r.value(column)?.is_null() { Ok(None) } else { int32(r, column).map(Some) }
}

fn unit(r: &Row<'_>) -> Result<IntervalUnit> {
    let text = r.opt_text("STR_PROP_1")?.unwrap_or_default();
    serde_json::from_value(Json::String(text)).map_err(|_| r.unreadable("STR_PROP_1", "is not an interval unit"))
}

async fn read(store: &dyn Store, filter: &str, binds: &[SqlValue]) -> Result<Vec<TriggerRead>> {
    let rows =
        Rows::read(store, "QRTZ_TRIGGERS", TRIGGER_COLUMNS, &format!("{TRIGGER_SELECT} {filter}"), binds).await?;
    Ok(rows.iter().map(|r| trigger_of(&r)).collect())
}

/// A stored trigger: None if absent.
pub async fn trigger_get(store: &dyn Store, sched: &str, group: &str, name: &str) -> Result<Option<TriggerRead>> {
    let mut rows = read(
        store,
        "WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_NAME = ? AND tr.TRIGGER_GROUP = ?",
        &[t(sched), t(name), t(group)],
    )
    .await?;
    Ok(if rows.is_empty() { None } else { Some(rows.swap_remove(0)) })
}

/// A stored trigger with its job detail, in one read (the firing path's): None if the trigger
/// is absent; the job is None if it is gone. A job detail that cannot be read sets the trigger
/// aside too (it cannot fire), named by the job's row.
pub async fn trigger_with_job_get(
    store: &dyn Store,
    sched: &str,
    group: &str,
    name: &str,
) -> Result<Option<std::result::Result<(StoredTrigger, Option<JobDetail>), Unreadable>>> {
    let sql = format!(
        "{} LEFT JOIN QRTZ_JOB_DETAILS jd ON jd.SCHED_NAME = tr.SCHED_NAME AND jd.JOB_NAME = tr.JOB_NAME \
         AND jd.JOB_GROUP = tr.JOB_GROUP WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_NAME = ? AND tr.TRIGGER_GROUP = ?",
        TRIGGER_SELECT.replacen(" FROM QRTZ_TRIGGERS tr", &format!(", {JD_COLS} FROM QRTZ_TRIGGERS tr"), 1)
    );
    let mut rows = store.read(&sql, &[t(sched), t(name), t(group)]).await?;
    let Some(mut row) = rows.pop() else { return Ok(None) };
    let split = TRIGGER_COLUMNS.len().min(row.len());
    let job_values = row.split_off(split);
    let trigger = Rows::new("QRTZ_TRIGGERS", TRIGGER_COLUMNS, vec![row])?;
    let job = Rows::new("QRTZ_JOB_DETAILS", JOB_COLUMNS, vec![job_values])?;
    let stored = match trigger_of(&trigger.first().expect("one row")) {
        Ok(s) => s,
        Err(u) => return Ok(Some(Err(u))),
    };
    let j = job.first().expect("one row");
    if j.value("JOB_NAME")?.is_null() {
        return Ok(Some(Ok((stored, None))));
    }
    Ok(Some(match job_of(&j) {
        Ok(detail) => Ok((stored, Some(detail))),
        Err(e) => match e.unreadable.clone() {
            Some(u) => Err(*u),
            None => return Err(e),
        },
    }))
}

/// Triggers, optionally of one group and/or in one TRIGGER_STATE, by group and name; each
/// unreadable one as its [`Unreadable`].
pub async fn trigger_list(
    store: &dyn Store,
    sched: &str,
    group: Option<&str>,
    state: Option<TriggerState>,
) -> Result<Vec<TriggerRead>> {
    let mut filter = "WHERE tr.SCHED_NAME = ?".to_string();
    let mut binds = vec![t(sched)];
    if let Some(g) = group {
        filter.push_str(" AND tr.TRIGGER_GROUP = ?");
        binds.push(t(g));
    }
    if let Some(s) = state {
        filter.push_str(" AND tr.TRIGGER_STATE = ?");
        binds.push(t(s.as_str()));
    }
    filter.push_str(" ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME");
    read(store, &filter, &binds).await
}

/// The WAITING triggers that use calendar `calendar` (moved on when it is replaced).
pub async fn triggers_waiting_on_calendar(store: &dyn Store, sched: &str, calendar: &str) -> Result<Vec<TriggerRead>> {
    read(
        store,
        "WHERE tr.SCHED_NAME = ? AND tr.CALENDAR_NAME = ? AND tr.TRIGGER_STATE = 'WAITING'",
        &[t(sched), t(calendar)],
    )
    .await
}

/// Whether `group` is in QRTZ_PAUSED_TRIGGER_GRPS.
pub async fn group_paused(store: &dyn Store, sched: &str, group: &str) -> Result<bool> {
    let rows = store
        .read(
            "SELECT 1 FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? AND TRIGGER_GROUP = ?",
            &[t(sched), t(group)],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// The paused trigger groups (QRTZ_PAUSED_TRIGGER_GRPS), by name.
pub async fn paused_groups(store: &dyn Store, sched: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "QRTZ_PAUSED_TRIGGER_GRPS",
        &["TRIGGER_GROUP"],
        "SELECT TRIGGER_GROUP FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? ORDER BY TRIGGER_GROUP",
        &[t(sched)],
    )
    .await?;
    rows.iter().map(|r| r.text("TRIGGER_GROUP")).collect()
}

/// A trigger named by its key and what its row says of it, for the statements that move a
/// trigger's state (the check-in's and the work's unblocking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerKeyRow {
    pub name: String,
    pub group: String,
    /// NEXT_FIRE_TIME, epoch milliseconds.
    pub next_fire_time: Option<i64>,
}

/// The rows as [`TriggerKeyRow`]s. A row that cannot be read is set aside, as every read of
/// triggers does (it is named by [`trigger_list`]'s [`Unreadable`]s, and so by the doctor), so
/// that one bad trigger does not fail the firing that unblocks the others.
pub(crate) fn key_rows(rows: &Rows) -> Result<Vec<TriggerKeyRow>> {
    Ok(rows
        .iter()
        .filter_map(|r| {
            Some(TriggerKeyRow {
                name: r.text("TRIGGER_NAME").ok()?,
                group: r.text("TRIGGER_GROUP").ok()?,
                next_fire_time: r.opt_int("NEXT_FIRE_TIME").ok()?,
            })
        })
        .collect())
}
