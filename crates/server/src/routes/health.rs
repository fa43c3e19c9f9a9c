//! `GET /health`: can this node do its work — reach its database and write to it? For load
//! balancers and orchestrators, so it answers fast (no write of its own) and says nothing more
//! than needed.

use crate::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// 200 `{"status": "ok", "node", "store"}`, or 503 `{"status": "unavailable", …, "error"}` when
/// the database does not answer (the detail goes to the log) or when its last write failed
/// because the database could not take it (a full disk: the message says so); the first write
/// that commits afterwards (the executor heartbeats) makes it 200 again.
pub async fn health(State(app): State<AppState>) -> Response {
    let engine = &app.engine;
    let store = engine.store().backend().as_str();
    let message = match engine.store().db_now().await {
        Err(e) => {
            tracing::warn!(error = %e, "health check: the database does not answer");
            "the database cannot be reached".to_string()
        }
        Ok(_) => match engine.store().write_failure() {
            None => return Json(json!({ "status": "ok", "node": engine.node_id(), "store": store })).into_response(),
            Some(reason) => format!("the database cannot be written: {reason}"),
        },
    };
    let body = json!({
        "status": "unavailable",
        "node": engine.node_id(),
        "store": store,
        "error": { "code": "unavailable", "message": message },
    });
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}
