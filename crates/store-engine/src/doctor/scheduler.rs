//! The scheduler's findings' queries (seed 004 §5): triggers that will not fire and why. The
//! check-ins and firings are read with `crate::scheduler`'s [`checkins_by_node`] and
//! [`fired_by_time`].
//!
//! [`checkins_by_node`]: crate::scheduler::checkins_by_node
//! [`fired_by_time`]: crate::scheduler::fired_by_time

use crate::Rows;
use kairos_store::{Result, SqlValue, Store};

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
}

/// The triggers of scheduler `sched`.
pub async fn trigger_count(store: &dyn Store, sched: &str) -> Result<i64> {
    let rows = store.read("SELECT COUNT(*) FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ?", &[t(sched)]).await?;
    let rows = Rows::new("QRTZ_TRIGGERS", &["COUNT"], rows)?;
    rows.first().map_or(Ok(0), |r| r.int("COUNT"))
}

/// A trigger a finding is about, with what the finding needs of its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerFinding {
    pub group: String,
    pub name: String,
    /// NEXT_FIRE_TIME (epoch ms) of a late trigger.
    pub next_fire_time: Option<i64>,
    /// The job of a blocked trigger.
    pub job_group: Option<String>,
    pub job_name: Option<String>,
    /// Whether a paused trigger's group is in QRTZ_PAUSED_TRIGGER_GRPS.
    pub group_paused: bool,
    /// TIME_ZONE_ID and CRON_EXPRESSION of a cron trigger.
    pub time_zone: Option<String>,
    pub cron_expression: Option<String>,
}

impl TriggerFinding {
    fn of(group: String, name: String) -> TriggerFinding {
        TriggerFinding {
            group,
            name,
            next_fire_time: None,
            job_group: None,
            job_name: None,
            group_paused: false,
            time_zone: None,
            cron_expression: None,
        }
    }
}

/// Seed 004 §5.2: WAITING triggers whose NEXT_FIRE_TIME is before `before_ms`, latest fire
/// time last.
pub async fn triggers_late(store: &dyn Store, sched: &str, before_ms: i64) -> Result<Vec<TriggerFinding>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "NEXT_FIRE_TIME"],
        "SELECT TRIGGER_NAME, TRIGGER_GROUP, NEXT_FIRE_TIME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'WAITING' \
         AND NEXT_FIRE_TIME < ? ORDER BY NEXT_FIRE_TIME, TRIGGER_GROUP, TRIGGER_NAME",
        &[t(sched), SqlValue::Int(before_ms)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            let mut f = TriggerFinding::of(r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?);
            f.next_fire_time = Some(r.int("NEXT_FIRE_TIME")?);
            Ok(f)
        })
        .collect()
}

async fn keys(store: &dyn Store, sql: &str, binds: &[SqlValue]) -> Result<Vec<TriggerFinding>> {
    let rows = Rows::read(store, "QRTZ_TRIGGERS", &["TRIGGER_NAME", "TRIGGER_GROUP"], sql, binds).await?;
    rows.iter().map(|r| Ok(TriggerFinding::of(r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?))).collect()
}

/// Triggers in ERROR, by group and name.
pub async fn triggers_in_error(store: &dyn Store, sched: &str) -> Result<Vec<TriggerFinding>> {
    keys(
        store,
        "SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'ERROR' ORDER BY TRIGGER_GROUP, TRIGGER_NAME",
        &[t(sched)],
    )
    .await
}

/// WAITING triggers without their trigger job (the one invariant of kairos's design an
/// operator can check), by group and name.
pub async fn triggers_without_trigger_job(store: &dyn Store, sched: &str) -> Result<Vec<TriggerFinding>> {
    keys(
        store,
        "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE = 'WAITING' \
         AND NOT EXISTS (SELECT 1 FROM ACT_RU_JOB j WHERE j.SCOPE_ID_ = tr.TRIGGER_NAME AND j.SCOPE_DEFINITION_ID_ = tr.TRIGGER_GROUP \
         AND j.SCOPE_TYPE_ = ? AND j.HANDLER_TYPE_ = 'quartz-trigger') ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME",
        &[t(sched), SqlValue::Text(crate::scheduler::scope_type(sched))],
    )
    .await
}

/// PAUSED and PAUSED_BLOCKED triggers, each saying whether its group is paused, by group and
/// name (seed 004 §5.2: look at qrtz_paused_trigger_grps).
pub async fn triggers_paused(store: &dyn Store, sched: &str) -> Result<Vec<TriggerFinding>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "TRIGGER_STATE", "GROUP_PAUSED"],
        "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.TRIGGER_STATE, \
         (SELECT COUNT(*) FROM QRTZ_PAUSED_TRIGGER_GRPS p WHERE p.SCHED_NAME = tr.SCHED_NAME AND p.TRIGGER_GROUP = tr.TRIGGER_GROUP) \
         FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE IN ('PAUSED', 'PAUSED_BLOCKED') \
         ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME",
        &[t(sched)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            let mut f = TriggerFinding::of(r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?);
            f.group_paused = r.int("GROUP_PAUSED")? > 0;
            Ok(f)
        })
        .collect()
}

/// BLOCKED triggers with their job, by group and name.
pub async fn triggers_blocked(store: &dyn Store, sched: &str) -> Result<Vec<TriggerFinding>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "JOB_NAME", "JOB_GROUP"],
        "SELECT TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'BLOCKED' \
         ORDER BY TRIGGER_GROUP, TRIGGER_NAME",
        &[t(sched)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            let mut f = TriggerFinding::of(r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?);
            f.job_name = Some(r.text("JOB_NAME")?);
            f.job_group = Some(r.text("JOB_GROUP")?);
            Ok(f)
        })
        .collect()
}

/// Cron triggers with a TIME_ZONE_ID, with it and their expression, by group and name (seed
/// 004 §5.4).
pub async fn cron_triggers_with_zone(store: &dyn Store, sched: &str) -> Result<Vec<TriggerFinding>> {
    let rows = Rows::read(
        store,
        "QRTZ_CRON_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "TIME_ZONE_ID", "CRON_EXPRESSION"],
        "SELECT c.TRIGGER_NAME, c.TRIGGER_GROUP, c.TIME_ZONE_ID, c.CRON_EXPRESSION FROM QRTZ_CRON_TRIGGERS c \
         WHERE c.SCHED_NAME = ? AND c.TIME_ZONE_ID IS NOT NULL ORDER BY c.TRIGGER_GROUP, c.TRIGGER_NAME",
        &[t(sched)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            let mut f = TriggerFinding::of(r.text("TRIGGER_GROUP")?, r.text("TRIGGER_NAME")?);
            f.time_zone = Some(r.text("TIME_ZONE_ID")?);
            f.cron_expression = Some(r.text("CRON_EXPRESSION")?);
            Ok(f)
        })
        .collect()
}
