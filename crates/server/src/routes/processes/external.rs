//! `/external-job-api` (SPEC I4): external workers in any language fetch and lock the work of
//! service tasks by topic, then complete it, fail it (retries and dead letters as for any job)
//! or report a BPMN error.

use super::{MAX_NAME_CHARS, required, variables};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::ExternalTask;
use kairos::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde_json::Value;

/// At most this many tasks per fetch.
const MAX_TASKS: u64 = 1_000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcquireBody {
    topic: Option<String>,
    lock_duration: Option<Value>,
    number_of_tasks: Option<Value>,
    worker_id: Option<String>,
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

/// `POST /external-job-api/acquire/jobs` → the locked tasks (possibly none).
pub async fn acquire(
    State(app): State<AppState>,
    Json(b): Json<AcquireBody>,
) -> Result<axum::Json<Vec<ExternalTask>>, ApiError> {
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
        None => 1,
        Some(v) => v.as_u64().filter(|n| (1..=MAX_TASKS).contains(n)).ok_or_else(|| {
            ApiError::invalid(
                "numberOfTasks",
                format!("numberOfTasks must be an integer from 1 to {MAX_TASKS}, not {v}"),
            )
        })?,
    };
    Ok(axum::Json(app.engine.processes().external_acquire(&topic, lock, n as usize, &worker).await?))
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
    let vars = variables(b.variables)?;
    app.engine.processes().external_complete(&id, &worker, vars).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FailBody {
    worker_id: Option<String>,
    error_message: Option<String>,
    retries: Option<Value>,
    retry_timeout: Option<Value>,
}

/// `POST /external-job-api/acquire/jobs/{id}/fail` → 200 `{"id", "retries", "deadLetter"}` (`retries` 0 and `deadLetter` true: it became a dead letter).
pub async fn fail(State(app): State<AppState>, Id(id): Id, Json(b): Json<FailBody>) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let message = required("errorMessage", b.error_message, 4000)?;
    let retries = match &b.retries {
        None => None,
        Some(v) => Some(v.as_i64().filter(|r| (0..=1_000).contains(r)).ok_or_else(|| {
            ApiError::invalid("retries", format!("retries must be an integer from 0 to 1000, not {v}"))
        })?),
    };
    let timeout = b.retry_timeout.as_ref().map(|v| duration("retryTimeout", v)).transpose()?;
    let left = app.engine.processes().external_fail(&id, &worker, &message, retries, timeout).await?;
    Ok(axum::Json(serde_json::json!({ "id": id, "retries": left, "deadLetter": left == 0 })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BpmnErrorBody {
    worker_id: Option<String>,
    error_code: Option<String>,
    variables: Option<Value>,
}

/// `POST /external-job-api/acquire/jobs/{id}/bpmnError` → 204; the error boundary event that
/// catches the code takes over (a 422 names the task when none does).
pub async fn bpmn_error(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<BpmnErrorBody>,
) -> Result<Response, ApiError> {
    let worker = required("workerId", b.worker_id, MAX_NAME_CHARS)?;
    let code = required("errorCode", b.error_code, MAX_NAME_CHARS)?;
    let vars = variables(b.variables)?;
    app.engine.processes().external_bpmn_error(&id, &worker, &code, vars).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
