//! The local queue (prefetch): jobs this node has locked and not yet started.
//!
//! An acquisition that may take no more jobs than there are free workers makes the drain rate
//! follow the worker count when jobs are short: every round trip brings at most `workers` jobs.
//! So the producer keeps a queue ahead of the workers, as graphile_worker's local queue does,
//! and a worker that frees takes the next queued job without waiting for the database.
//!
//! What that costs, and how it is bounded:
//!
//! * **Hoarding.** Jobs queued here are locked: no other node runs them (the Flowable 7.2 forum
//!   incident: one node took everything and the others idled). The queue therefore holds at most
//!   the jobs its workers are expected to start within [`ExecutorConfig::prefetch_wait`], judged
//!   by the handler time measured on this node (a moving average), and never more than
//!   [`ExecutorConfig::prefetch`]. Until a handler has finished here, nothing is queued. A node
//!   running minute-long jobs queues next to nothing; one running no-op jobs queues the cap.
//! * **Leases.** A queued job is a lease like a running one: it sits in [`Shared::running`], so
//!   the keeper extends it and the watchdog drops it when it runs out; a queued job whose lease
//!   was lost is skipped, never started. The expected wait is kept to a small part of the lock
//!   time, so a queued job does not need the keeper in the common case.
//! * **Shutdown.** Queued jobs are handed back at once, with one release statement, before the
//!   running ones are given their grace period; fencing drops them with the running ones.
//! * **Timers first.** A timer taken while async jobs wait here starts at the next free worker,
//!   ahead of them (the producer's acquisition takes due timers first too).
//!
//! [`ExecutorConfig::prefetch_wait`]: crate::ExecutorConfig::prefetch_wait
//! [`ExecutorConfig::prefetch`]: crate::ExecutorConfig::prefetch

use crate::runner;
use crate::shared::Shared;
use jiff::Timestamp;
use kairos_core::JobType;
use kairos_store::AcquiredJob;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// An acquired job waiting for a worker, with what its attempt clock needs.
#[derive(Debug)]
pub(crate) struct Ready {
    pub job: AcquiredJob,
    /// The database clock read by the acquisition that took the job.
    pub db_now: Timestamp,
    /// When it returned (the origin of the attempt's database-clock estimate).
    pub at: Instant,
}

/// Timers ahead of everything else; each lane in acquisition order.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    timers: VecDeque<Ready>,
    others: VecDeque<Ready>,
}

impl Queue {
    pub fn push(&mut self, ready: Ready) {
        match ready.job.job.job_type {
            JobType::Timer => self.timers.push_back(ready),
            _ => self.others.push_back(ready),
        }
    }

    fn pop(&mut self) -> Option<Ready> {
        self.timers.pop_front().or_else(|| self.others.pop_front())
    }

    /// Empties the queue; the jobs it held, as (id, attempt).
    pub fn take_all(&mut self) -> Vec<(String, i32)> {
        self.timers.drain(..).chain(self.others.drain(..)).map(|r| (r.job.job.id, r.job.job.attempts)).collect()
    }
}

/// How many leases this node may hold now, running, queued and completing: the workers plus
/// the queue's current bound (see the module docs).
pub(crate) fn capacity(shared: &Shared) -> usize {
    let workers = shared.config.workers.max(1);
    let mean = shared.mean_handler_nanos.load(Ordering::Relaxed);
    if mean == 0 {
        return workers;
    }
    let wait = shared.config.prefetch_wait.min(shared.config.lock_time.unsigned_abs() / 4);
    let expected = workers as f64 * wait.as_nanos() as f64 / mean as f64;
    workers + (expected as usize).min(shared.config.prefetch)
}

/// Records one handler's run time in the moving average the queue is bounded by.
pub(crate) fn observe_handler(shared: &Shared, took: Duration) {
    observe(&shared.mean_handler_nanos, took);
}

/// Adds a sample to a moving average of nanoseconds (0: no sample yet), weight 1/8.
pub(crate) fn observe(mean: &AtomicU64, took: Duration) {
    let sample = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX).max(1);
    // An update lost to a concurrent one only drops a sample.
    let old = mean.load(Ordering::Relaxed);
    let new = if old == 0 { sample } else { old - old / 8 + sample / 8 };
    mean.store(new.max(1), Ordering::Relaxed);
}

/// Starts queued jobs while workers are free.
pub(crate) fn dispatch(shared: &Arc<Shared>) {
    loop {
        let Ok(permit) = shared.slots.clone().try_acquire_owned() else { return };
        let Some(ready) = shared.queue().pop() else { return };
        let held = shared.running_map().get(&ready.job.job.id).is_some_and(|r| r.attempt == ready.job.job.attempts);
        if held {
            runner::start(shared, ready, Slot { permit: Some(permit), shared: shared.clone() });
        }
    }
}

/// A worker slot held by a runner. Dropping it — the attempt ended, or its task was aborted —
/// frees the slot and starts the next queued job.
#[derive(Debug)]
pub(crate) struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    shared: Arc<Shared>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        drop(self.permit.take());
        self.shared.slot_freed.notify_waiters();
        // Outside a runtime (it is shutting down) there is nothing left to start jobs on.
        if tokio::runtime::Handle::try_current().is_ok() {
            dispatch(&self.shared);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kairos_core::Job;

    fn ready(id: &str, job_type: JobType) -> Ready {
        let now = Timestamp::UNIX_EPOCH;
        let job: Job = serde_json::from_value(serde_json::json!({
            "id": id, "rev": 1, "job_type": job_type, "exclusive": false, "retries": 3, "attempts": 0,
            "handler_type": "h", "create_time": now,
        }))
        .unwrap();
        Ready { job: AcquiredJob { job, abandoned_by: None }, db_now: now, at: Instant::now() }
    }

    #[test]
    fn timers_leave_the_queue_first_each_lane_in_order() {
        let mut q = Queue::default();
        for (id, t) in
            [("m1", JobType::Message), ("t1", JobType::Timer), ("m2", JobType::Message), ("t2", JobType::Timer)]
        {
            q.push(ready(id, t));
        }
        let order: Vec<String> = std::iter::from_fn(|| q.pop()).map(|r| r.job.job.id).collect();
        assert_eq!(order, ["t1", "t2", "m1", "m2"]);
        q.push(ready("m3", JobType::Message));
        assert_eq!(q.take_all(), vec![("m3".to_string(), 0)]);
        assert!(q.pop().is_none());
    }
}
