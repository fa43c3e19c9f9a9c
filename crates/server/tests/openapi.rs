//! `GET /openapi.json` (SPEC I3) describes exactly the routes the router has: every route and
//! method registered in `src/lib.rs` is in the document and the document has nothing else;
//! operation ids are unique; every `$ref` resolves. It is served without the API token.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::app;
use serde_json::Value;
use std::collections::BTreeSet;

/// (path, method) of every `.route("…", get(…).post(…))` in the router's source, the Camunda
/// facade's (nested under `/engine-rest`) included.
fn routed() -> BTreeSet<(String, String)> {
    let mut out = routes_in(include_str!("../src/lib.rs"), "");
    out.extend(routes_in(include_str!("../src/routes/camunda/mod.rs"), "/engine-rest"));
    out
}

/// The routes of one router's source, their paths under `prefix`.
fn routes_in(src: &str, prefix: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find(".route(") {
        rest = &rest[i + ".route(".len()..];
        // The call's text, up to its closing parenthesis.
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map(|(j, _)| j)
            .expect("a closed .route(");
        let call = &rest[..end];
        // A catch-all segment (`{*file}`) is one path parameter (`{file}`) in OpenAPI.
        let path = format!("{prefix}{}", call.split('"').nth(1).expect("a path literal")).replace("{*", "{");
        for method in ["get", "post", "put", "delete"] {
            let tail = call.split_once(',').map_or("", |(_, t)| t);
            let named = tail.match_indices(&format!("{method}(")).any(|(k, _)| {
                k == 0 || !tail.as_bytes()[k - 1].is_ascii_alphanumeric() && tail.as_bytes()[k - 1] != b'_'
            });
            if named {
                out.insert((path.clone(), method.to_string()));
            }
        }
    }
    out
}

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_document_matches_the_router() {
    let mut app = app().await;
    app.router = kairos_server::router_with_token(app.engine.clone(), "s3cret-token-0123456789");
    let r = app.call(Request::builder().uri("/openapi.json").body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, StatusCode::OK, "served without the token: {}", r.text);
    assert!(r.content_type.starts_with("application/json"), "{}", r.content_type);
    let doc = r.json;
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")), "{}", doc["openapi"]);

    let mut documented = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().unwrap() {
            if !["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            documented.insert((path.clone(), method.clone()));
            let id = op["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
            assert!(op["responses"].as_object().is_some_and(|r| !r.is_empty()), "{method} {path} has no responses");
        }
    }
    let routed = routed();
    assert!(routed.len() > 40, "the router parse found only {} routes", routed.len());
    let missing: Vec<_> = routed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(missing.is_empty(), "routes the document lacks: {missing:?}");
    assert!(extra.is_empty(), "documented but not routed: {extra:?}");

    let mut all = Vec::new();
    refs(&doc, &mut all);
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
        assert!(doc["components"]["schemas"].get(name).is_some(), "$ref {r} does not resolve");
    }
}
