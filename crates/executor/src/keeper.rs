//! The keeper: leases, heartbeats, dead nodes, self-fencing.
//!
//! * At start the node registers, which expires the leases a previous incarnation left under
//!   the same node id: restarted with a fixed id, it heartbeats at once, so the reaper would
//!   never declare the old process dead.
//! * Every third of the lock time it extends the leases of the attempts running here, so a
//!   slow handler is not run a second time by another node (seed 000 §4.4). A lease it can no
//!   longer extend was taken over: its handler is aborted, since its result would be discarded.
//! * Every heartbeat interval it records the node's heartbeat and declares nodes silent for
//!   `dead_after` dead, which expires their leases at once (SPEC J8) instead of after the full
//!   lock time.
//! * If it cannot reach the database for half of `dead_after` (every call is bounded by a
//!   timeout, so a silent network counts too), the node fences itself: it stops acquiring and
//!   aborts its handlers before the cluster declares it dead and runs its jobs elsewhere
//!   (Quartz #176, Quartz.NET #3777). Once the database answers again it releases those leases.
//! * A handler whose lease ran out by the node's monotonic clock is aborted even if the
//!   database never said so.

use crate::runner;
use crate::shared::Shared;
use kairos_store::{LeaseExtendParams, NodeRegistration};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub(crate) fn registration(shared: &Shared) -> NodeRegistration {
    NodeRegistration {
        id: shared.config.node_id.clone(),
        host: hostname(),
        pid: i64::from(std::process::id()),
        workers: shared.config.workers as i32,
        settings: Some(settings(&shared.config)),
    }
}

/// What this node runs with, recorded beside its heartbeat so that `kairos doctor`, run as a
/// tool with settings of its own, judges this node's leases and liveness by them.
fn settings(c: &crate::ExecutorConfig) -> kairos_core::NodeSettings {
    let d = |d: Duration| jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX);
    kairos_core::NodeSettings {
        lock_time: c.lock_time,
        heartbeat_interval: d(c.heartbeat_interval),
        dead_after: c.dead_after,
        lookahead: c.lookahead,
        poll_interval: d(c.poll_interval),
        time_zone: jiff::tz::TimeZone::system().iana_name().unwrap_or_default().to_string(),
    }
}

/// Registration, before any acquisition: the node is known before it holds a lease, and the
/// leases a previous incarnation left under this node id (a restart with a fixed `--node-id`)
/// are expired, so its jobs are taken over now instead of after the full lock time.
pub(crate) async fn register(shared: &Shared) -> Result<(), kairos_store::Error> {
    let registered = shared.store.node_register(&registration(shared)).await?;
    if registered.released > 0 {
        tracing::info!(
            node = %shared.config.node_id,
            released = registered.released,
            "released the leases of a previous incarnation of this node; their jobs run again now"
        );
    }
    Ok(())
}

pub(crate) async fn run(shared: Arc<Shared>) {
    // The local lease deadlines are watched by a loop of their own, so that a database call
    // that hangs in the loop below cannot keep a handler running past its lease.
    let watchdog = tokio::spawn(watch_deadlines(shared.clone()));
    keep(shared).await;
    watchdog.abort();
}

async fn watch_deadlines(shared: Arc<Shared>) {
    let every = (shared.config.lease_extend_interval() / 4).clamp(Duration::from_millis(20), Duration::from_secs(1));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            // One tick early: the check must not come after the deadline it guards.
            _ = tick.tick() => abort_past_deadline(&shared, every),
        }
    }
}

async fn keep(shared: Arc<Shared>) {
    let reg = registration(&shared);
    let mut heartbeat = tokio::time::interval(shared.config.heartbeat_interval);
    let mut extend = tokio::time::interval(shared.config.lease_extend_interval());
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    extend.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_ok = Instant::now();
    // The node stops its own work at half the threshold at which other nodes declare it dead,
    // so it has stopped before anyone else starts its jobs.
    let fence_after = shared.config.dead_after.unsigned_abs() / 2;
    // A database call that hangs (a silent network) must count as a failure, not block the
    // keeper: every call is bounded.
    let call_limit = fence_after.max(Duration::from_millis(200));
    loop {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = heartbeat.tick() => {
                match tokio::time::timeout(call_limit, shared.store.node_heartbeat(&reg)).await {
                    Ok(Ok(_)) => {
                        last_ok = Instant::now();
                        recover(&shared).await;
                        reap(&shared, call_limit).await;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "heartbeat failed");
                        fence_if_silent(&shared, last_ok, fence_after);
                    }
                    Err(_) => {
                        tracing::warn!(limit_ms = call_limit.as_millis() as u64, "heartbeat timed out");
                        fence_if_silent(&shared, last_ok, fence_after);
                    }
                }
            }
            _ = extend.tick() => {
                if extend_leases(&shared, call_limit).await {
                    last_ok = Instant::now();
                } else {
                    fence_if_silent(&shared, last_ok, fence_after);
                }
            }
        }
    }
}

async fn reap(shared: &Shared, limit: Duration) {
    match tokio::time::timeout(limit, shared.store.node_reap_dead(shared.config.dead_after)).await {
        Ok(Ok(dead)) if !dead.is_empty() => {
            tracing::warn!(nodes = ?dead, "declared silent nodes dead; their jobs are taken over now");
            shared.wake.notify_one();
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "dead-node check failed"),
        Err(_) => tracing::debug!("dead-node check timed out"),
    }
}

/// Back in touch with the database: release the leases of attempts aborted while fenced, so
/// their jobs run again now rather than when the leases expire.
async fn recover(shared: &Shared) {
    if shared.fenced.swap(false, Ordering::SeqCst) {
        tracing::info!("database reachable again; the node takes work again");
    }
    let orphaned = std::mem::take(&mut *shared.orphaned.lock().unwrap_or_else(|e| e.into_inner()));
    if !orphaned.is_empty() {
        let reason = format!("node {} lost the database and stopped the attempt", shared.config.node_id);
        if !runner::release(shared, orphaned.clone(), reason).await {
            shared.orphaned.lock().unwrap_or_else(|e| e.into_inner()).extend(orphaned);
        }
    }
}

/// Extends every lease held here; aborts attempts whose lease was lost. Returns false when the
/// database could not be reached in time.
async fn extend_leases(shared: &Shared, limit: Duration) -> bool {
    let leases = shared.leases();
    if leases.is_empty() {
        return true;
    }
    let params = LeaseExtendParams {
        node: shared.config.node_id.clone(),
        jobs: leases.clone(),
        lock_time: shared.config.lock_time,
        start: false,
    };
    let sent = Instant::now();
    match tokio::time::timeout(limit, shared.store.job_lease_extend(&params)).await {
        Ok(Ok(kept)) => {
            let kept: HashSet<String> = kept.into_iter().collect();
            let new_deadline = sent + shared.config.lock_time.unsigned_abs();
            let mut map = shared.running_map();
            for (id, attempt) in leases {
                let Some(r) = map.get_mut(&id).filter(|r| r.attempt == attempt) else { continue };
                if kept.contains(&id) {
                    r.deadline = new_deadline;
                } else if !r.completing {
                    // Still running here, but the database says the lease is gone.
                    tracing::warn!(job = %id, attempt, "lease lost while running; aborting the handler");
                    if let Some(a) = map.remove(&id).and_then(|r| r.abort) {
                        a.abort();
                    }
                    shared.metrics.lease_lost.inc();
                }
            }
            true
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "lease extension failed");
            false
        }
        Err(_) => {
            tracing::warn!(limit_ms = limit.as_millis() as u64, "lease extension timed out");
            false
        }
    }
}

/// Aborts handlers whose lease has run out by this node's own monotonic clock: whatever the
/// database says later, the cluster may already have handed the job to someone else.
fn abort_past_deadline(shared: &Shared, margin: Duration) {
    let now = Instant::now() + margin;
    let mut map = shared.running_map();
    let late: Vec<String> =
        map.iter().filter(|(_, r)| !r.completing && r.deadline <= now).map(|(id, _)| id.clone()).collect();
    for id in late {
        if let Some(r) = map.remove(&id) {
            tracing::warn!(job = %id, attempt = r.attempt, "lease ran out before it could be extended; aborting the handler");
            if let Some(a) = r.abort {
                a.abort();
            }
            shared.metrics.lease_lost.inc();
        }
    }
}

fn fence_if_silent(shared: &Shared, last_ok: Instant, fence_after: Duration) {
    if last_ok.elapsed() >= fence_after && !shared.fenced.swap(true, Ordering::SeqCst) {
        tracing::error!(
            silent_ms = last_ok.elapsed().as_millis() as u64,
            "cannot reach the database; stopping this node's work before the cluster declares it dead"
        );
        let aborted = shared.abort_unfinished();
        shared.orphaned.lock().unwrap_or_else(|e| e.into_inner()).extend(aborted);
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}
