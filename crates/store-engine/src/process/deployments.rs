//! Deployments as rows (ACT_RE_DEPLOYMENT): listing, reading one, and the statements that
//! delete one with its definitions, resources and start events (Camunda's and Flowable's
//! `DELETE …/deployment/{id}`; its running instances are the engine's business first).

use super::{bound, t};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, Write};

/// A row of ACT_RE_DEPLOYMENT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentRow {
    pub id: String,
    pub name: Option<String>,
    pub deploy_time: Timestamp,
}

const COLUMNS: &[&str] = &["ID_", "NAME_", "DEPLOY_TIME_"];

fn row(r: &crate::Row<'_>) -> Result<DeploymentRow> {
    Ok(DeploymentRow { id: r.text("ID_")?, name: r.opt_text("NAME_")?, deploy_time: r.instant("DEPLOY_TIME_")? })
}

/// A page of deployments (oldest first, or newest with `newest_first`), of one name or all,
/// and how many match in all.
pub async fn deployment_list(
    store: &dyn Sql,
    name: Option<&str>,
    newest_first: bool,
    start: u64,
    size: u64,
) -> Result<(Vec<DeploymentRow>, u64)> {
    let (cond, mut binds) = match name {
        Some(n) => (" WHERE NAME_ = ?", vec![t(n)]),
        None => ("", Vec::new()),
    };
    let counted = Rows::read(
        store,
        "ACT_RE_DEPLOYMENT",
        &["N_"],
        &format!("SELECT COUNT(*) AS N_ FROM ACT_RE_DEPLOYMENT{cond}"),
        &binds,
    )
    .await?;
    let total = counted.first().map(|r| r.int("N_")).transpose()?.unwrap_or(0).max(0) as u64;
    let dir = if newest_first { "DESC" } else { "ASC" };
    binds.extend([bound(size), bound(start)]);
    let rows = Rows::read(
        store,
        "ACT_RE_DEPLOYMENT",
        COLUMNS,
        &format!(
            "SELECT ID_, NAME_, DEPLOY_TIME_ FROM ACT_RE_DEPLOYMENT{cond} ORDER BY DEPLOY_TIME_ {dir}, ID_ {dir} LIMIT ? OFFSET ?"
        ),
        &binds,
    )
    .await?;
    Ok((rows.iter().map(|r| row(&r)).collect::<Result<_>>()?, total))
}

/// Deployment `id`, if there is one.
pub async fn deployment_get(store: &dyn Sql, id: &str) -> Result<Option<DeploymentRow>> {
    let rows = Rows::read(
        store,
        "ACT_RE_DEPLOYMENT",
        COLUMNS,
        "SELECT ID_, NAME_, DEPLOY_TIME_ FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?",
        &[t(id)],
    )
    .await?;
    rows.first().map(|r| row(&r)).transpose()
}

/// The running instances of deployment `id`'s definitions (their root executions).
pub async fn deployment_instances(store: &dyn Sql, id: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_EXECUTION WHERE ID_ = PROC_INST_ID_ AND PROC_DEF_ID_ IN \
         (SELECT ID_ FROM ACT_RE_PROCDEF WHERE DEPLOYMENT_ID_ = ?) ORDER BY ID_",
        &[t(id)],
    )
    .await?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// Deletes deployment `id` with its definitions, its resources and their start events
/// (message and signal start subscriptions, timer start jobs). Running instances of its
/// definitions must be gone first; history stays.
pub fn deployment_delete_writes(id: &str) -> Vec<Write> {
    const DEFS: &str = "SELECT ID_ FROM ACT_RE_PROCDEF WHERE DEPLOYMENT_ID_ = ?";
    vec![
        Write::new(
            format!("DELETE FROM ACT_RU_EVENT_SUBSCR WHERE EXECUTION_ID_ IS NULL AND PROC_DEF_ID_ IN ({DEFS})"),
            vec![t(id)],
        ),
        Write::new(
            format!("DELETE FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = ? AND PROC_DEF_ID_ IN ({DEFS})"),
            vec![t(super::TIMER_START), t(id)],
        ),
        Write::new("DELETE FROM ACT_RE_PROCDEF WHERE DEPLOYMENT_ID_ = ?", vec![t(id)]),
        Write::new("DELETE FROM ACT_GE_BYTEARRAY WHERE DEPLOYMENT_ID_ = ?", vec![t(id)]),
        Write::new("DELETE FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?", vec![t(id)]).expect(1),
    ]
}
