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

use super::{Scheduler, fire};
use crate::Error;
use kairos_store_engine::scheduler as rows;
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
    let db_now = s.store().db_now().await?;
    let now = db_now.as_millisecond();
    let db_now = jiff::Timestamp::from_millisecond(now).unwrap_or(db_now);
    let interval = i64::try_from(s.settings.checkin_interval.as_millis()).unwrap_or(i64::MAX);
    s.store()
        .write_all(&[
            rows::checkin_upsert(s.name(), &s.node_id, now, interval),
            rows::checkins_forget(s.name(), now - FORGET_AFTER_MS),
            rows::fired_orphans_delete(s.name()),
        ])
        .await?;
    // Blocked triggers whose job has no firing left.
    for r in rows::triggers_blocked_without_firing(s.store(), s.name()).await? {
        let writes = fire::unblock_writes(s.name(), &r.group, &r.name, r.next_fire_time, db_now, s.ahead());
        if let Err(e) = s.store().write_all(&writes).await {
            tracing::warn!(error = %e, trigger = %format!("{}.{}", r.group, r.name), "could not unblock a trigger");
        }
    }
    Ok(())
}
