//! Acquisition (SPEC J2, J5; seed 001; LESSONS.md "Acquisition and throughput").
//!
//! The protocol, in the order a call runs it:
//!
//! 1. **Fast path** — one autocommit statement (`acquire_candidates.sql` + `acquire_take.sql`):
//!    lock up to `limit` candidates with `FOR UPDATE SKIP LOCKED`, and, if none of them is an
//!    exclusive job, lock them for the node, log the takeovers of expired leases and return
//!    the rows. One round trip; no explicit transaction. This is every acquisition of a plain
//!    job queue.
//! 2. **Exclusive path** — when candidates include exclusive jobs, `SKIP LOCKED` alone is not
//!    enough: two nodes can lock two *different* jobs of one key, each seeing no unexpired
//!    lease of the other (it is not committed yet). So, in one READ COMMITTED transaction:
//!    statement 1 again, which now also takes `pg_try_advisory_xact_lock` on each candidate
//!    key (a busy key drops its candidate; it never waits), then statement 2
//!    (`acquire_recheck.sql` + `acquire_take.sql`), whose fresh snapshot sees any acquisition
//!    that committed before our advisory lock was granted, re-checks "no unexpired lease on the
//!    key" and takes the rows. The advisory lock serialises the check-then-lock of one key
//!    across the cluster; the row locks and SKIP LOCKED keep everything else concurrent.
//!
//! A store that has just met exclusive candidates starts the next call at step 2 directly
//! (`exclusive_hint`), so a process-engine workload does not pay a wasted statement per poll.
//! No statement waits on a lock held by another acquisition, so there is nothing to deadlock
//! and, under READ COMMITTED, nothing to fail serialization.

use crate::error::DbResultExt;
use crate::rows::{self, get, opt_ts};
use jiff::Timestamp;
use kairos_store::{Acquired, AcquiredJob, Error, ErrorKind, JobAcquireParams, Result, Unreadable};
use sqlx::postgres::PgRow;
use sqlx::postgres::types::PgInterval;
use sqlx::{PgConnection, PgPool};
use std::sync::atomic::{AtomicBool, Ordering};

const CANDIDATES: &str = concat!(include_str!("sql/acquire_candidates.sql"), include_str!("sql/acquire_take.sql"));
const RECHECK: &str = concat!(include_str!("sql/acquire_recheck.sql"), include_str!("sql/acquire_take.sql"));
const SET_ASIDE: &str = include_str!("sql/job_set_aside.sql");

/// What one statement returned: jobs taken, or candidates kept for statement 2.
struct Round {
    db_now: Timestamp,
    taken: Vec<AcquiredJob>,
    /// Set when the statement met exclusive candidates and took nothing.
    kept_for_recheck: Option<Vec<String>>,
    /// Rows it locked that cannot be read.
    unreadable: Vec<Unreadable>,
}

pub(crate) async fn acquire(pool: &PgPool, exclusive_hint: &AtomicBool, params: &JobAcquireParams) -> Result<Acquired> {
    let lock_time = interval(params)?;
    let mut conn = pool.acquire().await.db()?;
    if !exclusive_hint.load(Ordering::Relaxed) {
        let round = candidates(&mut conn, params, &lock_time).await?;
        if round.kept_for_recheck.is_none() {
            set_aside(&mut conn, &round.unreadable, &params.node).await?;
            return Ok(Acquired { db_now: round.db_now, jobs: round.taken, set_aside: round.unreadable });
        }
        exclusive_hint.store(true, Ordering::Relaxed);
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await.db()?;
    let first = candidates(&mut tx, params, &lock_time).await?;
    let Some(kept) = first.kept_for_recheck else {
        set_aside(&mut tx, &first.unreadable, &params.node).await?;
        tx.commit().await.db()?;
        exclusive_hint.store(false, Ordering::Relaxed);
        return Ok(Acquired { db_now: first.db_now, jobs: first.taken, set_aside: first.unreadable });
    };
    let second = recheck(&mut tx, params, &lock_time, kept).await?;
    set_aside(&mut tx, &second.unreadable, &params.node).await?;
    tx.commit().await.db()?;
    Ok(Acquired { db_now: second.db_now, jobs: second.taken, set_aside: second.unreadable })
}

/// Moves rows this acquisition locked but cannot read to the dead letters as they are, each
/// saying why, so that acquisition does not meet them again and the other jobs run.
async fn set_aside(conn: &mut PgConnection, rows: &[Unreadable], node: &str) -> Result<()> {
    for row in rows {
        sqlx::query(SET_ASIDE).bind(&row.id).bind(row.set_aside_message(node)).execute(&mut *conn).await.db()?;
    }
    Ok(())
}

fn interval(params: &JobAcquireParams) -> Result<PgInterval> {
    let micros = params.lock_time.as_micros();
    match i64::try_from(micros) {
        Ok(microseconds) if microseconds > 0 => Ok(PgInterval { months: 0, days: 0, microseconds }),
        _ => Err(Error::new(ErrorKind::Invalid, format!("lock time {} must be positive", params.lock_time))),
    }
}

async fn candidates(conn: &mut PgConnection, params: &JobAcquireParams, lock_time: &PgInterval) -> Result<Round> {
    let found = sqlx::query(CANDIDATES)
        .bind(&params.node)
        .bind(i64::from(params.limit))
        .bind(lock_time)
        .bind(opt_ts(params.now))
        .bind(PgInterval {
            months: 0,
            days: 0,
            microseconds: i64::try_from(params.lookahead.as_micros().max(0)).unwrap_or(i64::MAX),
        })
        .fetch_all(&mut *conn)
        .await
        .db()?;
    round(&found)
}

async fn recheck(
    conn: &mut PgConnection,
    params: &JobAcquireParams,
    lock_time: &PgInterval,
    ids: Vec<String>,
) -> Result<Round> {
    let found = sqlx::query(RECHECK)
        .bind(&params.node)
        .bind(ids)
        .bind(lock_time)
        .bind(opt_ts(params.now))
        .fetch_all(&mut *conn)
        .await
        .db()?;
    round(&found)
}

/// Reads a statement's rows: the first column is the clock (always one row at least); a row
/// without a job id is the empty result.
fn round(found: &[PgRow]) -> Result<Round> {
    let db_now = match found.first() {
        Some(row) => rows::instant(row, "db_now_")?,
        None => return Err(Error::new(ErrorKind::Other, "acquisition returned no clock row")),
    };
    let mut taken = Vec::new();
    let mut kept = Vec::new();
    let mut unreadable = Vec::new();
    let mut has_exclusive = false;
    for row in found {
        if get::<Option<String>>(row, "id_")?.is_none() {
            continue;
        }
        if get::<bool>(row, "has_exclusive_")? {
            has_exclusive = true;
            kept.push(get(row, "id_")?);
        } else {
            match rows::job(row) {
                Ok(job) => taken.push(AcquiredJob { job, abandoned_by: get(row, "abandoned_by_")? }),
                Err(Error { kind: ErrorKind::Unreadable, unreadable: Some(u), .. }) => unreadable.push(*u),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(Round { db_now, taken, kept_for_recheck: has_exclusive.then_some(kept), unreadable })
}
