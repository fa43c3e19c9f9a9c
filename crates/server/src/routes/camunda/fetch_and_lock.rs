//! `POST /engine-rest/external-task/fetchAndLock`: Camunda's fetch and lock over kairos's
//! external-worker jobs.
//!
//! It long-polls (`asyncResponseTimeout`, at most 30 minutes as in Camunda) without holding any
//! lock while it waits ([`kairos::process::Processes::external_fetch_wait`]), and answers
//! through a body that gives the locks back if the connection goes before the answer is handed
//! over ([`Delivering`]): Camunda locks only what it returns.

use super::external_task::{millis, name};
use super::variables::to_typed;
use super::{MAX_NAME_CHARS, clip, date, invalid};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use kairos::process::{ExternalTask, FetchTopic, Hold, MAX_FETCH_WAIT};
use serde::Deserialize;
use serde_json::{Value, json};
use std::pin::Pin;
use std::task::{Context, Poll};

/// At most this many tasks per fetch, and topics per fetch.
const MAX_TASKS: i64 = 1_000;
const MAX_TOPICS: usize = 100;
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FetchBody {
    worker_id: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    max_tasks: Option<i64>,
    use_priority: Option<bool>,
    #[serde(default, deserialize_with = "super::int::opt")]
    async_response_timeout: Option<i64>,
    topics: Option<Vec<TopicBody>>,
    /// `[{"sortBy": "createTime", "sortOrder": "asc"}]`: kairos fetches oldest first.
    sorting: Option<Vec<SortBody>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortBody {
    sort_by: Option<String>,
    sort_order: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopicBody {
    topic_name: Option<String>,
    #[serde(default, deserialize_with = "super::int::opt")]
    lock_duration: Option<i64>,
    variables: Option<Vec<String>>,
    local_variables: Option<bool>,
    business_key: Option<String>,
    process_definition_id: Option<String>,
    process_definition_id_in: Option<Vec<String>>,
    process_definition_key: Option<String>,
    process_definition_key_in: Option<Vec<String>>,
    process_definition_version_tag: Option<String>,
    /// Equality filters on variables: only `{}` (kairos cannot filter a lock by values).
    process_variables: Option<serde_json::Map<String, Value>>,
    /// Ignored: kairos has no serialized values to deserialize.
    deserialize_values: Option<bool>,
    include_extension_properties: Option<bool>,
    without_tenant_id: Option<bool>,
    tenant_id_in: Option<Vec<String>>,
}

fn ids(field: &str, v: Vec<String>) -> Result<Vec<String>, ApiError> {
    if v.len() > 100 {
        return Err(invalid(field, format!("{field} may list at most 100 values")));
    }
    for s in &v {
        if s.is_empty() || s.chars().count() > MAX_NAME_CHARS {
            return Err(invalid(field, format!("{field}: \"{}\" is not a valid value", clip(s))));
        }
    }
    Ok(v)
}

/// What one topic of a fetch asks for (a tenant's worker: of its own tenant only); `None` when
/// it can match nothing.
fn topic(i: usize, t: TopicBody, scope: &crate::tenancy::Scope) -> Result<(Option<FetchTopic>, bool), ApiError> {
    let at = |f: &str| format!("topics[{i}].{f}");
    let topic_name = name(&at("topicName"), t.topic_name)?;
    let lock = millis(&at("lockDuration"), t.lock_duration)?;
    let _ = t.deserialize_values;
    let mut f = FetchTopic::new(topic_name, lock);
    if let Some(v) = t.variables {
        f.variables = Some(ids(&at("variables"), v)?);
    }
    f.local_variables = t.local_variables.unwrap_or(false);
    if let Some(bk) = t.business_key {
        f.business_key = Some(name(&at("businessKey"), Some(bk))?);
    }
    f.definition_ids = ids(&at("processDefinitionIdIn"), t.process_definition_id_in.unwrap_or_default())?;
    if let Some(id) = t.process_definition_id {
        f.definition_ids.push(name(&at("processDefinitionId"), Some(id))?);
    }
    f.definition_keys = ids(&at("processDefinitionKeyIn"), t.process_definition_key_in.unwrap_or_default())?;
    if let Some(k) = t.process_definition_key {
        f.definition_keys.push(name(&at("processDefinitionKey"), Some(k))?);
    }
    if t.process_definition_version_tag.is_some() {
        return Err(invalid(
            &at("processDefinitionVersionTag"),
            format!(
                "{}: kairos definitions have no version tag; filter by processDefinitionId or processDefinitionKey",
                at("processDefinitionVersionTag")
            ),
        ));
    }
    if t.process_variables.as_ref().is_some_and(|m| !m.is_empty()) {
        return Err(invalid(
            &at("processVariables"),
            format!(
                "{}: fetching by variable values is not supported by kairos; filter in the worker",
                at("processVariables")
            ),
        ));
    }
    // `tenantIdIn` and `withoutTenantId` (`''`) together admit both; neither admits any.
    let mut tenants = ids(&at("tenantIdIn"), t.tenant_id_in.unwrap_or_default())?;
    if t.without_tenant_id == Some(true) {
        tenants.push(String::new());
    }
    let mut tenants = (!tenants.is_empty()).then_some(tenants);
    if let Some(mine) = &scope.0 {
        tenants = Some(match tenants {
            None => vec![mine.clone()],
            Some(list) => list.into_iter().filter(|t| t == mine).collect(),
        });
    }
    let nothing = tenants.as_ref().is_some_and(Vec::is_empty);
    f.tenants = tenants;
    let extension = t.include_extension_properties.unwrap_or(false);
    Ok(((!nothing).then_some(f), extension))
}

/// `POST /engine-rest/external-task/fetchAndLock` → 200 `[LockedExternalTaskDto]` (possibly
/// empty, at the end of `asyncResponseTimeout`).
pub async fn fetch_and_lock(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(b): Json<FetchBody>,
) -> Result<Response, ApiError> {
    let worker = name("workerId", b.worker_id)?;
    let max = match b.max_tasks {
        None => return Err(invalid("maxTasks", "maxTasks is required: how many tasks to fetch at most")),
        Some(n) if (0..=MAX_TASKS).contains(&n) => n as usize,
        Some(n) => return Err(invalid("maxTasks", format!("maxTasks must be from 0 to {MAX_TASKS}, not {n}"))),
    };
    let wait = match b.async_response_timeout {
        None => std::time::Duration::ZERO,
        Some(ms) if ms >= 0 && ms as u128 <= MAX_FETCH_WAIT.as_millis() => std::time::Duration::from_millis(ms as u64),
        Some(ms) => {
            return Err(invalid(
                "asyncResponseTimeout",
                format!(
                    "asyncResponseTimeout must be from 0 to {} milliseconds (30 minutes), not {ms}",
                    MAX_FETCH_WAIT.as_millis()
                ),
            ));
        }
    };
    for (i, s) in b.sorting.unwrap_or_default().into_iter().enumerate() {
        match (s.sort_by.as_deref(), s.sort_order.as_deref()) {
            (Some("createTime"), None | Some("asc")) => {}
            _ => {
                return Err(invalid(
                    &format!("sorting[{i}]"),
                    format!(
                        "sorting[{i}]: kairos fetches oldest first; only {{\"sortBy\": \"createTime\", \"sortOrder\": \"asc\"}} is supported"
                    ),
                ));
            }
        }
    }
    let topics = b.topics.unwrap_or_default();
    if topics.len() > MAX_TOPICS {
        return Err(invalid("topics", format!("a fetch may name at most {MAX_TOPICS} topics")));
    }
    let mut wanted = Vec::new();
    let mut extension = Vec::new();
    for (i, t) in topics.into_iter().enumerate() {
        let (t, ext) = topic(i, t, &scope)?;
        if let Some(t) = t {
            if ext {
                extension.push(t.topic.clone());
            }
            wanted.push(t);
        }
    }
    let processes = app.engine.processes();
    let (tasks, hold) = if max == 0 || wanted.is_empty() {
        processes.external_fetch(&worker, 0, false, &[]).await?
    } else {
        processes.external_fetch_wait(&worker, max, b.use_priority.unwrap_or(false), &wanted, wait).await?
    };
    let answer: Vec<Value> = tasks.iter().map(|t| locked(t, extension.contains(&t.topic))).collect();
    let body = serde_json::to_vec(&answer).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut res = Response::new(Body::new(Delivering { bytes: Some(Bytes::from(body)), hold: Some(hold) }));
    res.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    Ok(res)
}

/// Camunda's LockedExternalTaskDto.
fn locked(t: &ExternalTask, extension: bool) -> Value {
    let mut v = json!({
        "activityId": t.element_id,
        "activityInstanceId": t.execution_id,
        "errorMessage": t.error_message,
        "errorDetails": null,
        "executionId": t.execution_id,
        "id": t.id,
        "lockExpirationTime": date(t.lock_expiration_time),
        "createTime": null,
        "processDefinitionId": t.process_definition_id,
        "processDefinitionKey": t.process_definition_key,
        "processDefinitionVersionTag": null,
        "processInstanceId": t.process_instance_id,
        "retries": t.retries,
        "suspended": false,
        "workerId": t.worker_id,
        "topicName": t.topic,
        "tenantId": super::tenant_json(&t.tenant_id),
        "variables": to_typed(&t.variables),
        "priority": t.priority,
        "businessKey": t.business_key,
    });
    if extension {
        v["extensionProperties"] = json!({});
    }
    v
}

/// A response body of one chunk that settles a fetch's [`Hold`] once hyper has taken the
/// chunk and asks for more: a connection that went away before that drops the body, and the
/// hold gives the locks back.
struct Delivering {
    bytes: Option<Bytes>,
    hold: Option<Hold>,
}

impl http_body::Body for Delivering {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if let Some(b) = self.bytes.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(b))));
        }
        if let Some(h) = self.hold.take() {
            h.delivered();
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none() && self.hold.is_none()
    }
}
