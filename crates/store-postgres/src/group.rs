//! Group commit: write lists of plain inserts that arrive while earlier ones are being written
//! are written together, as one statement.
//!
//! Why: starting a process instance is one such list (its execution rows, history rows and
//! first job), and concurrent starts are independent. Alone, each costs PostgreSQL a statement
//! with five inserts, a commit and a WAL flush; sixteen starts in flight cost sixteen of each.
//! Together they are five multi-row inserts, one commit and one flush (measured with
//! `kairos bench process --mode async`; see docs/processes.md, "Speed").
//!
//! How: at most [`IN_FLIGHT`] batches run at once. A list that finds a free slot starts a batch
//! at once (alone when nothing waits: no added latency); lists arriving while every slot is
//! busy queue, and the next batch takes all of them. A batch runs on its own task, so a caller
//! that stops waiting (a dropped request) never leaves the others without an answer.
//!
//! Why it is the same as one statement each: every list commits whole or not at all, as
//! before. The lists of a batch commit together, which is stronger than each alone; when the
//! batch fails (a value one list got wrong, a duplicate key), each list runs again on its own,
//! so only the list at fault sees the error. Plain single inserts affect exactly their rows or
//! fail, so each list's row counts are known without reading them back.

use crate::fuse;
use kairos_store::{Error, ErrorKind, Result, Write};
use sqlx::PgPool;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

/// Batches written at once. One batch writes while the next one fills; a second keeps a core
/// busy while the first waits for its commit.
const IN_FLIGHT: usize = 2;

/// At most this many lists per batch (a start is ~80 parameters: 64 stay far below the fused
/// statement's limit, and one failed batch re-runs at most 64 lists).
const MAX_LISTS: usize = 64;

/// The queue of lists waiting for a batch; shared by a store's clones.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    waiting: Vec<Pending>,
    running: usize,
}

/// One caller's list and where its answer goes.
#[derive(Debug)]
struct Pending {
    writes: Vec<Write>,
    reply: oneshot::Sender<Result<Vec<u64>>>,
}

/// Whether `writes` may join a batch: plain inserts of literal rows only, no checked counts.
pub(crate) fn eligible(writes: &[Write]) -> bool {
    // `fusable` includes that the insert's rows can be counted (`fuse::rows`).
    !writes.is_empty() && writes.iter().all(|w| w.expect.is_none() && fuse::fusable(w))
}

impl GroupCommit {
    /// Writes `writes` (which must be [`eligible`]) in the next batch; the rows each affected.
    pub(crate) async fn write(self: &Arc<Self>, pool: &PgPool, writes: &[Write]) -> Result<Vec<u64>> {
        let (reply, answer) = oneshot::channel();
        let batch = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.waiting.push(Pending { writes: writes.to_vec(), reply });
            (state.running < IN_FLIGHT).then(|| {
                state.running += 1;
                take_batch(&mut state.waiting)
            })
        };
        if let Some(batch) = batch {
            tokio::spawn(drive(Arc::clone(self), pool.clone(), batch));
        }
        answer.await.unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Unavailable,
                "the batch writing these rows ended without an answer; they may or may not be committed",
            ))
        })
    }
}

/// The next batch: the oldest waiting lists, as many as the largest power of two that are
/// waiting, up to [`MAX_LISTS`]. Batches of a few sizes only make statements of a few texts
/// (lists of one kind, such as starts of one process, merge alike), which each session then
/// keeps prepared and plans once; a text per size would be planned on every batch.
fn take_batch(waiting: &mut Vec<Pending>) -> Vec<Pending> {
    let n = 1 << waiting.len().clamp(1, MAX_LISTS).ilog2();
    waiting.drain(..n.min(waiting.len())).collect()
}

/// Holds one of the [`IN_FLIGHT`] slots: writes `batch`, then whatever queued meanwhile, until
/// nothing waits. Each batch is written on a task of its own: should it panic, its callers are
/// answered (Unavailable: their rows may or may not be committed) and the lists queued behind
/// it are still written, by this loop, rather than waiting for a next caller.
async fn drive(group: Arc<GroupCommit>, pool: PgPool, mut batch: Vec<Pending>) {
    loop {
        if let Err(e) = tokio::spawn(write_batch(pool.clone(), batch)).await {
            tracing::error!(error = %e, "a group commit panicked; its callers were told it may not be committed");
        }
        let mut state = group.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.waiting.is_empty() {
            // Under the same lock as the check: a list queued after it finds the slot free.
            state.running -= 1;
            return;
        }
        batch = take_batch(&mut state.waiting);
    }
}

/// Writes the lists of `batch` as one statement, or each on its own if that fails.
async fn write_batch(pool: PgPool, mut batch: Vec<Pending>) {
    let pool = &pool;
    if batch.len() == 1 {
        let one = batch.remove(0);
        let _ = one.reply.send(crate::operator_sql::engine_write_all(pool, &one.writes, true).await);
        return;
    }
    let all: Vec<Write> = batch.iter().flat_map(|p| p.writes.iter().cloned()).collect();
    match crate::operator_sql::engine_write_all(pool, &kairos_store::coalesce(all), true).await {
        Ok(_) => {
            for p in batch {
                let counts = p.writes.iter().map(|w| fuse::rows(w).unwrap_or(1) as u64).collect();
                let _ = p.reply.send(Ok(counts));
            }
        }
        Err(e) => {
            tracing::debug!(lists = batch.len(), error = %e, "a group commit failed; writing its lists one by one");
            for p in batch {
                let _ = p.reply.send(crate::operator_sql::engine_write_all(pool, &p.writes, true).await);
            }
        }
    }
}
