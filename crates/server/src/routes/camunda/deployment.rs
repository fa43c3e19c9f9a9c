//! `POST /engine-rest/deployment/create`: Camunda's multipart deployment.

use super::process_definition::definition_dto;
use super::{clip, date, invalid};
use crate::AppState;
use crate::error::ApiError;
use crate::tenancy::Scope;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use kairos::process::DeploymentInfo;
use serde_json::{Map, Value, json};

/// Most files in one deployment.
const MAX_FILES: usize = 50;
/// Longest deployment name and file name (a resource name is made from it).
const MAX_NAME_CHARS: usize = 200;

/// The text of a form field, at most `max` characters.
async fn text_field(field: axum::extract::multipart::Field<'_>, name: &str, max: usize) -> Result<String, ApiError> {
    let t = field.text().await.map_err(form_error)?;
    if t.chars().count() > max {
        return Err(invalid(name, format!("{name} may have at most {max} characters")));
    }
    Ok(t)
}

fn form_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if let Some(limit) = crate::conn::BodyTimeout::in_chain(&e) {
        return crate::extract::body_timeout(limit);
    }
    ApiError::new(
        e.status(),
        "InvalidRequestException",
        format!("the multipart form could not be read: {}", e.body_text()),
    )
}

/// `POST /engine-rest/deployment/create` (multipart/form-data: `deployment-name`,
/// `deployment-source`, `enable-duplicate-filtering`, `deploy-changed-only`,
/// `deployment-activation-time`, `tenant-id`, and the BPMN files as file parts of any name)
/// → 200 DeploymentWithDefinitionsDto.
///
/// kairos always filters duplicates per definition (an unchanged process keeps its version,
/// Camunda's `deploy-changed-only`), whatever the two flags say; every file is checked before
/// any is deployed, and each file is a kairos deployment of its own (the answer is the first's,
/// with every definition).
pub async fn create(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    req: Request,
) -> Result<axum::Json<Value>, ApiError> {
    let mut form = Multipart::from_request(req, &()).await.map_err(|r| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "InvalidRequestException",
            format!("a deployment is a multipart/form-data form: {}", r.body_text()),
        )
    })?;
    let mut name: Option<String> = None;
    let mut source: Option<String> = None;
    let mut tenant: Option<String> = None;
    let mut files: Vec<(String, String)> = Vec::new();
    while let Some(field) = form.next_field().await.map_err(form_error)? {
        let part = field.name().unwrap_or("").to_string();
        if let Some(file) = field.file_name().map(str::to_string) {
            if files.len() == MAX_FILES {
                return Err(invalid("data", format!("a deployment may hold at most {MAX_FILES} files")));
            }
            if file.chars().count() > MAX_NAME_CHARS || file.is_empty() {
                return Err(invalid(
                    &part,
                    format!("file name \"{}\" must have 1 to {MAX_NAME_CHARS} characters", clip(&file)),
                ));
            }
            let bytes = field.bytes().await.map_err(form_error)?;
            let xml = String::from_utf8(bytes.to_vec())
                .map_err(|_| invalid(&part, format!("file \"{}\" is not UTF-8 text", clip(&file))))?;
            files.push((file, xml));
            continue;
        }
        match part.as_str() {
            "deployment-name" => name = Some(text_field(field, "deployment-name", MAX_NAME_CHARS).await?),
            "deployment-source" => source = Some(text_field(field, "deployment-source", 255).await?),
            "enable-duplicate-filtering" | "deploy-changed-only" => {
                // Python's requests sends a bool as "True" / "False".
                let v = text_field(field, &part, 10).await?.to_ascii_lowercase();
                if v != "true" && v != "false" {
                    return Err(invalid(&part, format!("{part} must be true or false, not \"{}\"", clip(&v))));
                }
            }
            "deployment-activation-time" => {
                let v = text_field(field, &part, 64).await?;
                if !v.is_empty() {
                    return Err(invalid(
                        &part,
                        "deployment-activation-time is not supported by kairos: definitions are active when deployed",
                    ));
                }
            }
            "tenant-id" => tenant = Some(text_field(field, "tenant-id", 255).await?),
            other => {
                return Err(invalid(
                    other,
                    format!(
                        "form field \"{}\" is not one Camunda defines for a deployment; send BPMN files as file parts",
                        clip(other)
                    ),
                ));
            }
        }
    }
    if files.is_empty() {
        return Err(invalid("data", "the deployment holds no file: send at least one BPMN file part"));
    }
    let tenant = scope.creating("tenant-id", tenant.as_deref())?;
    let processes = app.engine.processes();
    for (file, xml) in &files {
        processes.check_resource(file, xml).map_err(|e| {
            let mut e = ApiError::from(e);
            e.message = format!("file \"{}\": {}", clip(file), e.message);
            e
        })?;
    }
    let mut done: Vec<DeploymentInfo> = Vec::new();
    for (file, xml) in &files {
        done.push(processes.deploy_in(&tenant, file, None, xml).await?);
    }
    let first = &done[0];
    let mut defs = Map::new();
    for d in done.iter().flat_map(|d| &d.process_definitions) {
        defs.insert(d.id.clone(), definition_dto(d));
    }
    let mut decisions = Map::new();
    for d in done.iter().flat_map(|d| &d.decision_definitions) {
        decisions.insert(d.id.clone(), super::decision_definition::decision_dto(d));
    }
    Ok(axum::Json(json!({
        "links": [],
        "id": first.id,
        "name": name.unwrap_or_else(|| first.name.clone()),
        "source": source,
        "deploymentTime": date(first.deployment_time),
        "tenantId": super::tenant_json(&first.tenant_id),
        "deployedProcessDefinitions": defs,
        "deployedCaseDefinitions": null,
        "deployedDecisionDefinitions": if decisions.is_empty() { Value::Null } else { Value::Object(decisions) },
        "deployedDecisionRequirementsDefinitions": null,
    })))
}

/// Camunda's DeploymentDto.
fn deployment_dto(d: &kairos::process::DeploymentRow) -> Value {
    json!({
        "links": [], "id": d.id, "name": d.name, "source": null,
        "tenantId": super::tenant_json(&d.tenant_id), "deploymentTime": date(d.deploy_time),
    })
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListQuery {
    id: Option<String>,
    name: Option<String>,
    tenant_id_in: Option<String>,
    without_tenant_id: Option<String>,
    include_deployments_without_tenant_id: Option<String>,
    sort_by: Option<String>,
    sort_order: Option<String>,
    first_result: Option<String>,
    max_results: Option<String>,
}

/// The page `q` asks for and how many match; deployments are read in deployment order.
async fn page_of(app: &AppState, scope: &Scope, q: ListQuery, paged: bool) -> Result<(Vec<Value>, u64), ApiError> {
    let id = super::text("id", q.id, super::MAX_ID_CHARS)?;
    let name = super::text("name", q.name, 255)?;
    let tenants = super::Tenants::parse(
        scope,
        q.tenant_id_in,
        q.without_tenant_id.as_deref(),
        ("includeDeploymentsWithoutTenantId", q.include_deployments_without_tenant_id.as_deref()),
    )?;
    let sort = super::sorting(q.sort_by.as_deref(), q.sort_order.as_deref(), &["deploymentTime"])?;
    let page = if paged {
        super::Paging::of(q.first_result.as_deref(), q.max_results.as_deref())?
    } else {
        super::Paging { first: 0, max: 0 }
    };
    let processes = app.engine.processes();
    if let Some(id) = id {
        let one = match processes.deployment(&id).await {
            Ok(d) if name.as_ref().is_none_or(|n| d.name.as_ref() == Some(n)) && tenants.keeps(&d.tenant_id) => {
                vec![d]
            }
            Ok(_) | Err(kairos::Error::Process(_)) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let total = one.len() as u64;
        return Ok((page.page(one).iter().map(deployment_dto).collect(), total));
    }
    let newest_first = sort.is_some_and(|(_, desc)| desc);
    let mut rows = processes.deployments(name.as_deref(), None, tenants.only()).await?;
    rows.retain(|d| tenants.keeps(&d.tenant_id));
    rows.sort_by(|a, b| (a.deploy_time, &a.id).cmp(&(b.deploy_time, &b.id)));
    if newest_first {
        rows.reverse();
    }
    let total = rows.len() as u64;
    Ok((page.page(rows).iter().map(deployment_dto).collect(), total))
}

/// `GET /engine-rest/deployment?id=&name=&sortBy=deploymentTime&…` → `[DeploymentDto]`.
pub async fn list(
    State(app): State<AppState>,
    scope: Scope,
    crate::extract::Query(q): crate::extract::Query<ListQuery>,
) -> Result<axum::Json<Vec<Value>>, ApiError> {
    Ok(axum::Json(page_of(&app, &scope, q, true).await?.0))
}

/// `GET /engine-rest/deployment/count?…` → `{"count": N}`.
pub async fn count(
    State(app): State<AppState>,
    scope: Scope,
    crate::extract::Query(mut q): crate::extract::Query<ListQuery>,
) -> Result<axum::Json<Value>, ApiError> {
    q.first_result = None;
    q.max_results = None;
    Ok(axum::Json(json!({"count": page_of(&app, &scope, q, false).await?.1})))
}

/// `GET /engine-rest/deployment/{id}`.
pub async fn get(
    State(app): State<AppState>,
    crate::extract::Id(id): crate::extract::Id,
) -> Result<axum::Json<Value>, ApiError> {
    Ok(axum::Json(deployment_dto(&app.engine.processes().deployment(&id).await?)))
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteQuery {
    cascade: Option<String>,
    /// The cascade deletes the instances without their tasks' delete listeners.
    skip_custom_listeners: Option<String>,
    skip_io_mappings: Option<String>,
}

/// `DELETE /engine-rest/deployment/{id}?cascade=` → 204: the deployment, its definitions,
/// resources and start events; with `cascade=true` its running instances first and the
/// history of its definitions' instances, without them a 400 while any runs. The key's version before, if this held its
/// latest, starts by its events again.
pub async fn delete(
    State(app): State<AppState>,
    crate::extract::Id(id): crate::extract::Id,
    crate::extract::Query(q): crate::extract::Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let cascade = super::flag("cascade", q.cascade.as_deref())?.unwrap_or(false);
    let skip = super::flag("skipCustomListeners", q.skip_custom_listeners.as_deref())?.unwrap_or(false);
    super::flag("skipIoMappings", q.skip_io_mappings.as_deref())?;
    let p = app.engine.processes();
    p.delete_deployment_with(&id, cascade, skip).await.map_err(super::conflict_is_bad_request)?;
    Ok(StatusCode::NO_CONTENT)
}
