//! Writing and reading job rows: enqueue (one, many, or inside the caller's transaction),
//! get and list, and the operator's actions on one job (execute now, delete, read the stack
//! trace, move a dead letter back).

use crate::errors::db_err;
use crate::joblog::sql_int;
use crate::time::to_text;
use crate::{SqliteStore, now_on, rows};
use jiff::Timestamp;
use kairos_core::{Job, JobTable, NewJob};
use kairos_store::{Error, ErrorKind, JobFilter, Page, Result};
use serde_json::{Value, json};
use sqlx::SqliteConnection;

/// Jobs per INSERT statement of a bulk enqueue: big enough that statement overhead vanishes,
/// small enough that one JSON argument stays a few hundred kilobytes.
const INSERT_CHUNK: usize = 500;

/// Picks the statement for one of the three job tables (table names cannot be bound).
pub(crate) fn per_table(
    table: JobTable,
    runtime: &'static str,
    dead_letter: &'static str,
    suspended: &'static str,
) -> &'static str {
    match table {
        JobTable::Runtime => runtime,
        JobTable::DeadLetter => dead_letter,
        JobTable::Suspended => suspended,
    }
}

/// A new job's DUEDATE_, resolved at the transaction's database now.
fn due_text(job: &NewJob, now: Timestamp) -> Result<String> {
    match job.due.resolve(now)? {
        Some(t) => to_text(t),
        None => Err(Error::new(
            ErrorKind::Invalid,
            format!("job {}: its repeat cycle has no fire left, so it would never run", job.id),
        )),
    }
}

/// Inserts one job on `conn`, inside whatever transaction the caller has open there (SPEC C1:
/// the business row and the job commit or roll back together). The due date is resolved
/// against the database clock read on the same connection. [`kairos_store::Store::job_insert`]
/// runs this same body in a transaction of its own.
///
/// Open the caller's transaction with `pool.begin_with("BEGIN IMMEDIATE")`: a deferred
/// transaction that has already read may fail with SQLITE_BUSY when it comes to write.
pub async fn job_insert_in(conn: &mut SqliteConnection, job: &NewJob) -> Result<Job> {
    const OP: &str = "job_insert";
    job.check_columns()?;
    let now = now_on(conn, None, OP).await?;
    let row = sqlx::query(include_str!("sql/job_insert.sql"))
        .bind(&job.id)
        .bind(job.job_type.as_str())
        .bind(job.exclusive)
        .bind(job.exclusive_key.as_deref())
        .bind(job.execution_id.as_deref())
        .bind(job.process_instance_id.as_deref())
        .bind(job.proc_def_id.as_deref())
        .bind(job.element_id.as_deref())
        .bind(job.element_name.as_deref())
        .bind(job.retries)
        .bind(job.retry_cycle.as_deref())
        .bind(job.repeat.as_deref())
        .bind(&job.handler_type)
        .bind(job.handler_cfg.as_deref())
        .bind(job.tenant_id.as_deref().unwrap_or(""))
        .bind(to_text(now)?)
        .bind(due_text(job, now)?)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_err(OP))?;
    rows::job(&row)
}

/// One job as a JSON array in the column order of `sql/job_insert_many.sql`.
fn insert_json(job: &NewJob, now: Timestamp) -> Result<Value> {
    Ok(json!([
        job.id,
        job.job_type.as_str(),
        i32::from(job.exclusive),
        job.exclusive_key,
        job.execution_id,
        job.process_instance_id,
        job.proc_def_id,
        job.element_id,
        job.element_name,
        job.retries,
        job.retry_cycle,
        job.repeat,
        job.handler_type,
        job.handler_cfg,
        job.tenant_id.as_deref().unwrap_or(""),
        due_text(job, now)?,
    ]))
}

impl SqliteStore {
    pub(crate) async fn insert_one(&self, job: &NewJob) -> Result<Job> {
        let mut w = self.write("job_insert").await?;
        let stored = job_insert_in(&mut w.tx, job).await?;
        w.commit("job_insert").await?;
        Ok(stored)
    }

    /// All jobs in one transaction, [`INSERT_CHUNK`] per statement, all due dates resolved at
    /// the same database now.
    pub(crate) async fn insert_many(&self, jobs: &[NewJob]) -> Result<u64> {
        const OP: &str = "job_insert_many";
        for job in jobs {
            job.check_columns()?;
        }
        if jobs.is_empty() {
            return Ok(0);
        }
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let now_text = to_text(now)?;
        let mut inserted = 0;
        for chunk in jobs.chunks(INSERT_CHUNK) {
            let json = Value::Array(chunk.iter().map(|j| insert_json(j, now)).collect::<Result<_>>()?);
            inserted += sqlx::query(include_str!("sql/job_insert_many.sql"))
                .bind(json.to_string())
                .bind(&now_text)
                .execute(&mut *w.tx)
                .await
                .map_err(db_err(OP))?
                .rows_affected();
        }
        w.commit(OP).await?;
        Ok(inserted)
    }

    pub(crate) async fn get(&self, table: JobTable, id: &str) -> Result<Option<Job>> {
        let mut conn = self.pool.acquire().await.map_err(db_err("job_get"))?;
        get_on(&mut conn, table, id).await
    }

    pub(crate) async fn list(&self, f: &JobFilter) -> Result<Page<Job>> {
        const OP: &str = "job_list";
        let list = per_table(
            f.table,
            include_str!("sql/job_list_runtime.sql"),
            include_str!("sql/job_list_deadletter.sql"),
            include_str!("sql/job_list_suspended.sql"),
        );
        let count = per_table(
            f.table,
            include_str!("sql/job_count_runtime.sql"),
            include_str!("sql/job_count_deadletter.sql"),
            include_str!("sql/job_count_suspended.sql"),
        );
        let job_type = f.job_type.map(|t| t.as_str());
        let with_exception = f.with_exception.map(i32::from);
        let data = sqlx::query(list)
            .bind(f.process_instance_id.as_deref())
            .bind(f.handler_type.as_deref())
            .bind(job_type)
            .bind(with_exception)
            .bind(sql_int(f.size))
            .bind(sql_int(f.start))
            .bind(f.tenant.as_deref())
            .fetch_all(&self.pool)
            .await
            .map_err(db_err(OP))?;
        let (data, unreadable) = rows::split_jobs(f.table, &data)?;
        let total = sqlx::query(count)
            .bind(f.process_instance_id.as_deref())
            .bind(f.handler_type.as_deref())
            .bind(job_type)
            .bind(with_exception)
            .bind(f.tenant.as_deref())
            .fetch_one(&self.pool)
            .await
            .map_err(db_err(OP))?;
        let total = rows::count(&total, "TOTAL_")?;
        Ok(Page { size: (data.len() + unreadable.len()) as u64, data, total, start: f.start, unreadable })
    }

    pub(crate) async fn execute_now(&self, id: &str) -> Result<Job> {
        const OP: &str = "job_execute_now";
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let row = sqlx::query(include_str!("sql/job_execute_now.sql"))
            .bind(id)
            .bind(to_text(now)?)
            .fetch_optional(&mut *w.tx)
            .await
            .map_err(db_err(OP))?
            .ok_or_else(|| Error::not_found("job", id))?;
        let job = rows::job(&row)?;
        w.commit(OP).await?;
        Ok(job)
    }

    /// Deletes a job and its ACT_GE_BYTEARRAY rows. A runtime job whose lease is still live is
    /// refused unless forced: its node may be running it right now (seed 000 §4.2). Only the
    /// columns the delete needs are read, so a row that cannot be read as a whole can still be
    /// deleted; a lease whose expiry cannot be read counts as live.
    pub(crate) async fn delete(&self, table: JobTable, id: &str, force: bool) -> Result<()> {
        const OP: &str = "job_delete";
        let mut w = self.write(OP).await?;
        let row = sqlx::query(get_sql(table))
            .bind(id)
            .fetch_optional(&mut *w.tx)
            .await
            .map_err(db_err(OP))?
            .ok_or_else(|| Error::not_found("job", id))?;
        let values = rows::row_values(&row);
        let column = |i: usize| values.get(i).and_then(rows::raw_text);
        if table == JobTable::Runtime && !force {
            let now = now_on(&mut w.tx, None, OP).await?;
            if let Some(owner) = column(rows::LOCK_OWNER) {
                let exp = column(rows::LOCK_EXP_TIME).map(|t| crate::time::from_text(&t));
                if let Some(exp) = exp.filter(|exp| exp.as_ref().map_or(true, |exp| *exp > now)) {
                    let until = exp.map_or_else(|_| "an expiry that cannot be read".to_string(), |t| t.to_string());
                    return Err(Error::new(
                        ErrorKind::Conflict,
                        format!(
                            "job {id} is locked by node {owner} until {until}; it may be running there now. \
                             Wait for the lease to expire, stop that node, or force the delete"
                        ),
                    ));
                }
            }
        }
        let sql = per_table(
            table,
            include_str!("sql/job_delete_runtime.sql"),
            include_str!("sql/job_delete_deadletter.sql"),
            include_str!("sql/job_delete_suspended.sql"),
        );
        sqlx::query(sql).bind(id).execute(&mut *w.tx).await.map_err(db_err(OP))?;
        let bytes = [column(rows::EXCEPTION_STACK_ID), column(rows::CUSTOMVALUES_ID)];
        delete_bytearrays(&mut w.tx, bytes.into_iter().flatten(), OP).await?;
        w.commit(OP).await
    }

    /// Rows of the three job tables that cannot be read, at most `limit`. SQL narrows the scan
    /// to rows with a value of another type or form than kairos writes; decoding decides.
    pub(crate) async fn unreadable(&self, limit: u32) -> Result<Vec<kairos_store::Unreadable>> {
        const OP: &str = "job_unreadable";
        let mut found = Vec::new();
        for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
            let left = u64::from(limit).saturating_sub(found.len() as u64);
            if left == 0 {
                break;
            }
            let sql = per_table(
                table,
                include_str!("sql/job_unreadable_runtime.sql"),
                include_str!("sql/job_unreadable_deadletter.sql"),
                include_str!("sql/job_unreadable_suspended.sql"),
            );
            let suspects = sqlx::query(sql)
                .bind(i64::try_from(left).unwrap_or(i64::MAX))
                .fetch_all(&self.pool)
                .await
                .map_err(db_err(OP))?;
            found.extend(rows::split_jobs(table, &suspects)?.1);
        }
        Ok(found)
    }

    pub(crate) async fn stacktrace(&self, table: JobTable, id: &str) -> Result<Option<String>> {
        const OP: &str = "job_stacktrace";
        let mut conn = self.pool.acquire().await.map_err(db_err(OP))?;
        let job = get_on(&mut conn, table, id).await?.ok_or_else(|| Error::not_found("job", id))?;
        let Some(stack_id) = job.exception_stack_id else { return Ok(None) };
        let row = sqlx::query(include_str!("sql/bytearray_get.sql"))
            .bind(&stack_id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db_err(OP))?;
        let Some(row) = row else {
            tracing::warn!(job = id, stack = stack_id, "EXCEPTION_STACK_ID_ names no ACT_GE_BYTEARRAY row");
            return Ok(None);
        };
        let bytes: Option<Vec<u8>> = sqlx::Row::try_get(&row, "BYTES_").map_err(db_err(OP))?;
        Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// SPEC J4: back to ACT_RU_JOB with fresh retries, due now, lock and exception cleared, and
    /// the old stack bytes deleted so no ACT_GE_BYTEARRAY row is orphaned (seed 000 §4.2).
    pub(crate) async fn move_dead_letter(&self, id: &str, retries: i32) -> Result<Job> {
        const OP: &str = "deadletter_move";
        if retries < 1 {
            return Err(Error::new(
                ErrorKind::Invalid,
                format!("retries {retries} would leave the job unable to run; give at least 1"),
            ));
        }
        let mut w = self.write(OP).await?;
        let dead = get_on(&mut w.tx, JobTable::DeadLetter, id)
            .await?
            .ok_or_else(|| Error::not_found("dead letter job", id))?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let row = sqlx::query(include_str!("sql/deadletter_move.sql"))
            .bind(id)
            .bind(retries)
            .bind(to_text(now)?)
            .fetch_one(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        let job = rows::job(&row)?;
        sqlx::query(include_str!("sql/job_delete_deadletter.sql"))
            .bind(id)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        delete_bytearrays(&mut w.tx, dead.exception_stack_id, OP).await?;
        w.commit(OP).await?;
        Ok(job)
    }
}

/// One job of one table, read on `conn` (inside a transaction when the caller has one open).
/// A row that cannot be read is an [`ErrorKind::Unreadable`] error naming the column.
pub(crate) async fn get_on(conn: &mut SqliteConnection, table: JobTable, id: &str) -> Result<Option<Job>> {
    let row = sqlx::query(get_sql(table)).bind(id).fetch_optional(&mut *conn).await.map_err(db_err("job_get"))?;
    row.as_ref().map(|r| rows::job_of(table, r)).transpose()
}

fn get_sql(table: JobTable) -> &'static str {
    per_table(
        table,
        include_str!("sql/job_get_runtime.sql"),
        include_str!("sql/job_get_deadletter.sql"),
        include_str!("sql/job_get_suspended.sql"),
    )
}

/// Deletes ACT_GE_BYTEARRAY rows by id (one statement; nothing when there are none).
pub(crate) async fn delete_bytearrays(
    conn: &mut SqliteConnection,
    ids: impl IntoIterator<Item = String>,
    op: &'static str,
) -> Result<()> {
    let ids: Vec<String> = ids.into_iter().collect();
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(include_str!("sql/bytearray_delete_many.sql"))
        .bind(json!(ids).to_string())
        .execute(&mut *conn)
        .await
        .map_err(db_err(op))?;
    Ok(())
}
