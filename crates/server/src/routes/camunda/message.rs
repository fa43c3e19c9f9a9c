//! `POST /engine-rest/message` (correlation), `POST /engine-rest/signal` and
//! `POST /engine-rest/condition` (conditional start events).

use super::process_instance::instance_dto;
use super::variables::{from_typed, to_typed};
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, invalid, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CorrelateBody {
    message_name: Option<String>,
    business_key: Option<String>,
    process_instance_id: Option<String>,
    tenant_id: Option<String>,
    without_tenant_id: Option<bool>,
    correlation_keys: Option<Value>,
    local_correlation_keys: Option<Value>,
    process_variables: Option<Value>,
    process_variables_local: Option<Value>,
    process_variables_to_triggered_scope: Option<Value>,
    all: Option<bool>,
    result_enabled: Option<bool>,
    variables_in_result_enabled: Option<bool>,
}

fn empty(field: &str, v: Option<Value>) -> Result<(), ApiError> {
    match v {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(m)) if m.is_empty() => Ok(()),
        Some(_) => Err(invalid(
            field,
            format!("{field} is not supported by kairos (correlate by processInstanceId or businessKey)"),
        )),
    }
}

/// `POST /engine-rest/message` → 204, or 200 `[MessageCorrelationResultWithVariableDto]` with
/// `resultEnabled`: the message reaches the one instance (or message start event) waiting
/// for it; 400 when none or several do (Camunda's MismatchingMessageCorrelationException).
pub async fn correlate(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(b): Json<CorrelateBody>,
) -> Result<Response, ApiError> {
    let name = match text("messageName", b.message_name, MAX_NAME_CHARS)? {
        Some(n) => n,
        None => return Err(invalid("messageName", "messageName is required")),
    };
    let bk = text("businessKey", b.business_key, MAX_NAME_CHARS)?;
    let pi = text("processInstanceId", b.process_instance_id, MAX_ID_CHARS)?;
    let requested = requested_tenant(b.tenant_id, b.without_tenant_id)?;
    let tenant = scope.filter(requested.as_deref());
    empty("correlationKeys", b.correlation_keys)?;
    empty("localCorrelationKeys", b.local_correlation_keys)?;
    empty("processVariablesLocal", b.process_variables_local)?;
    empty("processVariablesToTriggeredScope", b.process_variables_to_triggered_scope)?;
    if b.all == Some(true) {
        return Err(invalid(
            "all",
            "correlating to all waiting instances (all: true) is not supported by kairos; send a signal",
        ));
    }
    let vars = from_typed("processVariables", b.process_variables)?;
    let processes = app.engine.processes();
    let got = processes.message_in(tenant, &name, (pi.as_deref(), bk.as_deref()), vars, None).await.map_err(|e| {
        let e = ApiError::from(e);
        match e.status {
            StatusCode::NOT_FOUND | StatusCode::CONFLICT => {
                ApiError::new(StatusCode::BAD_REQUEST, "MismatchingMessageCorrelationException", e.message)
            }
            _ => e,
        }
    })?;
    if b.result_enabled != Some(true) {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let instance = processes.instance(&got).await?;
    let mut result = json!({
        "resultType": "Execution",
        "execution": {
            "id": got, "processInstanceId": got, "ended": instance.ended,
            "tenantId": super::tenant_json(&instance.tenant_id),
        },
        "processInstance": instance_dto(&instance),
    });
    if b.variables_in_result_enabled == Some(true) {
        let vars = if instance.ended { serde_json::Map::new() } else { processes.variables(&got).await? };
        result["variables"] = to_typed(&vars);
    }
    Ok(axum::Json(json!([result])).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignalBody {
    name: Option<String>,
    execution_id: Option<String>,
    variables: Option<Value>,
    tenant_id: Option<String>,
    without_tenant_id: Option<bool>,
}

/// `POST /engine-rest/signal` `{"name", "variables"?}` → 204: every instance waiting for it.
pub async fn signal(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(b): Json<SignalBody>,
) -> Result<StatusCode, ApiError> {
    let name = match text("name", b.name, MAX_NAME_CHARS)? {
        Some(n) => n,
        None => return Err(invalid("name", "name is required: the signal's name")),
    };
    if b.execution_id.is_some() {
        return Err(invalid(
            "executionId",
            "signalling one execution is not supported by kairos; the signal goes to every waiting instance",
        ));
    }
    let requested = requested_tenant(b.tenant_id, b.without_tenant_id)?;
    let vars = from_typed("variables", b.variables)?;
    app.engine.processes().signal_in(scope.filter(requested.as_deref()), &name, vars, None).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Camunda's `tenantId` / `withoutTenantId` of a correlation: one tenant, no tenant (`''`), or
/// any (`None`).
fn requested_tenant(tenant: Option<String>, without: Option<bool>) -> Result<Option<String>, ApiError> {
    match (tenant.filter(|t| !t.is_empty()), without == Some(true)) {
        (Some(_), true) => Err(invalid("withoutTenantId", "give tenantId or withoutTenantId, not both")),
        (Some(t), false) => Ok(Some(t)),
        (None, true) => Ok(Some(String::new())),
        (None, false) => Ok(None),
    }
}

/// Camunda's EvaluationConditionDto.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConditionBody {
    variables: Option<Value>,
    business_key: Option<String>,
    tenant_id: Option<String>,
    without_tenant_id: Option<bool>,
    process_definition_id: Option<String>,
}

/// `POST /engine-rest/condition` → 200 `[ProcessInstanceDto]`: an instance of every latest
/// definition whose conditional start event holds over `variables` (none: an empty list);
/// 400 when no definition (or not `processDefinitionId`) has a conditional start event.
pub async fn evaluate_condition(
    State(app): State<AppState>,
    Json(b): Json<ConditionBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let bk = text("businessKey", b.business_key, MAX_NAME_CHARS)?;
    let def = text("processDefinitionId", b.process_definition_id, MAX_ID_CHARS)?;
    if b.tenant_id.as_deref().is_some_and(|t| !t.is_empty()) {
        return Err(invalid(
            "tenantId",
            "tenantId is not supported here yet: a condition is evaluated over the latest definitions of every tenant",
        ));
    }
    let _ = b.without_tenant_id;
    let vars = from_typed("variables", b.variables)?;
    let started = app.engine.processes().evaluate_start_conditions(vars, bk, def.as_deref()).await?;
    Ok(axum::Json(Value::Array(started.iter().map(instance_dto).collect())))
}
