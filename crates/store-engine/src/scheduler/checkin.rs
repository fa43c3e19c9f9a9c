//! QRTZ_SCHEDULER_STATE: each node running the scheduler checks in by the database clock; and
//! the check-in's sweep of what the firing path cannot clean up by itself.

use super::triggers::{TriggerKeyRow, key_rows};
use super::{i, t, w};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Store, Write};
use serde::Serialize;

/// A node's check-in (QRTZ_SCHEDULER_STATE).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerNode {
    pub instance_name: String,
    pub last_checkin_time: Timestamp,
    pub checkin_interval_ms: i64,
}

/// Node `node`'s check-in at `now_ms` (epoch ms, the database's now), with its interval.
pub fn checkin_upsert(sched: &str, node: &str, now_ms: i64, interval_ms: i64) -> Write {
    w(
        "INSERT INTO QRTZ_SCHEDULER_STATE (SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL) \
         VALUES (?, ?, ?, ?) ON CONFLICT (SCHED_NAME, INSTANCE_NAME) DO UPDATE SET \
         LAST_CHECKIN_TIME = excluded.LAST_CHECKIN_TIME, CHECKIN_INTERVAL = excluded.CHECKIN_INTERVAL",
        vec![t(sched), t(node), i(now_ms), i(interval_ms)],
    )
}

/// Forgets check-ins older than `before_ms` (node ids change with every restart).
pub fn checkins_forget(sched: &str, before_ms: i64) -> Write {
    w("DELETE FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? AND LAST_CHECKIN_TIME < ?", vec![t(sched), i(before_ms)])
}

/// Deletes QRTZ_FIRED_TRIGGERS rows whose work job is gone without succeeding (dead-lettered,
/// deleted by an operator): a success deletes its own row in its completion.
pub fn fired_orphans_delete(sched: &str) -> Write {
    w(
        "DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND NOT EXISTS \
         (SELECT 1 FROM ACT_RU_JOB j WHERE j.ID_ = QRTZ_FIRED_TRIGGERS.ENTRY_ID)",
        vec![t(sched)],
    )
}

/// BLOCKED and PAUSED_BLOCKED triggers whose job has no firing left (the check-in unblocks
/// them).
pub async fn triggers_blocked_without_firing(store: &dyn Store, sched: &str) -> Result<Vec<TriggerKeyRow>> {
    let rows = Rows::read(
        store,
        "QRTZ_TRIGGERS",
        &["TRIGGER_NAME", "TRIGGER_GROUP", "NEXT_FIRE_TIME", "TRIGGER_STATE"],
        "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.NEXT_FIRE_TIME, tr.TRIGGER_STATE FROM QRTZ_TRIGGERS tr \
         WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE IN ('BLOCKED', 'PAUSED_BLOCKED') AND NOT EXISTS \
         (SELECT 1 FROM QRTZ_FIRED_TRIGGERS f WHERE f.SCHED_NAME = tr.SCHED_NAME AND f.JOB_NAME = tr.JOB_NAME \
          AND f.JOB_GROUP = tr.JOB_GROUP)",
        &[t(sched)],
    )
    .await?;
    key_rows(&rows)
}

/// QRTZ_SCHEDULER_STATE, latest check-in first.
pub async fn checkin_list(store: &dyn Store, sched: &str) -> Result<Vec<SchedulerNode>> {
    checkins(
        store,
        "SELECT INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? \
         ORDER BY LAST_CHECKIN_TIME DESC, INSTANCE_NAME",
        sched,
    )
    .await
}

/// QRTZ_SCHEDULER_STATE by INSTANCE_NAME (seed 004 §5.1's query, the doctor's).
pub async fn checkins_by_node(store: &dyn Store, sched: &str) -> Result<Vec<SchedulerNode>> {
    checkins(
        store,
        "SELECT INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? ORDER BY INSTANCE_NAME",
        sched,
    )
    .await
}

async fn checkins(store: &dyn Store, sql: &str, sched: &str) -> Result<Vec<SchedulerNode>> {
    let rows = Rows::read(
        store,
        "QRTZ_SCHEDULER_STATE",
        &["INSTANCE_NAME", "LAST_CHECKIN_TIME", "CHECKIN_INTERVAL"],
        sql,
        &[t(sched)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(SchedulerNode {
                instance_name: r.text("INSTANCE_NAME")?,
                last_checkin_time: super::epoch_ms(&r, "LAST_CHECKIN_TIME")?,
                checkin_interval_ms: r.int("CHECKIN_INTERVAL")?,
            })
        })
        .collect()
}
