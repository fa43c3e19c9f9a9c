//! External workers over real HTTP, on SQLite and on PostgreSQL: fetch and lock, complete,
//! fail, throw a BPMN error, and the requests refused.

mod processes_support;

use processes_support::{Backend, server};
use serde_json::json;

const EXTERNAL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <error id="declined" errorCode="CARD_DECLINED"/>
  <process id="pay" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="a" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge-card"/>
    <boundaryEvent id="failed" attachedToRef="charge"><errorEventDefinition errorRef="declined"/></boundaryEvent>
    <sequenceFlow id="b" sourceRef="charge" targetRef="done"/>
    <endEvent id="done"/>
    <sequenceFlow id="c" sourceRef="failed" targetRef="declinedEnd"/>
    <endEvent id="declinedEnd"/>
  </process>
</definitions>"#;

/// SPEC I4: a worker fetches and locks, another cannot take it, the owner completes; a
/// failure spends retries down to a dead letter; a BPMN error goes to the error boundary.
async fn external_workers_fetch_lock_complete_fail_and_throw(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("pay.bpmn", EXTERNAL).await;
    let acquire =
        |worker: &str| json!({"topic": "charge-card", "lockDuration": "PT5M", "numberOfTasks": 5, "workerId": worker});
    let pi = s
        .post("/runtime/process-instances", json!({"processDefinitionKey": "pay", "variables": {"amount": 7}}))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let got = s.post("/external-job-api/acquire/jobs", acquire("w1")).await.ok(200).clone();
    assert_eq!(got.as_array().unwrap().len(), 1, "{got}");
    let task = &got[0];
    assert_eq!(task["processInstanceId"], json!(pi));
    assert_eq!(task["elementId"], json!("charge"));
    // Flowable's typed list.
    assert_eq!(task["variables"], json!([{"name": "amount", "type": "integer", "value": 7}]));
    assert_eq!(task["lockOwner"], json!("w1"));
    assert_eq!(task["scopeType"], json!("bpmn"));
    let id = task["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post("/external-job-api/acquire/jobs", acquire("w2")).await.ok(200).as_array().unwrap().len(),
        0,
        "locked"
    );
    // Flowable answers 403 to a worker that does not hold the lock.
    s.post(&format!("/external-job-api/acquire/jobs/{id}/complete"), json!({"workerId": "w2"}))
        .await
        .refused(403, None);
    s.post(
        &format!("/external-job-api/acquire/jobs/{id}/complete"),
        json!({"workerId": "w1", "variables": {"receipt": "R-1"}}),
    )
    .await
    .ok(204);
    let hist = s.get(&format!("/history/historic-process-instances?processInstanceId={pi}")).await.ok(200).clone();
    assert!(hist["data"][0]["ended"].as_bool().unwrap(), "{hist}");
    s.post(&format!("/external-job-api/acquire/jobs/{id}/complete"), json!({"workerId": "w1"}))
        .await
        .refused(404, None);

    // Failures: retries spent (default one less), due again after retryTimeout, then a dead letter.
    s.post("/runtime/process-instances", json!({"processDefinitionKey": "pay"})).await.ok(201);
    let id =
        s.post("/external-job-api/acquire/jobs", acquire("w1")).await.ok(200)[0]["id"].as_str().unwrap().to_string();
    let r = s
        .post(
            &format!("/external-job-api/acquire/jobs/{id}/fail"),
            json!({"workerId": "w1", "errorMessage": "gateway down", "retries": 1, "retryTimeout": "PT1H"}),
        )
        .await;
    r.ok(204);
    let job = s.get(&format!("/external-job-api/jobs/{id}")).await.ok(200).clone();
    assert_eq!(job["retries"], json!(1), "{job}");
    assert_eq!(job["lockOwner"], json!(null), "{job}");
    assert_eq!(
        s.post("/external-job-api/acquire/jobs", acquire("w1")).await.ok(200).as_array().unwrap().len(),
        0,
        "not due before the retry timeout"
    );
    s.engine
        .store()
        .sql_execute(
            "UPDATE ACT_RU_JOB SET DUEDATE_ = NULL WHERE ID_ = ?",
            &[kairos::store::SqlValue::Text(id.clone())],
        )
        .await
        .unwrap();
    let again = s.post("/external-job-api/acquire/jobs", acquire("w1")).await.ok(200).clone();
    assert_eq!(again[0]["exceptionMessage"], json!("gateway down"));
    s.post(
        &format!("/external-job-api/acquire/jobs/{id}/fail"),
        json!({"workerId": "w1", "errorMessage": "still down"}),
    )
    .await
    .ok(204);
    s.get(&format!("/management/deadletter-jobs/{id}")).await.ok(200);
    assert_eq!(s.rows("ACT_RU_DEADLETTER_JOB").await, 1);

    // A BPMN error is caught by the boundary event.
    let pi = s.post("/runtime/process-instances", json!({"processDefinitionKey": "pay"})).await.ok(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let id =
        s.post("/external-job-api/acquire/jobs", acquire("w9")).await.ok(200)[0]["id"].as_str().unwrap().to_string();
    s.post(
        &format!("/external-job-api/acquire/jobs/{id}/bpmnError"),
        json!({"workerId": "w9", "errorCode": "CARD_DECLINED"}),
    )
    .await
    .ok(204);
    let acts = s.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await.ok(200).clone();
    let ids: Vec<&str> = acts["data"].as_array().unwrap().iter().map(|a| a["activityId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["start", "charge", "failed", "declinedEnd"]);

    // Flowable's lock extension and unacquire.
    s.post("/runtime/process-instances", json!({"processDefinitionKey": "pay"})).await.ok(201);
    let got = s.post("/external-job-api/acquire/jobs", acquire("w5")).await.ok(200).clone();
    let id = got[0]["id"].as_str().unwrap().to_string();
    let expires = got[0]["lockExpirationTime"].as_str().unwrap().to_string();
    let extend = |worker: &str, expected: &str| json!({"workerId": worker, "lockDuration": "PT1H", "expectedLockExpirationTime": expected});
    let url = format!("/external-job-api/acquire/jobs/{id}/extend-lock");
    s.post(&url, extend("w6", &expires)).await.refused(403, None);
    s.post(&url, extend("w5", "2020-01-01T00:00:00.000Z")).await.refused(409, None);
    s.post(&url, json!({"workerId": "w5", "lockDuration": "PT1H"}))
        .await
        .refused(400, Some("expectedLockExpirationTime"));
    let r = s.post(&url, extend("w5", &expires)).await.ok(200).clone();
    assert_eq!((r["jobId"].as_str(), r["workerId"].as_str()), (Some(id.as_str()), Some("w5")), "{r}");
    assert!(r["lockExpirationTime"].as_str().unwrap() > expires.as_str(), "later: {r} vs {expires}");
    s.post(&format!("/external-job-api/unacquire/jobs/{id}"), json!({"workerId": "w6"})).await.refused(403, None);
    s.post(&format!("/external-job-api/unacquire/jobs/{id}"), json!({"workerId": "w5"})).await.ok(204);
    let again = s.post("/external-job-api/acquire/jobs", acquire("w7")).await.ok(200).clone();
    assert_eq!(again[0]["id"], json!(id), "given back, acquired at once by another worker");
    s.post("/external-job-api/unacquire/jobs", json!({"workerId": "w7"})).await.ok(204);
    assert_eq!(s.get(&format!("/external-job-api/jobs/{id}")).await.ok(200)["lockOwner"], json!(null));
    // errorDetails are kept as the job's stack trace.
    s.post("/external-job-api/acquire/jobs", acquire("w8")).await.ok(200);
    s.post(
        &format!("/external-job-api/acquire/jobs/{id}/fail"),
        json!({"workerId": "w8", "errorDetails": "java.io.IOException: card service down\n\tat Worker.run"}),
    )
    .await
    .ok(204);
    let job = s.get(&format!("/external-job-api/jobs/{id}")).await.ok(200).clone();
    assert_eq!(job["exceptionMessage"], json!("java.io.IOException: card service down"), "{job}");

    // Bad input names the field.
    s.post("/external-job-api/acquire/jobs", json!({"topic": "x", "workerId": "w"}))
        .await
        .refused(400, Some("lockDuration"));
    s.post("/external-job-api/acquire/jobs", json!({"topic": "x", "workerId": "w", "lockDuration": "5 minutes"}))
        .await
        .refused(400, Some("lockDuration"));
    s.post(
        "/external-job-api/acquire/jobs",
        json!({"topic": "x", "workerId": "w", "lockDuration": 1000, "numberOfTasks": 0}),
    )
    .await
    .refused(400, Some("numberOfTasks"));
    s.post("/external-job-api/acquire/jobs", json!({"lockDuration": 1000, "workerId": "w"}))
        .await
        .refused(400, Some("topic"));
}

on_both_backends!(external_workers_fetch_lock_complete_fail_and_throw,);
