//! Deployments over real HTTP (API.md "Processes"), on SQLite and on PostgreSQL: a multipart
//! form deploys every file or nothing, a bad deployment is refused naming what is wrong and
//! writes nothing.

mod processes_support;

use processes_support::{Backend, ORDER, one_task, server};
use serde_json::json;

/// A `multipart/form-data` body of `(field, filename?, content)` parts, and its content type.
fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "kairos-test-boundary-7d1f";
    let mut body = Vec::new();
    for (field, file, content) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{field}\"; filename=\"{f}\"\r\nContent-Type: application/xml\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{field}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn a_multipart_form_deploys_every_file_or_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let (a, b) = (one_task("alpha"), one_task("beta"));
    let (ct, body) =
        multipart(&[("file", Some("alpha.bpmn"), a.as_bytes()), ("file", Some("beta.bpmn20.xml"), b.as_bytes())]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let d = r.ok(201);
    let keys: Vec<&str> =
        d["processDefinitions"].as_array().unwrap().iter().map(|p| p["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["alpha", "beta"], "{d}");
    assert_eq!(d["deployments"].as_array().map(Vec::len), Some(2), "{d}");
    let beta = d["processDefinitions"][1]["id"].as_str().unwrap();
    let xml = srv.get(&format!("/repository/process-definitions/{beta}/resourcedata")).await;
    assert_eq!(xml.text, b);

    // One file with a name field.
    let g = one_task("gamma");
    let (ct, body) = multipart(&[("name", None, b"gamma deployment"), ("file", Some("g.bpmn"), g.as_bytes())]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let d = r.ok(201);
    assert_eq!(
        (d["name"].as_str(), d["processDefinitions"][0]["key"].as_str()),
        (Some("gamma deployment"), Some("gamma"))
    );
    assert!(d.get("deployments").is_none(), "{d}");

    // A form whose second file is malformed deploys neither.
    let before = srv.written().await;
    let bad =
        "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n  <process id=\"x\">\n</definitions>";
    let (ct, body) = multipart(&[
        ("file", Some("delta.bpmn"), one_task("delta").as_bytes()),
        ("file", Some("broken.bpmn"), bad.as_bytes()),
    ]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let msg = r.refused(400, None);
    assert!(msg.contains("broken.bpmn") && msg.contains("line 3"), "names the file and the line: {msg}");
    assert_eq!(srv.written().await, before, "nothing written");

    // A form without files, an unknown field, a file that is not UTF-8.
    let (ct, body) = multipart(&[("name", None, b"x")]);
    srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file"));
    let (ct, body) = multipart(&[("tenant", None, b"x"), ("file", Some("a.bpmn"), a.as_bytes())]);
    let msg =
        srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file")).to_string();
    assert!(msg.contains("tenant"), "{msg}");
    let (ct, body) = multipart(&[("file", Some("latin1.bpmn"), b"<definitions name=\"caf\xe9\"/>")]);
    let msg =
        srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file")).to_string();
    assert!(msg.contains("UTF-8") && msg.contains("latin1.bpmn"), "{msg}");
    assert_eq!(srv.written().await, before, "nothing written");
}

async fn bad_deployments_are_refused_naming_what_is_wrong_and_write_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let before = srv.written().await;

    let malformed = "<?xml version=\"1.0\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n  <process id=\"p\">\n    <startEvent id=\"s\">\n  </process>\n</definitions>";
    let r = srv.deploy_xml("bad", malformed).await;
    let msg = r.refused(400, None);
    assert_eq!(r.json["error"]["code"], "invalid-bpmn", "{}", r.text);
    assert!(msg.contains("line 5"), "names the line: {msg}");

    let dtd = "<?xml version=\"1.0\"?>\n<!DOCTYPE definitions [<!ENTITY x \"y\">]>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"/>";
    let msg = srv.deploy_xml("dtd", dtd).await.refused(400, None).to_string();
    assert!(msg.contains("DOCTYPE") && msg.contains("line 2"), "{msg}");

    let unknown = ORDER.replace("kairos:handler=\"noop\"", "kairos:handler=\"no-such-handler\"");
    let msg = srv.deploy_xml("unknown", &unknown).await.refused(400, None).to_string();
    assert!(msg.contains("no-such-handler") && msg.contains("check"), "names the handler and the element: {msg}");

    let r = srv
        .request("POST", "/repository/deployments", Some("application/xml"), b"<definitions name=\"caf\xe9\"/>")
        .await;
    assert!(r.refused(400, Some("body")).contains("UTF-8"), "{}", r.text);
    srv.request("POST", "/repository/deployments", Some("application/xml"), b"").await.refused(400, Some("body"));
    let r = srv.request("POST", "/repository/deployments", Some("application/json"), b"{}").await;
    assert!(r.refused(415, None).contains("application/xml"), "{}", r.text);
    srv.deploy_xml(&"n".repeat(300), ORDER).await.refused(400, Some("name"));
    srv.request("POST", "/repository/deployments?tenant=x", Some("application/xml"), ORDER.as_bytes())
        .await
        .refused(400, None);

    // Over the parser's 10 MiB: 413 (in-process: over a socket the server may close before
    // the client has sent it all).
    let big = format!("<definitions>{}</definitions>", " ".repeat(11 * 1024 * 1024));
    let req = axum::http::Request::post("/repository/deployments")
        .header("content-type", "application/xml")
        .body(axum::body::Body::from(big))
        .unwrap();
    let res = tower::ServiceExt::oneshot(kairos_server::router(srv.engine.clone()), req).await.unwrap();
    assert_eq!(res.status(), 413);
    let body = http_body_util::BodyExt::collect(res.into_body()).await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("10 MiB"), "{body:?}");
    assert_eq!(srv.written().await, before, "nothing written");

    // Between 2 MiB (the JSON limit) and 10 MiB: read, and judged by the parser.
    let padded = ORDER.replace(
        "<startEvent id=\"start\"/>",
        &format!("<startEvent id=\"start\"/><!--{}-->", "x".repeat(3 * 1024 * 1024)),
    );
    let r = srv.deploy_xml("padded", &padded).await;
    assert_eq!(r.ok(201)["processDefinitions"][0]["key"], "order");

    // Definitions: unknown id, bad action, a suspended definition starts nothing.
    srv.get("/repository/process-definitions/nope").await.refused(404, None);
    srv.get("/repository/process-definitions?latest=yes").await.refused(400, Some("latest"));
    let def = srv.get("/repository/process-definitions?key=order").await.ok(200)["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/repository/process-definitions/{def}");
    srv.put(&path, json!({"action": "pause"})).await.refused(400, Some("action"));
    assert_eq!(srv.put(&path, json!({"action": "suspend"})).await.ok(200)["suspended"], true);
    let before = srv.written().await;
    let r = srv.post("/runtime/process-instances", json!({"processDefinitionKey": "order"})).await;
    assert!(r.refused(409, None).contains("suspended"), "{}", r.text);
    assert_eq!(srv.written().await, before, "nothing written");
    assert_eq!(srv.put(&path, json!({"action": "activate"})).await.ok(200)["suspended"], false);
    srv.started("order", "OK-1", json!({})).await;
}

on_both_backends!(
    a_multipart_form_deploys_every_file_or_nothing,
    bad_deployments_are_refused_naming_what_is_wrong_and_write_nothing,
);
