//! The completer: writes finished attempts in batches.
//!
//! One transaction per batch instead of one per job is what lets the executor pass the
//! ~5,000 commits/s a per-job design meets on this hardware (River credits its batch completer
//! with ~4.5×). Every completion in a batch is fenced by its own lease, so batching never lets
//! a stale attempt overwrite work another node took over. A completion whose lease was lost is
//! dropped and counted (`kairos_job_lease_lost`).
//!
//! Failures: while the database is unreachable the batch is retried (a commit whose outcome
//! was lost is safe to repeat: an applied completion is fenced out the second time). Any other
//! error is taken to be about one row (a value the database refuses), so the batch is split and
//! written job by job; a completion that still cannot be written is replaced by a dead letter
//! that says why, so one bad result never blocks the others.

use crate::shared::{Finished, Shared};
use kairos_core::Completion;
use kairos_store::{ErrorKind, JobCompletion, WriteConcurrency};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// How long the final flush on shutdown keeps trying an unreachable database.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

pub(crate) async fn run(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Finished>) {
    let max = shared.config.completion_batch.max(1);
    // Batches in flight at once: each holds its own transaction (and connection). A store that
    // takes one writer at a time (SQLite) gets its batches in turn.
    let writers = match shared.store.write_concurrency() {
        WriteConcurrency::One => 1,
        WriteConcurrency::Many => shared.config.completion_writers.max(1),
    };
    let permits = Arc::new(Semaphore::new(writers));
    let mut in_flight = JoinSet::new();
    loop {
        let first = tokio::select! {
            f = rx.recv() => f,
            _ = shared.stop.cancelled() => None,
        };
        let Some(first) = first else {
            // Stopping: let the batches under way finish, flush whatever is still queued, for a
            // bounded time, then leave.
            while in_flight.join_next().await.is_some() {}
            let mut rest = Vec::new();
            while let Ok(f) = rx.try_recv() {
                rest.push(f);
            }
            if !rest.is_empty() {
                write(&shared, rest, Some(Instant::now() + SHUTDOWN_FLUSH)).await;
            }
            return;
        };
        let mut batch = vec![first];
        // Fill the batch for a moment; under load it fills at once, when idle it costs ms.
        let deadline = Instant::now() + shared.config.completion_delay;
        while batch.len() < max {
            match rx.try_recv() {
                Ok(f) => batch.push(f),
                Err(_) => match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Some(f)) => batch.push(f),
                    _ => break,
                },
            }
        }
        let give_up = if shared.stop.is_cancelled() { Some(Instant::now() + SHUTDOWN_FLUSH) } else { None };
        while in_flight.try_join_next().is_some() {}
        // While every writer is busy, completions queue up and the next batch is larger.
        let Ok(permit) = permits.clone().acquire_owned().await else { return };
        let s = shared.clone();
        in_flight.spawn(async move {
            write(&s, batch, give_up).await;
            drop(permit);
        });
    }
}

/// Writes one batch; `give_up` bounds the retries while the database is unreachable.
async fn write(shared: &Shared, batch: Vec<Finished>, give_up: Option<Instant>) {
    let completions: Vec<JobCompletion> = batch.iter().map(|f| f.completion.clone()).collect();
    match write_retrying(shared, &completions, give_up).await {
        Ok(applied) => record(shared, &completions, &applied),
        Err(e) if e.kind != ErrorKind::Unavailable && completions.len() > 1 => {
            tracing::warn!(error = %e, jobs = completions.len(), "a completion batch was refused; writing its jobs one by one");
            for c in &completions {
                write_one(shared, c, give_up).await;
            }
        }
        Err(e) if e.kind != ErrorKind::Unavailable => {
            tracing::warn!(error = %e, "a completion was refused");
            if let Some(c) = completions.first() {
                write_one(shared, c, give_up).await;
            }
        }
        Err(e) => {
            tracing::error!(error = %e, jobs = completions.len(), "completions could not be written; their leases will expire and the jobs run again");
            forget(shared, &completions);
        }
    }
    shared.pending_completions.fetch_sub(batch.len(), std::sync::atomic::Ordering::SeqCst);
    // Room in the queue (and, for `wait_idle`, fewer leases held): let waiters look again.
    shared.slot_freed.notify_waiters();
}

/// Writes one completion. An error that is not about reachability is tried twice more (it
/// may be transient, such as a deadlock with the dead-node reaper) before the completion is
/// judged unwritable.
async fn write_one(shared: &Shared, c: &JobCompletion, give_up: Option<Instant>) {
    let mut tries = 0;
    loop {
        tries += 1;
        match write_retrying(shared, std::slice::from_ref(c), give_up).await {
            Ok(applied) => return record(shared, std::slice::from_ref(c), &applied),
            Err(e) if e.kind == ErrorKind::Conflict && c.effects.iter().any(|w| w.expect.is_some()) => {
                // A checked effect met rows another command changed first (the process engine's
                // optimistic lock): the attempt's outcome is stale, not wrong. Hand the job back
                // to run again on fresh state, no retry spent.
                tracing::info!(error = %e, job = %c.job_id, "effects conflict with another command; job handed back");
                crate::runner::release(shared, vec![(c.job_id.clone(), c.attempt)], format!("handed back: {e}")).await;
                shared.metrics.count("conflict");
                forget(shared, std::slice::from_ref(c));
                shared.wake.notify_one();
                return;
            }
            Err(e) if e.kind != ErrorKind::Unavailable && tries < 3 => {
                tracing::warn!(error = %e, job = %c.job_id, tries, "completion refused; trying again");
                tokio::time::sleep(Duration::from_millis(100 * tries)).await;
            }
            Err(e) if e.kind != ErrorKind::Unavailable => return write_as_dead_letter(shared, c, &e, give_up).await,
            Err(e) => {
                tracing::error!(error = %e, job = %c.job_id, "completion could not be written");
                return forget(shared, std::slice::from_ref(c));
            }
        }
    }
}

/// The attempt's outcome cannot be stored as it is: dead-letter the job with the reason, so an
/// operator sees it instead of the job silently running again.
async fn write_as_dead_letter(shared: &Shared, c: &JobCompletion, e: &kairos_store::Error, give_up: Option<Instant>) {
    let message = format!(
        "the outcome of attempt {} ({}) could not be recorded: {e}",
        c.attempt,
        c.completion.log_outcome().as_str()
    );
    tracing::error!(job = %c.job_id, %message);
    let replaced = JobCompletion {
        completion: Completion::DeadLetter {
            stack: format!("{message}\n\noriginal outcome: {:?}", c.completion),
            message,
        },
        effects: Vec::new(),
        ..c.clone()
    };
    match write_retrying(shared, std::slice::from_ref(&replaced), give_up).await {
        Ok(applied) => record(shared, std::slice::from_ref(&replaced), &applied),
        Err(e2) => {
            tracing::error!(error = %e2, job = %c.job_id, "even the dead letter could not be written; the lease will expire");
            forget(shared, std::slice::from_ref(c));
        }
    }
}

/// Retries while the database is unreachable (forever, unless `give_up` passes); returns other
/// errors at once.
async fn write_retrying(
    shared: &Shared,
    completions: &[JobCompletion],
    give_up: Option<Instant>,
) -> Result<Vec<bool>, kairos_store::Error> {
    let mut backoff = Duration::from_millis(50);
    let mut give_up = give_up;
    loop {
        match shared.store.job_complete_many(completions).await {
            Ok(applied) => return Ok(applied),
            Err(e) if e.kind == ErrorKind::Unavailable => {
                // A batch taken before shutdown began is bounded from the moment it did.
                if give_up.is_none() && shared.stop.is_cancelled() {
                    give_up = Some(Instant::now() + SHUTDOWN_FLUSH);
                }
                if give_up.is_some_and(|g| Instant::now() + backoff >= g) {
                    return Err(e);
                }
                tracing::warn!(error = %e, jobs = completions.len(), retry_in_ms = backoff.as_millis() as u64, "writing completions failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
            Err(e) => return Err(e),
        }
    }
}

fn record(shared: &Shared, batch: &[JobCompletion], applied: &[bool]) {
    for (c, ok) in batch.iter().zip(applied.iter().copied()) {
        if ok {
            shared.metrics.count(c.completion.log_outcome().as_str());
        } else {
            shared.metrics.lease_lost.inc();
            tracing::warn!(job = %c.job_id, attempt = c.attempt, "lease lost before completion; result discarded");
        }
    }
    forget(shared, batch);
    // A finished exclusive job may unblock the next one of its key: look again now.
    shared.wake.notify_one();
}

fn forget(shared: &Shared, batch: &[JobCompletion]) {
    let mut map = shared.running_map();
    for c in batch {
        if map.get(&c.job_id).is_some_and(|r| r.attempt == c.attempt) {
            map.remove(&c.job_id);
        }
    }
}
