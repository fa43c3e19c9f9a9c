//! `/engine-rest/external-task`: Camunda's external task API over kairos's external-worker
//! jobs (the same rows `/external-job-api` serves): the list, one task, and a locked task's
//! outcomes (complete, failure, bpmnError) and lock (extendLock, lock, unlock). Fetching is
//! [`super::fetch_and_lock`].

use super::variables::from_typed;
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, OptJson, Paging, date, either, flag, invalid, opt_date, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::SignedDuration;
use kairos::process::{ExternalOrder, ExternalQuery, ExternalRow};
use serde::Deserialize;
use serde_json::{Value, json};

/// The longest lock a fetch or extendLock may take: one year, kairos's bound on durations.
pub(super) const MAX_LOCK_MS: i64 = 365 * 24 * 3600 * 1000;

/// A name field of a fetch: given, non-blank, at most 255 characters.
pub(super) fn name(field: &str, v: Option<String>) -> Result<String, ApiError> {
    match v {
        Some(s) if !s.trim().is_empty() && s.chars().count() <= MAX_NAME_CHARS => Ok(s),
        Some(s) if s.trim().is_empty() => Err(invalid(field, format!("{field} must not be empty"))),
        Some(_) => Err(invalid(field, format!("{field} may have at most {MAX_NAME_CHARS} characters"))),
        None => Err(invalid(field, format!("{field} is required"))),
    }
}

/// A duration in milliseconds, more than zero and at most a year.
pub(super) fn millis(field: &str, v: Option<i64>) -> Result<SignedDuration, ApiError> {
    match v {
        None => Err(invalid(field, format!("{field} is required: the lock's duration in milliseconds"))),
        Some(ms) if ms > 0 && ms <= MAX_LOCK_MS => Ok(SignedDuration::from_millis(ms)),
        Some(ms) => Err(invalid(field, format!("{field} must be from 1 to {MAX_LOCK_MS} milliseconds, not {ms}"))),
    }
}

/// Camunda's ExternalTaskDto of a listed task.
fn dto(r: &ExternalRow) -> Value {
    json!({
        "activityId": r.element_id,
        "activityInstanceId": r.execution_id,
        "errorMessage": r.error_message,
        "executionId": r.execution_id,
        "id": r.id,
        "lockExpirationTime": opt_date(r.lock_expiration_time),
        "createTime": date(r.create_time),
        "processDefinitionId": r.process_definition_id,
        "processDefinitionKey": r.process_definition_key,
        "processDefinitionVersionTag": null,
        "processInstanceId": r.process_instance_id,
        "tenantId": super::tenant_json(&r.tenant_id),
        "retries": r.retries,
        "suspended": r.suspended,
        "workerId": r.worker_id,
        "priority": r.priority,
        "topicName": r.topic,
        "businessKey": r.business_key,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    external_task_id: Option<String>,
    topic_name: Option<String>,
    worker_id: Option<String>,
    locked: Option<String>,
    not_locked: Option<String>,
    with_retries_left: Option<String>,
    no_retries_left: Option<String>,
    activity_id: Option<String>,
    execution_id: Option<String>,
    process_instance_id: Option<String>,
    process_definition_id: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] = &[
    "id",
    "lockExpirationTime",
    "processInstanceId",
    "processDefinitionId",
    "processDefinitionKey",
    "taskPriority",
    "createTime",
];

/// The query `q` asks for; `None` when two of its filters exclude each other (nothing matches).
fn query(q: ListQuery, scope: &crate::tenancy::Scope, paged: bool) -> Result<Option<ExternalQuery>, ApiError> {
    let f = |name: &'static str, v: &Option<String>| flag(name, v.as_deref());
    let (Some(locked), Some(retries_left), Some(suspended)) = (
        either(f("locked", &q.locked)?, f("notLocked", &q.not_locked)?),
        either(f("withRetriesLeft", &q.with_retries_left)?, f("noRetriesLeft", &q.no_retries_left)?),
        either(f("suspended", &q.suspended)?, f("active", &q.active)?),
    ) else {
        return Ok(None);
    };
    let (order, descending) = match sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), SORT_KEYS)? {
        None => (ExternalOrder::CreateTime, false),
        Some((by, desc)) => (
            match by {
                "id" => ExternalOrder::Id,
                "lockExpirationTime" => ExternalOrder::LockExpirationTime,
                "processInstanceId" => ExternalOrder::ProcessInstanceId,
                "processDefinitionId" => ExternalOrder::ProcessDefinitionId,
                "processDefinitionKey" => ExternalOrder::ProcessDefinitionKey,
                "taskPriority" => ExternalOrder::Priority,
                _ => ExternalOrder::CreateTime,
            },
            desc,
        ),
    };
    let page = if paged {
        Paging::of(q.first_result.as_deref(), q.max_results.as_deref())?
    } else {
        Paging { first: 0, max: 0 }
    };
    Ok(Some(ExternalQuery {
        id: text("externalTaskId", q.external_task_id, MAX_ID_CHARS)?,
        topic: text("topicName", q.topic_name, MAX_NAME_CHARS)?,
        worker_id: text("workerId", q.worker_id, MAX_NAME_CHARS)?,
        process_instance_id: text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?,
        process_definition_id: text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?,
        activity_id: text("activityId", q.activity_id, MAX_NAME_CHARS)?,
        execution_id: text("executionId", q.execution_id, MAX_ID_CHARS)?,
        tenant: scope.0.clone(),
        locked,
        retries_left,
        suspended,
        order,
        descending,
        first: page.first,
        max: page.max,
    }))
}

/// `GET /engine-rest/external-task?…` → `[ExternalTaskDto]`, oldest first unless sorted.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let Some(q) = query(q, &scope, true)? else { return Ok(axum::Json(Vec::new())) };
    let rows = app.engine.processes().external_tasks(&q).await?;
    Ok(axum::Json(rows.iter().map(dto).collect()))
}

/// `GET /engine-rest/external-task/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    if q.first_result.is_some() || q.max_results.is_some() {
        return Err(invalid("firstResult", "a count takes no firstResult or maxResults"));
    }
    let Some(q) = query(q, &scope, false)? else { return Ok(axum::Json(json!({"count": 0}))) };
    let n = app.engine.processes().external_task_count(&q).await?;
    Ok(axum::Json(json!({"count": n})))
}

/// `GET /engine-rest/external-task/{id}` → ExternalTaskDto; 404 for an unknown id.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(dto(&app.engine.processes().external_task(&id).await?)))
}

/// `GET /engine-rest/external-task/{id}/errorDetails` → text/plain, the errorDetails of its
/// last failure (empty when it has none).
pub async fn error_details(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    let details = app.engine.processes().external_error_details(&id).await?.unwrap_or_default();
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], details).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteBody {
    worker_id: Option<String>,
    variables: Option<Value>,
    local_variables: Option<Value>,
}

/// The lock checks of the engine as Camunda answers them: 400 BadUserRequestException when
/// the task is not the worker's, 404 when there is no such task.
fn lock_error(e: kairos::Error) -> ApiError {
    super::conflict_is_bad_request(e)
}

/// `POST /engine-rest/external-task/{id}/complete` → 204; the process goes on past the task.
pub async fn complete(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<CompleteBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let vars = from_typed("variables", b.variables)?;
    let locals = from_typed("localVariables", b.local_variables)?;
    app.engine.processes().external_complete_with(&id, &worker, vars, locals).await.map_err(lock_error)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailureBody {
    worker_id: Option<String>,
    error_message: Option<String>,
    error_details: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    retries: Option<i64>,
    #[serde(default, deserialize_with = "super::int::opt")]
    retry_timeout: Option<i64>,
    /// Camunda 7.21's variables of a failure: set before the retry (kairos: not supported
    /// unless empty, see docs/camunda.md).
    variables: Option<Value>,
    local_variables: Option<Value>,
}

/// The longest errorDetails kept: 1 MiB (a stack trace).
const MAX_DETAILS_BYTES: usize = 1024 * 1024;

/// `POST /engine-rest/external-task/{id}/failure` → 204: the lock is released, `retries` are
/// left (absent: one less), due again after `retryTimeout` ms; at 0 retries the task becomes a
/// dead letter, listed as an incident (`GET /engine-rest/incident`).
pub async fn failure(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<FailureBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let message = b.error_message.unwrap_or_default();
    let message: String = message.chars().take(4000).collect();
    if let Some(d) = &b.error_details
        && d.len() > MAX_DETAILS_BYTES
    {
        return Err(invalid("errorDetails", format!("errorDetails may hold at most {MAX_DETAILS_BYTES} bytes")));
    }
    let retries = match b.retries {
        None => None,
        Some(r) if (0..=1_000_000).contains(&r) => Some(r),
        Some(r) => return Err(invalid("retries", format!("retries must be from 0 to 1000000, not {r}"))),
    };
    let timeout = match b.retry_timeout {
        None => None,
        Some(ms) if (0..=MAX_LOCK_MS).contains(&ms) => Some(SignedDuration::from_millis(ms)),
        Some(ms) => {
            return Err(invalid("retryTimeout", format!("retryTimeout must be from 0 to {MAX_LOCK_MS} ms, not {ms}")));
        }
    };
    for (field, v) in [("variables", b.variables), ("localVariables", b.local_variables)] {
        if !from_typed(field, v)?.is_empty() {
            return Err(invalid(
                field,
                format!("{field} on a failure are not supported by kairos; set them on complete"),
            ));
        }
    }
    app.engine
        .processes()
        .external_fail_with(&id, &worker, &message, b.error_details.as_deref(), retries, timeout)
        .await
        .map_err(lock_error)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BpmnErrorBody {
    worker_id: Option<String>,
    error_code: Option<String>,
    error_message: Option<String>,
    variables: Option<Value>,
}

/// `POST /engine-rest/external-task/{id}/bpmnError` → 204; the error boundary event catching
/// `errorCode` takes over (422 ProcessEngineException naming the task when none does).
/// `errorMessage` goes to the catching event's `camunda:errorMessageVariable`.
pub async fn bpmn_error(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<BpmnErrorBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let code = name("errorCode", b.error_code)?;
    let message = b.error_message.map(|m| super::super::processes::limited("errorMessage", m, 4000)).transpose()?;
    let vars = from_typed("variables", b.variables)?;
    let p = app.engine.processes();
    p.external_bpmn_error_with(&id, &worker, &code, message.as_deref(), vars).await.map_err(lock_error)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtendBody {
    worker_id: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    new_duration: Option<i64>,
}

/// `POST /engine-rest/external-task/{id}/extendLock` → 204: the worker's unexpired lock now
/// ends `newDuration` ms from now; 400 when the lock is another's or expired.
pub async fn extend_lock(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<ExtendBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let d = millis("newDuration", b.new_duration)?;
    app.engine.processes().external_extend_lock(&id, &worker, d).await.map_err(lock_error)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockBody {
    worker_id: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    lock_duration: Option<i64>,
}

/// `POST /engine-rest/external-task/{id}/lock` → 204: locks this task for the worker (400
/// while another worker holds it).
pub async fn lock(State(app): State<AppState>, Id(id): Id, Json(b): Json<LockBody>) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let d = millis("lockDuration", b.lock_duration)?;
    app.engine.processes().external_lock_one(&id, &worker, d).await.map_err(lock_error)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// No body, or `{}`: Camunda's unlock takes none.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// `POST /engine-rest/external-task/{id}/unlock` → 204: the lock is released, whoever held it.
pub async fn unlock(State(app): State<AppState>, Id(id): Id, OptJson(_): OptJson<Empty>) -> Result<Response, ApiError> {
    app.engine.processes().external_unlock(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
