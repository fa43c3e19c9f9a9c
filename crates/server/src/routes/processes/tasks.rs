//! `/runtime/tasks` (SPEC P5): open user tasks, claiming and completing them. Of two
//! concurrent completions of one task exactly one succeeds; the other gets a 409 (or a 404 when
//! it arrives after the task is gone).

use super::{MAX_NAME_CHARS, filter, paged, required, unknown_action, variables};
use crate::AppState;
use crate::dto::List;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::{TaskScope, TaskView};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksQuery {
    process_instance_id: Option<String>,
    assignee: Option<String>,
    candidate_user: Option<String>,
    candidate_group: Option<String>,
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
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
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

/// `GET /runtime/tasks/{id}/variables?scope=local|global`: what the task sees — its local
/// variables (SPEC P6) over those visible from its execution; `local`: its own alone;
/// `global`: the execution's alone.
pub async fn get_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ScopeQuery>,
) -> Result<axum::Json<serde_json::Map<String, Value>>, ApiError> {
    Ok(axum::Json(app.engine.processes().task_variables(&id, scope(q)?).await?))
}

/// `PUT /runtime/tasks/{id}/variables?scope=local|global` `{name: value, ...}`: local ones
/// belong to the task and go when it ends; global ones (the default) land where the task's
/// execution would set them. Returns what the task sees.
pub async fn put_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ScopeQuery>,
    Json(body): Json<Value>,
) -> Result<axum::Json<serde_json::Map<String, Value>>, ApiError> {
    let local = scope(q)? == TaskScope::Local;
    let vars = variables(Some(body))?;
    let processes = app.engine.processes();
    processes.set_task_variables(&id, vars, local).await?;
    Ok(axum::Json(processes.task_variables(&id, TaskScope::All).await?))
}

/// `GET /runtime/tasks/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<TaskView>, ApiError> {
    Ok(axum::Json(app.engine.processes().task(&id).await?))
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
