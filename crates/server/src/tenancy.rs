//! Tenants (SPEC I7): a caller whose credential belongs to a tenant sees and acts in that
//! tenant only. The tenant comes from the credential ([`Principal::tenant`]), never from the
//! request.
//!
//! Two halves:
//! * **the guard** ([`guard`]), once per request after the role check: every id the request
//!   names — in the path, the query string or the JSON body, by the names in [`PATH`] and
//!   [`FIELDS`] — must be of the caller's tenant, or the request is answered 404 as if the row
//!   did not exist; a `tenantId` other than the caller's is refused; and the routes that are
//!   node-wide ([`NODE_WIDE`]: trigger groups, calendars and firings, the outbox, commands, incidents and
//!   reconciliation, the user and group lists, the doctor, metrics) answer 403 to a tenant's
//!   caller.
//! * **the scope** ([`Scope`]), which list handlers and key lookups read: a tenant's caller
//!   lists and resolves keys within its tenant only.
//!
//! A caller of no tenant (the node's token, a user without a tenant) is not narrowed; it names
//! a tenant with `tenantId` where Flowable and Camunda take one.

use crate::error::ApiError;
use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use kairos::Engine;
use kairos::identity::Principal;
use kairos::process::Owned;
use serde_json::Value as Json;

/// Path parameters that name a row: `(the segment before it, the parameter, what it names)`.
/// A parameter of a pattern not listed here is not an id of a tenant's row (a variable's name,
/// an identity link's family) or belongs to a node-wide route; `every_path_parameter_is_classified`
/// holds every route of the document to this table.
pub const PATH: &[(&str, &str, Option<Owned>)] = &[
    ("deployments", "id", Some(Owned::Deployment)),
    ("deployment", "id", Some(Owned::Deployment)),
    ("process-definitions", "id", Some(Owned::ProcessDefinition)),
    ("process-definition", "id", Some(Owned::ProcessDefinition)),
    ("decisions", "id", Some(Owned::DecisionDefinition)),
    ("decision-definition", "id", Some(Owned::DecisionDefinition)),
    ("process-instances", "id", Some(Owned::Instance)),
    ("process-instance", "id", Some(Owned::Instance)),
    ("historic-process-instances", "id", Some(Owned::Instance)),
    ("executions", "id", Some(Owned::Execution)),
    ("execution", "id", Some(Owned::Execution)),
    ("tasks", "id", Some(Owned::Task)),
    ("task", "id", Some(Owned::Task)),
    ("jobs", "id", Some(Owned::Job)),
    ("job", "id", Some(Owned::Job)),
    ("deadletter-jobs", "id", Some(Owned::Job)),
    ("external-task", "id", Some(Owned::Job)),
    ("users", "id", Some(Owned::User)),
    // Within a row already checked: a comment of the task or instance, a resource of the
    // deployment, a variable's name, an identity link, a token of the user.
    ("comments", "comment", None),
    ("resources", "resourceId", None),
    ("resourcedata", "resourceId", None),
    ("variables", "name", None),
    ("identitylinks", "family", None),
    ("{family}", "identity", None),
    ("{identity}", "kind", None),
    ("tokens", "tokenId", None),
    // A scheduler job or trigger: its handler checks whose it is (by its job's tenant).
    ("jobs", "group", None),
    ("triggers", "group", None),
    ("{group}", "name", None),
    // A key resolves within the caller's tenant (the handler's lookup).
    ("key", "key", None),
    // The console's files.
    ("console", "file", None),
];

/// Query and body fields that name a row.
pub const FIELDS: &[(&str, Owned)] = &[
    ("deploymentId", Owned::Deployment),
    ("parentDeploymentId", Owned::Deployment),
    ("processDefinitionId", Owned::ProcessDefinition),
    ("processDefinitionIdIn", Owned::ProcessDefinition),
    ("toProcessDefinitionId", Owned::ProcessDefinition),
    ("decisionDefinitionId", Owned::DecisionDefinition),
    ("decisionDefinitionIdIn", Owned::DecisionDefinition),
    ("processInstanceId", Owned::Instance),
    ("processInstanceIds", Owned::Instance),
    ("superProcessInstanceId", Owned::Instance),
    ("superProcessInstance", Owned::Instance),
    ("subProcessInstanceId", Owned::Instance),
    ("executionId", Owned::Execution),
    ("taskId", Owned::Task),
    ("jobId", Owned::Job),
    ("jobIds", Owned::Job),
    ("externalTaskId", Owned::Job),
];

/// Route prefixes that are the node's, not a tenant's: a tenant's caller gets 403.
pub const NODE_WIDE: &[&str] = &[
    "/metrics",
    "/management/engine",
    "/management/doctor",
    "/management/unreadable-rows",
    "/history/job-log",
    "/scheduler/trigger-groups/",
    "/scheduler/calendars",
    "/scheduler/fired-triggers",
    "/scheduler/nodes",
    "/commands",
    "/outbox/",
    "/reconcile",
    "/incidents",
    "/engine-rest/incident",
    "/engine-rest/condition",
    "/identity/groups",
];

/// Body keys whose contents are the caller's data (variables, payloads), never ids to check.
fn is_data(key: &str) -> bool {
    key.ends_with("ariables") || matches!(key, "payload" | "value" | "result" | "modifications")
}

/// Whether `pattern` (a matched route) is node-wide.
pub fn node_wide(pattern: &str) -> bool {
    // A tenant's admin lists no users of other tenants: the user list is node-wide; one user
    // is checked by its tenant.
    if pattern == "/identity/users" {
        return true;
    }
    NODE_WIDE.iter().any(|p| pattern == p.trim_end_matches('/') || pattern.starts_with(p))
}

/// What a path parameter named `param` of `pattern` names, if it is listed ([`PATH`]):
/// `Some(Some(kind))` an id to check, `Some(None)` nothing to check, `None` not listed.
pub fn path_kind(pattern: &str, param: &str) -> Option<Option<Owned>> {
    let segments: Vec<&str> = pattern.split('/').collect();
    let braced = |s: &&str| s.starts_with('{') && s.trim_start_matches(['{', '*']).trim_end_matches('}') == param;
    let at = segments.iter().position(braced)?;
    let before = *segments.get(at.checked_sub(1)?)?;
    PATH.iter().find(|(b, p, _)| *b == before && *p == param).map(|(_, _, k)| *k)
}

/// A tenant's caller on a request to `pattern`: 403 for a node-wide route, 404 for an id of
/// another tenant, 403 for a `tenantId` other than theirs; the request (its body read and put
/// back) otherwise.
pub async fn guard(engine: &Engine, p: &Principal, pattern: &str, req: Request) -> Result<Request, Response> {
    let Some(tenant) = p.tenant() else { return Ok(req) };
    if node_wide(pattern) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("{pattern} is the node's, not a tenant's: it needs a credential of no tenant (yours is of tenant '{tenant}')"),
        )
        .into_response());
    }
    let (mut parts, body) = req.into_parts();
    let mut ids: Vec<(Owned, String, String)> = Vec::new();
    if let Ok(params) = RawPathParams::from_request_parts(&mut parts, &()).await {
        for (name, value) in params.iter() {
            if let Some(Some(kind)) = path_kind(pattern, name) {
                ids.push((kind, name.to_string(), value.to_string()));
            }
        }
    }
    // Read as the routes read it; a query that does not read is refused here rather than
    // passed on unchecked.
    let query: Vec<(String, String)> = serde_urlencoded::from_str(parts.uri.query().unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("bad query string: {e}")).into_response())?;
    for (name, value) in &query {
        check_tenant_field(tenant, name, Some(value)).map_err(IntoResponse::into_response)?;
        if let Some((_, kind)) = FIELDS.iter().find(|(f, _)| f == name) {
            for v in value.split(',').filter(|v| !v.is_empty()) {
                ids.push((*kind, name.clone(), v.to_string()));
            }
        }
    }
    let body = if crate::extract::is_json(&parts.headers) {
        let bytes = axum::body::to_bytes(body, crate::extract::MAX_BODY_BYTES).await.map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                format!("the request body is over {} bytes", crate::extract::MAX_BODY_BYTES),
            )
            .into_response()
        })?;
        if let Ok(json) = serde_json::from_slice::<Json>(&bytes) {
            collect(tenant, &json, 0, &mut ids).map_err(IntoResponse::into_response)?;
        }
        axum::body::Body::from(bytes)
    } else {
        body
    };
    if ids.len() > MAX_IDS {
        return Err(ApiError::invalid("ids", format!("a request may name at most {MAX_IDS} ids")).into_response());
    }
    for (kind, field, id) in &ids {
        match engine.processes().owner(*kind, id).await {
            Ok(Some(t)) if t != tenant => return Err(not_theirs(field, id)),
            Ok(_) => {}
            Err(e) => return Err(ApiError::from(e).into_response()),
        }
    }
    Ok(Request::from_parts(parts, body))
}

/// At most this many ids are checked for one request (each is one lookup).
const MAX_IDS: usize = 1000;

/// How deep into a JSON body ids are looked for (`{"topics": [{"processDefinitionId": …}]}`).
const MAX_DEPTH: usize = 4;

fn collect(tenant: &str, v: &Json, depth: usize, out: &mut Vec<(Owned, String, String)>) -> Result<(), ApiError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    match v {
        Json::Object(map) => {
            for (k, v) in map {
                if is_data(k) {
                    continue;
                }
                if k == "tenantId" || k == "tenant-id" || k == "tenantIdIn" {
                    check_tenant_value(tenant, k, v)?;
                    continue;
                }
                if let Some((_, kind)) = FIELDS.iter().find(|(f, _)| f == k) {
                    match v {
                        Json::String(s) => out.push((*kind, k.clone(), s.clone())),
                        Json::Array(items) => {
                            out.extend(
                                items.iter().filter_map(Json::as_str).map(|s| (*kind, k.clone(), s.to_string())),
                            );
                        }
                        _ => {}
                    }
                    continue;
                }
                collect(tenant, v, depth + 1, out)?;
            }
        }
        Json::Array(items) => {
            for item in items {
                collect(tenant, item, depth + 1, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A tenant's caller may name its own tenant, and no other.
fn check_tenant_field(tenant: &str, name: &str, value: Option<&str>) -> Result<(), ApiError> {
    if !matches!(name, "tenantId" | "tenant-id" | "tenantIdIn") {
        return Ok(());
    }
    match value {
        Some(v) if v.split(',').any(|t| t != tenant) => Err(other_tenant(name, tenant)),
        _ => Ok(()),
    }
}

fn check_tenant_value(tenant: &str, name: &str, v: &Json) -> Result<(), ApiError> {
    match v {
        Json::Null => Ok(()),
        Json::String(s) => check_tenant_field(tenant, name, Some(s)),
        Json::Array(items) if items.iter().all(|i| i.as_str() == Some(tenant)) => Ok(()),
        _ => Err(other_tenant(name, tenant)),
    }
}

fn other_tenant(field: &str, tenant: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        format!("{field}: your credential is of tenant '{tenant}' and acts in no other"),
    )
}

fn not_theirs(field: &str, id: &str) -> Response {
    // The same answer as for an id that does not exist: another tenant's rows are not there.
    ApiError::not_found(format!("{field} '{id}' does not exist")).into_response()
}

/// The tenant a handler lists and resolves keys in: the caller's, for a tenant's caller;
/// otherwise the one the request names (`None`: every tenant for a list, no tenant for a key).
#[derive(Debug, Clone, Default)]
pub struct Scope(pub Option<String>);

impl Scope {
    /// The tenant to filter a list by: the caller's, else `requested`.
    pub fn filter<'a>(&'a self, requested: Option<&'a str>) -> Option<&'a str> {
        self.0.as_deref().or(requested)
    }

    /// The tenant a key resolves in and a new row is made in: the caller's, else
    /// `requested`, else none (`''`).
    pub fn tenant<'a>(&'a self, requested: Option<&'a str>) -> &'a str {
        self.filter(requested).unwrap_or("")
    }

    /// The tenant a new row (a deployment, a standalone job) is made in: the caller's, for a
    /// tenant's caller, who may name no other (`field` says where it was named); otherwise the
    /// one requested, else none (`''`).
    pub fn creating(&self, field: &'static str, requested: Option<&str>) -> Result<String, ApiError> {
        let requested = requested.filter(|t| !t.is_empty());
        match (&self.0, requested) {
            (Some(mine), Some(other)) if mine != other => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("{field}: your credential is of tenant '{mine}' and acts in no other"),
            )),
            (Some(mine), _) => Ok(mine.clone()),
            (None, t) => {
                let t = t.unwrap_or("");
                if t.chars().count() > 255 || t.contains('\0') {
                    return Err(ApiError::invalid(field, format!("{field}: at most 255 characters, no NUL")));
                }
                Ok(t.to_string())
            }
        }
    }

    /// A list the store cannot narrow to a tenant is open to a tenant's caller only for a row
    /// they name (an instance or task id, which the guard has checked): `named` says whether
    /// the request names one; `field` is the one to ask for.
    pub fn names_a_row(&self, named: bool, field: &'static str) -> Result<(), ApiError> {
        match &self.0 {
            Some(mine) if !named => Err(ApiError::invalid(
                field,
                format!("{field} is required: a credential of tenant '{mine}' lists these for one instance or task"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether a row of `tenant` is visible to this caller.
    pub fn sees(&self, tenant: &str) -> bool {
        self.0.as_deref().is_none_or(|t| t == tenant)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Scope {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Scope, Self::Rejection> {
        Ok(Scope(parts.extensions.get::<Principal>().and_then(|p| p.tenant()).map(str::to_owned)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_parameter_is_classified() {
        let doc: Json = serde_json::from_str(include_str!("../openapi.json")).unwrap();
        for pattern in doc["paths"].as_object().unwrap().keys() {
            if node_wide(pattern) {
                continue;
            }
            for seg in pattern.split('/').filter(|s| s.starts_with('{')) {
                let param = seg.trim_start_matches('{').trim_end_matches('}');
                assert!(path_kind(pattern, param).is_some(), "{pattern}: {{{param}}} is not in tenancy::PATH");
            }
        }
    }

    #[test]
    fn node_wide_routes_are_the_nodes() {
        assert!(!node_wide("/scheduler/triggers"));
        assert!(!node_wide("/scheduler/triggers/{group}/{name}"));
        assert!(node_wide("/scheduler/trigger-groups/{group}"));
        assert!(node_wide("/scheduler/calendars/{name}"));
        assert!(!node_wide("/scheduler/cron/next"));
        assert!(node_wide("/incidents/{id}"));
        assert!(node_wide("/identity/users"));
        assert!(!node_wide("/identity/users/{id}"));
        assert!(!node_wide("/runtime/tasks"));
        assert_eq!(path_kind("/runtime/tasks/{id}/comments/{comment}", "id"), Some(Some(Owned::Task)));
        assert_eq!(path_kind("/runtime/tasks/{id}/comments/{comment}", "comment"), Some(None));
        assert_eq!(path_kind("/engine-rest/process-definition/key/{key}", "key"), Some(None));
    }

    #[test]
    fn scope_narrows_a_tenants_caller_only() {
        let mine = Scope(Some("a".into()));
        assert_eq!(mine.filter(Some("b")), Some("a"));
        assert_eq!(mine.tenant(None), "a");
        assert!(mine.sees("a") && !mine.sees("") && !mine.sees("b"));
        let all = Scope(None);
        assert_eq!(all.filter(Some("b")), Some("b"));
        assert_eq!(all.filter(None), None);
        assert_eq!(all.tenant(None), "");
        assert!(all.sees("b"));
    }
}
