//! `/engine-rest/external-task`: Camunda's external task API over kairos's external-worker
//! jobs (the same rows `/external-job-api` serves).
//!
//! fetchAndLock long-polls (`asyncResponseTimeout`, at most 30 minutes as in Camunda) without
//! holding any lock while it waits ([`kairos::process::Processes::external_fetch_wait`]), and
//! answers through a body that gives the locks back if the connection goes before the answer
//! is handed over ([`Delivering`]): Camunda locks only what it returns.

use super::variables::{from_typed, to_typed};
use super::{
    MAX_ID_CHARS, MAX_NAME_CHARS, OptJson, Paging, clip, date, either, flag, invalid, opt_date, sorting, text,
};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::SignedDuration;
use kairos::process::{ExternalOrder, ExternalQuery, ExternalRow, ExternalTask, FetchTopic, Hold, MAX_FETCH_WAIT};
use serde::Deserialize;
use serde_json::{Value, json};
use std::pin::Pin;
use std::task::{Context, Poll};

/// At most this many tasks per fetch, and topics per fetch.
const MAX_TASKS: i64 = 1_000;
const MAX_TOPICS: usize = 100;
/// The longest lock a fetch or extendLock may take: one year, kairos's bound on durations.
const MAX_LOCK_MS: i64 = 365 * 24 * 3600 * 1000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FetchBody {
    worker_id: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    max_tasks: Option<i64>,
    use_priority: Option<bool>,
    #[serde(default, deserialize_with = "super::int::opt")]
    async_response_timeout: Option<i64>,
    topics: Option<Vec<TopicBody>>,
    /// `[{"sortBy": "createTime", "sortOrder": "asc"}]`: kairos fetches oldest first.
    sorting: Option<Vec<SortBody>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortBody {
    sort_by: Option<String>,
    sort_order: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopicBody {
    topic_name: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    lock_duration: Option<i64>,
    variables: Option<Vec<String>>,
    local_variables: Option<bool>,
    business_key: Option<String>,
    process_definition_id: Option<String>,
    process_definition_id_in: Option<Vec<String>>,
    process_definition_key: Option<String>,
    process_definition_key_in: Option<Vec<String>>,
    process_definition_version_tag: Option<String>,
    /// Equality filters on variables: only `{}` (kairos cannot filter a lock by values).
    process_variables: Option<serde_json::Map<String, Value>>,
    /// Ignored: kairos has no serialized values to deserialize.
    deserialize_values: Option<bool>,
    include_extension_properties: Option<bool>,
    without_tenant_id: Option<bool>,
    tenant_id_in: Option<Vec<String>>,
}

/// A name field of a fetch: given, non-blank, at most 255 characters.
fn name(field: &str, v: Option<String>) -> Result<String, ApiError> {
    match v {
        Some(s) if !s.trim().is_empty() && s.chars().count() <= MAX_NAME_CHARS => Ok(s),
        Some(s) if s.trim().is_empty() => Err(invalid(field, format!("{field} must not be empty"))),
        Some(_) => Err(invalid(field, format!("{field} may have at most {MAX_NAME_CHARS} characters"))),
        None => Err(invalid(field, format!("{field} is required"))),
    }
}

fn ids(field: &str, v: Vec<String>) -> Result<Vec<String>, ApiError> {
    if v.len() > 100 {
        return Err(invalid(field, format!("{field} may list at most 100 values")));
    }
    for s in &v {
        if s.is_empty() || s.chars().count() > MAX_NAME_CHARS {
            return Err(invalid(field, format!("{field}: \"{}\" is not a valid value", clip(s))));
        }
    }
    Ok(v)
}

/// A duration in milliseconds, more than zero and at most a year.
fn millis(field: &str, v: Option<i64>) -> Result<SignedDuration, ApiError> {
    match v {
        None => Err(invalid(field, format!("{field} is required: the lock's duration in milliseconds"))),
        Some(ms) if ms > 0 && ms <= MAX_LOCK_MS => Ok(SignedDuration::from_millis(ms)),
        Some(ms) => Err(invalid(field, format!("{field} must be from 1 to {MAX_LOCK_MS} milliseconds, not {ms}"))),
    }
}

/// What one topic of a fetch asks for; `None` when it can match nothing in kairos (a tenant
/// other than none).
fn topic(i: usize, t: TopicBody) -> Result<(Option<FetchTopic>, bool), ApiError> {
    let at = |f: &str| format!("topics[{i}].{f}");
    let topic_name = name(&at("topicName"), t.topic_name)?;
    let lock = millis(&at("lockDuration"), t.lock_duration)?;
    let _ = t.deserialize_values;
    let mut f = FetchTopic::new(topic_name, lock);
    if let Some(v) = t.variables {
        f.variables = Some(ids(&at("variables"), v)?);
    }
    f.local_variables = t.local_variables.unwrap_or(false);
    if let Some(bk) = t.business_key {
        f.business_key = Some(name(&at("businessKey"), Some(bk))?);
    }
    f.definition_ids = ids(&at("processDefinitionIdIn"), t.process_definition_id_in.unwrap_or_default())?;
    if let Some(id) = t.process_definition_id {
        f.definition_ids.push(name(&at("processDefinitionId"), Some(id))?);
    }
    f.definition_keys = ids(&at("processDefinitionKeyIn"), t.process_definition_key_in.unwrap_or_default())?;
    if let Some(k) = t.process_definition_key {
        f.definition_keys.push(name(&at("processDefinitionKey"), Some(k))?);
    }
    if t.process_definition_version_tag.is_some() {
        return Err(invalid(
            &at("processDefinitionVersionTag"),
            format!(
                "{}: kairos definitions have no version tag; filter by processDefinitionId or processDefinitionKey",
                at("processDefinitionVersionTag")
            ),
        ));
    }
    if t.process_variables.as_ref().is_some_and(|m| !m.is_empty()) {
        return Err(invalid(
            &at("processVariables"),
            format!(
                "{}: fetching by variable values is not supported by kairos; filter in the worker",
                at("processVariables")
            ),
        ));
    }
    // Every kairos task is without a tenant: `tenantIdIn` naming tenants matches none.
    let tenants = ids(&at("tenantIdIn"), t.tenant_id_in.unwrap_or_default())?;
    let _ = t.without_tenant_id;
    let extension = t.include_extension_properties.unwrap_or(false);
    Ok(((tenants.is_empty()).then_some(f), extension))
}

/// `POST /engine-rest/external-task/fetchAndLock` → 200 `[LockedExternalTaskDto]` (possibly
/// empty, at the end of `asyncResponseTimeout`).
pub async fn fetch_and_lock(State(app): State<AppState>, Json(b): Json<FetchBody>) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let max = match b.max_tasks {
        None => return Err(invalid("maxTasks", "maxTasks is required: how many tasks to fetch at most")),
        Some(n) if (0..=MAX_TASKS).contains(&n) => n as usize,
        Some(n) => return Err(invalid("maxTasks", format!("maxTasks must be from 0 to {MAX_TASKS}, not {n}"))),
    };
    let wait = match b.async_response_timeout {
        None => std::time::Duration::ZERO,
        Some(ms) if ms >= 0 && ms as u128 <= MAX_FETCH_WAIT.as_millis() => std::time::Duration::from_millis(ms as u64),
        Some(ms) => {
            return Err(invalid(
                "asyncResponseTimeout",
                format!(
                    "asyncResponseTimeout must be from 0 to {} milliseconds (30 minutes), not {ms}",
                    MAX_FETCH_WAIT.as_millis()
                ),
            ));
        }
    };
    for (i, s) in b.sorting.unwrap_or_default().into_iter().enumerate() {
        match (s.sort_by.as_deref(), s.sort_order.as_deref()) {
            (Some("createTime"), None | Some("asc")) => {}
            _ => {
                return Err(invalid(
                    &format!("sorting[{i}]"),
                    format!(
                        "sorting[{i}]: kairos fetches oldest first; only {{\"sortBy\": \"createTime\", \"sortOrder\": \"asc\"}} is supported"
                    ),
                ));
            }
        }
    }
    let topics = b.topics.unwrap_or_default();
    if topics.len() > MAX_TOPICS {
        return Err(invalid("topics", format!("a fetch may name at most {MAX_TOPICS} topics")));
    }
    let mut wanted = Vec::new();
    let mut extension = Vec::new();
    for (i, t) in topics.into_iter().enumerate() {
        let (t, ext) = topic(i, t)?;
        if let Some(t) = t {
            if ext {
                extension.push(t.topic.clone());
            }
            wanted.push(t);
        }
    }
    let processes = app.engine.processes();
    let (tasks, hold) = if max == 0 || wanted.is_empty() {
        processes.external_fetch(&worker, 0, false, &[]).await?
    } else {
        processes.external_fetch_wait(&worker, max, b.use_priority.unwrap_or(false), &wanted, wait).await?
    };
    let answer: Vec<Value> = tasks.iter().map(|t| locked(t, extension.contains(&t.topic))).collect();
    let body = serde_json::to_vec(&answer).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut res = Response::new(Body::new(Delivering { bytes: Some(Bytes::from(body)), hold: Some(hold) }));
    res.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    Ok(res)
}

/// Camunda's LockedExternalTaskDto.
fn locked(t: &ExternalTask, extension: bool) -> Value {
    let mut v = json!({
        "activityId": t.element_id,
        "activityInstanceId": t.execution_id,
        "errorMessage": t.error_message,
        "errorDetails": null,
        "executionId": t.execution_id,
        "id": t.id,
        "lockExpirationTime": date(t.lock_expiration_time),
        "createTime": null,
        "processDefinitionId": t.process_definition_id,
        "processDefinitionKey": t.process_definition_key,
        "processDefinitionVersionTag": null,
        "processInstanceId": t.process_instance_id,
        "retries": t.retries,
        "suspended": false,
        "workerId": t.worker_id,
        "topicName": t.topic,
        "tenantId": null,
        "variables": to_typed(&t.variables),
        "priority": t.priority,
        "businessKey": t.business_key,
    });
    if extension {
        v["extensionProperties"] = json!({});
    }
    v
}

/// A response body of one chunk that settles a fetch's [`Hold`] once hyper has taken the
/// chunk and asks for more: a connection that went away before that drops the body, and the
/// hold gives the locks back.
struct Delivering {
    bytes: Option<Bytes>,
    hold: Option<Hold>,
}

impl http_body::Body for Delivering {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if let Some(b) = self.bytes.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(b))));
        }
        if let Some(h) = self.hold.take() {
            h.delivered();
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none() && self.hold.is_none()
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
        "tenantId": null,
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
fn query(q: ListQuery, paged: bool) -> Result<Option<ExternalQuery>, ApiError> {
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
pub async fn list(State(app): State<AppState>, Query(q): Query<ListQuery>) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let Some(q) = query(q, true)? else { return Ok(axum::Json(Vec::new())) };
    let rows = app.engine.processes().external_tasks(&q).await?;
    Ok(axum::Json(rows.iter().map(dto).collect()))
}

/// `GET /engine-rest/external-task/count?…` → `{"count": N}`.
pub async fn count(State(app): State<AppState>, Query(q): Query<ListQuery>) -> Result<axum::Json<Value>, ApiError> {
    if q.first_result.is_some() || q.max_results.is_some() {
        return Err(invalid("firstResult", "a count takes no firstResult or maxResults"));
    }
    let Some(q) = query(q, false)? else { return Ok(axum::Json(json!({"count": 0}))) };
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
/// `errorMessage` is accepted; kairos keeps no message with a caught error.
pub async fn bpmn_error(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<BpmnErrorBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let code = name("errorCode", b.error_code)?;
    let _ = b.error_message;
    let vars = from_typed("variables", b.variables)?;
    app.engine.processes().external_bpmn_error(&id, &worker, &code, vars).await.map_err(lock_error)?;
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
