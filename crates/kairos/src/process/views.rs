//! Read models of the process tables in the shapes API.md gives them (Flowable's REST names),
//! read by `kairos_store_engine::process`.

use super::Processes;
use crate::Error;
use kairos_process::{ErrorKind, Instance, ProcessError};
use kairos_store_engine::process::{self as tables, InstanceFilter, TaskFilter};

pub use kairos_store_engine::process::{ExecutionQuery, ExecutionView, HistoricActivity, InstanceView, TaskView};

pub(crate) fn instance_view(i: &Instance, key: &str) -> InstanceView {
    InstanceView::of(i, key)
}

impl Processes {
    /// Instance `id`, running or ended.
    pub async fn instance(&self, id: &str) -> Result<InstanceView, Error> {
        tables::instance_get(self.store.as_ref(), id).await?.ok_or_else(|| {
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
        let filter = InstanceFilter { business_key, definition_key, finished, tenant: None };
        self.instance_list(&filter).await
    }

    /// Instances by every filter [`InstanceFilter`] has (a tenant's only, with `tenant`),
    /// oldest start first.
    pub async fn instance_list(&self, filter: &InstanceFilter<'_>) -> Result<Vec<InstanceView>, Error> {
        Ok(tables::instance_list(self.store.as_ref(), filter).await?)
    }

    /// Open tasks, filtered as API.md's `GET /runtime/tasks`.
    pub async fn tasks(
        &self,
        instance: Option<&str>,
        assignee: Option<&str>,
        candidate_user: Option<&str>,
        candidate_group: Option<&str>,
    ) -> Result<Vec<TaskView>, Error> {
        let filter = TaskFilter { instance, assignee, candidate_user, candidate_group, ..TaskFilter::default() };
        self.task_list(&filter).await
    }

    /// Open tasks by every filter [`TaskFilter`] has, oldest first. A candidate user's tasks
    /// include those of the groups they are a member of.
    pub async fn task_list(&self, filter: &TaskFilter<'_>) -> Result<Vec<TaskView>, Error> {
        Ok(tables::task_list(self.store.as_ref(), filter).await?)
    }

    /// The form of open task `id`: its form key and the fields its model declares, each with
    /// the value the task sees now (`None` when it has none).
    pub async fn task_form(&self, id: &str) -> Result<TaskForm, Error> {
        let task = self.task(id).await?;
        let defs = self.definitions(&task.process_definition_id).await?;
        let fields = defs
            .processes
            .iter()
            .find_map(|p| p.node_by_id(&task.task_definition_key))
            .and_then(|n| match &n.kind {
                kairos_bpmn::NodeKind::UserTask(t) => Some(t.form_fields.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let vars = self.task_variables(id, kairos_process::TaskScope::All).await?;
        let fields = fields
            .into_iter()
            .map(|f| {
                let value = vars.get(&f.id).cloned();
                (f, value)
            })
            .collect();
        Ok(TaskForm { task, fields })
    }

    /// Per-activity counts of definition `id`: active tokens, jobs, dead letters.
    pub async fn activity_statistics(&self, id: &str) -> Result<Vec<tables::ActivityStatistics>, Error> {
        Ok(tables::activity_statistics(self.store.as_ref(), id).await?)
    }

    /// The tenant (`''`: none) of the row `id` names as `kind`, or `None` when there is none:
    /// what a caller scoped to one tenant is checked against (SPEC I7).
    pub async fn owner(&self, kind: super::Owned, id: &str) -> Result<Option<String>, Error> {
        Ok(kairos_store_engine::tenants::tenant_of(self.store.as_ref(), kind, id).await?)
    }

    /// Whether open task `id` is `user`'s: assigned to them, or unclaimed with them or one of
    /// their groups as candidate (their tasklist: `candidateOrAssigned`).
    pub async fn task_is_users(&self, id: &str, user: &str) -> Result<bool, Error> {
        let filter = TaskFilter { id: Some(id), candidate_or_assigned: Some(user), ..TaskFilter::default() };
        Ok(!self.task_list(&filter).await?.is_empty())
    }

    pub async fn task(&self, id: &str) -> Result<TaskView, Error> {
        let not_found = || Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {id} does not exist")));
        let Some(pi) = tables::task_instance(self.store.as_ref(), id).await? else { return Err(not_found()) };
        let tasks = self.tasks(Some(&pi), None, None, None).await?;
        let mut task = tasks.into_iter().find(|t| t.id == id).ok_or_else(not_found)?;
        // One task's candidates come from its instance's state; lists leave them out.
        if let Some(inst) = tables::instance_load(self.store.as_ref(), &pi).await?
            && let Some(t) = inst.task(id)
        {
            task.candidate_users = t.candidate_users.clone();
            task.candidate_groups = t.candidate_groups.clone();
        }
        Ok(task)
    }

    /// The execution tree of an instance.
    pub async fn executions(&self, instance: &str) -> Result<Vec<ExecutionView>, Error> {
        Ok(tables::execution_list(self.store.as_ref(), instance).await?)
    }

    /// A page of the executions matching `q` (in start order), and how many match in all.
    pub async fn execution_search(
        &self,
        q: &ExecutionQuery,
        start: u64,
        size: u64,
    ) -> Result<(Vec<ExecutionView>, u64), Error> {
        Ok(tables::execution_search(self.store.as_ref(), q, start, size).await?)
    }

    /// One execution, and the instance it belongs to; 404 when there is no such execution.
    pub async fn execution(&self, id: &str) -> Result<ExecutionView, Error> {
        let not_found =
            || Error::Process(ProcessError::new(ErrorKind::NotFound, format!("execution {id} does not exist")));
        let pi = tables::execution_instance(self.store.as_ref(), id).await?.ok_or_else(not_found)?;
        self.executions(&pi).await?.into_iter().find(|e| e.id == id).ok_or_else(not_found)
    }

    /// ACT_HI_ACTINST of an instance, in start order.
    pub async fn activity_history(&self, instance: &str) -> Result<Vec<HistoricActivity>, Error> {
        Ok(tables::activity_history(self.store.as_ref(), instance).await?)
    }
}

/// A task's form ([`Processes::task_form`]).
#[derive(Debug, Clone)]
pub struct TaskForm {
    pub task: TaskView,
    /// Each field with the value the task sees now.
    pub fields: Vec<(kairos_bpmn::FormField, Option<serde_json::Value>)>,
}
