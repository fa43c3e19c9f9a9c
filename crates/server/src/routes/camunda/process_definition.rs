//! `/engine-rest/process-definition`: list, count, one by id or by key (its latest version),
//! its XML, and starting an instance of it.

use super::process_instance::instance_dto;
use super::variables::{from_typed, to_typed};
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, Paging, flag, invalid, list_of, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, Segments};
use crate::tenancy::Scope;
use axum::extract::State;
use kairos::process::{DefinitionInfo, StartRequest};
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's ProcessDefinitionDto.
pub fn definition_dto(d: &DefinitionInfo) -> Value {
    json!({
        "id": d.id,
        "key": d.key,
        "category": null,
        "description": null,
        "name": d.name,
        "version": d.version,
        "resource": d.resource_name,
        "deploymentId": d.deployment_id,
        "diagram": null,
        "suspended": d.suspended,
        "tenantId": super::tenant_json(&d.tenant_id),
        "versionTag": null,
        "historyTimeToLive": null,
        "startableInTasklist": true,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    process_definition_id: Option<String>,
    process_definition_id_in: Option<String>,
    name: Option<String>,
    deployment_id: Option<String>,
    key: Option<String>,
    keys_in: Option<String>,
    version: Option<String>,
    latest_version: Option<String>,
    resource_name: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    include_process_definitions_without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] = &["id", "key", "name", "version", "deploymentId", "category", "tenantId", "versionTag"];

async fn matching(app: &AppState, scope: &Scope, q: ListQuery) -> Result<Vec<DefinitionInfo>, ApiError> {
    let latest = flag("latestVersion", q.latest_version.as_deref())?.unwrap_or(false);
    let key = text("key", q.key, MAX_NAME_CHARS)?;
    let mut ids = list_of("processDefinitionIdIn", q.process_definition_id_in, MAX_ID_CHARS)?;
    ids.extend(text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?);
    let keys = list_of("keysIn", q.keys_in, MAX_NAME_CHARS)?;
    let name = text("name", q.name, MAX_NAME_CHARS)?;
    let deployment = text("deploymentId", q.deployment_id, MAX_ID_CHARS)?;
    let resource = text("resourceName", q.resource_name, 4000)?;
    let version = match q.version.filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => Some(v.parse::<i64>().map_err(|_| invalid("version", "version must be a whole number"))?),
    };
    let active = flag("active", q.active.as_deref())?;
    let suspended = flag("suspended", q.suspended.as_deref())?;
    let tenants = super::Tenants::parse(
        scope,
        q.tenant_id_in,
        q.without_tenant_id.as_deref(),
        ("includeProcessDefinitionsWithoutTenantId", q.include_process_definitions_without_tenant_id.as_deref()),
    )?;
    let sort = sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), SORT_KEYS)?;
    let filter = kairos::process::DefinitionFilter {
        key: key.as_deref(),
        latest_only: latest,
        tenant: tenants.only(),
        ..Default::default()
    };
    let mut all = app.engine.processes().definitions_query(&filter).await?;
    all.retain(|d| {
        (ids.is_empty() || ids.contains(&d.id))
            && (keys.is_empty() || keys.contains(&d.key))
            && name.as_ref().is_none_or(|n| d.name.as_ref() == Some(n))
            && deployment.as_ref().is_none_or(|x| &d.deployment_id == x)
            && resource.as_ref().is_none_or(|x| &d.resource_name == x)
            && version.is_none_or(|v| d.version == v)
            && active.is_none_or(|a| a != d.suspended)
            && suspended.is_none_or(|s| s == d.suspended)
            && tenants.keeps(&d.tenant_id)
    });
    if let Some((by, desc)) = sort {
        all.sort_by(|a, b| {
            let o = match by {
                "key" => a.key.cmp(&b.key),
                "name" => a.name.cmp(&b.name),
                "version" => a.version.cmp(&b.version),
                "deploymentId" => a.deployment_id.cmp(&b.deployment_id),
                "tenantId" => a.tenant_id.cmp(&b.tenant_id),
                _ => a.id.cmp(&b.id),
            };
            if desc { o.reverse() } else { o }
        });
    }
    Ok(all)
}

/// `GET /engine-rest/process-definition?…` → `[ProcessDefinitionDto]`.
pub async fn list(
    State(app): State<AppState>,
    scope: Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let all = matching(&app, &scope, q).await?;
    Ok(axum::Json(page.page(all).iter().map(definition_dto).collect()))
}

/// `GET /engine-rest/process-definition/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching(&app, &scope, q).await?.len()))
}

/// The latest version of `key` in the caller's tenant (none, for a caller of no tenant), or a
/// 404 naming it as Camunda does.
async fn latest(app: &AppState, scope: &Scope, key: &str) -> Result<DefinitionInfo, ApiError> {
    let tenant = scope.tenant(None);
    let filter = kairos::process::DefinitionFilter {
        key: Some(key),
        latest_only: true,
        tenant: Some(tenant),
        ..Default::default()
    };
    let all = app.engine.processes().definitions_query(&filter).await?;
    all.into_iter().next().ok_or_else(|| super::no_such_key("process definition", key, tenant))
}

/// `GET /engine-rest/process-definition/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(definition_dto(&app.engine.processes().definition(&id).await?)))
}

/// `GET /engine-rest/process-definition/{id}/statistics`: Camunda's `ActivityStatisticsResultDto`
/// per activity with anything at it — `id`, `instances` (active tokens), `failedJobs` (dead
/// letters), `incidents` (empty: kairos's incidents are reconciliation's) — and kairos's `jobs`
/// (timers, async continuations, external tasks waiting there). 404 for an unknown definition.
pub async fn statistics(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Vec<Value>>, ApiError> {
    app.engine.processes().definition(&id).await?;
    let all = app.engine.processes().activity_statistics(&id).await?;
    Ok(axum::Json(
        all.into_iter()
            .map(|s| json!({"id": s.id, "instances": s.instances, "failedJobs": s.failed_jobs, "jobs": s.jobs, "incidents": []}))
            .collect(),
    ))
}

/// `GET /engine-rest/process-definition/key/{key}`: its latest version.
pub async fn get_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(definition_dto(&latest(&app, &scope, &key).await?)))
}

/// Camunda's ProcessDefinitionDiagramDto: `{"id", "bpmn20Xml"}`.
async fn diagram(app: &AppState, id: &str) -> Result<axum::Json<Value>, ApiError> {
    let xml = app.engine.processes().resource(id).await?;
    Ok(axum::Json(json!({"id": id, "bpmn20Xml": xml})))
}

/// `GET /engine-rest/process-definition/{id}/xml`.
pub async fn xml(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    diagram(&app, &id).await
}

/// `GET /engine-rest/process-definition/key/{key}/xml`.
pub async fn xml_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let d = latest(&app, &scope, &key).await?;
    diagram(&app, &d.id).await
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartBody {
    business_key: Option<String>,
    variables: Option<Value>,
    case_instance_id: Option<String>,
    start_instructions: Option<Vec<Value>>,
    /// Ignored: kairos runs no custom listeners.
    skip_custom_listeners: Option<bool>,
    skip_io_mappings: Option<bool>,
    with_variables_in_return: Option<bool>,
}

/// Starts `definition` as a StartProcessInstanceDto asks → 200 ProcessInstanceWithVariablesDto.
async fn start_of(app: &AppState, definition: String, b: StartBody) -> Result<axum::Json<Value>, ApiError> {
    if b.case_instance_id.is_some() {
        return Err(invalid("caseInstanceId", "kairos runs no CMMN cases: caseInstanceId is not supported"));
    }
    if b.start_instructions.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(invalid(
            "startInstructions",
            "starting at chosen activities (startInstructions) is not supported by kairos",
        ));
    }
    if b.skip_io_mappings == Some(true) {
        return Err(invalid(
            "skipIoMappings",
            "kairos always applies input/output mappings: skipIoMappings true is not supported",
        ));
    }
    let _ = b.skip_custom_listeners;
    let business_key = text("businessKey", b.business_key, MAX_NAME_CHARS)?;
    let variables = from_typed("variables", b.variables)?;
    let req = StartRequest { process_definition_id: Some(definition), business_key, variables, ..Default::default() };
    let processes = app.engine.processes();
    let view = processes.start(req).await.map_err(super::conflict_is_bad_request)?;
    let mut dto = instance_dto(&view);
    if b.with_variables_in_return == Some(true) {
        // An instance that ran to its end has no runtime variables left: its last values.
        let vars = if view.ended {
            let q = kairos::process::VariableQuery {
                process_instance_id: Some(view.id.clone()),
                exclude_task_variables: true,
                ..Default::default()
            };
            let (vars, _) = processes.historic_variables(&q, 0, super::MAX_RESULTS).await?;
            vars.into_iter().map(|v| (v.variable.name, v.variable.value)).collect()
        } else {
            processes.variables(&view.id).await?
        };
        dto["variables"] = to_typed(&vars);
    }
    Ok(axum::Json(dto))
}

/// `POST /engine-rest/process-definition/{id}/start` → 200 the instance.
pub async fn start(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<StartBody>,
) -> Result<axum::Json<Value>, ApiError> {
    app.engine.processes().definition(&id).await?;
    start_of(&app, id, b).await
}

/// `POST /engine-rest/process-definition/key/{key}/start` → 200 the instance of its latest
/// version.
pub async fn start_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
    Json(b): Json<StartBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let d = latest(&app, &scope, &key).await?;
    if d.suspended {
        return Err(super::bad_user_request(format!("process definition {} is suspended", d.id)));
    }
    start_of(&app, d.id, b).await
}
