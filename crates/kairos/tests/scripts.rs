//! JavaScript in models (issue 19, item 4) on both backends: a script task sets variables and
//! its result variable, a script condition picks a gateway's flow and another fires a
//! conditional boundary event, a `camunda:script` input parameter computes a local. A format the sandbox does not run, a syntax error, or any script
//! on an engine with scripts switched off is refused at deploy with its element and line. A
//! hostile script (endless loop, memory bomb, host access, import, pollution, huge output)
//! fails its command with a clear error and leaves the store as it was.

mod common;
mod process_support;

use common::{Backend, Fixture, count_rows};
use kairos::ScriptLimits;
use kairos_process::ErrorKind;
use process_support::{engine, start, trace};
use serde_json::json;
use std::time::Duration;

const ORDER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="scripted" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="price" />
    <bpmn:scriptTask id="price" name="Price the order" scriptFormat="javascript" camunda:resultVariable="total">
      <bpmn:script><![CDATA[
var lines = items.map(function (i) { return i.qty * i.price; });
var total = lines.reduce(function (a, b) { return a + b; }, 0);
execution.setVariable("lineCount", lines.length);
execution.setVariable("pricedAt", execution.getCurrentActivityId());
total;
]]></bpmn:script>
    </bpmn:scriptTask>
    <bpmn:sequenceFlow id="f2" sourceRef="price" targetRef="gw" />
    <bpmn:exclusiveGateway id="gw" default="small" />
    <bpmn:sequenceFlow id="big" sourceRef="gw" targetRef="approve">
      <bpmn:conditionExpression xsi:type="bpmn:tFormalExpression" language="javascript"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">total &gt; 100 &amp;&amp; customer.vip !== true</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="small" sourceRef="gw" targetRef="ship" />
    <bpmn:userTask id="approve" name="Approve">
      <bpmn:extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="summary">
            <camunda:script scriptFormat="JavaScript">customer.name + " orders " + lineCount + " lines for " + total</camunda:script>
          </camunda:inputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f3" sourceRef="approve" targetRef="ship" />
    <bpmn:boundaryEvent id="urgent" attachedToRef="approve" cancelActivity="false">
      <bpmn:conditionalEventDefinition>
        <bpmn:condition language="javascript">execution.getVariable("rush") === true</bpmn:condition>
      </bpmn:conditionalEventDefinition>
    </bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f4" sourceRef="urgent" targetRef="expedite" />
    <bpmn:userTask id="expedite" name="Expedite" />
    <bpmn:userTask id="ship" name="Ship" />
  </bpmn:process>
</bpmn:definitions>"#;

async fn scripts_set_variables_choose_flows_and_compute_parameters(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("scripted.bpmn", ORDER).await.unwrap();

    let items = json!([{"qty": 3, "price": 40}, {"qty": 1, "price": 5}]);
    let big = p.start(start("scripted", "O-1", json!({"items": items, "customer": {"name": "Ada"}}))).await.unwrap();
    let vars = p.variables(&big.id).await.unwrap();
    assert_eq!(vars.get("total"), Some(&json!(125)), "{vars:?}");
    assert_eq!(vars.get("lineCount"), Some(&json!(2)));
    assert_eq!(vars.get("pricedAt"), Some(&json!("price")));
    assert_eq!(trace(&engine, &big.id).await, ["start", "price", "gw", "approve"]);
    let task = &p.tasks(Some(&big.id), None, None, None).await.unwrap()[0];
    let local = p.task_variables(&task.id, kairos::process::TaskScope::All).await.unwrap();
    assert_eq!(local.get("summary"), Some(&json!("Ada orders 2 lines for 125")), "{local:?}");

    // A JavaScript condition on a conditional event: checked when variables change.
    p.set_variables(&big.id, json!({"rush": false}).as_object().unwrap().clone()).await.unwrap();
    assert_eq!(trace(&engine, &big.id).await, ["start", "price", "gw", "approve"]);
    p.set_variables(&big.id, json!({"rush": true}).as_object().unwrap().clone()).await.unwrap();
    assert_eq!(trace(&engine, &big.id).await, ["start", "price", "gw", "approve", "urgent", "expedite"]);

    // The same condition, false: the default flow.
    let small = p.start(start("scripted", "O-2", json!({"items": [], "customer": {"vip": true}}))).await.unwrap();
    assert_eq!(p.variables(&small.id).await.unwrap().get("total"), Some(&json!(0)));
    assert_eq!(trace(&engine, &small.id).await, ["start", "price", "gw", "ship"]);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// One model with a script task whose script is `body` (and `format`).
fn with_script(format: &str, body: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="one" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="run"/>
    <scriptTask id="run" scriptFormat="{format}"><script><![CDATA[{body}]]></script></scriptTask>
    <sequenceFlow id="f2" sourceRef="run" targetRef="wait"/>
    <userTask id="wait"/>
  </process>
</definitions>"#
    )
}

async fn scripts_the_engine_cannot_run_are_refused_at_deploy(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let refused = |r: Result<_, kairos::Error>| match r {
        Err(kairos::Error::Deploy(e)) => e.to_string(),
        other => panic!("expected a refused deployment, got {other:?}"),
    };
    // Groovy, by name, at the script task's line.
    let groovy = refused(p.deploy("g.bpmn", &with_script("groovy", "println 'hi'")).await);
    assert!(groovy.contains("script format 'groovy' is not supported"), "{groovy}");
    assert!(groovy.contains("'run'") && groovy.contains("line 5"), "{groovy}");
    // A syntax error, with the script's own line.
    let syntax = refused(p.deploy("s.bpmn", &with_script("javascript", "var a = 1;\nvar b = ;\n")).await);
    assert!(syntax.contains("script error at line 2"), "{syntax}");
    // A JavaScript condition on a flow, in Groovy instead.
    let condition = with_script("javascript", "1").replace(
        r#"<sequenceFlow id="f2" sourceRef="run" targetRef="wait"/>"#,
        r#"<sequenceFlow id="f2" sourceRef="run" targetRef="wait"><conditionExpression language="groovy">x == 1</conditionExpression></sequenceFlow>"#,
    );
    let lang = refused(p.deploy("c.bpmn", &condition).await);
    assert!(lang.contains("'f2'") && lang.contains("script format 'groovy'"), "{lang}");
    assert_eq!(count_rows(engine.store(), "ACT_RE_PROCDEF").await, 0);
    engine.shutdown(Duration::from_secs(5)).await;

    // Scripts switched off: every script refused, saying how to switch them on.
    let off = fx.engine("n2").scripts(false).build().await.unwrap();
    let msg = refused(off.processes().deploy("scripted.bpmn", ORDER).await);
    for id in ["'price'", "'big'", "'approve'"] {
        assert!(msg.contains(id), "{id} not named in: {msg}");
    }
    assert!(msg.contains("scripts are switched off on this engine"), "{msg}");
    assert_eq!(count_rows(off.store(), "ACT_RE_PROCDEF").await, 0);
}

/// Scripts that try to take the machine, the host or the next instance: each fails its start
/// with a model error naming the task and why, and no instance is written.
async fn hostile_scripts_fail_cleanly_and_change_nothing(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let limits = ScriptLimits { memory_bytes: 16 << 20, steps: 100, output_bytes: 64 << 10, ..ScriptLimits::default() };
    let engine = fx.engine("n1").script_limits(limits).build().await.unwrap();
    engine.start().await.unwrap();
    let p = engine.processes();
    let cases = [
        ("while (true) {}", "CPU limit"),
        ("var s = 'x'; while (true) { s = s + s; }", "memory limit"),
        ("var a = []; for (;;) a.push(new Array(100000).fill(1));", "memory limit"),
        ("function f() { return f(); } f();", "stack"),
        ("import('os')", "promise"),
        ("require('fs')", "require is not defined"),
        ("std.getenv('HOME')", "std is not defined"),
        ("this.constructor.constructor('return process')().exit(1)", "process is not defined"),
        ("'x'.repeat(200000)", "output is larger than the limit"),
        ("throw new Error('refund failed')", "refund failed"),
        ("(function () { return 1; })", "not JSON"),
    ];
    for (i, (body, why)) in cases.iter().enumerate() {
        let name = format!("h{i}.bpmn");
        let xml = with_script("javascript", body).replace("\"one\"", &format!("\"hostile{i}\""));
        p.deploy(&name, &xml).await.unwrap();
        let err = p.start(start(&format!("hostile{i}"), "H", json!({}))).await.unwrap_err();
        let kairos::Error::Process(e) = &err else { panic!("{body}: {err:?}") };
        assert_eq!(e.kind, ErrorKind::Model, "{body}: {e}");
        assert_eq!(e.element_id.as_deref(), Some("run"), "{body}: {e}");
        let text = e.to_string();
        assert!(text.contains("the script of 'run' failed"), "{body}: {text}");
        assert!(text.to_lowercase().contains(&why.to_lowercase()), "{body}: expected '{why}' in: {text}");
    }
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0);
    assert_eq!(count_rows(engine.store(), "ACT_HI_PROCINST").await, 0);

    // What one script does to the built-ins is not seen by the next.
    let polluter = with_script("javascript", "Object.prototype.admin = true; Array.prototype.map = null; 1")
        .replace("\"one\"", "\"polluter\"");
    let victim = with_script("javascript", "execution.setVariable('seen', ({}).admin === true || [1].map === null); 1")
        .replace("\"one\"", "\"victim\"");
    p.deploy("polluter.bpmn", &polluter).await.unwrap();
    p.deploy("victim.bpmn", &victim).await.unwrap();
    p.start(start("polluter", "P", json!({}))).await.unwrap();
    let v = p.start(start("victim", "V", json!({}))).await.unwrap();
    assert_eq!(p.variables(&v.id).await.unwrap().get("seen"), Some(&json!(false)));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// An asynchronous script task that throws is a failed job: retried, then an incident whose
/// message is the script's error — the instance waits at the task, nothing is lost.
async fn a_failing_async_script_becomes_an_incident(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let xml = with_script("javascript", "if (!ready) { throw new Error('not ready yet'); } 1")
        .replace("<scriptTask id=\"run\"", "<scriptTask id=\"run\" xmlns:camunda=\"http://camunda.org/schema/1.0/bpmn\" camunda:asyncBefore=\"true\" camunda:failedJobRetryTimeCycle=\"R1/PT0.1S\"");
    p.deploy("async.bpmn", &xml).await.unwrap();
    let inst = p.start(start("one", "A", json!({"ready": false}))).await.unwrap();
    let dead = kairos::store::JobFilter {
        table: kairos::JobTable::DeadLetter,
        process_instance_id: Some(inst.id.clone()),
        handler_type: None,
        job_type: None,
        with_exception: None,
        tenant: None,
        start: 0,
        size: 10,
    };
    let store = engine.store().clone();
    common::wait_until(Duration::from_secs(30), "the dead letter", || {
        let (store, dead) = (store.clone(), dead.clone());
        async move { !store.job_list(&dead).await.unwrap().data.is_empty() }
    })
    .await;
    let jobs = store.job_list(&dead).await.unwrap().data;
    let msg = jobs[0].exception_msg.clone().unwrap_or_default();
    assert!(msg.contains("not ready yet") && msg.contains("'run'"), "{msg}");
    assert!(p.tasks(Some(&inst.id), None, None, None).await.unwrap().is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_failing_async_script_becomes_an_incident,
    hostile_scripts_fail_cleanly_and_change_nothing,
    scripts_set_variables_choose_flows_and_compute_parameters,
    scripts_the_engine_cannot_run_are_refused_at_deploy,
);
