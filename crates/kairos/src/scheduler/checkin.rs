//! The check-in loop: each node running the scheduler writes its QRTZ_SCHEDULER_STATE row by
//! the database clock, and sweeps what the firing path cannot clean up by itself.
//!
//! Liveness and take-over are the job engine's (KAIROS_NODE heartbeats, expired leases); the
//! check-in row is for operators and seed 004 §5.1's query. The sweep:
//! - deletes QRTZ_FIRED_TRIGGERS rows whose work job is gone without succeeding (dead-lettered,
//!   deleted by an operator): a success deletes its own row in its completion;
//! - unblocks the BLOCKED triggers of non-concurrent jobs with no firing left (normally done by
//!   the finishing firing itself; this catches the ones that ended another way);
//! - forgets check-ins older than an hour (node ids change with every restart).

use super::{Scheduler, fire, i, rows, t, w};
use crate::Error;
use std::sync::Arc;

/// How long a silent node's check-in row stays (it shows as stale in the doctor meanwhile).
const FORGET_AFTER_MS: i64 = 3_600_000;

pub(super) fn spawn(s: Arc<Scheduler>, mut stop: tokio::sync::watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(s.settings.checkin_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let stopped = tokio::select! {
                r = stop.wait_for(|v| *v) => { let _ = r.map(|_| ()); true }
                _ = tick.tick() => false,
            };
            if stopped || *stop.borrow() {
                break;
            }
            if let Err(e) = once(&s).await {
                tracing::warn!(error = %e, "scheduler check-in failed; trying again at the next one");
            }
        }
    })
}

pub(super) async fn once(s: &Scheduler) -> Result<(), Error> {
    let now = s.store().db_now().await?.as_millisecond();
    let interval = i64::try_from(s.settings.checkin_interval.as_millis()).unwrap_or(i64::MAX);
    s.store()
        .write_all(&[
            w(
                "INSERT INTO QRTZ_SCHEDULER_STATE (SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL) \
                 VALUES (?, ?, ?, ?) ON CONFLICT (SCHED_NAME, INSTANCE_NAME) DO UPDATE SET \
                 LAST_CHECKIN_TIME = excluded.LAST_CHECKIN_TIME, CHECKIN_INTERVAL = excluded.CHECKIN_INTERVAL",
                vec![t(s.name()), t(&s.node_id), i(now), i(interval)],
            ),
            w(
                "DELETE FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? AND LAST_CHECKIN_TIME < ?",
                vec![t(s.name()), i(now - FORGET_AFTER_MS)],
            ),
            w(
                "DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND NOT EXISTS \
                 (SELECT 1 FROM ACT_RU_JOB j WHERE j.ID_ = QRTZ_FIRED_TRIGGERS.ENTRY_ID)",
                vec![t(s.name())],
            ),
        ])
        .await?;
    // Blocked triggers whose job has no firing left.
    let blocked = s
        .store()
        .read(
            "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.NEXT_FIRE_TIME, tr.TRIGGER_STATE FROM QRTZ_TRIGGERS tr \
             WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE IN ('BLOCKED', 'PAUSED_BLOCKED') AND NOT EXISTS \
             (SELECT 1 FROM QRTZ_FIRED_TRIGGERS f WHERE f.SCHED_NAME = tr.SCHED_NAME AND f.JOB_NAME = tr.JOB_NAME \
              AND f.JOB_GROUP = tr.JOB_GROUP)",
            &[t(s.name())],
        )
        .await?;
    for r in blocked {
        let name = r[0].as_str().unwrap_or_default().to_string();
        let group = r[1].as_str().unwrap_or_default().to_string();
        let next = r[2].as_i64();
        let writes = fire::unblock_writes(s.name(), &group, &name, next, rows::ms_to_ts(now), s.ahead());
        if let Err(e) = s.store().write_all(&writes).await {
            tracing::warn!(error = %e, trigger = %format!("{group}.{name}"), "could not unblock a trigger");
        }
    }
    Ok(())
}
