//! Rows kairos cannot read (issue 14, item 1), end to end on both backends: one bad row is
//! named — table, id, column, stored text — and never stops the rows beside it.

mod common;

use common::{Backend, Fixture, bind_text, runtime_jobs, wait_until};
use kairos::process::StartRequest;
use kairos::store::ErrorKind;
use kairos::{Engine, EnqueueRequest, JobTable};
use serde_json::{Map, json};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// A stored value each backend accepts and kairos cannot read as an instant.
fn bad_instant(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "0000-garbage",
        Backend::Postgres => "-infinity",
    }
}

async fn execute(engine: &Engine, sql: &str, binds: &[kairos::store::SqlValue]) {
    assert_eq!(engine.store().sql_execute(sql, binds).await.unwrap_or_else(|e| panic!("{sql}: {e}")), 1, "{sql}");
}

async fn one_unreadable_job_does_not_stop_the_healthy_ones(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    let noop = || EnqueueRequest { handler: "noop".into(), ..Default::default() };
    let bad = engine.enqueue(&noop()).await.unwrap();
    let sql = format!("UPDATE ACT_RU_JOB SET DUEDATE_ = '{}' WHERE ID_ = ?", bad_instant(backend));
    execute(&engine, &sql, &[bind_text(&bad.id)]).await;
    for _ in 0..10 {
        engine.enqueue(&noop()).await.unwrap();
    }
    engine.start().await.unwrap();
    let store = engine.store().clone();
    wait_until(LIMIT, "the ten healthy jobs to run and the bad row to be set aside", || async {
        runtime_jobs(&store).await == 0
    })
    .await;
    let rows = engine.unreadable_rows(10).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let u = &rows[0];
    assert_eq!(
        (u.table.as_str(), u.id.as_str(), u.column.as_str()),
        ("ACT_RU_DEADLETTER_JOB", bad.id.as_str(), "DUEDATE_")
    );
    assert_eq!(u.raw.as_deref(), Some(bad_instant(backend)));
    let e = store.job_get(JobTable::DeadLetter, &bad.id).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable, "{e}");

    // The doctor runs, names the row and the way out.
    let report = kairos::doctor::diagnose(&engine, &kairos::doctor::DoctorQuery::default()).await.unwrap();
    let f: Vec<_> = report.with_code("unreadable-row").collect();
    assert_eq!(f.len(), 1, "{report}");
    assert_eq!(f[0].job_id.as_deref(), Some(bad.id.as_str()));
    assert!(f[0].detail.contains("DUEDATE_") && f[0].action.contains("delete"), "{report}");
    assert_eq!(report.worst(), kairos::doctor::Severity::Error);
    assert_eq!(report.with_code("all-clear").count(), 0);

    store.job_delete(JobTable::DeadLetter, &bad.id, false).await.unwrap();
    assert!(engine.unreadable_rows(10).await.unwrap().is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}

const TWO_TASKS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="two" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="a"/>
    <userTask id="a"/>
    <sequenceFlow id="f2" sourceRef="a" targetRef="b"/>
    <userTask id="b"/>
    <sequenceFlow id="f3" sourceRef="b" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

async fn start(engine: &Engine) -> String {
    let vars = json!({"keep": "precious", "n": 1}).as_object().cloned().unwrap();
    let req = StartRequest { process_definition_key: Some("two".into()), variables: vars, ..Default::default() };
    engine.processes().start(req).await.unwrap().id
}

async fn task_of(engine: &Engine, pi: &str) -> String {
    engine.processes().tasks(Some(pi), None, None, None).await.unwrap()[0].id.clone()
}

async fn variable_row(engine: &Engine, pi: &str, name: &str) -> Vec<kairos::store::SqlValue> {
    let rows = engine
        .store()
        .sql_query(
            "SELECT TYPE_, TEXT_ FROM ACT_RU_VARIABLE WHERE PROC_INST_ID_ = ? AND NAME_ = ?",
            &[bind_text(pi), bind_text(name)],
        )
        .await
        .unwrap();
    rows.into_iter().next().expect("the variable row is still there")
}

async fn an_unknown_variable_type_is_an_error_naming_the_variable_and_nothing_writes_over_it(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    engine.processes().deploy("two.bpmn", TWO_TASKS).await.unwrap();
    let bad = start(&engine).await;
    let good = start(&engine).await;
    execute(
        &engine,
        "UPDATE ACT_RU_VARIABLE SET TYPE_ = 'serializable' WHERE PROC_INST_ID_ = ? AND NAME_ = 'keep'",
        &[bind_text(&bad)],
    )
    .await;

    let e = engine.processes().variables(&bad).await.unwrap_err().to_string();
    assert!(
        e.contains("ACT_RU_VARIABLE") && e.contains("TYPE_") && e.contains("keep") && e.contains("serializable"),
        "{e}"
    );
    let task = task_of(&engine, &bad).await;
    let e = engine.processes().complete_task(&task, Map::new()).await.unwrap_err().to_string();
    assert!(e.contains("keep") && e.contains("serializable"), "completing refuses, naming the variable: {e}");
    let row = variable_row(&engine, &bad, "keep").await;
    assert_eq!(row[0].as_str(), Some("serializable"), "nothing wrote over it");
    assert_eq!(row[1].as_str(), Some("precious"));

    // The other instance is not held back.
    let t = task_of(&engine, &good).await;
    engine.processes().complete_task(&t, Map::new()).await.unwrap();
    assert_eq!(engine.processes().variables(&good).await.unwrap()["keep"], json!("precious"));

    let rows = engine.unreadable_rows(10).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].table.as_str(), rows[0].column.as_str()), ("ACT_RU_VARIABLE", "TYPE_"));
    assert_eq!(rows[0].raw.as_deref(), Some("serializable"));
    assert!(rows[0].problem.contains("keep"), "{:?}", rows[0]);
}

async fn an_unreadable_execution_is_named_and_holds_back_its_instance_only(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    engine.processes().deploy("two.bpmn", TWO_TASKS).await.unwrap();
    let bad = start(&engine).await;
    let good = start(&engine).await;
    let sql = format!("UPDATE ACT_RU_EXECUTION SET START_TIME_ = '{}' WHERE ID_ = ?", bad_instant(backend));
    execute(&engine, &sql, &[bind_text(&bad)]).await;

    let task = task_of(&engine, &bad).await;
    let e = engine.processes().complete_task(&task, Map::new()).await.unwrap_err();
    let kairos::Error::Store(e) = e else { panic!("a store error: {e}") };
    assert_eq!(e.kind, ErrorKind::Unreadable, "{e}");
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_EXECUTION", bad.as_str(), "START_TIME_"));
    let t = task_of(&engine, &good).await;
    engine.processes().complete_task(&t, Map::new()).await.unwrap();
    let rows = engine.unreadable_rows(10).await.unwrap();
    assert_eq!(
        rows.iter().map(|u| (u.table.as_str(), u.id.as_str())).collect::<Vec<_>>(),
        [("ACT_RU_EXECUTION", bad.as_str())]
    );
}

async fn an_unreadable_trigger_is_named_and_the_others_are_listed(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    let s = engine.scheduler();
    let job: kairos::scheduler::JobSpec =
        serde_json::from_value(json!({"name": "j", "handler": "noop", "durable": true})).unwrap();
    s.add_job(&job).await.unwrap();
    for name in ["good", "bad"] {
        let spec: kairos::scheduler::TriggerSpec =
            serde_json::from_value(json!({"name": name, "jobName": "j", "cron": {"expression": "0 0 12 * * ?"}}))
                .unwrap();
        s.schedule(&spec).await.unwrap();
    }
    // SQLite keeps text in a BIGINT column; PostgreSQL's types hold, but not every TRIGGER_TYPE.
    let (sql, column, raw) = match backend {
        Backend::Sqlite => {
            ("UPDATE QRTZ_TRIGGERS SET NEXT_FIRE_TIME = 'soon' WHERE TRIGGER_NAME = 'bad'", "NEXT_FIRE_TIME", "soon")
        }
        Backend::Postgres => {
            ("UPDATE QRTZ_TRIGGERS SET TRIGGER_TYPE = 'BOGUS' WHERE TRIGGER_NAME = 'bad'", "TRIGGER_TYPE", "BOGUS")
        }
    };
    execute(&engine, sql, &[]).await;
    let listed: Vec<String> = s.triggers(None, None).await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(listed, ["good"], "the others are listed");
    let rows = engine.unreadable_rows(10).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].table.as_str(), rows[0].id.as_str(), rows[0].column.as_str()),
        ("QRTZ_TRIGGERS", "DEFAULT.bad", column)
    );
    assert_eq!(rows[0].raw.as_deref(), Some(raw));
}

async fn an_unknown_suspension_state_is_named_and_holds_back_its_instance_only(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    engine.processes().deploy("two.bpmn", TWO_TASKS).await.unwrap();
    let bad = start(&engine).await;
    let good = start(&engine).await;
    execute(&engine, "UPDATE ACT_RU_EXECUTION SET SUSPENSION_STATE_ = 7 WHERE ID_ = ?", &[bind_text(&bad)]).await;

    let task = task_of(&engine, &bad).await;
    let e = engine.processes().complete_task(&task, Map::new()).await.unwrap_err();
    let kairos::Error::Store(e) = e else { panic!("a store error: {e}") };
    assert_eq!(e.kind, ErrorKind::Unreadable, "{e}");
    let u = e.unreadable.unwrap();
    assert_eq!(
        (u.table.as_str(), u.id.as_str(), u.column.as_str()),
        ("ACT_RU_EXECUTION", bad.as_str(), "SUSPENSION_STATE_")
    );
    assert!(u.problem.contains("neither 1 (active) nor 2 (suspended)"), "{u:?}");
    let t = task_of(&engine, &good).await;
    engine.processes().complete_task(&t, Map::new()).await.unwrap();
}

on_both_backends!(
    an_unreadable_trigger_is_named_and_the_others_are_listed,
    an_unknown_suspension_state_is_named_and_holds_back_its_instance_only,
    one_unreadable_job_does_not_stop_the_healthy_ones,
    an_unknown_variable_type_is_an_error_naming_the_variable_and_nothing_writes_over_it,
    an_unreadable_execution_is_named_and_holds_back_its_instance_only,
);
