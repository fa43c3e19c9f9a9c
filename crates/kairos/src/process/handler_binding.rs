//! Handler bindings: the names models give their handlers — a Java class (`camunda:class`), a
//! delegate or bean expression (`${mailer}`), a bean method (`${svc.post(id)}`), an Activiti 7
//! `implementation`, a Flowable task type (`mail`) — bound without writing Rust to where the
//! work is done: an external-worker topic, an HTTP endpoint, or another handler. This is how a
//! team's files run unchanged on the standalone binary (`kairos serve --bind-handler`).
//!
//! * `topic:NAME` — the service task becomes an external task on topic NAME (the model is
//!   changed when it is parsed, [`kairos_bpmn::Definitions::bind_topics`]); a bean method's
//!   arguments reach the worker as the local variable `arguments`.
//! * `http:URL` (or a bare `http://…` / `https://…` URL) — a handler that POSTs the task's
//!   input to URL inside the command, as a Rust handler runs ([`HttpEndpoint`]).
//! * `handler:NAME` — another handler registered with the engine (`outbox`, a Rust handler).

use crate::outbox::Delivery;
use crate::outbox::http::{HttpSink, HttpSinkSettings};
use async_trait::async_trait;
use kairos_executor::{Answer, Handler, HandlerError, JobContext};
use serde_json::{Map, Value as Json, json};
use std::str::FromStr;

/// Where a handler name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandlerBinding {
    /// An external-worker job on this topic.
    Topic(String),
    /// A POST to this URL, answered inside the command; `allow_private` lets the address guard
    /// pass loopback and private addresses (an endpoint on the same host or network).
    Http { url: String, allow_private: bool },
    /// Another handler registered with the engine.
    Handler(String),
}

impl FromStr for HandlerBinding {
    type Err = String;

    /// `topic:NAME`, `http:URL`, `handler:NAME`, or a bare http(s) URL.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let non_empty = |kind: &str, v: &str| {
            let v = v.trim();
            if v.is_empty() { Err(format!("{kind}: names nothing")) } else { Ok(v.to_owned()) }
        };
        if let Some(topic) = text.strip_prefix("topic:") {
            return non_empty("topic", topic).map(HandlerBinding::Topic);
        }
        if let Some(name) = text.strip_prefix("handler:") {
            return non_empty("handler", name).map(HandlerBinding::Handler);
        }
        let url = if text.starts_with("http://") || text.starts_with("https://") {
            text
        } else if let Some(url) = text.strip_prefix("http:") {
            url.trim()
        } else {
            return Err(format!(
                "'{}' is no binding: write topic:NAME (an external worker), http:URL (an endpoint) or handler:NAME",
                text.chars().take(100).collect::<String>()
            ));
        };
        check_url(url)?;
        Ok(HandlerBinding::Http { url: url.to_owned(), allow_private: false })
    }
}

/// An http(s) URL with a host.
fn check_url(url: &str) -> Result<(), String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("http: '{url}' is not a URL ({e})"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(format!("http: '{url}' must be an http or https URL with a host"));
    }
    Ok(())
}

/// The longest reply an endpoint may give (the limit of a process variable's JSON).
const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// A handler name bound to an HTTP endpoint. The request is a POST of
/// `{handler, processInstanceId, executionId, activityId, variables, fields, arguments}` with
/// `Idempotency-Key: <execution>:<activity>`, the same when a failed command or job runs the
/// task again. The reply decides the outcome:
/// * 2xx — done. A JSON object with a `variables` object sets those variables (and its
///   `result`, if any, goes to `resultVariable`); any other JSON body is the result; an empty
///   or non-JSON body is no result.
/// * a JSON body `{"bpmnError": "CODE"}` with a 4xx — the BPMN error CODE, for a boundary event.
/// * anything else — the task fails (a job retries; a request gets the message).
///
/// Only the bound URL's host is reached (redirects elsewhere are not followed), through the
/// same address guard as the outbox's `http` sink.
pub struct HttpEndpoint {
    url: String,
    sink: HttpSink,
}

impl HttpEndpoint {
    pub fn new(url: &str, allow_private: bool) -> Result<HttpEndpoint, String> {
        check_url(url)?;
        let host = reqwest::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
        let sink = HttpSink::new(HttpSinkSettings { allow_hosts: vec![host], allow_private, ..Default::default() })?;
        Ok(HttpEndpoint { url: url.to_owned(), sink })
    }
}

#[async_trait]
impl Handler for HttpEndpoint {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        let mut variables = ctx.payload.as_object().cloned().unwrap_or_default();
        let fields = variables.remove("fields").unwrap_or_else(|| json!({}));
        let arguments = variables.remove("arguments").unwrap_or_else(|| json!([]));
        let body = json!({
            "handler": ctx.handler_type,
            "processInstanceId": ctx.process_instance_id,
            "executionId": ctx.execution_id,
            "activityId": ctx.element_id,
            "variables": variables,
            "fields": fields,
            "arguments": arguments,
        });
        let (status, reply) =
            match self.sink.call(&self.url, ctx.idempotency_key(), body.to_string(), MAX_REPLY_BYTES).await {
                Ok(answer) => answer,
                Err(Delivery::Retry(why) | Delivery::Permanent(why)) => {
                    return Err(format!("{}: {why}", self.url).into());
                }
                Err(Delivery::Delivered) => return Err(format!("{}: no reply", self.url).into()),
            };
        let json: Option<Json> = serde_json::from_slice(&reply).ok();
        if !(200..300).contains(&status) {
            if (400..500).contains(&status)
                && let Some(code) = json.as_ref().and_then(|j| j.get("bpmnError")).and_then(Json::as_str)
            {
                return Err(Box::new(super::BpmnError(code.to_owned())));
            }
            let text: String = String::from_utf8_lossy(&reply).chars().take(300).collect();
            return Err(format!("{} answered HTTP {status}: {text}", self.url).into());
        }
        match json {
            Some(Json::Object(mut reply)) if reply.get("variables").is_some_and(Json::is_object) => {
                let Some(Json::Object(variables)) = reply.remove("variables") else { unreachable!() };
                ctx.answer(Answer { result: reply.remove("result"), variables });
            }
            Some(result) => ctx.answer(Answer { result: Some(result), variables: Map::new() }),
            None => {}
        }
        Ok(Some(format!("{} answered HTTP {status}", self.url)))
    }
}

/// The hint an unbound handler name's refusal ends with.
pub(crate) fn how_to_bind(name: &str) -> String {
    format!(
        "bind it: kairos serve --bind-handler '{name}=topic:TOPIC' (an external worker) or '{name}=http:URL' \
         (an endpoint), or register a handler of that name in Rust"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_parse_from_their_three_forms_and_refuse_anything_else() {
        assert_eq!("topic:send-mail".parse(), Ok(HandlerBinding::Topic("send-mail".into())));
        assert_eq!("handler: outbox".parse(), Ok(HandlerBinding::Handler("outbox".into())));
        let http = |u: &str| Ok(HandlerBinding::Http { url: u.into(), allow_private: false });
        assert_eq!("http:https://api.example.com/post".parse(), http("https://api.example.com/post"));
        assert_eq!("http://10.0.0.1:8080/x".parse(), http("http://10.0.0.1:8080/x"));
        for bad in ["topic:", "handler: ", "mailer", "http:ftp://x/y", "http:not a url", ""] {
            assert!(bad.parse::<HandlerBinding>().is_err(), "{bad:?} parsed");
        }
    }
}
