//! Migration of running instances between definition versions on both backends (SPEC P13).

mod common;
mod process_support;

use common::{Backend, Fixture, wait_until};
use kairos::process::MigrateRequest;
use kairos::store::SqlValue;
use process_support::{LIMIT, engine, start, trace};
use serde_json::{Map, json};
use std::time::Duration;

const ORDER_V1: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="paid" name="paid"/>
  <message id="cancel" name="cancel"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review"/>
    <boundaryEvent id="late" attachedToRef="review"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="review" targetRef="waitPay"/>
    <intermediateCatchEvent id="waitPay"><messageEventDefinition messageRef="paid"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="waitPay" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="late" targetRef="end"/>
    <endEvent id="end"/>
    <subProcess id="onCancel" triggeredByEvent="true">
      <startEvent id="cancelStart"><messageEventDefinition messageRef="cancel"/></startEvent>
      <sequenceFlow id="c1" sourceRef="cancelStart" targetRef="cancelEnd"/>
      <endEvent id="cancelEnd"/>
    </subProcess>
  </process>
</definitions>"#;

/// Version 2: the review became "check", the message names changed, a boundary event was
/// added; the timer is the same.
const ORDER_V2: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="paid" name="payment-received"/>
  <message id="cancel" name="cancelOrder"/>
  <message id="esc" name="escalate"/>
  <process id="order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="check"/>
    <userTask id="check" name="Check"/>
    <boundaryEvent id="late" attachedToRef="check"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <boundaryEvent id="escalated" attachedToRef="check" cancelActivity="false"><messageEventDefinition messageRef="esc"/></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="check" targetRef="waitPay"/>
    <intermediateCatchEvent id="waitPay"><messageEventDefinition messageRef="paid"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="waitPay" targetRef="end"/>
    <sequenceFlow id="f4" sourceRef="late" targetRef="end"/>
    <sequenceFlow id="f5" sourceRef="escalated" targetRef="end"/>
    <endEvent id="end"/>
    <subProcess id="onCancel" triggeredByEvent="true">
      <startEvent id="cancelStart"><messageEventDefinition messageRef="cancel"/></startEvent>
      <sequenceFlow id="c1" sourceRef="cancelStart" targetRef="cancelEnd"/>
      <endEvent id="cancelEnd"/>
    </subProcess>
  </process>
</definitions>"#;

/// SPEC P13: a running instance moves to version 2 with a mapping. Its task takes the new key
/// and name, the unchanged timer keeps its due date, renamed messages are listened for under
/// their new names, a new boundary event is armed, history follows; it then runs on the new
/// model. A bad mapping names the activity and changes nothing; a running job refuses it.
async fn a_running_instance_migrates_to_a_new_version(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let store = engine.store().clone();
    let v1 = p.deploy("order.bpmn", ORDER_V1).await.unwrap().process_definitions[0].id.clone();
    let a = p.start(start("order", "A", json!({}))).await.unwrap().id;
    let b = p.start(start("order", "B", json!({}))).await.unwrap().id;
    let d = p.start(start("order", "D", json!({}))).await.unwrap().id;
    let t = p.tasks(Some(&d), None, None, None).await.unwrap().remove(0);
    p.complete_task(&t.id, Map::new()).await.unwrap(); // D waits at waitPay for "paid"
    let rows = |sql: &'static str, pi: String| {
        let store = store.clone();
        async move { store.sql_query(sql, &[SqlValue::Text(pi)]).await.unwrap() }
    };
    let due = |pi: String| async {
        let r =
            rows("SELECT DUEDATE_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? AND ELEMENT_ID_ = 'late'", pi).await;
        r[0][0].as_timestamp().unwrap()
    };
    let due_before = due(a.clone()).await;
    let v2 = p.deploy("order.bpmn", ORDER_V2).await.unwrap().process_definitions[0].id.clone();
    assert_ne!(v1, v2);

    // No mapping for the review: refused, naming it, nothing changed.
    let err = p.migrate_instance(&b, &MigrateRequest::latest()).await.unwrap_err();
    assert!(err.to_string().contains("activity 'review' is active but the target definition has no 'review'"), "{err}");
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("review", "waitPay")).await.unwrap_err();
    assert!(err.to_string().contains("another kind of element"), "{err}");
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("reviw", "check")).await.unwrap_err();
    assert!(err.to_string().contains("fromActivityId 'reviw'"), "{err}");
    let def_of = |pi: String| async { rows("SELECT PROC_DEF_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ?", pi).await };
    assert_eq!(def_of(b.clone()).await[0][0].as_str(), Some(v1.as_str()), "nothing changed");

    // A job running right now: refused.
    store
        .sql_query(
            "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = 'elsewhere', LOCK_EXP_TIME_ = ? WHERE PROCESS_INSTANCE_ID_ = ?",
            &[
                SqlValue::Timestamp(kairos::Timestamp::now() + kairos::SignedDuration::from_hours(1)),
                SqlValue::Text(b.clone()),
            ],
        )
        .await
        .unwrap();
    let err = p.migrate_instance(&b, &MigrateRequest::latest().map("review", "check")).await.unwrap_err();
    assert!(err.to_string().contains("is running now (locked by elsewhere)"), "{err}");

    // The move.
    let moved = p.migrate_instance(&a, &MigrateRequest::to_definition(&v2).map("review", "check")).await.unwrap();
    assert_eq!(moved.process_definition_id, v2);
    let task = p.tasks(Some(&a), None, None, None).await.unwrap().remove(0);
    assert_eq!((task.task_definition_key.as_str(), task.name.as_deref()), ("check", Some("Check")));
    assert_eq!(due(a.clone()).await, due_before, "the unchanged timer keeps its due date");
    let subs =
        rows("SELECT EVENT_NAME_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY EVENT_NAME_", a.clone())
            .await;
    let subs: Vec<&str> = subs.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(subs, ["cancelOrder", "escalate"], "re-armed from version 2");
    for sql in [
        "SELECT PROC_DEF_ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_RU_TASK WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_HI_PROCINST WHERE PROC_INST_ID_ = ?",
        "SELECT PROC_DEF_ID_ FROM ACT_HI_ACTINST WHERE PROC_INST_ID_ = ? AND END_TIME_ IS NULL",
    ] {
        let r = rows(sql, a.clone()).await;
        assert!(!r.is_empty() && r.iter().all(|r| r[0].as_str() == Some(v2.as_str())), "{sql}: {r:?}");
    }
    p.complete_task(&task.id, Map::new()).await.unwrap();
    p.message("payment-received", Some(&a), None, Map::new()).await.unwrap();
    assert!(p.instance(&a).await.unwrap().ended);
    assert_eq!(trace(&engine, &a).await, ["start", "check", "waitPay", "end"]);

    // A token waiting at a catch event listens under the new name.
    p.migrate_instance(&d, &MigrateRequest::latest()).await.unwrap();
    let subs =
        rows("SELECT EVENT_NAME_ FROM ACT_RU_EVENT_SUBSCR WHERE PROC_INST_ID_ = ? ORDER BY EVENT_NAME_", d.clone())
            .await;
    let subs: Vec<&str> = subs.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(subs, ["cancelOrder", "payment-received"]);
    p.message("payment-received", Some(&d), None, Map::new()).await.unwrap();
    assert!(p.instance(&d).await.unwrap().ended);
    engine.shutdown(Duration::from_secs(5)).await;
}

const NESTED_V1: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="nested" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="sp"/>
    <subProcess id="sp">
      <startEvent id="s0"/>
      <sequenceFlow id="i1" sourceRef="s0" targetRef="inner"/>
      <userTask id="inner"/>
      <sequenceFlow id="i2" sourceRef="inner" targetRef="e0"/>
      <endEvent id="e0"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="sp" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

const NESTED_V2: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="nested" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="stage"/>
    <subProcess id="stage">
      <startEvent id="s0"/>
      <sequenceFlow id="i1" sourceRef="s0" targetRef="work"/>
      <userTask id="work"/>
      <sequenceFlow id="i2" sourceRef="work" targetRef="e0"/>
      <endEvent id="e0"/>
    </subProcess>
    <sequenceFlow id="f2" sourceRef="stage" targetRef="outside"/>
    <userTask id="outside"/>
    <sequenceFlow id="f3" sourceRef="outside" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A token inside a sub-process moves only into the sub-process its scope maps to.
async fn migration_keeps_tokens_in_their_scope(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    p.deploy("nested.bpmn", NESTED_V1).await.unwrap();
    let pi = p.start(start("nested", "N", json!({}))).await.unwrap().id;
    p.deploy("nested.bpmn", NESTED_V2).await.unwrap();
    let err = p.migrate_instance(&pi, &MigrateRequest::latest().map("inner", "work")).await.unwrap_err();
    assert!(err.to_string().contains("activity 'sp' is active but the target definition has no 'sp'"), "{err}");
    let wrong = MigrateRequest::latest().map("sp", "stage").map("inner", "outside");
    let err = p.migrate_instance(&pi, &wrong).await.unwrap_err();
    assert!(err.to_string().contains("which is not in sub-process 'stage'"), "{err}");
    p.migrate_instance(&pi, &MigrateRequest::latest().map("sp", "stage").map("inner", "work")).await.unwrap();
    let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    assert_eq!(t.task_definition_key, "work");
    p.complete_task(&t.id, Map::new()).await.unwrap();
    let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    assert_eq!(t.task_definition_key, "outside", "the instance runs on version 2");
    engine.shutdown(Duration::from_secs(5)).await;
}

const REMIND: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="remind" name="Remind" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="work"/>
    <userTask id="work"/>
    <boundaryEvent id="reminder" attachedToRef="work" cancelActivity="false"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></boundaryEvent>
    <sequenceFlow id="f2" sourceRef="work" targetRef="end"/>
    <sequenceFlow id="f3" sourceRef="reminder" targetRef="nudge"/>
    <userTask id="nudge"/>
    <sequenceFlow id="f4" sourceRef="nudge" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A one-shot wait used up before the migration (a non-interrupting timer that fired) is not
/// armed again by it; the same process with the timer still waiting keeps it.
async fn migration_does_not_rearm_used_up_waits(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let store = engine.store().clone();
    p.deploy("remind.bpmn", REMIND).await.unwrap();
    let fired = p.start(start("remind", "R1", json!({}))).await.unwrap().id;
    let waiting = p.start(start("remind", "R2", json!({}))).await.unwrap().id;
    let timers = |pi: String| {
        let store = store.clone();
        async move {
            let sql = "SELECT ID_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ? AND ELEMENT_ID_ = 'reminder'";
            store.sql_query(sql, &[SqlValue::Text(pi)]).await.unwrap()
        }
    };
    let job = timers(fired.clone()).await[0][0].as_str().unwrap().to_string();
    store.job_execute_now(&job).await.unwrap();
    engine.wake();
    wait_until(LIMIT, "the reminder to fire", || async {
        p.tasks(Some(&fired), None, None, None).await.unwrap().iter().any(|t| t.task_definition_key == "nudge")
    })
    .await;
    assert!(timers(fired.clone()).await.is_empty());
    p.deploy("remind.bpmn", &REMIND.replace("name=\"Remind\"", "name=\"Remind v2\"")).await.unwrap();
    p.migrate_instance(&fired, &MigrateRequest::latest()).await.unwrap();
    p.migrate_instance(&waiting, &MigrateRequest::latest()).await.unwrap();
    assert!(timers(fired).await.is_empty(), "the reminder that fired is not armed again");
    assert_eq!(timers(waiting).await.len(), 1, "the waiting reminder still waits");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Every running instance of a retired version moves, each on its own: a suspended one is
/// reported with why and stays where it was.
async fn all_instances_of_a_version_migrate_each_on_its_own(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = engine(&fx).await;
    let p = engine.processes();
    let v1 = p.deploy("nested.bpmn", NESTED_V1).await.unwrap().process_definitions[0].id.clone();
    let mut ids = Vec::new();
    for bk in ["N1", "N2", "N3"] {
        ids.push(p.start(start("nested", bk, json!({}))).await.unwrap().id);
    }
    p.set_instance_suspended(&ids[1], true).await.unwrap();
    let v2 = p.deploy("nested.bpmn", NESTED_V2).await.unwrap().process_definitions[0].id.clone();
    let req = MigrateRequest::latest().map("sp", "stage").map("inner", "work");
    let outcomes = p.migrate_instances_of(&v1, &req).await.unwrap();
    assert_eq!(outcomes.len(), 3);
    for o in &outcomes {
        let now = p.instance(&o.process_instance_id).await.unwrap().process_definition_id;
        if o.process_instance_id == ids[1] {
            assert!(o.error.as_deref().is_some_and(|e| e.contains("suspended")), "{o:?}");
            assert_eq!(now, v1, "the suspended one stays");
        } else {
            assert_eq!((o.error.as_deref(), now.as_str()), (None, v2.as_str()), "{o:?}");
        }
    }
    let err = p.migrate_instances_of("no-such-definition", &req).await.unwrap_err();
    assert!(err.to_string().contains("no-such-definition"), "{err}");
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    all_instances_of_a_version_migrate_each_on_its_own,
    migration_does_not_rearm_used_up_waits,
    migration_keeps_tokens_in_their_scope,
    a_running_instance_migrates_to_a_new_version,
);
