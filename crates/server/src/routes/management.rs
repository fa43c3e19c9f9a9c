//! `GET /management/engine` (this node, its settings, its handlers, the cluster's nodes) and
//! `GET /management/doctor` (SPEC J11: seed 000 §4.1's five-step walk and the cluster checks).

use crate::AppState;
use crate::dto::NodeDto;
use crate::error::ApiError;
use crate::extract::Query;
use axum::extract::State;
use jiff::SignedDuration;
use kairos::doctor::{DoctorQuery, diagnose};
use serde::Deserialize;
use serde_json::{Value, json};

/// ISO 8601 for a std duration (`PT0.5S`).
fn iso(d: std::time::Duration) -> String {
    SignedDuration::try_from(d).map(|d| d.to_string()).unwrap_or_else(|_| "unbounded".into())
}

/// `GET /management/engine`.
pub async fn engine(State(app): State<AppState>) -> Result<axum::Json<Value>, ApiError> {
    let engine = &app.engine;
    let store = engine.store();
    let now = store.db_now().await?;
    let s = engine.settings();
    let dead_after = s.executor.dead_after;
    let nodes: Vec<NodeDto> = store.node_list().await?.into_iter().map(|n| NodeDto::new(n, now, dead_after)).collect();
    Ok(axum::Json(json!({
        "node": engine.node_id(),
        "store": store.backend().as_str(),
        "dbNow": now,
        "running": engine.running(),
        "settings": {
            "executorEnabled": s.executor_enabled,
            "workers": s.executor.workers,
            "acquireBatch": s.executor.acquire_batch,
            "prefetch": s.executor.prefetch,
            "prefetchWait": iso(s.executor.prefetch_wait),
            "lockTime": s.executor.lock_time.to_string(),
            "pollInterval": iso(s.executor.poll_interval),
            "handlerTimeout": iso(s.executor.handler_timeout),
            "heartbeatInterval": iso(s.executor.heartbeat_interval),
            "deadAfter": dead_after.to_string(),
            "completionBatch": s.executor.completion_batch,
        },
        "handlers": engine.handlers().names().collect::<Vec<_>>(),
        "nodes": nodes,
    })))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DoctorParams {
    business_key: Option<String>,
    process_instance_id: Option<String>,
}

/// `GET /management/doctor?businessKey=&processInstanceId=`.
pub async fn doctor(State(app): State<AppState>, Query(q): Query<DoctorParams>) -> Result<axum::Json<Value>, ApiError> {
    let query =
        DoctorQuery { business_key: q.business_key, process_instance_id: q.process_instance_id, from_tool: false };
    let report = diagnose(&app.engine, &query).await?;
    Ok(axum::Json(report.to_json()))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnreadableParams {
    size: Option<String>,
}

/// `GET /management/unreadable-rows?size=`: every stored row the engine cannot read (job
/// tables, process variables and executions, triggers), each with its table, id, column and
/// stored text; the way out is to fix the column or delete the row (docs/jobs.md).
pub async fn unreadable(
    State(app): State<AppState>,
    Query(q): Query<UnreadableParams>,
) -> Result<axum::Json<crate::dto::List<kairos::store::Unreadable>>, ApiError> {
    let (_, size) = crate::extract::page(None, q.size.as_deref())?;
    let data = app.engine.unreadable_rows(usize::try_from(size).unwrap_or(usize::MAX)).await?;
    Ok(axum::Json({
        let n = data.len() as u64;
        crate::dto::List::new(data, n, 0)
    }))
}
