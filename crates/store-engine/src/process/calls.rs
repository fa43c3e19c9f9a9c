//! What a command needs to find beyond its own instance: the instances waiting for a message
//! or signal, the definitions that start by one, the instances a call activity called, and the
//! rows a command writes for a whole instance (its jobs on suspension, its business key).

use super::{JOB_COLUMNS, JOB_COLUMNS_UNLOCKED, opt, ot, t};
use crate::Rows;
use kairos_store::{Result, Sql, SqlValue, Write};

/// The instances waiting for message `name` (of instance `instance` and/or with business key
/// `business_key` and/or of `tenant`, when given), by when they started waiting; an instance
/// waiting in two places is listed twice.
pub async fn message_waiting(
    store: &dyn Sql,
    name: &str,
    instance: Option<&str>,
    business_key: Option<&str>,
    tenant: Option<&str>,
) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EVENT_SUBSCR",
        &["PROC_INST_ID_"],
        "SELECT s.PROC_INST_ID_ FROM ACT_RU_EVENT_SUBSCR s JOIN ACT_RU_EXECUTION e ON e.ID_ = s.PROC_INST_ID_ \
         WHERE s.EVENT_TYPE_ = 'message' AND s.EVENT_NAME_ = ? AND (CAST(? AS VARCHAR(64)) IS NULL OR s.PROC_INST_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR e.BUSINESS_KEY_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR s.TENANT_ID_ = ?) ORDER BY s.CREATED_",
        &[t(name), opt(instance), opt(instance), opt(business_key), opt(business_key), opt(tenant), opt(tenant)],
    )
    .await?;
    rows.iter().map(|r| r.text("PROC_INST_ID_")).collect()
}

/// The instances (of `tenant`, when given) waiting for signal `name` (not the start events it
/// starts), in instance order (ids are time-ordered: a retried delivery meets them as before),
/// each once.
pub async fn signal_waiting(store: &dyn Sql, name: &str, tenant: Option<&str>) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EVENT_SUBSCR",
        &["PROC_INST_ID_"],
        "SELECT DISTINCT PROC_INST_ID_ FROM ACT_RU_EVENT_SUBSCR WHERE EVENT_TYPE_ = 'signal' AND EVENT_NAME_ = ? \
         AND PROC_INST_ID_ IS NOT NULL AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?) ORDER BY PROC_INST_ID_",
        &[t(name), opt(tenant), opt(tenant)],
    )
    .await?;
    rows.iter().map(|r| r.text("PROC_INST_ID_")).collect()
}

/// Which kind of event a start event waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartTrigger {
    Message,
    Signal,
}

/// A start event subscription: the definition it starts and its start event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartSubscription {
    pub definition_id: String,
    pub activity_id: String,
}

/// The start events (of the latest versions, of `tenant` when given) that message or signal
/// `name` starts.
pub async fn start_subscriptions(
    store: &dyn Sql,
    trigger: StartTrigger,
    name: &str,
    tenant: Option<&str>,
) -> Result<Vec<StartSubscription>> {
    let sql = match trigger {
        StartTrigger::Message => {
            "SELECT ID_, CONFIGURATION_, ACTIVITY_ID_ FROM ACT_RU_EVENT_SUBSCR \
             WHERE EVENT_TYPE_ = 'message' AND EVENT_NAME_ = ? AND EXECUTION_ID_ IS NULL \
             AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?)"
        }
        StartTrigger::Signal => {
            "SELECT ID_, CONFIGURATION_, ACTIVITY_ID_ FROM ACT_RU_EVENT_SUBSCR \
             WHERE EVENT_TYPE_ = 'signal' AND EVENT_NAME_ = ? AND EXECUTION_ID_ IS NULL \
             AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?)"
        }
    };
    let binds = [t(name), opt(tenant), opt(tenant)];
    let rows =
        Rows::read(store, "ACT_RU_EVENT_SUBSCR", &["ID_", "CONFIGURATION_", "ACTIVITY_ID_"], sql, &binds).await?;
    rows.iter()
        .map(|r| {
            Ok(StartSubscription { definition_id: r.text("CONFIGURATION_")?, activity_id: r.text("ACTIVITY_ID_")? })
        })
        .collect()
}

/// The instances called by call activity execution `execution_id`.
pub async fn called_instances(store: &dyn Sql, execution_id: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_EXECUTION WHERE SUPER_EXEC_ = ? AND PARENT_ID_ IS NULL",
        &[t(execution_id)],
    )
    .await?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// The instances called by any call activity of instance `pi`.
pub async fn called_by_instance(store: &dyn Sql, pi: &str) -> Result<Vec<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_"],
        "SELECT ID_ FROM ACT_RU_EXECUTION WHERE PARENT_ID_ IS NULL AND SUPER_EXEC_ IN \
         (SELECT ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ?)",
        &[t(pi)],
    )
    .await?;
    rows.iter().map(|r| r.text("ID_")).collect()
}

/// Moves instance `pi`'s jobs to ACT_RU_SUSPENDED_JOB (`suspended`), where no executor looks,
/// or back to ACT_RU_JOB. A leased job moved away loses its lease: its completion is then
/// refused (fenced).
pub fn instance_jobs_move(pi: &str, suspended: bool) -> Vec<Write> {
    let (from, to) =
        if suspended { ("ACT_RU_JOB", "ACT_RU_SUSPENDED_JOB") } else { ("ACT_RU_SUSPENDED_JOB", "ACT_RU_JOB") };
    vec![
        Write::new(
            format!(
                "INSERT INTO {to} ({JOB_COLUMNS}) SELECT {JOB_COLUMNS_UNLOCKED} FROM {from} WHERE PROCESS_INSTANCE_ID_ = ?"
            ),
            vec![t(pi)],
        ),
        Write::new(format!("DELETE FROM {from} WHERE PROCESS_INSTANCE_ID_ = ?"), vec![t(pi)]),
    ]
}

/// Sets instance `pi`'s business key on every execution of it (seed 003 §4.2 finds tasks by
/// it); the root and the history row follow in the command's own writes.
pub fn instance_business_key(pi: &str, business_key: &Option<String>) -> Write {
    Write::new(
        "UPDATE ACT_RU_EXECUTION SET BUSINESS_KEY_ = ? WHERE PROC_INST_ID_ = ?",
        vec![ot(business_key), SqlValue::Text(pi.into())],
    )
}
