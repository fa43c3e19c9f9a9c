//! Flowable's identity REST (`/identity/users…`, `/identity/groups…`) over
//! [`kairos::identity`]: users with Argon2id-hashed passwords, groups and memberships, in
//! Flowable's `UserResponse`, `GroupResponse` and `MembershipResponse` shapes and its
//! `DataResponse` lists (filters, `sort`, `order`, `start`, `size`).
//!
//! A password goes in (create, `PUT` with `password`) and never comes out: the answers have no
//! password field, unlike Flowable's create answer, which echoes it. `PUT` changes the fields
//! its body names (`null` clears one) and leaves the others, as Flowable's does. `url` and
//! `pictureUrl` in a body are accepted and ignored, so a client can send back what it read.
//! kairos keeps no pictures and no potential starters: `pictureUrl` is always null and the
//! `potentialStarter` filter is refused by name.

use super::processes::repository::{encode, like};
use super::processes::{filter, paged_sorted};
use crate::AppState;
use crate::dto::{List, Sorting};
use crate::error::ApiError;
use crate::extract::{Id, Json, Query, Segments};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::identity::{Group, GroupChange, NewUser, User, UserChange};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Flowable's `UserResponse`, without a password.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserResponse {
    pub id: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub display_name: Option<String>,
    pub url: String,
    pub email: Option<String>,
    pub tenant_id: Option<String>,
    pub picture_url: Option<String>,
}

impl UserResponse {
    pub fn of(u: User) -> Self {
        UserResponse {
            url: format!("/identity/users/{}", encode(&u.id)),
            id: u.id,
            first_name: u.first_name,
            last_name: u.last_name,
            display_name: u.display_name,
            email: u.email,
            tenant_id: Some(u.tenant_id).filter(|t| !t.is_empty()),
            picture_url: None,
        }
    }
}

/// Flowable's `GroupResponse`.
#[derive(Debug, Serialize)]
pub struct GroupResponse {
    pub id: String,
    pub url: String,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

impl GroupResponse {
    pub fn of(g: Group) -> Self {
        GroupResponse { url: format!("/identity/groups/{}", encode(&g.id)), id: g.id, name: g.name, kind: g.kind }
    }
}

/// Flowable's `MembershipResponse`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MembershipResponse {
    pub user_id: String,
    pub url: String,
    pub group_id: String,
}

/// A text field of a body: a string (at most `max` characters) or null.
fn text(field: &'static str, v: &Value, max: usize) -> Result<Option<String>, ApiError> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(super::processes::limited(field, s.clone(), max)?)),
        other => Err(ApiError::invalid(field, format!("{field} must be a string or null, not {other}"))),
    }
}

fn unknown_field(key: &str, known: &str) -> ApiError {
    ApiError::invalid("body", format!("field \"{key}\" is not known here; a body may hold {known}"))
}

const USER_FIELDS: &str =
    "id, firstName, lastName, displayName, email, password, tenantId (url and pictureUrl are ignored)";
const GROUP_FIELDS: &str = "id, name, type (url is ignored)";
const MAX_TEXT: usize = kairos::identity::MAX_TEXT_CHARS;
const MAX_PASSWORD: usize = kairos::identity::MAX_PASSWORD_BYTES;

/// The fields of a user body, each `None` when absent and `Some(None)` when null.
#[derive(Default)]
struct UserBody {
    id: Option<Option<String>>,
    change: UserChange,
}

fn user_body(body: &Map<String, Value>) -> Result<UserBody, ApiError> {
    let mut b = UserBody::default();
    for (key, v) in body {
        match key.as_str() {
            "id" => b.id = Some(text("id", v, kairos::identity::MAX_ID_CHARS)?),
            "firstName" => b.change.first_name = Some(text("firstName", v, MAX_TEXT)?),
            "lastName" => b.change.last_name = Some(text("lastName", v, MAX_TEXT)?),
            "displayName" => b.change.display_name = Some(text("displayName", v, MAX_TEXT)?),
            "email" => b.change.email = Some(text("email", v, MAX_TEXT)?),
            "tenantId" => b.change.tenant_id = Some(text("tenantId", v, MAX_TEXT)?.unwrap_or_default()),
            "password" => {
                let p = match v {
                    Value::Null => None,
                    Value::String(s) if s.len() > MAX_PASSWORD => {
                        return Err(ApiError::invalid(
                            "password",
                            format!("password may have at most {MAX_PASSWORD} bytes"),
                        ));
                    }
                    Value::String(s) => Some(s.clone()),
                    _ => return Err(ApiError::invalid("password", "password must be a string or null")),
                };
                b.change.password = Some(p);
            }
            "url" | "pictureUrl" => {}
            other => return Err(unknown_field(other, USER_FIELDS)),
        }
    }
    Ok(b)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsersQuery {
    id: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    display_name: Option<String>,
    email: Option<String>,
    first_name_like: Option<String>,
    last_name_like: Option<String>,
    display_name_like: Option<String>,
    email_like: Option<String>,
    member_of_group: Option<String>,
    tenant_id: Option<String>,
    potential_starter: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

fn no_potential_starters(v: Option<&str>) -> Result<(), ApiError> {
    match filter(v.map(str::to_owned)) {
        Some(_) => Err(ApiError::invalid(
            "potentialStarter",
            "kairos keeps no potential starters of process definitions; leave potentialStarter out",
        )),
        None => Ok(()),
    }
}

/// `GET /identity/users`: Flowable's filters (`id`, `firstName`, `lastName`, `displayName`,
/// `email`, their `…Like` forms with `%` and `_`, `memberOfGroup`, `tenantId`), sorted by
/// `id` (default), `firstName`, `lastName`, `displayName` or `email`.
pub async fn users(State(app): State<AppState>, Query(q): Query<UsersQuery>) -> Result<Response, ApiError> {
    no_potential_starters(q.potential_starter.as_deref())?;
    let sorting = Sorting::parse(
        q.sort.as_deref(),
        q.order.as_deref(),
        &["id", "firstName", "lastName", "displayName", "email"],
        "id",
    )?;
    let eq =
        |want: &Option<String>, have: &Option<String>| filter(want.clone()).is_none_or(|w| have.as_ref() == Some(&w));
    let like_ = |pattern: &Option<String>, have: &Option<String>| {
        filter(pattern.clone()).is_none_or(|p| have.as_deref().is_some_and(|h| like(&p, h)))
    };
    let member_of = filter(q.member_of_group.clone());
    let mut all = app.engine.identity().users(member_of.as_deref()).await?;
    all.retain(|u| {
        eq(&q.id, &Some(u.id.clone()))
            && eq(&q.first_name, &u.first_name)
            && eq(&q.last_name, &u.last_name)
            && eq(&q.display_name, &u.display_name)
            && eq(&q.email, &u.email)
            && like_(&q.first_name_like, &u.first_name)
            && like_(&q.last_name_like, &u.last_name)
            && like_(&q.display_name_like, &u.display_name)
            && like_(&q.email_like, &u.email)
            && eq(&q.tenant_id, &Some(u.tenant_id.clone()))
    });
    let all: Vec<UserResponse> = all.into_iter().map(UserResponse::of).collect();
    let list: List<UserResponse> = paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?;
    Ok(axum::Json(list).into_response())
}

/// `POST /identity/users` → 201 with the user; 409 when the id is taken.
pub async fn create_user(
    State(app): State<AppState>,
    Json(body): Json<Map<String, Value>>,
) -> Result<Response, ApiError> {
    let b = user_body(&body)?;
    let Some(Some(id)) = b.id else { return Err(ApiError::invalid("id", "id is required")) };
    let c = b.change;
    let user = User {
        id,
        first_name: c.first_name.flatten(),
        last_name: c.last_name.flatten(),
        display_name: c.display_name.flatten(),
        email: c.email.flatten(),
        tenant_id: c.tenant_id.unwrap_or_default(),
    };
    let created = app.engine.identity().create_user(NewUser { user, password: c.password.flatten() }).await?;
    Ok((StatusCode::CREATED, axum::Json(UserResponse::of(created))).into_response())
}

/// `GET /identity/users/{userId}`.
pub async fn user(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<UserResponse>, ApiError> {
    Ok(axum::Json(UserResponse::of(app.engine.identity().user(&id).await?)))
}

/// `PUT /identity/users/{userId}`: the fields the body names (null clears one; a `password`
/// replaces the password, null removes it). An `id` in the body must be the path's.
pub async fn update_user(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<Map<String, Value>>,
) -> Result<axum::Json<UserResponse>, ApiError> {
    let b = user_body(&body)?;
    if let Some(other) = b.id
        && other.as_deref() != Some(id.as_str())
    {
        return Err(ApiError::invalid("id", "id cannot be changed: leave it out or send the path's id"));
    }
    Ok(axum::Json(UserResponse::of(app.engine.identity().update_user(&id, b.change).await?)))
}

/// `DELETE /identity/users/{userId}` → 204; its memberships go with it.
pub async fn delete_user(State(app): State<AppState>, Id(id): Id) -> Result<StatusCode, ApiError> {
    app.engine.identity().delete_user(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupsQuery {
    id: Option<String>,
    name: Option<String>,
    name_like: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    member: Option<String>,
    potential_starter: Option<String>,
    sort: Option<String>,
    order: Option<String>,
    start: Option<String>,
    size: Option<String>,
}

/// `GET /identity/groups`: Flowable's filters (`id`, `name`, `nameLike`, `type`, `member`),
/// sorted by `id` (default), `name` or `type`.
pub async fn groups(State(app): State<AppState>, Query(q): Query<GroupsQuery>) -> Result<Response, ApiError> {
    no_potential_starters(q.potential_starter.as_deref())?;
    let sorting = Sorting::parse(q.sort.as_deref(), q.order.as_deref(), &["id", "name", "type"], "id")?;
    let (id, name, name_like, kind) = (filter(q.id), filter(q.name), filter(q.name_like), filter(q.kind));
    let member = filter(q.member);
    let mut all = app.engine.identity().groups(member.as_deref()).await?;
    all.retain(|g| {
        id.as_ref().is_none_or(|i| &g.id == i)
            && name.as_ref().is_none_or(|n| g.name.as_ref() == Some(n))
            && name_like.as_ref().is_none_or(|p| g.name.as_deref().is_some_and(|n| like(p, n)))
            && kind.as_ref().is_none_or(|k| g.kind.as_ref() == Some(k))
    });
    let all: Vec<GroupResponse> = all.into_iter().map(GroupResponse::of).collect();
    let list: List<GroupResponse> = paged_sorted(all, q.start.as_deref(), q.size.as_deref(), &sorting)?;
    Ok(axum::Json(list).into_response())
}

/// The fields of a group body: its id (absent `None`, null `Some(None)`) and the change.
fn group_body(body: &Map<String, Value>) -> Result<(Option<Option<String>>, GroupChange), ApiError> {
    let (mut id, mut change) = (None, GroupChange::default());
    for (key, v) in body {
        match key.as_str() {
            "id" => id = Some(text("id", v, kairos::identity::MAX_ID_CHARS)?),
            "name" => change.name = Some(text("name", v, MAX_TEXT)?),
            "type" => change.kind = Some(text("type", v, MAX_TEXT)?),
            "url" => {}
            other => return Err(unknown_field(other, GROUP_FIELDS)),
        }
    }
    Ok((id, change))
}

/// `POST /identity/groups` → 201 with the group; 409 when the id is taken.
pub async fn create_group(
    State(app): State<AppState>,
    Json(body): Json<Map<String, Value>>,
) -> Result<Response, ApiError> {
    let (id, change) = group_body(&body)?;
    let Some(Some(id)) = id else { return Err(ApiError::invalid("id", "id is required")) };
    let group = Group { id, name: change.name.flatten(), kind: change.kind.flatten() };
    let created = app.engine.identity().create_group(group).await?;
    Ok((StatusCode::CREATED, axum::Json(GroupResponse::of(created))).into_response())
}

/// `GET /identity/groups/{groupId}`.
pub async fn group(State(app): State<AppState>, Id(id): Id) -> Result<axum::Json<GroupResponse>, ApiError> {
    Ok(axum::Json(GroupResponse::of(app.engine.identity().group(&id).await?)))
}

/// `PUT /identity/groups/{groupId}`: the fields the body names (null clears one).
pub async fn update_group(
    State(app): State<AppState>,
    Id(id): Id,
    Json(body): Json<Map<String, Value>>,
) -> Result<axum::Json<GroupResponse>, ApiError> {
    let (other, change) = group_body(&body)?;
    if let Some(other) = other
        && other.as_deref() != Some(id.as_str())
    {
        return Err(ApiError::invalid("id", "id cannot be changed: leave it out or send the path's id"));
    }
    Ok(axum::Json(GroupResponse::of(app.engine.identity().update_group(&id, change).await?)))
}

/// `DELETE /identity/groups/{groupId}` → 204; its memberships go with it.
pub async fn delete_group(State(app): State<AppState>, Id(id): Id) -> Result<StatusCode, ApiError> {
    app.engine.identity().delete_group(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MembershipBody {
    user_id: Option<String>,
}

fn membership(user: String, group: String) -> MembershipResponse {
    MembershipResponse {
        url: format!("/identity/groups/{}/members/{}", encode(&group), encode(&user)),
        user_id: user,
        group_id: group,
    }
}

/// `POST /identity/groups/{groupId}/members` `{"userId"}` → 201; 404 when the group or the
/// user does not exist, 409 when the user is a member already.
pub async fn add_member(
    State(app): State<AppState>,
    Id(group): Id,
    Json(b): Json<MembershipBody>,
) -> Result<Response, ApiError> {
    let Some(user) = filter(b.user_id) else { return Err(ApiError::invalid("userId", "userId is required")) };
    app.engine.identity().add_member(&group, &user).await?;
    Ok((StatusCode::CREATED, axum::Json(membership(user, group))).into_response())
}

/// `DELETE /identity/groups/{groupId}/members/{userId}` → 204; 404 when not a member.
pub async fn remove_member(
    State(app): State<AppState>,
    Segments((group, user)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    app.engine.identity().remove_member(&group, &user).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// An API token as its owner sees it; `token` only in the answer that made it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenResponse {
    pub id: String,
    pub user_id: String,
    pub name: Option<String>,
    #[serde(serialize_with = "crate::flowable::ser_date")]
    pub created: kairos::Timestamp,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl TokenResponse {
    fn of(t: kairos::identity::TokenInfo, token: Option<String>) -> Self {
        TokenResponse {
            url: format!("/identity/users/{}/tokens/{}", encode(&t.user_id), encode(&t.id)),
            id: t.id,
            user_id: t.user_id,
            name: t.name,
            created: t.created,
            token,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenBody {
    name: Option<String>,
}

/// `POST /identity/users/{userId}/tokens` `{"name"}` → 201 with the token, shown this once
/// (only its SHA-256 is kept): `Authorization: Bearer kairos_…` authenticates as the user.
pub async fn create_token(
    State(app): State<AppState>,
    Id(user): Id,
    Json(b): Json<TokenBody>,
) -> Result<Response, ApiError> {
    let (token, info) = app.engine.identity().create_token(&user, filter(b.name)).await?;
    let mut res = (StatusCode::CREATED, axum::Json(TokenResponse::of(info, Some(token)))).into_response();
    // The answer holds a secret: no cache may keep it.
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    Ok(res)
}

/// `GET /identity/users/{userId}/tokens`: the user's tokens, without the secrets.
pub async fn tokens(State(app): State<AppState>, Id(user): Id) -> Result<axum::Json<Vec<TokenResponse>>, ApiError> {
    let all = app.engine.identity().tokens(&user).await?;
    Ok(axum::Json(all.into_iter().map(|t| TokenResponse::of(t, None)).collect()))
}

/// `DELETE /identity/users/{userId}/tokens/{tokenId}` → 204: the token no longer works.
pub async fn revoke_token(
    State(app): State<AppState>,
    Segments((user, id)): Segments<(String, String)>,
) -> Result<StatusCode, ApiError> {
    app.engine.identity().revoke_token(&user, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
