//! The API token (`kairos serve --api-token`): without it every route answers 401 in the API's
//! error shape and changes nothing; with it the API works; `GET /health` stays open.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::app;
use serde_json::json;

const TOKEN: &str = "s3cret-token-0123456789";

fn request(method: &str, uri: &str, auth: Option<&str>, body: Option<serde_json::Value>) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(uri);
    if let Some(a) = auth {
        r = r.header(header::AUTHORIZATION, a);
    }
    match body {
        Some(b) => r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())).unwrap(),
        None => r.body(Body::empty()).unwrap(),
    }
}

#[tokio::test]
async fn with_a_token_only_its_holders_get_in() {
    let mut app = app().await;
    app.router = kairos_server::router_with_token(app.engine.clone(), TOKEN);
    let job = json!({"handler": "log", "payload": {"x": 1}});
    for auth in [None, Some("Bearer wrong-token-0123456789"), Some(TOKEN), Some("Basic czNjcmV0")] {
        let r = app.call(request("POST", "/management/jobs", auth, Some(job.clone()))).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{auth:?}: {}", r.text);
        assert_eq!(r.json["error"]["code"], "unauthorized", "{}", r.text);
    }
    let r = app.call(request("GET", "/management/jobs", None, None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = app.call(request("GET", "/metrics", None, None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "metrics need the token too");
    let listed = app.call(request("GET", "/management/jobs", Some(&format!("Bearer {TOKEN}")), None)).await;
    assert_eq!((listed.status, listed.json["total"].as_u64()), (StatusCode::OK, Some(0)), "nothing was enqueued");

    let r = app.call(request("POST", "/management/jobs", Some(&format!("Bearer {TOKEN}")), Some(job))).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app.call(request("GET", "/health", None, None)).await;
    assert_eq!(r.status, StatusCode::OK, "health is open: {}", r.text);
}

#[tokio::test]
async fn a_refusal_names_the_scheme_it_wants() {
    let engine = app().await.engine;
    let router = kairos_server::router_with_token(engine, TOKEN);
    let res = tower::ServiceExt::oneshot(router, request("GET", "/runtime/tasks", None, None)).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let asks = res.headers().get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok());
    assert_eq!(asks, Some("Bearer realm=\"kairos\""));
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let mut app = app().await;
    app.router = kairos_server::router_with_token(app.engine.clone(), TOKEN);
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let r = app.call(request("GET", "/management/jobs", Some(&format!("{scheme} {TOKEN}")), None)).await;
        assert_eq!(r.status, StatusCode::OK, "{scheme}: {}", r.text);
    }
}
