//! The producer: acquisition (SPEC J2).
//!
//! It takes as many jobs as the node may hold: its free workers plus room in the local queue
//! ([`crate::queue`], bounded so that a node does not hoard jobs others could run — the
//! Flowable 7.2 forum incident), and when it finds less than it asked for it sleeps until the
//! next due date by the database clock, a local wake-up, or the poll interval, whichever comes
//! first. That keeps timer lateness in milliseconds without polling hard.
//!
//! Two brakes keep it efficient under load: after a full acquisition it waits a moment for
//! more room, so it asks for jobs in batches rather than one slot at a time (each acquisition is
//! a round trip, the dominant cost with short jobs); and it stops acquiring while too many
//! finished attempts wait for the completer (a slow database slows intake instead of letting
//! unwritten results pile up).

use crate::queue::{self, Ready};
use crate::runner;
use crate::shared::Shared;
use kairos_store::{JobAcquireParams, NextDue};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After a full acquisition, wait up to this long for room for half a batch.
const FETCH_COOLDOWN: Duration = Duration::from_millis(5);

pub(crate) async fn run(shared: Arc<Shared>) {
    let mut backoff = Duration::from_millis(50);
    // Consecutive rounds that took nothing although a job was due: the first is retried at
    // once (the job may have become due during the acquisition), later ones wait the poll
    // interval (the job is blocked: its exclusive key is running elsewhere).
    let mut empty_but_due = 0u32;
    loop {
        if shared.stop_acquiring.is_cancelled() {
            return;
        }
        let room = room(&shared);
        if room == 0 {
            wait_for_room(&shared).await;
            continue;
        }
        let limit = room.min(shared.config.acquire_batch.max(1));
        match acquire_and_start(&shared, limit).await {
            Ok(taken) if taken >= limit => {
                backoff = Duration::from_millis(50);
                empty_but_due = 0;
                cooldown(&shared).await;
            }
            Ok(taken) => {
                backoff = Duration::from_millis(50);
                if taken > 0 {
                    empty_but_due = 0;
                }
                idle_wait(&shared, &mut empty_but_due).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "job acquisition failed");
                sleep_or_stop(&shared, backoff).await;
                backoff = (backoff * 2).min(shared.config.poll_interval.max(Duration::from_secs(5)));
            }
        }
    }
}

/// One acquisition; its jobs go to the local queue and start as workers are free. Returns how
/// many jobs were taken.
async fn acquire_and_start(shared: &Arc<Shared>, limit: usize) -> Result<usize, kairos_store::Error> {
    let started = Instant::now();
    let acquired = shared
        .store
        .job_acquire(&JobAcquireParams {
            node: shared.config.node_id.clone(),
            limit: limit as u32,
            lock_time: shared.config.lock_time,
            now: None,
            lookahead: shared.config.lookahead,
        })
        .await?;
    for row in &acquired.set_aside {
        tracing::warn!(
            table = row.table,
            job = row.id,
            column = row.column,
            raw = row.raw.as_deref().unwrap_or("NULL"),
            "{row}; moved to ACT_RU_DEADLETTER_JOB so the other jobs run"
        );
    }
    let taken = acquired.jobs.len();
    shared.metrics.acquisition_seconds.observe(started.elapsed().as_secs_f64());
    shared.metrics.acquired_batch.observe(taken as f64);
    // The attempt clock: the database's reading (taken inside the acquisition, before its
    // commit) plus monotonic time from the moment the acquisition returned. Counting from any
    // earlier instant would push logged attempt times past the real ones, by the acquisition's
    // own latency, and make consecutive exclusive attempts appear to overlap.
    let returned = Instant::now();
    {
        let mut queued = shared.queue();
        for job in acquired.jobs {
            runner::admit(shared, &job, started);
            queued.push(Ready { job, db_now: acquired.db_now, at: returned });
        }
    }
    queue::dispatch(shared);
    Ok(taken)
}

/// Sleeps until the next due date (database clock), a wake-up, or the poll interval.
async fn idle_wait(shared: &Arc<Shared>, empty_but_due: &mut u32) {
    let wake = shared.wake.notified();
    let poll = shared.config.poll_interval;
    // Jobs are taken `lookahead` before they are due (they start at their due date).
    let ahead = shared.config.lookahead.max(jiff::SignedDuration::ZERO);
    let wait = match shared.store.job_next_due().await {
        Ok(NextDue { next: Some(due), db_now }) if due <= db_now.saturating_add(ahead).unwrap_or(db_now) => {
            *empty_but_due += 1;
            if *empty_but_due == 1 { Duration::ZERO } else { poll }
        }
        Ok(NextDue { next: Some(due), db_now }) => {
            *empty_but_due = 0;
            (due.duration_since(db_now) - ahead).unsigned_abs().min(poll)
        }
        Ok(NextDue { next: None, .. }) => {
            *empty_but_due = 0;
            poll
        }
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

/// After a full acquisition: give running jobs a moment to make room so that the next
/// acquisition is a batch.
async fn cooldown(shared: &Shared) {
    let deadline = tokio::time::Instant::now() + FETCH_COOLDOWN;
    let want = (queue::capacity(shared) / 2).clamp(1, shared.config.acquire_batch.max(1));
    while room(shared) < want {
        let freed = shared.slot_freed.notified();
        if tokio::time::timeout_at(deadline, freed).await.is_err() {
            return;
        }
    }
}

/// How many more jobs the node may take now: none while it is fenced or its completions are
/// backlogged.
fn room(shared: &Shared) -> usize {
    if shared.is_fenced() || shared.completions_backlogged() {
        return 0;
    }
    queue::capacity(shared).saturating_sub(shared.running_count())
}

/// Waits for room (a slot freed or a completion written), or the poll interval.
async fn wait_for_room(shared: &Shared) {
    let freed = shared.slot_freed.notified();
    tokio::pin!(freed);
    freed.as_mut().enable();
    // Room made between the caller's look and `enable` would otherwise wait a poll interval.
    if room(shared) > 0 {
        return;
    }
    tokio::select! {
        _ = freed => {}
        _ = shared.stop_acquiring.cancelled() => {}
        _ = tokio::time::sleep(shared.config.poll_interval) => {}
    }
}

async fn sleep_or_stop(shared: &Shared, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = shared.stop_acquiring.cancelled() => {}
    }
}
