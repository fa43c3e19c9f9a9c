//! `GET /engine-rest/incident`: what Camunda calls incidents, as kairos has them — the dead
//! letters (jobs and external tasks out of retries, ACT_RU_DEADLETTER_JOB). The incident's id
//! and `configuration` are the dead letter's id; `incidentTimestamp` is when the job was
//! created (kairos keeps no separate time of the last failure on the row; its attempts are in
//! `GET /history/job-log`).

use super::{MAX_ID_CHARS, MAX_NAME_CHARS, MAX_RESULTS, Paging, date, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::Query;
use axum::extract::State;
use kairos::store::JobFilter;
use kairos::{Job, JobTable, JobType};
use serde::Deserialize;
use serde_json::{Value, json};

fn kind(j: &Job) -> &'static str {
    if j.job_type == JobType::ExternalWorker { "failedExternalTask" } else { "failedJob" }
}

fn incident_dto(j: &Job) -> Value {
    json!({
        "id": j.id,
        "processDefinitionId": j.proc_def_id,
        "processInstanceId": j.process_instance_id,
        "executionId": j.execution_id,
        "incidentTimestamp": date(j.create_time),
        "incidentType": kind(j),
        "activityId": j.element_id,
        "failedActivityId": j.element_id,
        "causeIncidentId": j.id,
        "rootCauseIncidentId": j.id,
        "configuration": j.id,
        "tenantId": null,
        "incidentMessage": j.exception_msg,
        "jobDefinitionId": null,
        "annotation": null,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    incident_id: Option<String>,
    incident_type: Option<String>,
    incident_message: Option<String>,
    process_definition_id: Option<String>,
    process_instance_id: Option<String>,
    execution_id: Option<String>,
    activity_id: Option<String>,
    failed_activity_id: Option<String>,
    configuration: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] = &[
    "incidentId",
    "incidentMessage",
    "incidentTimestamp",
    "incidentType",
    "executionId",
    "activityId",
    "processInstanceId",
    "processDefinitionId",
    "configuration",
    "tenantId",
];

/// The dead letters `q` admits (at most 10 × [`MAX_RESULTS`] are looked at).
async fn matching(app: &AppState, q: ListQuery) -> Result<Vec<Job>, ApiError> {
    let mut id = text("incidentId", q.incident_id, MAX_ID_CHARS)?;
    if let Some(c) = text("configuration", q.configuration, MAX_ID_CHARS)? {
        if id.as_ref().is_some_and(|i| *i != c) {
            return Ok(Vec::new());
        }
        id = Some(c);
    }
    let kind_filter = text("incidentType", q.incident_type, MAX_NAME_CHARS)?;
    if let Some(k) = kind_filter.as_deref().filter(|k| !matches!(*k, "failedJob" | "failedExternalTask")) {
        return Err(super::invalid(
            "incidentType",
            format!("incidentType \"{}\" is none kairos has: failedJob or failedExternalTask", super::clip(k)),
        ));
    }
    let message = text("incidentMessage", q.incident_message, 4000)?;
    let def = text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?;
    let pi = text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?;
    let exec = text("executionId", q.execution_id, MAX_ID_CHARS)?;
    let mut activity = text("activityId", q.activity_id, MAX_NAME_CHARS)?;
    if let Some(f) = text("failedActivityId", q.failed_activity_id, MAX_NAME_CHARS)? {
        activity = Some(f);
    }
    let filter = JobFilter {
        table: JobTable::DeadLetter,
        process_instance_id: pi,
        start: 0,
        size: 10 * MAX_RESULTS,
        ..JobFilter::default()
    };
    let mut all = app.engine.store().job_list(&filter).await?.data;
    all.retain(|j| {
        id.as_ref().is_none_or(|x| &j.id == x)
            && kind_filter.as_deref().is_none_or(|k| k == kind(j))
            && message.as_ref().is_none_or(|m| j.exception_msg.as_ref() == Some(m))
            && def.as_ref().is_none_or(|x| j.proc_def_id.as_ref() == Some(x))
            && exec.as_ref().is_none_or(|x| j.execution_id.as_ref() == Some(x))
            && activity.as_ref().is_none_or(|x| j.element_id.as_ref() == Some(x))
    });
    Ok(all)
}

/// `GET /engine-rest/incident?…` → `[IncidentDto]`.
pub async fn list(
    State(app): State<AppState>,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let (by, order) = (q.sort_by.take(), q.sort_order.take());
    let sort = sorting(by.as_deref(), order.as_deref(), SORT_KEYS)?;
    let mut all = matching(&app, q).await?;
    all.sort_by(|a, b| {
        let o = match sort.map(|(by, _)| by) {
            Some("incidentId" | "configuration") => a.id.cmp(&b.id),
            Some("incidentMessage") => a.exception_msg.cmp(&b.exception_msg),
            Some("incidentType") => kind(a).cmp(kind(b)),
            Some("executionId") => a.execution_id.cmp(&b.execution_id),
            Some("activityId") => a.element_id.cmp(&b.element_id),
            Some("processInstanceId") => a.process_instance_id.cmp(&b.process_instance_id),
            Some("processDefinitionId") => a.proc_def_id.cmp(&b.proc_def_id),
            _ => a.create_time.cmp(&b.create_time).then(a.id.cmp(&b.id)),
        };
        if sort.is_some_and(|(_, desc)| desc) { o.reverse() } else { o }
    });
    Ok(axum::Json(page.page(all).iter().map(incident_dto).collect()))
}

/// `GET /engine-rest/incident/count?…` → `{"count": N}`.
pub async fn count(State(app): State<AppState>, Query(mut q): Query<ListQuery>) -> Result<axum::Json<Value>, ApiError> {
    sorting(q.sort_by.take().as_deref(), q.sort_order.take().as_deref(), SORT_KEYS)?;
    Ok(super::count(matching(&app, q).await?.len()))
}
