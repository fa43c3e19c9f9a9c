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
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TasksQuery {
    process_instance_id: Option<String>,
    assignee: Option<String>,
    candidate_user: Option<String>,
    candidate_group: Option<String>,
    candidate_or_assigned: Option<String>,
    name: Option<String>,
    name_like: Option<String>,
    owner: Option<String>,
    unassigned: Option<String>,
    task_definition_key: Option<String>,
    process_definition_id: Option<String>,
    execution_id: Option<String>,
    priority: Option<String>,
    minimum_priority: Option<String>,
    maximum_priority: Option<String>,
    active: Option<String>,
    due_before: Option<String>,
    due_after: Option<String>,
    without_due_date: Option<String>,
    created_before: Option<String>,
    created_after: Option<String>,
    tenant_id: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

// Flowable's `nameLike`: SQL LIKE in linear space and pattern × text time (a recursive
// matcher backtracks exponentially on patterns like `%a%a%a…b`).
use super::repository::like;

/// A query instant, or a 400 naming the parameter.
fn instant(field: &'static str, v: Option<String>) -> Result<Option<kairos::Timestamp>, ApiError> {
    filter(v)
        .map(|s| {
            kairos_time::parse_instant(&s).map_err(|_| {
                ApiError::invalid(field, format!("{field} must be an ISO 8601 instant such as 2026-01-01T08:00:00Z"))
            })
        })
        .transpose()
}

/// A query integer, or a 400 naming the parameter.
fn number(field: &'static str, v: Option<String>) -> Result<Option<i64>, ApiError> {
    filter(v)
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| ApiError::invalid(field, format!("{field} must be a whole number, not \"{s}\"")))
        })
        .transpose()
}

/// `GET /runtime/tasks` with Flowable's filters (those kairos has: processInstanceId, assignee,
/// candidateUser (named, or through a group the user is a member of), candidateGroup — the
/// candidate filters find unclaimed tasks only — candidateOrAssigned (a person's tasklist), name,
/// nameLike, owner, unassigned, taskDefinitionKey, processDefinitionId, executionId, priority,
/// minimumPriority, maximumPriority, active, dueBefore, dueAfter, withoutDueDate,
/// createdBefore, createdAfter, tenantId), `sort` and `order`.
pub async fn list(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    scope: crate::tenancy::Scope,
    Query(q): Query<TasksQuery>,
) -> Result<axum::Json<List<TaskResponse>>, ApiError> {
    list_for(app, principal.map(|p| p.0), &scope, q).await
}

/// [`list`] for an operator (`POST /query/tasks`).
pub async fn list_any(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<TasksQuery>,
) -> Result<axum::Json<List<TaskResponse>>, ApiError> {
    list_for(app, None, &scope, q).await
}

async fn list_for(
    app: AppState,
    principal: Option<kairos::identity::Principal>,
    scope: &crate::tenancy::Scope,
    q: TasksQuery,
) -> Result<axum::Json<List<TaskResponse>>, ApiError> {
    let tenant = filter(q.tenant_id);
    let sorting = crate::dto::Sorting::parse(q.sort.as_deref(), q.order.as_deref(), TASK_SORTS, "id")?;
    let (pi, assignee) = (filter(q.process_instance_id), filter(q.assignee));
    let (user, group) = (filter(q.candidate_user), filter(q.candidate_group));
    let (name, name_like, owner) = (filter(q.name), filter(q.name_like), filter(q.owner));
    let (key, definition, execution) =
        (filter(q.task_definition_key), filter(q.process_definition_id), filter(q.execution_id));
    let unassigned = crate::extract::flag("unassigned", q.unassigned.as_deref())?;
    let active = crate::extract::flag("active", q.active.as_deref())?;
    let without_due = crate::extract::flag("withoutDueDate", q.without_due_date.as_deref())?;
    let (priority, min_p, max_p) = (
        number("priority", q.priority)?,
        number("minimumPriority", q.minimum_priority)?,
        number("maximumPriority", q.maximum_priority)?,
    );
    let (due_before, due_after) = (instant("dueBefore", q.due_before)?, instant("dueAfter", q.due_after)?);
    let (created_before, created_after) =
        (instant("createdBefore", q.created_before)?, instant("createdAfter", q.created_after)?);
    let mut mine = filter(q.candidate_or_assigned);
    // A user (not an operator) sees their tasklist only, whatever else the query asks.
    if let Some(me) = principal.as_ref().and_then(|p| p.tasklist_user()) {
        if mine.as_ref().is_some_and(|m| m != me) {
            return Ok(axum::Json(List::new(Vec::new(), 0, 0)));
        }
        mine = Some(me.to_owned());
    }
    let task_filter = kairos::process::TaskFilter {
        id: None,
        instance: pi.as_deref(),
        assignee: assignee.as_deref(),
        candidate_user: user.as_deref(),
        candidate_group: group.as_deref(),
        candidate_or_assigned: mine.as_deref(),
        tenant: scope.filter(tenant.as_deref()),
    };
    let mut all = app.engine.processes().task_list(&task_filter).await?;
    all.retain(|t| {
        name.as_ref().is_none_or(|n| t.name.as_ref() == Some(n))
            && name_like.as_ref().is_none_or(|p| t.name.as_deref().is_some_and(|n| like(p, n)))
            && owner.as_ref().is_none_or(|o| t.owner.as_ref() == Some(o))
            && unassigned.is_none_or(|u| t.assignee.is_none() == u)
            && key.as_ref().is_none_or(|k| &t.task_definition_key == k)
            && definition.as_ref().is_none_or(|d| &t.process_definition_id == d)
            && execution.as_ref().is_none_or(|e| &t.execution_id == e)
            && priority.is_none_or(|p| t.priority == p)
            && min_p.is_none_or(|p| t.priority >= p)
            && max_p.is_none_or(|p| t.priority <= p)
            && active.is_none_or(|a| t.suspended != a)
            && without_due.is_none_or(|w| t.due_date.is_none() == w)
            && due_before.is_none_or(|b| t.due_date.is_some_and(|d| d < b))
            && due_after.is_none_or(|a| t.due_date.is_some_and(|d| d > a))
            && created_before.is_none_or(|b| t.create_time.is_some_and(|c| c < b))
            && created_after.is_none_or(|a| t.create_time.is_some_and(|c| c > a))
    });
    let all: Vec<TaskResponse> = all.into_iter().map(TaskResponse::of).collect();
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

/// A task as Flowable's `TaskResponse` has it: kairos's view and Flowable's urls, `tenantId`,
/// `delegationState`, `category`, `parentTaskId` (always null here: kairos has no delegation,
/// task categories or subtasks) and `variables`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResponse {
    #[serde(flatten)]
    pub view: TaskView,
    pub url: String,
    pub process_instance_url: String,
    pub process_definition_url: String,
    pub execution_url: String,
    pub delegation_state: Option<String>,
    pub category: Option<String>,
    pub parent_task_id: Option<String>,
    pub variables: Vec<RestVariable>,
}

impl TaskResponse {
    pub fn of(view: TaskView) -> Self {
        TaskResponse {
            url: format!("/runtime/tasks/{}", view.id),
            process_instance_url: format!("/runtime/process-instances/{}", view.process_instance_id),
            process_definition_url: format!("/repository/process-definitions/{}", view.process_definition_id),
            execution_url: format!("/runtime/executions/{}", view.execution_id),
            delegation_state: None,
            category: None,
            parent_task_id: None,
            variables: Vec::new(),
            view,
        }
    }
}

/// `GET /runtime/tasks/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<TaskResponse>, ApiError> {
    Ok(axum::Json(TaskResponse::of(app.engine.processes().task(&id).await.map_err(|e| ended(&id, e))?)))
}

/// `PUT /runtime/tasks/{id}` with Flowable's `TaskRequest`: the properties it names change
/// (`null` clears one), the others stay — name, description, assignee, owner, priority,
/// dueDate. Flowable's delegationState, parentTaskId, category and formKey mean nothing here
/// and are refused unless null; tenantId only empty. → 200 with the task.
pub async fn update(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<Map<String, Value>>,
) -> Result<axum::Json<TaskResponse>, ApiError> {
    let mut u = kairos::process::TaskUpdate::default();
    let text = |field: &'static str, v: &Value, max: usize| -> Result<Option<String>, ApiError> {
        match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(super::limited(field, s.clone(), max)?)),
            other => Err(ApiError::invalid(field, format!("{field} must be a string or null, not {other}"))),
        }
    };
    for (key, v) in &body {
        match key.as_str() {
            "name" => u.name = Some(text("name", v, MAX_NAME_CHARS)?),
            "description" => u.description = Some(text("description", v, 4000)?),
            "assignee" => u.assignee = Some(text("assignee", v, MAX_NAME_CHARS)?),
            "owner" => u.owner = Some(text("owner", v, MAX_NAME_CHARS)?),
            "priority" => {
                u.priority = Some(v.as_i64().and_then(|p| i32::try_from(p).ok()).ok_or_else(|| {
                    ApiError::invalid("priority", format!("priority must be a whole number that fits 32 bits, not {v}"))
                })?);
            }
            "dueDate" => {
                u.due_date = Some(match text("dueDate", v, 64)? {
                    None => None,
                    Some(s) => Some(kairos_time::parse_instant(&s).map_err(|_| {
                        ApiError::invalid(
                            "dueDate",
                            format!("dueDate must be an ISO 8601 instant such as 2026-01-01T08:00:00Z, not {s}"),
                        )
                    })?),
                });
            }
            "delegationState" | "parentTaskId" | "category" | "formKey" => {
                if !v.is_null() {
                    return Err(ApiError::invalid(
                        "body",
                        format!(
                            "{key}: kairos has no task delegation, subtasks, categories or form keys to change; leave it out"
                        ),
                    ));
                }
            }
            "tenantId" if !v.is_null() => {
                return Err(ApiError::invalid("tenantId", "tenantId: a task is its instance's tenant's; leave it out"));
            }
            "tenantId" => {}
            other => {
                return Err(ApiError::invalid(
                    "body",
                    format!(
                        "unknown field `{other}`; a task takes name, description, assignee, owner, priority, dueDate"
                    ),
                ));
            }
        }
    }
    let processes = app.engine.processes();
    processes.update_task(&id, u).await?;
    Ok(axum::Json(TaskResponse::of(processes.task(&id).await?)))
}

/// One of a task's identity links as Flowable's `RestIdentityLink` has it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityLink {
    pub url: String,
    pub user: Option<String>,
    pub group: Option<String>,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// The links of a task: its assignee and owner (Flowable shows them as links) and its
/// candidate users and groups.
fn links_of(t: &TaskView) -> Vec<IdentityLink> {
    let url =
        |family: &str, who: &str, kind: &str| format!("/runtime/tasks/{}/identitylinks/{family}/{who}/{kind}", t.id);
    let mut out = Vec::new();
    for (who, kind) in [(&t.assignee, "assignee"), (&t.owner, "owner")] {
        if let Some(u) = who {
            out.push(IdentityLink { url: url("users", u, kind), user: Some(u.clone()), group: None, kind });
        }
    }
    for u in &t.candidate_users {
        out.push(IdentityLink {
            url: url("users", u, "candidate"),
            user: Some(u.clone()),
            group: None,
            kind: "candidate",
        });
    }
    for g in &t.candidate_groups {
        out.push(IdentityLink {
            url: url("groups", g, "candidate"),
            user: None,
            group: Some(g.clone()),
            kind: "candidate",
        });
    }
    out
}

/// `GET /runtime/tasks/{id}/identitylinks` (and `/users`, `/groups`): who the task is for.
pub async fn identity_links(
    State(app): State<AppState>,
    Id(id): Id,
) -> Result<axum::Json<Vec<IdentityLink>>, ApiError> {
    let task = app.engine.processes().task(&id).await.map_err(|e| ended(&id, e))?;
    Ok(axum::Json(links_of(&task)))
}

/// `GET /runtime/tasks/{id}/identitylinks/{family}` with family `users` or `groups`.
pub async fn identity_links_of(
    State(app): State<AppState>,
    crate::extract::Segments((id, family)): crate::extract::Segments<(String, String)>,
) -> Result<axum::Json<Vec<IdentityLink>>, ApiError> {
    let users = family_is_users(&family)?;
    let task = app.engine.processes().task(&id).await.map_err(|e| ended(&id, e))?;
    Ok(axum::Json(links_of(&task).into_iter().filter(|l| l.user.is_some() == users).collect()))
}

fn family_is_users(family: &str) -> Result<bool, ApiError> {
    match family {
        "users" => Ok(true),
        "groups" => Ok(false),
        other => Err(ApiError::not_found(format!("identity link family must be users or groups, not {other}"))),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkBody {
    user: Option<String>,
    group: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// The change that adds (or, `remove`, takes away) one link.
fn link_update(
    user: Option<String>,
    group: Option<String>,
    kind: &str,
    remove: bool,
) -> Result<kairos::process::TaskUpdate, ApiError> {
    let mut u = kairos::process::TaskUpdate::default();
    match (user, group, kind) {
        (Some(_), Some(_), _) => return Err(ApiError::invalid("group", "give user or group, not both")),
        (None, None, _) => return Err(ApiError::invalid("user", "user or group is required")),
        (Some(user), None, "candidate") => {
            if remove {
                u.remove_candidate_users.push(user)
            } else {
                u.add_candidate_users.push(user)
            }
        }
        (None, Some(group), "candidate") => {
            if remove {
                u.remove_candidate_groups.push(group)
            } else {
                u.add_candidate_groups.push(group)
            }
        }
        (Some(user), None, "assignee") => u.assignee = Some((!remove).then_some(user)),
        (Some(user), None, "owner") => u.owner = Some((!remove).then_some(user)),
        (None, Some(_), "assignee" | "owner") => {
            return Err(ApiError::invalid("group", "a group cannot be a task's assignee or owner; use type candidate"));
        }
        (_, _, other) => {
            return Err(ApiError::invalid(
                "type",
                format!(
                    "type must be candidate, assignee or owner, not \"{other}\" (kairos keeps no participant or custom links)"
                ),
            ));
        }
    }
    Ok(u)
}

/// `POST /runtime/tasks/{id}/identitylinks` `{"user"|"group", "type"}` → 201 with the link.
pub async fn add_identity_link(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<LinkBody>,
) -> Result<Response, ApiError> {
    let user = b.user.map(|u| required("user", Some(u), MAX_NAME_CHARS)).transpose()?;
    let group = b.group.map(|g| required("group", Some(g), MAX_NAME_CHARS)).transpose()?;
    let kind = required("type", b.kind, 64)?;
    let update = link_update(user.clone(), group.clone(), &kind, false)?;
    app.engine.processes().update_task(&id, update).await?;
    let (family, who) = match (&user, &group) {
        (Some(u), _) => ("users", u.clone()),
        (_, Some(g)) => ("groups", g.clone()),
        _ => unreachable!("checked by link_update"),
    };
    let kind: &'static str = match kind.as_str() {
        "assignee" => "assignee",
        "owner" => "owner",
        _ => "candidate",
    };
    let link =
        IdentityLink { url: format!("/runtime/tasks/{id}/identitylinks/{family}/{who}/{kind}"), user, group, kind };
    Ok((StatusCode::CREATED, axum::Json(link)).into_response())
}

/// `DELETE /runtime/tasks/{id}/identitylinks/{family}/{identityId}/{type}` → 204; 404 when
/// the task has no such link.
pub async fn delete_identity_link(
    State(app): State<AppState>,
    crate::extract::Segments((id, family, who, kind)): crate::extract::Segments<(String, String, String, String)>,
) -> Result<StatusCode, ApiError> {
    let users = family_is_users(&family)?;
    let processes = app.engine.processes();
    let task = processes.task(&id).await.map_err(|e| ended(&id, e))?;
    let exists = links_of(&task).iter().any(|l| {
        l.kind == kind
            && if users { l.user.as_deref() == Some(who.as_str()) } else { l.group.as_deref() == Some(who.as_str()) }
    });
    if !exists {
        return Err(ApiError::not_found(format!("task {id} has no {kind} link to {family} {who}")));
    }
    let (user, group) = if users { (Some(who), None) } else { (None, Some(who)) };
    processes.update_task(&id, link_update(user, group, &kind, true)?).await?;
    Ok(StatusCode::NO_CONTENT)
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
pub async fn act(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    Id(id): Id,
    Json(body): Json<TaskAction>,
) -> Result<Response, ApiError> {
    let action = required("action", body.action, MAX_NAME_CHARS)?;
    // A user (not an operator) claims for themselves only.
    if let Some(me) = principal.as_ref().and_then(|p| p.tasklist_user())
        && body.assignee.as_ref().is_some_and(|a| a != me)
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "a user claims tasks for themselves: assignee must be your own user id",
        )
        .on("assignee"));
    }
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
            match body.assignee {
                // Flowable: a claim without an assignee unclaims the task.
                None => {
                    let update = kairos::process::TaskUpdate { assignee: Some(None), ..Default::default() };
                    processes.update_task(&id, update).await?;
                }
                Some(a) => processes.claim_task(&id, &required("assignee", Some(a), MAX_NAME_CHARS)?).await?,
            }
            Ok(axum::Json(TaskResponse::of(processes.task(&id).await?)).into_response())
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
