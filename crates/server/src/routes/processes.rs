//! The process API (API.md "Processes", SPEC P), in Flowable's REST shapes:
//!
//! * [`repository`]: `POST /repository/deployments`, `/repository/process-definitions…`
//! * this module: `/runtime/process-instances…`, `/runtime/executions`, `/runtime/messages`,
//!   `/runtime/signals`
//! * [`tasks`]: `/runtime/tasks` and `/runtime/tasks/{id}`
//! * [`history`]: `/history/historic-process-instances`, `…-activity-instances`, `…-task-instances`
//!
//! Every body and query is checked here before the engine is asked (unknown fields refused,
//! `variables` must be an object of valid names, lengths fit their columns), so a bad request
//! answers 4xx naming the field and writes nothing. Lists are `{"data", "total", "start", "size"}`.

pub mod comments;
pub mod external;
pub mod history;
pub mod query;
pub mod repository;
pub mod tasks;

use crate::AppState;
use crate::dto::{List, Sorting};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, page};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::process::{ExecutionView, InstanceView, StartRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest business key, message or signal name, assignee: their columns' VARCHAR(255).
pub const MAX_NAME_CHARS: usize = 255;
/// Longest delete reason (DELETE_REASON_ VARCHAR(4000)).
pub const MAX_REASON_CHARS: usize = 4000;

/// `variables` of a body: absent or null → none; Flowable's typed list `[{name, type, value}]`
/// or kairos's object `{name: value}` → the map; anything else → 400 naming `variables`
/// ([`crate::flowable::variables`]).
pub fn variables(value: Option<Value>) -> Result<Map<String, Value>, ApiError> {
    crate::flowable::variable_map("variables", value)
}

/// A text field that must be given, non-blank and at most `max` characters.
pub fn required(field: &'static str, value: Option<String>, max: usize) -> Result<String, ApiError> {
    match value {
        Some(v) if !v.trim().is_empty() => limited(field, v, max),
        Some(_) => Err(ApiError::invalid(field, format!("{field} must not be empty"))),
        None => Err(ApiError::invalid(field, format!("{field} is required"))),
    }
}

/// A text field of at most `max` characters.
pub fn limited(field: &'static str, value: String, max: usize) -> Result<String, ApiError> {
    let n = value.chars().count();
    if n > max {
        return Err(ApiError::invalid(field, format!("{field} may have at most {max} characters, not {n}")));
    }
    Ok(value)
}

/// An optional filter: empty means absent.
pub fn filter(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// A list held in memory, paged by `start` and `size` (API.md's list shape).
pub fn paged<T>(all: Vec<T>, start: Option<&str>, size: Option<&str>) -> Result<List<T>, ApiError> {
    let (start, size) = page(start, size)?;
    let total = all.len() as u64;
    let data: Vec<T> = all.into_iter().skip(start as usize).take(size as usize).collect();
    Ok(List::new(data, total, start))
}

/// [`paged`], ordered as `sorting` says first.
pub fn paged_sorted<T: Serialize>(
    all: Vec<T>,
    start: Option<&str>,
    size: Option<&str>,
    sorting: &Sorting,
) -> Result<List<T>, ApiError> {
    Ok(paged(sorting.sort(all), start, size)?.sorted_as(sorting))
}

/// `{"action": ...}` bodies name one of a few actions.
pub(crate) fn unknown_action(action: &str, known: &str) -> ApiError {
    ApiError::invalid("action", format!("action \"{action}\" is not known here; use {known}"))
}

// ---- process instances -------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartBody {
    process_definition_key: Option<String>,
    process_definition_id: Option<String>,
    /// Flowable: start the definition whose message start event has this message name.
    message: Option<String>,
    business_key: Option<String>,
    variables: Option<Value>,
    /// Flowable: the instance's name. kairos keeps no instance names yet: accepted, not kept
    /// (docs/flowable-rest.md).
    name: Option<String>,
    /// Flowable: answer with the instance's variables.
    return_variables: Option<bool>,
    /// Flowable's tenant: the key resolves within it (a tenant's caller: always theirs).
    tenant_id: Option<String>,
    /// Flowable: start another tenant's (shared) definition in this tenant; not supported.
    override_definition_tenant_id: Option<String>,
    /// Flowable: variables kept only during the start's transaction; none allowed here (they
    /// would be stored).
    transient_variables: Option<Value>,
    /// Flowable's start forms, which kairos does not have.
    start_form_variables: Option<Value>,
    outcome: Option<String>,
    /// Makes the start idempotent: a retry with the same requestId and body gets the first
    /// start's answer (SPEC C2).
    request_id: Option<String>,
    /// The business object the instance runs for (SPEC C3): one instance per lifecycle.
    binding: Option<BindingBody>,
}

/// `binding` of a start: seed 002 §4's business type, business id, process type (default: the
/// definition's key) and lifecycle (default: the active one, else the next).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingBody {
    business_type: Option<String>,
    business_id: Option<String>,
    process_type: Option<String>,
    lifecycle: Option<i64>,
}

/// A process instance as Flowable's `ProcessInstanceResponse` has it: kairos's view and
/// Flowable's `url`, `processDefinitionUrl`, `tenantId`, `completed` and `variables` (filled
/// when asked for: `returnVariables` on start).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceResponse {
    #[serde(flatten)]
    pub view: InstanceView,
    pub url: String,
    pub process_definition_url: String,
    pub completed: bool,
    pub variables: Vec<crate::flowable::RestVariable>,
}

impl InstanceResponse {
    pub fn of(view: InstanceView) -> Self {
        InstanceResponse {
            url: format!("/runtime/process-instances/{}", view.id),
            process_definition_url: format!("/repository/process-definitions/{}", view.process_definition_id),
            completed: view.ended && view.delete_reason.is_none(),
            variables: Vec::new(),
            view,
        }
    }
}

/// Refuses a Flowable field kairos cannot carry out when it holds something.
fn unsupported(field: &'static str, value: &Option<Value>, why: &str) -> Result<(), ApiError> {
    match value {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(a)) if a.is_empty() => Ok(()),
        Some(Value::Object(o)) if o.is_empty() => Ok(()),
        Some(_) => Err(ApiError::invalid(field, format!("{field}: {why}"))),
    }
}

/// `POST /runtime/process-instances` → 201 with the instance as it stands after the start
/// (`ended` when it ran straight through). By `processDefinitionKey`, `processDefinitionId`
/// or Flowable's `message`.
pub async fn start(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(body): Json<StartBody>,
) -> Result<Response, ApiError> {
    if body.override_definition_tenant_id.as_deref().is_some_and(|t| !t.is_empty()) {
        return Err(ApiError::invalid(
            "overrideDefinitionTenantId",
            "overrideDefinitionTenantId: an instance is always its definition's tenant's; deploy the definition to the tenant",
        ));
    }
    let tenant = filter(body.tenant_id);
    let tenant = scope.filter(tenant.as_deref()).map(str::to_owned);
    unsupported(
        "transientVariables",
        &body.transient_variables,
        "transient variables are not supported; send them as variables",
    )?;
    unsupported("startFormVariables", &body.start_form_variables, "kairos has no start forms; send them as variables")?;
    if body.outcome.as_deref().is_some_and(|o| !o.is_empty()) {
        return Err(ApiError::invalid("outcome", "outcome: kairos has no start forms, so no form outcome"));
    }
    if let Some(n) = body.name {
        limited("name", n, MAX_NAME_CHARS)?;
    }
    let key = body.process_definition_key.map(|k| required("processDefinitionKey", Some(k), MAX_NAME_CHARS));
    let id = body.process_definition_id.map(|i| required("processDefinitionId", Some(i), 64));
    let message = body.message.map(|m| required("message", Some(m), MAX_NAME_CHARS));
    let (key, mut id, message) = match (key, id, message) {
        (None, None, None) => {
            return Err(ApiError::invalid(
                "processDefinitionKey",
                "processDefinitionKey is required (or processDefinitionId to start one version, or message)",
            ));
        }
        (key, id, message) if [key.is_some(), id.is_some(), message.is_some()].iter().filter(|x| **x).count() > 1 => {
            let _ = (key, id, message);
            return Err(ApiError::invalid(
                "processDefinitionId",
                "give one of processDefinitionKey, processDefinitionId and message",
            ));
        }
        (key, id, message) => (key.transpose()?, id.transpose()?, message.transpose()?),
    };
    let business_key = body.business_key.map(|b| limited("businessKey", b, MAX_NAME_CHARS)).transpose()?;
    let variables = variables(body.variables)?;
    let mut start_event = None;
    if let Some(m) = &message {
        let (definition, event) = app.engine.processes().message_start_of(m, tenant.as_deref()).await.map_err(|e| {
            let mut e = ApiError::from(e);
            e.field = Some("message".into());
            e
        })?;
        id = Some(definition);
        start_event = Some(event);
    }
    let field = if key.is_some() { "processDefinitionKey" } else { "processDefinitionId" };
    let binding = match body.binding {
        None => None,
        Some(b) => Some(kairos::process::BindingRequest {
            business_type: required("binding.businessType", b.business_type, kairos::process::MAX_BINDING_CHARS)?,
            business_id: required("binding.businessId", b.business_id, kairos::process::MAX_BINDING_CHARS)?,
            process_type: b
                .process_type
                .map(|p| required("binding.processType", Some(p), kairos::process::MAX_BINDING_CHARS))
                .transpose()?
                .unwrap_or_default(),
            lifecycle: b.lifecycle,
        }),
    };
    let req = StartRequest {
        process_definition_key: key,
        process_definition_id: id,
        business_key,
        variables,
        start_event,
        request_id: body.request_id,
        binding,
        tenant_id: tenant,
        ..Default::default()
    };
    let processes = app.engine.processes();
    let instance = processes.start(req).await.map_err(|e| {
        let mut e = ApiError::from(e);
        if e.status == StatusCode::NOT_FOUND {
            e.field = Some(field.into());
        }
        e
    })?;
    let location = format!("/runtime/process-instances/{}", instance.id);
    let mut answer = InstanceResponse::of(instance);
    if body.return_variables == Some(true) && !answer.view.ended {
        let vars = processes.variables(&answer.view.id).await?;
        answer.variables = crate::flowable::variable_list(&vars, Some("local"));
    }
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], axum::Json(answer)).into_response())
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstancesQuery {
    business_key: Option<String>,
    process_definition_key: Option<String>,
    super_process_instance_id: Option<String>,
    tenant_id: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /runtime/process-instances?businessKey=&processDefinitionKey=&superProcessInstanceId=&tenantId=`:
/// running instances, oldest first.
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<InstancesQuery>,
) -> Result<axum::Json<List<InstanceResponse>>, ApiError> {
    let (bk, key, sup) =
        (filter(q.business_key), filter(q.process_definition_key), filter(q.super_process_instance_id));
    let tenant = filter(q.tenant_id);
    let f = kairos::process::InstanceFilter {
        business_key: bk.as_deref(),
        definition_key: key.as_deref(),
        finished: Some(false),
        tenant: scope.filter(tenant.as_deref()),
    };
    let mut all = app.engine.processes().instance_list(&f).await?;
    if let Some(sup) = sup {
        all.retain(|i| i.super_process_instance_id.as_deref() == Some(sup.as_str()));
    }
    let all: Vec<InstanceResponse> = all.into_iter().map(InstanceResponse::of).collect();
    let sorting = Sorting::parse(q.sort.as_deref(), q.order.as_deref(), INSTANCE_SORTS, "id")?;
    Ok(axum::Json(paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?))
}

/// What instance lists sort by (Flowable's `ProcessInstanceQueryProperty`s kairos has).
const INSTANCE_SORTS: &[&str] = &["id", "processDefinitionId", "processDefinitionKey", "businessKey", "startTime"];

/// A running instance, or a 404 that says where an ended one is.
async fn running(app: &AppState, id: &str) -> Result<InstanceView, ApiError> {
    let instance = app.engine.processes().instance(id).await?;
    if instance.ended {
        return Err(ApiError::not_found(format!(
            "process instance {id} has ended; it is in GET /history/historic-process-instances?processInstanceId={id}"
        )));
    }
    Ok(instance)
}

/// `GET /runtime/process-instances/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<InstanceResponse>, ApiError> {
    Ok(axum::Json(InstanceResponse::of(running(&app, &id).await?)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteQuery {
    delete_reason: Option<String>,
}

/// `DELETE /runtime/process-instances/{id}?deleteReason=` → 204; the instance ends with the
/// reason (kept in its history).
pub async fn delete(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let reason = filter(q.delete_reason).unwrap_or_else(|| "deleted".to_string());
    let reason = limited("deleteReason", reason, MAX_REASON_CHARS)?;
    app.engine.processes().delete_instance(&id, &reason).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /runtime/process-instances/{id}/terminate {kind, user, reason, businessState,
/// pendingActions, compensationPlan}` → 200 with the termination record (seed 002 §27): the
/// instance ends (WITHDRAW by its starter while no task was completed; TERMINATE by an
/// administrator; DELETE) and the record is written in the same transaction.
pub async fn terminate(
    State(app): State<AppState>,
    Id(id): Id,
    crate::extract::Json(req): crate::extract::Json<kairos::process::TerminateRequest>,
) -> Result<axum::Json<kairos::process::TerminationRecord>, ApiError> {
    Ok(axum::Json(app.engine.processes().terminate(&id, &req).await?))
}

/// `GET /runtime/process-instances/{id}/termination`: how the instance was withdrawn,
/// terminated or deleted (kept after it ended); 404 for one that was not.
pub async fn termination(
    State(app): State<AppState>,
    Id(id): Id,
) -> Result<axum::Json<kairos::process::TerminationRecord>, ApiError> {
    app.engine
        .processes()
        .termination(&id)
        .await?
        .map(axum::Json)
        .ok_or_else(|| ApiError::not_found(format!("process instance {id} has no termination record")))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstanceUpdate {
    action: Option<String>,
    business_key: Option<String>,
}

/// `PUT /runtime/process-instances/{id}` `{"action": "suspend"|"activate"}` or
/// `{"businessKey": "…"}` → the instance.
pub async fn update(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<InstanceUpdate>,
) -> Result<axum::Json<InstanceResponse>, ApiError> {
    let suspend = match (body.action.as_deref(), body.business_key) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid("businessKey", "give either action or businessKey, not both"));
        }
        (None, Some(bk)) => {
            let bk = limited("businessKey", bk, MAX_NAME_CHARS)?;
            app.engine.processes().set_business_key(&id, Some(bk)).await?;
            return Ok(axum::Json(InstanceResponse::of(app.engine.processes().instance(&id).await?)));
        }
        (None, None) => return Err(ApiError::invalid("action", "action is required: \"suspend\" or \"activate\"")),
        (Some("suspend"), None) => true,
        (Some("activate"), None) => false,
        (Some(other), None) => return Err(unknown_action(other, "\"suspend\" or \"activate\"")),
    };
    // Also parks the instance's jobs in ACT_RU_SUSPENDED_JOB (and back).
    app.engine.processes().set_instance_suspended(&id, suspend).await?;
    Ok(axum::Json(InstanceResponse::of(app.engine.processes().instance(&id).await?)))
}

/// `GET /runtime/process-instances/{id}/variables`: the instance-level variables, as Flowable
/// answers them: `[{"name", "type", "value", "scope": "local"}]`.
pub async fn get_variables(
    State(app): State<AppState>,
    Id(id): Id,
) -> Result<axum::Json<Vec<crate::flowable::RestVariable>>, ApiError> {
    let vars = app.engine.processes().variables(&id).await?;
    Ok(axum::Json(crate::flowable::variable_list(&vars, Some("local"))))
}

/// `PUT /runtime/process-instances/{id}/variables` with Flowable's list (or `{name: value}`):
/// creates or overwrites them; answers the variables set, as a list.
pub async fn put_variables(
    State(app): State<AppState>,
    Id(id): Id,
    crate::extract::JsonAny(body): crate::extract::JsonAny,
) -> Result<axum::Json<Vec<crate::flowable::RestVariable>>, ApiError> {
    let vars = body_variables(body)?;
    app.engine.processes().set_variables(&id, vars.clone()).await?;
    Ok(axum::Json(crate::flowable::variable_list(&vars, Some("local"))))
}

/// `POST /runtime/process-instances/{id}/variables`: as PUT, but only new variables (Flowable:
/// 409 when one exists already) → 201.
pub async fn post_variables(
    State(app): State<AppState>,
    Id(id): Id,
    crate::extract::JsonAny(body): crate::extract::JsonAny,
) -> Result<Response, ApiError> {
    let vars = body_variables(body)?;
    let processes = app.engine.processes();
    let have = processes.variables(&id).await?;
    if let Some(name) = vars.keys().find(|n| have.contains_key(*n)) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("process instance {id} has a variable {name} already; use PUT to overwrite it"),
        ));
    }
    processes.set_variables(&id, vars.clone()).await?;
    Ok((StatusCode::CREATED, axum::Json(crate::flowable::variable_list(&vars, Some("local")))).into_response())
}

/// A variables body: Flowable's list or kairos's object, not empty.
pub(crate) fn body_variables(body: Value) -> Result<Map<String, Value>, ApiError> {
    let vars = variables(Some(body))?;
    if vars.is_empty() {
        return Err(ApiError::invalid("variables", "give at least one variable"));
    }
    Ok(vars)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrateBody {
    to_process_definition_id: Option<String>,
    to_process_definition_key: Option<String>,
    to_process_definition_version: Option<i64>,
    #[serde(default)]
    activity_mappings: Vec<ActivityMapping>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActivityMapping {
    from_activity_id: Option<String>,
    to_activity_id: Option<String>,
}

/// `POST /runtime/process-instances/{id}/migrate` `{"toProcessDefinitionId"? |
/// "toProcessDefinitionKey"? + "toProcessDefinitionVersion"?, "activityMappings"?:
/// [{"fromActivityId", "toActivityId"}]}` → the instance on its new definition (SPEC P13;
/// Flowable's migration document). Without a target: the latest version of the instance's key.
pub async fn migrate(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<MigrateBody>,
) -> Result<axum::Json<InstanceView>, ApiError> {
    let req = migrate_request(body)?;
    Ok(axum::Json(app.engine.processes().migrate_instance(&id, &req).await?))
}

/// `POST /repository/process-definitions/{id}/migrate` with the same body → `{"migrated": N,
/// "failed": N, "instances": [{"processInstanceId", "error"?}]}`: every running instance of the
/// definition, each in its own transaction (one that cannot move says why and stays).
pub async fn migrate_all(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<MigrateBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let req = migrate_request(body)?;
    let outcomes = app.engine.processes().migrate_instances_of(&id, &req).await?;
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    let migrated = outcomes.len() - failed;
    Ok(axum::Json(serde_json::json!({ "migrated": migrated, "failed": failed, "instances": outcomes })))
}

fn migrate_request(body: MigrateBody) -> Result<kairos::process::MigrateRequest, ApiError> {
    let mut req = kairos::process::MigrateRequest::latest();
    req.to_process_definition_id =
        filter(body.to_process_definition_id).map(|d| limited("toProcessDefinitionId", d, 64)).transpose()?;
    req.to_process_definition_key = filter(body.to_process_definition_key)
        .map(|k| limited("toProcessDefinitionKey", k, MAX_NAME_CHARS))
        .transpose()?;
    req.to_process_definition_version = body.to_process_definition_version;
    for m in body.activity_mappings {
        let from = required("fromActivityId", m.from_activity_id, MAX_NAME_CHARS)?;
        let to = required("toActivityId", m.to_activity_id, MAX_NAME_CHARS)?;
        req = req.map(from, to);
    }
    Ok(req)
}

// ---- executions, messages, signals ---------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionsQuery {
    process_instance_id: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /runtime/executions?processInstanceId=` (required): the instance's execution tree.
pub async fn executions(
    State(app): State<AppState>,
    _scope: crate::tenancy::Scope,
    Query(q): Query<ExecutionsQuery>,
) -> Result<axum::Json<List<ExecutionView>>, ApiError> {
    let pi = required("processInstanceId", q.process_instance_id, 64)?;
    let all = app.engine.processes().executions(&pi).await?;
    Ok(axum::Json(paged(all, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /runtime/executions/{id}`.
pub async fn execution(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<ExecutionView>, ApiError> {
    Ok(axum::Json(app.engine.processes().execution(&id).await?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionAction {
    action: Option<String>,
    message_name: Option<String>,
    signal_name: Option<String>,
    variables: Option<Value>,
    /// Flowable's transient variables; none allowed here (they would be stored).
    transient_variables: Option<Value>,
}

/// `PUT /runtime/executions/{id}` (Flowable): `{"action": "signal"|"trigger", "variables"?}`
/// moves an execution waiting in a receive task on; `messageEventReceived` + `messageName`
/// and `signalEventReceived` + `signalName` deliver to the execution's instance. → 200 with
/// the execution, or 204 when it is gone afterwards.
pub async fn act_execution(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<ExecutionAction>,
) -> Result<Response, ApiError> {
    let action = required("action", b.action, MAX_NAME_CHARS)?;
    unsupported(
        "transientVariables",
        &b.transient_variables,
        "transient variables are not supported; send them as variables",
    )?;
    let vars = variables(b.variables)?;
    let processes = app.engine.processes();
    let execution = processes.execution(&id).await?;
    let pi = execution.process_instance_id.clone();
    match action.as_str() {
        "signal" | "trigger" => processes.trigger(&id, vars).await?,
        "messageEventReceived" => {
            let name = required("messageName", b.message_name, MAX_NAME_CHARS)?;
            processes.message(&name, Some(&pi), None, vars).await?;
        }
        "signalEventReceived" => {
            let name = required("signalName", b.signal_name, MAX_NAME_CHARS)?;
            processes.command(&pi, kairos_process::Command::Signal { name, variables: vars }).await?;
        }
        other => {
            return Err(unknown_action(
                other,
                "\"signal\", \"trigger\", \"messageEventReceived\" or \"signalEventReceived\"",
            ));
        }
    }
    match processes.execution(&id).await {
        Ok(e) => Ok(axum::Json(e).into_response()),
        Err(kairos::Error::Process(p)) if p.kind == kairos_process::ErrorKind::NotFound => {
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageBody {
    message_name: Option<String>,
    business_key: Option<String>,
    process_instance_id: Option<String>,
    variables: Option<Value>,
    /// Makes the delivery idempotent (SPEC C2): a retry answers with the instance the first
    /// one reached instead of delivering again.
    request_id: Option<String>,
    /// The incoming event's id (SPEC C5): a second delivery of the same event is dropped by the
    /// inbox and answers the first one's instance with `"duplicate": true`.
    event_id: Option<String>,
    /// Only this tenant's instances and definitions receive it (a tenant's caller: always
    /// theirs).
    tenant_id: Option<String>,
}

/// `POST /runtime/messages` → `{"messageName", "processInstanceId"}` of the instance that
/// received it; 404 when none waits for it, 409 when several do and the body does not say which.
pub async fn message(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(body): Json<MessageBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let requested = filter(body.tenant_id);
    let tenant = scope.filter(requested.as_deref());
    let name = required("messageName", body.message_name, MAX_NAME_CHARS)?;
    let bk = filter(body.business_key).map(|b| limited("businessKey", b, MAX_NAME_CHARS)).transpose()?;
    let pi = filter(body.process_instance_id).map(|p| limited("processInstanceId", p, 64)).transpose()?;
    let vars = variables(body.variables)?;
    let processes = app.engine.processes();
    let event = body.event_id.map(|e| required("eventId", Some(e), 64)).transpose()?;
    let (got, duplicate) = match (body.request_id, event) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("eventId", "give requestId or eventId, not both")),
        (None, Some(e)) => processes.message_event_in(tenant, &name, (pi.as_deref(), bk.as_deref()), vars, &e).await?,
        (r, None) => {
            (processes.message_in(tenant, &name, (pi.as_deref(), bk.as_deref()), vars, r.as_deref()).await?, false)
        }
    };
    let mut answer = serde_json::json!({ "messageName": name, "processInstanceId": got });
    if duplicate {
        answer["duplicate"] = Value::Bool(true);
    }
    Ok(axum::Json(answer))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignalBody {
    signal_name: Option<String>,
    variables: Option<Value>,
    /// Flowable's tenant: only its instances and definitions receive the signal (a tenant's
    /// caller: always theirs).
    tenant_id: Option<String>,
    /// Flowable: deliver in the background (202). kairos delivers before answering either way;
    /// `async` only changes the status.
    r#async: Option<bool>,
    /// Makes the broadcast idempotent (SPEC C2): each instance receives it once however
    /// often it is retried.
    request_id: Option<String>,
}

/// `POST /runtime/signals` → 204 (Flowable; with `"async": true`, 202): every instance
/// waiting for it received it before the answer. How many did is in the `Kairos-Received`
/// header (kairos's own).
pub async fn signal(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(body): Json<SignalBody>,
) -> Result<Response, ApiError> {
    let name = required("signalName", body.signal_name, MAX_NAME_CHARS)?;
    let tenant = filter(body.tenant_id);
    let vars = variables(body.variables)?;
    let processes = app.engine.processes();
    let n = processes.signal_in(scope.filter(tenant.as_deref()), &name, vars, body.request_id.as_deref()).await?;
    let status = if body.r#async == Some(true) { StatusCode::ACCEPTED } else { StatusCode::NO_CONTENT };
    Ok((status, [("kairos-received", n.to_string())]).into_response())
}

// ---- business bindings ------------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingsQuery {
    business_type: Option<String>,
    business_id: Option<String>,
    process_instance_id: Option<String>,
}

/// `GET /bindings?businessType=&businessId=` (or `?processInstanceId=`): the business bindings
/// of one object, by process type and lifecycle, or of one instance (SPEC C3).
pub async fn bindings(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<BindingsQuery>,
) -> Result<axum::Json<List<kairos::process::Binding>>, ApiError> {
    let p = app.engine.processes();
    let all: Vec<kairos::process::Binding> =
        match (filter(q.process_instance_id), filter(q.business_type), filter(q.business_id)) {
            (Some(pi), None, None) => p.binding_of(&pi).await?.into_iter().collect(),
            (None, Some(t), Some(id)) => p.bindings(&t, &id).await?,
            (None, None, Some(_)) => {
                return Err(ApiError::invalid("businessType", "give businessType with businessId"));
            }
            (None, Some(_), None) => return Err(ApiError::invalid("businessId", "give businessId with businessType")),
            (Some(_), _, _) => {
                return Err(ApiError::invalid(
                    "processInstanceId",
                    "give processInstanceId alone, or businessType and businessId",
                ));
            }
            (None, None, None) => {
                return Err(ApiError::invalid(
                    "businessType",
                    "give businessType and businessId, or processInstanceId",
                ));
            }
        };
    // A binding is its instance's tenant's: a tenant's caller sees those of its own instances.
    let mut seen = Vec::with_capacity(all.len());
    for b in all {
        let tenant = p.owner(kairos::process::Owned::Instance, &b.process_instance_id).await?;
        if scope.sees(tenant.as_deref().unwrap_or("")) {
            seen.push(b);
        }
    }
    Ok(axum::Json(paged(seen, None, None)?))
}
