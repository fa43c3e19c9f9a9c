//! The keeper: leases, heartbeats, dead nodes, self-fencing.
//!
//! * Every third of the lock time it extends the leases of the attempts running here, so a
//!   slow handler is not run a second time by another node (seed 000 §4.4). A lease it can no
//!   longer extend was taken over: its handler is aborted, since its result would be discarded.
//! * Every heartbeat interval it records the node's heartbeat and declares nodes silent for
//!   `dead_after` dead, which expires their leases at once (SPEC J8) instead of after the full
//!   lock time.
//! * If it cannot reach the database for longer than `dead_after`, the node fences itself: it
//!   stops acquiring and aborts its handlers, because the cluster will by then consider it dead
//!   and run its jobs elsewhere (Quartz #176, Quartz.NET #3777).

use crate::shared::Shared;
use kairos_store::{LeaseExtendParams, NodeRegistration};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn registration(shared: &Shared) -> NodeRegistration {
    NodeRegistration {
        id: shared.config.node_id.clone(),
        host: hostname(),
        pid: i64::from(std::process::id()),
        workers: shared.config.workers as i32,
    }
}

/// First heartbeat, before any acquisition: the node is known before it holds a lease.
pub(crate) async fn register(shared: &Shared) -> Result<(), kairos_store::Error> {
    shared.store.node_heartbeat(&registration(shared)).await.map(|_| ())
}

pub(crate) async fn run(shared: Arc<Shared>) {
    let reg = registration(&shared);
    let mut heartbeat = tokio::time::interval(shared.config.heartbeat_interval);
    let mut extend = tokio::time::interval(shared.config.lease_extend_interval());
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    extend.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_ok = Instant::now();
    let dead_after = shared.config.dead_after.unsigned_abs();
    loop {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = heartbeat.tick() => {
                match shared.store.node_heartbeat(&reg).await {
                    Ok(_) => {
                        last_ok = Instant::now();
                        if shared.fenced.swap(false, Ordering::SeqCst) {
                            tracing::info!("database reachable again; the node takes work again");
                        }
                        reap(&shared).await;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "heartbeat failed");
                        fence_if_silent(&shared, last_ok, dead_after);
                    }
                }
            }
            _ = extend.tick() => {
                if extend_leases(&shared).await {
                    last_ok = Instant::now();
                } else {
                    fence_if_silent(&shared, last_ok, dead_after);
                }
            }
        }
    }
}

async fn reap(shared: &Shared) {
    match shared.store.node_reap_dead(shared.config.dead_after).await {
        Ok(dead) if !dead.is_empty() => {
            tracing::warn!(nodes = ?dead, "declared silent nodes dead; their jobs are taken over now");
            shared.wake.notify_one();
        }
        Ok(_) => {}
        Err(e) => tracing::debug!(error = %e, "dead-node check failed"),
    }
}

/// Extends every lease held here; aborts attempts whose lease was lost. Returns false when the
/// database could not be reached.
async fn extend_leases(shared: &Shared) -> bool {
    let leases = shared.leases();
    if leases.is_empty() {
        return true;
    }
    let params = LeaseExtendParams {
        node: shared.config.node_id.clone(),
        jobs: leases.clone(),
        lock_time: shared.config.lock_time,
    };
    match shared.store.job_lease_extend(&params).await {
        Ok(kept) => {
            let kept: HashSet<String> = kept.into_iter().collect();
            let mut map = shared.running_map();
            for (id, attempt) in leases {
                if kept.contains(&id) {
                    continue;
                }
                // Gone from the map: completed meanwhile. Still there: the lease was lost.
                if map.get(&id).is_some_and(|r| r.attempt == attempt) {
                    tracing::warn!(job = %id, attempt, "lease lost while running; aborting the handler");
                    if let Some(a) = map.remove(&id).and_then(|r| r.abort) {
                        a.abort();
                    }
                    shared.metrics.lease_lost.inc();
                }
            }
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "lease extension failed");
            false
        }
    }
}

fn fence_if_silent(shared: &Shared, last_ok: Instant, dead_after: Duration) {
    if last_ok.elapsed() >= dead_after && !shared.fenced.swap(true, Ordering::SeqCst) {
        tracing::error!(
            silent_ms = last_ok.elapsed().as_millis() as u64,
            "cannot reach the database for longer than the dead-node threshold; stopping this node's work"
        );
        shared.abort_all_runners();
        shared.running_map().clear();
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
