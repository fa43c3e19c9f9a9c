//! `/history/job-log` (SPEC J12): every attempt of every job, kept after the job row is gone,
//! so "what happened to job X" has an answer.

use crate::AppState;
use crate::dto::{JobLogDto, List};
use crate::error::ApiError;
use crate::extract::{Query, page};
use axum::extract::State;
use kairos_store::JobLogFilter;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobLogQuery {
    job_id: Option<String>,
    process_instance_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /history/job-log?jobId=&processInstanceId=&start=&size=`, oldest attempt first.
pub async fn job_log(
    State(app): State<AppState>,
    Query(q): Query<JobLogQuery>,
) -> Result<axum::Json<List<JobLogDto>>, ApiError> {
    let (start, size) = page(q.start.as_deref(), q.size.as_deref())?;
    let filter = JobLogFilter {
        job_id: q.job_id.filter(|s| !s.is_empty()),
        process_instance_id: q.process_instance_id.filter(|s| !s.is_empty()),
        start,
        size,
    };
    let page = app.engine.store().job_log_list(&filter).await?;
    Ok(axum::Json(List::from_page(page, JobLogDto::from)))
}
