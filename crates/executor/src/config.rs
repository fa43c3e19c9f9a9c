//! Executor settings (SPEC J10). Defaults follow Activiti where it has one (5-minute lock,
//! 10-second retry wait, 3 retries) and otherwise favour low timer lateness.

use jiff::SignedDuration;
use kairos_core::{Clock, RetryPolicy};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// LOCK_OWNER_ of this node's leases; unique in the cluster.
    pub node_id: String,
    /// Handlers run at once on this node.
    pub workers: usize,
    /// At most this many jobs per acquisition.
    pub acquire_batch: usize,
    /// At most this many acquired jobs wait on this node for a free worker (the local queue,
    /// [`crate`]'s `queue` module): acquisition is not bound to the free workers, so short jobs
    /// drain at the database's pace rather than the worker count's. 0 turns it off.
    pub prefetch: usize,
    /// The local queue holds only what the workers are expected to start within this long (by
    /// the handler time measured here), so a node with long jobs does not lock work another
    /// node could run. Capped at a quarter of `lock_time`. Default 200 ms.
    pub prefetch_wait: Duration,
    /// Lease length (LOCK_EXP_TIME_ = now + lock_time); extended every third of it while the
    /// job runs.
    pub lock_time: SignedDuration,
    /// The longest the producer sleeps when idle. Work enqueued on another node is seen at most
    /// this late; timers are not (the producer wakes at the next due date).
    pub poll_interval: Duration,
    /// A handler running longer is cancelled and its attempt fails.
    pub handler_timeout: Duration,
    /// Acquisition also takes jobs due within this long, and each starts at its due date (by
    /// the database clock), not before: the round trip of acquiring is paid ahead instead of as
    /// lateness. Small, since a job so taken holds a worker slot while it waits. Default 100 ms.
    pub lookahead: SignedDuration,
    /// How often the node heartbeats and looks for dead nodes.
    pub heartbeat_interval: Duration,
    /// A node silent this long is declared dead and its leases expire at once.
    pub dead_after: SignedDuration,
    /// Completions written per transaction at most.
    pub completion_batch: usize,
    /// How long the completer waits to fill a batch after the first completion arrives.
    pub completion_delay: Duration,
    /// Completion batches written at once, on a store that takes concurrent writers
    /// (`Store::write_concurrency`: PostgreSQL; SQLite has one writer, so it always writes one
    /// at a time). A batch whose jobs staged effects (process commands, the
    /// scheduler's firings) runs those statements one after the other inside its transaction,
    /// so one writer caps such jobs at a few hundred per second; several writers overlap them.
    pub completion_writers: usize,
    pub retry_policy: RetryPolicy,
    /// This node's clock. Deliberately *not* used for due dates or leases — those are compared
    /// by the database (SPEC J9) — only shown to handlers as [`crate::JobContext::node_now`].
    /// Injected so tests can run a node whose clock is minutes off.
    pub clock: Arc<dyn Clock>,
}

impl ExecutorConfig {
    pub fn new(node_id: impl Into<String>) -> Self {
        ExecutorConfig {
            node_id: node_id.into(),
            workers: 32,
            acquire_batch: 512,
            prefetch: 1024,
            prefetch_wait: Duration::from_millis(200),
            lock_time: SignedDuration::from_mins(5),
            poll_interval: Duration::from_millis(500),
            handler_timeout: Duration::from_secs(300),
            lookahead: SignedDuration::from_millis(100),
            heartbeat_interval: Duration::from_secs(2),
            dead_after: SignedDuration::from_secs(10),
            completion_batch: 512,
            completion_delay: Duration::from_millis(2),
            completion_writers: 8,
            retry_policy: RetryPolicy::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// The interval of lease extension: a third of the lock time, at least 100 ms.
    pub fn lease_extend_interval(&self) -> Duration {
        let third = self.lock_time.unsigned_abs() / 3;
        third.max(Duration::from_millis(100))
    }
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}
