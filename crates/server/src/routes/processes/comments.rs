//! Flowable's comments: `/runtime/tasks/{id}/comments` and
//! `/history/historic-process-instances/{id}/comments` (ACT_HI_COMMENT). The author is the
//! authenticated user, as Flowable takes it; without one (the node's token, a node without
//! auth) the request's `author`.

use super::{MAX_NAME_CHARS, limited, required};
use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Id, Json, Segments};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::process::Comment;
use serde::{Deserialize, Serialize};

/// A comment as Flowable's `CommentResponse` has it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommentResponse {
    pub id: String,
    pub url: String,
    pub author: Option<String>,
    pub message: String,
    #[serde(serialize_with = "crate::flowable::ser_date")]
    pub time: kairos::Timestamp,
    pub task_id: Option<String>,
    pub task_url: Option<String>,
    pub process_instance_id: Option<String>,
    pub process_instance_url: Option<String>,
}

impl CommentResponse {
    fn of(c: Comment, on_task: bool) -> Self {
        let url = match (&c.task_id, &c.process_instance_id) {
            (Some(t), _) if on_task => format!("/runtime/tasks/{t}/comments/{}", c.id),
            (_, Some(p)) => format!("/history/historic-process-instances/{p}/comments/{}", c.id),
            (Some(t), None) => format!("/runtime/tasks/{t}/comments/{}", c.id),
            (None, None) => String::new(),
        };
        CommentResponse {
            url,
            task_url: c.task_id.as_ref().map(|t| format!("/runtime/tasks/{t}")),
            process_instance_url: c
                .process_instance_id
                .as_ref()
                .map(|p| format!("/history/historic-process-instances/{p}")),
            id: c.id,
            author: c.author,
            message: c.message,
            time: c.time,
            task_id: c.task_id,
            process_instance_id: c.process_instance_id,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentBody {
    message: Option<String>,
    author: Option<String>,
    /// Flowable: show the task's comment on its instance too.
    save_process_instance_id: Option<bool>,
    /// Flowable's `CommentRequest` carries these in answers; sent back, they are ignored.
    id: Option<String>,
    url: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

fn author(a: Option<String>) -> Result<Option<String>, ApiError> {
    a.filter(|a| !a.is_empty()).map(|a| limited("author", a, MAX_NAME_CHARS)).transpose()
}

fn kind_ok(kind: Option<&str>) -> Result<(), ApiError> {
    match kind {
        None | Some("comment") => Ok(()),
        Some(other) => Err(ApiError::invalid("type", format!("type must be comment, not \"{other}\""))),
    }
}

/// `GET /runtime/tasks/{id}/comments`, oldest first.
pub async fn task_list(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<Vec<CommentResponse>>, ApiError> {
    let all = app.engine.processes().task_comments(&id).await?;
    if all.is_empty() {
        // A task that has no comments must at least exist, open or in history.
        app.engine
            .processes()
            .task(&id)
            .await
            .map_err(|_| ApiError::not_found(format!("task {id} is not open and has no comments")))?;
    }
    Ok(axum::Json(all.into_iter().map(|c| CommentResponse::of(c, true)).collect()))
}

/// `POST /runtime/tasks/{id}/comments` `{"message", "author"?, "saveProcessInstanceId"?}` →
/// 201 with the comment.
pub async fn task_add(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    Id(id): Id,
    Json(b): Json<CommentBody>,
) -> Result<Response, ApiError> {
    let _ = (b.id, b.url);
    kind_ok(b.kind.as_deref())?;
    let message = required("message", b.message, kairos::process::MAX_COMMENT_CHARS)?;
    let author = signed(principal, b.author)?;
    let c =
        app.engine.processes().comment_task(&id, author, &message, b.save_process_instance_id.unwrap_or(false)).await?;
    Ok((StatusCode::CREATED, axum::Json(CommentResponse::of(c, true))).into_response())
}

/// The author of a comment: the authenticated user, as Flowable takes it; the body's `author`
/// only when the caller is no user (the node's token, or a node without auth).
fn signed(
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    body: Option<String>,
) -> Result<Option<String>, ApiError> {
    match principal.and_then(|p| p.0.user_id) {
        Some(user) => Ok(Some(user)),
        None => author(body),
    }
}

/// Comment `id` of `all` (those of `on`), or a 404 saying so.
fn pick(all: Vec<Comment>, id: &str, on: &str) -> Result<Comment, ApiError> {
    all.into_iter().find(|c| c.id == id).ok_or_else(|| ApiError::not_found(format!("{on} has no comment {id}")))
}

/// `GET /runtime/tasks/{id}/comments/{commentId}`.
pub async fn task_get(
    State(app): State<AppState>,
    Segments((id, comment)): Segments<(String, String)>,
) -> Result<axum::Json<CommentResponse>, ApiError> {
    let all = app.engine.processes().task_comments(&id).await?;
    Ok(axum::Json(CommentResponse::of(pick(all, &comment, &format!("task {id}"))?, true)))
}

/// `DELETE /runtime/tasks/{id}/comments/{commentId}` → 204.
pub async fn task_delete(
    State(app): State<AppState>,
    Segments((id, comment)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let processes = app.engine.processes();
    pick(processes.task_comments(&id).await?, &comment, &format!("task {id}"))?;
    processes.delete_comment(&comment).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /history/historic-process-instances/{id}/comments`, oldest first.
pub async fn instance_list(
    State(app): State<AppState>,
    Id(id): Id,
) -> Result<axum::Json<Vec<CommentResponse>>, ApiError> {
    let processes = app.engine.processes();
    processes.instance(&id).await?;
    let all = processes.instance_comments(&id).await?;
    Ok(axum::Json(all.into_iter().map(|c| CommentResponse::of(c, false)).collect()))
}

/// `POST /history/historic-process-instances/{id}/comments` `{"message", "author"?}` → 201.
pub async fn instance_add(
    State(app): State<AppState>,
    principal: Option<axum::Extension<kairos::identity::Principal>>,
    Id(id): Id,
    Json(b): Json<CommentBody>,
) -> Result<Response, ApiError> {
    let _ = (b.id, b.url);
    kind_ok(b.kind.as_deref())?;
    if b.save_process_instance_id.is_some() {
        return Err(ApiError::invalid("saveProcessInstanceId", "saveProcessInstanceId is for task comments"));
    }
    let message = required("message", b.message, kairos::process::MAX_COMMENT_CHARS)?;
    let c = app.engine.processes().comment_instance(&id, signed(principal, b.author)?, &message).await?;
    Ok((StatusCode::CREATED, axum::Json(CommentResponse::of(c, false))).into_response())
}

/// `GET /history/historic-process-instances/{id}/comments/{commentId}`.
pub async fn instance_get(
    State(app): State<AppState>,
    Segments((id, comment)): Segments<(String, String)>,
) -> Result<axum::Json<CommentResponse>, ApiError> {
    let all = app.engine.processes().instance_comments(&id).await?;
    Ok(axum::Json(CommentResponse::of(pick(all, &comment, &format!("process instance {id}"))?, false)))
}

/// `DELETE /history/historic-process-instances/{id}/comments/{commentId}` → 204.
pub async fn instance_delete(
    State(app): State<AppState>,
    Segments((id, comment)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let processes = app.engine.processes();
    pick(processes.instance_comments(&id).await?, &comment, &format!("process instance {id}"))?;
    processes.delete_comment(&comment).await?;
    Ok(StatusCode::NO_CONTENT)
}
