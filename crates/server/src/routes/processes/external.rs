//! `/external-job-api` (SPEC I4): external workers in any language fetch and lock the work of
//! service tasks by topic, then complete it, fail it (retries and dead letters as for any job)
//! or report a BPMN error — in Flowable's wire format (its `flowable-external-job-rest`
//! module), so that Flowable's own worker clients run unchanged: variables as typed lists,
//! 204 for every outcome, 403 when the worker does not hold the lock.

use super::{MAX_NAME_CHARS, required};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json};
use crate::flowable::{self, RestVariable};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::ExternalTask;
use kairos::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// At most this many tasks per fetch.
const MAX_TASKS: u64 = 1_000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcquireBody {
    topic: Option<String>,
    lock_duration: Option<Value>,
    number_of_tasks: Option<Value>,
    /// Flowable: how often its acquire command retries after an optimistic-lock failure
    /// (default 5). kairos's acquire is one conditional UPDATE that cannot fail that way, so it
    /// is checked and otherwise ignored.
    number_of_retries: Option<Value>,
    worker_id: Option<String>,
    /// `bpmn` or `cmmn` (Flowable); kairos runs BPMN only, so `cmmn` acquires nothing.
    scope_type: Option<String>,
    /// Flowable's tenant filter: only its jobs (a tenant's worker: always its own).
    tenant_id: Option<String>,
}

/// A locked job as Flowable's `AcquiredExternalWorkerJobResponse` has it: its
/// [`JobResponse`] and the variables visible at the service task as a typed list.
#[derive(Debug, Serialize)]
pub struct AcquiredJob {
    #[serde(flatten)]
    pub job: JobResponse,
    pub variables: Vec<RestVariable>,
}

impl AcquiredJob {
    fn of(t: ExternalTask) -> Self {
        let job = JobResponse {
            url: format!("/external-job-api/jobs/{}", t.id),
            correlation_id: t.id.clone(),
            id: t.id,
            process_instance_id: Some(t.process_instance_id),
            process_definition_id: Some(t.process_definition_id),
            execution_id: Some(t.execution_id),
            scope_id: None,
            sub_scope_id: None,
            scope_definition_id: None,
            scope_type: "bpmn",
            element_id: Some(t.element_id),
            element_name: None,
            retries: t.retries,
            exception_message: t.error_message,
            due_date: None,
            create_time: None,
            tenant_id: t.tenant_id,
            lock_owner: Some(t.worker_id),
            lock_expiration_time: Some(t.lock_expiration_time),
            topic: Some(t.topic),
        };
        AcquiredJob { job, variables: flowable::variable_list(&t.variables, None) }
    }
}

/// A duration as API.md takes it: ISO 8601 (`PT5M`) or milliseconds (Camunda's habit).
fn duration(field: &'static str, v: &Value) -> Result<SignedDuration, ApiError> {
    let bad = || {
        ApiError::invalid(
            field,
            format!("{field} must be an ISO 8601 duration such as \"PT5M\" or a number of milliseconds, not {v}"),
        )
    };
    let d = match v {
        Value::Number(n) => SignedDuration::from_millis(n.as_i64().ok_or_else(bad)?),
        Value::String(s) => kairos_time::IsoDuration::parse(s)
            .and_then(|d| d.to_signed_duration_at(Timestamp::now()))
            .map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    if d.is_negative() || d > SignedDuration::from_hours(24 * 365) {
        return Err(ApiError::invalid(field, format!("{field} must be between 0 and one year")));
    }
    Ok(d)
}

/// A JSON integer in `range`, or a 400 naming `field`.
fn int_in(field: &'static str, v: &Value, range: std::ops::RangeInclusive<i64>) -> Result<i64, ApiError> {
    v.as_i64().filter(|n| range.contains(n)).ok_or_else(|| {
        ApiError::invalid(
            field,
            format!("{field} must be an integer from {} to {}, not {v}", range.start(), range.end()),
        )
    })
}

/// Flowable answers 403 when a worker reports on a job it does not hold; kairos's engine says
/// conflict (409) for that, which stays its answer elsewhere.
fn not_holder(e: kairos::Error) -> ApiError {
    let e = ApiError::from(e);
    if e.status == StatusCode::CONFLICT { ApiError::new(StatusCode::FORBIDDEN, "not-lock-owner", e.message) } else { e }
}

/// `POST /external-job-api/acquire/jobs` → the locked jobs (possibly none).
pub async fn acquire(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(b): Json<AcquireBody>,
) -> Result<axum::Json<Vec<AcquiredJob>>, ApiError> {
    let topic = required("topic", b.topic, MAX_NAME_CHARS)?;
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let lock = duration(
        "lockDuration",
        b.lock_duration
            .as_ref()
            .ok_or_else(|| ApiError::invalid("lockDuration", "lockDuration is required, e.g. \"PT5M\""))?,
    )?;
    if lock.is_zero() {
        return Err(ApiError::invalid("lockDuration", "lockDuration must be more than zero"));
    }
    let n = match &b.number_of_tasks {
        None | Some(Value::Null) => 1,
        Some(v) => int_in("numberOfTasks", v, 1..=MAX_TASKS as i64)?,
    };
    if let Some(v) = b.number_of_retries.as_ref().filter(|v| !v.is_null()) {
        int_in("numberOfRetries", v, 0..=1_000)?;
    }
    match b.scope_type.as_deref() {
        None | Some("bpmn") => {}
        Some("cmmn") => return Ok(axum::Json(Vec::new())),
        Some(other) => {
            return Err(ApiError::invalid(
                "scopeType",
                format!("scopeType must be \"bpmn\" or \"cmmn\", not \"{other}\""),
            ));
        }
    }
    let tenant = super::filter(b.tenant_id);
    let tenant = scope.filter(tenant.as_deref());
    let tasks = app.engine.processes().external_acquire_in(tenant, &topic, lock, n as usize, &worker).await?;
    Ok(axum::Json(tasks.into_iter().map(AcquiredJob::of).collect()))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteBody {
    worker_id: Option<String>,
    variables: Option<Value>,
}

/// `POST /external-job-api/acquire/jobs/{id}/complete` → 204.
pub async fn complete(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<CompleteBody>,
) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let vars = flowable::variable_map("variables", b.variables)?;
    app.engine.processes().external_complete(&id, &worker, vars).await.map_err(not_holder)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailBody {
    worker_id: Option<String>,
    error_message: Option<String>,
    /// Kept as the job's exception stack trace (as Flowable does), until the next failure.
    error_details: Option<String>,
    retries: Option<Value>,
    retry_timeout: Option<Value>,
}

/// `POST /external-job-api/acquire/jobs/{id}/fail` → 204. Without `retries` one is spent; at
/// 0 the job becomes a dead letter. `retryTimeout` (ISO 8601) delays its next acquisition.
pub async fn fail(State(app): State<AppState>, Id(id): Id, Json(b): Json<FailBody>) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let message = b.error_message.map(|m| super::limited("errorMessage", m, 4000)).transpose()?;
    let details = b.error_details.map(|d| super::limited("errorDetails", d, 1024 * 1024)).transpose()?;
    let retries = match &b.retries {
        None | Some(Value::Null) => None,
        Some(v) => Some(int_in("retries", v, 0..=1_000)?),
    };
    let timeout = match &b.retry_timeout {
        None | Some(Value::Null) => None,
        Some(v) => Some(duration("retryTimeout", v)?),
    };
    let message = match (message, &details) {
        (Some(m), _) => m,
        (None, Some(d)) => d.lines().next().unwrap_or("").chars().take(4000).collect(),
        (None, None) => "the external worker reported a failure".to_string(),
    };
    app.engine
        .processes()
        .external_fail_with(&id, &worker, &message, details.as_deref(), retries, timeout)
        .await
        .map_err(not_holder)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BpmnErrorBody {
    worker_id: Option<String>,
    error_code: Option<String>,
    variables: Option<Value>,
}

/// `POST /external-job-api/acquire/jobs/{id}/bpmnError` → 204; the error boundary event that
/// catches the code takes over (a 422 names the task when none does). Without `errorCode`
/// (Flowable allows it) a catch-all error boundary event takes it.
pub async fn bpmn_error(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<BpmnErrorBody>,
) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let code = match b.error_code {
        None => String::new(),
        Some(c) => super::limited("errorCode", c, MAX_NAME_CHARS)?,
    };
    let vars = flowable::variable_map("variables", b.variables)?;
    app.engine.processes().external_bpmn_error(&id, &worker, &code, vars).await.map_err(not_holder)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /external-job-api/acquire/jobs/{id}/cmmnTerminate`: Flowable's call for CMMN jobs;
/// kairos runs no CMMN, so no job can be one — 400 saying so (after the usual checks).
pub async fn cmmn_terminate(Id(id): Id, Json(b): Json<CompleteBody>) -> Result<Response, ApiError> {
    required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    flowable::variable_map("variables", b.variables)?;
    Err(ApiError::bad_request(format!(
        "job {id} is not a CMMN job: kairos runs BPMN only; use /complete, /fail or /bpmnError"
    )))
}

/// An external worker job as Flowable's `ExternalWorkerJobResponse` has it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobResponse {
    pub id: String,
    pub url: String,
    pub correlation_id: String,
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    pub execution_id: Option<String>,
    pub scope_id: Option<String>,
    pub sub_scope_id: Option<String>,
    pub scope_definition_id: Option<String>,
    pub scope_type: &'static str,
    pub element_id: Option<String>,
    pub element_name: Option<String>,
    pub retries: i64,
    pub exception_message: Option<String>,
    #[serde(serialize_with = "flowable::opt_date")]
    pub due_date: Option<Timestamp>,
    /// Null in an acquire's answer (the engine's locked task does not carry it).
    #[serde(serialize_with = "flowable::opt_date")]
    pub create_time: Option<Timestamp>,
    pub tenant_id: String,
    pub lock_owner: Option<String>,
    #[serde(serialize_with = "flowable::opt_date")]
    pub lock_expiration_time: Option<Timestamp>,
    pub topic: Option<String>,
}

impl JobResponse {
    fn of(j: kairos::Job) -> Self {
        JobResponse {
            url: format!("/external-job-api/jobs/{}", j.id),
            correlation_id: j.id.clone(),
            id: j.id,
            process_instance_id: j.process_instance_id,
            process_definition_id: j.proc_def_id,
            execution_id: j.execution_id,
            scope_id: None,
            sub_scope_id: None,
            scope_definition_id: None,
            scope_type: "bpmn",
            element_id: j.element_id,
            element_name: j.element_name,
            retries: i64::from(j.retries),
            exception_message: j.exception_msg,
            due_date: j.duedate,
            create_time: Some(j.create_time),
            tenant_id: j.tenant_id.unwrap_or_default(),
            lock_owner: j.lock_owner,
            lock_expiration_time: j.lock_exp_time,
            topic: j.handler_cfg,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobsQuery {
    id: Option<String>,
    process_instance_id: Option<String>,
    with_exception: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /external-job-api/jobs?id=&processInstanceId=&withException=&sort=id&order=asc`:
/// the external worker jobs in ACT_RU_JOB (Flowable's list envelope).
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    crate::extract::Query(q): crate::extract::Query<JobsQuery>,
) -> Result<axum::Json<crate::dto::List<JobResponse>>, ApiError> {
    let sorting = crate::dto::Sorting::parse(q.sort.as_deref(), q.order.as_deref(), &["id"], "id")?;
    let (start, size) = crate::extract::page(q.start.as_deref(), q.size.as_deref())?;
    if let Some(id) = super::filter(q.id) {
        let store = app.engine.store();
        let found = store.job_get(kairos::JobTable::Runtime, &id).await?;
        let data: Vec<JobResponse> = found
            .filter(|j| j.job_type == kairos::JobType::ExternalWorker)
            .filter(|j| scope.sees(j.tenant_id.as_deref().unwrap_or("")))
            .filter(|j| {
                super::filter(q.process_instance_id.clone())
                    .is_none_or(|p| j.process_instance_id.as_deref() == Some(p.as_str()))
            })
            .map(JobResponse::of)
            .into_iter()
            .collect();
        let total = data.len() as u64;
        let data: Vec<JobResponse> = data.into_iter().skip(start as usize).take(size as usize).collect();
        return Ok(axum::Json(crate::dto::List::new(data, total, start).sorted_as(&sorting)));
    }
    let filter = kairos_store::JobFilter {
        table: kairos::JobTable::Runtime,
        process_instance_id: super::filter(q.process_instance_id),
        job_type: Some(kairos::JobType::ExternalWorker),
        with_exception: crate::extract::flag("withException", q.with_exception.as_deref())?,
        tenant: scope.0.clone(),
        start,
        size,
        ..Default::default()
    };
    let mut page = app.engine.store().job_list(&filter).await?;
    page.data.sort_by(|a, b| if sorting.descending { b.id.cmp(&a.id) } else { a.id.cmp(&b.id) });
    Ok(axum::Json(crate::dto::List::from_page(page, JobResponse::of).sorted_as(&sorting)))
}

/// `GET /external-job-api/jobs/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<JobResponse>, ApiError> {
    match app.engine.store().job_get(kairos::JobTable::Runtime, &id).await? {
        Some(j) if j.job_type == kairos::JobType::ExternalWorker => Ok(axum::Json(JobResponse::of(j))),
        _ => Err(ApiError::not_found(format!("there is no external worker job {id}"))),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtendLockBody {
    worker_id: Option<String>,
    lock_duration: Option<Value>,
    expected_lock_expiration_time: Option<String>,
}

/// Flowable's `ExternalWorkerJobLockExtensionResponse`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockExtension {
    pub job_id: String,
    pub worker_id: String,
    #[serde(serialize_with = "flowable::opt_date")]
    pub lock_expiration_time: Option<Timestamp>,
}

/// `POST /external-job-api/acquire/jobs/{id}/extend-lock` `{"workerId", "lockDuration",
/// "expectedLockExpirationTime"}` → 200 with the new expiry: the worker keeps the job for
/// `lockDuration` from now, if it still holds it and its lock is the one it expects (else
/// 409: it expired or changed meanwhile; 403: another worker holds it).
pub async fn extend_lock(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<ExtendLockBody>,
) -> Result<axum::Json<LockExtension>, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let lock = duration(
        "lockDuration",
        b.lock_duration
            .as_ref()
            .ok_or_else(|| ApiError::invalid("lockDuration", "lockDuration is required, e.g. \"PT5M\""))?,
    )?;
    if lock.is_zero() {
        return Err(ApiError::invalid("lockDuration", "lockDuration must be positive"));
    }
    let expected = required("expectedLockExpirationTime", b.expected_lock_expiration_time, 64)?;
    let expected = kairos_time::parse_instant(&expected).map_err(|_| {
        ApiError::invalid(
            "expectedLockExpirationTime",
            "expectedLockExpirationTime must be an ISO 8601 instant, as acquire answered it",
        )
    })?;
    let processes = app.engine.processes();
    let task = processes.external_task(&id).await?;
    match task.worker_id.as_deref() {
        Some(w) if w == worker => {}
        _ => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "not-lock-owner",
                format!("{worker} does not hold a lock on external worker job {id}"),
            ));
        }
    }
    // Compared at Flowable's precision: the millisecond acquire answered with.
    let millis = |t: Timestamp| t.as_millisecond();
    if task.lock_expiration_time.map(millis) != Some(millis(expected)) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!(
                "the lock of external worker job {id} is not the one expected: it expired or changed; acquire it again"
            ),
        ));
    }
    processes.external_extend_lock(&id, &worker, lock).await?;
    let now = processes.external_task(&id).await?;
    Ok(axum::Json(LockExtension { job_id: id, worker_id: worker, lock_expiration_time: now.lock_expiration_time }))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnacquireBody {
    worker_id: Option<String>,
    tenant_id: Option<String>,
}

/// `POST /external-job-api/unacquire/jobs/{id}` `{"workerId"}` → 204: the worker gives the job
/// back; it can be acquired at once (403 when it does not hold it).
pub async fn unacquire(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<UnacquireBody>,
) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let _ = b.tenant_id; // the guard checked it; the job is the one named
    let processes = app.engine.processes();
    let task = processes.external_task(&id).await?;
    if task.worker_id.as_deref() != Some(worker.as_str()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not-lock-owner",
            format!("{worker} does not hold a lock on external worker job {id}"),
        ));
    }
    processes.external_unlock(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /external-job-api/unacquire/jobs` `{"workerId", "tenantId"?}` → 204: every job the
/// worker holds is given back (a worker shutting down).
pub async fn unacquire_all(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(b): Json<UnacquireBody>,
) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let tenant = super::filter(b.tenant_id);
    let tenant = scope.filter(tenant.as_deref()).map(str::to_owned);
    let processes = app.engine.processes();
    // In pages of 1,000: each unlock takes its job out of the next page's query.
    loop {
        let q = kairos::process::ExternalQuery {
            worker_id: Some(worker.clone()),
            tenant: tenant.clone(),
            max: 1_000,
            ..Default::default()
        };
        let held = processes.external_tasks(&q).await?;
        if held.is_empty() {
            break;
        }
        for t in held {
            processes.external_unlock(&t.id).await?;
        }
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
