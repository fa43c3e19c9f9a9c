//! The producer: acquisition (SPEC J2).
//!
//! It takes only as many jobs as there are free worker slots (a node that hoards jobs starves
//! the others — the Flowable 7.2 forum incident), and when it finds less than it asked for it
//! sleeps until the next due date by the database clock, a local wake-up, or the poll interval,
//! whichever comes first. That keeps timer lateness in milliseconds without polling hard.

use crate::runner;
use crate::shared::Shared;
use jiff::Timestamp;
use kairos_store::{JobAcquireParams, NextDue};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) async fn run(shared: Arc<Shared>) {
    let mut backoff = Duration::from_millis(50);
    loop {
        if shared.stop_acquiring.is_cancelled() {
            return;
        }
        if shared.is_fenced() {
            sleep_or_stop(&shared, shared.config.poll_interval).await;
            continue;
        }
        let free = shared.slots.available_permits();
        if free == 0 {
            let freed = shared.slot_freed.notified();
            tokio::select! {
                _ = freed => {}
                _ = shared.stop_acquiring.cancelled() => return,
                _ = tokio::time::sleep(shared.config.poll_interval) => {}
            }
            continue;
        }
        let limit = free.min(shared.config.acquire_batch.max(1));
        match acquire_and_start(&shared, limit).await {
            Ok((taken, _)) if taken >= limit => {
                backoff = Duration::from_millis(50);
                continue;
            }
            Ok((_, db_now)) => {
                backoff = Duration::from_millis(50);
                idle_wait(&shared, db_now).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "job acquisition failed");
                sleep_or_stop(&shared, backoff).await;
                backoff = (backoff * 2).min(shared.config.poll_interval.max(Duration::from_secs(5)));
            }
        }
    }
}

/// One acquisition; starts a runner per job. Returns how many jobs were taken and the
/// database clock at the acquisition (`None` when none was made).
async fn acquire_and_start(shared: &Arc<Shared>, limit: usize) -> Result<(usize, Option<Timestamp>), kairos_store::Error> {
    // Reserve the slots before asking, so that the runners can never exceed the workers.
    let Ok(permits) = shared.slots.clone().try_acquire_many_owned(limit as u32) else {
        return Ok((0, None));
    };
    let started = Instant::now();
    let acquired = shared
        .store
        .job_acquire(&JobAcquireParams {
            node: shared.config.node_id.clone(),
            limit: limit as u32,
            lock_time: shared.config.lock_time,
            now: None,
        })
        .await?;
    let taken = acquired.jobs.len();
    shared.metrics.acquisition_seconds.observe(started.elapsed().as_secs_f64());
    shared.metrics.acquired_batch.observe(taken as f64);
    // The attempt clock: the database's reading (taken inside the acquisition, before its
    // commit) plus monotonic time from the moment the acquisition returned. Counting from any
    // earlier instant would push logged attempt times past the real ones, by the acquisition's
    // own latency, and make consecutive exclusive attempts appear to overlap.
    let returned = Instant::now();
    let mut permits = permits;
    for job in acquired.jobs {
        let Some(permit) = permits.split(1) else { break };
        runner::start(shared, job, acquired.db_now, returned, permit);
    }
    drop(permits); // slots not used go back now
    Ok((taken, Some(acquired.db_now)))
}

/// Sleeps until the next due date (database clock), a wake-up, or the poll interval.
///
/// A job that was already due when the acquisition ran but was not taken is blocked (its
/// exclusive key is held by a running job, or the acquisition just missed it): rather than
/// polling hot, wait for a wake-up (the completer wakes the producer after every commit, which
/// is when a local exclusive key frees) or the poll interval. A job that became due after the
/// acquisition is taken at once.
async fn idle_wait(shared: &Arc<Shared>, acquired_at: Option<Timestamp>) {
    let wake = shared.wake.notified();
    let poll = shared.config.poll_interval;
    let wait = match shared.store.job_next_due().await {
        Ok(NextDue { next: Some(due), .. }) if acquired_at.is_some_and(|at| due <= at) => poll,
        Ok(NextDue { next: Some(due), db_now }) => {
            let d = due.duration_since(db_now);
            if d.is_negative() { Duration::ZERO } else { d.unsigned_abs().min(poll) }
        }
        Ok(NextDue { next: None, .. }) => poll,
        Err(e) => {
            tracing::debug!(error = %e, "next due date unknown; polling");
            poll
        }
    };
    if wait.is_zero() {
        return;
    }
    tokio::select! {
        _ = wake => {}
        _ = shared.stop_acquiring.cancelled() => {}
        _ = tokio::time::sleep(wait) => {}
    }
}

async fn sleep_or_stop(shared: &Shared, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = shared.stop_acquiring.cancelled() => {}
    }
}
