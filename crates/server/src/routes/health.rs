//! `GET /health`: is this node up and can it reach its database? For load balancers and
//! orchestrators, so it answers fast and says nothing more than needed.

use crate::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// 200 `{"status": "ok", "node", "store"}`, or 503 `{"status": "unavailable", …}` when the
/// database does not answer (the detail goes to the log).
pub async fn health(State(app): State<AppState>) -> Response {
    let engine = &app.engine;
    let store = engine.store().backend().as_str();
    match engine.store().db_now().await {
        Ok(_) => Json(json!({ "status": "ok", "node": engine.node_id(), "store": store })).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "health check: the database does not answer");
            let body = json!({
                "status": "unavailable",
                "node": engine.node_id(),
                "store": store,
                "error": { "code": "unavailable", "message": "the database cannot be reached" },
            });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
        }
    }
}
