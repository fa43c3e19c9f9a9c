//! Who is calling (SPEC I7). A node guards its API with its own token
//! (`kairos serve --api-token` / `KAIROS_API_TOKEN`: an admin credential), with its users
//! (`--users`: ACT_ID_USER, [`kairos::identity`]), or both; without either the API is open to
//! whoever reaches the socket, which `kairos serve` allows on loopback only (and [`crate::site`]
//! keeps web pages of other sites out).
//!
//! Credentials, on every route but the open ones ([`crate::authz`]):
//! * `Authorization: Bearer TOKEN`: the node's token, or a user's API token (`kairos_…`, kept
//!   as its SHA-256 only);
//! * `Authorization: Basic` (RFC 7617), as Camunda's and Flowable's clients send it: a user's id
//!   and password, or any user name with the node's token as password, so those clients run
//!   unchanged with either.
//!
//! Failed passwords are counted per user id: after [`FREE_FAILURES`] in a row, each further
//! attempt must wait twice as long as the last (1 s, 2 s, … up to 15 min) and is answered 429
//! with `Retry-After` until then, whether or not it would have been right, so guessing is slow
//! and the answer does not tell — except to a client whose password this node verified within
//! the last minutes (a worker sending Basic credentials on every request), which goes on. A
//! success clears the count. The counts are this node's.
//!
//! Once known, the caller's [`Principal`] goes with the request (an extension) and its role is
//! checked against what the route needs ([`crate::authz`]); a user's own-task routes check that
//! the task is theirs. Nothing here logs or answers a credential.

use crate::error::ApiError;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kairos::identity::Principal;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Refuses a token too short to be a secret, or one that cannot travel in a header.
pub fn check_token(token: &str) -> Result<(), String> {
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(format!("the API token must have at least {MIN_TOKEN_CHARS} characters"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the API token must be printable ASCII without spaces".into());
    }
    Ok(())
}

/// Failed passwords of one user id forgiven before each further attempt must wait.
pub const FREE_FAILURES: u32 = 5;
/// The longest wait between attempts of one user id.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// User ids whose failures are remembered; the memory is emptied when full.
const MAX_TRACKED: usize = 100_000;

/// How a node authenticates callers.
#[derive(Debug)]
pub struct Auth {
    pub token: Option<Arc<str>>,
    /// Users may authenticate (Basic password, API token).
    pub users: bool,
    pub engine: Arc<kairos::Engine>,
    /// Session cookies are `Secure` whatever the request says.
    pub secure_cookies: bool,
    failures: Mutex<HashMap<String, Failures>>,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    /// No attempt before this instant.
    next: Instant,
}

impl Auth {
    pub fn new(engine: Arc<kairos::Engine>, token: Option<&str>, users: bool) -> Auth {
        Auth { token: token.map(Arc::from), users, engine, secure_cookies: false, failures: Mutex::new(HashMap::new()) }
    }

    /// How long user `id` must still wait before a password is tried, if at all.
    fn waiting(&self, id: &str) -> Option<std::time::Duration> {
        let failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let f = failures.get(id)?;
        let now = Instant::now();
        (f.next > now).then(|| f.next - now)
    }

    fn failed(&self, id: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        if failures.len() >= MAX_TRACKED && !failures.contains_key(id) {
            // Forget the ids that need no wait now; if every one still does, the one whose
            // wait ends first. Never all at once: that would give every guesser a fresh start.
            failures.retain(|_, f| f.next > now);
            if failures.len() >= MAX_TRACKED
                && let Some(first) = failures.iter().min_by_key(|(_, f)| f.next).map(|(k, _)| k.clone())
            {
                failures.remove(&first);
            }
        }
        let f = failures.entry(id.to_string()).or_insert(Failures { count: 0, next: now });
        f.count = f.count.saturating_add(1);
        f.next = now + wait_after(f.count);
    }

    fn succeeded(&self, id: &str) {
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }

    /// The caller the request's credentials name, or the answer that refuses it.
    pub async fn principal(&self, method: &Method, headers: &HeaderMap) -> Result<Principal, Response> {
        let header = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let Some(header) = header else {
            if let Some(secret) = session_cookie(headers)
                && self.users
            {
                return self.session_principal(method, headers, &secret).await;
            }
            return Err(unauthorized(
                "this node's API needs credentials: Authorization: Bearer TOKEN, or Basic credentials (a user's \
                 id and password, or the node's token as password)",
            ));
        };
        if let Some(presented) = bearer(header).map(str::trim) {
            if self.token.as_deref().is_some_and(|t| same(presented.as_bytes(), t.as_bytes())) {
                return Ok(Principal::node_token());
            }
            if self.users
                && let Some(user) = self.engine.identity().token_user(presented).await.map_err(server_error)?
            {
                return self.engine.identity().principal(&user).await.map_err(server_error);
            }
            return Err(unauthorized("the token is not this node's, nor a user's"));
        }
        let Some((user, password)) = basic(header) else {
            return Err(unauthorized("Authorization must be Bearer or Basic credentials"));
        };
        if self.token.as_deref().is_some_and(|t| same(&password, t.as_bytes())) {
            return Ok(Principal::node_token());
        }
        if !self.users {
            return Err(unauthorized("the API token is not this node's"));
        }
        let (Ok(user), Ok(password)) = (String::from_utf8(user), String::from_utf8(password)) else {
            return Err(unauthorized("the user id or password is wrong"));
        };
        let u = self.check_password(&user, &password).await?;
        self.engine.identity().principal(&u).await.map_err(server_error)
    }

    /// The user `id` when `password` is theirs, counting failures (429 while they must wait).
    /// Only ids a user could have are counted (at most 64 characters), so the counts stay
    /// small; a client already known to hold the right password (this node verified it
    /// lately) is not held up by someone else's guesses.
    pub async fn check_password(&self, id: &str, password: &str) -> Result<kairos::identity::User, Response> {
        let wrong = || unauthorized("the user id or password is wrong");
        if kairos::identity::check_id("id", id).is_err() {
            return Err(wrong());
        }
        if let Some(wait) = self.waiting(id) {
            return match self.engine.identity().remembered(id, password).await.map_err(server_error)? {
                Some(u) => Ok(u),
                None => Err(too_many(wait)),
            };
        }
        match self.engine.identity().check_password(id, password).await.map_err(server_error)? {
            Some(u) => {
                self.succeeded(id);
                Ok(u)
            }
            None => {
                self.failed(id);
                Err(wrong())
            }
        }
    }

    /// The user of console session `secret`; a request that changes anything must carry the
    /// session's CSRF token (`X-CSRF-Token`), which a page of another site cannot know.
    async fn session_principal(
        &self,
        method: &Method,
        headers: &HeaderMap,
        secret: &str,
    ) -> Result<Principal, Response> {
        let Some(user) = self.engine.identity().session_user(secret).await.map_err(server_error)? else {
            return Err(unauthorized("the session has ended or is not this node's: log in again (POST /auth/login)"));
        };
        let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if !safe {
            let sent = headers.get(CSRF_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
            if !same(sent, kairos::identity::csrf_token(secret).as_bytes()) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "csrf-token-missing",
                    "a request made with the session cookie that changes anything needs the session's \
                     X-CSRF-Token header (GET /auth/session)",
                )
                .on("X-CSRF-Token")
                .into_response());
            }
        }
        self.engine.identity().principal(&user).await.map_err(server_error)
    }
}

/// The console session's cookie.
pub const SESSION_COOKIE: &str = "kairos_session";
/// The header carrying a session's CSRF token.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The value of the session cookie, if the request has one.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|c| {
        let (name, value) = c.trim().split_once('=')?;
        (name == SESSION_COOKIE && !value.is_empty()).then(|| value.to_string())
    })
}

/// The wait after `count` failures in a row: none for the first [`FREE_FAILURES`], then
/// 1 s, 2 s, 4 s … up to [`MAX_WAIT`].
fn wait_after(count: u32) -> std::time::Duration {
    if count < FREE_FAILURES {
        return std::time::Duration::ZERO;
    }
    let doublings = (count - FREE_FAILURES).min(20);
    std::time::Duration::from_secs(1u64 << doublings).min(MAX_WAIT)
}

fn server_error(e: kairos::Error) -> Response {
    ApiError::from(e).into_response()
}

fn too_many(wait: std::time::Duration) -> Response {
    let secs = wait.as_secs().max(1);
    let mut res = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "too-many-attempts",
        format!("too many wrong passwords for this user; try again in {secs} s"),
    )
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        res.headers_mut().insert(header::RETRY_AFTER, v);
    }
    res
}

/// Route middleware (after routing, so the matched route is known): authenticates the caller,
/// checks its role against what the route needs, and hands the [`Principal`] on.
pub(crate) async fn authenticate(State(auth): State<Arc<Auth>>, mut req: Request, next: Next) -> Response {
    let pattern = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string()).unwrap_or_default();
    let need = crate::authz::need(req.method(), &pattern);
    // The login route checks passwords with this node's failure counts.
    req.extensions_mut().insert(auth.clone());
    if need == crate::authz::Need::Open {
        return next.run(req).await;
    }
    if need == crate::authz::Need::Optional {
        if let Ok(p) = auth.principal(req.method(), req.headers()).await {
            req.extensions_mut().insert(p);
        }
        return next.run(req).await;
    }
    let principal = match auth.principal(req.method(), req.headers()).await {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    if let Err(refused) = crate::authz::allow(&auth.engine, &principal, need, &mut req).await {
        return refused;
    }
    // A tenant's caller: only its tenant's rows (ids checked, node-wide routes refused).
    let mut req = match crate::tenancy::guard(&auth.engine, &principal, &pattern, req).await {
        Ok(req) => req,
        Err(refused) => return refused,
    };
    req.extensions_mut().insert(principal);
    next.run(req).await
}

/// The credentials of a `Bearer` authorization. The scheme is case-insensitive (RFC 7235
/// §2.1: `BEARER`, `bearer` and `Bearer` are one scheme), followed by one or more spaces.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
}

/// The user id and password of `Basic` credentials (RFC 7617: base64 of `user:password`,
/// the id ending at the first colon), if the header holds such credentials.
fn basic(value: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    use base64::Engine as _;
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(credentials.trim()).ok()?;
    let colon = decoded.iter().position(|b| *b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

#[cfg(test)]
fn basic_password(value: &str) -> Option<Vec<u8>> {
    basic(value).map(|(_, p)| p)
}

pub(crate) fn unauthorized(message: &str) -> Response {
    let mut res = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response();
    res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"kairos\""));
    res
}

/// Compares in time that depends on the lengths only, not on where the first difference is
/// (a timing side channel would reveal the token byte by byte). Written here: it is four lines.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_printable_secrets() {
        assert!(check_token("short").is_err());
        assert!(check_token("sixteen chars ok").is_err(), "spaces cannot travel in a bearer token");
        assert!(check_token("0123456789abcdef").is_ok());
        assert!(check_token("0123456789abcdé-").is_err());
    }

    #[test]
    fn basic_credentials_carry_the_token_as_password() {
        // "camunda:0123456789abcdef" and "x:" in base64.
        assert_eq!(basic_password("Basic Y2FtdW5kYTowMTIzNDU2Nzg5YWJjZGVm").as_deref(), Some(&b"0123456789abcdef"[..]));
        assert_eq!(basic_password("basic eDo=").as_deref(), Some(&b""[..]));
        assert_eq!(basic_password("Basic not-base64!"), None);
        assert_eq!(basic_password("Basic bm9jb2xvbg=="), None, "no colon: not user:password");
        assert_eq!(basic_password("Bearer abc"), None);
    }

    #[test]
    fn the_scheme_is_case_insensitive() {
        for v in ["Bearer t", "bearer t", "BEARER t", "BeArEr   t"] {
            assert_eq!(bearer(v).map(str::trim), Some("t"), "{v}");
        }
        assert_eq!(bearer("Basic dDp0"), None);
        assert_eq!(bearer("Bearert"), None);
    }

    #[test]
    fn waits_double_after_the_free_failures_up_to_a_cap() {
        assert_eq!(wait_after(1), std::time::Duration::ZERO);
        assert_eq!(wait_after(FREE_FAILURES - 1), std::time::Duration::ZERO);
        assert_eq!(wait_after(FREE_FAILURES).as_secs(), 1);
        assert_eq!(wait_after(FREE_FAILURES + 3).as_secs(), 8);
        assert_eq!(wait_after(u32::MAX), MAX_WAIT);
    }

    #[test]
    fn basic_credentials_split_at_the_first_colon() {
        // "kermit:green:frog"
        assert_eq!(basic("Basic a2VybWl0OmdyZWVuOmZyb2c="), Some((b"kermit".to_vec(), b"green:frog".to_vec())));
    }

    #[test]
    fn comparison_needs_every_byte() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
