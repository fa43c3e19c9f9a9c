//! The producer: acquisition (SPEC J2).
//!
//! It takes only as many jobs as there are free worker slots (a node that hoards jobs starves
//! the others — the Flowable 7.2 forum incident), and when it finds less than it asked for it
//! sleeps until the next due date by the database clock, a local wake-up, or the poll interval,
//! whichever comes first. That keeps timer lateness in milliseconds without polling hard.

use crate::runner;
use crate::shared::Shared;
use kairos_store::{JobAcquireParams, Store};
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
            Ok(taken) if taken >= limit => {
                backoff = Duration::from_millis(50);
                continue;
            }
            Ok(_) => {
                backoff = Duration::from_millis(50);
                idle_wait(&shared).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64, "job acquisition failed");
                sleep_or_stop(&shared, backoff).await;
                backoff = (backoff * 2).min(shared.config.poll_interval.max(Duration::from_secs(5)));
            }
        }
    }
}

/// One acquisition; starts a runner per job. Returns how many jobs were taken.
async fn acquire_and_start(shared: &Arc<Shared>, limit: usize) -> Result<usize, kairos_store::Error> {
    // Reserve the slots before asking, so that the runners can never exceed the workers.
    let Ok(permits) = shared.slots.clone().try_acquire_many_owned(limit as u32) else {
        return Ok(0);
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
    let mut permits = permits;
    for job in acquired.jobs {
        let Some(permit) = permits.split(1) else { break };
        runner::start(shared, job, acquired.db_now, started, permit);
    }
    drop(permits); // slots not used go back now
    Ok(taken)
}

/// Sleeps until the next due date (database clock), a wake-up, or the poll interval.
async fn idle_wait(shared: &Arc<Shared>) {
    let wake = shared.wake.notified();
    let poll = shared.config.poll_interval;
    let until_due = match next_due_in(shared.store.as_ref()).await {
        Ok(Some(d)) => d.min(poll),
        Ok(None) => poll,
        Err(e) => {
            tracing::debug!(error = %e, "next due date unknown; polling");
            poll
        }
    };
    // A due job that acquisition did not take is blocked (its exclusive key is running, its
    // instance is suspended, or it became due a moment ago): look again soon, without spinning.
    let until_due = until_due.max(Duration::from_millis(20));
    tokio::select! {
        _ = wake => {}
        _ = shared.stop_acquiring.cancelled() => {}
        _ = tokio::time::sleep(until_due) => {}
    }
}

/// How long until the earliest unlocked job is due, by the database clock.
async fn next_due_in(store: &dyn Store) -> Result<Option<Duration>, kairos_store::Error> {
    let next = store.job_next_due().await?;
    Ok(next.next.map(|due| {
        let d = due.duration_since(next.db_now);
        if d.is_negative() { Duration::ZERO } else { d.unsigned_abs() }
    }))
}

async fn sleep_or_stop(shared: &Shared, d: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = shared.stop_acquiring.cancelled() => {}
    }
}
