//! The web console (SPEC I5): one page and its script, style and the vendored bpmn-js viewer,
//! embedded in the binary (`include_bytes!`), so a node serves it with no network and nothing
//! to install. The page talks to the node's own HTTP API with the caller's session, so it can
//! do exactly what the caller's role allows ([`crate::authz`]); the files themselves are open.
//!
//! Every answer carries a Content-Security-Policy that allows this origin's scripts only (no
//! inline script, no other site, no framing), so an injected value cannot run as code; the
//! script also puts every API value into the page as text.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The files under `/console/`: path, media type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    ("app.js", "text/javascript; charset=utf-8", include_bytes!("../console/app.js")),
    ("app.css", "text/css; charset=utf-8", include_bytes!("../console/app.css")),
    (
        "vendor/bpmn-js/bpmn-navigated-viewer.production.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../console/vendor/bpmn-js/bpmn-navigated-viewer.production.min.js"),
    ),
    (
        "vendor/bpmn-js/diagram-js.css",
        "text/css; charset=utf-8",
        include_bytes!("../console/vendor/bpmn-js/diagram-js.css"),
    ),
    ("vendor/bpmn-js/bpmn-js.css", "text/css; charset=utf-8", include_bytes!("../console/vendor/bpmn-js/bpmn-js.css")),
    ("vendor/bpmn-js/LICENSE", "text/plain; charset=utf-8", include_bytes!("../console/vendor/bpmn-js/LICENSE")),
];

const INDEX: &[u8] = include_bytes!("../console/index.html");

/// Scripts and styles from this origin only; bpmn-js sets style attributes on the diagram's
/// elements, hence `'unsafe-inline'` for styles (not for scripts).
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

fn answer(media: &'static str, bytes: &'static [u8], cache: &'static str) -> Response {
    let mut res = (StatusCode::OK, bytes).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    res
}

/// `GET /`: the console's page.
pub async fn index() -> Response {
    answer("text/html; charset=utf-8", INDEX, "no-cache")
}

/// `GET /console/{file}`: a file of the console; the vendored ones may be cached for a day.
pub async fn file(Path(path): Path<String>) -> Response {
    match FILES.iter().find(|(p, _, _)| *p == path) {
        Some((p, media, bytes)) => {
            let cache = if p.starts_with("vendor/") { "public, max-age=86400" } else { "no-cache" };
            answer(media, bytes, cache)
        }
        None => crate::error::ApiError::not_found(format!("the console has no file {path}")).into_response(),
    }
}

/// The bytes the console adds to the binary.
pub fn embedded_bytes() -> usize {
    INDEX.len() + FILES.iter().map(|(_, _, b)| b.len()).sum::<usize>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bpmn_io_watermark_is_kept() {
        let viewer = super::FILES.iter().find(|(p, _, _)| p.ends_with("viewer.production.min.js")).unwrap().2;
        let text = String::from_utf8_lossy(viewer);
        assert!(text.contains("bjs-powered-by"), "the viewer's watermark code is there");
        assert!(
            !String::from_utf8_lossy(include_bytes!("../console/app.css")).contains("powered-by"),
            "and not hidden"
        );
    }

    #[test]
    fn the_console_stays_small() {
        assert!(super::embedded_bytes() < 1024 * 1024, "{} bytes", super::embedded_bytes());
    }
}
