//! Handler names bound without Rust (issue 19, `kairos serve --bind-handler`): a file naming a
//! Java class and a bean method runs unchanged — the class's work done by an external worker
//! on a topic, the method's by an HTTP endpoint — and an unbound name is refused at deploy
//! with how to bind it. Files of non-executable processes deploy with no definition.

mod common;

use common::{Backend, Fixture};
use kairos::SignedDuration;
use kairos::process::{FetchTopic, HandlerBinding, StartRequest};
use serde_json::{Map, Value as Json, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ORDER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn"
    exporter="Camunda Modeler" exporterVersion="5.17.0">
  <bpmn:process id="bound-order" isExecutable="true" camunda:historyTimeToLive="P7D">
    <bpmn:startEvent id="start"><bpmn:outgoing>f1</bpmn:outgoing></bpmn:startEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="mail" />
    <bpmn:serviceTask id="mail" name="Send mail" camunda:class="com.acme.mail.SendMailDelegate">
      <bpmn:incoming>f1</bpmn:incoming><bpmn:outgoing>f2</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="mail" targetRef="post" />
    <bpmn:serviceTask id="post" name="Post order" camunda:expression="${orderService.post(orderId, 2)}"
        camunda:resultVariable="receipt">
      <bpmn:incoming>f2</bpmn:incoming><bpmn:outgoing>f3</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="f3" sourceRef="post" targetRef="wait" />
    <bpmn:userTask id="wait" name="Check"><bpmn:incoming>f3</bpmn:incoming></bpmn:userTask>
  </bpmn:process>
</bpmn:definitions>"#;

/// A one-route HTTP endpoint on 127.0.0.1 answering every POST with `reply`; the bodies and
/// `Idempotency-Key`s it received are kept.
async fn endpoint(reply: &'static str) -> (String, Arc<Mutex<Vec<(String, Json)>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/orders", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<(String, Json)>>> = Arc::default();
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = conn.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    let Some(end) = text.find("\r\n\r\n") else { continue };
                    let head = text[..end].to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if buf.len() < end + 4 + len {
                        continue;
                    }
                    let key = head.lines().find_map(|l| l.strip_prefix("idempotency-key:")).unwrap_or("").trim();
                    let body: Json = serde_json::from_slice(&buf[end + 4..end + 4 + len]).unwrap_or(Json::Null);
                    kept.lock().unwrap().push((key.to_owned(), body));
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                        reply.len()
                    );
                    let _ = conn.write_all(answer.as_bytes()).await;
                    return;
                }
            });
        }
    });
    (url, seen)
}

async fn java_class_to_a_topic_and_a_bean_method_to_an_endpoint(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (url, seen) = endpoint(r#"{"variables": {"posted": true}, "result": {"receipt": "R-7"}}"#).await;
    let engine = fx
        .engine("bind")
        .bind_handler("com.acme.mail.SendMailDelegate", HandlerBinding::Topic("send-mail".into()))
        .bind_handler("orderService.post", HandlerBinding::Http { url, allow_private: true })
        .build()
        .await
        .unwrap();
    let p = engine.processes();
    p.deploy("bound-order.bpmn", ORDER).await.unwrap();
    let start = StartRequest {
        process_definition_key: Some("bound-order".into()),
        variables: Map::from_iter([("orderId".to_string(), json!("O-1"))]),
        ..Default::default()
    };
    let pi = p.start(start).await.unwrap().id;

    // The Java class is an external task on its topic.
    let topic = FetchTopic::new("send-mail", SignedDuration::from_secs(60));
    let (tasks, hold) = p.external_fetch("worker-1", 10, false, &[topic]).await.unwrap();
    hold.delivered();
    assert_eq!(tasks.len(), 1);
    assert_eq!((tasks[0].element_id.as_str(), tasks[0].variables["orderId"].clone()), ("mail", json!("O-1")));
    assert!(seen.lock().unwrap().is_empty(), "the endpoint is not called before the mail is sent");
    p.external_complete(&tasks[0].id, "worker-1", Map::from_iter([("mailed".to_string(), json!(true))])).await.unwrap();

    // The bean method posted its arguments and the instance's variables; its reply set
    // variables and the result variable.
    let calls = seen.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let (key, body) = &calls[0];
    assert!(key.ends_with(":post"), "idempotency key {key}");
    assert_eq!(body["handler"], "orderService.post");
    assert_eq!(body["arguments"], json!(["O-1", 2]));
    assert_eq!(body["variables"]["mailed"], json!(true));
    assert_eq!(body["processInstanceId"], json!(pi));
    let vars = p.variables(&pi).await.unwrap();
    assert_eq!(vars["posted"], json!(true));
    assert_eq!(vars["receipt"], json!({"receipt": "R-7"}));
    assert_eq!(p.tasks(Some(&pi), None, None, None).await.unwrap().len(), 1, "the instance waits at its user task");
    engine.shutdown(std::time::Duration::from_secs(5)).await;
}

async fn unbound_names_are_refused_with_how_to_bind_them(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("unbound").build().await.unwrap();
    let e = engine.processes().deploy("bound-order.bpmn", ORDER).await.unwrap_err().to_string();
    assert!(e.contains("handler 'com.acme.mail.SendMailDelegate' (class) is not registered"), "{e}");
    assert!(e.contains("handler 'orderService.post' (expression)"), "{e}");
    assert!(e.contains("--bind-handler 'orderService.post=topic:TOPIC'"), "{e}");
    assert!(engine.processes().definitions_list(None, false).await.unwrap().is_empty(), "nothing was deployed");
    // A binding to a handler that does not exist stops the engine from being built.
    let refused = fx.engine("bad").bind_handler("x", HandlerBinding::Handler("nope".into())).build().await;
    assert!(refused.err().unwrap().to_string().contains("no handler 'nope' is registered"));
}

async fn non_executable_processes_deploy_with_no_definition(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("sketch").build().await.unwrap();
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="Definitions_1"
    targetNamespace="http://bpmn.io/schema/bpmn" exporter="bpmn-js (https://demo.bpmn.io)" exporterVersion="17.0.2">
  <bpmn:process id="Process_1" isExecutable="false">
    <bpmn:startEvent id="StartEvent_1" />
  </bpmn:process>
</bpmn:definitions>"#;
    let d = engine.processes().deploy("diagram.bpmn", xml).await.unwrap();
    assert!(d.process_definitions.is_empty());
    assert_eq!(d.skipped_processes, ["Process_1"]);
    let rows = engine.processes().deployments(None, None, None).await.unwrap();
    assert!(rows.iter().any(|r| r.id == d.id), "the deployment was written");
}

on_both_backends!(
    java_class_to_a_topic_and_a_bean_method_to_an_endpoint,
    unbound_names_are_refused_with_how_to_bind_them,
    non_executable_processes_deploy_with_no_definition,
);
