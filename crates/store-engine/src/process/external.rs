//! External tasks (SPEC I4): the ACT_RU_JOB rows of TYPE_ 'external-worker' (HANDLER_CFG_ =
//! the topic) that workers fetch and lock. The row is the lock: LOCK_OWNER_ until
//! LOCK_EXP_TIME_; every outcome commits with a [`external_fence`] that proves it still is.

use super::{JOB_COLUMNS, JOB_COLUMNS_UNLOCKED, i, t, ts};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, Write};

/// An external task locked by [`external_lock`], as [`external_locked`] reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedExternal {
    pub id: String,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub execution_id: String,
    pub element_id: String,
    pub retries: i64,
    pub error_message: Option<String>,
    pub lock_expiration_time: Option<Timestamp>,
}

/// Who holds external task `id`, and its instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalLock {
    pub process_instance_id: String,
    /// The worker holding it (even past its lock's expiry), `None` when unlocked.
    pub owner: Option<String>,
}

/// Locks up to `max` due tasks of `topic` for `worker` until `until`, stamping LOCK_TIME_
/// with `now` (by which [`external_locked`] finds them). The outer lock condition is
/// re-checked on the row PostgreSQL finally updates, so two workers racing for one task
/// cannot both get it.
pub async fn external_lock(
    store: &dyn Sql,
    topic: &str,
    worker: &str,
    now: Timestamp,
    until: Timestamp,
    max: usize,
) -> Result<u64> {
    let n = store
        .write_all(&[Write::new(
            "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = ?, LOCK_EXP_TIME_ = ?, LOCK_TIME_ = ?, ATTEMPTS_ = ATTEMPTS_ + 1, \
             REV_ = REV_ + 1 WHERE ID_ IN (SELECT ID_ FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' \
             AND HANDLER_CFG_ = ? AND RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= ?) \
             AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?) ORDER BY CREATE_TIME_, ID_ LIMIT ?) \
             AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?)",
            vec![t(worker), ts(until), ts(now), t(topic), ts(now), ts(now), i(max as i64), ts(now)],
        )])
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

/// The tasks of `topic` that `worker` locked at `locked_at`, oldest first.
pub async fn external_locked(
    store: &dyn Sql,
    topic: &str,
    worker: &str,
    locked_at: Timestamp,
) -> Result<Vec<LockedExternal>> {
    const COLUMNS: &[&str] = &[
        "ID_",
        "PROCESS_INSTANCE_ID_",
        "PROC_DEF_ID_",
        "EXECUTION_ID_",
        "ELEMENT_ID_",
        "RETRIES_",
        "EXCEPTION_MSG_",
        "LOCK_EXP_TIME_",
    ];
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        COLUMNS,
        "SELECT ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, EXECUTION_ID_, ELEMENT_ID_, RETRIES_, EXCEPTION_MSG_, LOCK_EXP_TIME_ \
         FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' AND HANDLER_CFG_ = ? AND LOCK_OWNER_ = ? AND LOCK_TIME_ = ? \
         ORDER BY CREATE_TIME_, ID_",
        &[t(topic), t(worker), ts(locked_at)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LockedExternal {
                id: r.text("ID_")?,
                process_instance_id: r.text("PROCESS_INSTANCE_ID_")?,
                process_definition_id: r.text("PROC_DEF_ID_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                element_id: r.text("ELEMENT_ID_")?,
                retries: r.int("RETRIES_")?,
                error_message: r.opt_text("EXCEPTION_MSG_")?,
                lock_expiration_time: r.opt_instant("LOCK_EXP_TIME_")?,
            })
        })
        .collect()
}

/// The lock of external task `id`, if there is such a task.
pub async fn external_lock_of(store: &dyn Sql, id: &str) -> Result<Option<ExternalLock>> {
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        &["ID_", "PROCESS_INSTANCE_ID_", "LOCK_OWNER_"],
        "SELECT ID_, PROCESS_INSTANCE_ID_, LOCK_OWNER_ FROM ACT_RU_JOB WHERE ID_ = ? AND TYPE_ = 'external-worker'",
        &[t(id)],
    )
    .await?;
    rows.first()
        .map(|r| {
            Ok(ExternalLock { process_instance_id: r.text("PROCESS_INSTANCE_ID_")?, owner: r.opt_text("LOCK_OWNER_")? })
        })
        .transpose()
}

/// The retries external task `id` has left, if there is such a task.
pub async fn external_retries(store: &dyn Sql, id: &str) -> Result<Option<i64>> {
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        &["ID_", "RETRIES_"],
        "SELECT ID_, RETRIES_ FROM ACT_RU_JOB WHERE ID_ = ?",
        &[t(id)],
    )
    .await?;
    rows.first().map(|r| r.int("RETRIES_")).transpose()
}

/// The lock check that commits with an outcome: the row must still be `worker`'s.
pub fn external_fence(id: &str, worker: &str) -> Write {
    Write::new("UPDATE ACT_RU_JOB SET REV_ = REV_ + 1 WHERE ID_ = ? AND LOCK_OWNER_ = ?", vec![t(id), t(worker)])
        .expect(1)
}

/// A failure of `worker` on task `id`: fenced, the lock released, `retries_left` left,
/// `message` kept, due again at `due`; at zero retries the row moves to ACT_RU_DEADLETTER_JOB.
pub fn external_fail_writes(id: &str, worker: &str, retries_left: i64, message: &str, due: Timestamp) -> Vec<Write> {
    let mut writes = vec![
        external_fence(id, worker),
        Write::new(
            "UPDATE ACT_RU_JOB SET RETRIES_ = ?, EXCEPTION_MSG_ = ?, LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, \
             LOCK_TIME_ = NULL, DUEDATE_ = ? WHERE ID_ = ?",
            vec![i(retries_left), t(message), ts(due), t(id)],
        ),
    ];
    if retries_left == 0 {
        writes.push(Write::new(
            format!("INSERT INTO ACT_RU_DEADLETTER_JOB ({JOB_COLUMNS}) SELECT {JOB_COLUMNS_UNLOCKED} FROM ACT_RU_JOB WHERE ID_ = ?"),
            vec![t(id)],
        ));
        writes.push(Write::new("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", vec![t(id)]).expect(1));
    }
    writes
}
