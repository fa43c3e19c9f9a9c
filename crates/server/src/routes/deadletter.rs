//! `/management/deadletter-jobs` (SPEC J4): jobs whose retries ran out, waiting for an
//! operator to read their stack trace and move them back or delete them.

use super::jobs::{JobsQuery, delete_in, get_in, list_table, not_found, stacktrace_in};
use crate::AppState;
use crate::dto::{JobDto, JobList};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use kairos::JobTable;
use kairos_store::ErrorKind;
use serde::Deserialize;

/// Retries a moved-back dead letter gets when the request names none (Activiti's default).
const DEFAULT_RETRIES: i32 = 3;

/// `GET /management/deadletter-jobs`.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<JobsQuery>,
) -> Result<axum::Json<JobList>, ApiError> {
    list_table(&app, q.filter(JobTable::DeadLetter, &scope)?).await
}

/// `GET /management/deadletter-jobs/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<JobDto>, ApiError> {
    get_in(&app, JobTable::DeadLetter, &id).await
}

/// `GET /management/deadletter-jobs/{id}/exception-stacktrace`.
pub async fn stacktrace(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    stacktrace_in(&app, JobTable::DeadLetter, &id).await
}

/// `DELETE /management/deadletter-jobs/{id}`: the job and its stack trace bytes.
pub async fn delete(State(app): State<AppState>, Id(id): Id) -> Result<StatusCode, ApiError> {
    delete_in(&app, JobTable::DeadLetter, &id, false).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadLetterAction {
    action: String,
    retries: Option<i32>,
}

/// `POST /management/deadletter-jobs/{id}` `{"action": "move", "retries"?: 3}`: back to
/// ACT_RU_JOB, due now, lock and exception cleared, old stack bytes deleted (seed 000 §4.2).
pub async fn act(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<DeadLetterAction>,
) -> Result<axum::Json<JobDto>, ApiError> {
    if body.action != "move" {
        return Err(ApiError::invalid(
            "action",
            format!("action \"{}\" is not known here; the only one is \"move\" (back to the live jobs)", body.action),
        ));
    }
    let retries = body.retries.unwrap_or(DEFAULT_RETRIES);
    if retries < 1 {
        return Err(ApiError::invalid(
            "retries",
            format!("retries must be at least 1 (the attempts the moved job gets), not {retries}"),
        ));
    }
    let store = app.engine.store();
    let job = match store.deadletter_move(&id, retries).await {
        Ok(job) => job,
        Err(e) if e.kind == ErrorKind::NotFound => {
            return Err(not_found(store.as_ref(), JobTable::DeadLetter, &id).await);
        }
        Err(e) => return Err(e.into()),
    };
    app.engine.wake();
    Ok(axum::Json(JobDto::new(job, JobTable::Runtime, store.db_now().await?)))
}
