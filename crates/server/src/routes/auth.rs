//! Console sessions (SPEC I7): `POST /auth/login` checks a user's password (with the node's
//! failure counts, [`crate::access`]) and opens a session whose secret goes in a cookie
//! (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page sends it; `Secure`
//! behind HTTPS — `X-Forwarded-Proto: https`, or always with `kairos serve --secure-cookies`),
//! kept as its hash only. A login always opens a new session and ends the one the
//! request came with, so a session id planted before the login is worth nothing (session
//! fixation). `GET /auth/session` says who is logged in and gives the CSRF token that requests
//! changing anything must carry; `POST /auth/logout` ends the session.

use crate::access::{Auth, SESSION_COOKIE, session_cookie};
use crate::error::ApiError;
use crate::extract::Json;
use axum::Extension;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kairos::identity::{Principal, SESSION_LIFETIME, SessionOrigin, csrf_token};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoginBody {
    user_id: Option<String>,
    password: Option<String>,
}

/// Who is logged in, and the CSRF token of their session.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionResponse {
    /// Whether the request's credentials name a caller (on a node without auth, always).
    pub authenticated: bool,
    #[serde(flatten)]
    pub principal: Option<Principal>,
    /// For `X-CSRF-Token` on requests that change anything; null when the caller did not come
    /// with a session cookie.
    pub csrf_token: Option<String>,
}

fn behind_https(headers: &HeaderMap) -> bool {
    headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

fn cookie(value: &str, max_age: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let text = format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}");
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("kairos_session=; Max-Age=0"))
}

fn no_logins() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no-logins",
        "this node takes no user logins: start it with kairos serve --users",
    )
}

/// `POST /auth/login` `{"userId", "password"}` → 200 with the session (and its cookie); 401
/// for a wrong id or password, 429 while the user must wait after too many.
pub async fn login(
    auth: Option<Extension<Arc<Auth>>>,
    headers: HeaderMap,
    Json(b): Json<LoginBody>,
) -> Result<Response, Response> {
    let Some(Extension(auth)) = auth.filter(|a| a.users) else { return Err(no_logins().into_response()) };
    let Some(user) = b.user_id.filter(|u| !u.is_empty()) else {
        return Err(ApiError::invalid("userId", "userId is required").into_response());
    };
    let Some(password) = b.password else {
        return Err(ApiError::invalid("password", "password is required").into_response());
    };
    let identity = auth.engine.identity();
    // Whatever session the request came with ends here: the login's session is a new one.
    if let Some(old) = session_cookie(&headers) {
        identity.close_session(&old).await.map_err(|e| ApiError::from(e).into_response())?;
    }
    let found = auth.check_password(&user, &password).await?;
    let origin = SessionOrigin {
        ip_address: headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()).map(str::to_owned),
        user_agent: headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    let err = |e: kairos::Error| ApiError::from(e).into_response();
    let secret = identity.open_session(&found.id, &origin).await.map_err(err)?;
    let principal = identity.principal(&found).await.map_err(err)?;
    let body =
        SessionResponse { authenticated: true, principal: Some(principal), csrf_token: Some(csrf_token(&secret)) };
    let mut res = axum::Json(body).into_response();
    let h = res.headers_mut();
    let secure = auth.secure_cookies || behind_https(&headers);
    h.insert(header::SET_COOKIE, cookie(&secret, SESSION_LIFETIME.as_secs(), secure));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(res)
}

/// `GET /auth/session`: the caller, and (with a session cookie) its CSRF token; without
/// credentials that hold, `{"authenticated": false}` (a 200: not being logged in is a state,
/// not an error). On a node without auth (loopback only) every caller is an admin: the console
/// needs no login there.
pub async fn session(
    p: Option<Extension<Principal>>,
    auth: Option<Extension<Arc<Auth>>>,
    headers: HeaderMap,
) -> Response {
    let body = match (p, auth) {
        (Some(Extension(p)), _) => {
            let csrf = session_cookie(&headers).map(|s| csrf_token(&s));
            SessionResponse { authenticated: true, principal: Some(p), csrf_token: csrf }
        }
        (None, Some(_)) => SessionResponse { authenticated: false, principal: None, csrf_token: None },
        (None, None) => {
            SessionResponse { authenticated: true, principal: Some(Principal::node_token()), csrf_token: None }
        }
    };
    let mut res = axum::Json(body).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// `POST /auth/logout` → 204: the session ends and its cookie is cleared.
pub async fn logout(auth: Option<Extension<Arc<Auth>>>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut secure = behind_https(&headers);
    if let Some(Extension(auth)) = auth {
        secure |= auth.secure_cookies;
        if let Some(secret) = session_cookie(&headers) {
            auth.engine.identity().close_session(&secret).await?;
        }
    }
    let mut res = StatusCode::NO_CONTENT.into_response();
    res.headers_mut().insert(header::SET_COOKIE, cookie("", 0, secure));
    Ok(res)
}
