//! `/runtime/tasks` (SPEC P5): open user tasks, claiming and completing them. Of two
//! concurrent completions of one task exactly one succeeds; the other gets a 409 (or a 404 when
//! it arrives after the task is gone).

use super::{MAX_NAME_CHARS, filter, required, unknown_action, variables};
use crate::AppState;
use crate::dto::List;
use crate::error::ApiError;
use crate::extract::{Id, Json, JsonAny, Query};
use crate::flowable::{self, RestVariable};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::{TaskScope, TaskView};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksQuery {
    process_instance_id: Option<String>,
    assignee: Option<String>,
    candidate_user: Option<String>,
    candidate_group: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /runtime/tasks?processInstanceId=&assignee=&candidateUser=&candidateGroup=`, oldest
/// first; the candidate filters find unclaimed tasks only.
pub async fn list(
    State(app): State<AppState>,
    Query(q): Query<TasksQuery>,
) -> Result<axum::Json<List<TaskView>>, ApiError> {
    let (pi, assignee) = (filter(q.process_instance_id), filter(q.assignee));
    let (user, group) = (filter(q.candidate_user), filter(q.candidate_group));
    let all =
        app.engine.processes().tasks(pi.as_deref(), assignee.as_deref(), user.as_deref(), group.as_deref()).await?;
    let sorting = crate::dto::Sorting::parse(q.sort.as_deref(), q.order.as_deref(), TASK_SORTS, "id")?;
    Ok(axum::Json(super::paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeQuery {
    scope: Option<String>,
}

/// `scope=local` (the task's own variables) or `scope=global` (those of its execution and the
/// scopes above), Flowable's query parameter; absent: both for reading, global for writing.
fn scope(q: ScopeQuery) -> Result<TaskScope, ApiError> {
    match filter(q.scope).as_deref() {
        None => Ok(TaskScope::All),
        Some("local") => Ok(TaskScope::Local),
        Some("global") => Ok(TaskScope::Global),
        Some(other) => Err(ApiError::invalid(
            "scope",
            format!("scope must be local or global, not '{}'", other.chars().take(40).collect::<String>()),
        )),
    }
}

/// `GET /runtime/tasks/{id}/variables?scope=local|global`, as Flowable answers it: a list of
/// `{"name", "type", "value", "scope"}` — the task's local variables (SPEC P6) and those
/// visible from its execution (`global`) that no local one hides; `scope` keeps one kind.
pub async fn get_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ScopeQuery>,
) -> Result<axum::Json<Vec<RestVariable>>, ApiError> {
    let scope = scope(q)?;
    let processes = app.engine.processes();
    let mut out = Vec::new();
    let local = if scope == TaskScope::Global {
        Map::new()
    } else {
        processes.task_variables(&id, TaskScope::Local).await.map_err(|e| ended(&id, e))?
    };
    if scope != TaskScope::Local {
        let mut global = processes.task_variables(&id, TaskScope::Global).await.map_err(|e| ended(&id, e))?;
        global.retain(|name, _| !local.contains_key(name));
        out.extend(flowable::variable_list(&global, Some("global")));
    }
    out.extend(flowable::variable_list(&local, Some("local")));
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(axum::Json(out))
}

/// A read of a task that has ended answers 404 as Flowable does (the engine's 409 says "someone
/// got there first", which is an answer for actions, not reads), pointing at its history.
fn ended(id: &str, e: kairos::Error) -> ApiError {
    let e = ApiError::from(e);
    if e.status == StatusCode::CONFLICT {
        ApiError::not_found(format!("{}; it is in GET /history/historic-task-instances?taskId={id}", e.message))
    } else {
        e
    }
}

/// `PUT` (create or overwrite) and `POST` (Flowable: create, 201) `/runtime/tasks/{id}/variables`
/// with Flowable's list, each item's `scope` local (Flowable's default for tasks) or global; or
/// kairos's object `{name: value}` with `?scope=local|global` (default global). Local ones
/// belong to the task and go when it ends; global ones land where the task's execution would
/// set them. Answers the variables set, as a list.
pub async fn put_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ScopeQuery>,
    JsonAny(body): JsonAny,
) -> Result<axum::Json<Vec<RestVariable>>, ApiError> {
    Ok(axum::Json(set_variables(&app, &id, q, body).await?))
}

/// `POST /runtime/tasks/{id}/variables`: as PUT → 201.
pub async fn post_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ScopeQuery>,
    JsonAny(body): JsonAny,
) -> Result<Response, ApiError> {
    Ok((StatusCode::CREATED, axum::Json(set_variables(&app, &id, q, body).await?)).into_response())
}

async fn set_variables(app: &AppState, id: &str, q: ScopeQuery, body: Value) -> Result<Vec<RestVariable>, ApiError> {
    let query_local = scope(q)? == TaskScope::Local;
    let vars = flowable::variables("variables", Some(body))?;
    if vars.values.is_empty() {
        return Err(ApiError::invalid("variables", "give at least one variable"));
    }
    let is_local = |name: &str| {
        if vars.listed { !vars.global.iter().any(|g| g == name) } else { query_local }
    };
    let (mut local, mut global) = (Map::new(), Map::new());
    for (name, value) in &vars.values {
        if is_local(name) {
            local.insert(name.clone(), value.clone())
        } else {
            global.insert(name.clone(), value.clone())
        };
    }
    let processes = app.engine.processes();
    if !local.is_empty() {
        processes.set_task_variables(id, local.clone(), true).await?;
    }
    if !global.is_empty() {
        processes.set_task_variables(id, global.clone(), false).await?;
    }
    let mut out = flowable::variable_list(&local, Some("local"));
    out.extend(flowable::variable_list(&global, Some("global")));
    Ok(out)
}

/// `GET /runtime/tasks/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<TaskView>, ApiError> {
    Ok(axum::Json(app.engine.processes().task(&id).await.map_err(|e| ended(&id, e))?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskAction {
    action: Option<String>,
    assignee: Option<String>,
    variables: Option<Value>,
    /// Makes a completion idempotent: a retry with the same requestId and body succeeds again
    /// instead of answering 409 (SPEC C2). A claim is idempotent by itself (claiming again for
    /// the same assignee succeeds), so there it is only checked.
    request_id: Option<String>,
}

/// `POST /runtime/tasks/{id}`: `{"action": "complete", "variables"?}` → 204, the process moves
/// on; `{"action": "claim", "assignee"}` → 200 with the task.
pub async fn act(State(app): State<AppState>, Id(id): Id, Json(body): Json<TaskAction>) -> Result<Response, ApiError> {
    let action = required("action", body.action, MAX_NAME_CHARS)?;
    if let Some(r) = &body.request_id {
        kairos::process::check_request_id(r)?;
    }
    let processes = app.engine.processes();
    match action.as_str() {
        "complete" => {
            if body.assignee.is_some() {
                return Err(ApiError::invalid(
                    "assignee",
                    "assignee is for the claim action; claim the task first, then complete it",
                ));
            }
            let vars = variables(body.variables)?;
            match &body.request_id {
                Some(r) => processes.complete_task_once(&id, vars, r).await?,
                None => processes.complete_task(&id, vars).await?,
            }
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        "claim" => {
            if body.variables.is_some() {
                return Err(ApiError::invalid("variables", "variables are for the complete action, not claim"));
            }
            let assignee = match body.assignee {
                None => {
                    return Err(ApiError::invalid(
                        "assignee",
                        "claim needs the assignee: {\"action\": \"claim\", \"assignee\": \"kermit\"}",
                    ));
                }
                Some(a) => required("assignee", Some(a), MAX_NAME_CHARS)?,
            };
            processes.claim_task(&id, &assignee).await?;
            Ok(axum::Json(processes.task(&id).await?).into_response())
        }
        other => Err(unknown_action(other, "\"complete\" or \"claim\"")),
    }
}

/// What this list sorts by (`sort=`), Flowable's query properties that kairos has.
const TASK_SORTS: &[&str] = &[
    "id",
    "name",
    "priority",
    "assignee",
    "createTime",
    "dueDate",
    "taskDefinitionKey",
    "processInstanceId",
    "executionId",
];
