//! `GET /openapi.json`: the API described as OpenAPI 3.1 (SPEC I3), for client generators and
//! API browsers. The document is written by hand next to the router (`crates/server/openapi.json`)
//! and kept honest by a test that compares its paths and methods with the router's routes and
//! resolves every schema reference (`tests/openapi.rs`).

use axum::http::header;
use axum::response::IntoResponse;

/// The document, as built into the binary.
pub const DOCUMENT: &str = include_str!("../../openapi.json");

/// 200 with the document. Open like `/health`: it tells how to call the API, not what is in it.
pub async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
