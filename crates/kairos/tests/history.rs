//! History levels on both backends: which ACT_HI_* tables each level fills (Flowable's
//! levels: none, activity, audit, full), that every variable set reaches ACT_HI_VARINST — also
//! those sent with the completion that ends the instance — and that `full` keeps one
//! ACT_HI_DETAIL row per variable change.

mod common;

use common::{Backend, Fixture, bind_text};
use kairos::Engine;
use kairos::process::{DetailQuery, HistoryLevel, StartRequest};
use kairos::store::SqlValue;
use serde_json::{Map, json};
use std::time::Duration;

const TWO_TASKS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="twoTasks" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="a"/>
    <userTask id="a"/>
    <sequenceFlow id="f2" sourceRef="a" targetRef="b"/>
    <userTask id="b"/>
    <sequenceFlow id="f3" sourceRef="b" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

fn vars(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// Runs TWO_TASKS at `level`: started with x=1; `a` completed with x=2, y="two"; `b`, the last,
/// with z=3. Returns the engine and the instance id.
async fn run_two_tasks(fx: &Fixture, level: HistoryLevel) -> (Engine, String) {
    let engine = fx.engine("n1").history_level(level).build().await.unwrap();
    let p = engine.processes();
    p.deploy("two.bpmn", TWO_TASKS).await.unwrap();
    let req = StartRequest {
        process_definition_key: Some("twoTasks".into()),
        variables: vars(json!({"x": 1})),
        ..Default::default()
    };
    let pi = p.start(req).await.unwrap().id;
    for (task, v) in [("a", json!({"x": 2, "y": "two"})), ("b", json!({"z": 3}))] {
        let t = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
        assert_eq!(t.task_definition_key, task);
        p.complete_task(&t.id, vars(v)).await.unwrap();
    }
    assert!(p.instance(&pi).await.unwrap().ended);
    (engine, pi)
}

async fn rows_of(engine: &Engine, table: &str, pi: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE PROC_INST_ID_ = ?");
    engine.store().sql_query(&sql, &[bind_text(pi)]).await.unwrap()[0][0].as_i64().unwrap()
}

/// ACT_HI_VARINST of the instance: (NAME_, LONG_ or TEXT_) sorted by name.
async fn varinst(engine: &Engine, pi: &str) -> Vec<(String, String)> {
    let rows = engine
        .store()
        .sql_query(
            "SELECT NAME_, LONG_, TEXT_ FROM ACT_HI_VARINST WHERE PROC_INST_ID_ = ? ORDER BY NAME_",
            &[bind_text(pi)],
        )
        .await
        .unwrap();
    rows.iter().map(|r| (text(&r[0]), r[1].as_i64().map_or_else(|| text(&r[2]), |n| n.to_string()))).collect()
}

fn text(v: &SqlValue) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Every level fills the tables Flowable's does, and no others.
async fn each_history_level_fills_its_tables(backend: Backend) {
    // (level, ACT_HI_ACTINST, ACT_HI_TASKINST, ACT_HI_VARINST, ACT_HI_DETAIL)
    let expected = [
        (HistoryLevel::None, 0, 0, 0, 0),
        (HistoryLevel::Activity, 4, 0, 3, 0),
        (HistoryLevel::Audit, 4, 2, 3, 0),
        (HistoryLevel::Full, 4, 2, 3, 4),
    ];
    for (level, actinst, taskinst, varinst, detail) in expected {
        let Some(fx) = Fixture::new(backend).await else { return };
        let (engine, pi) = run_two_tasks(&fx, level).await;
        let got = (
            rows_of(&engine, "ACT_HI_PROCINST", &pi).await,
            rows_of(&engine, "ACT_HI_ACTINST", &pi).await,
            rows_of(&engine, "ACT_HI_TASKINST", &pi).await,
            rows_of(&engine, "ACT_HI_VARINST", &pi).await,
            rows_of(&engine, "ACT_HI_DETAIL", &pi).await,
        );
        assert_eq!(got, (1, actinst, taskinst, varinst, detail), "{level:?}");
        engine.shutdown(Duration::from_secs(5)).await;
    }
}

/// The variables sent with the completion that ends the instance are in ACT_HI_VARINST (they
/// never reached ACT_RU_VARIABLE), and every variable has its last value.
async fn variables_set_by_the_last_completion_reach_history(backend: Backend) {
    for level in [HistoryLevel::Activity, HistoryLevel::Audit, HistoryLevel::Full] {
        let Some(fx) = Fixture::new(backend).await else { return };
        let (engine, pi) = run_two_tasks(&fx, level).await;
        assert_eq!(varinst(&engine, &pi).await, pairs(&[("x", "2"), ("y", "two"), ("z", "3")]), "{level:?}");
        engine.shutdown(Duration::from_secs(5)).await;
    }
}

/// `full`: one ACT_HI_DETAIL row per change, TYPE_ 'VariableUpdate', in the order they
/// happened, each naming the activity instance that made it; an existing variable updated by
/// the ending completion gets its last value in ACT_HI_VARINST too.
async fn full_history_keeps_every_variable_change(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, pi) = run_two_tasks(&fx, HistoryLevel::Full).await;
    let rows = engine
        .store()
        .sql_query(
            "SELECT TYPE_, NAME_, VAR_TYPE_, LONG_, TEXT_, REV_, ACT_INST_ID_, TASK_ID_, TIME_ FROM ACT_HI_DETAIL \
             WHERE PROC_INST_ID_ = ? ORDER BY TIME_, ID_",
            &[bind_text(&pi)],
        )
        .await
        .unwrap();
    let changes: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (text(&r[1]), text(&r[2]), r[3].as_i64().map_or_else(|| text(&r[4]), |n| n.to_string())))
        .collect();
    let want = [("x", "integer", "1"), ("x", "integer", "2"), ("y", "string", "two"), ("z", "integer", "3")];
    let want: Vec<(String, String, String)> =
        want.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect();
    assert_eq!(changes, want);
    assert!(rows.iter().all(|r| text(&r[0]) == "VariableUpdate"), "{rows:?}");
    assert_eq!(rows.iter().map(|r| r[5].as_i64()).collect::<Vec<_>>(), [Some(1), Some(2), Some(1), Some(1)]);
    assert!(rows.iter().all(|r| r[7].is_null() && r[8].as_timestamp().is_some()), "{rows:?}");
    let act = |id: &str| {
        let engine = &engine;
        let pi = pi.clone();
        let id = id.to_string();
        async move {
            let sql = "SELECT ID_ FROM ACT_HI_ACTINST WHERE PROC_INST_ID_ = ? AND ACT_ID_ = ?";
            text(&engine.store().sql_query(sql, &[bind_text(&pi), bind_text(&id)]).await.unwrap()[0][0])
        }
    };
    assert_eq!(text(&rows[1][6]), act("a").await, "x=2 came from task a's activity");
    assert_eq!(text(&rows[3][6]), act("b").await, "z=3 came from task b's activity");
    // Read back as `GET /history/historic-detail` lists them.
    let q = DetailQuery { process_instance_id: Some(pi.clone()), ..Default::default() };
    let (page, total) = engine.processes().historic_details(&q, 1, 2).await.unwrap();
    assert_eq!(total, 4);
    let got: Vec<(&str, &serde_json::Value)> =
        page.iter().map(|d| (d.variable.name.as_str(), &d.variable.value)).collect();
    assert_eq!(got, [("x", &json!(2)), ("y", &json!("two"))]);
    assert_eq!(page[0].activity_instance_id.as_deref(), Some(act("a").await.as_str()));
    let q = DetailQuery { task_id: Some("nope".into()), ..q };
    assert_eq!(engine.processes().historic_details(&q, 0, 10).await.unwrap().1, 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Deleting an instance keeps its history, ACT_HI_DETAIL included (as ACT_HI_VARINST); the
/// history cleanup deletes both once the instance is past its definition's time to live.
async fn details_stay_with_a_deleted_instance_and_go_with_the_cleanup(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").history_level(HistoryLevel::Full).build().await.unwrap();
    let p = engine.processes();
    let short = TWO_TASKS.replace(
        r#"isExecutable="true""#,
        r#"isExecutable="true" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" camunda:historyTimeToLive="0""#,
    );
    p.deploy("two.bpmn", &short).await.unwrap();
    let req = StartRequest {
        process_definition_key: Some("twoTasks".into()),
        variables: vars(json!({"x": 1, "y": 2})),
        ..Default::default()
    };
    let pi = p.start(req).await.unwrap().id;
    p.delete_instance(&pi, "no longer needed").await.unwrap();
    assert!(p.termination(&pi).await.unwrap().is_some(), "the deletion is recorded (seed 002 §27)");
    assert_eq!(rows_of(&engine, "ACT_HI_DETAIL", &pi).await, 2, "deleting keeps the details");
    assert_eq!(rows_of(&engine, "ACT_HI_VARINST", &pi).await, 2, "and the variables");
    common::wait_until(Duration::from_secs(30), "the cleanup deletes the details", || {
        let (engine, pi) = (&engine, pi.clone());
        async move {
            engine.processes().clean_history(10).await.unwrap();
            rows_of(engine, "ACT_HI_DETAIL", &pi).await == 0 && rows_of(engine, "ACT_HI_PROCINST", &pi).await == 0
        }
    })
    .await;
    assert_eq!(rows_of(&engine, "ACT_HI_VARINST", &pi).await, 0);
    assert!(p.termination(&pi).await.unwrap().is_none(), "its termination record goes with its history");
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    details_stay_with_a_deleted_instance_and_go_with_the_cleanup,
    each_history_level_fills_its_tables,
    variables_set_by_the_last_completion_reach_history,
    full_history_keeps_every_variable_change,
);
