//! `/scheduler/...` (API.md "Scheduler", SPEC S): the Quartz model's routes.
//!
//! `POST /scheduler/cron/next` previews a cron expression: the fire times a cron trigger with
//! that expression and time zone would have (kairos-cron: Quartz 2.3's dialect, kairos's DST
//! policy). It writes nothing; the store is only asked for its clock when `from` is absent.

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Json;
use axum::extract::State;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use kairos_cron::CronExpr;
use serde::{Deserialize, Serialize};

/// The most fire times one request may ask for.
const MAX_COUNT: u32 = 1000;
const DEFAULT_COUNT: u32 = 5;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CronNextRequest {
    expression: String,
    /// An IANA zone name; the expression's local times are read in it [default: UTC].
    time_zone: Option<String>,
    /// Fire times strictly after this instant [default: the database's now].
    from: Option<String>,
    count: Option<u32>,
}

#[derive(Debug, Serialize)]
pub struct CronNextResponse {
    times: Vec<Timestamp>,
}

/// `POST /scheduler/cron/next` → `{"times": [INSTANT...]}`; fewer than `count` when the
/// expression stops firing (years end at 2099). Invalid input is a 400 naming the field (and,
/// for the expression, the cron field and character position).
pub async fn cron_next(
    State(app): State<AppState>,
    Json(req): Json<CronNextRequest>,
) -> Result<axum::Json<CronNextResponse>, ApiError> {
    let cron = CronExpr::parse(&req.expression)
        .map_err(|e| ApiError::invalid("expression", format!("invalid cron expression: {e}")))?;
    let zone = req.time_zone.as_deref().unwrap_or("UTC");
    let tz = TimeZone::get(zone).map_err(|e| {
        ApiError::invalid("timeZone", format!("unknown time zone \"{zone}\" (an IANA name such as Europe/Berlin): {e}"))
    })?;
    let count = req.count.unwrap_or(DEFAULT_COUNT);
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(ApiError::invalid("count", format!("count must be 1 to {MAX_COUNT}, not {count}")));
    }
    let from = match req.from.as_deref() {
        Some(text) => kairos_core::instant::parse_accepted(text)
            .map_err(|m| ApiError::invalid("from", format!("from must be an RFC 3339 instant: {m}")))?,
        None => app.engine.store().db_now().await?,
    };
    let times =
        std::iter::successors(cron.next_after(from, &tz), |t| cron.next_after(*t, &tz)).take(count as usize).collect();
    Ok(axum::Json(CronNextResponse { times }))
}

// ----- jobs, triggers, calendars, the cluster (the Quartz model through kairos::scheduler) ------

use crate::dto::List;
use crate::extract::Query;
use crate::extract::Segments;
use crate::routes::processes::{paged, unknown_action};
use crate::tenancy::Scope;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::scheduler::{
    FiredTriggerView, JobSpec, JobView, SchedulerNodeView, TriggerSpec, TriggerState, TriggerView,
};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TriggersQuery {
    group: Option<String>,
    state: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /scheduler/jobs`' query: a job detail has no state, so `state` is refused here.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobsQuery {
    group: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `?start=&size=` of a list without filters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pages {
    start: Option<String>,
    size: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    action: String,
}

// A scheduler job is its tenant's (TENANT_ID_ of QRTZ_JOB_DETAILS), a trigger its job's: a
// tenant's caller adds jobs to its tenant and finds no other tenant's job or trigger (404, as if
// absent). Trigger groups, calendars, firings and nodes are the node's (tenancy::NODE_WIDE).

/// Job `group.name` if the caller may see it; another tenant's answers 404 as if it did not exist.
async fn visible_job(app: &AppState, scope: &Scope, group: &str, name: &str) -> Result<JobView, ApiError> {
    let job = app.engine.scheduler().job(group, name).await?;
    if scope.sees(&job.tenant_id) { Ok(job) } else { Err(ApiError::not_found(format!("no job {group}.{name}"))) }
}

/// Trigger `group.name` if the caller may see its job.
async fn visible_trigger(app: &AppState, scope: &Scope, group: &str, name: &str) -> Result<TriggerView, ApiError> {
    let trigger = app.engine.scheduler().trigger(group, name).await?;
    if scope.0.is_some() {
        visible_job(app, scope, &trigger.job_group, &trigger.job_name)
            .await
            .map_err(|_| ApiError::not_found(format!("no trigger {group}.{name}")))?;
    }
    Ok(trigger)
}

/// `POST /scheduler/jobs` → 201 with the job detail (409 when it exists and `replace` is not
/// set, or is another tenant's). A tenant's caller adds to its own tenant.
pub async fn add_job(
    State(app): State<AppState>,
    scope: Scope,
    Json(mut spec): Json<JobSpec>,
) -> Result<Response, ApiError> {
    spec.tenant_id = Some(scope.creating("tenantId", spec.tenant_id.as_deref())?);
    let job = app.engine.scheduler().add_job(&spec).await?;
    Ok((StatusCode::CREATED, axum::Json(job)).into_response())
}

/// `GET /scheduler/jobs?group=`.
pub async fn jobs(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<JobsQuery>,
) -> Result<axum::Json<List<JobView>>, ApiError> {
    let mut all = app.engine.scheduler().jobs(q.group.as_deref().filter(|g| !g.is_empty())).await?;
    all.retain(|j| scope.sees(&j.tenant_id));
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /scheduler/jobs/{group}/{name}`.
pub async fn job(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
) -> Result<axum::Json<JobView>, ApiError> {
    Ok(axum::Json(visible_job(&app, &scope, &group, &name).await?))
}

/// `DELETE /scheduler/jobs/{group}/{name}` → 204; its triggers go too.
pub async fn delete_job(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    visible_job(&app, &scope, &group, &name).await?;
    app.engine.scheduler().delete_job(&group, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /scheduler/jobs/{group}/{name}` `{"action": "pause"|"resume"}` → 204: every trigger of the job.
pub async fn act_job(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
    Json(a): Json<Action>,
) -> Result<StatusCode, ApiError> {
    visible_job(&app, &scope, &group, &name).await?;
    let s = app.engine.scheduler();
    match a.action.as_str() {
        "pause" => s.pause_job(&group, &name).await?,
        "resume" => s.resume_job(&group, &name).await?,
        other => return Err(unknown_action(other, "\"pause\" or \"resume\"")),
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /scheduler/triggers` → 201 with `state` and `nextFireTime`. The job must be one the
/// caller sees; a trigger of the same key that is another tenant's is not replaced (409).
pub async fn schedule(
    State(app): State<AppState>,
    scope: Scope,
    Json(spec): Json<TriggerSpec>,
) -> Result<Response, ApiError> {
    let job_group = spec.job_group.clone().unwrap_or_else(|| kairos::scheduler::DEFAULT_GROUP.to_string());
    visible_job(&app, &scope, &job_group, &spec.job_name).await?;
    if scope.0.is_some() {
        let group = spec.group.clone().unwrap_or_else(|| kairos::scheduler::DEFAULT_GROUP.to_string());
        if let Ok(existing) = app.engine.scheduler().trigger(&group, &spec.name).await
            && visible_job(&app, &scope, &existing.job_group, &existing.job_name).await.is_err()
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "conflict",
                format!("trigger {group}.{} exists", spec.name),
            ));
        }
    }
    let t = app.engine.scheduler().schedule(&spec).await?;
    Ok((StatusCode::CREATED, axum::Json(t)).into_response())
}

/// `GET /scheduler/triggers?group=&state=` (state: WAITING, PAUSED, BLOCKED, PAUSED_BLOCKED, ERROR).
pub async fn triggers(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<TriggersQuery>,
) -> Result<axum::Json<List<TriggerView>>, ApiError> {
    let state = match q.state.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(TriggerState::parse(s).ok_or_else(|| {
            ApiError::invalid(
                "state",
                format!("'{s}' is not a trigger state (WAITING, PAUSED, BLOCKED, PAUSED_BLOCKED, ERROR)"),
            )
        })?),
    };
    let s = app.engine.scheduler();
    let mut all = s.triggers(q.group.as_deref().filter(|g| !g.is_empty()), state).await?;
    if scope.0.is_some() {
        // A trigger is its job's tenant's: the caller's jobs, read once.
        let mine: std::collections::HashSet<(String, String)> =
            s.jobs(None).await?.into_iter().filter(|j| scope.sees(&j.tenant_id)).map(|j| (j.group, j.name)).collect();
        all.retain(|t| mine.contains(&(t.job_group.clone(), t.job_name.clone())));
    }
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /scheduler/triggers/{group}/{name}`.
pub async fn trigger(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
) -> Result<axum::Json<TriggerView>, ApiError> {
    Ok(axum::Json(visible_trigger(&app, &scope, &group, &name).await?))
}

/// `PUT /scheduler/triggers/{group}/{name}` `{"action": "pause"|"resume"}` → the trigger.
pub async fn act_trigger(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
    Json(a): Json<Action>,
) -> Result<axum::Json<TriggerView>, ApiError> {
    visible_trigger(&app, &scope, &group, &name).await?;
    let s = app.engine.scheduler();
    Ok(axum::Json(match a.action.as_str() {
        "pause" => s.pause_trigger(&group, &name).await?,
        "resume" => s.resume_trigger(&group, &name).await?,
        other => return Err(unknown_action(other, "\"pause\" or \"resume\"")),
    }))
}

/// `DELETE /scheduler/triggers/{group}/{name}` → 204.
pub async fn unschedule(
    State(app): State<AppState>,
    scope: Scope,
    Segments((group, name)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    visible_trigger(&app, &scope, &group, &name).await?;
    app.engine.scheduler().unschedule(&group, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /scheduler/trigger-groups/{group}` `{"action": "pause"|"resume"}` → 204. A paused group
/// stays paused: triggers added to it later start paused.
pub async fn act_group(
    State(app): State<AppState>,
    Segments(group): Segments<String>,
    Json(a): Json<Action>,
) -> Result<StatusCode, ApiError> {
    let s = app.engine.scheduler();
    match a.action.as_str() {
        "pause" => s.pause_group(&group).await?,
        "resume" => s.resume_group(&group).await?,
        other => return Err(unknown_action(other, "\"pause\" or \"resume\"")),
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /scheduler/calendars/{name}` `{"type": "holiday"|"annual"|"monthly"|"weekly"|"daily"|"cron", …, "baseCalendar"?}`
/// → the stored calendar (its base copied in).
pub async fn put_calendar(
    State(app): State<AppState>,
    Segments(name): Segments<String>,
    Json(spec): Json<serde_json::Value>,
) -> Result<axum::Json<kairos_schedule::Calendar>, ApiError> {
    Ok(axum::Json(app.engine.scheduler().put_calendar(&name, &spec).await?))
}

/// `GET /scheduler/calendars` → the names.
pub async fn calendars(
    State(app): State<AppState>,
    Query(q): Query<Pages>,
) -> Result<axum::Json<List<String>>, ApiError> {
    let all = app.engine.scheduler().calendars().await?;
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /scheduler/calendars/{name}`.
pub async fn calendar(
    State(app): State<AppState>,
    Segments(name): Segments<String>,
) -> Result<axum::Json<kairos_schedule::Calendar>, ApiError> {
    Ok(axum::Json(app.engine.scheduler().calendar(&name).await?))
}

/// `DELETE /scheduler/calendars/{name}` → 204; 409 while a trigger uses it.
pub async fn delete_calendar(
    State(app): State<AppState>,
    Segments(name): Segments<String>,
) -> Result<StatusCode, ApiError> {
    app.engine.scheduler().delete_calendar(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /scheduler/fired-triggers`: firings whose work has not finished (QRTZ_FIRED_TRIGGERS).
pub async fn fired(
    State(app): State<AppState>,
    Query(q): Query<Pages>,
) -> Result<axum::Json<List<FiredTriggerView>>, ApiError> {
    let all = app.engine.scheduler().fired_triggers().await?;
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /scheduler/nodes`: the nodes' check-ins (QRTZ_SCHEDULER_STATE).
pub async fn nodes(
    State(app): State<AppState>,
    Query(q): Query<Pages>,
) -> Result<axum::Json<List<SchedulerNodeView>>, ApiError> {
    let all = app.engine.scheduler().nodes().await?;
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}
