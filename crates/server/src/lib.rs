//! The HTTP API of kairos (SPEC I3, API.md): an axum router over one [`kairos::Engine`].
//!
//! The app lives in the library and is tested in-process (axum's `testing` example): build
//! [`router`] and drive it with `tower::ServiceExt::oneshot`, no socket needed. [`serve`] runs
//! it on a listener until a shutdown signal, finishing requests in flight.
//!
//! Open to whoever reaches the socket unless the node has an API token ([`access`]); without
//! one, web pages are kept out by `Host` and `Origin` checks ([`site`]). [`serve_with`] bounds
//! what one connection may hold: header and body read timeouts and a connection limit
//! ([`conn`]).
//!
//! Every failure leaves as `{"error": {"code", "message"}}` ([`error::ApiError`]): a 4xx names
//! the field that was wrong and nothing is written; a 5xx leaks nothing and logs the detail.
//!
//! | route | does |
//! |---|---|
//! | `GET /`, `GET /console/{file}` | the web console ([`console`]): one page over this API, embedded in the binary |
//! | `GET /health` | node, store, 503 when the database does not answer |
//! | `GET /openapi.json` | this API as an OpenAPI 3.1 document |
//! | `GET /metrics` | Prometheus (OpenMetrics) text: executor metrics, job gauges |
//! | `GET /management/engine` | this node's settings and handlers, the cluster's nodes |
//! | `GET /management/doctor?businessKey=&processInstanceId=` | [`kairos::doctor`] findings |
//! | `GET /management/unreadable-rows?size=` | stored rows kairos cannot read: table, id, column, text |
//! | `GET, POST /management/jobs` | list (filters, paging) / enqueue (201) |
//! | `GET /management/timer-jobs` | the waiting timers |
//! | `GET, POST, DELETE /management/jobs/{id}` | one job / `{"action": "execute"}` / delete (`?force=true`) |
//! | `GET /management/jobs/{id}/exception-stacktrace` | text/plain |
//! | `GET /management/deadletter-jobs` | dead letters |
//! | `GET, POST, DELETE /management/deadletter-jobs/{id}` | one / `{"action": "move", "retries"?}` / delete |
//! | `GET /management/deadletter-jobs/{id}/exception-stacktrace` | text/plain |
//! | `GET /history/job-log?jobId=&processInstanceId=` | every attempt, oldest first |
//! | `GET, POST /repository/deployments` | deployments (Flowable's filters) / deploy one BPMN document (application/xml) or a multipart form of files (201) |
//! | `GET, DELETE /repository/deployments/{id}` | one / delete (`?cascade=true`: its running instances and history too) |
//! | `GET /repository/deployments/{id}/resources`, `…/resources/{resourceId}`, `…/resourcedata/{resourceId}` | its resources, one, its bytes |
//! | `GET /repository/process-definitions?key=&latest=` | definitions |
//! | `GET, PUT /repository/process-definitions/{id}` | one / `{"action": "suspend"\|"activate"}` |
//! | `GET /repository/process-definitions/{id}/resourcedata` | the deployed XML |
//! | `POST /repository/process-definitions/{id}/migrate` | moves all its running instances, each on its own (SPEC P13) |
//! | `GET, POST /runtime/process-instances` | running instances / start one (201) |
//! | `GET, PUT, DELETE /runtime/process-instances/{id}` | one / `{"action": "suspend"\|"activate"}` / delete (`?deleteReason=`) |
//! | `GET, PUT /runtime/process-instances/{id}/variables` | the instance's variables (a JSON object) |
//! | `POST /runtime/process-instances/{id}/migrate` | moves it to another definition version with `activityMappings` (SPEC P13) |
//! | `GET /runtime/executions?processInstanceId=` | the execution tree |
//! | `GET /runtime/tasks`, `GET, POST /runtime/tasks/{id}` | open tasks / one / `{"action": "complete"\|"claim"}` |
//! | `GET, PUT /runtime/tasks/{id}/variables?scope=local\|global` | what a task sees / sets: task-local ones (SPEC P6) or its execution's |
//! | `POST /runtime/messages`, `POST /runtime/signals` | deliver a message / broadcast a signal |
//! | `POST /external-job-api/acquire/jobs`, `POST …/acquire/jobs/{id}/complete`, `/fail`, `/bpmnError`, `/cmmnTerminate` | external workers (SPEC I4), in Flowable's wire: fetch and lock, then report |
//! | `GET /external-job-api/jobs`, `GET /external-job-api/jobs/{id}` | the external worker jobs |
//! | `GET /history/historic-process-instances`, `…-activity-instances`, `…-task-instances` | process history |
//! | `GET /history/historic-detail?processInstanceId=&executionId=&activityInstanceId=&taskId=` | every variable change (history level `full`) |
//! | `POST, GET /scheduler/jobs`, `GET, PUT, DELETE /scheduler/jobs/{group}/{name}` | job details (PUT: pause/resume its triggers) |
//! | `POST, GET /scheduler/triggers`, `GET, PUT, DELETE /scheduler/triggers/{group}/{name}` | triggers (PUT: pause/resume) |
//! | `PUT /scheduler/trigger-groups/{group}` | pause/resume a trigger group |
//! | `GET /scheduler/calendars`, `GET, PUT, DELETE /scheduler/calendars/{name}` | calendars |
//! | `GET /scheduler/fired-triggers`, `GET /scheduler/nodes` | firings under way, node check-ins |
//! | `POST /scheduler/cron/next` | the next fire times of a Quartz cron expression |
//! | `GET /form/form-data?taskId=` | a task's form: its fields from the model with their values (Flowable's `FormDataResponse`) |
//! | `POST /auth/login`, `GET /auth/session`, `POST /auth/logout` | console sessions: a cookie (HttpOnly, SameSite=Strict) and the CSRF token of requests that change anything |
//! | `GET, POST /identity/users`, `GET, PUT, DELETE /identity/users/{userId}` | users (Flowable's identity REST; passwords stored as Argon2id hashes, never answered) |
//! | `GET, POST /identity/users/{userId}/tokens`, `DELETE …/tokens/{tokenId}` | a user's API tokens (the token shown once, kept as its SHA-256) |
//! | `GET, POST /identity/groups`, `GET, PUT, DELETE /identity/groups/{groupId}` | groups |
//! | `POST /identity/groups/{groupId}/members`, `DELETE …/members/{userId}` | memberships: a user's candidate tasks include their groups' |
//! | `/engine-rest/…` | Camunda 7's REST API: external tasks, deployments, definitions, instances, tasks, messages, history ([`routes::camunda`], docs/camunda.md) |

pub mod access;
pub mod authz;
pub mod conn;
pub mod console;
pub mod dto;
pub mod error;
pub mod extract;
pub mod flowable;
pub mod metrics;
pub mod routes;
pub mod site;
pub mod tenancy;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use kairos::Engine;
use routes::processes::{self, repository, tasks};
use routes::{deadletter, health, history, jobs, management, openapi, outbox, scheduler};
use std::future::Future;
use std::sync::Arc;

pub use conn::{ConnLimits, RESERVED_DESCRIPTORS, descriptor_limit, raise_descriptor_limit};
pub use error::ApiError;
pub use site::SitePolicy;

/// What every handler shares: the engine (its store, handlers, metrics and settings).
#[derive(Debug, Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
}

/// Who may use the API: the holders of `token` and, with `users`, users with their
/// credentials ([`access`], roles by [`authz`]); with neither, whoever reaches the socket from
/// outside a web page the [`site`] policy does not allow.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub token: Option<String>,
    /// Users authenticate with their password (HTTP Basic) or API tokens.
    pub users: bool,
    /// Console session cookies are always `Secure` (behind a TLS proxy that does not say
    /// `X-Forwarded-Proto: https`).
    pub secure_cookies: bool,
    pub site: SitePolicy,
}

/// The whole API for a node without a token: web pages of other sites are refused ([`site`]),
/// everyone else gets in.
pub fn router(engine: Arc<Engine>) -> Router {
    router_for(engine, &Access::default())
}

/// The API guarded as `access` says.
pub fn router_for(engine: Arc<Engine>, access: &Access) -> Router {
    let api = routes(engine.clone(), access);
    let guarded = if access.token.is_some() || access.users {
        api
    } else {
        api.layer(axum::middleware::from_fn_with_state(Arc::new(access.site.clone()), site::same_site))
    };
    guarded.layer(axum::middleware::from_fn(routes::camunda::camunda_face))
}

/// Every route, each behind authentication when `access` asks for it: a route layer, so it
/// runs once the route is matched and [`authz`] decides by the route's pattern.
fn routes(engine: Arc<Engine>, access: &Access) -> Router {
    let router = all_routes();
    let router = if access.token.is_some() || access.users {
        let mut auth = access::Auth::new(engine.clone(), access.token.as_deref(), access.users);
        auth.secure_cookies = access.secure_cookies;
        let auth = Arc::new(auth);
        router.route_layer(axum::middleware::from_fn_with_state(auth, access::authenticate))
    } else {
        router
    };
    router
        .fallback(error::no_route)
        .method_not_allowed_fallback(error::wrong_method)
        .layer(DefaultBodyLimit::max(extract::MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(access_log))
        .with_state(AppState { engine })
}

/// Every route, unguarded.
fn all_routes() -> Router<AppState> {
    Router::new()
        .route("/", get(console::index))
        .route("/console/{*file}", get(console::file))
        .route("/health", get(health::health))
        .route("/openapi.json", get(openapi::document))
        .route("/metrics", get(metrics::metrics))
        .route("/management/engine", get(management::engine))
        .route("/management/doctor", get(management::doctor))
        .route("/management/unreadable-rows", get(management::unreadable))
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
        .route(
            "/repository/deployments",
            get(repository::deployments)
                .post(repository::deploy)
                .layer(DefaultBodyLimit::max(repository::DEPLOY_MAX_BODY_BYTES)),
        )
        .route("/repository/deployments/{id}", get(repository::deployment).delete(repository::delete_deployment))
        .route("/repository/deployments/{id}/resources", get(repository::resources))
        .route("/repository/deployments/{id}/resources/{resourceId}", get(repository::resource_of_deployment))
        .route("/repository/deployments/{id}/resourcedata/{resourceId}", get(repository::resource_data))
        .route("/repository/process-definitions", get(repository::definitions))
        .route("/repository/process-definitions/{id}", get(repository::definition).put(repository::update_definition))
        .route("/repository/process-definitions/{id}/resourcedata", get(repository::resource))
        .route("/repository/process-definitions/{id}/migrate", post(processes::migrate_all))
        .route("/runtime/process-instances", get(processes::list).post(processes::start))
        .route("/bindings", get(processes::bindings))
        .route("/commands", get(routes::commands::list).post(routes::commands::submit))
        .route("/commands/{id}", get(routes::commands::get))
        .route("/reconcile", post(routes::incidents::reconcile))
        .route("/incidents", get(routes::incidents::list))
        .route("/incidents/{id}", get(routes::incidents::get))
        .route("/incidents/{id}/approve", post(routes::incidents::approve))
        .route("/incidents/{id}/execute", post(routes::incidents::execute))
        .route("/incidents/{id}/close", post(routes::incidents::close))
        .route("/outbox/events", get(outbox::list).post(outbox::create))
        .route("/outbox/events/{id}", get(outbox::get))
        .route("/outbox/events/{id}/retry", post(outbox::retry))
        .route("/runtime/process-instances/{id}", get(processes::get).put(processes::update).delete(processes::delete))
        .route(
            "/runtime/process-instances/{id}/variables",
            get(processes::get_variables).put(processes::put_variables).post(processes::post_variables),
        )
        .route("/runtime/process-instances/{id}/migrate", post(processes::migrate))
        .route("/runtime/process-instances/{id}/terminate", post(processes::terminate))
        .route("/runtime/process-instances/{id}/termination", get(processes::termination))
        .route("/runtime/executions", get(processes::executions))
        .route("/runtime/executions/{id}", get(processes::execution).put(processes::act_execution))
        .route("/runtime/tasks", get(tasks::list))
        .route("/runtime/tasks/{id}", get(tasks::get).post(tasks::act).put(tasks::update))
        .route("/runtime/tasks/{id}/identitylinks", get(tasks::identity_links).post(tasks::add_identity_link))
        .route("/runtime/tasks/{id}/comments", get(processes::comments::task_list).post(processes::comments::task_add))
        .route(
            "/runtime/tasks/{id}/comments/{comment}",
            get(processes::comments::task_get).delete(processes::comments::task_delete),
        )
        .route(
            "/history/historic-process-instances/{id}/comments",
            get(processes::comments::instance_list).post(processes::comments::instance_add),
        )
        .route(
            "/history/historic-process-instances/{id}/comments/{comment}",
            get(processes::comments::instance_get).delete(processes::comments::instance_delete),
        )
        .route("/runtime/tasks/{id}/identitylinks/{family}", get(tasks::identity_links_of))
        .route(
            "/runtime/tasks/{id}/identitylinks/{family}/{identity}/{kind}",
            axum::routing::delete(tasks::delete_identity_link),
        )
        .route(
            "/runtime/tasks/{id}/variables",
            get(tasks::get_variables).put(tasks::put_variables).post(tasks::post_variables),
        )
        .route("/runtime/messages", post(processes::message))
        .route("/runtime/signals", post(processes::signal))
        .route("/external-job-api/acquire/jobs", post(processes::external::acquire))
        .route("/external-job-api/acquire/jobs/{id}/complete", post(processes::external::complete))
        .route("/external-job-api/acquire/jobs/{id}/fail", post(processes::external::fail))
        .route("/external-job-api/acquire/jobs/{id}/bpmnError", post(processes::external::bpmn_error))
        .route("/external-job-api/acquire/jobs/{id}/cmmnTerminate", post(processes::external::cmmn_terminate))
        .route("/external-job-api/acquire/jobs/{id}/extend-lock", post(processes::external::extend_lock))
        .route("/external-job-api/unacquire/jobs", post(processes::external::unacquire_all))
        .route("/external-job-api/unacquire/jobs/{id}", post(processes::external::unacquire))
        .route("/external-job-api/jobs", get(processes::external::list))
        .route("/external-job-api/jobs/{id}", get(processes::external::get))
        .route("/query/process-instances", post(processes::query::process_instances))
        .route("/query/tasks", post(processes::query::tasks))
        .route("/query/executions", post(processes::query::executions))
        .route("/query/historic-process-instances", post(processes::query::historic_process_instances))
        .route("/query/historic-activity-instances", post(processes::query::historic_activity_instances))
        .route("/query/historic-task-instances", post(processes::query::historic_task_instances))
        .route("/query/historic-variable-instances", post(processes::query::historic_variable_instances))
        .route("/query/historic-detail", post(processes::query::historic_detail))
        .route("/history/historic-process-instances", get(processes::history::instances))
        .route("/history/historic-process-instances/{id}", get(processes::history::instance))
        .route("/history/historic-variable-instances", get(processes::history::variables))
        .route("/history/historic-activity-instances", get(processes::history::activities))
        .route("/history/historic-task-instances", get(processes::history::tasks))
        .route("/history/historic-detail", get(processes::history::details))
        .route("/scheduler/cron/next", post(scheduler::cron_next))
        .route("/scheduler/jobs", get(scheduler::jobs).post(scheduler::add_job))
        .route(
            "/scheduler/jobs/{group}/{name}",
            get(scheduler::job).put(scheduler::act_job).delete(scheduler::delete_job),
        )
        .route("/scheduler/triggers", get(scheduler::triggers).post(scheduler::schedule))
        .route(
            "/scheduler/triggers/{group}/{name}",
            get(scheduler::trigger).put(scheduler::act_trigger).delete(scheduler::unschedule),
        )
        .route("/scheduler/trigger-groups/{group}", axum::routing::put(scheduler::act_group))
        .route("/scheduler/calendars", get(scheduler::calendars))
        .route(
            "/scheduler/calendars/{name}",
            get(scheduler::calendar).put(scheduler::put_calendar).delete(scheduler::delete_calendar),
        )
        .route("/scheduler/fired-triggers", get(scheduler::fired))
        .route("/scheduler/nodes", get(scheduler::nodes))
        .route("/form/form-data", get(routes::forms::form_data))
        .route("/auth/login", post(routes::auth::login))
        .route("/auth/session", get(routes::auth::session))
        .route("/auth/logout", post(routes::auth::logout))
        .route("/identity/users", get(routes::identity::users).post(routes::identity::create_user))
        .route(
            "/identity/users/{id}",
            get(routes::identity::user).put(routes::identity::update_user).delete(routes::identity::delete_user),
        )
        .route("/identity/users/{id}/tokens", get(routes::identity::tokens).post(routes::identity::create_token))
        .route("/identity/users/{id}/tokens/{tokenId}", axum::routing::delete(routes::identity::revoke_token))
        .route("/identity/groups", get(routes::identity::groups).post(routes::identity::create_group))
        .route(
            "/identity/groups/{id}",
            get(routes::identity::group).put(routes::identity::update_group).delete(routes::identity::delete_group),
        )
        .route("/identity/groups/{id}/members", post(routes::identity::add_member))
        .route("/identity/groups/{id}/members/{userId}", axum::routing::delete(routes::identity::remove_member))
        .route("/dmn-api/dmn-repository/decisions", get(routes::dmn::decisions))
        .route("/dmn-api/dmn-repository/decisions/{id}", get(routes::dmn::decision))
        .route("/dmn-api/dmn-repository/decisions/{id}/resourcedata", get(routes::dmn::resource))
        .route("/dmn-api/dmn-rule/execute", post(routes::dmn::execute))
        .route("/dmn-api/dmn-rule/execute-decision", post(routes::dmn::execute))
        .route("/dmn-api/dmn-rule/execute/single-result", post(routes::dmn::execute_single))
        .route("/dmn-api/dmn-rule/execute-decision/single-result", post(routes::dmn::execute_single))
        .route("/dmn-api/dmn-rule/execute-decision-service", post(routes::dmn::execute_decision_service))
        .route("/dmn-api/dmn-rule/execute-decision-service/single-result", post(routes::dmn::execute_decision_service))
        .nest("/engine-rest", routes::camunda::router())
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

/// The API for callers presenting `token` only (`Authorization: Bearer TOKEN`; see
/// [`access`]); `GET /health` and `GET /openapi.json` stay open.
pub fn router_with_token(engine: Arc<Engine>, token: &str) -> Router {
    router_for(engine, &Access { token: Some(token.to_string()), ..Access::default() })
}

/// Serves the API on `listener` until `shutdown` completes, then stops taking connections and
/// lets requests in flight finish. Stopping the engine's executor is the caller's business,
/// after this returns.
pub async fn serve(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(engine, listener, shutdown, &Access::default(), ConnLimits::default()).await
}

/// [`serve`], open to everyone who reaches `listener` or, with `token`, to its holders only.
pub async fn serve_with_token(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    token: Option<&str>,
) -> std::io::Result<()> {
    let access = Access { token: token.map(str::to_string), ..Access::default() };
    serve_with(engine, listener, shutdown, &access, ConnLimits::default()).await
}

/// [`serve`] guarded as `access` says, each connection bounded by `limits`.
pub async fn serve_with(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    access: &Access,
    limits: ConnLimits,
) -> std::io::Result<()> {
    let (token, users) = (access.token.is_some(), access.users);
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, node = engine.node_id(), token, users, "HTTP API listening");
        if !token && !users && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "the HTTP API listens beyond loopback without a token: anyone who reaches it can start, \
                 change and delete work; set KAIROS_API_TOKEN (kairos serve --api-token)"
            );
        }
    }
    let router = router_for(engine.clone(), access);
    // Long-polling fetches (Camunda's asyncResponseTimeout) answer at once when the API stops,
    // so that draining the requests in flight does not wait for them.
    let shutdown = async move {
        shutdown.await;
        engine.processes().end_fetch_waits();
    };
    conn::serve(listener, router, shutdown, limits).await
}
