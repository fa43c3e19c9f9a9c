//! A node without an API token and the web pages its user opens (issue 14, item 5): a page of
//! another site can neither write (a form post, a no-cors fetch, a multipart deployment) nor,
//! through DNS rebinding, read; clients that are not browsers work as before.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::{App, Reply, app};
use serde_json::json;

const WAIT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="wait" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
    <userTask id="t"/><sequenceFlow id="f2" sourceRef="t" targetRef="e"/><endEvent id="e"/>
  </process>
</definitions>"#;

/// A request as a browser or a client sends it: `Host`, then the given headers.
fn request(method: &str, uri: &str, host: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(uri).header(header::HOST, host);
    for (name, value) in headers {
        r = r.header(*name, *value);
    }
    r.body(Body::from(body.to_string())).unwrap()
}

/// Method, path, headers, body.
type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, String);

const JSON: (&str, &str) = ("content-type", "application/json");
const NODE: &str = "127.0.0.1:8080";

fn refused(r: &Reply, status: StatusCode, code: &str, field: &str) {
    assert_eq!((r.status, r.error().0), (status, code), "{}", r.text);
    assert_eq!(r.json["error"]["field"], field, "{}", r.text);
}

async fn counts(app: &App) -> (i64, i64) {
    let q = "SELECT (SELECT COUNT(*) FROM ACT_RE_PROCDEF), (SELECT COUNT(*) FROM ACT_RU_EXECUTION)";
    let rows = app.engine.store().sql_query(q, &[]).await.unwrap();
    (app.job_rows().await + rows[0][0].as_i64().unwrap(), rows[0][1].as_i64().unwrap())
}

#[tokio::test]
async fn json_bodies_need_a_json_content_type() {
    let app = app().await;
    let job = json!({"handler": "log"}).to_string();
    let r = app.call(request("POST", "/management/jobs", NODE, &[], &job)).await;
    refused(&r, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "Content-Type");
    assert!(r.error().1.contains("no Content-Type"), "{}", r.text);
    let r = app.call(request("POST", "/management/jobs", NODE, &[("content-type", "text/plain")], &job)).await;
    refused(&r, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "Content-Type");
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let r = app.call(request("POST", "/runtime/signals", NODE, &form, "signalName=go")).await;
    refused(&r, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "Content-Type");
    assert_eq!(counts(&app).await, (0, 0), "nothing was written");

    let r = app
        .call(request("POST", "/management/jobs", NODE, &[("content-type", "application/json; charset=utf-8")], &job))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn pages_of_other_sites_cannot_write() {
    let app = app().await;
    let evil = ("origin", "http://evil.example");
    let job = json!({"handler": "log"}).to_string();
    let start = json!({"processDefinitionKey": "wait"}).to_string();
    let (ct, form) = multipart("file", "p.bpmn", WAIT);
    let cases: Vec<Case> = vec![
        ("POST", "/management/jobs", vec![JSON, evil], job.clone()),
        ("POST", "/runtime/process-instances", vec![JSON, evil], start.clone()),
        ("POST", "/runtime/signals", vec![JSON, evil], json!({"signalName": "go"}).to_string()),
        ("POST", "/repository/deployments", vec![("content-type", ct.as_str()), evil], form.clone()),
        ("POST", "/repository/deployments", vec![("content-type", "application/xml"), evil], WAIT.into()),
        // A sandboxed frame or a local file says "null".
        ("POST", "/repository/deployments", vec![("content-type", ct.as_str()), ("origin", "null")], form.clone()),
        // Another port of the same host is another site (any local dev server).
        ("POST", "/management/jobs", vec![JSON, ("origin", "http://localhost:3000")], job.clone()),
        ("GET", "/management/jobs", vec![evil], String::new()),
    ];
    for (method, uri, headers, body) in cases {
        let r = app.call(request(method, uri, NODE, &headers, &body)).await;
        refused(&r, StatusCode::FORBIDDEN, "origin-not-allowed", "Origin");
        assert!(r.error().1.contains("--allowed-origin"), "the way out is named: {}", r.text);
    }
    assert_eq!(counts(&app).await, (0, 0), "nothing was deployed, started or enqueued");

    // The node's own pages (same scheme, host and port) may.
    let own = [("content-type", ct.as_str()), ("origin", "http://127.0.0.1:8080")];
    let r = app.call(request("POST", "/repository/deployments", NODE, &own, &form)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app
        .call(request("POST", "/runtime/process-instances", NODE, &[JSON, ("origin", "http://127.0.0.1:8080")], &start))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn a_rebound_name_cannot_read_or_write() {
    let app = app().await;
    let job = json!({"handler": "log"}).to_string();
    for host in ["evil.example:8080", "evil.example", "127.0.0.1.nip.io:8080", "localhost.evil.example"] {
        let r = app.call(request("GET", "/management/jobs", host, &[], "")).await;
        refused(&r, StatusCode::FORBIDDEN, "host-not-allowed", "Host");
        assert!(r.error().1.contains("--allowed-host"), "the way out is named: {}", r.text);
        // Same-origin for the browser (the page is on the rebound name), refused by its Host.
        let origin = format!("http://{host}");
        let r = app.call(request("POST", "/management/jobs", host, &[JSON, ("origin", &origin)], &job)).await;
        refused(&r, StatusCode::FORBIDDEN, "host-not-allowed", "Host");
    }
    assert_eq!(counts(&app).await, (0, 0));
    // Probes keep working whatever name they use.
    let r = app.call(request("GET", "/health", "evil.example", &[], "")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// Flowable and Camunda clients, curl and scripts: JSON with its type, no Origin, the host
/// they connected to.
#[tokio::test]
async fn clients_that_are_not_browsers_work_as_before() {
    let app = app().await;
    let job = json!({"handler": "log"}).to_string();
    for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "10.0.0.7:8080", "kairos.localhost"] {
        let r = app.call(request("POST", "/management/jobs", host, &[JSON], &job)).await;
        assert_eq!(r.status, StatusCode::CREATED, "{host}: {}", r.text);
    }
    let r =
        app.call(request("POST", "/repository/deployments", NODE, &[("content-type", "application/xml")], WAIT)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
}

#[tokio::test]
async fn configured_names_and_origins_are_let_in() {
    let mut app = app().await;
    let access = kairos_server::Access {
        token: None,
        users: false,
        secure_cookies: false,
        site: kairos_server::SitePolicy {
            allowed_hosts: vec!["kairos.example.com".into()],
            allowed_origins: vec!["https://console.example.com".into()],
        },
    };
    app.router = kairos_server::router_for(app.engine.clone(), &access);
    let job = json!({"handler": "log"}).to_string();
    let console = ("origin", "https://console.example.com");
    let r = app.call(request("POST", "/management/jobs", "kairos.example.com:8080", &[JSON, console], &job)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = app.call(request("GET", "/management/jobs", "other.example.com", &[], "")).await;
    refused(&r, StatusCode::FORBIDDEN, "host-not-allowed", "Host");
}

/// With a token a page can neither read nor forge it: names behind a proxy need no listing.
#[tokio::test]
async fn with_a_token_the_host_is_not_checked() {
    let mut app = app().await;
    app.router = kairos_server::router_with_token(app.engine.clone(), "s3cret-token-0123456789");
    let auth = ("authorization", "Bearer s3cret-token-0123456789");
    let r = app.call(request("GET", "/management/jobs", "kairos.behind.a.proxy", &[auth], "")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// One file part of a `multipart/form-data` body, as a browser form sends it.
fn multipart(field: &str, file: &str, content: &str) -> (String, String) {
    let b = "----formboundary7MA4YWxk";
    let body = format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n{content}\r\n--{b}--\r\n"
    );
    (format!("multipart/form-data; boundary={b}"), body)
}
