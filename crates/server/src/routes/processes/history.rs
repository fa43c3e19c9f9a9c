//! `/history/historic-*` (SPEC P9): instances (running and ended), the activities an instance
//! went through in start order, its tasks, and at history level `full` every variable change
//! (ACT_HI_PROCINST, ACT_HI_ACTINST, ACT_HI_TASKINST, ACT_HI_DETAIL).

use super::{filter, limited, paged, required};
use crate::AppState;
use crate::dto::{HistoricTaskDto, List};
use crate::error::ApiError;
use crate::extract::{Query, flag, page};
use crate::tenancy::Scope;
use axum::extract::State;
use kairos::process::{DetailQuery, HistoricActivity, HistoricDetail, InstanceFilter, InstanceView};
use kairos_process::ErrorKind;
use serde::{Deserialize, Serialize};

/// A historic instance as Flowable's `HistoricProcessInstanceResponse` has it: kairos's view
/// and Flowable's `url`, `processDefinitionUrl`, `durationInMillis`, `tenantId`, `variables`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoricInstanceResponse {
    #[serde(flatten)]
    pub view: InstanceView,
    pub url: String,
    pub process_definition_url: String,
    pub duration_in_millis: Option<i64>,
    pub variables: Vec<crate::flowable::RestVariable>,
}

impl HistoricInstanceResponse {
    pub fn of(view: InstanceView) -> Self {
        let duration = match (view.start_time, view.end_time) {
            (Some(s), Some(e)) => Some(e.duration_since(s).as_millis() as i64),
            _ => None,
        };
        HistoricInstanceResponse {
            url: format!("/history/historic-process-instances/{}", view.id),
            process_definition_url: format!("/repository/process-definitions/{}", view.process_definition_id),
            duration_in_millis: duration,
            variables: Vec::new(),
            view,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstancesQuery {
    process_instance_id: Option<String>,
    process_definition_key: Option<String>,
    business_key: Option<String>,
    finished: Option<String>,
    tenant_id: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/historic-process-instances?processInstanceId=&processDefinitionKey=&businessKey=&finished=&tenantId=`,
/// oldest first.
pub async fn instances(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<InstancesQuery>,
) -> Result<axum::Json<List<HistoricInstanceResponse>>, ApiError> {
    let finished = flag("finished", q.finished.as_deref())?;
    let (bk, key) = (filter(q.business_key), filter(q.process_definition_key));
    let processes = app.engine.processes();
    let tenant = filter(q.tenant_id);
    let tenant = scope.filter(tenant.as_deref());
    let all = match filter(q.process_instance_id) {
        Some(id) => match processes.instance(&id).await {
            Ok(i) => vec![i]
                .into_iter()
                .filter(|i| bk.as_ref().is_none_or(|b| i.business_key.as_ref() == Some(b)))
                .filter(|i| key.as_ref().is_none_or(|k| &i.process_definition_key == k))
                .filter(|i| finished.is_none_or(|f| i.ended == f))
                .filter(|i| tenant.is_none_or(|t| i.tenant_id == t))
                .collect(),
            Err(kairos::Error::Process(p)) if p.kind == ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        },
        None => {
            let f = InstanceFilter { business_key: bk.as_deref(), definition_key: key.as_deref(), finished, tenant };
            processes.instance_list(&f).await?
        }
    };
    let sorting = crate::dto::Sorting::parse(q.sort.as_deref(), q.order.as_deref(), HISTORIC_INSTANCE_SORTS, "id")?;
    let all: Vec<HistoricInstanceResponse> = all.into_iter().map(HistoricInstanceResponse::of).collect();
    Ok(axum::Json(super::paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ByInstanceQuery {
    process_instance_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/historic-activity-instances?processInstanceId=` (required), in start order.
pub async fn activities(
    State(app): State<AppState>,
    _scope: Scope,
    Query(q): Query<ByInstanceQuery>,
) -> Result<axum::Json<List<HistoricActivity>>, ApiError> {
    let pi = required("processInstanceId", q.process_instance_id, 64)?;
    let all = app.engine.processes().activity_history(&pi).await?;
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksQuery {
    process_instance_id: Option<String>,
    finished: Option<String>,
    tenant_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/historic-task-instances?processInstanceId=&finished=&tenantId=`: every user
/// task, open or done, oldest first.
pub async fn tasks(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<TasksQuery>,
) -> Result<axum::Json<List<HistoricTaskDto>>, ApiError> {
    let (start, size) = page(q.start.as_deref(), q.size.as_deref())?;
    let finished = flag("finished", q.finished.as_deref())?;
    let pi = filter(q.process_instance_id);
    let tenant = filter(q.tenant_id);
    let tenant = scope.filter(tenant.as_deref());
    let (data, total) =
        app.engine.processes().historic_tasks_in(tenant, pi.as_deref(), finished, (start, size)).await?;
    Ok(axum::Json(List::new(data, total, start)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DetailsQuery {
    id: Option<String>,
    process_instance_id: Option<String>,
    execution_id: Option<String>,
    activity_instance_id: Option<String>,
    task_id: Option<String>,
    select_only_form_properties: Option<String>,
    select_only_variable_updates: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/historic-detail?id=&processInstanceId=&executionId=&activityInstanceId=&taskId=`
/// (Flowable's route and shape): the variable changes ACT_HI_DETAIL keeps at history level
/// `full`, oldest first. kairos has no form properties: `selectOnlyFormProperties=true` lists
/// none, `selectOnlyVariableUpdates` changes nothing.
pub async fn details(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<DetailsQuery>,
) -> Result<axum::Json<List<HistoricDetail>>, ApiError> {
    let (start, size) = page(q.start.as_deref(), q.size.as_deref())?;
    let only_forms = flag("selectOnlyFormProperties", q.select_only_form_properties.as_deref())?;
    flag("selectOnlyVariableUpdates", q.select_only_variable_updates.as_deref())?;
    let id = |field: &'static str, v: Option<String>| filter(v).map(|v| limited(field, v, 64)).transpose();
    let query = DetailQuery {
        id: id("id", q.id)?,
        process_instance_id: id("processInstanceId", q.process_instance_id)?,
        execution_id: id("executionId", q.execution_id)?,
        activity_instance_id: id("activityInstanceId", q.activity_instance_id)?,
        task_id: id("taskId", q.task_id)?,
    };
    scope.names_a_row(
        query.process_instance_id.is_some() || query.execution_id.is_some() || query.task_id.is_some(),
        "processInstanceId",
    )?;
    if only_forms == Some(true) {
        return Ok(axum::Json(List::new(Vec::new(), 0, start)));
    }
    let (data, total) = app.engine.processes().historic_details(&query, start, size).await?;
    Ok(axum::Json(List::new(data, total, start)))
}

/// What this list sorts by (`sort=`), Flowable's query properties that kairos has.
const HISTORIC_INSTANCE_SORTS: &[&str] =
    &["id", "processInstanceId", "processDefinitionId", "businessKey", "startTime", "endTime"];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariablesQuery {
    process_instance_id: Option<String>,
    task_id: Option<String>,
    variable_name: Option<String>,
    exclude_task_variables: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/historic-variable-instances?processInstanceId=&taskId=&variableName=&excludeTaskVariables=`:
/// each variable's last value (ACT_HI_VARINST), also after its instance ended.
pub async fn variables(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<VariablesQuery>,
) -> Result<axum::Json<List<kairos::process::HistoricVariable>>, ApiError> {
    let (start, size) = page(q.start.as_deref(), q.size.as_deref())?;
    let query = kairos::process::VariableQuery {
        process_instance_id: filter(q.process_instance_id).map(|p| limited("processInstanceId", p, 64)).transpose()?,
        task_id: filter(q.task_id).map(|t| limited("taskId", t, 64)).transpose()?,
        variable_name: filter(q.variable_name).map(|n| limited("variableName", n, 255)).transpose()?,
        exclude_task_variables: flag("excludeTaskVariables", q.exclude_task_variables.as_deref())?.unwrap_or(false),
    };
    scope.names_a_row(query.process_instance_id.is_some() || query.task_id.is_some(), "processInstanceId")?;
    let (data, total) = app.engine.processes().historic_variables(&query, start, size).await?;
    Ok(axum::Json(List::new(data, total, start)))
}

/// `GET /history/historic-process-instances/{id}`: one instance, running or ended.
pub async fn instance(
    State(app): State<AppState>,
    crate::extract::Id(id): crate::extract::Id,
) -> Result<axum::Json<HistoricInstanceResponse>, ApiError> {
    Ok(axum::Json(HistoricInstanceResponse::of(app.engine.processes().instance(&id).await?)))
}
