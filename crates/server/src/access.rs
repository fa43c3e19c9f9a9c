//! Who may use the API: everyone who can reach the socket (the default, for a node listening
//! on loopback), or only callers presenting the node's API token (`Authorization: Bearer …`,
//! `kairos serve --api-token` / `KAIROS_API_TOKEN`). Camunda's and Flowable's clients
//! authenticate with HTTP Basic (Camunda's `BasicAuthInterceptor`, Flowable's `auth`
//! username/password): the token is also taken as the password of Basic credentials, whatever
//! the user name, so those clients run unchanged on both faces (`/engine-rest` and Flowable's
//! paths) until users come (SPEC I7).
//!
//! An API that can start processes, delete instances and move dead letters must not be open
//! on a network by accident (LESSONS: unauthenticated REST APIs are the classic hole), so
//! `kairos serve` warns when it listens beyond loopback without a token. `GET /health` stays
//! open: load balancers and orchestrators probe it without credentials, and it tells nothing
//! but the node's id and store kind; so does `GET /openapi.json`, which describes the API,
//! not anything in it. Users, roles and tenant isolation (SPEC I7) are not
//! here yet: one token grants the whole API. A node without a token still keeps web pages of
//! other sites out ([`crate::site`]).

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

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

/// Middleware: lets a request through when it carries `token`, or asks for it with a 401.
pub(crate) async fn require_token(State(token): State<Arc<str>>, req: Request, next: Next) -> Response {
    if matches!(req.uri().path(), "/health" | "/openapi.json") {
        return next.run(req).await;
    }
    let header = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let presented = header.and_then(|h| bearer(h).map(|b| b.trim().as_bytes().to_vec()).or_else(|| basic_password(h)));
    match presented {
        Some(p) if same(&p, token.as_bytes()) => next.run(req).await,
        Some(_) => unauthorized("the API token is not this node's"),
        None => unauthorized(
            "this node's API needs its token: Authorization: Bearer TOKEN (or Basic credentials with the token as password)",
        ),
    }
}

/// The credentials of a `Bearer` authorization. The scheme is case-insensitive (RFC 7235
/// §2.1: `BEARER`, `bearer` and `Bearer` are one scheme), followed by one or more spaces.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
}

/// The password of `Basic` credentials (RFC 7617: base64 of `user:password`), if the header
/// holds such credentials.
fn basic_password(value: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(credentials.trim()).ok()?;
    let colon = decoded.iter().position(|b| *b == b':')?;
    Some(decoded[colon + 1..].to_vec())
}

fn unauthorized(message: &str) -> Response {
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
    fn comparison_needs_every_byte() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
