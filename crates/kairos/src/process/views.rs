//! Read models of the process tables in the shapes API.md gives them (Flowable's REST names).

use super::Processes;
use crate::Error;
use jiff::Timestamp;
use kairos_process::{ErrorKind, Instance, ProcessError};
use kairos_store::SqlValue;
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
    pub priority: i64,
    pub create_time: Option<Timestamp>,
    pub due_date: Option<Timestamp>,
    pub form_key: Option<String>,
    pub suspended: bool,
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

pub(crate) fn instance_view(i: &Instance, key: &str) -> InstanceView {
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
    }
}

fn s(v: &SqlValue) -> String {
    v.as_str().unwrap_or_default().to_string()
}
fn os(v: &SqlValue) -> Option<String> {
    v.as_str().map(str::to_string)
}
fn opt(v: Option<&str>) -> SqlValue {
    v.map_or(SqlValue::Null, |x| SqlValue::Text(x.into()))
}

const INSTANCE_SQL: &str = "SELECT h.PROC_INST_ID_, h.PROC_DEF_ID_, h.PROC_DEF_KEY_, h.BUSINESS_KEY_, h.SUPER_PROCESS_INSTANCE_ID_, \
     h.END_TIME_, e.SUSPENSION_STATE_, h.START_TIME_, h.DELETE_REASON_ \
     FROM ACT_HI_PROCINST h LEFT JOIN ACT_RU_EXECUTION e ON e.ID_ = h.PROC_INST_ID_";

fn instance_row(r: &[SqlValue]) -> InstanceView {
    InstanceView {
        id: s(&r[0]),
        process_definition_id: s(&r[1]),
        process_definition_key: s(&r[2]),
        business_key: os(&r[3]),
        super_process_instance_id: os(&r[4]),
        ended: !r[5].is_null(),
        suspended: r[6].as_i64() == Some(2),
        start_time: r[7].as_timestamp(),
        end_time: r[5].as_timestamp(),
        delete_reason: os(&r[8]),
    }
}

impl Processes {
    /// Instance `id`, running or ended.
    pub async fn instance(&self, id: &str) -> Result<InstanceView, Error> {
        let rows =
            self.store.read(&format!("{INSTANCE_SQL} WHERE h.PROC_INST_ID_ = ?"), &[SqlValue::Text(id.into())]).await?;
        rows.first().map(|r| instance_row(r)).ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("process instance {id} does not exist")))
        })
    }

    /// Instances by business key / definition key; `finished` None = all, else only ended or running.
    pub async fn instances(
        &self,
        business_key: Option<&str>,
        definition_key: Option<&str>,
        finished: Option<bool>,
    ) -> Result<Vec<InstanceView>, Error> {
        let rows = self
            .store
            .read(
                &format!(
                    "{INSTANCE_SQL} WHERE (CAST(? AS VARCHAR(255)) IS NULL OR h.BUSINESS_KEY_ = ?) \
                     AND (CAST(? AS VARCHAR(255)) IS NULL OR h.PROC_DEF_KEY_ = ?) \
                     AND (? = 0 OR (? = 1 AND h.END_TIME_ IS NOT NULL) OR (? = 2 AND h.END_TIME_ IS NULL)) \
                     ORDER BY h.START_TIME_, h.PROC_INST_ID_"
                ),
                &[
                    opt(business_key),
                    opt(business_key),
                    opt(definition_key),
                    opt(definition_key),
                    SqlValue::Int(match finished {
                        None => 0,
                        Some(true) => 1,
                        Some(false) => 2,
                    }),
                    SqlValue::Int(match finished {
                        None => 0,
                        Some(true) => 1,
                        Some(false) => 2,
                    }),
                    SqlValue::Int(match finished {
                        None => 0,
                        Some(true) => 1,
                        Some(false) => 2,
                    }),
                ],
            )
            .await?;
        Ok(rows.iter().map(|r| instance_row(r)).collect())
    }

    /// Open tasks, filtered as API.md's `GET /runtime/tasks`.
    pub async fn tasks(
        &self,
        instance: Option<&str>,
        assignee: Option<&str>,
        candidate_user: Option<&str>,
        candidate_group: Option<&str>,
    ) -> Result<Vec<TaskView>, Error> {
        let rows = self
            .store
            .read(
                "SELECT t.ID_, t.NAME_, t.TASK_DEF_KEY_, t.PROC_INST_ID_, t.PROC_DEF_ID_, t.EXECUTION_ID_, t.ASSIGNEE_, \
                 t.PRIORITY_, t.CREATE_TIME_, t.DUE_DATE_, t.FORM_KEY_, t.SUSPENSION_STATE_ FROM ACT_RU_TASK t \
                 WHERE (CAST(? AS VARCHAR(64)) IS NULL OR t.PROC_INST_ID_ = ?) \
                 AND (CAST(? AS VARCHAR(255)) IS NULL OR t.ASSIGNEE_ = ?) \
                 AND (CAST(? AS VARCHAR(255)) IS NULL OR (t.ASSIGNEE_ IS NULL AND EXISTS (SELECT 1 FROM ACT_RU_IDENTITYLINK l \
                      WHERE l.TASK_ID_ = t.ID_ AND l.TYPE_ = 'candidate' AND l.USER_ID_ = ?))) \
                 AND (CAST(? AS VARCHAR(255)) IS NULL OR (t.ASSIGNEE_ IS NULL AND EXISTS (SELECT 1 FROM ACT_RU_IDENTITYLINK l \
                      WHERE l.TASK_ID_ = t.ID_ AND l.TYPE_ = 'candidate' AND l.GROUP_ID_ = ?))) \
                 ORDER BY t.CREATE_TIME_, t.ID_",
                &[
                    opt(instance),
                    opt(instance),
                    opt(assignee),
                    opt(assignee),
                    opt(candidate_user),
                    opt(candidate_user),
                    opt(candidate_group),
                    opt(candidate_group),
                ],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| TaskView {
                id: s(&r[0]),
                name: os(&r[1]),
                task_definition_key: s(&r[2]),
                process_instance_id: s(&r[3]),
                process_definition_id: s(&r[4]),
                execution_id: s(&r[5]),
                assignee: os(&r[6]),
                priority: r[7].as_i64().unwrap_or(50),
                create_time: r[8].as_timestamp(),
                due_date: r[9].as_timestamp(),
                form_key: os(&r[10]),
                suspended: r[11].as_i64() == Some(2),
            })
            .collect())
    }

    pub async fn task(&self, id: &str) -> Result<TaskView, Error> {
        let all = self
            .store
            .read("SELECT PROC_INST_ID_ FROM ACT_RU_TASK WHERE ID_ = ?", &[SqlValue::Text(id.into())])
            .await?;
        let Some(pi) = all.first().and_then(|r| os(&r[0])) else {
            return Err(Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {id} does not exist"))));
        };
        let tasks = self.tasks(Some(&pi), None, None, None).await?;
        tasks
            .into_iter()
            .find(|t| t.id == id)
            .ok_or_else(|| Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {id} does not exist"))))
    }

    /// The execution tree of an instance.
    pub async fn executions(&self, instance: &str) -> Result<Vec<ExecutionView>, Error> {
        let rows = self
            .store
            .read(
                "SELECT ID_, PARENT_ID_, PROC_INST_ID_, SUPER_EXEC_, ACT_ID_, IS_ACTIVE_, IS_CONCURRENT_, IS_SCOPE_, \
                 IS_EVENT_SCOPE_, SUSPENSION_STATE_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ? ORDER BY START_TIME_, ID_",
                &[SqlValue::Text(instance.into())],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| ExecutionView {
                id: s(&r[0]),
                parent_id: os(&r[1]),
                process_instance_id: s(&r[2]),
                super_execution_id: os(&r[3]),
                activity_id: os(&r[4]),
                is_active: r[5].as_bool().unwrap_or(false),
                is_concurrent: r[6].as_bool().unwrap_or(false),
                is_scope: r[7].as_bool().unwrap_or(false),
                is_event_scope: r[8].as_bool().unwrap_or(false),
                suspended: r[9].as_i64() == Some(2),
            })
            .collect())
    }

    /// ACT_HI_ACTINST of an instance, in start order.
    pub async fn activity_history(&self, instance: &str) -> Result<Vec<HistoricActivity>, Error> {
        let rows = self
            .store
            .read(
                "SELECT ACT_ID_, ACT_NAME_, ACT_TYPE_, EXECUTION_ID_, TASK_ID_, ASSIGNEE_, START_TIME_, END_TIME_, DELETE_REASON_ \
                 FROM ACT_HI_ACTINST WHERE PROC_INST_ID_ = ? ORDER BY SEQ_, START_TIME_",
                &[SqlValue::Text(instance.into())],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| HistoricActivity {
                activity_id: s(&r[0]),
                activity_name: os(&r[1]),
                activity_type: s(&r[2]),
                execution_id: s(&r[3]),
                task_id: os(&r[4]),
                assignee: os(&r[5]),
                start_time: r[6].as_timestamp(),
                end_time: r[7].as_timestamp(),
                delete_reason: os(&r[8]),
            })
            .collect())
    }
}
