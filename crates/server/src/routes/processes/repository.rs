//! `/repository/deployments` and `/repository/process-definitions` (SPEC P1): deploy BPMN,
//! list and read definitions, suspend and activate them.

use super::{filter, limited, unknown_action};
use crate::AppState;
use crate::dto::{DeploymentDto, List};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, flag};
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::process::{DefinitionInfo, DeploymentInfo};
use serde::Deserialize;

/// The largest deployment request: the BPMN parser's 10 MiB limit on one document
/// (`kairos_bpmn::limits::MAX_INPUT_BYTES`), plus room for a multipart form's framing.
pub const DEPLOY_MAX_BODY_BYTES: usize = 10 * 1024 * 1024 + 64 * 1024;

/// Longest deployment name: NAME_ is VARCHAR(255) and the resource name adds `.bpmn20.xml`.
const MAX_DEPLOYMENT_NAME_CHARS: usize = 200;

/// Most files in one multipart deployment.
const MAX_FILES: usize = 50;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployQuery {
    name: Option<String>,
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
/// → 201 `{"id", "name", "deploymentTime", "processDefinitions": [...]}`.
///
/// Every document is parsed before any is deployed, so a malformed one writes nothing.
pub async fn deploy(
    State(app): State<AppState>,
    Query(q): Query<DeployQuery>,
    req: Request,
) -> Result<Response, ApiError> {
    let query_name = filter(q.name).map(|n| limited("name", n, MAX_DEPLOYMENT_NAME_CHARS)).transpose()?;
    let ct = req.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or("").to_string());
    let essence = ct.as_deref().map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    let resources = match essence.as_deref() {
        Some("multipart/form-data") => from_multipart(req, query_name).await?,
        None | Some("application/xml" | "text/xml") => vec![from_body(req, query_name).await?],
        Some(e) if e.ends_with("+xml") => vec![from_body(req, query_name).await?],
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

    // Check everything first (XML, model, handlers): a form whose second file is refused
    // deploys nothing.
    let processes = app.engine.processes();
    for r in &resources {
        if let Err(e) = processes.validate(&r.xml) {
            return Err(in_resource(e.into(), r, resources.len()));
        }
    }
    let mut done: Vec<DeploymentInfo> = Vec::new();
    for r in &resources {
        match processes.deploy(&r.name, &r.xml).await {
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
    Ok((StatusCode::CREATED, axum::Json(DeploymentDto::new(done))).into_response())
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

async fn from_multipart(req: Request, query_name: Option<String>) -> Result<Vec<Resource>, ApiError> {
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
            None => {
                return Err(ApiError::invalid(
                    "file",
                    format!(
                        "form field \"{part}\" is not known here: send BPMN files as file parts (curl -F file=@process.bpmn) and optionally a text field \"name\""
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
    files
        .into_iter()
        .map(|(file, xml)| {
            // One file takes the given name; several keep their own file names (resource names).
            let name = match &explicit {
                Some(n) if single => n.clone(),
                _ => limited("file", file.clone(), MAX_DEPLOYMENT_NAME_CHARS)?,
            };
            Ok(Resource { name, origin: format!("file \"{file}\""), xml })
        })
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefinitionsQuery {
    key: Option<String>,
    latest: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /repository/process-definitions?key=&latest=true`, by key then version.
pub async fn definitions(
    State(app): State<AppState>,
    Query(q): Query<DefinitionsQuery>,
) -> Result<axum::Json<List<DefinitionInfo>>, ApiError> {
    let latest = flag("latest", q.latest.as_deref())?.unwrap_or(false);
    let key = filter(q.key);
    let all = app.engine.processes().definitions_list(key.as_deref(), latest).await?;
    let sorting = crate::dto::Sorting::parse(q.sort.as_deref(), q.order.as_deref(), DEFINITION_SORTS, "name")?;
    Ok(axum::Json(super::paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?))
}

/// `GET /repository/process-definitions/{id}`.
pub async fn definition(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<DefinitionInfo>, ApiError> {
    Ok(axum::Json(app.engine.processes().definition(&id).await?))
}

/// `GET /repository/process-definitions/{id}/resourcedata`: the deployed XML.
pub async fn resource(State(app): State<AppState>, Id(id): Id) -> Result<Response, ApiError> {
    let xml = app.engine.processes().resource(&id).await?;
    Ok(([(header::CONTENT_TYPE, "application/xml; charset=utf-8")], xml).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefinitionAction {
    action: String,
}

/// `PUT /repository/process-definitions/{id}` `{"action": "suspend"|"activate"}`: a suspended
/// definition starts no new instances; running ones go on.
pub async fn update_definition(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<DefinitionAction>,
) -> Result<axum::Json<DefinitionInfo>, ApiError> {
    let suspended = match body.action.as_str() {
        "suspend" => true,
        "activate" => false,
        other => return Err(unknown_action(other, "\"suspend\" or \"activate\"")),
    };
    Ok(axum::Json(app.engine.processes().set_definition_suspended(&id, suspended).await?))
}

/// What this list sorts by (`sort=`), Flowable's query properties that kairos has.
const DEFINITION_SORTS: &[&str] = &["id", "key", "name", "version", "deploymentId"];
