//! Deployments as a whole (Flowable's `/repository/deployments`): ACT_RE_DEPLOYMENT rows, the
//! resources they hold in ACT_GE_BYTEARRAY, and deleting one with everything that hangs on
//! its definitions.
//!
//! Deleting is [`deployment_delete`]'s one list of statements, committed in one transaction:
//! the definitions' jobs (timer start jobs, and any left by an instance that is gone, in every
//! job table, with their stack traces) go first, then a guard that the deployment still exists and that none of its
//! definitions has an execution, then subscriptions, identity links, definitions, resources
//! and the deployment. Deleting the jobs first matters on PostgreSQL: a node completing a
//! timer start job holds that job's row until its commit, so the delete waits for it, and the
//! guard, a later statement, then sees the instance it started; a completion that comes after
//! the delete finds its job gone and its start is discarded (completions are fenced by the
//! job's row). On SQLite the transaction holds the one write lock throughout.

use super::{bound, i, t, ts};
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue, Write};

/// One ACT_RE_DEPLOYMENT row.
#[derive(Debug, Clone)]
pub struct DeploymentRow {
    pub id: String,
    pub name: Option<String>,
    pub category: Option<String>,
    pub key: Option<String>,
    pub tenant_id: String,
    pub deploy_time: Timestamp,
}

const DEPLOYMENT_COLUMNS: &[&str] = &["ID_", "NAME_", "CATEGORY_", "KEY_", "TENANT_ID_", "DEPLOY_TIME_"];
const DEPLOYMENT_SELECT: &str = "ID_, NAME_, CATEGORY_, KEY_, TENANT_ID_, DEPLOY_TIME_";

fn deployment_row(r: &Row<'_>) -> Result<DeploymentRow> {
    Ok(DeploymentRow {
        id: r.text("ID_")?,
        name: r.opt_text("NAME_")?,
        category: r.opt_text("CATEGORY_")?,
        key: r.opt_text("KEY_")?,
        tenant_id: r.text("TENANT_ID_")?,
        deploy_time: r.instant("DEPLOY_TIME_")?,
    })
}

/// A new deployment's row, with Flowable's `deploymentKey` when one was given, for `tenant`
/// (`''`: none).
pub fn deployment_insert_keyed(id: &str, name: &str, key: Option<&str>, tenant: &str, at: Timestamp) -> Write {
    Write::new(
        "INSERT INTO ACT_RE_DEPLOYMENT (ID_, NAME_, KEY_, TENANT_ID_, DEPLOY_TIME_) VALUES (?, ?, ?, ?, ?)",
        vec![t(id), t(name), key.map_or(SqlValue::Null, t), t(tenant), ts(at)],
    )
}

/// Deployments whose NAME_, CATEGORY_ and TENANT_ID_ equal the given ones (none given: all),
/// oldest first. Flowable's `nameLike` and the sorting are the caller's.
pub async fn deployment_list(
    store: &dyn Sql,
    name: Option<&str>,
    category: Option<&str>,
    tenant: Option<&str>,
) -> Result<Vec<DeploymentRow>> {
    let sql = format!(
        "SELECT {DEPLOYMENT_SELECT} FROM ACT_RE_DEPLOYMENT WHERE (CAST(? AS VARCHAR(255)) IS NULL OR NAME_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR CATEGORY_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?) ORDER BY DEPLOY_TIME_, ID_"
    );
    let text = |v: Option<&str>| v.map_or(SqlValue::Null, t);
    let binds = [text(name), text(name), text(category), text(category), text(tenant), text(tenant)];
    let rows = Rows::read(store, "ACT_RE_DEPLOYMENT", DEPLOYMENT_COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| deployment_row(&r)).collect()
}

/// Deployment `id`, if it exists.
pub async fn deployment_get(store: &dyn Sql, id: &str) -> Result<Option<DeploymentRow>> {
    let sql = format!("SELECT {DEPLOYMENT_SELECT} FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?");
    let rows = Rows::read(store, "ACT_RE_DEPLOYMENT", DEPLOYMENT_COLUMNS, &sql, &[t(id)]).await?;
    rows.first().map(|r| deployment_row(&r)).transpose()
}

/// One resource of a deployment: its name, and whether a definition was deployed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRow {
    pub name: String,
    pub is_definition: bool,
}

/// The resources of deployment `id`, by name.
pub async fn deployment_resources(store: &dyn Sql, id: &str) -> Result<Vec<ResourceRow>> {
    let rows = Rows::read(
        store,
        "ACT_GE_BYTEARRAY",
        &["NAME_", "DEFINITIONS"],
        "SELECT b.NAME_, (SELECT COUNT(*) FROM ACT_RE_PROCDEF d WHERE d.DEPLOYMENT_ID_ = b.DEPLOYMENT_ID_ \
         AND d.RESOURCE_NAME_ = b.NAME_) AS DEFINITIONS FROM ACT_GE_BYTEARRAY b WHERE b.DEPLOYMENT_ID_ = ? ORDER BY b.NAME_",
        &[t(id)],
    )
    .await?;
    rows.iter().map(|r| Ok(ResourceRow { name: r.text("NAME_")?, is_definition: r.int("DEFINITIONS")? > 0 })).collect()
}

/// The bytes of resource `name` of deployment `id`, if it has one by that name.
pub async fn deployment_resource_data(store: &dyn Sql, id: &str, name: &str) -> Result<Option<Vec<u8>>> {
    let rows = Rows::read(
        store,
        "ACT_GE_BYTEARRAY",
        &["ID_", "BYTES_"],
        "SELECT ID_, BYTES_ FROM ACT_GE_BYTEARRAY WHERE DEPLOYMENT_ID_ = ? AND NAME_ = ?",
        &[t(id), t(name)],
    )
    .await?;
    let Some(r) = rows.first() else { return Ok(None) };
    match r.value("BYTES_")? {
        SqlValue::Bytes(b) => Ok(Some(b.clone())),
        SqlValue::Text(s) => Ok(Some(s.clone().into_bytes())),
        SqlValue::Null => Ok(Some(Vec::new())),
        _ => Err(r.unreadable("BYTES_", "is not the bytes of a resource")),
    }
}

/// A running instance of one of a deployment's definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningInstance {
    pub id: String,
    pub definition_id: String,
}

/// At most `limit` running instances (root executions) of the definitions of deployment `id`,
/// by id.
pub async fn deployment_running_instances(store: &dyn Sql, id: &str, limit: u64) -> Result<Vec<RunningInstance>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_", "PROC_DEF_ID_"],
        "SELECT e.ID_, e.PROC_DEF_ID_ FROM ACT_RU_EXECUTION e JOIN ACT_RE_PROCDEF d ON d.ID_ = e.PROC_DEF_ID_ \
         WHERE d.DEPLOYMENT_ID_ = ? AND e.ID_ = e.PROC_INST_ID_ ORDER BY e.ID_ LIMIT ?",
        &[t(id), bound(limit)],
    )
    .await?;
    rows.iter().map(|r| Ok(RunningInstance { id: r.text("ID_")?, definition_id: r.text("PROC_DEF_ID_")? })).collect()
}

/// At most `limit` running instances of definition `id` that are (`suspended`) or are not
/// suspended, by id.
pub async fn definition_instances(store: &dyn Sql, id: &str, suspended: bool, limit: u64) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_EXECUTION WHERE PROC_DEF_ID_ = ? AND ID_ = PROC_INST_ID_ AND SUSPENSION_STATE_ = ? \
         ORDER BY ID_ LIMIT ?",
        &[t(id), i(if suspended { super::SUSPENDED } else { 1 }), bound(limit)],
    )
    .await?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// At most `limit` instances of the definitions of deployment `id` that have history and no
/// runtime rows any more (ended or deleted), for deleting their history
/// ([`super::history_delete`]).
pub async fn deployment_ended_instances(store: &dyn Sql, id: &str, limit: u64) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_HI_PROCINST",
        &["PROC_INST_ID_"],
        "SELECT h.PROC_INST_ID_ FROM ACT_HI_PROCINST h JOIN ACT_RE_PROCDEF d ON d.ID_ = h.PROC_DEF_ID_ \
         WHERE d.DEPLOYMENT_ID_ = ? AND NOT EXISTS (SELECT 1 FROM ACT_RU_EXECUTION e WHERE e.ID_ = h.PROC_INST_ID_) \
         ORDER BY h.PROC_INST_ID_ LIMIT ?",
        &[t(id), bound(limit)],
    )
    .await?;
    rows.iter().map(|r| r.text("PROC_INST_ID_")).collect()
}

/// The definitions of deployment `id`.
const DEFINITIONS_OF: &str = "SELECT ID_ FROM ACT_RE_PROCDEF WHERE DEPLOYMENT_ID_ = ?";

/// The statements that delete deployment `id` (see the module's doc for their order); `then`
/// runs after its definitions are gone and before its resources go (restoring the start events
/// of a key's new latest version). The guard fails the list with a conflict when the
/// deployment is gone or one of its definitions has an execution.
pub fn deployment_delete(id: &str, then: Vec<Write>) -> Vec<Write> {
    let mut w = Vec::new();
    for table in ["ACT_RU_JOB", "ACT_RU_SUSPENDED_JOB", "ACT_RU_DEADLETTER_JOB"] {
        w.push(Write::new(
            format!(
                "DELETE FROM ACT_GE_BYTEARRAY WHERE ID_ IN (SELECT EXCEPTION_STACK_ID_ FROM {table} \
                 WHERE PROC_DEF_ID_ IN ({DEFINITIONS_OF}))"
            ),
            vec![t(id)],
        ));
        w.push(Write::new(format!("DELETE FROM {table} WHERE PROC_DEF_ID_ IN ({DEFINITIONS_OF})"), vec![t(id)]));
    }
    w.push(
        Write::new(
            format!(
                "UPDATE ACT_RE_DEPLOYMENT SET NAME_ = NAME_ WHERE ID_ = ? AND NOT EXISTS \
                 (SELECT 1 FROM ACT_RU_EXECUTION e WHERE e.PROC_DEF_ID_ IN ({DEFINITIONS_OF}))"
            ),
            vec![t(id), t(id)],
        )
        .expect(1),
    );
    for table in ["ACT_RU_EVENT_SUBSCR", "ACT_RU_IDENTITYLINK"] {
        w.push(Write::new(format!("DELETE FROM {table} WHERE PROC_DEF_ID_ IN ({DEFINITIONS_OF})"), vec![t(id)]));
    }
    w.push(Write::new("DELETE FROM ACT_RE_PROCDEF WHERE DEPLOYMENT_ID_ = ?", vec![t(id)]));
    w.push(Write::new("DELETE FROM ACT_RE_DECISION_DEF WHERE DEPLOYMENT_ID_ = ?", vec![t(id)]));
    w.extend(then);
    w.push(Write::new("DELETE FROM ACT_GE_BYTEARRAY WHERE DEPLOYMENT_ID_ = ?", vec![t(id)]));
    w.push(Write::new("DELETE FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?", vec![t(id)]).expect(1));
    w
}
