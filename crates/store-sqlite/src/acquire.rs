//! Acquisition (SPEC J2, seed 001): locking executable jobs for one node.
//!
//! One `BEGIN IMMEDIATE` transaction. SQLite has a single writer, so once the transaction holds
//! the write lock nobody else can change ACT_RU_JOB: choosing candidates and locking them is
//! atomic, and no two nodes can lock the same row (seed 000 §3.2).
//!
//! Statements per call, whatever the batch size: the database now, the candidates (one JSON row),
//! the lock, the locked rows (one JSON row); take-overs add a log insert, and take-overs on a
//! last retry a move to the dead letters.

use crate::errors::{corrupt, db_err};
use crate::joblog::{JobFacts, LogRow, insert_log_rows};
use crate::time::{from_text, to_text};
use crate::{SqliteStore, WriteTx, now_on, rows};
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobLogOutcome};
use kairos_store::{Acquired, AcquiredJob, Error, ErrorKind, JobAcquireParams, Result, Unreadable};
use serde_json::json;
use serde_json::value::RawValue;
use sqlx::SqliteConnection;
use std::collections::{HashMap, HashSet};

const OP: &str = "job_acquire";

/// A job acquisition takes (or dead-letters), with its lock as it was before.
struct Candidate {
    id: String,
    prev_owner: Option<String>,
    prev_attempts: i32,
    prev_lock_time: Option<Timestamp>,
    prev_lock_exp: Option<Timestamp>,
    /// Whether the previous owner's handler had started (see `job_acquire_lock.sql`).
    prev_started: bool,
}

/// One candidate as the candidate query encodes it: [ID_, EXCLUSIVE_, EXCLUSIVE_KEY_,
/// LOCK_OWNER_, ATTEMPTS_, LOCK_TIME_, LOCK_EXP_TIME_, RETRIES_, STARTED_].
type CandidateJson = (String, i64, Option<String>, Option<String>, i32, Option<String>, Option<String>, i32, i64);

/// What one look at the candidates decided.
#[derive(Default)]
struct Choice {
    /// To lock, in due order.
    take: Vec<Candidate>,
    /// Expired leases on their last retry: to the dead letters, not run again.
    exhausted: Vec<Candidate>,
    /// Ids of candidates whose columns cannot be read: to be set aside, not locked.
    unreadable: Vec<String>,
}

/// `now + d`, or an `Invalid` error naming the parameter when it leaves the calendar.
pub(crate) fn add(now: Timestamp, d: SignedDuration, what: &str) -> Result<Timestamp> {
    now.checked_add(d).map_err(|e| Error::new(ErrorKind::Invalid, format!("{what} {d:?} from {now}: {e}")))
}

/// Whole job rows by id (`ids`: a JSON array), fetched as one JSON value; and those that
/// cannot be read.
async fn jobs_by_id(conn: &mut SqliteConnection, ids: &str) -> Result<(Vec<Job>, Vec<Unreadable>)> {
    let row = sqlx::query(include_str!("sql/job_get_many_json.sql"))
        .bind(ids)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_err(OP))?;
    rows::jobs_from_json(&rows::text(&row, "JOBS_")?)
}

fn ids_json(cs: &[Candidate]) -> String {
    json!(cs.iter().map(|c| &c.id).collect::<Vec<_>>()).to_string()
}

/// The ACT_HI_JOB_LOG row of the attempt whose expired lease `c` was: `abandoned`, or
/// `not-started` when its handler never started (then it was no attempt and spent no retry).
fn abandoned(c: &Candidate, job: &Job, message: String) -> Result<Option<LogRow>> {
    let Some(prev) = &c.prev_owner else { return Ok(None) };
    if !c.prev_started {
        return Ok(Some(LogRow {
            job: JobFacts::of_job(job)?,
            attempt: c.prev_attempts,
            node: Some(prev.clone()),
            start: c.prev_lock_time,
            end: c.prev_lock_exp,
            outcome: JobLogOutcome::NotStarted,
            message: Some(format!(
                "node {prev}'s lease expired before the handler started (the job was taken ahead of its due date); not counted as an attempt"
            )),
        }));
    }
    Ok(Some(LogRow {
        job: JobFacts::of_job(job)?,
        attempt: c.prev_attempts,
        node: Some(prev.clone()),
        start: c.prev_lock_time,
        end: c.prev_lock_exp,
        outcome: JobLogOutcome::Abandoned,
        message: Some(message),
    }))
}

impl SqliteStore {
    pub(crate) async fn acquire(&self, p: &JobAcquireParams) -> Result<Acquired> {
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, p.now, OP).await?;
        let limit = usize::try_from(p.limit).unwrap_or(usize::MAX);
        let horizon = add(now, p.lookahead.max(SignedDuration::ZERO), "lookahead")?;
        let choice = if limit == 0 { Choice::default() } else { choose(&mut w, now, horizon, limit).await? };
        let mut set_aside = Vec::new();
        if !choice.unreadable.is_empty() {
            set_aside = jobs_by_id(&mut w.tx, &json!(choice.unreadable).to_string()).await?.1;
        }
        let mut log = dead_letter_exhausted(&mut w.tx, &choice.exhausted, &p.node, &mut set_aside).await?;

        let mut jobs = Vec::with_capacity(choice.take.len());
        if !choice.take.is_empty() {
            let ids = ids_json(&choice.take);
            sqlx::query(include_str!("sql/job_acquire_lock.sql"))
                .bind(&ids)
                .bind(&p.node)
                .bind(to_text(now)?)
                .bind(to_text(add(now, p.lock_time, "lock time")?)?)
                .execute(&mut *w.tx)
                .await
                .map_err(db_err(OP))?;
            let (locked, unreadable) = jobs_by_id(&mut w.tx, &ids).await?;
            set_aside.extend(unreadable);
            let mut by_id: HashMap<String, Job> = locked.into_iter().map(|j| (j.id.clone(), j)).collect();
            for c in choice.take {
                let Some(job) = by_id.remove(&c.id) else { continue };
                let message = format!("the lease expired; node {} took the job over", p.node);
                log.extend(abandoned(&c, &job, message)?);
                jobs.push(AcquiredJob { job, abandoned_by: c.prev_owner });
            }
        }
        insert_log_rows(&mut w.tx, &log, OP).await?;
        set_rows_aside(&mut w.tx, &set_aside, &p.node).await?;
        // Committed even when nothing was taken (nothing written, so no sync): a dropped
        // transaction would roll back only after the next writer had queued behind it.
        w.commit(OP).await?;
        Ok(Acquired { db_now: now, jobs, set_aside })
    }
}

/// Moves rows that cannot be read to the dead letters as they are, each saying why, so that
/// acquisition does not meet them again (a row it took the lock of first comes out unlocked).
async fn set_rows_aside(conn: &mut SqliteConnection, rows: &[Unreadable], node: &str) -> Result<()> {
    for row in rows {
        sqlx::query(include_str!("sql/job_set_aside.sql"))
            .bind(&row.id)
            .bind(row.set_aside_message(node))
            .execute(&mut *conn)
            .await
            .map_err(db_err(OP))?;
        sqlx::query(include_str!("sql/job_delete_runtime.sql"))
            .bind(&row.id)
            .execute(&mut *conn)
            .await
            .map_err(db_err(OP))?;
    }
    Ok(())
}

/// Moves jobs whose expired lease was their last retry to the dead letters (docs/jobs.md: the
/// abandoned attempt spent it, so they do not run again); returns their abandoned log rows.
///
/// One that cannot be read is not buried but joins `set_aside`.
async fn dead_letter_exhausted(
    conn: &mut SqliteConnection,
    exhausted: &[Candidate],
    node: &str,
    set_aside: &mut Vec<Unreadable>,
) -> Result<Vec<LogRow>> {
    if exhausted.is_empty() {
        return Ok(Vec::new());
    }
    let (readable, unreadable) = jobs_by_id(conn, &ids_json(exhausted)).await?;
    let exhausted: Vec<&Candidate> = exhausted.iter().filter(|c| !unreadable.iter().any(|u| u.id == c.id)).collect();
    set_aside.extend(unreadable);
    if exhausted.is_empty() {
        return Ok(Vec::new());
    }
    let ids = json!(exhausted.iter().map(|c| &c.id).collect::<Vec<_>>()).to_string();
    let by_id: HashMap<String, Job> = readable.into_iter().map(|j| (j.id.clone(), j)).collect();
    for sql in [include_str!("sql/job_acquire_deadletter.sql"), include_str!("sql/job_delete_many.sql")] {
        sqlx::query(sql).bind(&ids).execute(&mut *conn).await.map_err(db_err(OP))?;
    }
    let mut log = Vec::with_capacity(exhausted.len());
    for c in exhausted {
        let Some(job) = by_id.get(&c.id) else { continue };
        let message = format!("the lease expired on the last retry; node {node} moved the job to the dead letters");
        log.extend(abandoned(c, job, message)?);
    }
    Ok(log)
}

/// The jobs to lock: candidates in due order, at most one per exclusive key, at most `limit`;
/// and the expired leases on their last retry, which are not run again.
///
/// The candidate query is asked for `limit` rows first; only when jobs were set aside (a shared
/// exclusive key, no retry left) and the query may have more does it ask again for a larger
/// window. Everything runs under the write lock, so repeated reads see the same rows.
async fn choose(w: &mut WriteTx<'_>, now: Timestamp, horizon: Timestamp, limit: usize) -> Result<Choice> {
    let now_text = to_text(now)?;
    let horizon_text = to_text(horizon)?;
    let mut window = limit;
    loop {
        let row = sqlx::query(include_str!("sql/job_acquire_candidates.sql"))
            .bind(&now_text)
            .bind(i64::try_from(window).unwrap_or(i64::MAX))
            .bind(&horizon_text)
            .fetch_one(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        let fetched = usize::try_from(rows::count(&row, "FETCHED_")?).unwrap_or(usize::MAX);
        let candidates = rows::text(&row, "CANDIDATES_")?;
        let window_rows: Vec<&RawValue> = serde_json::from_str(&candidates)
            .map_err(|e| corrupt(format!("acquisition candidates cannot be read: {e}")))?;
        let mut keys = HashSet::new();
        let mut choice = Choice { take: Vec::with_capacity(limit.min(fetched)), ..Choice::default() };
        for raw in window_rows {
            let Some((c, exclusive, key, retries)) = candidate(raw) else {
                // A column of it cannot be read: set aside, with its whole row, by the caller.
                let values: Vec<serde_json::Value> = serde_json::from_str(raw.get()).unwrap_or_default();
                choice.unreadable.extend(values.first().and_then(rows::raw_text));
                continue;
            };
            if c.prev_owner.is_some() && c.prev_started && retries <= 1 {
                choice.exhausted.push(c);
                continue;
            }
            if exclusive != 0
                && let Some(k) = key
                && !keys.insert(k)
            {
                continue;
            }
            choice.take.push(c);
            if choice.take.len() == limit {
                break;
            }
        }
        if choice.take.len() == limit || fetched < window {
            return Ok(choice);
        }
        window = window.saturating_mul(4);
    }
}

/// One candidate of the candidate query with its EXCLUSIVE_, EXCLUSIVE_KEY_ and RETRIES_;
/// `None` when a column of it cannot be read.
fn candidate(raw: &RawValue) -> Option<(Candidate, i64, Option<String>, i32)> {
    let (id, exclusive, key, prev_owner, prev_attempts, lock_time, lock_exp, retries, started): CandidateJson =
        serde_json::from_str(raw.get()).ok()?;
    let c = Candidate {
        id,
        prev_attempts,
        prev_started: started != 0,
        prev_lock_time: lock_time.as_deref().map(from_text).transpose().ok()?,
        prev_lock_exp: lock_exp.as_deref().map(from_text).transpose().ok()?,
        prev_owner,
    };
    Some((c, exclusive, key, retries))
}
