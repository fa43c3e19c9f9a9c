//! What each role may call (SPEC I7), decided by the route a request matched (axum's
//! `MatchedPath`: the pattern, `/runtime/tasks/{id}`, never the raw path, so no spelling of a
//! path reaches a route under another rule).
//!
//! * open: `GET /health`, `GET /openapi.json`, `POST /auth/login`, the console's files;
//! * **user**: their tasklist — the Flowable and Camunda task routes, each task only when it is theirs
//!   (assigned to them, or unclaimed with them or one of their groups as candidate: any other
//!   task answers 404, as if it did not exist) — and their own user and API tokens;
//! * **admin**: deploying and deleting deployments, migrating, deleting and terminating
//!   instances, acting on dead letters, users and groups, approving and running incidents;
//! * **operator**: everything else (jobs, instances, triggers, external workers, history).
//!
//! A route not named here needs an operator: a new route is closed to users until it is put
//! on their list.

use crate::error::ApiError;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use kairos::Engine;
use kairos::identity::{Principal, Role};

/// What a route needs of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Nobody needs to authenticate.
    Open,
    /// The caller is named when their credentials hold, and let through anyway (who am I?).
    Optional,
    /// A caller of at least this role.
    Role(Role),
    /// A user, for a task of theirs (`{id}` in the route): other tasks answer 404.
    OwnTask,
    /// A user, for a list the route narrows to their tasks (it reads the principal).
    OwnTasks,
    /// A user, for a task of theirs named by the `taskId` query parameter.
    OwnTaskQuery,
    /// A user for their own user (`{id}`), else an admin.
    SelfOrAdmin,
}

/// The user's task routes: `(method, pattern)`.
const TASKLIST: &[(&str, &str)] = &[
    ("GET", "/runtime/tasks/{id}"),
    ("POST", "/runtime/tasks/{id}"),
    ("GET", "/runtime/tasks/{id}/variables"),
    ("PUT", "/runtime/tasks/{id}/variables"),
    ("POST", "/runtime/tasks/{id}/variables"),
    ("GET", "/runtime/tasks/{id}/comments"),
    ("POST", "/runtime/tasks/{id}/comments"),
    ("GET", "/runtime/tasks/{id}/identitylinks"),
    ("GET", "/runtime/tasks/{id}/identitylinks/{family}"),
    ("GET", "/engine-rest/task/{id}"),
    ("POST", "/engine-rest/task/{id}/claim"),
    ("POST", "/engine-rest/task/{id}/unclaim"),
    ("POST", "/engine-rest/task/{id}/complete"),
    ("GET", "/engine-rest/task/{id}/variables"),
    ("GET", "/engine-rest/task/{id}/form-variables"),
];

/// Admin-only routes: `(method, pattern)`; `*` is any method.
const ADMIN: &[(&str, &str)] = &[
    ("POST", "/repository/deployments"),
    ("DELETE", "/repository/deployments/{id}"),
    ("POST", "/repository/process-definitions/{id}/migrate"),
    ("POST", "/runtime/process-instances/{id}/migrate"),
    ("DELETE", "/runtime/process-instances/{id}"),
    ("POST", "/runtime/process-instances/{id}/terminate"),
    ("POST", "/management/deadletter-jobs/{id}"),
    ("DELETE", "/management/deadletter-jobs/{id}"),
    ("POST", "/reconcile"),
    ("POST", "/incidents/{id}/approve"),
    ("POST", "/incidents/{id}/execute"),
    ("POST", "/incidents/{id}/close"),
    ("*", "/identity/users"),
    ("PUT", "/identity/users/{id}"),
    ("DELETE", "/identity/users/{id}"),
    ("*", "/identity/groups"),
    ("*", "/identity/groups/{id}"),
    ("*", "/identity/groups/{id}/members"),
    ("*", "/identity/groups/{id}/members/{userId}"),
    ("POST", "/engine-rest/deployment/create"),
    ("DELETE", "/engine-rest/deployment/{id}"),
    ("DELETE", "/engine-rest/process-instance/{id}"),
    // Setting retries moves a dead letter back, as POST /management/deadletter-jobs/{id} does.
    ("PUT", "/engine-rest/job/{id}/retries"),
];

/// Routes of a user about themselves: `(method, pattern)`.
const SELF: &[(&str, &str)] = &[
    ("GET", "/identity/users/{id}"),
    ("GET", "/identity/users/{id}/tokens"),
    ("POST", "/identity/users/{id}/tokens"),
    ("DELETE", "/identity/users/{id}/tokens/{tokenId}"),
];

fn listed(list: &[(&str, &str)], method: &Method, pattern: &str) -> bool {
    list.iter().any(|(m, p)| *p == pattern && (*m == "*" || *m == method.as_str()))
}

/// What a request to `pattern` (the route it matched) with `method` needs.
pub fn need(method: &Method, pattern: &str) -> Need {
    match pattern {
        "/health" | "/openapi.json" | "/auth/login" | "/" | "/console/{*file}" => Need::Open,
        "/auth/session" => Need::Optional,
        "/auth/logout" => Need::Role(Role::User),
        "/runtime/tasks" | "/engine-rest/task" | "/engine-rest/task/count" if method == Method::GET => Need::OwnTasks,
        "/form/form-data" if method == Method::GET => Need::OwnTaskQuery,
        _ if listed(TASKLIST, method, pattern) => Need::OwnTask,
        _ if listed(SELF, method, pattern) => Need::SelfOrAdmin,
        _ if listed(ADMIN, method, pattern) => Need::Role(Role::Admin),
        _ => Need::Role(Role::Operator),
    }
}

/// The `n`th segment of the request's path (`/runtime/tasks/X` → 3 is `X`), when it is plain
/// (no percent-encoding: an encoded id is refused rather than decoded here and again by the
/// route, so the id checked is the id used).
fn segment(req: &Request, n: usize) -> Option<&str> {
    req.uri().path().split('/').nth(n).filter(|s| !s.is_empty() && !s.contains('%'))
}

fn forbidden(p: &Principal, need: Role) -> Response {
    let who = p.user_id.as_deref().unwrap_or("the node's token");
    let role = |r: Role| match r {
        Role::User => "user",
        Role::Operator => "operator",
        Role::Admin => "admin",
    };
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        format!(
            "this route needs the {} role; {who} has the {} role (roles come from the groups {} and {})",
            role(need),
            role(p.role),
            kairos::identity::ADMIN_GROUP,
            kairos::identity::OPERATOR_GROUP
        ),
    )
    .into_response()
}

/// Lets a user through to task `id` when it is theirs; any other (or none) answers 404, as
/// if it did not exist.
async fn own_task(engine: &Engine, id: Option<&str>, user: &str) -> Result<(), Response> {
    let not_found = || ApiError::not_found("there is no such open task of yours").into_response();
    let Some(id) = id else { return Err(not_found()) };
    match engine.processes().task_is_users(id, user).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(not_found()),
        Err(e) => Err(ApiError::from(e).into_response()),
    }
}

/// Lets `p` through to a route that needs `need`, or answers why not: 403 for a role too low,
/// 404 for a task that is not the user's (as if it did not exist).
pub async fn allow(engine: &Engine, p: &Principal, need: Need, req: &mut Request) -> Result<(), Response> {
    match need {
        Need::Open | Need::Optional => Ok(()),
        Need::Role(r) if p.role >= r => Ok(()),
        Need::Role(r) => Err(forbidden(p, r)),
        Need::OwnTask | Need::OwnTasks | Need::OwnTaskQuery if p.role >= Role::Operator => Ok(()),
        Need::OwnTaskQuery => {
            let Some(user) = p.user_id.as_deref() else { return Err(forbidden(p, Role::Operator)) };
            // Read as the route reads it (the same decoding), so the id checked is the id used.
            let q: Result<crate::routes::forms::FormQuery, _> =
                serde_urlencoded::from_str(req.uri().query().unwrap_or(""));
            let id = q.ok().and_then(|q| q.task_id).filter(|t| !t.is_empty());
            own_task(engine, id.as_deref(), user).await
        }
        Need::OwnTasks if p.user_id.is_some() => Ok(()),
        Need::OwnTasks => Err(forbidden(p, Role::Operator)),
        Need::OwnTask => {
            let Some(user) = p.user_id.as_deref() else { return Err(forbidden(p, Role::Operator)) };
            // `/runtime/tasks/{id}…` and `/engine-rest/task/{id}…`: the id is the third segment.
            own_task(engine, segment(req, 3), user).await
        }
        Need::SelfOrAdmin if p.role >= Role::Admin => Ok(()),
        Need::SelfOrAdmin => match (segment(req, 3), p.user_id.as_deref()) {
            (Some(id), Some(me)) if id == me => Ok(()),
            _ => Err(forbidden(p, Role::Admin)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_pattern_is_a_route_of_the_document() {
        let doc: serde_json::Value = serde_json::from_str(include_str!("../openapi.json")).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        for (m, p) in TASKLIST.iter().chain(ADMIN).chain(SELF) {
            let ops = paths.get(*p).unwrap_or_else(|| panic!("{p} is not a route"));
            assert!(*m == "*" || ops.get(m.to_lowercase()).is_some(), "{m} {p} is not a route");
        }
    }

    #[test]
    fn users_reach_their_tasklist_only_and_admins_guard_the_dangerous_routes() {
        assert_eq!(need(&Method::GET, "/health"), Need::Open);
        assert_eq!(need(&Method::GET, "/runtime/tasks"), Need::OwnTasks);
        assert_eq!(need(&Method::GET, "/engine-rest/task/count"), Need::OwnTasks);
        assert_eq!(need(&Method::POST, "/engine-rest/task/{id}/complete"), Need::OwnTask);
        assert_eq!(need(&Method::POST, "/engine-rest/task/{id}/assignee"), Need::Role(Role::Operator));
        assert_eq!(need(&Method::POST, "/runtime/tasks/{id}"), Need::OwnTask);
        assert_eq!(need(&Method::PUT, "/runtime/tasks/{id}"), Need::Role(Role::Operator));
        assert_eq!(need(&Method::GET, "/management/jobs"), Need::Role(Role::Operator));
        assert_eq!(need(&Method::GET, "/management/deadletter-jobs/{id}"), Need::Role(Role::Operator));
        assert_eq!(need(&Method::POST, "/management/deadletter-jobs/{id}"), Need::Role(Role::Admin));
        assert_eq!(need(&Method::POST, "/repository/deployments"), Need::Role(Role::Admin));
        assert_eq!(need(&Method::GET, "/repository/deployments"), Need::Role(Role::Operator));
        assert_eq!(need(&Method::GET, "/identity/users"), Need::Role(Role::Admin));
        assert_eq!(need(&Method::GET, "/identity/users/{id}"), Need::SelfOrAdmin);
        assert_eq!(need(&Method::PUT, "/identity/users/{id}"), Need::Role(Role::Admin));
        assert_eq!(need(&Method::GET, "/engine-rest/task"), Need::OwnTasks);
        assert_eq!(need(&Method::PUT, "/engine-rest/job/{id}/retries"), Need::Role(Role::Admin));
        assert_eq!(need(&Method::POST, "/some/new/route"), Need::Role(Role::Operator));
    }
}
