//! The `chaos` handler of `kairos serve --chaos` (a hidden, test-only flag; see docs/chaos.md and
//! crates/cli/tests/chaos.rs, which creates the two tables before it starts any node).
//!
//! Payload `{"ms": N}`. Each attempt
//! 1. writes an **autocommit** side-effect row `CHAOS_SIDE_EFFECT (JOB_ID, ATTEMPT, NODE, AT_,
//!    NODE_NOW)` — what an external call would do: it stays even when the attempt's result is
//!    later discarded, so it shows every time the handler really ran;
//! 2. sleeps N ms;
//! 3. stages with `write_on_success` the **transactional** effect `INSERT INTO CHAOS_EFFECT
//!    (JOB_ID, NODE, ATTEMPT, AT_)`, whose primary key is the job id: it commits with the
//!    attempt's success under the lease fence, or not at all.

use kairos::store::SqlValue;
use kairos::{Handler, HandlerError, JobContext, Store, handler_fn};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn handler(store: Arc<dyn Store>) -> impl Handler {
    handler_fn(move |ctx: JobContext| {
        let store = store.clone();
        async move {
            let ms = ctx.payload.get("ms").and_then(serde_json::Value::as_u64).unwrap_or(0);
            let binds = vec![
                SqlValue::Text(ctx.idempotency_key().to_string()),
                SqlValue::Int(i64::from(ctx.attempt)),
                SqlValue::Text(ctx.node_id.clone()),
                SqlValue::Timestamp(ctx.node_now),
            ];
            store
                .sql_execute(
                    "INSERT INTO CHAOS_SIDE_EFFECT (JOB_ID, ATTEMPT, NODE, AT_, NODE_NOW) \
                     VALUES (?, ?, ?, CURRENT_TIMESTAMP, ?)",
                    &binds,
                )
                .await
                .map_err(|e| -> HandlerError { format!("chaos side-effect write failed: {e}").into() })?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ctx.write_on_success(
                "INSERT INTO CHAOS_EFFECT (JOB_ID, NODE, ATTEMPT, AT_) VALUES (?, ?, ?, CURRENT_TIMESTAMP)",
                vec![
                    SqlValue::Text(ctx.job_id.clone()),
                    SqlValue::Text(ctx.node_id.clone()),
                    SqlValue::Int(i64::from(ctx.attempt)),
                ],
            );
            Ok(Some(format!("chaos: {ms} ms on {}", ctx.node_id)))
        }
    })
}
