//! Listeners through the engine (issue 19, item 6) on both backends: a Camunda model whose
//! execution and task listeners name Java classes runs with Rust handlers registered under
//! those names, a JavaScript listener sets a variable, an unregistered listener class is
//! refused at deploy naming the element, its line and how to bind it, and a listener bound to
//! an external-worker topic is refused (a listener runs inside its command).

mod common;
mod process_support;

use common::{Backend, Fixture};
use kairos::{Answer, handler_fn};
use process_support::{start, trace};
use serde_json::{Map, Value as Json, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="d" targetNamespace="http://bpmn.io/schema/bpmn" exporter="Camunda Modeler" exporterVersion="5.17.0">
  <bpmn:process id="listened" isExecutable="true">
    <bpmn:extensionElements>
      <camunda:executionListener class="com.acme.audit.ProcessListener" event="start" />
    </bpmn:extensionElements>
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="review" />
    <bpmn:userTask id="review" name="Review" camunda:assignee="${who}">
      <bpmn:extensionElements>
        <camunda:taskListener class="com.acme.audit.TaskListener" event="create" />
        <camunda:taskListener class="com.acme.audit.TaskListener" event="complete" />
        <camunda:executionListener event="end">
          <camunda:script scriptFormat="javascript">execution.setVariable("reviewedBy", who.toUpperCase());</camunda:script>
        </camunda:executionListener>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="review" targetRef="done" />
    <bpmn:userTask id="done" />
  </bpmn:process>
</bpmn:definitions>"#;

type Seen = Arc<Mutex<Vec<String>>>;

fn recorder(seen: &Seen) -> impl kairos::Handler {
    let seen = seen.clone();
    handler_fn(move |ctx| {
        let seen = seen.clone();
        async move {
            let l = &ctx.payload["listener"];
            seen.lock().unwrap().push(format!(
                "{}:{}",
                l["event"].as_str().unwrap_or("?"),
                l["elementId"].as_str().unwrap_or("?")
            ));
            let mut variables = Map::new();
            variables.insert(format!("seen_{}", l["event"].as_str().unwrap_or("?")), Json::Bool(true));
            ctx.answer(Answer { result: None, variables });
            Ok(None)
        }
    })
}

async fn java_class_listeners_run_as_registered_handlers(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let seen: Seen = Arc::default();
    let engine = fx
        .engine("n1")
        .handler("com.acme.audit.ProcessListener", recorder(&seen))
        .handler("com.acme.audit.TaskListener", recorder(&seen))
        .build()
        .await
        .unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    p.deploy("listened.bpmn", MODEL).await.unwrap();
    let inst = p.start(start("listened", "L1", json!({"who": "kermit"}))).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["start:listened", "create:review"]);
    let v = p.variables(&inst.id).await.unwrap();
    assert_eq!((v.get("seen_start"), v.get("seen_create")), (Some(&json!(true)), Some(&json!(true))), "{v:?}");

    let task = p.tasks(Some(&inst.id), None, None, None).await.unwrap().remove(0);
    p.complete_task(&task.id, Map::new()).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["start:listened", "create:review", "complete:review"]);
    let v = p.variables(&inst.id).await.unwrap();
    assert_eq!(v.get("reviewedBy"), Some(&json!("KERMIT")), "the script end listener ran: {v:?}");
    assert_eq!(trace(&engine, &inst.id).await, ["start", "review", "done"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn listener_handlers_the_engine_cannot_run_are_refused_at_deploy(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    let err = engine.processes().deploy("listened.bpmn", MODEL).await.unwrap_err().to_string();
    assert!(err.contains("process 'listened', start listener: handler 'com.acme.audit.ProcessListener'"), "{err}");
    assert!(err.contains("userTask 'review', create listener"), "{err}");
    assert!(err.contains("--bind-handler"), "says how to bind: {err}");

    let bound = fx
        .engine("n2")
        .handler("com.acme.audit.ProcessListener", handler_fn(|_| async { Ok(None) }))
        .bind_handler("com.acme.audit.TaskListener", kairos::process::HandlerBinding::Topic("audit".into()))
        .build()
        .await
        .unwrap();
    let err = bound.processes().deploy("listened.bpmn", MODEL).await.unwrap_err().to_string();
    assert!(err.contains("is bound to topic 'audit', but a listener runs inside its command"), "{err}");
}

on_both_backends!(
    java_class_listeners_run_as_registered_handlers,
    listener_handlers_the_engine_cannot_run_are_refused_at_deploy,
);
