//! Two built-in handlers on the outbox's code (SPEC C4, API.md "Built-in handlers"):
//!
//! * `outbox` — a service task (or job) that publishes an event: the insert is staged with the
//!   command ([`JobContext::stage`]), so the event commits in the command's transaction and
//!   exists exactly when the step it announces does. Payload:
//!   `{"eventType", "aggregateType", "aggregateId", "payload", "target"?, "targetUrl"?,
//!   "ordered"?, "eventId"?}` — for a service task, its fields (`<activiti:field>`, expressions
//!   allowed: `${order}` gives the variable's JSON).
//! * `http` — a job that POSTs `body` (default: the whole payload) to `url` (default: the http
//!   sink's base URL), allow-listed and address-guarded like the sink, with
//!   `Idempotency-Key` = the job id (the same for every attempt). Payload: `{"url"?, "body"?}`.

use super::{Delivery, NewEvent, Outbox, OutboxEvent};
use async_trait::async_trait;
use kairos_executor::{Handler, HandlerError, JobContext};
use serde_json::Value;
use std::sync::Arc;

/// The `outbox` handler.
pub struct OutboxHandler(pub Arc<Outbox>);

fn text(payload: &Value, field: &str) -> Result<Option<String>, HandlerError> {
    match payload.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{field}: must be a string").into()),
    }
}

fn required(payload: &Value, field: &str) -> Result<String, HandlerError> {
    text(payload, field)?.ok_or_else(|| format!("{field}: required").into())
}

#[async_trait]
impl Handler for OutboxHandler {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        // A service task's fields (`<activiti:field>`) when it has them, else the payload itself.
        let p = ctx.payload.get("fields").filter(|f| f.is_object()).unwrap_or(&ctx.payload);
        if !p.is_object() {
            return Err("payload: must be an object {eventType, aggregateType, aggregateId, payload, target}".into());
        }
        let e = NewEvent {
            event_id: text(p, "eventId")?.unwrap_or_else(kairos_core::new_id),
            aggregate_type: required(p, "aggregateType")?,
            aggregate_id: required(p, "aggregateId")?,
            event_type: required(p, "eventType")?,
            payload_json: p.get("payload").cloned().unwrap_or(Value::Null).to_string(),
            target: text(p, "target")?.unwrap_or_else(|| "http".into()),
            target_url: text(p, "targetUrl")?,
            ordered: p.get("ordered").and_then(Value::as_bool).unwrap_or(false),
            max_attempts: self.0.settings().max_attempts,
        };
        let write = self.0.insert(self.0.store.dialect(), &e).map_err(|x| x.to_string())?;
        ctx.stage(write);
        Ok(Some(format!("outbox event {} staged", e.event_id)))
    }
}

/// The `http` job handler.
pub struct HttpHandler(pub Arc<Outbox>);

#[async_trait]
impl Handler for HttpHandler {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        let Some(sink) = self.0.sinks.get("http").cloned() else {
            return Err("no http sink is registered".into());
        };
        let url = text(&ctx.payload, "url")?;
        sink.check_url(url.as_deref()).map_err(|e| e.replace("targetUrl:", "url:"))?;
        let body = ctx.payload.get("body").cloned().unwrap_or_else(|| ctx.payload.clone());
        let now = ctx.started;
        let request = OutboxEvent {
            event_id: ctx.idempotency_key().to_owned(),
            aggregate_type: "JOB".into(),
            aggregate_id: ctx.job_id.clone(),
            event_type: "HTTP".into(),
            payload_json: body.to_string(),
            event_status: "PROCESSING".into(),
            retry_count: i64::from(ctx.attempt - 1),
            next_retry_at: None,
            created_at: now,
            published_at: None,
            last_error_code: None,
            owner: Some(ctx.node_id.clone()),
            lease_until: None,
            claim_id: None,
            max_attempts: 1,
            ordered: false,
            seq: 0,
            target: "http".into(),
            target_url: url,
            last_error: None,
        };
        match sink.deliver(&request).await {
            Delivery::Delivered => Ok(Some("delivered".into())),
            Delivery::Retry(why) => Err(format!("http: {why} (retryable)").into()),
            Delivery::Permanent(why) => Err(format!("http: {why}").into()),
        }
    }
}
