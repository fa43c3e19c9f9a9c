//! The outbox API (SPEC C4): write one event, list and read events, retry a FAILED one.
//!
//! * `POST /outbox/events` — 201 with the event; checked first (lengths, payload ≤ 1 MiB,
//!   known target, an http URL on the allow-list), a refusal names the field and writes nothing.
//! * `GET /outbox/events?status=&aggregateType=&aggregateId=&start=&size=`
//! * `GET /outbox/events/{id}`
//! * `POST /outbox/events/{id}/retry` — FAILED → PENDING; 409 when the event is not FAILED.

use crate::AppState;
use crate::dto::List;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, page};
use crate::routes::processes::filter;
use axum::extract::State;
use axum::http::StatusCode;
use kairos::outbox::{Filter, NewEvent, OutboxEvent};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventBody {
    /// Default: a new id.
    event_id: Option<String>,
    aggregate_type: String,
    aggregate_id: String,
    event_type: String,
    payload: Value,
    /// Default: `http`.
    target: Option<String>,
    target_url: Option<String>,
    #[serde(default)]
    ordered: bool,
    max_attempts: Option<i64>,
}

/// `POST /outbox/events`
pub async fn create(
    State(app): State<AppState>,
    Json(b): Json<EventBody>,
) -> Result<(StatusCode, axum::Json<OutboxEvent>), ApiError> {
    let outbox = app.engine.outbox();
    let e = NewEvent {
        event_id: b.event_id.unwrap_or_else(kairos::new_id),
        aggregate_type: b.aggregate_type,
        aggregate_id: b.aggregate_id,
        event_type: b.event_type,
        payload_json: b.payload.to_string(),
        target: b.target.unwrap_or_else(|| "http".into()),
        target_url: b.target_url,
        ordered: b.ordered,
        max_attempts: b.max_attempts.unwrap_or(outbox.settings().max_attempts),
    };
    outbox.write(&e).await.map_err(named)?;
    let written = outbox.get(&e.event_id).await?.ok_or_else(|| ApiError::internal("the written event is gone"))?;
    Ok((StatusCode::CREATED, axum::Json(written)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    aggregate_type: Option<String>,
    aggregate_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /outbox/events`
pub async fn list(
    State(app): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<List<OutboxEvent>>, ApiError> {
    let (start, size) = page(q.start.as_deref(), q.size.as_deref())?;
    let f = Filter {
        status: filter(q.status),
        aggregate_type: filter(q.aggregate_type),
        aggregate_id: filter(q.aggregate_id),
        start,
        size: size.min(1000),
    };
    let outbox = app.engine.outbox();
    let data = outbox.list(&f).await?;
    let total = outbox.list_total(&f).await?;
    Ok(axum::Json(List::new(data, u64::try_from(total).unwrap_or(0), start)))
}

/// `GET /outbox/events/{id}`
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<OutboxEvent>, ApiError> {
    match app.engine.outbox().get(&id).await? {
        Some(e) => Ok(axum::Json(e)),
        None => Err(ApiError::not_found(format!("no outbox event {id}"))),
    }
}

/// `POST /outbox/events/{id}/retry`
pub async fn retry(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<OutboxEvent>, ApiError> {
    let outbox = app.engine.outbox();
    if !outbox.retry(&id).await? {
        return match outbox.get(&id).await? {
            None => Err(ApiError::not_found(format!("no outbox event {id}"))),
            Some(e) => Err(ApiError::new(
                StatusCode::CONFLICT,
                "conflict",
                format!("outbox event {id} is {}, not FAILED", e.event_status),
            )),
        };
    }
    let e = outbox.get(&id).await?.ok_or_else(|| ApiError::not_found(format!("no outbox event {id}")))?;
    Ok(axum::Json(e))
}

/// A refused event's error names its field first (`payload: …`): the API's `field` says it too.
fn named(e: kairos::Error) -> ApiError {
    let mut api = ApiError::from(e);
    if api.status == StatusCode::BAD_REQUEST
        && api.field.is_none()
        && let Some((field, _)) = api.message.split_once(':')
        && !field.is_empty()
        && field.chars().all(|c| c.is_ascii_alphanumeric())
    {
        api.field = Some(field.to_owned());
    }
    api
}
