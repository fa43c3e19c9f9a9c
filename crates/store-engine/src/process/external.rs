//! External tasks (SPEC I4): the ACT_RU_JOB rows of TYPE_ 'external-worker' (HANDLER_CFG_ =
//! the topic) that workers fetch and lock. The row is the lock: LOCK_OWNER_ until
//! LOCK_EXP_TIME_; every outcome commits with a [`external_fence`] that proves it still is.

use super::{JOB_COLUMNS, JOB_COLUMNS_UNLOCKED, b, i, t, ts};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue, Write};

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
    pub priority: i64,
    pub tenant_id: String,
}

/// Who holds external task `id`, and its instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalLock {
    pub process_instance_id: String,
    /// The worker holding it (even past its lock's expiry), `None` when unlocked.
    pub owner: Option<String>,
}

/// Which due tasks a fetch may lock: one topic, optionally narrowed as Camunda's
/// fetchAndLock topics narrow it (definition ids or keys, business key), taken by priority
/// (PRIORITY_ descending) before age when `by_priority`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExternalFilter {
    pub topic: String,
    /// Only tasks of these definition ids (none: any).
    pub definition_ids: Vec<String>,
    /// Only tasks of definitions with these keys (none: any).
    pub definition_keys: Vec<String>,
    /// Only tasks of instances with this business key.
    pub business_key: Option<String>,
    /// Only tasks of these tenants (`''`: of no tenant); `None`: of any.
    pub tenants: Option<Vec<String>>,
    pub by_priority: bool,
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
    let filter = ExternalFilter { topic: topic.into(), ..ExternalFilter::default() };
    external_lock_filtered(store, &filter, worker, now, until, max).await
}

/// [`external_lock`] of the tasks `filter` admits. The statement's text varies only with how
/// many ids or keys the filter lists (the same text on both backends).
pub async fn external_lock_filtered(
    store: &dyn Sql,
    filter: &ExternalFilter,
    worker: &str,
    now: Timestamp,
    until: Timestamp,
    max: usize,
) -> Result<u64> {
    let mut cond = String::new();
    let mut binds = vec![t(worker), ts(until), ts(now), t(&filter.topic), ts(now), ts(now)];
    if !filter.definition_ids.is_empty() {
        cond.push_str(&format!(" AND PROC_DEF_ID_ IN ({})", marks(filter.definition_ids.len())));
        binds.extend(filter.definition_ids.iter().map(|s| t(s)));
    }
    if !filter.definition_keys.is_empty() {
        cond.push_str(&format!(
            " AND PROC_DEF_ID_ IN (SELECT ID_ FROM ACT_RE_PROCDEF WHERE KEY_ IN ({}))",
            marks(filter.definition_keys.len())
        ));
        binds.extend(filter.definition_keys.iter().map(|s| t(s)));
    }
    if let Some(tenants) = &filter.tenants {
        if tenants.is_empty() {
            return Ok(0);
        }
        cond.push_str(&format!(" AND TENANT_ID_ IN ({})", marks(tenants.len())));
        binds.extend(tenants.iter().map(|s| t(s)));
    }
    if let Some(bk) = &filter.business_key {
        cond.push_str(
            " AND PROCESS_INSTANCE_ID_ IN (SELECT ID_ FROM ACT_RU_EXECUTION WHERE ID_ = PROC_INST_ID_ AND BUSINESS_KEY_ = ?)",
        );
        binds.push(t(bk));
    }
    let order = if filter.by_priority { "PRIORITY_ DESC, CREATE_TIME_, ID_" } else { "CREATE_TIME_, ID_" };
    binds.push(i(max as i64));
    binds.push(ts(now));
    let n = store
        .write_all(&[Write::new(
            format!(
                "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = ?, LOCK_EXP_TIME_ = ?, LOCK_TIME_ = ?, ATTEMPTS_ = ATTEMPTS_ + 1, \
                 REV_ = REV_ + 1 WHERE ID_ IN (SELECT ID_ FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' \
                 AND HANDLER_CFG_ = ? AND RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= ?) \
                 AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?){cond} ORDER BY {order} LIMIT ?) \
                 AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?)"
            ),
            binds,
        )])
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

/// `?, ?, …` for `n` values.
fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
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
        "PRIORITY_",
        "TENANT_ID_",
    ];
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        COLUMNS,
        "SELECT ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, EXECUTION_ID_, ELEMENT_ID_, RETRIES_, EXCEPTION_MSG_, LOCK_EXP_TIME_, \
         PRIORITY_, TENANT_ID_ FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' AND HANDLER_CFG_ = ? AND LOCK_OWNER_ = ? \
         AND LOCK_TIME_ = ? ORDER BY PRIORITY_ DESC, CREATE_TIME_, ID_",
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
                priority: r.int("PRIORITY_")?,
                tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
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
/// `message` kept (and `details`, Camunda's errorDetails, as the job's stack trace in
/// ACT_GE_BYTEARRAY), due again at `due`; at zero retries the row moves to
/// ACT_RU_DEADLETTER_JOB.
pub fn external_fail_writes(
    id: &str,
    worker: &str,
    retries_left: i64,
    message: &str,
    details: Option<&str>,
    due: Timestamp,
) -> Vec<Write> {
    let mut writes = vec![
        external_fence(id, worker),
        Write::new(
            "UPDATE ACT_RU_JOB SET RETRIES_ = ?, EXCEPTION_MSG_ = ?, LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, \
             LOCK_TIME_ = NULL, DUEDATE_ = ? WHERE ID_ = ?",
            vec![i(retries_left), t(message), ts(due), t(id)],
        ),
    ];
    if let Some(details) = details {
        let stack = kairos_core::new_id();
        writes.push(external_details_delete(id));
        writes.push(Write::new(
            "INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, BYTES_, GENERATED_) VALUES (?, 1, ?, ?, ?)",
            vec![t(&stack), t("external-task-error-details"), SqlValue::Bytes(details.as_bytes().to_vec()), b(false)],
        ));
        writes.push(Write::new("UPDATE ACT_RU_JOB SET EXCEPTION_STACK_ID_ = ? WHERE ID_ = ?", vec![t(&stack), t(id)]));
    }
    if retries_left == 0 {
        writes.push(Write::new(
            format!("INSERT INTO ACT_RU_DEADLETTER_JOB ({JOB_COLUMNS}) SELECT {JOB_COLUMNS_UNLOCKED} FROM ACT_RU_JOB WHERE ID_ = ?"),
            vec![t(id)],
        ));
        writes.push(Write::new("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", vec![t(id)]).expect(1));
    }
    writes
}

/// Deletes the errorDetails (stack trace bytes) of external task `id`, if it has any.
pub fn external_details_delete(id: &str) -> Write {
    Write::new(
        "DELETE FROM ACT_GE_BYTEARRAY WHERE ID_ IN (SELECT EXCEPTION_STACK_ID_ FROM ACT_RU_JOB WHERE ID_ = ? \
         AND EXCEPTION_STACK_ID_ IS NOT NULL)",
        vec![t(id)],
    )
}

/// The errorDetails of external task `id` (running or a dead letter): `None` for no such
/// task, `Some(None)` for one without details.
pub async fn external_details(store: &dyn Sql, id: &str) -> Result<Option<Option<String>>> {
    let rows = Rows::read(
        store,
        "ACT_RU_JOB",
        &["ID_", "BYTES_"],
        "SELECT j.ID_, b.BYTES_ FROM (SELECT ID_, EXCEPTION_STACK_ID_ FROM ACT_RU_JOB WHERE ID_ = ? AND TYPE_ = 'external-worker' \
         UNION ALL SELECT ID_, EXCEPTION_STACK_ID_ FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = ? AND TYPE_ = 'external-worker' \
         UNION ALL SELECT ID_, EXCEPTION_STACK_ID_ FROM ACT_RU_SUSPENDED_JOB WHERE ID_ = ? AND TYPE_ = 'external-worker') j \
         LEFT JOIN ACT_GE_BYTEARRAY b ON b.ID_ = j.EXCEPTION_STACK_ID_",
        &[t(id), t(id), t(id)],
    )
    .await?;
    let Some(r) = rows.first() else { return Ok(None) };
    Ok(Some(match r.value("BYTES_")? {
        SqlValue::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        SqlValue::Text(s) => Some(s.clone()),
        _ => None,
    }))
}

/// Extends `worker`'s unexpired lock on task `id` to `until` (Camunda's extendLock): zero rows
/// (a conflict) when the lock is another's or has expired.
pub fn external_extend_lock(id: &str, worker: &str, now: Timestamp, until: Timestamp) -> Write {
    Write::new(
        "UPDATE ACT_RU_JOB SET LOCK_EXP_TIME_ = ?, REV_ = REV_ + 1 WHERE ID_ = ? AND TYPE_ = 'external-worker' \
         AND LOCK_OWNER_ = ? AND LOCK_EXP_TIME_ > ?",
        vec![ts(until), t(id), t(worker), ts(now)],
    )
    .expect(1)
}

/// Locks task `id` for `worker` until `until` (Camunda's lock by id), unless another worker
/// holds an unexpired lock on it (zero rows: a conflict). Its worker may lock it again.
pub fn external_lock_one(id: &str, worker: &str, now: Timestamp, until: Timestamp) -> Write {
    Write::new(
        "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = ?, LOCK_EXP_TIME_ = ?, LOCK_TIME_ = ?, REV_ = REV_ + 1 \
         WHERE ID_ = ? AND TYPE_ = 'external-worker' AND RETRIES_ > 0 \
         AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ? OR LOCK_OWNER_ = ?)",
        vec![t(worker), ts(until), ts(now), t(id), ts(now), t(worker)],
    )
    .expect(1)
}

/// Releases the lock on task `id`, whoever holds it (Camunda's unlock).
pub fn external_unlock(id: &str) -> Write {
    Write::new(
        "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, LOCK_TIME_ = NULL, REV_ = REV_ + 1 \
         WHERE ID_ = ? AND TYPE_ = 'external-worker'",
        vec![t(id)],
    )
    .expect(1)
}

/// Releases the lock `worker` took on task `id` at `locked_at`, if it still holds that very
/// lock: for a fetch whose answer never left (its caller went away), so that the task is not
/// held for nobody until the lock expires. No row (the task moved on) is fine.
pub fn external_unlock_undelivered(id: &str, worker: &str, locked_at: Timestamp) -> Write {
    Write::new(
        "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, LOCK_TIME_ = NULL, REV_ = REV_ + 1 \
         WHERE ID_ = ? AND TYPE_ = 'external-worker' AND LOCK_OWNER_ = ? AND LOCK_TIME_ = ?",
        vec![t(id), t(worker), ts(locked_at)],
    )
}

/// An external task as a list shows it: running (ACT_RU_JOB), suspended with its instance
/// (ACT_RU_SUSPENDED_JOB) or out of retries (ACT_RU_DEADLETTER_JOB, retries 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalRow {
    pub id: String,
    pub topic: String,
    pub worker_id: Option<String>,
    pub lock_expiration_time: Option<Timestamp>,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub process_definition_key: Option<String>,
    pub business_key: Option<String>,
    pub execution_id: String,
    pub element_id: String,
    pub retries: i64,
    pub error_message: Option<String>,
    pub priority: i64,
    pub create_time: Timestamp,
    pub suspended: bool,
    /// TENANT_ID_: its instance's tenant (`''`: none).
    pub tenant_id: String,
}

/// The order of an external task list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExternalOrder {
    #[default]
    CreateTime,
    Id,
    LockExpirationTime,
    ProcessInstanceId,
    ProcessDefinitionId,
    ProcessDefinitionKey,
    Priority,
}

impl ExternalOrder {
    fn column(self) -> &'static str {
        match self {
            ExternalOrder::CreateTime => "j.CREATE_TIME_",
            ExternalOrder::Id => "j.ID_",
            ExternalOrder::LockExpirationTime => "j.LOCK_EXP_TIME_",
            ExternalOrder::ProcessInstanceId => "j.PROCESS_INSTANCE_ID_",
            ExternalOrder::ProcessDefinitionId => "j.PROC_DEF_ID_",
            ExternalOrder::ProcessDefinitionKey => "d.KEY_",
            ExternalOrder::Priority => "j.PRIORITY_",
        }
    }
}

/// Which external tasks a list shows (every filter optional), in which order, which page.
#[derive(Debug, Clone, Default)]
pub struct ExternalQuery {
    pub id: Option<String>,
    pub topic: Option<String>,
    pub worker_id: Option<String>,
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    pub activity_id: Option<String>,
    pub execution_id: Option<String>,
    /// Only this tenant's (`''`: of no tenant).
    pub tenant: Option<String>,
    /// Locked (an unexpired lock) or not.
    pub locked: Option<bool>,
    /// With retries left (running or suspended) or without (dead letters).
    pub retries_left: Option<bool>,
    pub suspended: Option<bool>,
    pub order: ExternalOrder,
    pub descending: bool,
    pub first: u64,
    pub max: u64,
}

/// The three tables' external tasks as one relation `j` with its definition `d` and root
/// execution `e`, and the WHERE clause of `q` with its values.
fn external_from(q: &ExternalQuery, now: Timestamp) -> (String, Vec<SqlValue>) {
    const COLS: &str = "ID_, HANDLER_CFG_, LOCK_OWNER_, LOCK_EXP_TIME_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, \
        EXECUTION_ID_, ELEMENT_ID_, RETRIES_, EXCEPTION_MSG_, PRIORITY_, CREATE_TIME_, TENANT_ID_";
    let mut sql = format!(
        "FROM (SELECT {COLS}, 0 AS SUSPENDED_ FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' \
         UNION ALL SELECT {COLS}, 1 AS SUSPENDED_ FROM ACT_RU_SUSPENDED_JOB WHERE TYPE_ = 'external-worker' \
         UNION ALL SELECT {COLS}, 0 AS SUSPENDED_ FROM ACT_RU_DEADLETTER_JOB WHERE TYPE_ = 'external-worker') j \
         LEFT JOIN ACT_RE_PROCDEF d ON d.ID_ = j.PROC_DEF_ID_ \
         LEFT JOIN ACT_RU_EXECUTION e ON e.ID_ = j.PROCESS_INSTANCE_ID_ WHERE 1 = 1"
    );
    let mut binds = Vec::new();
    for (col, v) in [
        ("j.ID_", &q.id),
        ("j.HANDLER_CFG_", &q.topic),
        ("j.LOCK_OWNER_", &q.worker_id),
        ("j.PROCESS_INSTANCE_ID_", &q.process_instance_id),
        ("j.PROC_DEF_ID_", &q.process_definition_id),
        ("j.ELEMENT_ID_", &q.activity_id),
        ("j.EXECUTION_ID_", &q.execution_id),
        ("j.TENANT_ID_", &q.tenant),
    ] {
        if let Some(v) = v {
            sql.push_str(&format!(" AND {col} = ?"));
            binds.push(t(v));
        }
    }
    match q.locked {
        Some(true) => {
            sql.push_str(" AND j.LOCK_OWNER_ IS NOT NULL AND j.LOCK_EXP_TIME_ > ?");
            binds.push(ts(now));
        }
        Some(false) => {
            sql.push_str(" AND (j.LOCK_OWNER_ IS NULL OR j.LOCK_EXP_TIME_ <= ?)");
            binds.push(ts(now));
        }
        None => {}
    }
    match q.retries_left {
        Some(true) => sql.push_str(" AND j.RETRIES_ > 0"),
        Some(false) => sql.push_str(" AND j.RETRIES_ <= 0"),
        None => {}
    }
    match q.suspended {
        Some(true) => sql.push_str(" AND j.SUSPENDED_ = 1"),
        Some(false) => sql.push_str(" AND j.SUSPENDED_ = 0"),
        None => {}
    }
    (sql, binds)
}

/// A page of the external tasks `q` asks for.
pub async fn external_list(store: &dyn Sql, q: &ExternalQuery) -> Result<Vec<ExternalRow>> {
    const COLUMNS: &[&str] = &[
        "ID_",
        "HANDLER_CFG_",
        "LOCK_OWNER_",
        "LOCK_EXP_TIME_",
        "PROCESS_INSTANCE_ID_",
        "PROC_DEF_ID_",
        "DEF_KEY_",
        "BUSINESS_KEY_",
        "EXECUTION_ID_",
        "ELEMENT_ID_",
        "RETRIES_",
        "EXCEPTION_MSG_",
        "PRIORITY_",
        "CREATE_TIME_",
        "SUSPENDED_",
        "TENANT_ID_",
    ];
    let now = store.db_now().await?;
    let (from, mut binds) = external_from(q, now);
    let dir = if q.descending { "DESC" } else { "ASC" };
    let sql = format!(
        "SELECT j.ID_, j.HANDLER_CFG_, j.LOCK_OWNER_, j.LOCK_EXP_TIME_, j.PROCESS_INSTANCE_ID_, j.PROC_DEF_ID_, \
         d.KEY_ AS DEF_KEY_, e.BUSINESS_KEY_, j.EXECUTION_ID_, j.ELEMENT_ID_, j.RETRIES_, j.EXCEPTION_MSG_, \
         j.PRIORITY_, j.CREATE_TIME_, j.SUSPENDED_, j.TENANT_ID_ {from} ORDER BY {} {dir}, j.ID_ {dir} LIMIT ? OFFSET ?",
        q.order.column()
    );
    binds.push(super::bound(q.max));
    binds.push(super::bound(q.first));
    let rows = Rows::read(store, "ACT_RU_JOB", COLUMNS, &sql, &binds).await?;
    rows.iter()
        .map(|r| {
            Ok(ExternalRow {
                id: r.text("ID_")?,
                topic: r.opt_text("HANDLER_CFG_")?.unwrap_or_default(),
                worker_id: r.opt_text("LOCK_OWNER_")?,
                lock_expiration_time: r.opt_instant("LOCK_EXP_TIME_")?,
                process_instance_id: r.text("PROCESS_INSTANCE_ID_")?,
                process_definition_id: r.text("PROC_DEF_ID_")?,
                process_definition_key: r.opt_text("DEF_KEY_")?,
                business_key: r.opt_text("BUSINESS_KEY_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                element_id: r.text("ELEMENT_ID_")?,
                retries: r.int("RETRIES_")?,
                error_message: r.opt_text("EXCEPTION_MSG_")?,
                priority: r.int("PRIORITY_")?,
                create_time: r.instant("CREATE_TIME_")?,
                suspended: r.int("SUSPENDED_")? == 1,
                tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
            })
        })
        .collect()
}

/// How many external tasks `q` admits (its page and order aside).
pub async fn external_count(store: &dyn Sql, q: &ExternalQuery) -> Result<u64> {
    let now = store.db_now().await?;
    let (from, binds) = external_from(q, now);
    let rows = Rows::read(store, "ACT_RU_JOB", &["N_"], &format!("SELECT COUNT(*) AS N_ {from}"), &binds).await?;
    Ok(rows.first().map(|r| r.int("N_")).transpose()?.unwrap_or(0).max(0) as u64)
}
