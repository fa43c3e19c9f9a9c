//! `GET /history/historic-detail` (Flowable's route and shape): the variable changes that
//! history level `full` keeps in ACT_HI_DETAIL, filtered and paged; bad filters are 400s
//! naming the field.

mod common;

use axum::http::StatusCode;
use common::{App, app_with};
use kairos::process::{HistoryLevel, StartRequest};
use serde_json::{Value, json};

const ONE_TASK: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="oneTask" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <userTask id="task"/>
    <sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// An instance started with `{"amount": 10}` whose task was completed with
/// `{"amount": 20, "note": "ok"}`, at history level `full`; returns the app and the instance id.
async fn ended_instance() -> (App, String) {
    let app = app_with(|b| b.executor_enabled(false).history_level(HistoryLevel::Full)).await;
    let p = app.engine.processes();
    p.deploy("one.bpmn", ONE_TASK).await.unwrap();
    let req = StartRequest {
        process_definition_key: Some("oneTask".into()),
        variables: json!({"amount": 10}).as_object().cloned().unwrap(),
        ..Default::default()
    };
    let pi = p.start(req).await.unwrap().id;
    let task = p.tasks(Some(&pi), None, None, None).await.unwrap().remove(0);
    p.complete_task(&task.id, json!({"amount": 20, "note": "ok"}).as_object().cloned().unwrap()).await.unwrap();
    (app, pi)
}

fn names_and_values(list: &Value) -> Vec<(String, Value)> {
    let data = list["data"].as_array().unwrap();
    data.iter().map(|d| (d["variable"]["name"].as_str().unwrap().to_string(), d["variable"]["value"].clone())).collect()
}

#[tokio::test]
async fn historic_details_list_every_variable_change_in_flowables_shape() {
    let (app, pi) = ended_instance().await;
    let r = app.get(&format!("/history/historic-detail?processInstanceId={pi}")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json["total"], 3, "{}", r.text);
    let want = [("amount", json!(10)), ("amount", json!(20)), ("note", json!("ok"))];
    let want: Vec<(String, Value)> = want.iter().map(|(n, v)| (n.to_string(), v.clone())).collect();
    assert_eq!(names_and_values(&r.json), want);
    let first = &r.json["data"][0];
    assert_eq!(first["detailType"], "variableUpdate");
    assert_eq!(first["processInstanceId"], pi.as_str());
    assert_eq!(first["variable"]["type"], "integer");
    assert_eq!(first["revision"], 1);
    assert!(first["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{first}");
    assert!(first["propertyId"].is_null() && first["propertyValue"].is_null(), "{first}");

    // The change made by the task's completion names the task's activity instance.
    let second = &r.json["data"][1];
    assert_eq!(second["revision"], 2, "the second revision of 'amount'");
    let act = second["activityInstanceId"].as_str().expect("an activity instance").to_string();
    let by_act = app.get(&format!("/history/historic-detail?activityInstanceId={act}")).await;
    assert_eq!(by_act.json["total"], 2, "{}", by_act.text);
    let id = first["id"].as_str().unwrap();
    assert_eq!(app.get(&format!("/history/historic-detail?id={id}")).await.json["total"], 1);
    let page = app.get(&format!("/history/historic-detail?processInstanceId={pi}&start=2&size=5")).await;
    assert_eq!((page.json["total"].clone(), page.json["size"].clone()), (json!(3), json!(1)), "{}", page.text);
    assert_eq!(names_and_values(&page.json)[0].0, "note");
    let only = app.get("/history/historic-detail?selectOnlyVariableUpdates=true").await;
    assert_eq!(only.json["total"], 3, "every detail is a variable update");
    let forms = app.get("/history/historic-detail?selectOnlyFormProperties=true").await;
    assert_eq!(forms.json["total"], 0, "kairos has no form properties");
    assert_eq!(app.get("/history/historic-detail?processInstanceId=nope").await.json["total"], 0);
}

#[tokio::test]
async fn bad_historic_detail_filters_are_refused_naming_the_field() {
    let (app, _) = ended_instance().await;
    let long = "x".repeat(65);
    for (query, field) in [
        (format!("taskId={long}"), "taskId"),
        ("selectOnlyFormProperties=yes".to_string(), "selectOnlyFormProperties"),
        ("size=-1".to_string(), "size"),
    ] {
        let r = app.get(&format!("/history/historic-detail?{query}")).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.text);
        assert_eq!(r.json["error"]["field"], field, "{query}: {}", r.text);
    }
    let r = app.get("/history/historic-detail?variableName=amount").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "an unknown parameter: {}", r.text);
}
