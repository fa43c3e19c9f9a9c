//! Read models of the runtime tables in the shapes API.md gives them (Flowable's REST names):
//! instances, tasks, executions, an instance's activity history.

use super::{SUSPENDED, finished_code, opt, t};
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_process::Instance;
use kairos_store::{Result, Sql, SqlValue};
use serde::{Deserialize, Serialize};

/// A process instance (runtime or historic).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceView {
    pub id: String,
    pub process_definition_id: String,
    pub process_definition_key: String,
    pub business_key: Option<String>,
    pub super_process_instance_id: Option<String>,
    pub ended: bool,
    pub suspended: bool,
    pub start_time: Option<Timestamp>,
    pub end_time: Option<Timestamp>,
    pub delete_reason: Option<String>,
    /// TENANT_ID_: its definition's tenant (`''`: none). Absent from answers recorded before
    /// tenants (requestIds), which were all of no tenant.
    #[serde(default)]
    pub tenant_id: String,
}

impl InstanceView {
    /// An instance in memory (of definition key `key`), as the API shows it.
    pub fn of(i: &Instance, key: &str) -> InstanceView {
        InstanceView {
            id: i.id.clone(),
            process_definition_id: i.definition_id.clone(),
            process_definition_key: key.to_string(),
            business_key: i.business_key.clone(),
            super_process_instance_id: i.super_instance.clone(),
            ended: i.ended.is_some(),
            suspended: i.suspension_state == kairos_process::SuspensionState::Suspended,
            start_time: Some(i.start_time),
            end_time: i.ended.as_ref().map(|(t, _)| *t),
            delete_reason: i.delete_reason.clone(),
            tenant_id: i.tenant_id.clone(),
        }
    }
}

/// A user task.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    pub id: String,
    pub name: Option<String>,
    pub task_definition_key: String,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub execution_id: String,
    pub assignee: Option<String>,
    pub owner: Option<String>,
    pub description: Option<String>,
    /// Candidate users and groups (ACT_RU_IDENTITYLINK, TYPE_ 'candidate'): read for one task,
    /// left out of lists.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidate_users: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidate_groups: Vec<String>,
    pub priority: i64,
    pub create_time: Option<Timestamp>,
    pub due_date: Option<Timestamp>,
    pub form_key: Option<String>,
    pub suspended: bool,
    /// TENANT_ID_: its instance's tenant (`''`: none).
    pub tenant_id: String,
}

/// A row of the execution tree.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionView {
    pub id: String,
    pub parent_id: Option<String>,
    pub process_instance_id: String,
    pub super_execution_id: Option<String>,
    pub activity_id: Option<String>,
    pub is_active: bool,
    pub is_concurrent: bool,
    pub is_scope: bool,
    pub is_event_scope: bool,
    pub suspended: bool,
}

/// A row of ACT_HI_ACTINST.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricActivity {
    pub activity_id: String,
    pub activity_name: Option<String>,
    pub activity_type: String,
    pub execution_id: String,
    pub task_id: Option<String>,
    pub assignee: Option<String>,
    pub start_time: Option<Timestamp>,
    pub end_time: Option<Timestamp>,
    pub delete_reason: Option<String>,
}

/// Which instances [`instance_list`] answers (all filters optional).
#[derive(Debug, Clone, Copy, Default)]
pub struct InstanceFilter<'a> {
    pub business_key: Option<&'a str>,
    pub definition_key: Option<&'a str>,
    /// `None`: all; `Some(true)`: only ended; `Some(false)`: only running.
    pub finished: Option<bool>,
    /// Only this tenant's (`''`: of no tenant); `None`: every tenant's.
    pub tenant: Option<&'a str>,
}

/// Which open tasks [`task_list`] answers (all filters optional), as `GET /runtime/tasks`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskFilter<'a> {
    /// This task only.
    pub id: Option<&'a str>,
    pub instance: Option<&'a str>,
    pub assignee: Option<&'a str>,
    /// Unassigned tasks this user is a candidate for, named or through a group they are a
    /// member of (Flowable's and Camunda's `candidateUser`).
    pub candidate_user: Option<&'a str>,
    /// Tasks assigned to this user, and unassigned ones they are a candidate for (named or
    /// through a group): Flowable's `candidateOrAssigned`, a person's tasklist.
    pub candidate_or_assigned: Option<&'a str>,
    /// Unassigned tasks this group is a candidate for.
    pub candidate_group: Option<&'a str>,
    /// Only this tenant's (`''`: of no tenant); `None`: every tenant's.
    pub tenant: Option<&'a str>,
}

const INSTANCE_SQL: &str = "SELECT h.PROC_INST_ID_, h.PROC_DEF_ID_, h.PROC_DEF_KEY_, h.BUSINESS_KEY_, h.SUPER_PROCESS_INSTANCE_ID_, \
     h.END_TIME_, e.SUSPENSION_STATE_, h.START_TIME_, h.DELETE_REASON_, h.TENANT_ID_ \
     FROM ACT_HI_PROCINST h LEFT JOIN ACT_RU_EXECUTION e ON e.ID_ = h.PROC_INST_ID_";
const INSTANCE_COLUMNS: &[&str] = &[
    "PROC_INST_ID_",
    "PROC_DEF_ID_",
    "PROC_DEF_KEY_",
    "BUSINESS_KEY_",
    "SUPER_PROCESS_INSTANCE_ID_",
    "END_TIME_",
    "SUSPENSION_STATE_",
    "START_TIME_",
    "DELETE_REASON_",
    "TENANT_ID_",
];

fn instance_row(r: &Row<'_>) -> Result<InstanceView> {
    let end_time = r.opt_instant("END_TIME_")?;
    Ok(InstanceView {
        id: r.text("PROC_INST_ID_")?,
        process_definition_id: r.text("PROC_DEF_ID_")?,
        process_definition_key: r.text("PROC_DEF_KEY_")?,
        business_key: r.opt_text("BUSINESS_KEY_")?,
        super_process_instance_id: r.opt_text("SUPER_PROCESS_INSTANCE_ID_")?,
        ended: end_time.is_some(),
        suspended: r.opt_int("SUSPENSION_STATE_")? == Some(SUSPENDED),
        start_time: r.opt_instant("START_TIME_")?,
        end_time,
        delete_reason: r.opt_text("DELETE_REASON_")?,
        tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
    })
}

/// Instance `id` (ACT_HI_PROCINST: running or ended), if it exists.
pub async fn instance_get(store: &dyn Sql, id: &str) -> Result<Option<InstanceView>> {
    let sql = format!("{INSTANCE_SQL} WHERE h.PROC_INST_ID_ = ?");
    let rows = Rows::read(store, "ACT_HI_PROCINST", INSTANCE_COLUMNS, &sql, &[t(id)]).await?;
    rows.first().map(|r| instance_row(&r)).transpose()
}

/// Instances by `filter`, oldest start first.
pub async fn instance_list(store: &dyn Sql, filter: &InstanceFilter<'_>) -> Result<Vec<InstanceView>> {
    let sql = format!(
        "{INSTANCE_SQL} WHERE (CAST(? AS VARCHAR(255)) IS NULL OR h.BUSINESS_KEY_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR h.PROC_DEF_KEY_ = ?) \
         AND (? = 0 OR (? = 1 AND h.END_TIME_ IS NOT NULL) OR (? = 2 AND h.END_TIME_ IS NULL)) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR h.TENANT_ID_ = ?) \
         ORDER BY h.START_TIME_, h.PROC_INST_ID_"
    );
    let (bk, key, f) = (opt(filter.business_key), opt(filter.definition_key), finished_code(filter.finished));
    let tenant = opt(filter.tenant);
    let binds = [bk.clone(), bk, key.clone(), key, f.clone(), f.clone(), f, tenant.clone(), tenant];
    let rows = Rows::read(store, "ACT_HI_PROCINST", INSTANCE_COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| instance_row(&r)).collect()
}

/// A candidate link of task `t` for user `?`: named, or through a group the user is in (two
/// binds: the user twice).
const CANDIDATE: &str = "SELECT 1 FROM ACT_RU_IDENTITYLINK l WHERE l.TASK_ID_ = t.ID_ AND l.TYPE_ = 'candidate' \
     AND (l.USER_ID_ = ? OR l.GROUP_ID_ IN (SELECT m.GROUP_ID_ FROM ACT_ID_MEMBERSHIP m WHERE m.USER_ID_ = ?))";

/// Open tasks by `filter`, oldest first.
pub async fn task_list(store: &dyn Sql, filter: &TaskFilter<'_>) -> Result<Vec<TaskView>> {
    const COLUMNS: &[&str] = &[
        "ID_",
        "NAME_",
        "TASK_DEF_KEY_",
        "PROC_INST_ID_",
        "PROC_DEF_ID_",
        "EXECUTION_ID_",
        "ASSIGNEE_",
        "PRIORITY_",
        "CREATE_TIME_",
        "DUE_DATE_",
        "FORM_KEY_",
        "SUSPENSION_STATE_",
        "OWNER_",
        "DESCRIPTION_",
        "TENANT_ID_",
    ];
    let tenant = opt(filter.tenant);
    let (pi, user, group) = (opt(filter.instance), opt(filter.candidate_user), opt(filter.candidate_group));
    let (id, assignee, mine) = (opt(filter.id), opt(filter.assignee), opt(filter.candidate_or_assigned));
    let sql = format!(
        "SELECT t.ID_, t.NAME_, t.TASK_DEF_KEY_, t.PROC_INST_ID_, t.PROC_DEF_ID_, t.EXECUTION_ID_, t.ASSIGNEE_, \
         t.PRIORITY_, t.CREATE_TIME_, t.DUE_DATE_, t.FORM_KEY_, t.SUSPENSION_STATE_, t.OWNER_, t.DESCRIPTION_, t.TENANT_ID_ FROM ACT_RU_TASK t \
         WHERE (CAST(? AS VARCHAR(64)) IS NULL OR t.ID_ = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR t.PROC_INST_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR t.ASSIGNEE_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR (t.ASSIGNEE_ IS NULL AND EXISTS ({CANDIDATE}))) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR t.ASSIGNEE_ = ? OR (t.ASSIGNEE_ IS NULL AND EXISTS ({CANDIDATE}))) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR (t.ASSIGNEE_ IS NULL AND EXISTS (SELECT 1 FROM ACT_RU_IDENTITYLINK l \
              WHERE l.TASK_ID_ = t.ID_ AND l.TYPE_ = 'candidate' AND l.GROUP_ID_ = ?))) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR t.TENANT_ID_ = ?) \
         ORDER BY t.CREATE_TIME_, t.ID_"
    );
    let rows = Rows::read(
        store,
        "ACT_RU_TASK",
        COLUMNS,
        &sql,
        &[
            id.clone(),
            id,
            pi.clone(),
            pi,
            assignee.clone(),
            assignee,
            user.clone(),
            user.clone(),
            user,
            mine.clone(),
            mine.clone(),
            mine.clone(),
            mine,
            group.clone(),
            group,
            tenant.clone(),
            tenant,
        ],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(TaskView {
                id: r.text("ID_")?,
                name: r.opt_text("NAME_")?,
                task_definition_key: r.text("TASK_DEF_KEY_")?,
                process_instance_id: r.text("PROC_INST_ID_")?,
                process_definition_id: r.text("PROC_DEF_ID_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                assignee: r.opt_text("ASSIGNEE_")?,
                owner: r.opt_text("OWNER_")?,
                description: r.opt_text("DESCRIPTION_")?,
                candidate_users: Vec::new(),
                candidate_groups: Vec::new(),
                priority: r.int("PRIORITY_")?,
                create_time: r.opt_instant("CREATE_TIME_")?,
                due_date: r.opt_instant("DUE_DATE_")?,
                form_key: r.opt_text("FORM_KEY_")?,
                suspended: r.int("SUSPENSION_STATE_")? == SUSPENDED,
                tenant_id: r.opt_text("TENANT_ID_")?.unwrap_or_default(),
            })
        })
        .collect()
}

/// The instance an open task belongs to, if the task is open.
pub async fn task_instance(store: &dyn Sql, task_id: &str) -> Result<Option<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_TASK",
        &["ID_", "PROC_INST_ID_"],
        "SELECT ID_, PROC_INST_ID_ FROM ACT_RU_TASK WHERE ID_ = ?",
        &[t(task_id)],
    )
    .await?;
    rows.first().map(|r| r.text("PROC_INST_ID_")).transpose()
}

/// How a task that is no longer open ended, from its history (ACT_HI_TASKINST).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskEnded {
    /// Its history row is open or absent (no task history kept, or no such task).
    Unknown,
    Completed,
    /// Cancelled, with the reason.
    Cancelled(String),
}

/// How task `task_id` ended, by its ACT_HI_TASKINST row.
pub async fn task_ended(store: &dyn Sql, task_id: &str) -> Result<TaskEnded> {
    let rows = Rows::read(
        store,
        "ACT_HI_TASKINST",
        &["ID_", "END_TIME_", "DELETE_REASON_"],
        "SELECT ID_, END_TIME_, DELETE_REASON_ FROM ACT_HI_TASKINST WHERE ID_ = ?",
        &[t(task_id)],
    )
    .await?;
    let Some(r) = rows.first() else { return Ok(TaskEnded::Unknown) };
    if r.value("END_TIME_")?.is_null() {
        return Ok(TaskEnded::Unknown);
    }
    Ok(match r.opt_text("DELETE_REASON_")? {
        Some(reason) => TaskEnded::Cancelled(reason),
        None => TaskEnded::Completed,
    })
}

/// The instance execution `id` belongs to, if it exists.
pub async fn execution_instance(store: &dyn Sql, id: &str) -> Result<Option<String>> {
    let rows = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ID_", "PROC_INST_ID_"],
        "SELECT ID_, PROC_INST_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ?",
        &[t(id)],
    )
    .await?;
    rows.first().map(|r| r.text("PROC_INST_ID_")).transpose()
}

/// The execution tree of an instance, in start order.
pub async fn execution_list(store: &dyn Sql, instance: &str) -> Result<Vec<ExecutionView>> {
    let q = ExecutionQuery { process_instance_id: Some(instance.to_string()), ..Default::default() };
    Ok(execution_search(store, &q, 0, u64::MAX >> 1).await?.0)
}

/// Which executions Camunda's `GET /execution` lists: every filter given must hold.
#[derive(Debug, Clone, Default)]
pub struct ExecutionQuery {
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    /// The business key of the execution's process instance.
    pub business_key: Option<String>,
    pub activity_id: Option<String>,
    /// Executions holding an event subscription of this message / signal name.
    pub message_event_subscription_name: Option<String>,
    pub signal_event_subscription_name: Option<String>,
    pub suspended: Option<bool>,
    /// Only this tenant's (`''`: of no tenant).
    pub tenant: Option<String>,
}

/// A page of ACT_RU_EXECUTION matching `q` (in start order) and how many match in all.
pub async fn execution_search(
    store: &dyn Sql,
    q: &ExecutionQuery,
    start: u64,
    size: u64,
) -> Result<(Vec<ExecutionView>, u64)> {
    const WHERE: &str = "WHERE (CAST(? AS VARCHAR(64)) IS NULL OR e.PROC_INST_ID_ = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR e.PROC_DEF_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR EXISTS (SELECT 1 FROM ACT_RU_EXECUTION r \
              WHERE r.ID_ = e.PROC_INST_ID_ AND r.BUSINESS_KEY_ = ?)) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR e.ACT_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR EXISTS (SELECT 1 FROM ACT_RU_EVENT_SUBSCR s \
              WHERE s.EXECUTION_ID_ = e.ID_ AND s.EVENT_TYPE_ = 'message' AND s.EVENT_NAME_ = ?)) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR EXISTS (SELECT 1 FROM ACT_RU_EVENT_SUBSCR s \
              WHERE s.EXECUTION_ID_ = e.ID_ AND s.EVENT_TYPE_ = 'signal' AND s.EVENT_NAME_ = ?)) \
         AND (? < 0 OR e.SUSPENSION_STATE_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR e.TENANT_ID_ = ?)";
    const COLUMNS: &[&str] = &[
        "ID_",
        "PARENT_ID_",
        "PROC_INST_ID_",
        "SUPER_EXEC_",
        "ACT_ID_",
        "IS_ACTIVE_",
        "IS_CONCURRENT_",
        "IS_SCOPE_",
        "IS_EVENT_SCOPE_",
        "SUSPENSION_STATE_",
    ];
    let mut binds = Vec::new();
    for f in [
        &q.process_instance_id,
        &q.process_definition_id,
        &q.business_key,
        &q.activity_id,
        &q.message_event_subscription_name,
        &q.signal_event_subscription_name,
    ] {
        let v = f.as_deref().map_or(SqlValue::Null, t);
        binds.extend([v.clone(), v]);
    }
    let state = match q.suspended {
        None => -1,
        Some(true) => SUSPENDED,
        Some(false) => 1,
    };
    binds.extend([SqlValue::Int(state), SqlValue::Int(state)]);
    {
        let f = &q.tenant;
        let v = f.as_deref().map_or(SqlValue::Null, t);
        binds.extend([v.clone(), v]);
    }
    let total = super::history_views::count(
        store,
        "ACT_RU_EXECUTION",
        &format!("SELECT COUNT(*) FROM ACT_RU_EXECUTION e {WHERE}"),
        &binds,
    )
    .await?;
    binds.extend([super::bound(size), super::bound(start)]);
    let sql = format!(
        "SELECT e.ID_, e.PARENT_ID_, e.PROC_INST_ID_, e.SUPER_EXEC_, e.ACT_ID_, e.IS_ACTIVE_, e.IS_CONCURRENT_, \
         e.IS_SCOPE_, e.IS_EVENT_SCOPE_, e.SUSPENSION_STATE_ FROM ACT_RU_EXECUTION e {WHERE} \
         ORDER BY e.START_TIME_, e.ID_ LIMIT ? OFFSET ?"
    );
    let rows = Rows::read(store, "ACT_RU_EXECUTION", COLUMNS, &sql, &binds).await?;
    rows.iter()
        .map(|r| {
            Ok(ExecutionView {
                id: r.text("ID_")?,
                parent_id: r.opt_text("PARENT_ID_")?,
                process_instance_id: r.text("PROC_INST_ID_")?,
                super_execution_id: r.opt_text("SUPER_EXEC_")?,
                activity_id: r.opt_text("ACT_ID_")?,
                is_active: r.flag("IS_ACTIVE_")?,
                is_concurrent: r.flag("IS_CONCURRENT_")?,
                is_scope: r.flag("IS_SCOPE_")?,
                is_event_scope: r.flag("IS_EVENT_SCOPE_")?,
                suspended: r.int("SUSPENSION_STATE_")? == SUSPENDED,
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(|v| (v, total))
}

/// ACT_HI_ACTINST of an instance, in start order.
pub async fn activity_history(store: &dyn Sql, instance: &str) -> Result<Vec<HistoricActivity>> {
    const COLUMNS: &[&str] = &[
        "ID_",
        "ACT_ID_",
        "ACT_NAME_",
        "ACT_TYPE_",
        "EXECUTION_ID_",
        "TASK_ID_",
        "ASSIGNEE_",
        "START_TIME_",
        "END_TIME_",
        "DELETE_REASON_",
    ];
    let rows = Rows::read(
        store,
        "ACT_HI_ACTINST",
        COLUMNS,
        "SELECT ID_, ACT_ID_, ACT_NAME_, ACT_TYPE_, EXECUTION_ID_, TASK_ID_, ASSIGNEE_, START_TIME_, END_TIME_, \
         DELETE_REASON_ FROM ACT_HI_ACTINST WHERE PROC_INST_ID_ = ? ORDER BY SEQ_, START_TIME_",
        &[t(instance)],
    )
    .await?;
    rows.iter()
        .map(|r| {
            Ok(HistoricActivity {
                activity_id: r.text("ACT_ID_")?,
                activity_name: r.opt_text("ACT_NAME_")?,
                activity_type: r.text("ACT_TYPE_")?,
                execution_id: r.text("EXECUTION_ID_")?,
                task_id: r.opt_text("TASK_ID_")?,
                assignee: r.opt_text("ASSIGNEE_")?,
                start_time: r.opt_instant("START_TIME_")?,
                end_time: r.opt_instant("END_TIME_")?,
                delete_reason: r.opt_text("DELETE_REASON_")?,
            })
        })
        .collect()
}
