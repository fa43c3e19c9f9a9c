//! Flowable's DMN REST API under `/dmn-api` (its `flowable-rest/dmn-api` servlet): the
//! deployed decisions (`dmn-repository/decisions`) and executing one by key
//! (`dmn-rule/execute-decision`, and the `execute` name of Flowable 6.0–6.4), its input a
//! Flowable variable list and its answer one list of typed variables per matched rule.
//! Decisions are deployed with the BPMN through `/repository/deployments` (a `.dmn` file).

use super::processes::{filter, limited};
use crate::AppState;
use crate::dto::{List, Sorting};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, flag};
use crate::flowable::{RestVariable, type_of, variable_map};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::process::{DecisionDefinition, DecisionWhich};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Flowable's `DmnDecisionResponse` (DMN 1.1–1.3 decisions; kairos deploys decision tables).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionResponse {
    id: String,
    url: String,
    category: Option<String>,
    name: Option<String>,
    key: String,
    description: Option<String>,
    version: i64,
    resource_name: String,
    deployment_id: String,
    tenant_id: String,
    decision_type: &'static str,
}

impl DecisionResponse {
    fn of(d: DecisionDefinition) -> Self {
        DecisionResponse {
            url: format!("dmn-api/dmn-repository/decisions/{}", d.id),
            id: d.id,
            category: d.category,
            name: d.name,
            key: d.key,
            description: None,
            version: d.version,
            resource_name: d.resource_name,
            deployment_id: d.deployment_id,
            tenant_id: d.tenant_id,
            decision_type: "decision_table",
        }
    }
}

/// Flowable's `GET /dmn-repository/decisions` parameters that mean something here.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecisionsQuery {
    key: Option<String>,
    name: Option<String>,
    category: Option<String>,
    deployment_id: Option<String>,
    resource_name: Option<String>,
    version: Option<String>,
    latest: Option<String>,
    tenant_id: Option<String>,
    decision_type: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// What decision lists sort by (`sort=`): Flowable's `DecisionQueryProperty`s.
const DECISION_SORTS: &[&str] = &["id", "key", "category", "name", "version", "deploymentId", "tenantId"];

/// `GET /dmn-api/dmn-repository/decisions` → Flowable's DataResponse of decisions, by `name`
/// unless `sort` says.
pub async fn decisions(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<DecisionsQuery>,
) -> Result<axum::Json<List<DecisionResponse>>, ApiError> {
    let latest = flag("latest", q.latest.as_deref())?.unwrap_or(false);
    let sorting = Sorting::parse(q.sort.as_deref(), q.order.as_deref(), DECISION_SORTS, "name")?;
    let key = filter(q.key).map(|k| limited("key", k, super::processes::MAX_NAME_CHARS)).transpose()?;
    let deployment = filter(q.deployment_id).map(|d| limited("deploymentId", d, 64)).transpose()?;
    let (name, category, resource) = (filter(q.name), filter(q.category), filter(q.resource_name));
    let version = match filter(q.version) {
        None => None,
        Some(v) => Some(v.parse::<i64>().map_err(|_| {
            ApiError::invalid("version", format!("version must be a whole number of 1 or more, not \"{v}\""))
        })?),
    };
    let kind = filter(q.decision_type);
    let tenant = scope.filter(q.tenant_id.as_deref());
    let processes = app.engine.processes();
    let mut all = processes.decision_definitions(key.as_deref(), deployment.as_deref(), latest, tenant).await?;
    all.retain(|d| {
        name.as_ref().is_none_or(|n| d.name.as_ref() == Some(n))
            && category.as_ref().is_none_or(|c| d.category.as_ref() == Some(c))
            && resource.as_ref().is_none_or(|r| &d.resource_name == r)
            && version.is_none_or(|v| d.version == v)
            && kind.as_deref().is_none_or(|k| k == "decision_table")
    });
    let all: Vec<DecisionResponse> = all.into_iter().map(DecisionResponse::of).collect();
    let by = Sorting { field: sorting.field.clone(), descending: sorting.descending };
    Ok(axum::Json(super::processes::paged(by.sort(all), q.start.as_deref(), q.size.as_deref())?.sorted_as(&sorting)))
}

/// `GET /dmn-api/dmn-repository/decisions/{id}`.
pub async fn decision(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<DecisionResponse>, ApiError> {
    let d = app.engine.processes().decision_definition(DecisionWhich::Id(&id)).await?;
    Ok(axum::Json(DecisionResponse::of(d)))
}

/// `GET /dmn-api/dmn-repository/decisions/{id}/resourcedata`: the deployed DMN XML.
pub async fn resource(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    let xml = app.engine.processes().decision_xml(&id).await?;
    Ok(super::processes::repository::inert(
        ([(header::CONTENT_TYPE, "application/xml; charset=utf-8")], xml).into_response(),
    ))
}

/// Flowable's `DmnRuleServiceRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteBody {
    decision_key: Option<String>,
    /// Flowable's decision services (DMN 1.2 `decisionService`): not deployed by kairos.
    decision_service_key: Option<String>,
    tenant_id: Option<String>,
    /// The deployment whose version of the decision to take (falling back to the latest, as
    /// Flowable does when that deployment has none).
    parent_deployment_id: Option<String>,
    input_variables: Option<Value>,
    /// kairos keeps no decision history, so there is none to switch off.
    #[allow(dead_code)]
    disable_history: Option<bool>,
}

/// Runs the decision `body` names: its definition and the outputs of each matched rule.
async fn execute_body(
    app: &AppState,
    scope: &crate::tenancy::Scope,
    body: ExecuteBody,
) -> Result<(DecisionDefinition, Vec<Map<String, Value>>), ApiError> {
    let tenant = scope.tenant(body.tenant_id.as_deref());
    if filter(body.decision_service_key).is_some() {
        return Err(ApiError::invalid(
            "decisionServiceKey",
            "decisionServiceKey: kairos deploys decisions, not decision services; name a decision in decisionKey",
        ));
    }
    let Some(key) = filter(body.decision_key) else {
        return Err(ApiError::invalid("decisionKey", "decisionKey is required: the id of a deployed DMN decision"));
    };
    let key = limited("decisionKey", key, super::processes::MAX_NAME_CHARS)?;
    let variables = variable_map("inputVariables", body.input_variables)?;
    let processes = app.engine.processes();
    let mut def = None;
    if let Some(parent) = filter(body.parent_deployment_id) {
        let parent = limited("parentDeploymentId", parent, 64)?;
        let mut in_parent = processes.decision_definitions(Some(&key), Some(&parent), false, Some(tenant)).await?;
        in_parent.sort_by_key(|d| d.version);
        def = in_parent.pop();
    }
    let def = match def {
        Some(d) => d,
        None => processes.decision_definition(DecisionWhich::Key(&key, tenant)).await?,
    };
    let (def, result) = processes.evaluate_decision(DecisionWhich::Id(&def.id), &variables).await?;
    Ok((def, result))
}

/// One rule's outputs as Flowable lists them: in output order, each with its type.
fn outputs(rule: &Map<String, Value>) -> Vec<RestVariable> {
    rule.iter()
        .map(|(name, value)| RestVariable {
            name: name.clone(),
            kind: type_of(value),
            value: value.clone(),
            scope: None,
        })
        .collect()
}

/// `POST /dmn-api/dmn-rule/execute-decision` (and `/dmn-rule/execute`) → 201
/// `{"resultVariables": [[{name, type, value}, …], …], "url"}`: one list per matched rule.
pub async fn execute(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(body): Json<ExecuteBody>,
) -> Result<Response, ApiError> {
    let (def, result) = execute_body(&app, &scope, body).await?;
    let rules: Vec<Vec<RestVariable>> = result.iter().map(outputs).collect();
    let answer = serde_json::json!({"resultVariables": rules, "url": DecisionResponse::of(def).url});
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// `POST /dmn-api/dmn-rule/execute-decision/single-result` (and `/dmn-rule/execute/single-result`)
/// → 201 `{"resultVariables": [{name, type, value}, …], "url"}`; more than one matched rule is
/// a 400 (Flowable answers 500), none an empty list.
pub async fn execute_single(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Json(body): Json<ExecuteBody>,
) -> Result<Response, ApiError> {
    let (def, result) = execute_body(&app, &scope, body).await?;
    if result.len() > 1 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "multiple-results",
            format!(
                "decision {} matched {} rules; single-result expects at most one (use /dmn-rule/execute-decision for all)",
                def.key,
                result.len()
            ),
        ));
    }
    let single = result.first().map(outputs).unwrap_or_default();
    let answer = serde_json::json!({"resultVariables": single, "url": DecisionResponse::of(def).url});
    Ok((StatusCode::CREATED, axum::Json(answer)).into_response())
}

/// `POST /dmn-api/dmn-rule/execute-decision-service[/single-result]` → 400: kairos deploys no
/// decision services.
pub async fn execute_decision_service() -> ApiError {
    ApiError::invalid(
        "decisionServiceKey",
        "kairos deploys decisions, not decision services: POST /dmn-api/dmn-rule/execute-decision with a decisionKey",
    )
}
