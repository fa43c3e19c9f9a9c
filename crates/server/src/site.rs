//! Requests from web pages: what a node without an API token refuses, as local development
//! servers do (Vite's `server.allowedHosts`, webpack-dev-server's `allowedHosts: "auto"`,
//! Jupyter's `allow_origin`).
//!
//! A node on loopback without a token trusts whoever reaches the socket, and a web page the
//! user opens reaches it too. Two holes, two checks:
//!
//! * **Cross-site writes.** Any page may POST a form (multipart, url-encoded, text/plain) or a
//!   no-cors `fetch` to `http://127.0.0.1:8080`. The browser names the page in `Origin`; a
//!   request whose `Origin` is neither this node's own (same scheme, host and port as the
//!   request's `Host`) nor a configured one is refused. JSON bodies must also say
//!   `Content-Type: application/json` ([`crate::extract::Json`]), a type no form can send and
//!   a page can send only after a CORS preflight, which this API never grants.
//! * **DNS rebinding.** A page on `evil.example` whose name is re-pointed at 127.0.0.1 is, to
//!   the browser, same-origin with the node and may read its answers; the one trace is the
//!   `Host` header, which still says `evil.example`. So the node answers only to hosts that
//!   cannot be rebound: IP literals (a page at `http://127.0.0.1:8080` *is* the node),
//!   `localhost` and `*.localhost` (browsers resolve them to loopback themselves), the listen
//!   host, and names the operator configured (`--allowed-host`).
//!
//! Clients that are not browsers (Flowable and Camunda clients, curl, scripts) send no `Origin`
//! and the host they connected to, so they pass. With an API token neither check is needed: a
//! page can neither read nor forge the token. `GET /health` and `GET /openapi.json` stay open
//! to probes whatever their `Host`, as they do with a token.

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;
use std::sync::Arc;

/// Who, besides the node itself, a node without a token answers.
#[derive(Debug, Clone, Default)]
pub struct SitePolicy {
    /// Host names the API answers to besides IP literals and localhost, without a port,
    /// lower case; one starting with `.` (`.example.com`) also allows its subdomains.
    pub allowed_hosts: Vec<String>,
    /// Origins (`https://console.example.com:8443`) whose pages may call the API.
    pub allowed_origins: Vec<String>,
}

/// A refusal names the header and the value that were wrong, and the way out.
impl SitePolicy {
    /// Checks `Host` (or the request target's authority) and `Origin`.
    pub fn check(&self, headers: &HeaderMap, authority: Option<&str>) -> Result<(), ApiError> {
        let host = match headers.get(header::HOST) {
            Some(v) => Some(v.to_str().map_err(|_| refused("Host", "is not ASCII text", "host-not-allowed"))?),
            None => authority,
        };
        if let Some(host) = host {
            self.check_host(host)?;
        }
        match headers.get(header::ORIGIN) {
            None => Ok(()),
            Some(v) => {
                let origin = v.to_str().map_err(|_| refused("Origin", "is not ASCII text", "origin-not-allowed"))?;
                self.check_origin(origin, host)
            }
        }
    }

    fn check_host(&self, host: &str) -> Result<(), ApiError> {
        let name = split_host(host).map(|(name, _)| name);
        match name {
            Some(name) if self.host_allowed(&name) => Ok(()),
            _ => Err(refused(
                "Host",
                &format!(
                    "\"{host}\" is not a host this node answers to without an API token (DNS rebinding): \
                     use its address or localhost, start it with --allowed-host NAME, or set an API token"
                ),
                "host-not-allowed",
            )),
        }
    }

    fn host_allowed(&self, name: &str) -> bool {
        name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.allowed_hosts.iter().any(|a| match a.strip_prefix('.') {
                Some(domain) => name == domain || name.ends_with(a.as_str()),
                None => name == a,
            })
    }

    fn check_origin(&self, origin: &str, host: Option<&str>) -> Result<(), ApiError> {
        let normal = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        let configured = self.allowed_origins.iter().any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(&normal));
        if configured || host.is_some_and(|h| same_origin(&normal, h)) {
            return Ok(());
        }
        Err(refused(
            "Origin",
            &format!(
                "requests from the web page at \"{origin}\" are refused (cross-site request to a node without an \
                 API token): allow that page with --allowed-origin {origin}, or set an API token"
            ),
            "origin-not-allowed",
        ))
    }
}

/// Whether `origin` (`scheme://host[:port]`, lower case) is the site the request was sent to:
/// the same host and port, a missing port being the scheme's default.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // "null": a sandboxed frame or a local file, never the node
    };
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    match (split_host(authority), split_host(host)) {
        (Some((a, ap)), Some((b, bp))) => a == b && ap.unwrap_or(default_port) == bp.unwrap_or(default_port),
        _ => false,
    }
}

/// `name[:port]` or `[v6]:port` → the lower-case name (without brackets or a final dot) and the
/// port; `None` when it is not a host.
fn split_host(host: &str) -> Option<(String, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        match after {
            "" => (v6, None),
            _ => (v6, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    (!name.is_empty()).then_some((name, port))
}

fn refused(field: &str, message: &str, code: &'static str) -> ApiError {
    let mut err = ApiError::new(StatusCode::FORBIDDEN, code, format!("{field}: {message}"));
    err.field = Some(field.to_string());
    err
}

/// Middleware: answers 403 to a request a web page must not make (see the module doc).
pub(crate) async fn same_site(State(policy): State<Arc<SitePolicy>>, req: Request, next: Next) -> Response {
    if matches!(req.uri().path(), "/health" | "/openapi.json") {
        return next.run(req).await;
    }
    match policy.check(req.headers(), req.uri().authority().map(|a| a.as_str())) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> SitePolicy {
        SitePolicy { allowed_hosts: vec!["kairos.internal".into(), ".corp.example".into()], allowed_origins: vec![] }
    }

    #[test]
    fn hosts_that_cannot_be_rebound_pass() {
        let p = policy();
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "[::1]:8080",
            "10.1.2.3:80",
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:1",
            "localhost.:8080",
            "kairos.internal:8080",
            "corp.example",
            "a.corp.example:9",
        ] {
            assert!(p.check_host(ok).is_ok(), "{ok}");
        }
        for bad in ["evil.example:8080", "127.0.0.1.nip.io", "kairos.internal.evil", "xcorp.example", "", ":80", "[::1"]
        {
            assert!(p.check_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_the_nodes_own_origin_or_a_configured_one_passes() {
        let mut p = policy();
        assert!(p.check_origin("http://127.0.0.1:8080", Some("127.0.0.1:8080")).is_ok());
        assert!(p.check_origin("http://localhost", Some("localhost:80")).is_ok());
        assert!(p.check_origin("https://kairos.internal", Some("kairos.internal:443")).is_ok());
        // The scheme counts only for the default port: behind a TLS proxy the node cannot know
        // it, and one port is one server.
        assert!(p.check_origin("https://127.0.0.1:8080", Some("127.0.0.1:8080")).is_ok());
        for bad in ["http://evil.example", "null", "http://localhost:3000", "https://127.0.0.1", "file://"] {
            assert!(p.check_origin(bad, Some("127.0.0.1:8080")).is_err(), "{bad}");
        }
        assert!(p.check_origin("http://localhost:3000", None).is_err());
        p.allowed_origins.push("http://localhost:3000/".into());
        assert!(p.check_origin("http://LOCALHOST:3000", Some("127.0.0.1:8080")).is_ok());
    }
}
