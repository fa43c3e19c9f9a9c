//! A Camunda 7 REST facade under `/engine-rest` (issue 18): Camunda's own clients
//! (`camunda-external-task-client-js`, `camunda-external-task-client-python3`, `pycamunda`)
//! point at kairos unchanged. The same engine is underneath as under Flowable's paths: an
//! instance started through one face is seen and driven through the other.
//!
//! Camunda's wire format everywhere under `/engine-rest` (docs/camunda.md has the table of
//! calls, what is the same, what differs and why):
//!
//! * typed variables `{"name": {"value", "type", "valueInfo"}}` ([`variables`]), mapped to and
//!   from kairos's JSON values;
//! * dates as Camunda writes them, `2026-01-01T08:00:00.000+0000` ([`date`]);
//! * `firstResult` / `maxResults` paging ([`Paging`]) and `/count` answering `{"count": N}`;
//! * its error body `{"type", "message"}` ([`camunda_errors`] rewrites every error of this
//!   subtree, the extractors' included, from kairos's shape);
//! * fields Camunda defines for a call are accepted (carried out, or ignored where
//!   docs/camunda.md says so); any other field is refused with a 400 naming it.
//!
//! One file per Camunda resource.

pub mod decision_definition;
pub mod deployment;
pub mod execution;
pub mod external_task;
pub mod fetch_and_lock;
pub mod history;
pub mod incident;
pub mod job;
pub mod message;
pub mod process_definition;
pub mod process_instance;
pub mod task;

use crate::AppState;
use crate::error::ApiError;
use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use jiff::Timestamp;
use serde_json::{Value, json};

/// Longest name, topic, worker id, business key: their columns' VARCHAR(255).
pub const MAX_NAME_CHARS: usize = 255;
/// Longest id in a path or filter: ID_ columns are VARCHAR(64).
pub const MAX_ID_CHARS: usize = 64;
/// The most items one page holds. Camunda answers every match when `maxResults` is absent;
/// kairos answers at most this many (docs/camunda.md), so no request holds an unbounded list.
pub const MAX_RESULTS: u64 = 1_000;

/// The routes, relative to `/engine-rest` (nested by `lib.rs`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/engine", get(engines))
        .route("/version", get(version))
        .route("/external-task", get(external_task::list))
        .route("/external-task/count", get(external_task::count))
        .route("/external-task/fetchAndLock", post(fetch_and_lock::fetch_and_lock))
        .route("/external-task/{id}", get(external_task::get))
        .route("/external-task/{id}/errorDetails", get(external_task::error_details))
        .route("/external-task/{id}/complete", post(external_task::complete))
        .route("/external-task/{id}/failure", post(external_task::failure))
        .route("/external-task/{id}/bpmnError", post(external_task::bpmn_error))
        .route("/external-task/{id}/extendLock", post(external_task::extend_lock))
        .route("/external-task/{id}/lock", post(external_task::lock))
        .route("/external-task/{id}/unlock", post(external_task::unlock))
        .route(
            "/deployment/create",
            post(deployment::create).layer(axum::extract::DefaultBodyLimit::max(
                crate::routes::processes::repository::DEPLOY_MAX_BODY_BYTES,
            )),
        )
        .route("/deployment", get(deployment::list))
        .route("/deployment/count", get(deployment::count))
        .route("/deployment/{id}", get(deployment::get).delete(deployment::delete))
        .route("/decision-definition", get(decision_definition::list))
        .route("/decision-definition/count", get(decision_definition::count))
        .route("/decision-definition/{id}", get(decision_definition::get))
        .route("/decision-definition/{id}/xml", get(decision_definition::xml))
        .route("/decision-definition/{id}/evaluate", post(decision_definition::evaluate))
        .route("/decision-definition/key/{key}", get(decision_definition::get_by_key))
        .route("/decision-definition/key/{key}/xml", get(decision_definition::xml_by_key))
        .route("/decision-definition/key/{key}/evaluate", post(decision_definition::evaluate_by_key))
        .route("/process-definition", get(process_definition::list))
        .route("/process-definition/count", get(process_definition::count))
        .route("/process-definition/{id}", get(process_definition::get))
        .route("/process-definition/{id}/statistics", get(process_definition::statistics))
        .route("/process-definition/{id}/xml", get(process_definition::xml))
        .route("/process-definition/{id}/start", post(process_definition::start))
        .route("/process-definition/key/{key}", get(process_definition::get_by_key))
        .route("/process-definition/key/{key}/xml", get(process_definition::xml_by_key))
        .route("/process-definition/key/{key}/start", post(process_definition::start_by_key))
        .route("/process-instance", get(process_instance::list))
        .route("/process-instance/count", get(process_instance::count))
        .route("/process-instance/{id}", get(process_instance::get).delete(process_instance::delete))
        .route("/process-instance/{id}/suspended", put(process_instance::suspended))
        .route(
            "/process-instance/{id}/variables",
            get(process_instance::variables).post(process_instance::modify_variables),
        )
        .route(
            "/process-instance/{id}/variables/{name}",
            get(process_instance::variable).put(process_instance::put_variable),
        )
        .route("/task", get(task::list))
        .route("/task/count", get(task::count))
        .route("/task/{id}", get(task::get))
        .route("/task/{id}/claim", post(task::claim))
        .route("/task/{id}/unclaim", post(task::unclaim))
        .route("/task/{id}/assignee", post(task::assignee))
        .route("/task/{id}/complete", post(task::complete))
        .route("/task/{id}/variables", get(task::variables))
        .route("/task/{id}/form-variables", get(task::form_variables))
        .route("/task/{id}/bpmnError", post(task::bpmn_error))
        .route("/task/{id}/bpmnEscalation", post(task::bpmn_escalation))
        .route("/execution", get(execution::list))
        .route("/execution/count", get(execution::count))
        .route("/execution/{id}", get(execution::get))
        .route("/execution/{id}/signal", post(execution::signal))
        .route("/message", post(message::correlate))
        .route("/signal", post(message::signal))
        .route("/condition", post(message::evaluate_condition))
        .route("/job", get(job::list))
        .route("/job/count", get(job::count))
        .route("/job/{id}", get(job::get))
        .route("/job/{id}/retries", put(job::retries))
        .route("/job/{id}/execute", post(job::execute))
        .route("/incident", get(incident::list))
        .route("/incident/count", get(incident::count))
        .route("/history/process-instance", get(history::instances))
        .route("/history/process-instance/count", get(history::instances_count))
        .route("/history/activity-instance", get(history::activities))
        .route("/history/activity-instance/count", get(history::activities_count))
        .route("/history/task", get(history::tasks))
        .route("/history/task/count", get(history::tasks_count))
        .route("/history/variable-instance", get(history::variables))
        .route("/history/variable-instance/count", get(history::variables_count))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
}

/// Middleware over the whole API (outside the token and site checks, so that their 401 and 403
/// are in Camunda's shape too): the answers of `/engine-rest/…` leave as [`camunda_errors`]
/// makes them.
pub async fn camunda_face(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let camunda = req.uri().path() == "/engine-rest" || req.uri().path().starts_with("/engine-rest/");
    let res = next.run(req).await;
    if camunda { camunda_errors(res).await } else { res }
}

// ---- errors -------------------------------------------------------------------------------

/// Rewrites every error answer of `/engine-rest` from kairos's `{"error": {"code", "message",
/// "field"}}` to Camunda's `{"type", "message"}`, status kept: the handlers and extractors
/// share kairos's checks and messages (which name the field), the clients read Camunda's shape.
/// A code that is already a Camunda exception name (`BadUserRequestException`) is its type.
async fn camunda_errors(res: Response) -> Response {
    let status = res.status();
    if status.is_success() || status.is_redirection() {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    // Error bodies are small; a larger one is passed on as it is.
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return (status, axum::Json(json!({"type": "RestException", "message": "error"}))).into_response();
    };
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let Some(error) = parsed.as_ref().and_then(|v| v.get("error")).filter(|e| e.is_object()) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let code = error["code"].as_str().unwrap_or("");
    let message = error["message"].as_str().unwrap_or("").to_string();
    let kind = match code {
        c if c.ends_with("Exception") => c.to_string(),
        _ => exception_of(status).to_string(),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    let body = serde_json::to_vec(&json!({"type": kind, "message": message})).unwrap_or_default();
    Response::from_parts(parts, Body::from(body))
}

/// The exception name Camunda's REST API gives an error of `status`.
fn exception_of(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 404 | 405 | 408 | 413 | 415 => "InvalidRequestException",
        401 => "AuthenticationException",
        403 => "AuthorizationException",
        409 => "OptimisticLockingException",
        422 => "ProcessEngineException",
        _ => "RestException",
    }
}

/// A 400 as Camunda types a refused operation on a valid request (a lock that is not the
/// worker's, a suspended definition).
pub fn bad_user_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "BadUserRequestException", message)
}

/// Turns the engine's conflicts into Camunda's 400 BadUserRequestException (Camunda answers
/// a lock held by another worker, a suspended instance, a claimed task so); the rest as is.
pub fn conflict_is_bad_request(e: kairos::Error) -> ApiError {
    let e = ApiError::from(e);
    if e.status == StatusCode::CONFLICT { bad_user_request(e.message) } else { e }
}

async fn no_route(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "no route for {method} {}; docs/camunda.md lists the Camunda calls kairos answers",
        uri.path()
    ))
}

async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        format!("{} does not take {method}", uri.path()),
    )
}

/// `GET /engine-rest/engine`: the one process engine, `default`.
async fn engines() -> axum::Json<Value> {
    axum::Json(json!([{"name": "default"}]))
}

/// `GET /engine-rest/version`: the Camunda REST API version this facade follows.
async fn version() -> axum::Json<Value> {
    axum::Json(json!({"version": CAMUNDA_VERSION}))
}

/// The Camunda 7 REST API this facade follows.
pub const CAMUNDA_VERSION: &str = "7.22.0";

// ---- dates --------------------------------------------------------------------------------

/// An instant as Camunda writes it: `yyyy-MM-dd'T'HH:mm:ss.SSSZ`, in UTC
/// (`2026-01-01T08:00:00.000+0000`); pycamunda parses exactly this.
pub fn date(t: Timestamp) -> String {
    let ms = t.subsec_millisecond().max(0);
    format!("{}.{ms:03}+0000", t.strftime("%Y-%m-%dT%H:%M:%S"))
}

/// [`date`] of an optional instant.
pub fn opt_date(t: Option<Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::String(date(t)))
}

/// A date as Camunda's clients send it: `2026-01-01T08:00:00.000+0000`, `…+01:00`, `…Z`,
/// with or without milliseconds.
pub fn parse_date(field: &str, s: &str) -> Result<Timestamp, ApiError> {
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%z"] {
        if let Ok(t) = jiff::fmt::strtime::parse(format, s).and_then(|p| p.to_timestamp()) {
            return Ok(t);
        }
    }
    Err(invalid(field, format!("{field}: \"{}\" is not a date like 2026-01-01T08:00:00.000+0000", clip(s))))
}

/// At most 60 characters of `s`, for messages.
pub fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

/// A 400 about `field` (an owned name: variable names are fields too).
pub fn invalid(field: &str, message: impl Into<String>) -> ApiError {
    let mut e = ApiError::bad_request(message);
    e.field = Some(field.to_string());
    e
}

// ---- typed variables ----------------------------------------------------------------------

pub mod variables;

// ---- queries ------------------------------------------------------------------------------

/// The largest `firstResult`.
pub const MAX_FIRST_RESULT: u64 = 1_000_000_000;

/// `firstResult` / `maxResults` of a Camunda list (see [`MAX_RESULTS`]).
#[derive(Debug, Clone, Copy)]
pub struct Paging {
    pub first: u64,
    pub max: u64,
}

impl Paging {
    pub fn of(first: Option<&str>, max: Option<&str>) -> Result<Paging, ApiError> {
        let first = match first.filter(|s| !s.is_empty()) {
            None => 0,
            Some(s) => s.parse::<u64>().ok().filter(|n| *n <= MAX_FIRST_RESULT).ok_or_else(|| {
                invalid(
                    "firstResult",
                    format!("firstResult must be a whole number from 0 to {MAX_FIRST_RESULT}, not \"{}\"", clip(s)),
                )
            })?,
        };
        let max = match max.filter(|s| !s.is_empty()) {
            None => MAX_RESULTS,
            Some(s) => s.parse::<u64>().ok().filter(|n| *n <= MAX_RESULTS).ok_or_else(|| {
                invalid(
                    "maxResults",
                    format!("maxResults must be a whole number from 0 to {MAX_RESULTS}, not \"{}\"", clip(s)),
                )
            })?,
        };
        Ok(Paging { first, max })
    }

    /// This page of a list held in memory.
    pub fn page<T>(self, all: Vec<T>) -> Vec<T> {
        all.into_iter().skip(usize::try_from(self.first).unwrap_or(usize::MAX)).take(self.max as usize).collect()
    }
}

/// `sortBy` + `sortOrder`: the sort key (one of `known`) and whether descending. Camunda wants
/// both; kairos takes `sortBy` alone as ascending and `sortOrder` alone as the order of the
/// first key of `known`, so that every value the OpenAPI document allows is answered.
pub fn sorting<'a>(
    by: Option<&'a str>,
    order: Option<&str>,
    known: &[&'a str],
) -> Result<Option<(&'a str, bool)>, ApiError> {
    let by = by.filter(|s| !s.is_empty());
    let desc = match order.filter(|s| !s.is_empty()) {
        None => None,
        Some("asc") => Some(false),
        Some("desc") => Some(true),
        Some(o) => return Err(invalid("sortOrder", format!("sortOrder must be asc or desc, not \"{}\"", clip(o)))),
    };
    match (by, desc) {
        (None, None) => Ok(None),
        (Some(b), d) => {
            if !known.contains(&b) {
                return Err(invalid("sortBy", format!("sortBy \"{}\" is not one of {}", clip(b), known.join(", "))));
            }
            Ok(Some((b, d.unwrap_or(false))))
        }
        (None, Some(d)) => Ok(known.first().map(|k| (*k, d))),
    }
}

/// Two filters that exclude each other (`locked` and `notLocked`): both asked, nothing
/// matches, as Camunda applies both.
pub fn either(a: Option<bool>, b: Option<bool>) -> Option<Option<bool>> {
    match (a == Some(true), b == Some(true)) {
        (true, true) => None,
        (true, false) => Some(Some(true)),
        (false, true) => Some(Some(false)),
        (false, false) => Some(None),
    }
}

/// A JSON integer, also written as a float with no fraction (`5.0`: JSON Schema's integer).
pub mod int {
    use serde::{Deserialize, Deserializer};

    pub fn opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        let v = Option::<serde_json::Number>::deserialize(d)?;
        v.map(|n| {
            n.as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
                .ok_or_else(|| serde::de::Error::custom(format!("expected a whole number, not {n}")))
        })
        .transpose()
    }
}

/// `true` / `false` query parameters (Camunda's booleans).
pub fn flag(field: &'static str, v: Option<&str>) -> Result<Option<bool>, ApiError> {
    crate::extract::flag(field, v)
}

/// An optional text filter of at most `max` characters; empty means absent.
pub fn text(field: &'static str, v: Option<String>, max: usize) -> Result<Option<String>, ApiError> {
    match v.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => crate::routes::processes::limited(field, s, max).map(Some),
    }
}

/// A comma-separated list filter (`processDefinitionKeyIn=a,b`).
pub fn list_of(field: &'static str, v: Option<String>, max: usize) -> Result<Vec<String>, ApiError> {
    let Some(v) = v.filter(|s| !s.is_empty()) else { return Ok(Vec::new()) };
    let items: Vec<String> = v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    if items.len() > 100 {
        return Err(invalid(field, format!("{field} may list at most 100 values")));
    }
    for i in &items {
        crate::routes::processes::limited(field, i.clone(), max)?;
    }
    Ok(items)
}

/// `{"count": n}`.
pub fn count(n: usize) -> axum::Json<Value> {
    axum::Json(json!({"count": n}))
}

/// An empty or absent JSON body is `{}`: Camunda's clients post some calls (`unlock`) with no
/// body at all.
#[derive(Debug)]
pub struct OptJson<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for OptJson<T>
where
    T: serde::de::DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let has_body = req.headers().get(header::CONTENT_LENGTH).is_some_and(|l| l != "0")
            || req.headers().contains_key(header::TRANSFER_ENCODING);
        if !has_body {
            return Ok(OptJson(T::default()));
        }
        let crate::extract::Json(v) = crate::extract::Json::<T>::from_request(req, state).await?;
        Ok(OptJson(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_and_read_as_camunda_does() {
        let t: Timestamp = "2026-01-02T03:04:05.678Z".parse().unwrap();
        assert_eq!(date(t), "2026-01-02T03:04:05.678+0000");
        for s in ["2026-01-02T03:04:05.678+0000", "2026-01-02T04:04:05.678+01:00", "2026-01-02T03:04:05.678Z"] {
            assert_eq!(parse_date("d", s).unwrap(), t, "{s}");
        }
        assert_eq!(parse_date("d", "2026-01-02T03:04:05+0000").unwrap().to_string(), "2026-01-02T03:04:05Z");
        assert!(parse_date("d", "tomorrow").unwrap_err().message.contains("tomorrow"));
    }

    #[test]
    fn sorting_and_paging_take_what_the_document_allows() {
        let keys = ["id", "name"];
        assert_eq!(sorting(Some("name"), None, &keys).unwrap(), Some(("name", false)));
        assert_eq!(sorting(None, Some("desc"), &keys).unwrap(), Some(("id", true)));
        assert_eq!(sorting(None, None, &keys).unwrap(), None);
        assert!(sorting(Some("nope"), Some("asc"), &keys).is_err());
        assert!(sorting(Some("id"), Some("up"), &keys).is_err());
        assert_eq!(either(Some(true), Some(true)), None);
        assert_eq!(either(Some(false), Some(true)), Some(Some(false)));
        let p = Paging::of(Some("2"), Some("3")).unwrap();
        assert_eq!(p.page((0..10).collect::<Vec<_>>()), vec![2, 3, 4]);
        assert!(Paging::of(None, Some("1001")).is_err());
        assert!(Paging::of(Some("-1"), None).is_err());
        assert_eq!(Paging::of(None, None).unwrap().max, MAX_RESULTS);
    }
}

/// Camunda's tenant filters of a list — `tenantIdIn`, `withoutTenantId` and
/// `include…WithoutTenantId` — narrowed to a tenant's caller's own tenant (SPEC I7).
#[derive(Debug, Clone, Default)]
pub struct Tenants {
    /// The caller's tenant: no other row is kept.
    scope: Option<String>,
    of: Vec<String>,
    without: bool,
    include_without: bool,
}

impl Tenants {
    /// The filters of a query: `tenantIdIn`, `withoutTenantId`, and the route's
    /// `include…WithoutTenantId` (its name and value).
    pub fn parse(
        scope: &crate::tenancy::Scope,
        tenant_id_in: Option<String>,
        without: Option<&str>,
        (include_field, include): (&'static str, Option<&str>),
    ) -> Result<Tenants, ApiError> {
        Ok(Tenants {
            scope: scope.0.clone(),
            of: list_of("tenantIdIn", tenant_id_in, 255)?,
            without: flag("withoutTenantId", without)?.unwrap_or(false),
            include_without: flag(include_field, include)?.unwrap_or(false),
        })
    }

    /// Whether a row of `tenant` (`''`: none) is kept.
    pub fn keeps(&self, tenant: &str) -> bool {
        if self.scope.as_deref().is_some_and(|mine| mine != tenant) {
            return false;
        }
        if self.without {
            return tenant.is_empty();
        }
        self.of.is_empty() || self.of.iter().any(|t| t == tenant) || (self.include_without && tenant.is_empty())
    }

    /// The one tenant the store can narrow a list to before [`Tenants::keeps`] runs.
    pub fn only(&self) -> Option<&str> {
        match (&self.scope, self.of.as_slice()) {
            (Some(mine), _) => Some(mine),
            (None, [one]) if !self.include_without && !self.without => Some(one),
            _ => None,
        }
    }
}

/// A tenant as Camunda's DTOs carry it: `null` for none.
pub fn tenant_json(tenant: &str) -> Value {
    if tenant.is_empty() { Value::Null } else { Value::String(tenant.to_string()) }
}

/// Camunda's 404 for a key with no definition in the caller's tenant (`''`: none).
pub fn no_such_key(what: &str, key: &str, tenant: &str) -> ApiError {
    ApiError::not_found(match tenant {
        "" => format!("no matching {what} with key: {key} and no tenant-id"),
        t => format!("no matching {what} with key: {key} and tenant-id: {t}"),
    })
}
