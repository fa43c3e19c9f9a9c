//! `/engine-rest/task`: open user tasks (list, count, one), claiming and completing them, and
//! what a task sees of its variables.

use super::variables::{from_typed, to_typed};
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, Paging, flag, invalid, opt_date, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::{TaskScope, TaskView};
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's TaskDto.
pub fn task_dto(t: &TaskView) -> Value {
    json!({
        "id": t.id,
        "name": t.name,
        "assignee": t.assignee,
        "owner": null,
        "created": opt_date(t.create_time),
        "lastUpdated": null,
        "due": opt_date(t.due_date),
        "followUp": null,
        "delegationState": null,
        "description": null,
        "executionId": t.execution_id,
        "parentTaskId": null,
        "priority": t.priority,
        "processDefinitionId": t.process_definition_id,
        "processInstanceId": t.process_instance_id,
        "caseExecutionId": null,
        "caseDefinitionId": null,
        "caseInstanceId": null,
        "taskDefinitionKey": t.task_definition_key,
        "suspended": t.suspended,
        "formKey": t.form_key,
        "camundaFormRef": null,
        "tenantId": super::tenant_json(&t.tenant_id),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    task_id: Option<String>,
    process_instance_id: Option<String>,
    process_instance_business_key: Option<String>,
    process_definition_id: Option<String>,
    process_definition_key: Option<String>,
    execution_id: Option<String>,
    assignee: Option<String>,
    unassigned: Option<String>,
    assigned: Option<String>,
    candidate_user: Option<String>,
    candidate_group: Option<String>,
    task_definition_key: Option<String>,
    name: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] =
    &["id", "name", "assignee", "created", "dueDate", "priority", "processInstanceId", "executionId"];

/// The tasklist a user (not an operator) is narrowed to: their own id.
fn tasklist_of(principal: &Option<axum::Extension<kairos::identity::Principal>>) -> Option<String> {
    principal.as_ref().and_then(|p| p.tasklist_user()).map(str::to_owned)
}

async fn matching(
    app: &AppState,
    scope: &crate::tenancy::Scope,
    q: ListQuery,
    mine: Option<String>,
) -> Result<Vec<TaskView>, ApiError> {
    let tenants = super::Tenants::parse(scope, q.tenant_id_in, q.without_tenant_id.as_deref(), ("", None))?;
    let id = text("taskId", q.task_id, MAX_ID_CHARS)?;
    let pi = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?;
    let bk = text("processInstanceBusinessKey", q.process_instance_business_key, MAX_NAME_CHARS)?;
    let def = text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?;
    let key = text("processDefinitionKey", q.process_definition_key, MAX_NAME_CHARS)?;
    let exec = text("executionId", q.execution_id, MAX_ID_CHARS)?;
    let assignee = text("assignee", q.assignee, MAX_NAME_CHARS)?;
    let unassigned = flag("unassigned", q.unassigned.as_deref())?.unwrap_or(false);
    let assigned = flag("assigned", q.assigned.as_deref())?.unwrap_or(false);
    let user = text("candidateUser", q.candidate_user, MAX_NAME_CHARS)?;
    let group = text("candidateGroup", q.candidate_group, MAX_NAME_CHARS)?;
    let task_key = text("taskDefinitionKey", q.task_definition_key, MAX_NAME_CHARS)?;
    let name = text("name", q.name, MAX_NAME_CHARS)?;
    let active = flag("active", q.active.as_deref())?;
    let suspended = flag("suspended", q.suspended.as_deref())?;
    let sort = sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), SORT_KEYS)?;
    let processes = app.engine.processes();
    let filter = kairos::process::TaskFilter {
        id: None,
        instance: pi.as_deref(),
        assignee: assignee.as_deref(),
        candidate_user: user.as_deref(),
        candidate_group: group.as_deref(),
        candidate_or_assigned: mine.as_deref(),
        tenant: tenants.only(),
    };
    let mut all = processes.task_list(&filter).await?;
    // The instances the key and business key filters admit, read once.
    let instances = if bk.is_some() || key.is_some() {
        Some(
            processes
                .instances(bk.as_deref(), key.as_deref(), Some(false))
                .await?
                .into_iter()
                .map(|i| i.id)
                .collect::<Vec<_>>(),
        )
    } else {
        None
    };
    all.retain(|t| {
        id.as_ref().is_none_or(|x| &t.id == x)
            && def.as_ref().is_none_or(|x| &t.process_definition_id == x)
            && exec.as_ref().is_none_or(|x| &t.execution_id == x)
            && task_key.as_ref().is_none_or(|x| &t.task_definition_key == x)
            && name.as_ref().is_none_or(|x| t.name.as_ref() == Some(x))
            && (!unassigned || t.assignee.is_none())
            && (!assigned || t.assignee.is_some())
            && active.is_none_or(|a| a != t.suspended)
            && suspended.is_none_or(|s| s == t.suspended)
            && instances.as_ref().is_none_or(|ids| ids.contains(&t.process_instance_id))
            && tenants.keeps(&t.tenant_id)
    });
    if let Some((by, desc)) = sort {
        all.sort_by(|a, b| {
            let o = match by {
                "name" => a.name.cmp(&b.name),
                "assignee" => a.assignee.cmp(&b.assignee),
                "created" => a.create_time.cmp(&b.create_time),
                "dueDate" => a.due_date.cmp(&b.due_date),
                "priority" => a.priority.cmp(&b.priority),
                "processInstanceId" => a.process_instance_id.cmp(&b.process_instance_id),
                "executionId" => a.execution_id.cmp(&b.execution_id),
                _ => a.id.cmp(&b.id),
            };
            if desc { o.reverse() } else { o }
        });
    }
    Ok(all)
}

/// `GET /engine-rest/task?…` → `[TaskDto]`, oldest first unless sorted.
pub async fn list(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    scope: crate::tenancy::Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let all = matching(&app, &scope, q, tasklist_of(&principal)).await?;
    Ok(axum::Json(page.page(all).iter().map(task_dto).collect()))
}

/// `GET /engine-rest/task/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching(&app, &scope, q, tasklist_of(&principal)).await?.len()))
}

/// `GET /engine-rest/task/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(task_dto(&app.engine.processes().task(&id).await?)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimBody {
    user_id: Option<String>,
}

/// `POST /engine-rest/task/{id}/claim` `{"userId"}` → 204; 400 when another user has it.
pub async fn claim(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    Id(id): Id,
    Json(b): Json<ClaimBody>,
) -> Result<StatusCode, ApiError> {
    let user = match text("userId", b.user_id, MAX_NAME_CHARS)? {
        Some(u) if !u.trim().is_empty() => u,
        _ => return Err(invalid("userId", "userId is required: who claims the task")),
    };
    if let Some(me) = tasklist_of(&principal)
        && me != user
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "a user claims tasks for themselves: userId must be your own user id",
        )
        .on("userId"));
    }
    app.engine.processes().claim_task(&id, &user).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /engine-rest/task/{id}/unclaim` → 204: the task has no assignee again (no body).
pub async fn unclaim(
    State(app): State<AppState>,
    Id(id): Id,
    super::OptJson(_): super::OptJson<super::external_task::Empty>,
) -> Result<StatusCode, ApiError> {
    let update = kairos::process::TaskUpdate { assignee: Some(None), ..Default::default() };
    app.engine.processes().update_task(&id, update).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssigneeBody {
    /// Required, but may be null: no assignee (Camunda's `setAssignee(id, null)`).
    user_id: Option<Option<String>>,
}

/// `POST /engine-rest/task/{id}/assignee` `{"userId"}` → 204: the assignee, whoever had it
/// (unlike claim); `null` unassigns.
pub async fn assignee(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<AssigneeBody>,
) -> Result<StatusCode, ApiError> {
    let user = match b.user_id {
        None => return Err(invalid("userId", "userId is required (null unassigns)")),
        Some(None) => None,
        Some(Some(u)) if u.trim().is_empty() || u.chars().count() > MAX_NAME_CHARS => {
            return Err(invalid("userId", format!("userId must have 1 to {MAX_NAME_CHARS} characters")));
        }
        Some(Some(u)) => Some(u),
    };
    let update = kairos::process::TaskUpdate { assignee: Some(user), ..Default::default() };
    app.engine.processes().update_task(&id, update).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteBody {
    variables: Option<Value>,
    with_variables_in_return: Option<bool>,
}

/// `POST /engine-rest/task/{id}/complete` `{"variables"?, "withVariablesInReturn"?}` → 204, or
/// 200 with the instance's variables after the completion when asked (empty once it ended).
pub async fn complete(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<CompleteBody>,
) -> Result<Response, ApiError> {
    let vars = from_typed("variables", b.variables)?;
    let processes = app.engine.processes();
    let instance = match b.with_variables_in_return {
        Some(true) => Some(processes.task(&id).await?.process_instance_id),
        _ => None,
    };
    processes.complete_task(&id, vars).await.map_err(super::conflict_is_bad_request)?;
    let Some(pi) = instance else { return Ok(StatusCode::NO_CONTENT.into_response()) };
    let after = match processes.instance(&pi).await {
        Ok(i) if !i.ended => processes.variables(&pi).await?,
        _ => serde_json::Map::new(),
    };
    Ok(axum::Json(to_typed(&after)).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BpmnErrorBody {
    error_code: Option<String>,
    error_message: Option<String>,
    variables: Option<Value>,
}

/// `POST /engine-rest/task/{id}/bpmnError` `{"errorCode", "errorMessage"?, "variables"?}` →
/// 204: the error is thrown from the task (Camunda's `handleBpmnError`); 400 when nothing
/// catches it (nothing changes), 404 when there is no such task.
pub async fn bpmn_error(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<BpmnErrorBody>,
) -> Result<Response, ApiError> {
    let code = super::external_task::name("errorCode", b.error_code)?;
    let message = text("errorMessage", b.error_message, crate::routes::processes::MAX_REASON_CHARS)?;
    let vars = from_typed("variables", b.variables)?;
    let processes = app.engine.processes();
    processes.task_bpmn_error(&id, &code, message.as_deref(), vars).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalationBody {
    escalation_code: Option<String>,
    variables: Option<Value>,
}

/// `POST /engine-rest/task/{id}/bpmnEscalation` `{"escalationCode", "variables"?}` → 204: the
/// escalation is thrown from the task (Camunda's `handleEscalation`); 400 when nothing
/// catches it (nothing changes), 404 when there is no such task.
pub async fn bpmn_escalation(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<EscalationBody>,
) -> Result<Response, ApiError> {
    let code = super::external_task::name("escalationCode", b.escalation_code)?;
    let vars = from_typed("variables", b.variables)?;
    app.engine.processes().task_escalation(&id, &code, vars).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValuesQuery {
    /// Ignored: kairos keeps no serialized values.
    deserialize_values: Option<String>,
}

/// `GET /engine-rest/task/{id}/variables` → what the task sees: its local variables over its
/// execution's.
pub async fn variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ValuesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    flag("deserializeValues", q.deserialize_values.as_deref())?;
    // An ended task has no variables to read: 404 as for an unknown one (the engine's 409
    // means "someone completed it first", an answer for actions).
    let vars = app.engine.processes().task_variables(&id, TaskScope::All).await.map_err(|e| {
        let e = ApiError::from(e);
        if e.status == axum::http::StatusCode::CONFLICT { ApiError::not_found(e.message) } else { e }
    })?;
    Ok(axum::Json(to_typed(&vars)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FormVariablesQuery {
    /// Only these fields (a comma list).
    variable_names: Option<String>,
    /// Ignored: kairos keeps no serialized values.
    deserialize_values: Option<String>,
}

/// A form field's value typed as its field is: what Camunda's form variables answer.
fn form_value(field_type: &str, v: Option<&Value>, default: Option<&str>) -> Value {
    let value = match (v, default) {
        (Some(v), _) => v.clone(),
        (None, Some(d)) => match field_type {
            "boolean" => Value::Bool(d.trim() == "true"),
            "long" | "integer" => d.trim().parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::String(d.into())),
            _ => Value::String(d.into()),
        },
        (None, None) => Value::Null,
    };
    let kind = match (field_type, &value) {
        (_, Value::Null) => "Null",
        ("boolean", _) => "Boolean",
        ("long", _) => "Long",
        ("date", _) => "Date",
        _ => return super::variables::typed(&value),
    };
    json!({"type": kind, "value": value, "valueInfo": {}})
}

/// `GET /engine-rest/task/{id}/form-variables?variableNames=` → the task's form fields (Camunda's
/// `formField`, Flowable's `formProperty`) as typed values: the variable the task sees, else the
/// field's default, else null. 404 for a task that is not open.
pub async fn form_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<FormVariablesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    flag("deserializeValues", q.deserialize_values.as_deref())?;
    let only: Option<Vec<String>> =
        text("variableNames", q.variable_names, 4000)?.map(|s| s.split(',').map(|n| n.trim().to_owned()).collect());
    let form = app.engine.processes().task_form(&id).await?;
    let mut out = serde_json::Map::new();
    for (f, v) in form.fields {
        if only.as_ref().is_some_and(|names| !names.contains(&f.id)) {
            continue;
        }
        out.insert(f.id.clone(), form_value(&f.field_type, v.as_ref(), f.default_value.as_deref()));
    }
    Ok(axum::Json(Value::Object(out)))
}
