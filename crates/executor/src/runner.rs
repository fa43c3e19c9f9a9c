//! Runners: one attempt each.
//!
//! A runner runs the handler in its own task with a timeout, so a panic or a hang becomes a
//! failed attempt, never a dead node. It then asks the pure core what the attempt means
//! ([`kairos_core::plan_completion`]) and hands the answer to the completer. Attempt times are
//! on the database's clock: the acquisition's `db_now` plus this node's monotonic elapsed time,
//! so a node whose wall clock is wrong still logs consistent intervals.

use crate::handler::{JobContext, error_chain};
use crate::queue::{Ready, Slot};
use crate::shared::{Finished, RunningJob, Shared};
use jiff::{SignedDuration, Timestamp};
use kairos_core::{AttemptResult, Completion, Job, plan_completion};
use kairos_store::{AcquiredJob, JobCompletion, JobReleaseParams};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Takes one acquired job in: its lease is held here from now on (extended by the keeper,
/// handed back on shutdown), whether it waits in the queue or runs at once.
///
/// `requested` is when the acquisition was asked for (the lease cannot have started earlier, so
/// the local deadline counted from it errs early).
pub(crate) fn admit(shared: &Shared, acquired: &AcquiredJob, requested: Instant) {
    let job = &acquired.job;
    if let Some(prev) = &acquired.abandoned_by {
        shared.metrics.takeovers.inc();
        tracing::info!(job = %job.id, previous_node = %prev, "took over an expired lease");
    }
    let deadline = requested + shared.config.lock_time.unsigned_abs();
    shared
        .running_map()
        .insert(job.id.clone(), RunningJob { attempt: job.attempts, abort: None, completing: false, deadline });
}

/// Starts the attempt of an admitted job on the worker `slot`.
pub(crate) fn start(shared: &Arc<Shared>, ready: Ready, slot: Slot) {
    let Ready { job: acquired, db_now, at, .. } = ready;
    let job = acquired.job;
    let id = job.id.clone();
    let attempt_no = job.attempts;
    let shared2 = shared.clone();
    let id2 = id.clone();
    let handle = tokio::spawn(async move {
        let _slot = slot;
        let Some(completion) = attempt(&shared2, &job, acquired.abandoned_by.as_deref(), db_now, at).await else {
            // Taken ahead of its due date, and the lease could not be marked started: no
            // attempt was made; the lease expires and the job is taken again, no retry spent.
            let mut map = shared2.running_map();
            if map.get(&id2).is_some_and(|r| r.attempt == attempt_no) {
                map.remove(&id2);
            }
            return;
        };
        // Report only while this node still holds the lease; if the entry is gone, the lease
        // was lost, the node fenced itself or the job was handed back, and the result must not
        // be written.
        let still_held = {
            let mut map = shared2.running_map();
            match map.get_mut(&id2) {
                Some(r) if r.attempt == attempt_no => {
                    r.completing = true;
                    true
                }
                _ => false,
            }
        };
        if !still_held {
            tracing::warn!(job = %id2, attempt = attempt_no, "lease no longer held; result discarded");
            return;
        }
        shared2.pending_completions.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if shared2.completions.send(Finished { completion }).is_err() {
            shared2.pending_completions.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            tracing::warn!("completer gone; the attempt's lease will expire and the job run again");
        }
        // `_slot` drops here: the worker is free and the next queued job starts.
    });
    // If the attempt already finished and was completed, its entry is gone and this is a no-op.
    if let Some(r) = shared.running_map().get_mut(&id) {
        r.abort = Some(handle.abort_handle());
    }
}

/// Aborts a task when dropped, so that aborting a runner also stops its handler.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs the attempt; `None` when a job taken ahead of its due date could not be started.
async fn attempt(
    shared: &Shared,
    job: &Job,
    abandoned_by: Option<&str>,
    db_now: Timestamp,
    at: Instant,
) -> Option<JobCompletion> {
    // A job taken ahead of its due date (the acquisition's lookahead) starts at it, not before:
    // by the database clock, read at acquisition and carried on by this node's monotonic clock.
    if let Some(due) = job.duedate {
        let until_due = |lead: SignedDuration| {
            let wait = due.duration_since(db_time(db_now, at)) - lead;
            tokio::time::sleep(if wait.is_positive() { wait.unsigned_abs() } else { Duration::ZERO })
        };
        if job.lock_time.is_some_and(|locked| locked < due) {
            // The start is marked ahead of the due date (by `mark_lead`) and the handler starts
            // at it: a timer does not wait for that write's round trip (a fsync, a busy
            // database) once due.
            until_due(mark_lead(shared)).await;
            let (marked, ()) = tokio::join!(mark_started(shared, job), until_due(SignedDuration::ZERO));
            if !marked {
                return None;
            }
        } else {
            until_due(SignedDuration::ZERO).await;
        }
    }
    let started = db_time(db_now, at);
    let staged = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let result = if job.retries <= 0 {
        // Taken over from a dead node with its last retry spent by that abandoned attempt.
        let message = format!(
            "attempt {} abandoned by node {} (lease expired) and no retries left",
            job.attempts - 1,
            abandoned_by.unwrap_or("?")
        );
        AttemptResult::Failed { chain: message.clone(), message }
    } else {
        if let Some(due) = job.duedate {
            let late = started.duration_since(due).as_secs_f64().max(0.0);
            shared.metrics.lateness_seconds.observe(late);
        }
        run_handler(shared, job, started, &staged).await
    };
    // Staged writes go with a success only; a failed attempt's are dropped.
    let effects = match &result {
        AttemptResult::Succeeded { .. } => std::mem::take(&mut *staged.lock().unwrap_or_else(|e| e.into_inner())),
        AttemptResult::Failed { .. } => Vec::new(),
    };
    let finished = db_time(db_now, at);
    let completion = match (&result, job.retries <= 0) {
        (AttemptResult::Failed { message, chain }, true) => {
            Completion::DeadLetter { message: message.clone(), stack: chain.clone() }
        }
        _ => plan_completion(job, result, finished, &shared.config.retry_policy),
    };
    Some(JobCompletion {
        job_id: job.id.clone(),
        node: shared.config.node_id.clone(),
        attempt: job.attempts,
        started,
        finished,
        completion,
        effects,
    })
}

/// The least time before its due date a job taken ahead of it is marked started. A node that
/// dies in that window has one attempt counted that never ran; a shorter lead would make timers
/// wait for the write after they are due.
const MARK_LEAD: SignedDuration = SignedDuration::from_millis(20);

/// How long before its due date a job taken ahead of it is marked started: twice the mark's
/// recent round trip (a moving average), at least [`MARK_LEAD`], at most the lookahead. Under a
/// backlog a write waits behind many others (measured on PostgreSQL draining 100,000 jobs: tens
/// of milliseconds), and a fixed lead then shows up as timer lateness.
fn mark_lead(shared: &Shared) -> SignedDuration {
    let recent = shared.mean_mark_nanos.load(std::sync::atomic::Ordering::Relaxed);
    let twice = SignedDuration::from_nanos(i64::try_from(recent.saturating_mul(2)).unwrap_or(i64::MAX));
    twice.clamp(MARK_LEAD, shared.config.lookahead.max(MARK_LEAD))
}

/// Tells the database, just before the handler of a job taken ahead of its due date starts, that
/// the attempt starts now: a lease extension, which also moves LOCK_TIME_ to the due date. Until
/// then a take-over of the lease (this node died during the lookahead) spends no retry; from
/// then on it does (Camunda #2858: an attempt that started and killed its node counts). False
/// when the lease is gone or the database cannot say: the handler then does not run.
async fn mark_started(shared: &Shared, job: &Job) -> bool {
    let params = kairos_store::LeaseExtendParams {
        node: shared.config.node_id.clone(),
        jobs: vec![(job.id.clone(), job.attempts)],
        lock_time: shared.config.lock_time,
        start: true,
    };
    // A failed call (a dropped connection, a restarting server) is tried again a few times at
    // once: giving up leaves the job until its lease expires, a whole lock time late.
    let mut backoff = [10, 50, 100].into_iter().map(Duration::from_millis);
    let answer = loop {
        let sent = Instant::now();
        let answer = shared.store.job_lease_extend(&params).await;
        crate::queue::observe(&shared.mean_mark_nanos, sent.elapsed());
        match (answer, backoff.next()) {
            (Err(_), Some(wait)) => tokio::time::sleep(wait).await,
            (answer, _) => break answer,
        }
    };
    match answer {
        Ok(kept) if kept.contains(&job.id) => true,
        Ok(_) => {
            tracing::warn!(job = %job.id, attempt = job.attempts, "lease lost before the handler started; not run");
            false
        }
        Err(e) => {
            tracing::warn!(job = %job.id, error = %e, "cannot mark the attempt started; not run, the lease will expire");
            false
        }
    }
}

async fn run_handler(
    shared: &Shared,
    job: &Job,
    started: Timestamp,
    staged: &std::sync::Arc<std::sync::Mutex<Vec<kairos_store::JobEffect>>>,
) -> AttemptResult {
    let Some(handler) = shared.handlers.get(&job.handler_type) else {
        let message = format!("no handler \"{}\" is registered on node {}", job.handler_type, shared.config.node_id);
        return AttemptResult::Failed { chain: message.clone(), message };
    };
    let payload = match job.handler_cfg.as_deref().map(serde_json::from_str) {
        None => serde_json::Value::Null,
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            let message = format!("HANDLER_CFG_ is not valid JSON: {e}");
            return AttemptResult::Failed { chain: message.clone(), message };
        }
    };
    let ctx = JobContext {
        job_id: job.id.clone(),
        attempt: job.attempts,
        handler_type: job.handler_type.clone(),
        payload,
        process_instance_id: job.process_instance_id.clone(),
        execution_id: job.execution_id.clone(),
        element_id: job.element_id.clone(),
        tenant_id: job.tenant_id.clone(),
        node_id: shared.config.node_id.clone(),
        due_date: job.duedate,
        started,
        node_now: shared.config.clock.now(),
        staged: staged.clone(),
        answer: Default::default(),
    };
    let t = Instant::now();
    // The handler runs in a task of its own so that a panic is caught as a JoinError.
    let task = tokio::spawn(async move { handler.run(ctx).await });
    let abort = AbortOnDrop(task.abort_handle());
    let out = tokio::time::timeout(shared.config.handler_timeout, task).await;
    let took = t.elapsed();
    shared.metrics.handler_seconds.observe(took.as_secs_f64());
    crate::queue::observe_handler(shared, took);
    match out {
        Ok(Ok(Ok(message))) => AttemptResult::Succeeded { message },
        Ok(Ok(Err(e))) => AttemptResult::Failed { message: e.to_string(), chain: error_chain(e.as_ref()) },
        Ok(Err(join)) if join.is_panic() => {
            let payload = join.into_panic();
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-text panic payload".into());
            let message = format!("handler \"{}\" panicked: {text}", job.handler_type);
            AttemptResult::Failed { chain: message.clone(), message }
        }
        Ok(Err(_cancelled)) => {
            let message =
                format!("handler \"{}\" was cancelled (its lease was lost or the node stopped)", job.handler_type);
            AttemptResult::Failed { chain: message.clone(), message }
        }
        Err(_elapsed) => {
            drop(abort);
            let message = format!(
                "handler \"{}\" timed out after {} ms",
                job.handler_type,
                shared.config.handler_timeout.as_millis()
            );
            AttemptResult::Failed { chain: message.clone(), message }
        }
    }
}

/// The database's clock now, estimated from the acquisition's reading and monotonic time.
pub(crate) fn db_time(db_now: Timestamp, at: Instant) -> Timestamp {
    let elapsed = SignedDuration::try_from(at.elapsed()).unwrap_or(SignedDuration::MAX);
    db_now.saturating_add(elapsed).unwrap_or(db_now)
}

/// On shutdown, before the grace period: release the leases of the queued jobs (none of them
/// started), in one statement, so other nodes run them now.
pub(crate) async fn hand_back_queued(shared: &Shared) {
    hand_back(shared, shared.take_queued(), "before the job left its local queue").await;
}

/// On shutdown: abort attempts still running after the grace period and release their
/// leases (no retry spent). Attempts already completing are left to the completer's flush.
pub(crate) async fn hand_back_all(shared: &Shared) {
    hand_back(shared, shared.abort_unfinished(), "before the attempt finished").await;
}

async fn hand_back(shared: &Shared, leases: Vec<(String, i32)>, when: &str) {
    if !leases.is_empty() {
        let reason = format!("node {} shut down {when}; handed back", shared.config.node_id);
        release(shared, leases, reason).await;
    }
}

/// Releases leases this node no longer works on.
pub(crate) async fn release(shared: &Shared, jobs: Vec<(String, i32)>, reason: String) -> bool {
    let params = JobReleaseParams { node: shared.config.node_id.clone(), jobs, reason };
    match shared.store.job_release(&params).await {
        Ok(n) => {
            tracing::info!(released = n, "released leases of attempts this node stopped");
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not release leases; they will expire");
            false
        }
    }
}
