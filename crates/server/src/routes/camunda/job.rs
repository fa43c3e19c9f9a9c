//! `/engine-rest/job`: the process engine's jobs (timers, async continuations; external tasks
//! are `/engine-rest/external-task`), their retries, and running one now.

use super::{MAX_ID_CHARS, MAX_NAME_CHARS, MAX_RESULTS, Paging, flag, invalid, opt_date, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::StatusCode;
use kairos::store::JobFilter;
use kairos::{Job, JobTable, JobType};
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's JobDto.
pub fn job_dto(j: &Job, table: JobTable) -> Value {
    json!({
        "id": j.id,
        "jobDefinitionId": null,
        "processInstanceId": j.process_instance_id,
        "executionId": j.execution_id,
        "processDefinitionId": j.proc_def_id,
        "processDefinitionKey": j.proc_def_id.as_deref().and_then(|d| d.split(':').next()),
        "exceptionMessage": j.exception_msg,
        "failedActivityId": j.exception_msg.as_ref().and(j.element_id.as_ref()),
        "retries": if table == JobTable::DeadLetter { 0 } else { j.retries },
        "dueDate": opt_date(j.duedate),
        "suspended": table == JobTable::Suspended,
        "priority": 0,
        "tenantId": super::tenant_json(j.tenant_id.as_deref().unwrap_or("")),
        "createTime": super::date(j.create_time),
        "batchId": null,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    job_id: Option<String>,
    process_instance_id: Option<String>,
    execution_id: Option<String>,
    process_definition_id: Option<String>,
    activity_id: Option<String>,
    with_retries_left: Option<String>,
    no_retries_left: Option<String>,
    executable: Option<String>,
    timers: Option<String>,
    messages: Option<String>,
    with_exception: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

/// The jobs `q` admits, at most `limit` of each table and type, with their table.
async fn matching(
    app: &AppState,
    scope: &crate::tenancy::Scope,
    q: ListQuery,
    limit: u64,
) -> Result<(Vec<(Job, JobTable)>, u64), ApiError> {
    let tenants = super::Tenants::parse(scope, q.tenant_id_in, q.without_tenant_id.as_deref(), ("", None))?;
    let id = text("jobId", q.job_id, MAX_ID_CHARS)?;
    let pi = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?;
    let exec = text("executionId", q.execution_id, MAX_ID_CHARS)?;
    let def = text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?;
    let activity = text("activityId", q.activity_id, MAX_NAME_CHARS)?;
    let on =
        |f: &'static str, v: Option<String>| -> Result<bool, ApiError> { Ok(flag(f, v.as_deref())? == Some(true)) };
    let (with_left, no_left) = (on("withRetriesLeft", q.with_retries_left)?, on("noRetriesLeft", q.no_retries_left)?);
    let executable = on("executable", q.executable)?;
    let (timers, messages) = (on("timers", q.timers)?, on("messages", q.messages)?);
    if timers && messages {
        return Ok((Vec::new(), 0));
    }
    let with_exception = on("withException", q.with_exception)?;
    let (active, suspended) = (on("active", q.active)?, on("suspended", q.suspended)?);
    let mut tables = vec![];
    if !no_left && !suspended {
        tables.push(JobTable::Runtime);
    }
    if !with_left && !executable && !active {
        tables.push(JobTable::DeadLetter);
    }
    if !no_left && !active && !executable {
        tables.push(JobTable::Suspended);
    }
    let types: Vec<JobType> = match (timers, messages) {
        (true, _) => vec![JobType::Timer],
        (_, true) => vec![JobType::Message],
        _ => vec![JobType::Message, JobType::Timer],
    };
    let store = app.engine.store();
    let now = store.db_now().await?;
    let mut all = Vec::new();
    let mut total = 0;
    for table in tables {
        for t in &types {
            let filter = JobFilter {
                table,
                process_instance_id: pi.clone(),
                job_type: Some(*t),
                with_exception: with_exception.then_some(true),
                tenant: tenants.only().map(str::to_owned),
                start: 0,
                size: limit,
                ..JobFilter::default()
            };
            let page = store.job_list(&filter).await?;
            total += page.total;
            all.extend(page.data.into_iter().map(|j| (j, table)));
        }
    }
    let before = all.len() as u64;
    all.retain(|(j, table)| {
        id.as_ref().is_none_or(|x| &j.id == x)
            && exec.as_ref().is_none_or(|x| j.execution_id.as_ref() == Some(x))
            && def.as_ref().is_none_or(|x| j.proc_def_id.as_ref() == Some(x))
            && activity.as_ref().is_none_or(|x| j.element_id.as_ref() == Some(x))
            && (!executable || (*table == JobTable::Runtime && j.duedate.is_none_or(|d| d <= now)))
            && tenants.keeps(j.tenant_id.as_deref().unwrap_or(""))
    });
    let total = total - (before - all.len() as u64);
    Ok((all, total))
}

const SORT_KEYS: &[&str] = &[
    "jobId",
    "executionId",
    "processInstanceId",
    "processDefinitionId",
    "processDefinitionKey",
    "jobRetries",
    "jobDueDate",
    "jobPriority",
    "tenantId",
];

/// `GET /engine-rest/job?…` → `[JobDto]` (live, suspended and failed jobs; failed ones with
/// retries 0), oldest first unless sorted.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let (by, order) = (q.sort_by.take(), q.sort_order.take());
    let sort = sorting(by.as_deref(), order.as_deref(), SORT_KEYS)?;
    let (mut all, _) = matching(&app, &scope, q, page.first.saturating_add(page.max).min(10 * MAX_RESULTS)).await?;
    all.sort_by(|(a, _), (b, _)| {
        let o = match sort.map(|(by, _)| by) {
            Some("jobId") => a.id.cmp(&b.id),
            Some("executionId") => a.execution_id.cmp(&b.execution_id),
            Some("processInstanceId") => a.process_instance_id.cmp(&b.process_instance_id),
            Some("processDefinitionId" | "processDefinitionKey") => a.proc_def_id.cmp(&b.proc_def_id),
            Some("jobRetries") => a.retries.cmp(&b.retries),
            Some("jobDueDate") => a.duedate.cmp(&b.duedate),
            _ => a.create_time.cmp(&b.create_time).then(a.id.cmp(&b.id)),
        };
        if sort.is_some_and(|(_, desc)| desc) { o.reverse() } else { o }
    });
    Ok(axum::Json(page.page(all).iter().map(|(j, t)| job_dto(j, *t)).collect()))
}

/// `GET /engine-rest/job/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    sorting(q.sort_by.take().as_deref(), q.sort_order.take().as_deref(), SORT_KEYS)?;
    let (_, total) = matching(&app, &scope, q, MAX_RESULTS).await?;
    Ok(axum::Json(json!({"count": total})))
}

/// `GET /engine-rest/job/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    let store = app.engine.store();
    for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        if let Some(j) = store.job_get(table, &id).await?
            && j.job_type != JobType::ExternalWorker
        {
            return Ok(axum::Json(job_dto(&j, table)));
        }
    }
    Err(ApiError::not_found(format!("job {id} does not exist")))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetriesBody {
    #[serde(default, deserialize_with = "super::int::opt")]
    retries: Option<i64>,
}

/// `PUT /engine-rest/job/{id}/retries` `{"retries"}` → 204: a live job keeps running with
/// them; a failed one (a dead letter) with `retries` ≥ 1 is moved back and runs again.
pub async fn retries(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<RetriesBody>,
) -> Result<StatusCode, ApiError> {
    let retries = match b.retries {
        Some(r) if (0..=1_000_000).contains(&r) => r,
        Some(r) => return Err(invalid("retries", format!("retries must be from 0 to 1000000, not {r}"))),
        None => return Err(invalid("retries", "retries is required")),
    };
    let store = app.engine.store();
    if store.job_get(JobTable::DeadLetter, &id).await?.is_some_and(|j| j.job_type != JobType::ExternalWorker) {
        if retries == 0 {
            return Ok(StatusCode::NO_CONTENT);
        }
        store.deadletter_move(&id, retries as i32).await?;
        app.engine.wake();
        return Ok(StatusCode::NO_CONTENT);
    }
    match store.job_get(JobTable::Runtime, &id).await? {
        Some(j) if j.job_type != JobType::ExternalWorker => {}
        _ => return Err(ApiError::not_found(format!("job {id} does not exist"))),
    }
    if retries == 0 {
        return Err(invalid(
            "retries",
            "retries 0 on a live job is not supported by kairos (it would stop it without a failure); delete it or let it fail",
        ));
    }
    app.engine.processes().set_job_retries(&id, retries).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /engine-rest/job/{id}/execute` → 204: the job is made due now and the executor woken;
/// it runs on whichever node acquires it first (Camunda runs it within the request; kairos
/// never runs a handler inside a request, docs/camunda.md).
pub async fn execute(State(app): State<AppState>, Id(id): Id) -> Result<StatusCode, ApiError> {
    let store = app.engine.store();
    match store.job_get(JobTable::Runtime, &id).await? {
        Some(j) if j.job_type != JobType::ExternalWorker => {}
        _ if store.job_get(JobTable::DeadLetter, &id).await?.is_some() => {
            return Err(super::bad_user_request(format!(
                "job {id} has no retries left: set them first (PUT /job/{id}/retries)"
            )));
        }
        _ => return Err(ApiError::not_found(format!("job {id} does not exist"))),
    }
    store.job_execute_now(&id).await?;
    app.engine.wake();
    Ok(StatusCode::NO_CONTENT)
}
