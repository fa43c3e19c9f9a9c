//! `/reconcile` and `/incidents` (SPEC C7, seed 002 §28–§31): run a reconciliation pass on
//! demand, and take an incident through its life — approved by one person, executed by
//! another through the engine's API, closed — with its evidence, before/after and audit trail.

use crate::AppState;
use crate::dto::List;
use crate::error::ApiError;
use crate::extract::Query;
use crate::routes::processes::{filter, paged, required};
use axum::Json as AxumJson;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use kairos::reconcile::Report;
use kairos::reconcile::incidents::{Filter, Incident, IncidentAction};
use serde::Deserialize;
use serde_json::Value;

/// An incident as JSON, its stored JSON columns as JSON values (not strings).
fn view(i: Incident) -> Value {
    let parse = |s: Option<&str>| s.and_then(|s| serde_json::from_str::<Value>(s).ok()).unwrap_or(Value::Null);
    let mut v = serde_json::to_value(&i).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        for (from, to) in [
            ("evidenceJson", "evidence"),
            ("actionJson", "action"),
            ("beforeJson", "before"),
            ("afterJson", "after"),
            ("auditJson", "audit"),
        ] {
            let parsed = parse(m.remove(from).as_ref().and_then(Value::as_str));
            m.insert(to.into(), parsed);
        }
    }
    v
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PassQuery {
    dry_run: Option<bool>,
}

/// `POST /reconcile?dryRun=` → the pass's report. 409 on a node without a configuration.
pub async fn reconcile(State(app): State<AppState>, Query(q): Query<PassQuery>) -> Result<AxumJson<Report>, ApiError> {
    let Some(r) = app.engine.reconciler() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "not-configured",
            "this node has no reconcile configuration: start it with kairos serve --reconcile FILE",
        ));
    };
    Ok(AxumJson(r.pass(q.dry_run.unwrap_or(false)).await?))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    kind: Option<String>,
    rule_id: Option<String>,
    business_type: Option<String>,
    business_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /incidents?status=&kind=&ruleId=&businessType=&businessId=`: newest first (the first 1,000).
pub async fn list(State(app): State<AppState>, Query(q): Query<ListQuery>) -> Result<AxumJson<List<Value>>, ApiError> {
    let status = filter(q.status);
    if let Some(s) = &status
        && !["OPEN", "APPROVED", "EXECUTED", "CLOSED"].contains(&s.as_str())
    {
        return Err(ApiError::invalid("status", format!("status \"{s}\" is not OPEN, APPROVED, EXECUTED or CLOSED")));
    }
    let kind = filter(q.kind);
    if let Some(k) = &kind
        && !["incident", "repair"].contains(&k.as_str())
    {
        return Err(ApiError::invalid("kind", format!("kind \"{k}\" is not incident or repair")));
    }
    let f = Filter {
        status,
        kind,
        rule_id: filter(q.rule_id),
        business_type: filter(q.business_type),
        business_id: filter(q.business_id),
    };
    let all: Vec<Value> = app.engine.incidents().list(&f, 1_000).await?.into_iter().map(view).collect();
    Ok(AxumJson(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /incidents/{id}`.
pub async fn get(State(app): State<AppState>, Path(id): Path<String>) -> Result<AxumJson<Value>, ApiError> {
    app.engine
        .incidents()
        .get(&id)
        .await?
        .map(|i| AxumJson(view(i)))
        .ok_or_else(|| ApiError::not_found(format!("incident {id} does not exist")))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveBody {
    user: Option<String>,
    plan: Option<String>,
}

/// `POST /incidents/{id}/approve {user, plan?}`: OPEN → APPROVED.
pub async fn approve(
    State(app): State<AppState>,
    Path(id): Path<String>,
    crate::extract::Json(body): crate::extract::Json<ApproveBody>,
) -> Result<AxumJson<Value>, ApiError> {
    let user = required("user", body.user, 255)?;
    Ok(AxumJson(view(app.engine.incidents().approve(&id, &user, body.plan.as_deref()).await?)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteBody {
    user: Option<String>,
    action: Option<Value>,
}

/// `POST /incidents/{id}/execute {user, action}`: APPROVED → EXECUTED by someone other than
/// the approver; `action` is `{"type": "delete-instance", "processInstanceId", "reason"}`,
/// `{"type": "write-back", "to": "APPROVED"}`, `{"type": "outbox-retry", "eventId"}` or
/// `{"type": "manual", "note"}`.
pub async fn execute(
    State(app): State<AppState>,
    Path(id): Path<String>,
    crate::extract::Json(body): crate::extract::Json<ExecuteBody>,
) -> Result<AxumJson<Value>, ApiError> {
    let user = required("user", body.user, 255)?;
    let Some(action) = body.action else { return Err(ApiError::invalid("action", "action is required")) };
    let action: IncidentAction = serde_json::from_value(action).map_err(|e| {
        ApiError::invalid("action", format!("action: {e} (types: delete-instance, write-back, outbox-retry, manual)"))
    })?;
    Ok(AxumJson(view(app.engine.incidents().execute(&id, &user, &action).await?)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CloseBody {
    user: Option<String>,
    note: Option<String>,
}

/// `POST /incidents/{id}/close {user, note}`: → CLOSED; the record is no longer frozen.
pub async fn close(
    State(app): State<AppState>,
    Path(id): Path<String>,
    crate::extract::Json(body): crate::extract::Json<CloseBody>,
) -> Result<AxumJson<Value>, ApiError> {
    let user = required("user", body.user, 255)?;
    let note = required("note", body.note, 2000)?;
    Ok(AxumJson(view(app.engine.incidents().close(&id, &user, &note).await?)))
}
