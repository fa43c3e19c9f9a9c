//! `/commands` (SPEC C6, seed 002 §19–§20): a team whose business data lives in another
//! database submits START_PROCESS / COMPLETE_TASK as durable rows of `workflow_command` in
//! that database; the node's command worker runs them and writes the outcome back. The answer
//! is 202 with the command's id: the caller polls `GET /commands/{id}` for the final state.
//! Only on a node started with `--business-db URL`.

use crate::AppState;
use crate::dto::List;
use crate::error::ApiError;
use crate::extract::Query;
use crate::routes::processes::{filter, paged, required};
use axum::Json as AxumJson;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::Sql;
use kairos::commands::table::{self, Command, Filter, NewCommand, Status};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// The largest payload of a command, as JSON text.
const MAX_PAYLOAD_BYTES: usize = 1 << 20;

fn business(app: &AppState) -> Result<Arc<dyn Sql>, ApiError> {
    app.engine.business_db().cloned().ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "not-configured",
            "this node has no business database: start it with kairos serve --business-db URL",
        )
    })
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitBody {
    request_id: Option<String>,
    command_type: Option<String>,
    business_type: Option<String>,
    business_id: Option<String>,
    lifecycle_no: Option<i64>,
    payload: Option<Value>,
}

/// `POST /commands` → 202 with the command (PENDING until the worker runs it). A resubmission
/// of the same requestId with the same command answers it; with another, 409.
pub async fn submit(
    State(app): State<AppState>,
    crate::extract::Json(body): crate::extract::Json<SubmitBody>,
) -> Result<Response, ApiError> {
    let db = business(&app)?;
    let request_id = required("requestId", body.request_id, 64)?;
    let command_type = required("commandType", body.command_type, 32)?;
    if ![table::START_PROCESS, table::COMPLETE_TASK].contains(&command_type.as_str()) {
        return Err(ApiError::invalid(
            "commandType",
            format!("commandType \"{command_type}\" is not known; use START_PROCESS or COMPLETE_TASK"),
        ));
    }
    let business_type = required("businessType", body.business_type, 64)?;
    let business_id = required("businessId", body.business_id, 64)?;
    if let Some(n) = body.lifecycle_no
        && !(1..=i64::from(i32::MAX)).contains(&n)
    {
        return Err(ApiError::invalid("lifecycleNo", format!("lifecycleNo must be at least 1 (it is {n})")));
    }
    let payload = body.payload.unwrap_or_else(|| Value::Object(Default::default()));
    if !payload.is_object() {
        return Err(ApiError::invalid("payload", "payload must be a JSON object"));
    }
    if payload.to_string().len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::invalid("payload", format!("payload is over {MAX_PAYLOAD_BYTES} bytes of JSON")));
    }
    let new = NewCommand {
        request_id: request_id.clone(),
        command_type,
        business_type,
        business_id,
        lifecycle_no: body.lifecycle_no,
        payload,
    };
    let same = |c: &Command| {
        c.command_type == new.command_type
            && c.business_type == new.business_type
            && c.business_id == new.business_id
            && c.lifecycle_no == new.lifecycle_no
            && c.payload == new.payload
    };
    let answer = |c: Command| -> Result<Response, ApiError> {
        if !same(&c) {
            let mut e = ApiError::new(
                StatusCode::CONFLICT,
                "conflict",
                format!("requestId '{request_id}' was already used for another command"),
            );
            e.field = Some("requestId".into());
            return Err(e);
        }
        Ok((StatusCode::ACCEPTED, AxumJson(c)).into_response())
    };
    if let Some(existing) = table::get(db.as_ref(), &new.request_id).await? {
        return answer(existing);
    }
    let written = db.write_all(&[table::insert(db.as_ref(), &new)]).await;
    match table::get(db.as_ref(), &new.request_id).await? {
        // Written now, or by a concurrent duplicate that won the primary key.
        Some(c) => answer(c),
        None => Err(written.err().map(ApiError::from).unwrap_or_else(|| ApiError::internal("the command vanished"))),
    }
}

/// `GET /commands/{id}`.
pub async fn get(State(app): State<AppState>, Path(id): Path<String>) -> Result<AxumJson<Command>, ApiError> {
    let db = business(&app)?;
    table::get(db.as_ref(), &id)
        .await?
        .map(AxumJson)
        .ok_or_else(|| ApiError::not_found(format!("command {id} does not exist")))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    business_type: Option<String>,
    business_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /commands?status=&businessType=&businessId=`: oldest first (the first 10,000).
pub async fn list(
    State(app): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<AxumJson<List<Command>>, ApiError> {
    let db = business(&app)?;
    let status = match filter(q.status) {
        None => None,
        Some(s) => Some(Status::parse(&s).ok_or_else(|| {
            ApiError::invalid(
                "status",
                format!("status \"{s}\" is not PENDING, PROCESSING, SUCCEEDED, RETRY or FAILED"),
            )
        })?),
    };
    let f = Filter { status, business_type: filter(q.business_type), business_id: filter(q.business_id) };
    let all = table::list(db.as_ref(), &f, 10_000).await?;
    Ok(AxumJson(paged(all, q.start.as_deref(), q.size.as_deref())?))
}
