//! The job executor of kairos (SPEC J2–J10).
//!
//! Four loops share one lifecycle (start → run → drain on shutdown):
//!
//! * the **producer** ([`producer`]) acquires as many jobs as there are free workers plus room
//!   in the bounded local **queue** ([`queue`], timers first), and when idle sleeps until the
//!   next due date (by the database clock) or a wake-up;
//! * **runners** ([`runner`]) run one handler each, with a timeout, turning panics and timeouts
//!   into failed attempts, then ask the pure core what to write;
//! * the **completer** ([`completer`]) writes finished attempts in batches, each fenced by its
//!   lease (River's completer is the model: batching is what lets a queue pass a few thousand
//!   jobs per second);
//! * the **keeper** ([`keeper`]) extends the leases of running jobs, heartbeats the node,
//!   declares silent nodes dead so their jobs are taken over early, and stops this node's own
//!   work when it cannot reach the database for longer than a lease (a node that cannot renew
//!   must not keep working — Quartz #176).
//!
//! Side effects happen after commit: a handler runs only on a job whose lock is committed, and
//! nothing about an attempt is reported as done before the completer's transaction commits.

mod builtin;
mod completer;
mod config;
mod handler;
mod keeper;
mod metrics;
mod producer;
mod queue;
mod runner;
mod shared;

pub use builtin::register_builtins;
pub use config::{ExecutorConfig, SystemClock};
pub use handler::{Answer, Handler, HandlerError, Handlers, JobContext, handler_fn};
pub use metrics::Metrics;

use shared::Shared;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// A running executor. Dropping it does not stop it; call [`Executor::shutdown`].
#[derive(Debug)]
pub struct Executor {
    shared: Arc<Shared>,
    producer: JoinHandle<()>,
    keeper: JoinHandle<()>,
    completer: JoinHandle<()>,
}

impl Executor {
    /// Starts the loops. The node registers itself before the first acquisition, expiring any
    /// lease a previous incarnation left under its id.
    pub async fn start(
        store: Arc<dyn kairos_store::Store>,
        handlers: Arc<Handlers>,
        config: ExecutorConfig,
        metrics: Arc<Metrics>,
    ) -> Result<Executor, kairos_store::Error> {
        let (shared, completions) = Shared::new(store, handlers, config, metrics);
        keeper::register(&shared).await?;
        let completer = tokio::spawn(completer::run(shared.clone(), completions));
        let keeper = tokio::spawn(keeper::run(shared.clone()));
        let producer = tokio::spawn(producer::run(shared.clone()));
        Ok(Executor { shared, producer, keeper, completer })
    }

    /// Tells the producer to look for work now (a job was just enqueued on this node).
    pub fn wake(&self) {
        self.shared.wake.notify_one();
    }

    /// A cheap handle that can wake the producer from elsewhere.
    pub fn waker(&self) -> Waker {
        Waker(self.shared.clone())
    }

    /// How many leases this node holds now: attempts running or being written, and jobs in its
    /// local queue.
    pub fn running(&self) -> usize {
        self.shared.running_count()
    }

    /// Graceful shutdown (SIGTERM): stop acquiring, hand the queued jobs back at once, let
    /// running jobs finish for up to `grace`, hand the rest back (their leases released, no
    /// retry spent), flush completions and mark the node stopped.
    pub async fn shutdown(self, grace: Duration) {
        let shared = self.shared.clone();
        shared.stop_acquiring.cancel();
        let _ = self.producer.await;
        runner::hand_back_queued(&shared).await;
        // Slots come back only when a completion is written, so "idle" means every finished
        // attempt is committed.
        shared.wait_idle(grace).await;
        runner::hand_back_all(&shared).await;
        shared.stop.cancel();
        let _ = self.completer.await;
        let _ = self.keeper.await;
        if let Err(e) = shared.store.node_stop(&shared.config.node_id).await {
            tracing::warn!(error = %e, "could not mark the node stopped");
        }
    }

    /// Simulates a crash for tests: every loop stops at once, nothing is handed back or
    /// flushed, the node is not marked stopped. Its leases stay in the database until they
    /// expire or the node is declared dead — what SIGKILL leaves behind.
    pub fn abort(self) {
        self.shared.abort_all_runners();
        self.producer.abort();
        self.keeper.abort();
        self.completer.abort();
    }
}

/// Wakes an executor's producer; cheap to clone.
#[derive(Debug, Clone)]
pub struct Waker(Arc<Shared>);

impl Waker {
    pub fn wake(&self) {
        self.0.wake.notify_one();
    }
}
