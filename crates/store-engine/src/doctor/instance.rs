//! The queries of seed 000 §4.1's walk for one process instance (or a business key's), and of
//! what an instance without a job waits for (seed 003 §4.2, §5.2).

use super::Shown;
use crate::Rows;
use kairos_store::{Result, SqlValue, Store};

fn id(s: &str) -> [SqlValue; 1] {
    [SqlValue::Text(s.into())]
}

/// The running instances with business key `key`: their ids (PROC_INST_ID_, or ID_ of a root
/// that has none), by ID_.
pub async fn running_of_business_key(store: &dyn Store, key: &str) -> Result<Vec<String>> {
    let rows = store
        .sql_query(
            "SELECT ID_, PROC_INST_ID_ FROM ACT_RU_EXECUTION WHERE BUSINESS_KEY_ = ? AND PARENT_ID_ IS NULL ORDER BY ID_",
            &id(key),
        )
        .await?;
    let rows = Rows::new("ACT_RU_EXECUTION", &["ID_", "PROC_INST_ID_"], rows)?;
    rows.iter().map(|r| r.opt_text("PROC_INST_ID_")?.map_or_else(|| r.text("ID_"), Ok)).collect()
}

/// A finished instance in ACT_HI_PROCINST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedInstance {
    pub process_instance_id: String,
    pub end_time: Option<Shown>,
    pub delete_reason: Option<String>,
}

/// The finished instances with business key `key`, by END_TIME_.
pub async fn ended_of_business_key(store: &dyn Store, key: &str) -> Result<Vec<EndedInstance>> {
    let rows = store
        .sql_query(
            "SELECT PROC_INST_ID_, END_TIME_, DELETE_REASON_ FROM ACT_HI_PROCINST WHERE BUSINESS_KEY_ = ? AND END_TIME_ IS NOT NULL ORDER BY END_TIME_",
            &id(key),
        )
        .await?;
    let rows = Rows::new("ACT_HI_PROCINST", &["PROC_INST_ID_", "END_TIME_", "DELETE_REASON_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(EndedInstance {
                process_instance_id: r.text("PROC_INST_ID_")?,
                end_time: Shown::of(&r, "END_TIME_")?,
                delete_reason: r.opt_text("DELETE_REASON_")?,
            })
        })
        .collect()
}

/// Whether instance `id` runs, and if so whether it is suspended (SUSPENSION_STATE_ 2): None if
/// no root execution has that id.
pub async fn running_suspended(store: &dyn Store, id_: &str) -> Result<Option<bool>> {
    let rows = store
        .sql_query("SELECT ID_, SUSPENSION_STATE_ FROM ACT_RU_EXECUTION WHERE ID_ = ? AND PARENT_ID_ IS NULL", &id(id_))
        .await?;
    let rows = Rows::new("ACT_RU_EXECUTION", &["ID_", "SUSPENSION_STATE_"], rows)?;
    rows.first().map(|r| Ok(r.opt_int("SUSPENSION_STATE_")? == Some(2))).transpose()
}

/// Instance `id` in ACT_HI_PROCINST: None if history has no row of it. An instance that has
/// not ended has no END_TIME_.
pub async fn history_of(store: &dyn Store, id_: &str) -> Result<Option<EndedInstance>> {
    let rows = store
        .sql_query("SELECT END_TIME_, DELETE_REASON_ FROM ACT_HI_PROCINST WHERE PROC_INST_ID_ = ?", &id(id_))
        .await?;
    let rows = Rows::new("ACT_HI_PROCINST", &["END_TIME_", "DELETE_REASON_"], rows)?;
    rows.first()
        .map(|r| {
            Ok(EndedInstance {
                process_instance_id: id_.to_string(),
                end_time: Shown::of(&r, "END_TIME_")?,
                delete_reason: r.opt_text("DELETE_REASON_")?,
            })
        })
        .transpose()
}

/// An open user task of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTask {
    pub task_def_key: Option<String>,
    pub name: Option<String>,
    pub assignee: Option<String>,
}

/// The open user tasks of instance `id`, oldest first.
pub async fn open_tasks(store: &dyn Store, id_: &str) -> Result<Vec<OpenTask>> {
    let rows = store
        .sql_query(
            "SELECT TASK_DEF_KEY_, NAME_, ASSIGNEE_ FROM ACT_RU_TASK WHERE PROC_INST_ID_ = ? ORDER BY CREATE_TIME_, ID_",
            &id(id_),
        )
        .await?;
    let rows = Rows::new("ACT_RU_TASK", &["TASK_DEF_KEY_", "NAME_", "ASSIGNEE_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(OpenTask {
                task_def_key: r.opt_text("TASK_DEF_KEY_")?,
                name: r.opt_text("NAME_")?,
                assignee: r.opt_text("ASSIGNEE_")?,
            })
        })
        .collect()
}

/// An event an execution waits for (ACT_RU_EVENT_SUBSCR).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventWait {
    /// The waiting execution (only [`event_waits_without_activity`] names it).
    pub execution_id: Option<String>,
    pub event_type: String,
    pub event_name: Option<String>,
    pub activity_id: Option<String>,
}

/// The event subscriptions of instance `id`, oldest first.
pub async fn subscriptions(store: &dyn Store, id_: &str) -> Result<Vec<EventWait>> {
    let rows = store
        .sql_query(
            "SELECT EVENT_TYPE_, EVENT_NAME_, ACTIVITY_ID_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY CREATED_, ID_",
            &id(id_),
        )
        .await?;
    let rows = Rows::new("ACT_RU_EVENT_SUBSCR", &["EVENT_TYPE_", "EVENT_NAME_", "ACTIVITY_ID_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(EventWait {
                execution_id: None,
                event_type: r.text("EVENT_TYPE_")?,
                event_name: r.opt_text("EVENT_NAME_")?,
                activity_id: r.opt_text("ACTIVITY_ID_")?,
            })
        })
        .collect()
}

/// The activities the executions of instance `id` stand at, by execution id.
pub async fn activities(store: &dyn Store, id_: &str) -> Result<Vec<String>> {
    let rows = store
        .sql_query(
            "SELECT ACT_ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ? AND ACT_ID_ IS NOT NULL ORDER BY ID_",
            &id(id_),
        )
        .await?;
    let rows = Rows::new("ACT_RU_EXECUTION", &["ACT_ID_"], rows)?;
    rows.iter().map(|r| r.text("ACT_ID_")).collect()
}

/// Seed 003 §5.2: executions of instance `id` with no ACT_ID_ that wait on an event
/// subscription, with the event, by execution.
pub async fn event_waits_without_activity(store: &dyn Store, id_: &str) -> Result<Vec<EventWait>> {
    let rows = store
        .sql_query(
            "SELECT e.ID_, s.EVENT_TYPE_, s.EVENT_NAME_, s.ACTIVITY_ID_, e.IS_EVENT_SCOPE_ FROM ACT_RU_EXECUTION e \
             JOIN ACT_RU_EVENT_SUBSCR s ON s.EXECUTION_ID_ = e.ID_ \
             WHERE e.PROC_INST_ID_ = ? AND e.ACT_ID_ IS NULL ORDER BY e.ID_, s.ID_",
            &id(id_),
        )
        .await?;
    let rows =
        Rows::new("ACT_RU_EXECUTION", &["ID_", "EVENT_TYPE_", "EVENT_NAME_", "ACTIVITY_ID_", "IS_EVENT_SCOPE_"], rows)?;
    rows.iter()
        .map(|r| {
            Ok(EventWait {
                execution_id: Some(r.text("ID_")?),
                event_type: r.text("EVENT_TYPE_")?,
                event_name: r.opt_text("EVENT_NAME_")?,
                activity_id: r.opt_text("ACTIVITY_ID_")?,
            })
        })
        .collect()
}
