//! DMN decisions (issue 19, item 7) on both backends: Camunda's invoice example — a DMN file
//! deployed beside its process, business rule tasks classifying the invoice (`singleEntry`) and
//! collecting approver groups through a required decision (`collectEntries`) that a user
//! task's candidate groups then name; decision versions and bindings; Flowable's decision task;
//! a bad DMN file refused at deploy; a failing decision failing its command with nothing written.

mod common;
mod process_support;

use common::{Backend, Fixture, count_rows};
use kairos::process::DecisionWhich;
use process_support::{engine, start, trace, vars};
use serde_json::json;
use std::time::Duration;

const INVOICE_DMN: &str = include_str!("decisions/invoice.dmn");
const INVOICE_BPMN: &str = include_str!("decisions/invoice.bpmn");

async fn the_invoice_example_runs_unchanged(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    // The process first, its decisions after: decisions are found when the task runs.
    p.deploy("invoice.bpmn", INVOICE_BPMN).await.unwrap();
    let dep = p.deploy("invoiceBusinessDecisions.dmn", INVOICE_DMN).await.unwrap();
    let keys: Vec<&str> = dep.decision_definitions.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(keys, ["invoiceClassification", "invoice-assign-approver"]);
    assert!(dep.decision_definitions.iter().all(|d| d.version == 1 && d.history_ttl_days == Some(30)));

    let cases = [
        (json!(100), "Misc", "day-to-day expense", json!(["accounting", "sales"])),
        (json!(700.5), "Misc", "budget", json!(["management"])),
        (json!(5000), "Misc", "exceptional", json!(["management"])),
        (json!(9000), "Travel Expenses", "day-to-day expense", json!(["accounting", "sales"])),
    ];
    for (i, (amount, category, class, groups)) in cases.into_iter().enumerate() {
        let bk = format!("INV-{i}");
        let inst =
            p.start(start("invoice", &bk, json!({"amount": amount, "invoiceCategory": category}))).await.unwrap();
        let v = p.variables(&inst.id).await.unwrap();
        assert_eq!(v.get("classification"), Some(&json!(class)), "{bk}: {v:?}");
        assert_eq!(v.get("approverGroups"), Some(&groups), "{bk}: {v:?}");
        for g in groups.as_array().unwrap() {
            let offered = p.tasks(Some(&inst.id), None, None, g.as_str()).await.unwrap();
            assert_eq!(offered.len(), 1, "{bk}: the task is offered to {g}");
        }
        assert_eq!(trace(&engine, &inst.id).await, ["start", "classify", "assignApprover", "approveInvoice"]);
    }

    // No rule matches: singleEntry gives null, collectEntries an empty list.
    let none = p.start(start("invoice", "INV-X", json!({"amount": 10, "invoiceCategory": "Food"}))).await.unwrap();
    let v = p.variables(&none.id).await.unwrap();
    assert_eq!((v.get("classification"), v.get("approverGroups")), (Some(&json!(null)), Some(&json!([]))));

    // The same decision over the API, as Camunda's evaluate endpoint gives it.
    let (def, result) = p
        .evaluate_decision(
            DecisionWhich::Key("invoice-assign-approver", ""),
            &vars(json!({"amount": 1, "invoiceCategory": "Misc"})),
        )
        .await
        .unwrap();
    assert_eq!(def.key, "invoice-assign-approver");
    assert_eq!(json!(result), json!([{"approverGroups": "accounting"}, {"approverGroups": "sales"}]));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A one-table DMN of `key` whose single rule answers `answer` for any input.
fn constant_dmn(key: &str, answer: &str, tag: Option<&str>) -> String {
    let tag = tag.map(|t| format!(r#" camunda:versionTag="{t}""#)).unwrap_or_default();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" xmlns:camunda="http://camunda.org/schema/1.0/dmn"
    id="defs_{key}" name="Constant" namespace="http://camunda.org/schema/1.0/dmn">
  <decision id="{key}" name="Constant {key}"{tag}>
    <decisionTable id="table_{key}" hitPolicy="FIRST">
      <input id="in_{key}" label="Anything"><inputExpression id="ie_{key}" typeRef="number"><text>n</text></inputExpression></input>
      <output id="out_{key}" name="answer" typeRef="string" />
      <rule id="rule_{key}"><inputEntry id="ue_{key}"><text>-</text></inputEntry><outputEntry id="oe_{key}"><text>"{answer}"</text></outputEntry></rule>
    </decisionTable>
  </decision>
</definitions>"#
    )
}

fn asking(binding: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="asks" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="ask"/>
    <businessRuleTask id="ask" camunda:decisionRef="answer" {binding} camunda:resultVariable="got" camunda:mapDecisionResult="singleEntry"/>
    <sequenceFlow id="f2" sourceRef="ask" targetRef="wait"/>
    <userTask id="wait"/>
  </process>
</definitions>"#
    )
}

async fn versions_and_bindings_pick_the_decision(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let got = |binding: &'static str| async move {
        p.deploy("asks.bpmn", &asking(binding)).await.unwrap();
        let inst = p.start(start("asks", "B", json!({"n": 1}))).await?;
        Ok::<_, kairos::Error>(p.variables(&inst.id).await.unwrap().remove("got").unwrap())
    };
    // Not deployed yet: the start fails naming the decision, and writes nothing.
    let err = got("").await.unwrap_err().to_string();
    assert!(err.contains("no decision 'answer' is deployed"), "{err}");
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0);

    let v1 = p.deploy("answer.dmn", &constant_dmn("answer", "one", Some("first"))).await.unwrap();
    assert_eq!(v1.decision_definitions[0].version, 1);
    // The same document again adds no version.
    let again = p.deploy("answer.dmn", &constant_dmn("answer", "one", Some("first"))).await.unwrap();
    assert_eq!((again.id.as_str(), again.decision_definitions[0].version), (v1.id.as_str(), 1));
    p.deploy("answer.dmn", &constant_dmn("answer", "two", None)).await.unwrap();
    assert_eq!(p.decision_definitions(Some("answer"), None, false, None).await.unwrap().len(), 2);

    assert_eq!(got("").await.unwrap(), json!("two"));
    assert_eq!(got(r#"camunda:decisionRefBinding="latest""#).await.unwrap(), json!("two"));
    assert_eq!(
        got(r#"camunda:decisionRefBinding="version" camunda:decisionRefVersion="1""#).await.unwrap(),
        json!("one")
    );
    assert_eq!(
        got(r#"camunda:decisionRefBinding="versionTag" camunda:decisionRefVersionTag="first""#).await.unwrap(),
        json!("one")
    );
    // Deployed after version 2: the deployment binding finds the version current then.
    assert_eq!(got(r#"camunda:decisionRefBinding="deployment""#).await.unwrap(), json!("two"));
    let err =
        got(r#"camunda:decisionRefBinding="version" camunda:decisionRefVersion="7""#).await.unwrap_err().to_string();
    assert!(err.contains("no decision 'answer' version 7 is deployed"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

const FLOWABLE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="flowableDecision" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="decide"/>
    <serviceTask id="decide" flowable:type="dmn">
      <extensionElements>
        <flowable:field name="decisionTableReferenceKey"><flowable:string><![CDATA[invoiceClassification]]></flowable:string></flowable:field>
        <flowable:field name="decisionTaskThrowErrorOnNoHits"><flowable:string><![CDATA[true]]></flowable:string></flowable:field>
      </extensionElements>
    </serviceTask>
    <sequenceFlow id="f2" sourceRef="decide" targetRef="wait"/>
    <userTask id="wait"/>
  </process>
</definitions>"#;

async fn flowable_decision_tasks_set_the_outputs(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("invoice.dmn", INVOICE_DMN).await.unwrap();
    p.deploy("flowable.bpmn20.xml", FLOWABLE).await.unwrap();
    let inst =
        p.start(start("flowableDecision", "F1", json!({"amount": 300, "invoiceCategory": "Misc"}))).await.unwrap();
    assert_eq!(p.variables(&inst.id).await.unwrap().get("invoiceClassification"), Some(&json!("budget")));
    // decisionTaskThrowErrorOnNoHits: no match fails the start.
    let err =
        p.start(start("flowableDecision", "F2", json!({"amount": 1, "invoiceCategory": "Food"}))).await.unwrap_err();
    assert!(err.to_string().contains("matched no rule"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn bad_decisions_are_refused_and_failures_change_nothing(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    for bad in [
        "<definitions",
        "<definitions xmlns=\"https://www.omg.org/spec/DMN/20191111/MODEL/\" id=\"d\" name=\"d\" namespace=\"n\"/>",
    ] {
        let err = p.deploy("bad.dmn", bad).await.unwrap_err().to_string();
        assert!(err.starts_with("bad.dmn: "), "{err}");
    }
    assert_eq!(count_rows(engine.store(), "ACT_RE_DEPLOYMENT").await, 0);
    assert_eq!(count_rows(engine.store(), "ACT_RE_DECISION_DEF").await, 0);

    // A UNIQUE table with two matching rules fails the task; the start writes nothing.
    let twice = INVOICE_DMN.replace(r#"<text>"Travel Expenses"</text>"#, r#"<text>"Misc"</text>"#);
    p.deploy("invoice.dmn", &twice).await.unwrap();
    p.deploy("invoice.bpmn", INVOICE_BPMN).await.unwrap();
    let err = p.start(start("invoice", "U", json!({"amount": 10, "invoiceCategory": "Misc"}))).await.unwrap_err();
    assert!(err.to_string().contains("invoiceClassification"), "{err}");
    assert_eq!(count_rows(engine.store(), "ACT_RU_EXECUTION").await, 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    bad_decisions_are_refused_and_failures_change_nothing,
    flowable_decision_tasks_set_the_outputs,
    the_invoice_example_runs_unchanged,
    versions_and_bindings_pick_the_decision,
);
