//! State shared by the executor's loops.

use crate::config::ExecutorConfig;
use crate::handler::Handlers;
use crate::metrics::Metrics;
use crate::queue::Queue;
use kairos_store::{JobCompletion, Store};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

/// An attempt whose lease this node holds. Its presence in [`Shared::running`] is what "this
/// node still holds the lease" means locally: whoever removes the entry (lease lost, node
/// fenced, job handed back) also stops the runner from reporting a result.
#[derive(Debug)]
pub(crate) struct RunningJob {
    pub attempt: i32,
    /// Aborts the runner's task; used when the lease is lost or the node fences itself.
    pub abort: Option<AbortHandle>,
    /// The handler has finished and its completion is on its way to the database.
    pub completing: bool,
    /// When the lease runs out by this node's monotonic clock, counting from the moment the
    /// lease was last requested (so it errs early). Past it, a running handler is aborted: the
    /// cluster may already have given the job to another node.
    pub deadline: Instant,
}

/// A finished attempt on its way to the completer. Its worker slot is already free; the
/// producer stops acquiring while too many of these wait ([`Shared::completions_backlogged`]).
#[derive(Debug)]
pub(crate) struct Finished {
    pub completion: JobCompletion,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub store: Arc<dyn Store>,
    pub handlers: Arc<Handlers>,
    pub config: ExecutorConfig,
    pub metrics: Arc<Metrics>,
    /// One permit per worker; held by a runner from its start until the handler returns.
    pub slots: Arc<Semaphore>,
    /// Leases this node holds, queued or running: from acquisition until the completer
    /// committed.
    pub running: Mutex<HashMap<String, RunningJob>>,
    /// Acquired jobs waiting for a worker ([`crate::queue`]).
    pub queue: Mutex<Queue>,
    /// Moving average of handler run time on this node, nanoseconds (0: none finished yet);
    /// bounds the queue.
    pub mean_handler_nanos: AtomicU64,
    /// Moving average of the round trip that marks a job taken ahead of its due date started
    /// (`runner::mark_lead`), nanoseconds.
    pub mean_mark_nanos: AtomicU64,
    pub wake: Notify,
    /// Woken whenever a slot frees, so the producer and `wait_idle` need not poll.
    pub slot_freed: Notify,
    pub completions: mpsc::UnboundedSender<Finished>,
    /// Finished attempts not yet written by the completer.
    pub pending_completions: AtomicUsize,
    /// Cancelled first on shutdown: no new acquisitions.
    pub stop_acquiring: CancellationToken,
    /// Cancelled last: the completer flushes and the keeper stops.
    pub stop: CancellationToken,
    /// Set while the node cannot renew leases or heartbeat: it takes no new work.
    pub fenced: std::sync::atomic::AtomicBool,
    /// Leases of attempts aborted while fenced; released once the database answers again.
    pub orphaned: Mutex<Vec<(String, i32)>>,
}

impl Shared {
    pub fn new(
        store: Arc<dyn Store>,
        handlers: Arc<Handlers>,
        config: ExecutorConfig,
        metrics: Arc<Metrics>,
    ) -> (Arc<Shared>, mpsc::UnboundedReceiver<Finished>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Shared {
            store,
            handlers,
            slots: Arc::new(Semaphore::new(config.workers.max(1))),
            config,
            metrics,
            running: Mutex::new(HashMap::new()),
            queue: Mutex::new(Queue::default()),
            mean_handler_nanos: AtomicU64::new(0),
            mean_mark_nanos: AtomicU64::new(0),
            wake: Notify::new(),
            slot_freed: Notify::new(),
            completions: tx,
            pending_completions: AtomicUsize::new(0),
            stop_acquiring: CancellationToken::new(),
            stop: CancellationToken::new(),
            fenced: std::sync::atomic::AtomicBool::new(false),
            orphaned: Mutex::new(Vec::new()),
        };
        (Arc::new(shared), rx)
    }

    pub fn running_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, RunningJob>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn running_count(&self) -> usize {
        self.running_map().len()
    }

    /// Every (job id, attempt) whose lease this node holds.
    pub fn leases(&self) -> Vec<(String, i32)> {
        self.running_map().iter().map(|(id, r)| (id.clone(), r.attempt)).collect()
    }

    pub fn abort_all_runners(&self) {
        for r in self.running_map().values() {
            if let Some(a) = &r.abort {
                a.abort();
            }
        }
    }

    /// Aborts every attempt whose handler is still running, drops the queued jobs, and forgets
    /// their leases locally; returns those leases. Attempts already completing are left to the
    /// completer.
    pub fn abort_unfinished(&self) -> Vec<(String, i32)> {
        self.queue().take_all();
        let mut map = self.running_map();
        let ids: Vec<String> = map.iter().filter(|(_, r)| !r.completing).map(|(id, _)| id.clone()).collect();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) = map.remove(&id) {
                if let Some(a) = r.abort {
                    a.abort();
                }
                out.push((id, r.attempt));
            }
        }
        out
    }

    pub fn is_fenced(&self) -> bool {
        self.fenced.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether so many finished attempts wait for the completer that acquiring more would only
    /// lengthen the queue (the database is slow or unreachable).
    pub fn completions_backlogged(&self) -> bool {
        self.pending_completions.load(Ordering::SeqCst) >= self.config.completion_batch.max(1) * 4
    }

    /// Forgets the queued jobs' leases locally and returns them, to be released: nothing of
    /// theirs has run.
    pub fn take_queued(&self) -> Vec<(String, i32)> {
        let queued = self.queue().take_all();
        let mut map = self.running_map();
        queued
            .into_iter()
            .filter(|(id, attempt)| {
                let held = map.get(id).is_some_and(|r| r.attempt == *attempt);
                if held {
                    map.remove(id);
                }
                held
            })
            .collect()
    }

    /// Waits until every lease this node holds is finished and its completion written (the
    /// running map empties only when the completer commits), or `grace` has passed.
    pub async fn wait_idle(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        loop {
            let notified = self.slot_freed.notified();
            if self.running_map().is_empty() {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let _ = tokio::time::timeout(left.min(Duration::from_millis(50)), notified).await;
        }
    }
}
