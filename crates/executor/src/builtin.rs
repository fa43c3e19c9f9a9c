//! The built-in handlers of API.md, always registered: `log`, `sleep`, `fail`, and `noop`
//! (the benchmark's no-op job).

use crate::handler::{HandlerError, Handlers, JobContext, handler_fn};
use std::time::Duration;

/// Registers the built-ins into `handlers`.
pub fn register_builtins(handlers: &mut Handlers) {
    handlers.register("noop", handler_fn(|_ctx| async { Ok(None) }));
    handlers.register("log", handler_fn(|ctx: JobContext| async move { Ok(Some(log(&ctx))) }));
    handlers.register("sleep", handler_fn(|ctx: JobContext| async move { sleep(&ctx).await }));
    handlers.register("fail", handler_fn(|ctx: JobContext| async move { fail(&ctx) }));
}

/// `log`: writes the payload to the job log (and to the node's log).
fn log(ctx: &JobContext) -> String {
    let text = ctx.payload.to_string();
    tracing::info!(job = %ctx.job_id, attempt = ctx.attempt, payload = %text, "log job");
    text
}

/// `sleep`: `{"ms": N}` — waits N milliseconds (at most one hour).
async fn sleep(ctx: &JobContext) -> Result<Option<String>, HandlerError> {
    let ms = match ctx.payload.get("ms") {
        None => 0,
        Some(v) => v.as_u64().ok_or("sleep: payload field \"ms\" must be a non-negative integer")?,
    };
    let ms = ms.min(3_600_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(Some(format!("slept {ms} ms")))
}

/// `fail`: `{"message": "...", "times"?: N}` — fails the first N attempts, or every attempt
/// when N is absent. For drills and tests.
fn fail(ctx: &JobContext) -> Result<Option<String>, HandlerError> {
    let message = ctx.payload.get("message").and_then(|m| m.as_str()).unwrap_or("fail handler: failing as asked");
    let times = ctx.payload.get("times").and_then(|t| t.as_i64());
    match times {
        Some(n) if i64::from(ctx.attempt) > n => {
            Ok(Some(format!("succeeded on attempt {} after {n} failures", ctx.attempt)))
        }
        _ => Err(Box::new(DrillError { message: message.to_string(), attempt: AttemptCause(ctx.attempt) })),
    }
}

/// The error of the `fail` handler, with a cause so that the stored chain has two lines.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct DrillError {
    message: String,
    #[source]
    attempt: AttemptCause,
}

#[derive(Debug, thiserror::Error)]
#[error("the fail handler was asked to fail attempt {0}")]
struct AttemptCause(i32);
