//! `/engine-rest/decision-definition`: deployed DMN decisions — list, count, one by id or by key
//! (its latest version), its XML, and evaluating it (Camunda's `EvaluateDecisionDto` in, a list
//! of rule results of typed values out).

use super::variables::{from_typed, to_typed};
use super::{MAX_ID_CHARS, MAX_NAME_CHARS, Paging, flag, list_of, sorting, text};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, Segments};
use crate::tenancy::Scope;
use axum::extract::State;
use kairos::process::{DecisionDefinition, DecisionWhich};
use serde::Deserialize;
use serde_json::{Value, json};

/// Camunda's DecisionDefinitionDto.
pub fn decision_dto(d: &DecisionDefinition) -> Value {
    json!({
        "id": d.id,
        "key": d.key,
        "category": d.category,
        "name": d.name,
        "version": d.version,
        "resource": d.resource_name,
        "deploymentId": d.deployment_id,
        "tenantId": super::tenant_json(&d.tenant_id),
        "decisionRequirementsDefinitionId": null,
        "decisionRequirementsDefinitionKey": null,
        "historyTimeToLive": d.history_ttl_days,
        "versionTag": d.version_tag,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    decision_definition_id: Option<String>,
    decision_definition_id_in: Option<String>,
    name: Option<String>,
    deployment_id: Option<String>,
    key: Option<String>,
    category: Option<String>,
    version: Option<String>,
    version_tag: Option<String>,
    latest_version: Option<String>,
    resource_name: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    include_decision_definitions_without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

const SORT_KEYS: &[&str] = &[
    "id",
    "key",
    "name",
    "version",
    "deploymentId",
    "category",
    "tenantId",
    "versionTag",
    "decisionRequirementsDefinitionKey",
];

async fn matching(app: &AppState, scope: &Scope, q: ListQuery) -> Result<Vec<DecisionDefinition>, ApiError> {
    let latest = flag("latestVersion", q.latest_version.as_deref())?.unwrap_or(false);
    let key = text("key", q.key, MAX_NAME_CHARS)?;
    let mut ids = list_of("decisionDefinitionIdIn", q.decision_definition_id_in, MAX_ID_CHARS)?;
    ids.extend(text("decisionDefinitionId", q.decision_definition_id, MAX_ID_CHARS)?);
    let name = text("name", q.name, MAX_NAME_CHARS)?;
    let category = text("category", q.category, MAX_NAME_CHARS)?;
    let deployment = text("deploymentId", q.deployment_id, MAX_ID_CHARS)?;
    let resource = text("resourceName", q.resource_name, 4000)?;
    let tag = text("versionTag", q.version_tag, 64)?;
    let version = match q.version.filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => Some(v.parse::<i64>().map_err(|_| super::invalid("version", "version must be a whole number"))?),
    };
    let tenants = super::Tenants::parse(
        scope,
        q.tenant_id_in,
        q.without_tenant_id.as_deref(),
        ("includeDecisionDefinitionsWithoutTenantId", q.include_decision_definitions_without_tenant_id.as_deref()),
    )?;
    let sort = sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), SORT_KEYS)?;
    let processes = app.engine.processes();
    let mut all = processes.decision_definitions(key.as_deref(), deployment.as_deref(), latest, tenants.only()).await?;
    all.retain(|d| {
        (ids.is_empty() || ids.contains(&d.id))
            && name.as_ref().is_none_or(|n| d.name.as_ref() == Some(n))
            && category.as_ref().is_none_or(|c| d.category.as_ref() == Some(c))
            && resource.as_ref().is_none_or(|x| &d.resource_name == x)
            && tag.as_ref().is_none_or(|t| d.version_tag.as_ref() == Some(t))
            && version.is_none_or(|v| d.version == v)
            && tenants.keeps(&d.tenant_id)
    });
    if let Some((by, desc)) = sort {
        all.sort_by(|a, b| {
            let o = match by {
                "key" => a.key.cmp(&b.key),
                "name" => a.name.cmp(&b.name),
                "version" => a.version.cmp(&b.version),
                "deploymentId" => a.deployment_id.cmp(&b.deployment_id),
                "category" => a.category.cmp(&b.category),
                "versionTag" => a.version_tag.cmp(&b.version_tag),
                "tenantId" => a.tenant_id.cmp(&b.tenant_id),
                _ => a.id.cmp(&b.id),
            };
            if desc { o.reverse() } else { o }
        });
    }
    Ok(all)
}

/// `GET /engine-rest/decision-definition?…` → `[DecisionDefinitionDto]`.
pub async fn list(
    State(app): State<AppState>,
    scope: Scope,
    Query(mut q): Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    let page = Paging::of(q.first_result.take().as_deref(), q.max_results.take().as_deref())?;
    let all = matching(&app, &scope, q).await?;
    Ok(axum::Json(page.page(all).iter().map(decision_dto).collect()))
}

/// `GET /engine-rest/decision-definition/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: Scope,
    Query(q): Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(super::count(matching(&app, &scope, q).await?.len()))
}

/// The latest version of `key` in the caller's tenant (none for a caller of no tenant), or a
/// 404 naming it as Camunda does.
async fn latest(app: &AppState, scope: &Scope, key: &str) -> Result<DecisionDefinition, ApiError> {
    let tenant = scope.tenant(None);
    let found = app.engine.processes().decision_definition(DecisionWhich::Key(key, tenant)).await;
    found.map_err(|_| super::no_such_key("decision definition", key, tenant))
}

/// `GET /engine-rest/decision-definition/{id}`.
pub async fn get(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(decision_dto(&app.engine.processes().decision_definition(DecisionWhich::Id(&id)).await?)))
}

/// `GET /engine-rest/decision-definition/key/{key}`: its latest version.
pub async fn get_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(decision_dto(&latest(&app, &scope, &key).await?)))
}

/// Camunda's DecisionDefinitionDiagramDto: `{"id", "dmnXml"}`.
async fn diagram(app: &AppState, id: &str) -> Result<axum::Json<Value>, ApiError> {
    let xml = app.engine.processes().decision_xml(id).await?;
    Ok(axum::Json(json!({"id": id, "dmnXml": xml})))
}

/// `GET /engine-rest/decision-definition/{id}/xml`.
pub async fn xml(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Value>, ApiError> {
    diagram(&app, &id).await
}

/// `GET /engine-rest/decision-definition/key/{key}/xml`.
pub async fn xml_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
) -> Result<axum::Json<Value>, ApiError> {
    let d = latest(&app, &scope, &key).await?;
    diagram(&app, &d.id).await
}

/// Camunda's EvaluateDecisionDto.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvaluateBody {
    variables: Option<Value>,
}

/// Evaluates decision `id` → 200 `[{outputName: {type, value, valueInfo}}]`, one per rule.
async fn evaluate_id(app: &AppState, id: &str, body: EvaluateBody) -> Result<axum::Json<Value>, ApiError> {
    let variables = from_typed("variables", body.variables)?;
    let (_, result) = app.engine.processes().evaluate_decision(DecisionWhich::Id(id), &variables).await?;
    Ok(axum::Json(Value::Array(result.iter().map(to_typed).collect())))
}

/// `POST /engine-rest/decision-definition/{id}/evaluate`.
pub async fn evaluate(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<EvaluateBody>,
) -> Result<axum::Json<Value>, ApiError> {
    evaluate_id(&app, &id, body).await
}

/// `POST /engine-rest/decision-definition/key/{key}/evaluate`: its latest version.
pub async fn evaluate_by_key(
    State(app): State<AppState>,
    scope: Scope,
    Segments(key): Segments<String>,
    Json(body): Json<EvaluateBody>,
) -> Result<axum::Json<Value>, ApiError> {
    let d = latest(&app, &scope, &key).await?;
    evaluate_id(&app, &d.id, body).await
}
