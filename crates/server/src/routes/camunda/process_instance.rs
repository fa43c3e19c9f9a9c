//! `/engine-rest/process-instance`: running instances (list, count, one, delete, suspension)
//! and their variables.

use super::variables::{from_typed, one, to_typed, typed};
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, Paging, flag, invalid, list_of, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, Segments};
use axum::extract::State;
use axum::http::StatusCode;
use kairos::process::InstanceView;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Camunda's ProcessInstanceDto.
pub fn instance_dto(i: &InstanceView) -> Value {
    json!({
        "links": [],
        "id": i.id,
        "definitionId": i.process_definition_id,
        "definitionKey": i.process_definition_key,
        "businessKey": i.business_key,
        "caseInstanceId": null,
        "ended": i.ended,
        "suspended": i.suspended,
        "tenantId": super::tenant_json(&i.tenant_id),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    process_instance_ids: Option<String>,
    business_key: Option<String>,
    process_definition_id: Option<String>,
    process_definition_key: Option<String>,
    process_definition_key_in: Option<String>,
    super_process_instance: Option<String>,
    root_process_instances: Option<String>,
    active: Option<String>,
    suspended: Option<String>,
    /// `name_eq_value` filters, comma-separated (Camunda's `variables` parameter): only `eq`.
    variables: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] = &["instanceId", "definitionKey", "definitionId", "businessKey", "tenantId"];

/// `name_eq_value,…`: the variable equalities an instance must have. Values are compared as
/// Camunda compares a query value: as the JSON the text reads as (`42`, `true`), else as text.
fn variable_filters(v: Option<String>) -> Result<Vec<(String, Value)>, ApiError> {
    let Some(v) = v.filter(|s| !s.is_empty()) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for f in v.split(',') {
        let mut parts = f.splitn(3, '_');
        let (Some(name), Some(op), Some(value)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(invalid("variables", format!("variables: \"{}\" is not name_operator_value", super::clip(f))));
        };
        if op != "eq" {
            return Err(invalid(
                "variables",
                format!("variables: only the eq operator is supported by kairos, not {op}"),
            ));
        }
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        out.push((name.to_string(), value));
    }
    Ok(out)
}

async fn matching(app: &AppState, scope: &crate::tenancy::Scope, q: ListQuery) -> Result<Vec<InstanceView>, ApiError> {
    let ids = list_of("processInstanceIds", q.process_instance_ids, MAX_ID_CHARS)?;
    let bk = text("businessKey", q.business_key, MAX_NAME_CHARS)?;
    let def = text("processDefinitionId", q.process_definition_id, MAX_ID_CHARS)?;
    let key = text("processDefinitionKey", q.process_definition_key, MAX_NAME_CHARS)?;
    let keys = list_of("processDefinitionKeyIn", q.process_definition_key_in, MAX_NAME_CHARS)?;
    let sup = text("superProcessInstance", q.super_process_instance, MAX_ID_CHARS)?;
    let root = flag("rootProcessInstances", q.root_process_instances.as_deref())?.unwrap_or(false);
    let active = flag("active", q.active.as_deref())?;
    let suspended = flag("suspended", q.suspended.as_deref())?;
    let vars = variable_filters(q.variables)?;
    let tenants = super::Tenants::parse(scope, q.tenant_id_in, q.without_tenant_id.as_deref(), ("", None))?;
    let sort = sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), SORT_KEYS)?;
    let processes = app.engine.processes();
    let filter = kairos::process::InstanceFilter {
        business_key: bk.as_deref(),
        definition_key: key.as_deref(),
        finished: Some(false),
        tenant: tenants.only(),
    };
    let mut all = processes.instance_list(&filter).await?;
    all.retain(|i| {
        (ids.is_empty() || ids.contains(&i.id))
            && def.as_ref().is_none_or(|d| &i.process_definition_id == d)
            && (keys.is_empty() || keys.contains(&i.process_definition_key))
            && sup.as_ref().is_none_or(|s| i.super_process_instance_id.as_ref() == Some(s))
            && (!root || i.super_process_instance_id.is_none())
            && active.is_none_or(|a| a != i.suspended)
            && suspended.is_none_or(|s| s == i.suspended)
            && tenants.keeps(&i.tenant_id)
    });
    if !vars.is_empty() {
        let mut kept = Vec::new();
        for i in all {
            let have = processes.variables(&i.id).await?;
            if vars.iter().all(|(n, v)| have.get(n) == Some(v)) {
                kept.push(i);
            }
        }
        all = kept;
    }
    if let Some((by, desc)) = sort {
        all.sort_by(|a, b| {
            let o = match by {
                "definitionKey" => a.process_definition_key.cmp(&b.process_definition_key),
                "definitionId" => a.process_definition_id.cmp(&b.process_definition_id),
                "businessKey" => a.business_key.cmp(&b.business_key),
                "tenantId" => a.tenant_id.cmp(&b.tenant_id),
                _ => a.id.cmp(&b.id),
            };
            if desc { o.reverse() } else { o }
        });
    }
    Ok(all)
}

/// `GET /engine-rest/process-instance?…` → `[ProcessInstanceDto]` (running instances).
pub async fn list(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let all = matching(&app, &scope, q).await?;
    Ok(axum::Json(page.page(all).iter().map(instance_dto).collect()))
}

/// `GET /engine-rest/process-instance/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching(&app, &scope, q).await?.len()))
}

/// A running instance, or Camunda's 404.
async fn running(app: &AppState, id: &str) -> Result<InstanceView, ApiError> {
    match app.engine.processes().instance(id).await {
        Ok(i) if !i.ended => Ok(i),
        Ok(_) | Err(kairos::Error::Process(_)) => {
            Err(ApiError::not_found(format!("process instance with id {id} does not exist")))
        }
        Err(e) => Err(e.into()),
    }
}

/// `GET /engine-rest/process-instance/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(instance_dto(&running(&app, &id).await?)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteQuery {
    /// The tasks' delete listeners do not run.
    skip_custom_listeners: Option<String>,
    skip_io_mappings: Option<String>,
    /// Called instances are always deleted with their caller in kairos.
    skip_subprocesses: Option<String>,
    fail_if_not_exists: Option<String>,
}

/// `DELETE /engine-rest/process-instance/{id}` → 204; the instance ends (its history stays,
/// delete reason `deleted`). With `failIfNotExists=false` an unknown id is a 204 too.
pub async fn delete(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let skip_listeners = flag("skipCustomListeners", q.skip_custom_listeners.as_deref())?.unwrap_or(false);
    flag("skipIoMappings", q.skip_io_mappings.as_deref())?;
    if flag("skipSubprocesses", q.skip_subprocesses.as_deref())? == Some(true) {
        return Err(invalid(
            "skipSubprocesses",
            "kairos deletes called instances with their caller: skipSubprocesses true is not supported",
        ));
    }
    let fail = flag("failIfNotExists", q.fail_if_not_exists.as_deref())?.unwrap_or(true);
    if let Err(e) = running(&app, &id).await {
        return if fail { Err(e) } else { Ok(StatusCode::NO_CONTENT) };
    }
    let processes = app.engine.processes();
    if skip_listeners {
        processes.delete_instance_skipping_listeners(&id, "deleted").await?;
    } else {
        processes.delete_instance(&id, "deleted").await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuspendedBody {
    suspended: Option<bool>,
}

/// `PUT /engine-rest/process-instance/{id}/suspended` `{"suspended": bool}` → 204.
pub async fn suspended(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<SuspendedBody>,
) -> Result<StatusCode, ApiError> {
    let s = b.suspended.ok_or_else(|| invalid("suspended", "suspended (true or false) is required"))?;
    running(&app, &id).await?;
    app.engine.processes().set_instance_suspended(&id, s).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ValuesQuery {
    /// Ignored: kairos keeps no serialized values.
    deserialize_values: Option<String>,
    deserialize_value: Option<String>,
}

async fn instance_variables(app: &AppState, id: &str) -> Result<Map<String, Value>, ApiError> {
    running(app, id).await?;
    Ok(app.engine.processes().variables(id).await?)
}

/// `GET /engine-rest/process-instance/{id}/variables` → `{"name": {"type", "value", "valueInfo"}}`.
pub async fn variables(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<ValuesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    flag("deserializeValues", q.deserialize_values.as_deref())?;
    Ok(axum::Json(to_typed(&instance_variables(&app, &id).await?)))
}

/// `GET /engine-rest/process-instance/{id}/variables/{name}` → one typed value; 404 when the
/// instance has no such variable.
pub async fn variable(
    State(app): State<AppState>,
    Segments((id, name)): Segments<(String, String)>,
    Query(q): Query<ValuesQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    flag("deserializeValue", q.deserialize_value.as_deref())?;
    let vars = instance_variables(&app, &id).await?;
    let v = vars
        .get(&name)
        .ok_or_else(|| ApiError::not_found(format!("process instance {id} has no variable {}", super::clip(&name))))?;
    Ok(axum::Json(typed(v)))
}

/// `PUT /engine-rest/process-instance/{id}/variables/{name}` `{"value", "type"}` → 204.
pub async fn put_variable(
    State(app): State<AppState>,
    Segments((id, name)): Segments<(String, String)>,
    Json(body): Json<Value>,
) -> Result<StatusCode, ApiError> {
    kairos_process::validate_variable_name(&name).map_err(|e| invalid("name", e.message))?;
    let value = one(&name, body)?;
    running(&app, &id).await?;
    let mut vars = Map::new();
    vars.insert(name, value);
    app.engine.processes().set_variables(&id, vars).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModifyBody {
    modifications: Option<Value>,
    deletions: Option<Vec<String>>,
}

/// `POST /engine-rest/process-instance/{id}/variables` `{"modifications", "deletions"}` → 204:
/// sets the modifications in one command; `deletions` must be empty (kairos commands set
/// variables, none removes one: set it to null; `DELETE …/variables/{name}` is not routed).
pub async fn modify_variables(
    State(app): State<AppState>,
    Id(id): Id,
    Json(b): Json<ModifyBody>,
) -> Result<StatusCode, ApiError> {
    if b.deletions.as_ref().is_some_and(|d| !d.is_empty()) {
        return Err(invalid(
            "deletions",
            "deletions: removing variables is not supported by kairos; set them to null instead",
        ));
    }
    let vars = from_typed("modifications", b.modifications)?;
    running(&app, &id).await?;
    if !vars.is_empty() {
        app.engine.processes().set_variables(&id, vars).await.map_err(super::conflict_is_bad_request)?;
    }
    Ok(StatusCode::NO_CONTENT)
}
