//! The end of attempts: batched completions, lease extension, and hand-back on shutdown.
//!
//! Every write here is fenced by the lease (job id + LOCK_OWNER_ + ATTEMPTS_), so a node that
//! lost its lease (paused, partitioned, declared dead) changes nothing (LESSONS.md "Leases").
//! Completions are batched the River way: one statement per kind of completion present in the
//! batch, whatever its size (a per-job transaction tops out near 5,000 jobs/s; a batch of 100
//! near 55,000). A batch of successes alone is a single autocommit statement.

use crate::error::DbResultExt;
use crate::rows::{bind_ts, get};
use kairos_core::outcome::truncate_chars;
use kairos_core::{Completion, EXCEPTION_MSG_MAX_CHARS, new_id};
use kairos_store::{JobCompletion, JobReleaseParams, LeaseExtendParams, Result};
use sqlx::postgres::types::PgInterval;
use sqlx::{Acquire, PgConnection, PgPool};
use std::collections::HashSet;

const DELETE: &str = include_str!("sql/complete_delete.sql");
const RESCHEDULE: &str = include_str!("sql/complete_reschedule.sql");
const RETRY: &str = include_str!("sql/complete_retry.sql");
const DEAD_LETTER: &str = include_str!("sql/complete_dead_letter.sql");
const LEASE_EXTEND: &str = include_str!("sql/lease_extend.sql");
const LEASE_STILL_OURS: &str = include_str!("sql/lease_still_ours.sql");
const LEASE_EXTEND_WAIT: &str = include_str!("sql/lease_extend_wait.sql");
const RELEASE: &str = include_str!("sql/job_release.sql");
const ALREADY_APPLIED: &str = include_str!("sql/complete_already_applied.sql");

/// MESSAGE_ and EXCEPTION_MSG_ are varchar(4000): longer text would fail the whole batch.
fn message(text: Option<&str>) -> Option<String> {
    text.map(|m| truncate_chars(m, EXCEPTION_MSG_MAX_CHARS))
}

/// One array per column for the completions of one kind; each statement binds the columns it
/// needs.
#[derive(Default)]
struct Columns {
    ids: Vec<String>,
    nodes: Vec<String>,
    attempts: Vec<i32>,
    log_ids: Vec<String>,
    started: Vec<jiff_sqlx::Timestamp>,
    finished: Vec<jiff_sqlx::Timestamp>,
    messages: Vec<Option<String>>,
    retries: Vec<i32>,
    dues: Vec<jiff_sqlx::Timestamp>,
    repeats: Vec<String>,
    stack_ids: Vec<String>,
    stacks: Vec<String>,
}

impl Columns {
    /// Adds one completion; returns the id of the log row it will write.
    fn push(&mut self, c: &JobCompletion) -> String {
        let log_id = new_id();
        self.ids.push(c.job_id.clone());
        self.nodes.push(c.node.clone());
        self.attempts.push(c.attempt);
        self.log_ids.push(log_id.clone());
        self.started.push(bind_ts(c.started));
        self.finished.push(bind_ts(c.finished));
        self.messages.push(message(c.completion.log_message()));
        match &c.completion {
            Completion::Delete { .. } => {}
            Completion::Reschedule { repeat, due, .. } => {
                self.repeats.push(repeat.clone());
                self.dues.push(bind_ts(*due));
            }
            Completion::Retry { retries, due, stack, .. } => {
                self.retries.push(*retries);
                self.dues.push(bind_ts(*due));
                self.stack_ids.push(new_id());
                self.stacks.push(stack.clone());
            }
            Completion::DeadLetter { stack, .. } => {
                self.stack_ids.push(new_id());
                self.stacks.push(stack.clone());
            }
        }
        log_id
    }

    fn query(self, kind: Kind) -> sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments> {
        let q = sqlx::query(kind.sql())
            .bind(self.ids)
            .bind(self.nodes)
            .bind(self.attempts)
            .bind(self.log_ids)
            .bind(self.started)
            .bind(self.finished)
            .bind(self.messages);
        match kind {
            Kind::Delete => q,
            Kind::Reschedule => q.bind(self.repeats).bind(self.dues),
            Kind::Retry => q.bind(self.retries).bind(self.dues).bind(self.stack_ids).bind(self.stacks),
            Kind::DeadLetter => q.bind(self.stack_ids).bind(self.stacks),
        }
    }
}

/// The four ways an attempt ends, each one statement.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Delete,
    Reschedule,
    Retry,
    DeadLetter,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Delete, Kind::Reschedule, Kind::Retry, Kind::DeadLetter];

    fn of(c: &Completion) -> Kind {
        match c {
            Completion::Delete { .. } => Kind::Delete,
            Completion::Reschedule { .. } => Kind::Reschedule,
            Completion::Retry { .. } => Kind::Retry,
            Completion::DeadLetter { .. } => Kind::DeadLetter,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            Kind::Delete => DELETE,
            Kind::Reschedule => RESCHEDULE,
            Kind::Retry => RETRY,
            Kind::DeadLetter => DEAD_LETTER,
        }
    }
}

pub(crate) async fn complete_many(pool: &PgPool, completions: &[JobCompletion]) -> Result<Vec<bool>> {
    if completions.is_empty() {
        return Ok(Vec::new());
    }
    // A lease listed twice is completed once: the first entry counts, repeats answer `false`.
    let mut seen = HashSet::new();
    let mut log_ids: Vec<Option<String>> = Vec::with_capacity(completions.len());
    let mut columns: [Columns; 4] = Default::default();
    for c in completions {
        if seen.insert((c.job_id.as_str(), c.node.as_str(), c.attempt)) {
            log_ids.push(Some(columns[Kind::of(&c.completion) as usize].push(c)));
        } else {
            log_ids.push(None);
        }
    }
    let present: Vec<(Kind, Columns)> =
        Kind::ALL.into_iter().zip(columns).filter(|(_, cols)| !cols.ids.is_empty()).collect();
    let mut conn = pool.acquire().await.db()?;
    let mut applied = HashSet::new();
    let has_effects = completions.iter().any(|c| !c.effects.is_empty());
    if present.len() == 1 && !has_effects {
        // One statement is atomic on its own: no BEGIN/COMMIT round trips.
        for (kind, cols) in present {
            applied.extend(run(&mut conn, kind, cols).await?);
        }
    } else {
        let mut tx = conn.begin().await.db()?;
        for (kind, cols) in present {
            applied.extend(run(&mut tx, kind, cols).await?);
        }
        // The handlers' staged writes, in this transaction and only for completions whose
        // lease held: a job's own effects happen exactly once. When every effect commutes
        // (`Write::commutes`: the engine's own, guarded by checked writes) they run as rounds
        // — the first effect of every job, then the second… — and a round's single-row
        // statements of one text are merged (kairos_store::coalesce): a batch of 500 firings
        // is a handful of statements, not 2,000 round trips. Otherwise job by job, in order.
        let staged: Vec<&[kairos_store::JobEffect]> = completions
            .iter()
            .zip(&log_ids)
            .filter(|(_, log_id)| log_id.as_ref().is_some_and(|id| applied.contains(id)))
            .map(|(c, _)| c.effects.as_slice())
            .collect();
        let merge = staged.iter().all(|e| e.iter().all(|w| w.commutes));
        let rounds: Vec<Vec<kairos_store::JobEffect>> = if merge {
            let n = staged.iter().map(|e| e.len()).max().unwrap_or(0);
            (0..n).map(|k| staged.iter().filter_map(|e| e.get(k).cloned()).collect()).collect()
        } else {
            staged.iter().map(|e| e.to_vec()).collect()
        };
        for (k, round) in rounds.into_iter().enumerate() {
            for e in if merge { kairos_store::coalesce(round) } else { round } {
                // A merged insert's text depends on its row count: not worth a cached plan.
                let cached = !kairos_store::varies_with_rows(&e);
                let n = crate::operator_sql::execute_effect(&mut tx, &e.sql, &e.binds, cached).await?;
                if let Some(want) = e.expect.filter(|&want| want != n) {
                    return Err(kairos_store::write_conflict(k, &e, want, n));
                }
            }
        }
        tx.commit().await.db()?;
    }
    // Each applied completion wrote its own log row, so its log id says which entry applied.
    let mut answer: Vec<bool> = log_ids.iter().map(|id| id.as_ref().is_some_and(|id| applied.contains(id))).collect();
    let refused: Vec<usize> = (0..completions.len()).filter(|&i| log_ids[i].is_some() && !answer[i]).collect();
    for i in already_applied(&mut conn, completions, &refused).await? {
        answer[i] = true;
    }
    Ok(answer)
}

/// Those of `refused` (positions in `completions`) that an earlier call applied (see the SQL).
async fn already_applied(
    conn: &mut PgConnection,
    completions: &[JobCompletion],
    refused: &[usize],
) -> Result<Vec<usize>> {
    if refused.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = refused.iter().map(|&i| completions[i].job_id.as_str()).collect();
    let attempts: Vec<i32> = refused.iter().map(|&i| completions[i].attempt).collect();
    let nodes: Vec<&str> = refused.iter().map(|&i| completions[i].node.as_str()).collect();
    let rows = sqlx::query(ALREADY_APPLIED).bind(ids).bind(attempts).bind(nodes).fetch_all(&mut *conn).await.db()?;
    rows.iter()
        .map(|row| {
            let k: i64 = get(row, "i_")?;
            Ok(refused[usize::try_from(k - 1).unwrap_or(0)])
        })
        .collect()
}

/// Runs one kind's statement; returns the log ids of the completions it applied.
async fn run(conn: &mut PgConnection, kind: Kind, cols: Columns) -> Result<Vec<String>> {
    let rows = cols.query(kind).fetch_all(&mut *conn).await.db()?;
    rows.iter().map(|row| get(row, "log_id_")).collect()
}

pub(crate) async fn lease_extend(pool: &PgPool, params: &LeaseExtendParams) -> Result<Vec<String>> {
    if params.jobs.is_empty() {
        return Ok(Vec::new());
    }
    let (ids, attempts): (Vec<String>, Vec<i32>) = params.jobs.iter().cloned().unzip();
    let lock_time = PgInterval {
        months: 0,
        days: 0,
        microseconds: i64::try_from(params.lock_time.as_micros()).unwrap_or(i64::MAX),
    };
    let rows = sqlx::query(LEASE_EXTEND)
        .bind(&params.node)
        .bind(&ids)
        .bind(&attempts)
        .bind(lock_time)
        .bind(params.start)
        .fetch_all(pool)
        .await
        .db()?;
    let mut kept: Vec<String> = rows.iter().map(|r| get(r, "id_")).collect::<Result<_>>()?;
    if kept.len() == ids.len() {
        return Ok(kept);
    }
    // Rows the statement skipped because another transaction held them locked (an operator's
    // UPDATE, a completion batch) are not lost leases: those the committed state still shows
    // as ours are extended one by one, each waiting for its row (bounded by the session's
    // lock_timeout; an error then, never "lost"). One row per statement holds no lock while it
    // waits, so this cannot deadlock with a batch locking rows in another order.
    let missing: (Vec<String>, Vec<i32>) = ids.into_iter().zip(attempts).filter(|(id, _)| !kept.contains(id)).unzip();
    let ours = sqlx::query(LEASE_STILL_OURS)
        .bind(&params.node)
        .bind(&missing.0)
        .bind(&missing.1)
        .fetch_all(pool)
        .await
        .db()?;
    for row in &ours {
        let (id, attempt): (String, i32) = (get(row, "id_")?, get(row, "attempts_")?);
        let extended = sqlx::query(LEASE_EXTEND_WAIT)
            .bind(&params.node)
            .bind(&id)
            .bind(attempt)
            .bind(lock_time)
            .bind(params.start)
            .fetch_optional(pool)
            .await
            .db()?;
        if extended.is_some() {
            kept.push(id);
        }
    }
    Ok(kept)
}

pub(crate) async fn release(pool: &PgPool, params: &JobReleaseParams) -> Result<u64> {
    if params.jobs.is_empty() {
        return Ok(0);
    }
    let (ids, attempts): (Vec<String>, Vec<i32>) = params.jobs.iter().cloned().unzip();
    let log_ids: Vec<String> = ids.iter().map(|_| new_id()).collect();
    let rows = sqlx::query(RELEASE)
        .bind(&params.node)
        .bind(ids)
        .bind(attempts)
        .bind(log_ids)
        .bind(message(Some(&params.reason)))
        .fetch_all(pool)
        .await
        .db()?;
    Ok(rows.len() as u64)
}
