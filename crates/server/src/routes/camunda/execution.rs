//! `/engine-rest/execution`: the executions of running instances (list, count, one), and
//! Camunda's `signal`, which moves an execution waiting in a receive task on.

use super::variables::from_typed;
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, Paging, flag, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::{ExecutionQuery, ExecutionView};
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's ExecutionDto.
fn execution_dto(e: &ExecutionView) -> Value {
    json!({
        "id": e.id,
        "processInstanceId": e.process_instance_id,
        "ended": false,
        "tenantId": null,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    process_instance_id: Option<String>,
    process_definition_id: Option<String>,
    business_key: Option<String>,
    activity_id: Option<String>,
    message_event_subscription_name: Option<String>,
    signal_event_subscription_name: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

fn query(q: ListQuery, scope: &crate::tenancy::Scope) -> Result<(ExecutionQuery, Paging), ApiError> {
    let active = flag("active", q.active.as_deref())?;
    let suspended = flag("suspended", q.suspended.as_deref())?;
    let suspended = match (active, suspended) {
        (Some(a), Some(s)) if a == s => {
            return Err(super::invalid("suspended", "active and suspended exclude each other"));
        }
        (Some(a), _) => Some(!a),
        (None, s) => s,
    };
    let page = Paging::of(q.first_result.as_deref(), q.max_results.as_deref())?;
    let q = ExecutionQuery {
        process_instance_id: text("processInstanceId", q.process_instance_id, MAX_ID_CHARS)?,
        process_definition_id: text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?,
        business_key: text("businessKey", q.business_key, MAX_NAME_CHARS)?,
        activity_id: text("activityId", q.activity_id, MAX_NAME_CHARS)?,
        message_event_subscription_name: text(
            "messageEventSubscriptionName",
            q.message_event_subscription_name,
            MAX_NAME_CHARS,
        )?,
        signal_event_subscription_name: text(
            "signalEventSubscriptionName",
            q.signal_event_subscription_name,
            MAX_NAME_CHARS,
        )?,
        suspended,
        tenant: scope.0.clone(),
    };
    Ok((q, page))
}

/// `GET /engine-rest/execution?…` → `[ExecutionDto]`, in start order.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let (q, page) = query(q, &scope)?;
    let (rows, _) = app.engine.processes().execution_search(&q, page.first, page.max).await?;
    Ok(axum::Json(rows.iter().map(execution_dto).collect()))
}

/// `GET /engine-rest/execution/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    let (q, _) = query(q, &scope)?;
    let (_, total) = app.engine.processes().execution_search(&q, 0, 0).await?;
    Ok(axum::Json(json!({ "count": total })))
}

/// `GET /engine-rest/execution/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(execution_dto(&app.engine.processes().execution(&id).await?)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignalBody {
    variables: Option<Value>,
}

/// `POST /engine-rest/execution/{id}/signal` `{"variables"?}` → 204: the execution waiting in
/// a receive task goes on (the variables set on it first); 400 when it waits elsewhere.
pub async fn signal(State(app): State<AppState>, Id(id): Id, Json(b): Json<SignalBody>) -> Result<Response, ApiError> {
    let vars = from_typed("variables", b.variables)?;
    app.engine.processes().trigger(&id, vars).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
