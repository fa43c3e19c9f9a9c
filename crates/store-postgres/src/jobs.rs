//! Jobs one at a time and in bulk: enqueue (also inside the caller's own transaction, SPEC C1),
//! read, list, delete, "execute now", dead-letter move-back and stack traces.

use crate::error::{DbResultExt, db};
use crate::rows::{self, bind_ts};
use crate::tables::PerTable;
use jiff::Timestamp;
use kairos_core::enqueue::Due;
use kairos_core::{Job, JobTable, NewJob};
use kairos_store::{Error, ErrorKind, JobFilter, NextDue, Page, Result};
use sqlx::{Acquire, PgConnection, PgPool};
use std::sync::LazyLock;

const DB_NOW: &str = include_str!("sql/db_now.sql");
const INSERT: &str = include_str!("sql/job_insert.sql");
const INSERT_MANY: &str = include_str!("sql/job_insert_many.sql");
const EXECUTE_NOW: &str = include_str!("sql/job_execute_now.sql");
const NEXT_DUE: &str = include_str!("sql/job_next_due.sql");
const DEADLETTER_MOVE: &str = include_str!("sql/deadletter_move.sql");
const DEADLETTER_LOCK: &str = include_str!("sql/deadletter_lock.sql");

static GET: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_get.sql")));
static LIST: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_list.sql")));
static COUNT: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_count.sql")));
static DELETE: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_delete.sql")));
static UNREADABLE: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_unreadable.sql")));
static STACKTRACE: LazyLock<PerTable> = LazyLock::new(|| PerTable::new(include_str!("sql/job_stacktrace.sql")));

/// Rows per INSERT of a bulk enqueue: large enough that statement overhead vanishes, small
/// enough that one statement's arrays stay a few megabytes.
const INSERT_CHUNK: usize = 5_000;

pub(crate) async fn db_now<'c, E: sqlx::PgExecutor<'c>>(executor: E) -> Result<Timestamp> {
    let row = sqlx::query(DB_NOW).fetch_one(executor).await.db()?;
    rows::instant(&row, "now_")
}

/// Whether the due date depends on the database clock in a way SQL cannot express (ISO 8601
/// durations and cycles are computed by kairos-time, not by PostgreSQL's interval arithmetic).
fn needs_clock(due: &Due) -> bool {
    matches!(due, Due::In(_) | Due::Cycle(_))
}

/// The DUEDATE_ to bind: `None` means "the database's now" (resolved in SQL).
fn resolve_due(job: &NewJob, db_now: Option<Timestamp>) -> Result<Option<Timestamp>> {
    match (&job.due, db_now) {
        (Due::Now, _) => Ok(None),
        (Due::At(t), _) => Ok(Some(*t)),
        (due, Some(now)) => match due.resolve(now)? {
            Some(t) => Ok(Some(t)),
            None => Err(Error::new(
                ErrorKind::Invalid,
                format!("job {}: the repeat cycle has no fire left (its end has passed)", job.id),
            )),
        },
        (_, None) => Err(Error::new(ErrorKind::Other, "a relative due date needs the database clock")),
    }
}

/// Enqueues `job` on the caller's connection, inside whatever transaction the caller has open
/// (SPEC C1): business rows and the job commit or roll back together. A relative due date is
/// resolved against `now()` of that same transaction.
pub async fn job_insert_in(conn: &mut PgConnection, job: &NewJob) -> Result<Job> {
    job.check_columns()?;
    let now = if needs_clock(&job.due) { Some(db_now(&mut *conn).await?) } else { None };
    let due = resolve_due(job, now)?;
    let row = sqlx::query(INSERT)
        .bind(&job.id)
        .bind(job.job_type.as_str())
        .bind(job.exclusive)
        .bind(&job.exclusive_key)
        .bind(&job.execution_id)
        .bind(&job.process_instance_id)
        .bind(&job.proc_def_id)
        .bind(&job.element_id)
        .bind(&job.element_name)
        .bind(job.retries)
        .bind(due.map(bind_ts))
        .bind(&job.repeat)
        .bind(&job.retry_cycle)
        .bind(&job.handler_type)
        .bind(&job.handler_cfg)
        .bind(&job.tenant_id)
        .fetch_one(&mut *conn)
        .await
        .db()?;
    rows::job(&row)
}

/// One job. A due date that needs the clock takes a transaction (read now, insert); the common
/// cases are one autocommit statement.
pub(crate) async fn insert(pool: &PgPool, job: &NewJob) -> Result<Job> {
    let mut conn = pool.acquire().await.db()?;
    if !needs_clock(&job.due) {
        return job_insert_in(&mut conn, job).await;
    }
    let mut tx = conn.begin().await.db()?;
    let stored = job_insert_in(&mut tx, job).await?;
    tx.commit().await.db()?;
    Ok(stored)
}

/// Many jobs in one transaction, [`INSERT_CHUNK`] rows per statement, one array per column.
pub(crate) async fn insert_many(pool: &PgPool, jobs: &[NewJob]) -> Result<u64> {
    if jobs.is_empty() {
        return Ok(0);
    }
    for job in jobs {
        job.check_columns()?;
    }
    let mut tx = pool.begin().await.db()?;
    let now = if jobs.iter().any(|j| needs_clock(&j.due)) { Some(db_now(&mut *tx).await?) } else { None };
    let mut inserted = 0;
    for chunk in jobs.chunks(INSERT_CHUNK) {
        let dues = chunk.iter().map(|j| resolve_due(j, now).map(|d| d.map(bind_ts))).collect::<Result<Vec<_>>>()?;
        let col = |f: fn(&NewJob) -> Option<String>| chunk.iter().map(f).collect::<Vec<_>>();
        let result = sqlx::query(INSERT_MANY)
            .bind(chunk.iter().map(|j| j.id.clone()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|j| j.job_type.as_str()).collect::<Vec<_>>())
            .bind(chunk.iter().map(|j| j.exclusive).collect::<Vec<_>>())
            .bind(col(|j| j.exclusive_key.clone()))
            .bind(col(|j| j.execution_id.clone()))
            .bind(col(|j| j.process_instance_id.clone()))
            .bind(col(|j| j.proc_def_id.clone()))
            .bind(col(|j| j.element_id.clone()))
            .bind(col(|j| j.element_name.clone()))
            .bind(chunk.iter().map(|j| j.retries).collect::<Vec<_>>())
            .bind(dues)
            .bind(col(|j| j.repeat.clone()))
            .bind(col(|j| j.retry_cycle.clone()))
            .bind(chunk.iter().map(|j| j.handler_type.clone()).collect::<Vec<_>>())
            .bind(col(|j| j.handler_cfg.clone()))
            .bind(col(|j| j.tenant_id.clone()))
            .execute(&mut *tx)
            .await
            .db()?;
        inserted += result.rows_affected();
    }
    tx.commit().await.db()?;
    Ok(inserted)
}

pub(crate) async fn get(pool: &PgPool, table: JobTable, id: &str) -> Result<Option<Job>> {
    let row = sqlx::query(GET.of(table)).bind(id).fetch_optional(pool).await.db()?;
    row.as_ref().map(|r| rows::job_of(table, r)).transpose()
}

pub(crate) async fn list(pool: &PgPool, filter: &JobFilter) -> Result<Page<Job>> {
    let limit = i64::try_from(filter.size).unwrap_or(i64::MAX);
    let offset = i64::try_from(filter.start).unwrap_or(i64::MAX);
    let job_type = filter.job_type.map(|t| t.as_str());
    let total = sqlx::query(COUNT.of(filter.table))
        .bind(&filter.process_instance_id)
        .bind(&filter.handler_type)
        .bind(job_type)
        .bind(filter.with_exception)
        .bind(&filter.tenant)
        .fetch_one(pool)
        .await
        .db()?;
    let found = sqlx::query(LIST.of(filter.table))
        .bind(&filter.process_instance_id)
        .bind(&filter.handler_type)
        .bind(job_type)
        .bind(filter.with_exception)
        .bind(limit)
        .bind(offset)
        .bind(&filter.tenant)
        .fetch_all(pool)
        .await
        .db()?;
    let (data, unreadable) = rows::split_jobs(filter.table, &found)?;
    Ok(Page {
        total: rows::count(&total, "total_")?,
        start: filter.start,
        size: (data.len() + unreadable.len()) as u64,
        data,
        unreadable,
    })
}

/// Rows of the three job tables that cannot be read, at most `limit`: SQL narrows the scan to
/// rows with an unknown TYPE_ or an instant outside the years kairos represents; decoding
/// decides.
pub(crate) async fn unreadable(pool: &PgPool, limit: u32) -> Result<Vec<kairos_store::Unreadable>> {
    let mut found = Vec::new();
    for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        let left = u64::from(limit).saturating_sub(found.len() as u64);
        if left == 0 {
            break;
        }
        let suspects = sqlx::query(UNREADABLE.of(table))
            .bind(i64::try_from(left).unwrap_or(i64::MAX))
            .fetch_all(pool)
            .await
            .db()?;
        found.extend(rows::split_jobs(table, &suspects)?.1);
    }
    Ok(found)
}

pub(crate) async fn execute_now(pool: &PgPool, id: &str) -> Result<Job> {
    let row = sqlx::query(EXECUTE_NOW).bind(id).fetch_optional(pool).await.db()?;
    match row {
        Some(row) => rows::job(&row),
        None => Err(Error::not_found("job", id)),
    }
}

pub(crate) async fn delete(pool: &PgPool, table: JobTable, id: &str, force: bool) -> Result<()> {
    let row = sqlx::query(DELETE.of(table)).bind(id).bind(force).fetch_one(pool).await.db()?;
    if rows::count(&row, "found_")? == 0 {
        return Err(Error::not_found("job", id));
    }
    if rows::count(&row, "removed_")? == 0 {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!("job {id} is running under an unexpired lease; delete it with force, or wait for it to finish"),
        ));
    }
    Ok(())
}

pub(crate) async fn next_due(pool: &PgPool) -> Result<NextDue> {
    let row = sqlx::query(NEXT_DUE).fetch_one(pool).await.db()?;
    // A due date kairos cannot represent (`-infinity`) is no wake-up: the next poll's
    // acquisition sets its row aside.
    let next: Option<jiff_sqlx::Timestamp> = rows::get(&row, "next_").ok().flatten();
    Ok(NextDue { db_now: rows::instant(&row, "db_now_")?, next: next.map(|t| t.to_jiff()) })
}

pub(crate) async fn stacktrace(pool: &PgPool, table: JobTable, id: &str) -> Result<Option<String>> {
    let row = sqlx::query(STACKTRACE.of(table)).bind(id).fetch_optional(pool).await.db()?;
    let Some(row) = row else { return Err(Error::not_found("job", id)) };
    let bytes: Option<Vec<u8>> = rows::get(&row, "bytes_")?;
    Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

pub(crate) async fn deadletter_move(pool: &PgPool, id: &str, retries: i32) -> Result<Job> {
    if retries < 1 {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("retries {retries} is not allowed: a job needs at least 1 to run again"),
        ));
    }
    // One transaction, the dead letter read (and locked) first: one that cannot be read is
    // refused naming its row and nothing moves, as on SQLite; were the moved row unreadable
    // after all, dropping the transaction rolls the move back.
    let mut tx = pool.begin().await.map_err(db)?;
    let dead = sqlx::query(DEADLETTER_LOCK).bind(id).fetch_optional(&mut *tx).await.db()?;
    match dead {
        Some(row) => rows::job_of(JobTable::DeadLetter, &row)?,
        None => return Err(Error::not_found("dead letter", id)),
    };
    let row = sqlx::query(DEADLETTER_MOVE).bind(id).bind(retries).fetch_one(&mut *tx).await.map_err(db)?;
    let job = rows::job(&row)?;
    tx.commit().await.map_err(db)?;
    Ok(job)
}
