//! The HTTP API of kairos (SPEC I3, API.md): an axum router over one [`kairos::Engine`].
//!
//! The app lives in the library and is tested in-process (axum's `testing` example): build
//! [`router`] and drive it with `tower::ServiceExt::oneshot`, no socket needed. [`serve`] runs
//! it on a listener until a shutdown signal, finishing requests in flight.
//!
//! Every failure leaves as `{"error": {"code", "message"}}` ([`error::ApiError`]): a 4xx names
//! the field that was wrong and nothing is written; a 5xx leaks nothing and logs the detail.
//!
//! | route | does |
//! |---|---|
//! | `GET /health` | node, store, 503 when the database does not answer |
//! | `GET /metrics` | Prometheus (OpenMetrics) text: executor metrics, job gauges |
//! | `GET /management/engine` | this node's settings and handlers, the cluster's nodes |
//! | `GET /management/doctor?businessKey=&processInstanceId=` | [`kairos::doctor`] findings |
//! | `GET, POST /management/jobs` | list (filters, paging) / enqueue (201) |
//! | `GET /management/timer-jobs` | the waiting timers |
//! | `GET, POST, DELETE /management/jobs/{id}` | one job / `{"action": "execute"}` / delete (`?force=true`) |
//! | `GET /management/jobs/{id}/exception-stacktrace` | text/plain |
//! | `GET /management/deadletter-jobs` | dead letters |
//! | `GET, POST, DELETE /management/deadletter-jobs/{id}` | one / `{"action": "move", "retries"?}` / delete |
//! | `GET /management/deadletter-jobs/{id}/exception-stacktrace` | text/plain |
//! | `GET /history/job-log?jobId=&processInstanceId=` | every attempt, oldest first |

pub mod dto;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod routes;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use kairos::Engine;
use routes::{deadletter, health, history, jobs, management};
use std::future::Future;
use std::sync::Arc;

pub use error::ApiError;

/// What every handler shares: the engine (its store, handlers, metrics and settings).
#[derive(Debug, Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
}

/// The whole API.
pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route("/health", get(health::health))
        .route("/metrics", get(metrics::metrics))
        .route("/management/engine", get(management::engine))
        .route("/management/doctor", get(management::doctor))
        .route("/management/jobs", get(jobs::list).post(jobs::create))
        .route("/management/timer-jobs", get(jobs::list_timers))
        .route("/management/jobs/{id}", get(jobs::get).post(jobs::act).delete(jobs::delete))
        .route("/management/jobs/{id}/exception-stacktrace", get(jobs::stacktrace))
        .route("/management/deadletter-jobs", get(deadletter::list))
        .route(
            "/management/deadletter-jobs/{id}",
            get(deadletter::get).post(deadletter::act).delete(deadletter::delete),
        )
        .route("/management/deadletter-jobs/{id}/exception-stacktrace", get(deadletter::stacktrace))
        .route("/history/job-log", get(history::job_log))
        .fallback(error::no_route)
        .method_not_allowed_fallback(error::wrong_method)
        .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(access_log))
        .with_state(AppState { engine })
}

/// One debug line per request (method, path, status, time); failures are logged where they
/// happen, with their detail.
async fn access_log(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let started = std::time::Instant::now();
    let res = next.run(req).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    tracing::debug!(%method, %path, status = res.status().as_u16(), ms, "http request");
    res
}

/// Serves the API on `listener` until `shutdown` completes, then stops taking connections and
/// lets requests in flight finish (axum's graceful shutdown). Stopping the engine's executor is
/// the caller's business, after this returns.
pub async fn serve(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, node = engine.node_id(), "HTTP API listening");
    }
    axum::serve(listener, router(engine)).with_graceful_shutdown(shutdown).await
}
