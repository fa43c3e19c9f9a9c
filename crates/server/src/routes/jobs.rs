//! `/management/jobs` and `/management/timer-jobs` (API.md "Jobs", SPEC J4, J13): enqueue,
//! list, inspect, run now, delete, read the stack trace of live jobs (ACT_RU_JOB).

use crate::AppState;
use crate::dto::{JobDto, JobList, List};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, flag, page};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::{EnqueueRequest, JobTable, JobType};
use kairos_store::{ErrorKind, JobFilter, Store};
use serde::Deserialize;

/// Filters of the job lists (also used for dead letters).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobsQuery {
    process_instance_id: Option<String>,
    handler_type: Option<String>,
    #[serde(rename = "type")]
    job_type: Option<String>,
    with_exception: Option<String>,
    /// Flowable's: only timer jobs / only message (async) jobs.
    timers_only: Option<String>,
    messages_only: Option<String>,
    /// Flowable's: only this tenant's jobs (a tenant's caller: always theirs).
    tenant_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

impl JobsQuery {
    pub fn filter(&self, table: JobTable, scope: &crate::tenancy::Scope) -> Result<JobFilter, ApiError> {
        let (start, size) = page(self.start.as_deref(), self.size.as_deref())?;
        let mut job_type = match self.job_type.as_deref() {
            None | Some("") => None,
            Some(t) => Some(JobType::parse(t).ok_or_else(|| {
                ApiError::invalid("type", format!("type must be timer, message or external-worker, not \"{t}\""))
            })?),
        };
        let only = [
            (flag("timersOnly", self.timers_only.as_deref())?, JobType::Timer, "timersOnly"),
            (flag("messagesOnly", self.messages_only.as_deref())?, JobType::Message, "messagesOnly"),
        ];
        for (set, kind, field) in only {
            if set == Some(true) {
                if job_type.is_some_and(|t| t != kind) {
                    return Err(ApiError::invalid(
                        field,
                        format!("{field} contradicts the other job type filter given"),
                    ));
                }
                job_type = Some(kind);
            }
        }
        Ok(JobFilter {
            table,
            process_instance_id: some(&self.process_instance_id),
            handler_type: some(&self.handler_type),
            job_type,
            with_exception: flag("withException", self.with_exception.as_deref())?,
            tenant: scope.filter(some(&self.tenant_id).as_deref()).map(str::to_owned),
            start,
            size,
        })
    }
}

fn some(s: &Option<String>) -> Option<String> {
    s.clone().filter(|s| !s.is_empty())
}

/// `POST /management/jobs`: validates, then enqueues; a bad request writes nothing.
/// A tenant's caller enqueues in its own tenant.
pub async fn create(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(mut req): Json<EnqueueRequest>,
) -> Result<Response, ApiError> {
    req.tenant_id = Some(scope.creating("tenantId", req.tenant_id.as_deref())?).filter(|t| !t.is_empty());
    let job = app.engine.enqueue(&req).await?;
    let location = format!("/management/jobs/{}", job.id);
    // CREATE_TIME_ is the database's now at insert: the right clock to judge the new job by.
    let now = job.create_time;
    let body = axum::Json(JobDto::new(job, JobTable::Runtime, now));
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], body).into_response())
}

/// `GET /management/jobs`.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<JobsQuery>,
) -> Result<axum::Json<JobList>, ApiError> {
    list_table(&app, q.filter(JobTable::Runtime, &scope)?).await
}

/// `GET /management/timer-jobs`: the waiting timers (seed 003's ACT_RU_TIMER_JOB).
pub async fn list_timers(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<JobsQuery>,
) -> Result<axum::Json<JobList>, ApiError> {
    if q.job_type.is_some() {
        return Err(ApiError::invalid(
            "type",
            "type is always timer here; use GET /management/jobs?type=... for others",
        ));
    }
    let mut filter = q.filter(JobTable::Runtime, &scope)?;
    filter.job_type = Some(JobType::Timer);
    list_table(&app, filter).await
}

pub async fn list_table(app: &AppState, filter: JobFilter) -> Result<axum::Json<JobList>, ApiError> {
    let store = app.engine.store();
    let mut page = store.job_list(&filter).await?;
    let now = store.db_now().await?;
    let unreadable = std::mem::take(&mut page.unreadable);
    let size = page.size;
    let mut list = List::from_page(page, |j| JobDto::new(j, filter.table, now));
    list.size = size;
    Ok(axum::Json(JobList { list, unreadable }))
}

/// `GET /management/jobs/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<JobDto>, ApiError> {
    get_in(&app, JobTable::Runtime, &id).await
}

pub async fn get_in(app: &AppState, table: JobTable, id: &str) -> Result<axum::Json<JobDto>, ApiError> {
    let store = app.engine.store();
    match store.job_get(table, id).await? {
        Some(job) => Ok(axum::Json(JobDto::new(job, table, store.db_now().await?))),
        None => Err(not_found(store.as_ref(), table, id).await),
    }
}

/// A 404 that says where the job is instead, if it is elsewhere, or that it has finished.
pub async fn not_found(store: &dyn Store, table: JobTable, id: &str) -> ApiError {
    for other in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        if other != table && matches!(store.job_get(other, id).await, Ok(Some(_))) {
            let hint = match other {
                JobTable::Runtime => format!("it is a live job: GET /management/jobs/{id}"),
                JobTable::DeadLetter => format!("it is a dead letter: GET /management/deadletter-jobs/{id}"),
                JobTable::Suspended => "its process instance is suspended (ACT_RU_SUSPENDED_JOB)".to_string(),
            };
            return ApiError::not_found(format!("job {id} is not in {}; {hint}", table.table_name()));
        }
    }
    let log = kairos_store::JobLogFilter { job_id: Some(id.into()), size: 1, ..Default::default() };
    if matches!(store.job_log_list(&log).await, Ok(p) if p.total > 0) {
        return ApiError::not_found(format!(
            "job {id} is no longer in {}; its attempts are in GET /history/job-log?jobId={id}",
            table.table_name()
        ));
    }
    ApiError::not_found(format!("job {id} does not exist"))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobAction {
    action: String,
}

/// `POST /management/jobs/{id}` `{"action": "execute"}`: makes it due now and wakes the
/// executor; the job runs on whichever node acquires it first.
pub async fn act(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<JobAction>,
) -> Result<axum::Json<JobDto>, ApiError> {
    if body.action != "execute" {
        return Err(ApiError::invalid(
            "action",
            format!("action \"{}\" is not known here; the only one is \"execute\"", body.action),
        ));
    }
    let store = app.engine.store();
    let job = match store.job_execute_now(&id).await {
        Ok(job) => job,
        Err(e) if e.kind == ErrorKind::NotFound => return Err(not_found(store.as_ref(), JobTable::Runtime, &id).await),
        Err(e) => return Err(e.into()),
    };
    app.engine.wake();
    Ok(axum::Json(JobDto::new(job, JobTable::Runtime, store.db_now().await?)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteQuery {
    force: Option<String>,
}

/// `DELETE /management/jobs/{id}[?force=true]`: 409 while a node holds an unexpired lease on
/// it, unless forced (a forced delete under a live node lets the running attempt finish).
pub async fn delete(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let force = flag("force", q.force.as_deref())?.unwrap_or(false);
    delete_in(&app, JobTable::Runtime, &id, force).await
}

pub async fn delete_in(app: &AppState, table: JobTable, id: &str, force: bool) -> Result<StatusCode, ApiError> {
    let store = app.engine.store();
    match store.job_delete(table, id, force).await {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(e) if e.kind == ErrorKind::NotFound => Err(not_found(store.as_ref(), table, id).await),
        Err(e) if e.kind == ErrorKind::Conflict => Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("{}; add ?force=true to delete it anyway, but only if its node is certainly dead", e.message),
        )),
        Err(e) => Err(e.into()),
    }
}

/// `GET /management/jobs/{id}/exception-stacktrace` (text/plain).
pub async fn stacktrace(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    stacktrace_in(&app, JobTable::Runtime, &id).await
}

pub async fn stacktrace_in(app: &AppState, table: JobTable, id: &str) -> Result<Response, ApiError> {
    let store = app.engine.store();
    match store.job_stacktrace(table, id).await {
        Ok(Some(text)) => Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()),
        Ok(None) => Err(ApiError::not_found(format!("job {id} has no exception stack trace: it has not failed"))),
        Err(e) if e.kind == ErrorKind::NotFound => Err(not_found(store.as_ref(), table, id).await),
        Err(e) => Err(e.into()),
    }
}
