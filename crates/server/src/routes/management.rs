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
