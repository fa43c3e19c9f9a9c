//! Finishing attempts (SPEC J3): many completions in one transaction, each fenced by its lease
//! (id + owner + attempt), so a node that lost its lease — paused, partitioned, declared dead —
//! cannot complete work another node took over.
//!
//! The common case, a successful one-shot job, costs a constant number of statements per
//! batch: one fenced SELECT saying which leases still hold, one INSERT for all their log rows,
//! one ACT_GE_BYTEARRAY clean-up when some had failed before, and one fenced DELETE. Reschedules,
//! retries and dead letters are rarer and take a few statements each.

use crate::errors::{corrupt, db_err};
use crate::joblog::{JobFacts, LogRow, MESSAGE_MAX_CHARS, insert_log_rows};
use crate::jobs::delete_bytearrays;
use crate::time::to_text;
use crate::{SqliteStore, rows};
use kairos_core::outcome::truncate_chars;
use kairos_core::{Completion, Job, new_id};
use kairos_store::{JobCompletion, Result};
use serde_json::json;
use sqlx::SqliteConnection;
use std::collections::HashMap;

const OP: &str = "job_complete_many";

/// ACT_GE_BYTEARRAY.NAME_ of a stored stack trace, as Activiti names it.
const STACK_NAME: &str = "job.exceptionByteArray";

impl SqliteStore {
    pub(crate) async fn complete_many(&self, cs: &[JobCompletion]) -> Result<Vec<bool>> {
        let mut applied = vec![false; cs.len()];
        if cs.is_empty() {
            return Ok(applied);
        }
        let mut w = self.write(OP).await?;
        let mut log = Vec::with_capacity(cs.len());
        let mut stale_bytes = Vec::new();

        delete_succeeded(&mut w.tx, cs, &mut applied).await?;
        for (i, c) in cs.iter().enumerate() {
            if matches!(c.completion, Completion::Delete { .. }) {
                continue;
            }
            let Some(job) = fenced(&mut w.tx, c).await? else { continue };
            // The previous failure's stack: replaced by a retry's or dead letter's, cleared by a
            // successful fire.
            stale_bytes.extend(job.exception_stack_id.clone());
            apply_one(&mut w.tx, &job.id, &c.completion).await?;
            applied[i] = true;
            log.push(log_row(c, JobFacts::of_job(&job)?));
        }

        // The handlers' staged writes, in this transaction and only for completions whose
        // lease held: a job's own effects happen exactly once.
        for (i, c) in cs.iter().enumerate() {
            if applied[i] {
                for e in &c.effects {
                    let n = crate::operator::execute_effect(&mut w.tx, &e.sql, &e.binds).await?;
                    if let Some(want) = e.expect.filter(|&want| want != n) {
                        return Err(kairos_store::write_conflict(0, e, want, n));
                    }
                }
            }
        }
        insert_log_rows(&mut w.tx, &log, OP).await?;
        delete_bytearrays(&mut w.tx, stale_bytes, OP).await?;
        let earlier = applied_earlier(&mut w.tx, cs, &applied).await?;
        w.commit(OP).await?;
        Ok(applied.iter().zip(earlier).map(|(&now, before)| now || before).collect())
    }
}

/// For each completion the lease refused, whether an earlier call applied it (see the SQL); a
/// job's second listing in one batch is not asked about and stays refused.
async fn applied_earlier(conn: &mut SqliteConnection, cs: &[JobCompletion], applied: &[bool]) -> Result<Vec<bool>> {
    let mut earlier = vec![false; cs.len()];
    let mut seen = std::collections::HashSet::new();
    for (i, c) in cs.iter().enumerate() {
        if !seen.insert((c.job_id.as_str(), c.node.as_str(), c.attempt)) || applied[i] {
            continue;
        }
        let row = sqlx::query(include_str!("sql/complete_already_applied.sql"))
            .bind(&c.job_id)
            .bind(c.attempt)
            .bind(&c.node)
            .fetch_one(&mut *conn)
            .await
            .map_err(db_err(OP))?;
        earlier[i] = rows::count(&row, "APPLIED_")? > 0;
    }
    Ok(earlier)
}

/// Writes one reschedule, retry or dead letter whose lease was checked in this transaction.
async fn apply_one(conn: &mut SqliteConnection, id: &str, completion: &Completion) -> Result<()> {
    match completion {
        Completion::Delete { .. } => {}
        Completion::Reschedule { repeat, due, .. } => {
            sqlx::query(include_str!("sql/complete_reschedule.sql"))
                .bind(id)
                .bind(to_text(*due)?)
                .bind(repeat)
                .execute(&mut *conn)
                .await
                .map_err(db_err(OP))?;
        }
        Completion::Retry { retries, due, message, stack } => {
            let stack_id = insert_stack(conn, stack).await?;
            sqlx::query(include_str!("sql/complete_retry.sql"))
                .bind(id)
                .bind(retries)
                .bind(to_text(*due)?)
                .bind(truncate_chars(message, MESSAGE_MAX_CHARS))
                .bind(stack_id)
                .execute(&mut *conn)
                .await
                .map_err(db_err(OP))?;
        }
        Completion::DeadLetter { message, stack } => {
            let stack_id = insert_stack(conn, stack).await?;
            sqlx::query(include_str!("sql/complete_deadletter.sql"))
                .bind(id)
                .bind(truncate_chars(message, MESSAGE_MAX_CHARS))
                .bind(stack_id)
                .execute(&mut *conn)
                .await
                .map_err(db_err(OP))?;
            sqlx::query(include_str!("sql/job_delete_runtime.sql"))
                .bind(id)
                .execute(&mut *conn)
                .await
                .map_err(db_err(OP))?;
        }
    }
    Ok(())
}

/// All `Delete` completions with four statements whatever their number (see the steps in
/// `sql/complete_delete*.sql`); no row per job crosses the driver. A job listed twice is
/// applied once: the first listing wins, the second finds the row gone.
async fn delete_succeeded(conn: &mut SqliteConnection, cs: &[JobCompletion], applied: &mut [bool]) -> Result<()> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    let mut fence = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let Completion::Delete { log_message } = &c.completion else { continue };
        if index_of.contains_key(c.job_id.as_str()) {
            continue;
        }
        index_of.insert(c.job_id.as_str(), i);
        fence.push(json!([
            c.job_id,
            c.node,
            c.attempt,
            new_id(),
            to_text(c.started)?,
            to_text(c.finished)?,
            log_message.as_deref().map(|m| truncate_chars(m, MESSAGE_MAX_CHARS)),
        ]));
    }
    if fence.is_empty() {
        return Ok(());
    }
    let fence = serde_json::Value::Array(fence).to_string();
    let row = sqlx::query(include_str!("sql/complete_delete_applied.sql"))
        .bind(&fence)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_err(OP))?;
    let ids: Vec<String> = serde_json::from_str(&rows::text(&row, "IDS_")?)
        .map_err(|e| corrupt(format!("completed job ids cannot be read: {e}")))?;
    if ids.is_empty() {
        return Ok(());
    }
    for id in &ids {
        if let Some(&i) = index_of.get(id.as_str()) {
            applied[i] = true;
        }
    }
    let steps: &[&'static str] = if rows::count(&row, "WITH_BYTES_")? > 0 {
        &[
            include_str!("sql/complete_delete_log.sql"),
            include_str!("sql/complete_delete_bytes.sql"),
            include_str!("sql/complete_delete.sql"),
        ]
    } else {
        &[include_str!("sql/complete_delete_log.sql"), include_str!("sql/complete_delete.sql")]
    };
    for &sql in steps {
        sqlx::query(sql).bind(&fence).execute(&mut *conn).await.map_err(db_err(OP))?;
    }
    Ok(())
}

/// The row if the completion's lease still holds.
async fn fenced(conn: &mut SqliteConnection, c: &JobCompletion) -> Result<Option<Job>> {
    let row = sqlx::query(include_str!("sql/job_fenced_get.sql"))
        .bind(&c.job_id)
        .bind(&c.node)
        .bind(c.attempt)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_err(OP))?;
    row.as_ref().map(rows::job).transpose()
}

/// Stores a failure's full error chain; returns its ACT_GE_BYTEARRAY id.
async fn insert_stack(conn: &mut SqliteConnection, stack: &str) -> Result<String> {
    let id = new_id();
    sqlx::query(include_str!("sql/bytearray_insert.sql"))
        .bind(&id)
        .bind(STACK_NAME)
        .bind(stack.as_bytes())
        .execute(&mut *conn)
        .await
        .map_err(db_err(OP))?;
    Ok(id)
}

fn log_row(c: &JobCompletion, job: JobFacts) -> LogRow {
    LogRow {
        job,
        attempt: c.attempt,
        node: Some(c.node.clone()),
        start: Some(c.started),
        end: Some(c.finished),
        outcome: c.completion.log_outcome(),
        message: c.completion.log_message().map(str::to_string),
    }
}
