//! Reconciliation (SPEC C7, seed 002 §28–§31) on a staged database, both backends: one business
//! record per row of §29's table (and per forbidden case of §30), each classified by the rule it
//! must match and given exactly that rule's action; then an incident's life with approver and
//! executor kept apart.

mod common;
mod process_support;

use common::{Backend, Fixture};
use kairos::Engine;
use kairos::process::{BindingRequest, StartRequest};
use kairos::reconcile::incidents::{Filter, IncidentAction};
use kairos::reconcile::rules::State;
use kairos::reconcile::{Config, Report};
use kairos::store::SqlValue;
use process_support::vars;
use serde_json::json;

const APPROVAL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="assetApproval" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve"/>
    <sequenceFlow id="f2" sourceRef="approve" targetRef="decide"/>
    <exclusiveGateway id="decide" default="no"/>
    <sequenceFlow id="yes" sourceRef="decide" targetRef="endApproved">
      <conditionExpression>${approved}</conditionExpression>
    </sequenceFlow>
    <sequenceFlow id="no" sourceRef="decide" targetRef="endRejected"/>
    <endEvent id="endApproved"/>
    <endEvent id="endRejected"/>
  </process>
</definitions>"#;

const TYPE: &str = "ASSET_PUBLISH";

fn config() -> Config {
    Config::parse(
        &json!({
            "sources": [{
                "businessType": TYPE,
                "table": "asset_apply",
                "idColumn": "id",
                "statusColumn": "status",
                "processType": "assetApproval",
                "approvedEnds": ["endApproved"],
                "outboxAggregateType": TYPE,
                "states": {
                    "DRAFT": ["DRAFT"], "SUBMITTING": ["SUBMITTING"], "APPROVING": ["APPROVING"],
                    "APPROVED": ["APPROVED"], "PUBLISHED": ["PUBLISHED"], "CANCELED": ["CANCELED", "WITHDRAWN"]
                }
            }]
        })
        .to_string(),
    )
    .unwrap()
}

struct Stage {
    engine: Engine,
}

impl Stage {
    async fn new(fx: &Fixture) -> Stage {
        let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
        let store = engine.store().clone();
        store
            .sql_execute("CREATE TABLE asset_apply (id BIGINT PRIMARY KEY, status VARCHAR(32) NOT NULL)", &[])
            .await
            .unwrap();
        kairos_store_engine::commands::schema(store.as_ref()).await.unwrap();
        engine.processes().deploy("approval.bpmn", APPROVAL).await.unwrap();
        Stage { engine }
    }

    async fn record(&self, id: i64, status: &str) {
        self.engine
            .store()
            .sql_execute(
                "INSERT INTO asset_apply (id, status) VALUES (?, ?)",
                &[SqlValue::Int(id), SqlValue::Text(status.into())],
            )
            .await
            .unwrap();
    }

    async fn status(&self, id: i64) -> String {
        let rows = self
            .engine
            .store()
            .sql_query("SELECT status FROM asset_apply WHERE id = ?", &[SqlValue::Int(id)])
            .await
            .unwrap();
        rows[0][0].as_str().unwrap().to_owned()
    }

    /// Starts an instance for record `id`, bound unless `bound` is false (then only its
    /// business key names the record).
    async fn start(&self, id: i64, bound: bool) -> String {
        let req = StartRequest {
            process_definition_key: Some("assetApproval".into()),
            business_key: Some(id.to_string()),
            binding: bound.then(|| BindingRequest {
                business_type: TYPE.into(),
                business_id: id.to_string(),
                process_type: String::new(),
                lifecycle: None,
            }),
            ..Default::default()
        };
        self.engine.processes().start(req).await.unwrap().id
    }

    async fn finish(&self, pi: &str, approved: bool) {
        let p = self.engine.processes();
        let task = p.tasks(Some(pi), None, None, None).await.unwrap().remove(0);
        p.complete_task(&task.id, vars(json!({"approved": approved}))).await.unwrap();
    }

    async fn command(&self, id: i64) {
        let db = self.engine.store();
        let c = kairos_store_engine::commands::NewCommand {
            request_id: format!("submit-{id}"),
            command_type: "START_PROCESS".into(),
            business_type: TYPE.into(),
            business_id: id.to_string(),
            lifecycle_no: Some(1),
            payload: json!({"processDefinitionKey": "assetApproval"}),
        };
        db.write_all(&[kairos_store_engine::commands::insert(db.as_ref(), &c)]).await.unwrap();
    }

    async fn event(&self, id: i64, event_id: &str, status: &str, code: Option<&str>) {
        let db = self.engine.store();
        let e = kairos::outbox::NewEvent {
            event_id: event_id.into(),
            aggregate_type: TYPE.into(),
            aggregate_id: id.to_string(),
            event_type: "ASSET_PUBLISHED".into(),
            payload_json: "{}".into(),
            target: "http".into(),
            target_url: None,
            ordered: false,
            max_attempts: 5,
        };
        db.write_all(&[kairos_store_engine::outbox::insert(db.dialect(), &e)]).await.unwrap();
        let later = db.db_now().await.unwrap() + jiff::SignedDuration::from_hours(1);
        db.sql_execute(
            "UPDATE outbox_event SET event_status = ?, last_error_code = ?, next_retry_at = ? WHERE event_id = ?",
            &[
                SqlValue::Text(status.into()),
                code.map_or(SqlValue::Null, |c| SqlValue::Text(c.into())),
                SqlValue::Timestamp(later),
                SqlValue::Text(event_id.into()),
            ],
        )
        .await
        .unwrap();
    }
}

fn finding(r: &Report, id: i64) -> Option<&kairos::reconcile::Finding> {
    r.findings.iter().find(|f| f.business_id == id.to_string())
}

/// Stages one record per row of §29 (and per forbidden auto-repair of §30), then checks each
/// record's rule and outcome, the repairs' before/after, and that a second pass changes nothing.
async fn each_row_of_the_rule_table_gets_its_rules_action(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let s = Stage::new(&fx).await;
    // §29, row by row.
    s.record(1, "DRAFT").await; // draft-idle
    s.record(2, "DRAFT").await; // draft-with-instance
    s.start(2, true).await;
    s.record(3, "SUBMITTING").await; // submitting-command-waiting
    s.command(3).await;
    s.record(4, "SUBMITTING").await; // submitting-with-instance → write back APPROVING
    let pi4 = s.start(4, true).await;
    s.record(5, "APPROVING").await; // approving-active
    s.start(5, true).await;
    s.record(6, "APPROVING").await; // approving-ended-approved → write back APPROVED
    let pi6 = s.start(6, true).await;
    s.finish(&pi6, true).await;
    s.record(7, "APPROVED").await; // approved-consistent
    let pi7 = s.start(7, true).await;
    s.finish(&pi7, true).await;
    s.record(8, "APPROVED").await; // approved-active
    s.start(8, true).await;
    s.record(9, "PUBLISHED").await; // published-outbox-failed
    s.event(9, "ev-9", "FAILED", Some("PERMANENT")).await;
    s.record(10, "CANCELED").await; // canceled-active
    s.start(10, true).await;
    s.record(11, "CANCELED").await; // canceled-consistent
    s.record(12, "APPROVING").await; // approving-no-instance (§33)
    s.record(13, "PUBLISHED").await; // published-outbox-retry → retry now
    s.event(13, "ev-13", "RETRY", Some("RETRY")).await;
    s.record(14, "PUBLISHED").await; // published-consistent
    s.event(14, "ev-14", "PUBLISHED", None).await;
    s.record(15, "APPROVING").await; // approving-ended-other: rejected
    let pi15 = s.start(15, true).await;
    s.finish(&pi15, false).await;
    s.record(16, "APPROVING").await; // approving-deleted (§33: deleted by an administrator)
    let pi16 = s.start(16, true).await;
    s.engine.processes().delete_instance(&pi16, "admin cleanup").await.unwrap();
    // §30's forbidden cases: each would be a write-back by its state, each opens an incident.
    s.record(20, "SUBMITTING").await; // two active instances
    s.start(20, true).await;
    s.start(20, false).await;
    s.record(21, "SUBMITTING").await; // runtime of an instance history calls ended: ACT edited
    let pi21 = s.start(21, true).await;
    s.engine
        .store()
        .sql_execute(
            "UPDATE ACT_HI_PROCINST SET END_TIME_ = START_TIME_, END_ACT_ID_ = 'endApproved' WHERE ID_ = ?",
            &[SqlValue::Text(pi21.clone())],
        )
        .await
        .unwrap();
    s.record(22, "SUBMITTING").await; // a binding to an instance that does not exist
    let now = s.engine.store().db_now().await.unwrap();
    s.engine
        .store()
        .write_all(&[kairos_store_engine::business::binding_insert(&kairos_store_engine::business::NewBinding {
            business_type: TYPE,
            business_id: "22",
            process_type: "assetApproval",
            process_instance_id: "no-such-instance",
            process_definition_id: "assetApproval:1:x",
            lifecycle_no: 1,
            created_at: now,
            ended: None,
        })])
        .await
        .unwrap();
    s.record(23, "APPROVED").await; // conflicting decisions: APPROVED, history rejected
    let pi23 = s.start(23, true).await;
    s.finish(&pi23, false).await;

    let r = s.engine.reconciler_for(config()).unwrap();
    let report = r.pass(false).await.unwrap();
    let expect: &[(i64, &str, &str)] = &[
        (2, "draft-with-instance", "incident"),
        (4, "submitting-with-instance", "repaired"),
        (6, "approving-ended-approved", "repaired"),
        (8, "approved-active", "incident"),
        (9, "published-outbox-failed", "incident"),
        (10, "canceled-active", "incident"),
        (12, "approving-no-instance", "incident"),
        (13, "published-outbox-retry", "repaired"),
        (15, "approving-ended-other", "incident"),
        (16, "approving-deleted", "incident"),
        (20, "two-active-instances", "incident"),
        (21, "runtime-damaged", "incident"),
        (22, "binding-dangling", "incident"),
        (23, "approved-conflict", "incident"),
    ];
    for (id, rule, outcome) in expect {
        let f = finding(&report, *id).unwrap_or_else(|| panic!("record {id} has no finding: {report:#?}"));
        assert_eq!((f.rule_id.as_str(), f.outcome.as_str()), (*rule, *outcome), "record {id}: {f:?}");
    }
    // Consistent and waiting records are counted, not listed.
    for id in [1, 3, 5, 7, 11, 14] {
        assert!(finding(&report, id).is_none(), "record {id} is consistent or waiting: {:?}", finding(&report, id));
    }
    for (rule, n) in [
        ("draft-idle", 1),
        ("submitting-command-waiting", 1),
        ("approving-active", 1),
        ("approved-consistent", 1),
        ("canceled-consistent", 1),
        ("published-consistent", 1),
    ] {
        assert_eq!(report.by_rule.get(rule).copied(), Some(n), "{rule}: {:?}", report.by_rule);
    }
    assert_eq!(report.records, 20);
    assert_eq!(
        (report.consistent, report.waiting, report.repaired, report.incidents_opened),
        (4, 2, 3, 11),
        "{report:#?}"
    );
    assert_eq!(report.unmatched, 0);

    // The repairs: the business rows moved, a binding-less nothing, the event due now, each
    // recorded with before and after.
    assert_eq!(s.status(4).await, "APPROVING");
    assert_eq!(s.status(6).await, "APPROVED");
    let repairs =
        s.engine.incidents().list(&Filter { kind: Some("repair".into()), ..Default::default() }, 100).await.unwrap();
    assert_eq!(repairs.len(), 3, "{repairs:#?}");
    let r4 = repairs.iter().find(|x| x.business_id == "4").unwrap();
    assert_eq!((r4.status.as_str(), r4.executed_by.as_deref()), ("CLOSED", Some("reconciler")));
    assert_eq!(r4.process_instance_id.as_deref(), Some(pi4.as_str()));
    assert_eq!(r4.before_json.as_deref(), Some(r#"{"status":"SUBMITTING"}"#));
    assert!(r4.after_json.as_deref().unwrap().contains(r#""status":"APPROVING""#), "{r4:?}");
    let ev13 = s.engine.outbox().get("ev-13").await.unwrap().unwrap();
    assert!(ev13.next_retry_at.unwrap() <= s.engine.store().db_now().await.unwrap(), "ev-13 is due now: {ev13:?}");
    // The incidents carry their evidence.
    let i20 =
        &s.engine.incidents().list(&Filter { business_id: Some("20".into()), ..Default::default() }, 10).await.unwrap()
            [0];
    let evidence: serde_json::Value = serde_json::from_str(&i20.evidence_json).unwrap();
    assert_eq!(evidence["instances"].as_array().unwrap().len(), 2, "{evidence}");
    assert_eq!(evidence["evidence"][0], "two-active");
    assert_eq!(s.status(20).await, "SUBMITTING", "a forbidden case is not written back");
    assert_eq!(s.status(21).await, "SUBMITTING");

    // A second pass: the repaired records are consistent now, the others frozen by their open
    // incident; nothing new is written.
    let again = r.pass(false).await.unwrap();
    assert_eq!((again.repaired, again.incidents_opened), (0, 0), "{again:#?}");
    assert_eq!(again.frozen, 11, "{again:#?}");
    assert_eq!(finding(&again, 4).map(|f| f.rule_id.as_str()), None, "4 is APPROVING with its instance: waiting");
    let all = s.engine.incidents().list(&Filter::default(), 1000).await.unwrap();
    assert_eq!(all.len(), 14, "11 incidents and 3 repairs, none twice");

    // The doctor names each of §32–§37's runbooks from this evidence.
    let report = kairos::doctor::diagnose(&s.engine, &kairos::doctor::DoctorQuery::default()).await.unwrap();
    for code in RUNBOOKS {
        let f = report.with_code(code).next().unwrap_or_else(|| panic!("{code} missing:\n{report}"));
        assert_eq!(f.severity, kairos::doctor::Severity::Warning, "{f:?}");
    }
    let two = report.with_code("runbook-two-active-instances").next().unwrap();
    assert!(two.detail.contains("rule two-active-instances"), "{two:?}");
    let outbox = report.with_code("runbook-outbox-backlog").next().unwrap();
    assert!(outbox.detail.contains("FAILED of ASSET_PUBLISHED to http, error PERMANENT"), "{outbox:?}");
}

const RUNBOOKS: [&str; 6] = [
    "runbook-started-still-draft",
    "runbook-approving-without-process",
    "runbook-task-done-business-unchanged",
    "runbook-published-target-missing",
    "runbook-two-active-instances",
    "runbook-outbox-backlog",
];

/// Where nothing is staged — consistent records, an outbox event on its way, a process that
/// waits — the doctor raises none of the runbooks.
async fn the_doctor_raises_no_runbook_on_a_consistent_store(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let s = Stage::new(&fx).await;
    s.record(1, "DRAFT").await;
    s.record(2, "APPROVING").await;
    s.start(2, true).await;
    s.record(3, "PUBLISHED").await;
    s.event(3, "ev-3", "PUBLISHED", None).await;
    s.event(3, "ev-3b", "PENDING", None).await;
    let report = s.engine.reconciler_for(config()).unwrap().pass(false).await.unwrap();
    assert_eq!((report.incidents_opened, report.repaired), (0, 0), "{report:#?}");
    let report = kairos::doctor::diagnose(&s.engine, &kairos::doctor::DoctorQuery::default()).await.unwrap();
    for code in RUNBOOKS.iter().chain(&["reconcile-incidents"]) {
        assert!(report.with_code(code).next().is_none(), "false alarm {code}:\n{report}");
    }
}

/// A rule table that asks for a repair §30 forbids gets an incident instead, with the refusal.
async fn a_table_asking_for_a_forbidden_repair_opens_an_incident(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let s = Stage::new(&fx).await;
    s.record(1, "SUBMITTING").await;
    s.start(1, true).await;
    s.start(1, false).await;
    let mut c = config();
    let mut rules = kairos::reconcile::rules::default_rules();
    // "Keep one of two active instances and write back": what §36 says never to automate.
    let two = rules.iter_mut().find(|r| r.id == "two-active-instances").unwrap();
    two.action = kairos::reconcile::rules::Action::Repair;
    two.repair = Some(kairos::reconcile::rules::Repair::WriteBack);
    two.to = Some(State::Approving);
    c.rules = Some(rules);
    let report = s.engine.reconciler_for(c).unwrap().pass(false).await.unwrap();
    assert_eq!((report.repaired, report.repairs_refused, report.incidents_opened), (0, 1, 1), "{report:#?}");
    let f = finding(&report, 1).unwrap();
    assert!(f.detail.contains("auto-repair refused: two active instances"), "{f:?}");
    assert_eq!(s.status(1).await, "SUBMITTING");
}

/// An incident's life: approved by one person, executed by another through the engine's API
/// (the approver is refused), before/after and verification recorded, then closed; closing
/// unfreezes the record.
async fn an_incident_is_approved_executed_by_another_and_closed(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let s = Stage::new(&fx).await;
    s.record(1, "DRAFT").await;
    let pi = s.start(1, true).await;
    let r = s.engine.reconciler_for(config()).unwrap();
    s.engine.set_reconciler(r.clone()).unwrap();
    r.pass(false).await.unwrap();
    let inc = s.engine.incidents();
    let i = inc.list(&Filter { status: Some("OPEN".into()), ..Default::default() }, 10).await.unwrap().remove(0);
    assert_eq!((i.rule_id.as_str(), i.process_instance_id.as_deref()), ("draft-with-instance", Some(pi.as_str())));
    let write_back = IncidentAction::WriteBack { to: State::Approving };
    let e = inc.execute(&i.id, "bob", &write_back).await.unwrap_err();
    assert!(e.to_string().contains("only an APPROVED incident"), "{e}");
    let approved = inc.approve(&i.id, "alice", Some("the request was legitimate: write back APPROVING")).await.unwrap();
    assert_eq!((approved.status.as_str(), approved.approved_by.as_deref()), ("APPROVED", Some("alice")));
    let e = inc.execute(&i.id, "alice", &write_back).await.unwrap_err();
    assert!(e.to_string().contains("another person executes it"), "{e}");
    assert_eq!(s.status(1).await, "DRAFT", "the refused execution changed nothing");
    let done = inc.execute(&i.id, "bob", &write_back).await.unwrap();
    assert_eq!((done.status.as_str(), done.executed_by.as_deref()), ("EXECUTED", Some("bob")));
    assert_eq!(s.status(1).await, "APPROVING");
    let before: serde_json::Value = serde_json::from_str(done.before_json.as_deref().unwrap()).unwrap();
    let after: serde_json::Value = serde_json::from_str(done.after_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        (before["businessStatus"].as_str(), before["ruleId"].as_str()),
        (Some("DRAFT"), Some("draft-with-instance"))
    );
    assert_eq!(
        (after["businessStatus"].as_str(), after["ruleId"].as_str()),
        (Some("APPROVING"), Some("approving-active"))
    );
    assert!(done.verification.as_deref().unwrap().contains("approving-active"), "{done:?}");
    let e = inc.close(&i.id, "carol", "").await.unwrap_err();
    assert!(e.to_string().contains("note:"), "{e}");
    let closed = inc.close(&i.id, "carol", "verified with the requester").await.unwrap();
    assert_eq!(closed.status, "CLOSED");
    let audit: serde_json::Value = serde_json::from_str(&closed.audit_json).unwrap();
    let who: Vec<&str> = audit.as_array().unwrap().iter().map(|s| s["by"].as_str().unwrap()).collect();
    assert_eq!(who, ["reconciler", "alice", "bob", "carol"]);
    // Bad input: unknown incident, a delete without reason.
    assert!(inc.approve("nope", "alice", None).await.is_err());
    assert!(inc.approve(&i.id, "", None).await.unwrap_err().to_string().contains("user:"));
}

on_both_backends!(
    each_row_of_the_rule_table_gets_its_rules_action,
    the_doctor_raises_no_runbook_on_a_consistent_store,
    a_table_asking_for_a_forbidden_repair_opens_an_incident,
    an_incident_is_approved_executed_by_another_and_closed,
);
