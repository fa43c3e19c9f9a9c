//! `/repository/deployments` and `/repository/process-definitions` (SPEC P1): deploy BPMN,
//! list and read definitions, suspend and activate them.

use super::{filter, limited, unknown_action};
use crate::AppState;
use crate::dto::{List, Sorting};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, Segments, flag};
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::process::{DefinitionInfo, DeploymentInfo, DeploymentRow, ResourceRow};
use serde::{Deserialize, Serialize};

/// The largest deployment request: the BPMN parser's 10 MiB limit on one document
/// (`kairos_bpmn::limits::MAX_INPUT_BYTES`), plus room for a multipart form's framing.
pub const DEPLOY_MAX_BODY_BYTES: usize = 10 * 1024 * 1024 + 64 * 1024;

/// Longest deployment name: NAME_ is VARCHAR(255) and the resource name adds `.bpmn20.xml`.
const MAX_DEPLOYMENT_NAME_CHARS: usize = 200;

/// Most files in one multipart deployment.
const MAX_FILES: usize = 50;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeployQuery {
    name: Option<String>,
    /// Flowable's spelling of `name`.
    deployment_name: Option<String>,
    /// Flowable's deployment key, kept in ACT_RE_DEPLOYMENT.KEY_.
    deployment_key: Option<String>,
    /// Flowable's tenant of the deployment (a tenant's caller: theirs, named or not).
    tenant_id: Option<String>,
}

/// One BPMN document of a deployment request.
struct Resource {
    /// The deployment (and resource) name.
    name: String,
    /// Where it came from, for messages: `the body` or `file "x.bpmn"`.
    origin: String,
    xml: String,
}

/// `POST /repository/deployments[?name=]`: the body is one BPMN document
/// (`Content-Type: application/xml` or `text/xml`), or a `multipart/form-data` form whose file
/// parts are BPMN documents (an optional text part `name` names them when there is one file).
/// → 201 with Flowable's DeploymentResponse (`id, name, deploymentTime, category,
/// parentDeploymentId, url, tenantId`) and kairos's `processDefinitions` ([`Deployed`]).
/// Flowable's `deploymentName` (= `name`), `deploymentKey` and `tenantId` (query or form
/// field; a tenant's caller deploys to their own tenant) are taken.
///
/// Every document is parsed before any is deployed, so a malformed one writes nothing.
pub async fn deploy(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<DeployQuery>,
    req: Request,
) -> Result<Response, ApiError> {
    let query_name = match (filter(q.name), filter(q.deployment_name)) {
        (Some(_), Some(_)) => return Err(ApiError::invalid("deploymentName", "give name or deploymentName, not both")),
        (Some(n), None) => Some(limited("name", n, MAX_DEPLOYMENT_NAME_CHARS)?),
        (None, Some(n)) => Some(limited("deploymentName", n, MAX_DEPLOYMENT_NAME_CHARS)?),
        (None, None) => None,
    };
    let key = filter(q.deployment_key).map(|k| limited("deploymentKey", k, super::MAX_NAME_CHARS)).transpose()?;
    let ct = req.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("").to_string());
    let essence = ct.as_deref().map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    let (resources, form_tenant) = match essence.as_deref() {
        Some("multipart/form-data") => from_multipart(req, query_name).await?,
        None | Some("application/xml" | "text/xml") => (vec![from_body(req, query_name).await?], None),
        Some(e) if e.ends_with("+xml") => (vec![from_body(req, query_name).await?], None),
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                format!(
                    "a deployment is one BPMN document with Content-Type: application/xml, or a multipart/form-data form of files, not \"{}\" (with curl: -H 'Content-Type: application/xml' --data-binary @process.bpmn, or -F file=@process.bpmn)",
                    ct.unwrap_or_default()
                ),
            ));
        }
    };

    let tenant = match (filter(q.tenant_id), form_tenant) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid("tenantId", "give tenantId in the query or the form, not both"));
        }
        (q, f) => scope.creating("tenantId", q.or(f).as_deref())?,
    };
    // Check everything first (XML, model, handlers): a form whose second file is refused
    // deploys nothing.
    let processes = app.engine.processes();
    for r in &resources {
        if let Err(e) = processes.check_resource(&r.name, &r.xml) {
            return Err(in_resource(e.into(), r, resources.len()));
        }
    }
    let mut done: Vec<DeploymentInfo> = Vec::new();
    for r in &resources {
        match processes.deploy_in(&tenant, &r.name, key.as_deref(), &r.xml).await {
            Ok(d) => done.push(d),
            Err(e) => {
                let mut err = in_resource(e.into(), r, resources.len());
                if !done.is_empty() {
                    let ids: Vec<&str> = done.iter().map(|d| d.id.as_str()).collect();
                    err.message.push_str(&format!(
                        " (the files before it were deployed already, as deployments {})",
                        ids.join(", ")
                    ));
                }
                return Err(err);
            }
        }
    }
    let location = format!("/repository/deployments/{}", encode(&done[0].id));
    Ok((StatusCode::CREATED, [(header::LOCATION, location)], axum::Json(Deployed::new(done))).into_response())
}

/// Names the file a deployment error is about when the form had several.
fn in_resource(mut err: ApiError, r: &Resource, count: usize) -> ApiError {
    if count > 1 || r.origin != "the body" {
        err.message = format!("{}: {}", r.origin, err.message);
    }
    err
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload-too-large",
        "the deployment is over 10 MiB, the largest BPMN document this engine accepts",
    )
}

/// The BPMN text of a body or part: UTF-8, else a 400 naming where the bad byte is.
fn utf8(bytes: Bytes, field: &'static str, origin: &str) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        ApiError::invalid(
            field,
            format!(
                "{origin} is not UTF-8 text: invalid byte at offset {at} (line {line}); save the BPMN file as UTF-8"
            ),
        )
    })
}

async fn from_body(req: Request, name: Option<String>) -> Result<Resource, ApiError> {
    let bytes = Bytes::from_request(req, &()).await.map_err(|rejection| {
        if let Some(limit) = crate::conn::BodyTimeout::in_chain(&rejection) {
            crate::extract::body_timeout(limit)
        } else if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::new(
                rejection.status(),
                "invalid-body",
                format!("the request body could not be read: {}", rejection.body_text()),
            )
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid("body", "the request body is empty; send one BPMN XML document"));
    }
    let xml = utf8(bytes, "body", "the request body")?;
    Ok(Resource { name: name.unwrap_or_else(|| "deployment".into()), origin: "the body".into(), xml })
}

/// The documents of a multipart form, and its `tenantId` text field if it has one.
async fn from_multipart(req: Request, query_name: Option<String>) -> Result<(Vec<Resource>, Option<String>), ApiError> {
    let multipart_error = |e: axum::extract::multipart::MultipartError| {
        if let Some(limit) = crate::conn::BodyTimeout::in_chain(&e) {
            crate::extract::body_timeout(limit)
        } else if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::new(
                e.status(),
                "invalid-body",
                format!("the multipart form could not be read: {}", e.body_text()),
            )
        }
    };
    let mut form = Multipart::from_request(req, &()).await.map_err(|rejection| {
        ApiError::new(
            rejection.status(),
            "invalid-body",
            format!("the multipart form could not be read: {}", rejection.body_text()),
        )
    })?;
    let mut form_name: Option<String> = None;
    let mut form_tenant: Option<String> = None;
    let mut files: Vec<(String, String)> = Vec::new();
    while let Some(field) = form.next_field().await.map_err(multipart_error)? {
        let part = field.name().unwrap_or("").to_string();
        match field.file_name().map(str::to_string) {
            Some(file) => {
                if files.len() == MAX_FILES {
                    return Err(ApiError::invalid("file", format!("a deployment may hold at most {MAX_FILES} files")));
                }
                let bytes = field.bytes().await.map_err(multipart_error)?;
                let origin = format!("file \"{file}\"");
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return Err(ApiError::invalid("file", format!("{origin} is empty")));
                }
                files.push((file, utf8(bytes, "file", &origin)?));
            }
            None if part == "name" || part == "deploymentName" => {
                let text = field.text().await.map_err(multipart_error)?;
                form_name = filter(Some(text)).map(|n| limited("name", n, MAX_DEPLOYMENT_NAME_CHARS)).transpose()?;
            }
            None if part == "tenantId" => {
                let text = field.text().await.map_err(multipart_error)?;
                form_tenant = filter(Some(text)).map(|t| limited("tenantId", t, super::MAX_NAME_CHARS)).transpose()?;
            }
            None => {
                return Err(ApiError::invalid(
                    "file",
                    format!(
                        "form field \"{part}\" is not known here: send BPMN files as file parts (curl -F file=@process.bpmn) and optionally text fields \"name\" and \"tenantId\""
                    ),
                ));
            }
        }
    }
    if files.is_empty() {
        return Err(ApiError::invalid(
            "file",
            "the form holds no file: send at least one BPMN file (curl -F file=@process.bpmn)",
        ));
    }
    let explicit = query_name.or(form_name);
    let single = files.len() == 1;
    let resources = files
        .into_iter()
        .map(|(file, xml)| {
            // One file takes the given name; several keep their own file names (resource names).
            let name = match &explicit {
                Some(n) if single => n.clone(),
                _ => limited("file", file.clone(), MAX_DEPLOYMENT_NAME_CHARS)?,
            };
            Ok(Resource { name, origin: format!("file \"{file}\""), xml })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok((resources, form_tenant))
}

// ---- answer shapes -------------------------------------------------------------------------

/// A path segment percent-encoded as Flowable's URLs have it (`diagrams%2Fa.bpmn20.xml`):
/// every byte but the unreserved characters of RFC 3986.
pub fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Flowable's `DeploymentResponse`. `parentDeploymentId` is the deployment itself, as Flowable
/// sets it for a deployment made without a parent; `category` is never set by kairos.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentResponse {
    pub id: String,
    pub name: Option<String>,
    #[serde(serialize_with = "crate::flowable::ser_date")]
    pub deployment_time: jiff::Timestamp,
    pub category: Option<String>,
    pub parent_deployment_id: String,
    pub url: String,
    pub tenant_id: String,
}

impl DeploymentResponse {
    fn of(d: DeploymentRow) -> Self {
        DeploymentResponse {
            url: format!("/repository/deployments/{}", encode(&d.id)),
            parent_deployment_id: d.id.clone(),
            id: d.id,
            name: d.name,
            deployment_time: d.deploy_time,
            category: d.category,
            tenant_id: d.tenant_id,
        }
    }
}

/// Flowable's `ProcessDefinitionResponse` (`url`, `deploymentUrl`, `resource` and
/// `diagramResource` as URLs) beside kairos's own fields (`resourceName`). kairos keeps no
/// diagram images: `diagramResource` is null.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionResponse {
    #[serde(flatten)]
    pub info: DefinitionInfo,
    pub url: String,
    pub deployment_url: String,
    pub resource: String,
    pub diagram_resource: Option<String>,
}

impl DefinitionResponse {
    pub fn of(info: DefinitionInfo) -> Self {
        let deployment_url = format!("/repository/deployments/{}", encode(&info.deployment_id));
        DefinitionResponse {
            url: format!("/repository/process-definitions/{}", encode(&info.id)),
            resource: format!("{deployment_url}/resources/{}", encode(&info.resource_name)),
            deployment_url,
            diagram_resource: None,
            info,
        }
    }
}

/// The answer to `POST /repository/deployments`: Flowable's DeploymentResponse of the (first)
/// deployment and kairos's `processDefinitions` of every file. A form of several files makes
/// one deployment per file (the engine deploys one document at a time), each under
/// `deployments`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployed {
    #[serde(flatten)]
    pub deployment: DeploymentResponse,
    pub process_definitions: Vec<DefinitionResponse>,
    /// kairos: the processes marked `isExecutable="false"`, deployed with no definition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_processes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployments: Option<Vec<Deployed>>,
}

impl Deployed {
    /// `done` holds at least one deployment.
    fn new(mut done: Vec<DeploymentInfo>) -> Self {
        let one = |d: DeploymentInfo| Deployed {
            deployment: DeploymentResponse::of(DeploymentRow {
                id: d.id,
                name: Some(d.name),
                category: None,
                key: None,
                tenant_id: d.tenant_id,
                deploy_time: d.deployment_time,
            }),
            process_definitions: d.process_definitions.into_iter().map(DefinitionResponse::of).collect(),
            skipped_processes: d.skipped_processes,
            deployments: None,
        };
        if done.len() == 1 {
            return one(done.remove(0));
        }
        let all: Vec<Deployed> = done.into_iter().map(one).collect();
        let first = &all[0].deployment;
        Deployed {
            deployment: DeploymentResponse {
                id: first.id.clone(),
                name: first.name.clone(),
                deployment_time: first.deployment_time,
                category: None,
                parent_deployment_id: first.parent_deployment_id.clone(),
                url: first.url.clone(),
                tenant_id: first.tenant_id.clone(),
            },
            process_definitions: all
                .iter()
                .flat_map(|d| d.process_definitions.iter().map(|p| DefinitionResponse::of(p.info.clone())))
                .collect(),
            skipped_processes: all.iter().flat_map(|d| d.skipped_processes.iter().cloned()).collect(),
            deployments: Some(all),
        }
    }
}

/// Flowable's `DeploymentResourceResponse`: `id` is the resource's name; `type` is
/// `processDefinition` for a BPMN document definitions were deployed from, else `resource`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceResponse {
    pub id: String,
    pub url: String,
    pub content_url: String,
    pub media_type: &'static str,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl ResourceResponse {
    fn of(deployment: &str, r: ResourceRow) -> Self {
        let base = format!("/repository/deployments/{}", encode(deployment));
        ResourceResponse {
            url: format!("{base}/resources/{}", encode(&r.name)),
            content_url: format!("{base}/resourcedata/{}", encode(&r.name)),
            media_type: media_type(&r.name),
            kind: if r.is_definition { "processDefinition" } else { "resource" },
            id: r.name,
        }
    }
}

/// The media type Flowable's content type resolver gives a resource name.
fn media_type(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit('.').next().unwrap_or("");
    match ext {
        "xml" | "bpmn" | "bpmn2" | "dmn" | "cmmn" => "text/xml",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "txt" => "text/plain",
        _ => "application/octet-stream",
    }
}

// ---- filters -------------------------------------------------------------------------------

/// Longest `…Like` pattern (a NAME_ or CATEGORY_ is at most 255 characters; RESOURCE_NAME_ 4000).
const MAX_PATTERN_CHARS: usize = 4000;

/// A deployed file, answered so that a browser opening it runs nothing (an SVG or XHTML file
/// with a script would otherwise run on the console's origin): a sandboxing CSP that allows
/// nothing, and no type sniffing.
pub fn inert(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, axum::http::HeaderValue::from_static("sandbox; default-src 'none'"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, axum::http::HeaderValue::from_static("nosniff"));
    res
}

/// SQL's LIKE as Flowable's queries use it: `%` any run of characters, `_` any one, the rest
/// itself (case-sensitive, as on PostgreSQL). Evaluated here, not in SQL: SQLite's LIKE ignores
/// ASCII case and PostgreSQL's does not, and both backends must answer alike. Linear space,
/// pattern × text time, both bounded by their lengths.
pub fn like(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // matched[j]: the pattern so far matches the first j characters of the text.
    let mut matched = vec![false; t.len() + 1];
    matched[0] = true;
    for &c in &p {
        let mut next = vec![false; t.len() + 1];
        if c == '%' {
            let mut any = false;
            for j in 0..=t.len() {
                any |= matched[j];
                next[j] = any;
            }
        } else {
            for j in 1..=t.len() {
                next[j] = matched[j - 1] && (c == '_' || c == t[j - 1]);
            }
        }
        matched = next;
    }
    matched[t.len()]
}

/// A `…Like` parameter, checked for length.
fn pattern(field: &'static str, v: Option<String>) -> Result<Option<String>, ApiError> {
    filter(v).map(|p| limited(field, p, MAX_PATTERN_CHARS)).transpose()
}

/// Whether `value` passes an optional pattern (a null value passes none).
fn passes(pattern: &Option<String>, value: Option<&str>) -> bool {
    match pattern {
        None => true,
        Some(p) => value.is_some_and(|v| like(p, v)),
    }
}

/// Flowable's tenant filters against kairos's one tenant `''`: `tenantId` keeps everything when
/// empty and nothing otherwise; `tenantIdLike` keeps everything when it matches `''`;
/// `withoutTenantId` changes nothing (nothing has a tenant).
/// Whether a row of tenant `row` (`''`: none) passes Flowable's `tenantIdLike` and
/// `withoutTenantId` (`tenantId` itself is compared by the store, with the caller's scope).
fn tenant_matches(row: &str, like_pattern: &Option<String>, without: Option<bool>) -> bool {
    like_pattern.as_deref().is_none_or(|p| like(p, row)) && (without != Some(true) || row.is_empty())
}

/// A positive whole number parameter.
fn number(field: &'static str, v: Option<&str>) -> Result<Option<i64>, ApiError> {
    match v {
        None | Some("") => Ok(None),
        Some(s) => match s.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(ApiError::invalid(field, format!("{field} must be a whole number of 1 or more, not \"{s}\""))),
        },
    }
}

/// Sorts `all` by the response property `property` (what the `sort` value stands for), then
/// pages it and names `sorting` in the envelope.
fn sort_page<T: Serialize>(
    all: Vec<T>,
    sorting: &Sorting,
    property: &str,
    start: Option<&str>,
    size: Option<&str>,
) -> Result<List<T>, ApiError> {
    let by = Sorting { field: property.to_string(), descending: sorting.descending };
    Ok(super::paged(by.sort(all), start, size)?.sorted_as(sorting))
}

// ---- process definitions -------------------------------------------------------------------

/// Flowable's `GET /repository/process-definitions` parameters that mean something here.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefinitionsQuery {
    key: Option<String>,
    key_like: Option<String>,
    name: Option<String>,
    name_like: Option<String>,
    name_like_ignore_case: Option<String>,
    category: Option<String>,
    category_like: Option<String>,
    category_not_equals: Option<String>,
    resource_name: Option<String>,
    resource_name_like: Option<String>,
    deployment_id: Option<String>,
    version: Option<String>,
    latest: Option<String>,
    suspended: Option<String>,
    tenant_id: Option<String>,
    tenant_id_like: Option<String>,
    without_tenant_id: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// What definition lists sort by (`sort=`): Flowable's `ProcessDefinitionQueryProperty`s.
const DEFINITION_SORTS: &[&str] = &["id", "key", "category", "name", "version", "deploymentId", "tenantId"];

/// `GET /repository/process-definitions` with Flowable's filters; by `name` unless `sort` says.
/// Equality filters run in SQL, `…Like` patterns here ([`like`]).
pub async fn definitions(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<DefinitionsQuery>,
) -> Result<axum::Json<List<DefinitionResponse>>, ApiError> {
    let latest = flag("latest", q.latest.as_deref())?.unwrap_or(false);
    let suspended = flag("suspended", q.suspended.as_deref())?;
    let without_tenant = flag("withoutTenantId", q.without_tenant_id.as_deref())?;
    let version = number("version", q.version.as_deref())?;
    let sorting = Sorting::parse(q.sort.as_deref(), q.order.as_deref(), DEFINITION_SORTS, "name")?;
    let (key, name, category) = (filter(q.key), filter(q.name), filter(q.category));
    let (resource_name, deployment_id) = (filter(q.resource_name), filter(q.deployment_id));
    let key_like = pattern("keyLike", q.key_like)?;
    let name_like = pattern("nameLike", q.name_like)?;
    let name_like_ic = pattern("nameLikeIgnoreCase", q.name_like_ignore_case)?.map(|p| p.to_lowercase());
    let category_like = pattern("categoryLike", q.category_like)?;
    let category_not = filter(q.category_not_equals);
    let resource_like = pattern("resourceNameLike", q.resource_name_like)?;
    let tenant_like = pattern("tenantIdLike", q.tenant_id_like)?;
    let tenant = filter(q.tenant_id);
    let f = kairos::process::DefinitionFilter {
        key: key.as_deref(),
        name: name.as_deref(),
        category: category.as_deref(),
        deployment_id: deployment_id.as_deref(),
        resource_name: resource_name.as_deref(),
        version,
        suspended,
        latest_only: latest,
        tenant: scope.filter(tenant.as_deref()),
    };
    let mut all = app.engine.processes().definitions_query(&f).await?;
    all.retain(|d| {
        tenant_matches(&d.tenant_id, &tenant_like, without_tenant)
            && passes(&key_like, Some(&d.key))
            && passes(&name_like, d.name.as_deref())
            && passes(&name_like_ic, d.name.as_deref().map(str::to_lowercase).as_deref())
            && passes(&category_like, d.category.as_deref())
            && category_not.as_deref().is_none_or(|c| d.category.as_deref() != Some(c))
            && passes(&resource_like, Some(&d.resource_name))
    });
    let all: Vec<DefinitionResponse> = all.into_iter().map(DefinitionResponse::of).collect();
    let property = sorting.field.clone();
    Ok(axum::Json(sort_page(all, &sorting, &property, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /repository/process-definitions/{id}`.
pub async fn definition(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<DefinitionResponse>, ApiError> {
    Ok(axum::Json(DefinitionResponse::of(app.engine.processes().definition(&id).await?)))
}

/// `GET /repository/process-definitions/{id}/resourcedata`: the deployed XML.
pub async fn resource(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    let xml = app.engine.processes().resource(&id).await?;
    Ok(inert(([(header::CONTENT_TYPE, "application/xml; charset=utf-8")], xml).into_response()))
}

/// Flowable's `ProcessDefinitionActionRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefinitionAction {
    action: Option<String>,
    /// Suspend or activate the definition's running instances too.
    include_process_instances: Option<bool>,
    /// Flowable's delayed suspension; not supported (refused unless null).
    date: Option<serde_json::Value>,
}

/// `PUT /repository/process-definitions/{id}` `{"action": "suspend"|"activate",
/// "includeProcessInstances"?, "date"?: null}`: a suspended definition starts no new
/// instances; with `includeProcessInstances` every running instance is suspended (or
/// activated) too, its jobs included.
pub async fn update_definition(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<DefinitionAction>,
) -> Result<axum::Json<DefinitionResponse>, ApiError> {
    if body.date.as_ref().is_some_and(|d| !d.is_null()) {
        return Err(ApiError::invalid(
            "date",
            "date: suspending or activating at a later date is not supported; leave date out or null and call at that time",
        ));
    }
    let suspended = match body.action.as_deref() {
        Some("suspend") => true,
        Some("activate") => false,
        Some(other) => return Err(unknown_action(other, "\"suspend\" or \"activate\"")),
        None => return Err(ApiError::invalid("action", "action is required: \"suspend\" or \"activate\"")),
    };
    let instances = body.include_process_instances.unwrap_or(false);
    let d = app.engine.processes().set_definition_suspended_with(&id, suspended, instances).await?;
    Ok(axum::Json(DefinitionResponse::of(d)))
}

// ---- deployments ---------------------------------------------------------------------------

/// Flowable's `GET /repository/deployments` parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeploymentsQuery {
    name: Option<String>,
    name_like: Option<String>,
    category: Option<String>,
    category_not_equals: Option<String>,
    parent_deployment_id: Option<String>,
    parent_deployment_id_like: Option<String>,
    tenant_id: Option<String>,
    tenant_id_like: Option<String>,
    without_tenant_id: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// What deployment lists sort by (Flowable's `DeploymentQueryProperty`s), and the property of
/// the answer each stands for.
const DEPLOYMENT_SORTS: &[&str] = &["id", "name", "deployTime", "tenantId"];

/// `GET /repository/deployments` with Flowable's filters, by `id` unless `sort` says.
pub async fn deployments(
    State(app): State<AppState>,
    scope: crate::tenancy::Scope,
    Query(q): Query<DeploymentsQuery>,
) -> Result<axum::Json<List<DeploymentResponse>>, ApiError> {
    let without_tenant = flag("withoutTenantId", q.without_tenant_id.as_deref())?;
    let sorting = Sorting::parse(q.sort.as_deref(), q.order.as_deref(), DEPLOYMENT_SORTS, "id")?;
    let name_like = pattern("nameLike", q.name_like)?;
    let parent_like = pattern("parentDeploymentIdLike", q.parent_deployment_id_like)?;
    let tenant_like = pattern("tenantIdLike", q.tenant_id_like)?;
    let (name, category) = (filter(q.name), filter(q.category));
    let (category_not, parent) = (filter(q.category_not_equals), filter(q.parent_deployment_id));
    let tenant = filter(q.tenant_id);
    let tenant = scope.filter(tenant.as_deref());
    let mut all = app.engine.processes().deployments(name.as_deref(), category.as_deref(), tenant).await?;
    all.retain(|d| {
        tenant_matches(&d.tenant_id, &tenant_like, without_tenant)
            && passes(&name_like, d.name.as_deref())
            && category_not.as_deref().is_none_or(|c| d.category.as_deref() != Some(c))
            && parent.as_deref().is_none_or(|p| p == d.id)
            && passes(&parent_like, Some(&d.id))
    });
    let all: Vec<DeploymentResponse> = all.into_iter().map(DeploymentResponse::of).collect();
    let property = if sorting.field == "deployTime" { "deploymentTime".to_string() } else { sorting.field.clone() };
    Ok(axum::Json(sort_page(all, &sorting, &property, q.start.as_deref(), q.size.as_deref())?))
}

/// `GET /repository/deployments/{id}`.
pub async fn deployment(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<DeploymentResponse>, ApiError> {
    Ok(axum::Json(DeploymentResponse::of(app.engine.processes().deployment(&id).await?)))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteDeploymentQuery {
    cascade: Option<String>,
}

/// `DELETE /repository/deployments/{id}?cascade=true|false` → 204. Without cascade a
/// deployment whose definitions have running instances is refused (409 naming them); with it
/// they are deleted first, and the history of its definitions' instances goes too (Flowable's
/// cascade). How many instances were deleted is in the `Kairos-Deleted-Instances` header.
pub async fn delete_deployment(
    State(app): State<AppState>,
    Id(id): Id,
    Query(q): Query<DeleteDeploymentQuery>,
) -> Result<Response, ApiError> {
    let cascade = flag("cascade", q.cascade.as_deref())?.unwrap_or(false);
    let done = app.engine.processes().delete_deployment(&id, cascade).await?;
    Ok((StatusCode::NO_CONTENT, [("kairos-deleted-instances", done.instances.to_string())]).into_response())
}

/// `GET /repository/deployments/{id}/resources`: a plain list (Flowable answers this one
/// without the list envelope).
pub async fn resources(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Vec<ResourceResponse>>, ApiError> {
    let all = app.engine.processes().deployment_resources(&id).await?;
    Ok(axum::Json(all.into_iter().map(|r| ResourceResponse::of(&id, r)).collect()))
}

/// `GET /repository/deployments/{id}/resources/{resourceId}`; a resource id with `/` is sent
/// percent-encoded (`diagrams%2Fa.bpmn20.xml`), as Flowable asks.
pub async fn resource_of_deployment(
    State(app): State<AppState>,
    Segments((id, name)): Segments<(String, String)>,
) -> Result<axum::Json<ResourceResponse>, ApiError> {
    let all = app.engine.processes().deployment_resources(&id).await?;
    let found = all
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(|| ApiError::not_found(format!("deployment {id} has no resource named '{name}'")))?;
    Ok(axum::Json(ResourceResponse::of(&id, found)))
}

/// `GET /repository/deployments/{id}/resourcedata/{resourceId}`: the resource's bytes, with its
/// media type.
pub async fn resource_data(
    State(app): State<AppState>,
    Segments((id, name)): Segments<(String, String)>,
) -> Result<Response, ApiError> {
    let bytes = app.engine.processes().deployment_resource(&id, &name).await?;
    Ok(inert(([(header::CONTENT_TYPE, media_type(&name))], bytes).into_response()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_is_sql_like_case_sensitive() {
        for (p, t, want) in [
            ("%", "", true),
            ("%", "abc", true),
            ("a%", "abc", true),
            ("%c", "abc", true),
            ("a_c", "abc", true),
            ("a_c", "ac", false),
            ("%b%", "abc", true),
            ("A%", "abc", false),
            ("abc", "abc", true),
            ("ab", "abc", false),
            ("", "", true),
            ("", "a", false),
            ("%%x", "aax", true),
            ("Ü%", "Über", true),
        ] {
            assert_eq!(like(p, t), want, "{p} ~ {t}");
        }
    }

    #[test]
    fn resource_names_are_encoded_and_typed() {
        assert_eq!(encode("diagrams/a b.bpmn20.xml"), "diagrams%2Fa%20b.bpmn20.xml");
        assert_eq!(media_type("x.bpmn20.xml"), "text/xml");
        assert_eq!(media_type("x.BPMN"), "text/xml");
        assert_eq!(media_type("x.png"), "image/png");
        assert_eq!(media_type("x"), "application/octet-stream");
    }
}
