//! Whose a row is (SPEC I7): the tenant (TENANT_ID_) of a deployment, definition, instance,
//! execution, task, job or user, looked up by id, so that a caller scoped to one tenant is
//! answered 404 for another tenant's id wherever it names one (`kairos-server`'s tenant guard).
//!
//! Each kind is looked up in its runtime table and its history table together (an ended
//! instance or a completed task keeps its tenant in ACT_HI_*), one statement per kind.

use crate::Rows;
use kairos_store::{Result, Sql, SqlValue};

/// What an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owned {
    Deployment,
    ProcessDefinition,
    DecisionDefinition,
    /// A process instance, running or ended.
    Instance,
    /// An execution of a running instance.
    Execution,
    /// A user task, open or ended.
    Task,
    /// A job of any state (executable, timer, external, suspended, dead letter) or its log.
    Job,
    /// An event subscription.
    Subscription,
    User,
}

impl Owned {
    /// The statement that reads the tenant of one id (bound once per `?`).
    fn sql(self) -> &'static str {
        match self {
            Owned::Deployment => "SELECT TENANT_ID_ FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?",
            Owned::ProcessDefinition => "SELECT TENANT_ID_ FROM ACT_RE_PROCDEF WHERE ID_ = ?",
            Owned::DecisionDefinition => "SELECT TENANT_ID_ FROM ACT_RE_DECISION_DEF WHERE ID_ = ?",
            Owned::Instance => {
                "SELECT TENANT_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ? \
                 UNION ALL SELECT TENANT_ID_ FROM ACT_HI_PROCINST WHERE PROC_INST_ID_ = ?"
            }
            Owned::Execution => "SELECT TENANT_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ?",
            Owned::Task => {
                "SELECT TENANT_ID_ FROM ACT_RU_TASK WHERE ID_ = ? \
                 UNION ALL SELECT TENANT_ID_ FROM ACT_HI_TASKINST WHERE ID_ = ?"
            }
            Owned::Job => {
                "SELECT TENANT_ID_ FROM ACT_RU_JOB WHERE ID_ = ? \
                 UNION ALL SELECT TENANT_ID_ FROM ACT_RU_SUSPENDED_JOB WHERE ID_ = ? \
                 UNION ALL SELECT TENANT_ID_ FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = ? \
                 UNION ALL SELECT TENANT_ID_ FROM ACT_HI_JOB_LOG WHERE JOB_ID_ = ?"
            }
            Owned::Subscription => "SELECT TENANT_ID_ FROM ACT_RU_EVENT_SUBSCR WHERE ID_ = ?",
            Owned::User => "SELECT TENANT_ID_ FROM ACT_ID_USER WHERE ID_ = ?",
        }
    }

    /// The table a row of this kind is read from first (for an unreadable row's error).
    fn table(self) -> &'static str {
        match self {
            Owned::Deployment => "ACT_RE_DEPLOYMENT",
            Owned::ProcessDefinition => "ACT_RE_PROCDEF",
            Owned::DecisionDefinition => "ACT_RE_DECISION_DEF",
            Owned::Instance | Owned::Execution => "ACT_RU_EXECUTION",
            Owned::Task => "ACT_RU_TASK",
            Owned::Job => "ACT_RU_JOB",
            Owned::Subscription => "ACT_RU_EVENT_SUBSCR",
            Owned::User => "ACT_ID_USER",
        }
    }
}

/// The tenant of `id` as `kind` (`''`: no tenant), or `None` when there is no such row. Rows
/// of two tenants under one id (which kairos never writes) answer the first non-empty one, so
/// that such an id is never taken for a tenant-less one.
pub async fn tenant_of(store: &dyn Sql, kind: Owned, id: &str) -> Result<Option<String>> {
    let sql = kind.sql();
    let binds = vec![SqlValue::Text(id.to_string()); sql.matches('?').count()];
    let rows = Rows::read(store, kind.table(), &["TENANT_ID_"], sql, &binds).await?;
    let mut found: Option<String> = None;
    for r in rows.iter() {
        let tenant = r.opt_text("TENANT_ID_")?.unwrap_or_default();
        if found.as_deref().is_none_or(str::is_empty) {
            found = Some(tenant);
        }
    }
    Ok(found)
}
