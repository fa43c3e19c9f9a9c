//! The Camunda 7 facade's wire, over real HTTP on SQLite and PostgreSQL: Camunda's error body
//! and status codes, typed variables both ways, unknown fields refused, paging and counts,
//! long polling (woken by new work, `[]` at the timeout, nothing left locked by a caller that
//! went away), failure to an incident, lock rules, one engine under both faces, and the token.

mod processes_support;

use processes_support::{Backend, Server, server};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

const PAYMENT: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <error id="declined" errorCode="CARD_DECLINED"/>
  <process id="payment" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="a" sourceRef="start" targetRef="charge"/>
    <serviceTask id="charge" camunda:type="external" camunda:topic="charge-card"/>
    <boundaryEvent id="card_declined" attachedToRef="charge"><errorEventDefinition errorRef="declined" camunda:errorMessageVariable="declineReason"/></boundaryEvent>
    <sequenceFlow id="b" sourceRef="charge" targetRef="approve"/>
    <userTask id="approve"/>
    <sequenceFlow id="c" sourceRef="approve" targetRef="done"/>
    <endEvent id="done"/>
    <sequenceFlow id="d" sourceRef="card_declined" targetRef="declined_end"/>
    <endEvent id="declined_end"/>
  </process>
</definitions>"#;

/// Asserts a Camunda error: status, `type`, and a message containing `says`.
fn camunda_error(r: &processes_support::Reply, status: u16, kind: &str, says: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.json["type"], kind, "{}", r.text);
    let m = r.json["message"].as_str().unwrap_or_default();
    assert!(m.contains(says), "the message names {says}: {}", r.text);
    assert!(r.json.get("error").is_none(), "not kairos's shape: {}", r.text);
}

async fn start(s: &Server, vars: Value) -> String {
    let r = s.post("/engine-rest/process-definition/key/payment/start", json!({"variables": vars})).await;
    r.ok(200)["id"].as_str().unwrap().to_string()
}

fn fetch(worker: &str, wait_ms: i64) -> Value {
    json!({"workerId": worker, "maxTasks": 10, "asyncResponseTimeout": wait_ms,
           "topics": [{"topicName": "charge-card", "lockDuration": 60000}]})
}

/// Camunda's error shape with its types, and refused fields named.
async fn errors_are_camundas_and_name_the_field(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let r = s
        .post(
            "/engine-rest/external-task/fetchAndLock",
            json!({"workerId": "w", "maxTasks": 1, "topics": [], "bogus": 1}),
        )
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "bogus");
    let r = s.post("/engine-rest/external-task/fetchAndLock", json!({"maxTasks": 1})).await;
    camunda_error(&r, 400, "InvalidRequestException", "workerId");
    let r = s
        .post(
            "/engine-rest/external-task/fetchAndLock",
            json!({"workerId": "w", "maxTasks": 1, "asyncResponseTimeout": 1_800_001}),
        )
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "asyncResponseTimeout");
    let bad_topic = json!({"workerId": "w", "maxTasks": 1, "topics": [{"topicName": "t", "lockDuration": 0}]});
    camunda_error(
        &s.post("/engine-rest/external-task/fetchAndLock", bad_topic).await,
        400,
        "InvalidRequestException",
        "topics[0].lockDuration",
    );
    camunda_error(
        &s.post("/engine-rest/external-task/nope/complete", json!({"workerId": "w"})).await,
        404,
        "InvalidRequestException",
        "nope",
    );
    camunda_error(&s.get("/engine-rest/no-such-resource").await, 404, "InvalidRequestException", "no-such-resource");
    camunda_error(
        &s.get("/engine-rest/process-definition/key/missing").await,
        404,
        "InvalidRequestException",
        "missing",
    );
    camunda_error(
        &s.get("/engine-rest/process-instance?firstResult=-1").await,
        400,
        "InvalidRequestException",
        "firstResult",
    );
    camunda_error(&s.get("/engine-rest/process-instance?nameLike=x").await, 400, "InvalidRequestException", "nameLike");
    // An unsupported variable type names the variable; nothing starts.
    let before = s.rows("ACT_HI_PROCINST").await;
    let r = s
        .post(
            "/engine-rest/process-definition/key/payment/start",
            json!({"variables": {"order": {"value": "rO0ABX", "type": "Object", "valueInfo": {"objectTypeName": "com.acme.Order"}}}}),
        )
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "variables.order");
    let r = s
        .post(
            "/engine-rest/process-definition/key/payment/start",
            json!({"variables": {"n": {"value": 3_000_000_000i64, "type": "Integer"}}}),
        )
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "variables.n");
    assert_eq!(s.rows("ACT_HI_PROCINST").await, before);
    // Flowable's paths keep kairos's shape.
    let r = s.get("/runtime/no-such").await;
    assert!(r.json["error"]["code"].is_string(), "{}", r.text);
}

/// Typed variables in and out, every type Camunda names that kairos keeps.
async fn typed_variables_round_trip(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let pi = start(
        &s,
        json!({
            "s": {"value": "text", "type": "String"}, "i": {"value": 42, "type": "Integer"},
            "l": {"value": 9_000_000_000i64, "type": "Long"}, "d": {"value": 1.5, "type": "Double"},
            "b": {"value": true, "type": "boolean"}, "z": {"value": null, "type": "Null"},
            "j": {"value": "{\"a\":[1,2]}", "type": "Json"}, "t": {"value": "2026-01-02T03:04:05.678+0100", "type": "Date"},
            "untyped": {"value": 7}, "nulltype": {"value": "x", "type": null, "valueInfo": null},
        }),
    )
    .await;
    let v = s.get(&format!("/engine-rest/process-instance/{pi}/variables")).await.ok(200).clone();
    let kind = |n: &str| (v[n]["type"].as_str().unwrap().to_string(), v[n]["value"].clone());
    assert_eq!(kind("s"), ("String".into(), json!("text")));
    assert_eq!(kind("i"), ("Integer".into(), json!(42)));
    assert_eq!(kind("l"), ("Long".into(), json!(9_000_000_000i64)));
    assert_eq!(kind("d"), ("Double".into(), json!(1.5)));
    assert_eq!(kind("b"), ("Boolean".into(), json!(true)));
    assert_eq!(kind("z"), ("Null".into(), Value::Null));
    assert_eq!(kind("j").0, "Json");
    assert_eq!(serde_json::from_str::<Value>(kind("j").1.as_str().unwrap()).unwrap(), json!({"a": [1, 2]}));
    assert_eq!(kind("t"), ("String".into(), json!("2026-01-02T02:04:05.678Z")), "a Date is kept as its instant");
    assert_eq!(kind("untyped"), ("Integer".into(), json!(7)));
    // One variable, set and read; Flowable's face sees the plain value.
    s.put(&format!("/engine-rest/process-instance/{pi}/variables/total"), json!({"value": 99, "type": "Long"}))
        .await
        .ok(204);
    let one = s.get(&format!("/engine-rest/process-instance/{pi}/variables/total")).await;
    assert_eq!(one.ok(200)["value"], 99);
    camunda_error(
        &s.get(&format!("/engine-rest/process-instance/{pi}/variables/none")).await,
        404,
        "InvalidRequestException",
        "none",
    );
    // Flowable's face: its typed list `[{name, type, value, scope}]`.
    let flowable = s.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200).clone();
    let total = flowable.as_array().unwrap().iter().find(|v| v["name"] == "total").unwrap().clone();
    assert_eq!(total["value"], 99, "{total}");
    let r = s
        .post(
            &format!("/engine-rest/process-instance/{pi}/variables"),
            json!({"modifications": {"x": {"value": "y"}}, "deletions": ["s"]}),
        )
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "deletions");
    s.post(&format!("/engine-rest/process-instance/{pi}/variables"), json!({"modifications": {"x": {"value": "y"}}}))
        .await
        .ok(204);
    // The fetched task carries them typed, only the asked ones when `variables` lists names.
    let mut f = fetch("w", 0);
    f["topics"][0]["variables"] = json!(["i", "j"]);
    let got = s.post("/engine-rest/external-task/fetchAndLock", f).await.ok(200).clone();
    let vars = got[0]["variables"].as_object().unwrap();
    assert_eq!(vars.keys().collect::<Vec<_>>(), vec!["i", "j"]);
    assert_eq!(got[0]["lockExpirationTime"].as_str().unwrap().len(), "2026-01-01T00:00:00.000+0000".len());
}

/// asyncResponseTimeout: a waiting fetch answers as soon as work is started on this node, and
/// `[]` at the end of the wait; nothing is locked while it waits.
async fn long_polling_wakes_on_new_work_and_times_out_empty(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let t0 = Instant::now();
    let empty = s.post("/engine-rest/external-task/fetchAndLock", fetch("w", 1500)).await;
    assert_eq!(empty.ok(200), &json!([]));
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(1400) && waited < Duration::from_secs(5), "{waited:?}");

    let s = std::sync::Arc::new(s);
    let c = s.clone();
    let waiting = tokio::spawn(async move {
        let t = Instant::now();
        let r = c.post("/engine-rest/external-task/fetchAndLock", fetch("w", 20_000)).await;
        (r, t.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let pi = start(&s, json!({})).await;
    let (r, total) = waiting.await.unwrap();
    let after_start = started.elapsed();
    let got = r.ok(200);
    assert_eq!(got[0]["processInstanceId"], pi.as_str(), "{got}");
    // Woken, not found by the next poll (every FETCH_POLL_PERIOD, 1 s).
    assert!(after_start < Duration::from_millis(700), "answered {after_start:?} after the start ({total:?} in all)");
}

/// Stopping the API answers waiting fetches at once (`[]`) instead of draining them for up to
/// their asyncResponseTimeout.
async fn a_shutdown_answers_waiting_fetches(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(kairos_server::serve(s.engine.clone(), listener, async {
        let _ = stopped.await;
    }));
    let body = fetch("w", 600_000).to_string();
    let waiting = tokio::spawn(async move {
        let mut sock = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /engine-rest/external-task/fetchAndLock HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        sock.write_all(head.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut sock, &mut raw).await.unwrap();
        processes_support::parse_response(&raw)
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t = Instant::now();
    stop.send(()).unwrap();
    let r = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("answered at shutdown").unwrap();
    assert_eq!((r.status, r.json.clone()), (200, json!([])), "{}", r.text);
    tokio::time::timeout(Duration::from_secs(10), serving).await.expect("the server stopped").unwrap().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

/// A caller that goes away while its fetch waits leaves nothing locked to it.
async fn a_fetch_whose_caller_left_locks_nothing(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let body = fetch("ghost", 5_000).to_string();
    let mut sock = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let head = format!(
        "POST /engine-rest/external-task/fetchAndLock HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        s.addr,
        body.len()
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(sock);
    let pi = start(&s, json!({})).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let locked = s.get("/engine-rest/external-task/count?locked=true").await;
    assert_eq!(locked.ok(200)["count"], 0, "nothing is locked to the caller that left");
    let got = s.post("/engine-rest/external-task/fetchAndLock", fetch("w2", 0)).await.ok(200).clone();
    assert_eq!(got[0]["processInstanceId"], pi.as_str(), "another worker gets it at once");
}

/// Complete, failure (retries, retryTimeout, errorDetails), retries 0 → incident, bpmnError,
/// extendLock, lock, unlock, and what each refuses.
async fn external_tasks_follow_camundas_rules(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let pi = start(&s, json!({})).await;
    let got = s.post("/engine-rest/external-task/fetchAndLock", fetch("w1", 0)).await.ok(200).clone();
    let id = got[0]["id"].as_str().unwrap().to_string();
    assert_eq!((got[0]["workerId"].clone(), got[0]["activityId"].clone()), (json!("w1"), json!("charge")));
    let other = s.post(&format!("/engine-rest/external-task/{id}/complete"), json!({"workerId": "w2"})).await;
    camunda_error(&other, 400, "BadUserRequestException", "w1");
    camunda_error(
        &s.post(&format!("/engine-rest/external-task/{id}/lock"), json!({"workerId": "w2", "lockDuration": 1000}))
            .await,
        400,
        "BadUserRequestException",
        &id,
    );
    s.post(&format!("/engine-rest/external-task/{id}/extendLock"), json!({"workerId": "w1", "newDuration": 120000}))
        .await
        .ok(204);
    // A failure with retries and a timeout: not fetchable until it passes, then again.
    let fail =
        json!({"workerId": "w1", "errorMessage": "down", "errorDetails": "trace", "retries": 1, "retryTimeout": 1500});
    s.post(&format!("/engine-rest/external-task/{id}/failure"), fail).await.ok(204);
    assert_eq!(s.post("/engine-rest/external-task/fetchAndLock", fetch("w1", 0)).await.ok(200), &json!([]));
    let listed = s.get(&format!("/engine-rest/external-task/{id}")).await.ok(200).clone();
    assert_eq!(
        (listed["retries"].clone(), listed["errorMessage"].clone(), listed["workerId"].clone()),
        (json!(1), json!("down"), Value::Null)
    );
    let details = s.get(&format!("/engine-rest/external-task/{id}/errorDetails")).await;
    assert_eq!((details.status, details.text.as_str()), (200, "trace"));
    let again = s.post("/engine-rest/external-task/fetchAndLock", fetch("w1", 5000)).await.ok(200).clone();
    assert_eq!(again[0]["id"], id.as_str(), "seen again after the retry timeout");
    assert_eq!(again[0]["errorMessage"], "down");
    // Unlock: fetchable by anyone at once.
    s.request("POST", &format!("/engine-rest/external-task/{id}/unlock"), None, b"").await.ok(204);
    s.post("/engine-rest/external-task/fetchAndLock", fetch("w3", 0)).await.ok(200);
    // Retries 0: a dead letter, listed without retries.
    s.post(
        &format!("/engine-rest/external-task/{id}/failure"),
        json!({"workerId": "w3", "errorMessage": "gone", "retries": 0, "retryTimeout": 0}),
    )
    .await
    .ok(204);
    assert_eq!(s.get("/engine-rest/external-task/count?noRetriesLeft=true").await.ok(200)["count"], 1);
    let dead = s.get(&format!("/management/deadletter-jobs?processInstanceId={pi}")).await;
    assert!(dead.text.contains(&id), "the dead letter as kairos shows it: {}", dead.text);
    let incidents = s.get(&format!("/engine-rest/incident?processInstanceId={pi}")).await.ok(200).clone();
    let i = &incidents[0];
    assert_eq!(
        (i["incidentType"].clone(), i["configuration"].clone(), i["incidentMessage"].clone()),
        (json!("failedExternalTask"), json!(id), json!("gone"))
    );
    assert_eq!(s.get("/engine-rest/incident/count?incidentType=failedJob").await.ok(200)["count"], 0);
    // BPMN error on another instance: the boundary path.
    let pi2 = start(&s, json!({})).await;
    let t = s.post("/engine-rest/external-task/fetchAndLock", fetch("w", 0)).await.ok(200)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s.post(&format!("/engine-rest/external-task/{t}/bpmnError"), json!({"workerId": "w", "errorCode": "CARD_DECLINED", "errorMessage": "no", "variables": {"why": {"value": "limit"}}})).await;
    r.ok(204);
    let h = s.get(&format!("/engine-rest/history/process-instance?processInstanceId={pi2}")).await.ok(200).clone();
    assert_eq!(h[0]["state"], "COMPLETED");
    let acts = s
        .get(&format!("/engine-rest/history/activity-instance?processInstanceId={pi2}&sortBy=startTime&sortOrder=asc"))
        .await
        .ok(200)
        .clone();
    let ids: Vec<&str> = acts.as_array().unwrap().iter().map(|a| a["activityId"].as_str().unwrap()).collect();
    assert!(ids.contains(&"card_declined") && ids.contains(&"declined_end"), "{ids:?}");
    // The worker's errorMessage reached the boundary event's errorMessageVariable.
    let vars = s
        .get(&format!("/engine-rest/history/variable-instance?processInstanceId={pi2}&variableName=declineReason"))
        .await
        .ok(200)
        .clone();
    assert_eq!(vars[0]["value"], "no", "{vars}");
}

/// An instance started through Flowable's face is driven through Camunda's and the other way
/// round; lists page and count.
async fn one_engine_under_both_faces(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    s.deployed("payment.bpmn", PAYMENT).await;
    let flowable =
        s.started("payment", "from-flowable", json!({"amount": 5})).await["id"].as_str().unwrap().to_string();
    let camunda = start(&s, json!({"amount": {"value": 6, "type": "Integer"}})).await;
    let list = s
        .get("/engine-rest/process-instance?processDefinitionKey=payment&sortBy=instanceId&sortOrder=asc")
        .await
        .ok(200)
        .clone();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(s.get("/engine-rest/process-instance/count").await.ok(200)["count"], 2);
    let page = s.get("/engine-rest/process-instance?firstResult=1&maxResults=5").await.ok(200).clone();
    assert_eq!(page.as_array().unwrap().len(), 1);
    let by_var = s.get("/engine-rest/process-instance?variables=amount_eq_5").await.ok(200).clone();
    assert_eq!(by_var[0]["id"], flowable.as_str());
    let by_bk = s.get("/engine-rest/process-instance?businessKey=from-flowable").await.ok(200).clone();
    assert_eq!(by_bk.as_array().unwrap().len(), 1);
    // Flowable's external-worker API takes the Camunda-started instance's task, Camunda's the other.
    let fl = json!({"topic": "charge-card", "lockDuration": "PT1M", "numberOfTasks": 10, "workerId": "fw"});
    let flowable_jobs = s.post("/external-job-api/acquire/jobs", fl).await.ok(200).clone();
    assert_eq!(flowable_jobs.as_array().unwrap().len(), 2);
    for j in flowable_jobs.as_array().unwrap() {
        let id = j["id"].as_str().unwrap();
        if j["processInstanceId"] == camunda.as_str() {
            s.post(&format!("/external-job-api/acquire/jobs/{id}/complete"), json!({"workerId": "fw"})).await.ok(204);
        } else {
            s.request("POST", &format!("/engine-rest/external-task/{id}/unlock"), Some("application/json"), b"{}")
                .await
                .ok(204);
            let got = s.post("/engine-rest/external-task/fetchAndLock", fetch("cw", 0)).await.ok(200)[0]["id"].clone();
            assert_eq!(got, id);
            s.post(
                &format!("/engine-rest/external-task/{id}/complete"),
                json!({"workerId": "cw", "variables": {"paid": {"value": true}}}),
            )
            .await
            .ok(204);
        }
    }
    // Both wait at the user task now: Camunda's task API claims and completes it.
    let tasks = s.get("/engine-rest/task?taskDefinitionKey=approve&sortBy=created&sortOrder=asc").await.ok(200).clone();
    assert_eq!(tasks.as_array().unwrap().len(), 2);
    assert_eq!(s.get("/engine-rest/task/count?unassigned=true").await.ok(200)["count"], 2);
    for t in tasks.as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        s.post(&format!("/engine-rest/task/{id}/claim"), json!({"userId": "kermit"})).await.ok(204);
        camunda_error(
            &s.post(&format!("/engine-rest/task/{id}/claim"), json!({"userId": "piggy"})).await,
            400,
            "BadUserRequestException",
            "kermit",
        );
        s.request("POST", &format!("/engine-rest/task/{id}/unclaim"), None, b"").await.ok(204);
        assert_eq!(s.get(&format!("/engine-rest/task/{id}")).await.ok(200)["assignee"], Value::Null);
        s.post(&format!("/engine-rest/task/{id}/assignee"), json!({"userId": "piggy"})).await.ok(204);
        s.post(&format!("/engine-rest/task/{id}/assignee"), json!({"userId": "kermit"})).await.ok(204);
        assert_eq!(s.get(&format!("/engine-rest/task?assignee=kermit&taskId={id}")).await.ok(200)[0]["id"], id);
        camunda_error(
            &s.post(&format!("/engine-rest/task/{id}/assignee"), json!({})).await,
            400,
            "InvalidRequestException",
            "userId",
        );
        let vars = s.get(&format!("/engine-rest/task/{id}/variables")).await.ok(200).clone();
        assert!(vars["amount"]["type"] == "Integer", "{vars}");
        s.post(
            &format!("/engine-rest/task/{id}/complete"),
            json!({"variables": {"approved": {"value": true, "type": "Boolean"}}}),
        )
        .await
        .ok(204);
    }
    let ended = s.get("/engine-rest/history/process-instance/count?finished=true").await.ok(200).clone();
    assert_eq!(ended["count"], 2);
    let tasks = s.get("/engine-rest/history/task?finished=true").await.ok(200).clone();
    assert_eq!(tasks.as_array().unwrap().len(), 2);
    let flowable_view =
        s.get(&format!("/history/historic-process-instances?processInstanceId={camunda}")).await.ok(200).clone();
    assert!(flowable_view.to_string().contains("endTime"));
    let paid = s
        .get(&format!("/engine-rest/history/variable-instance?processInstanceId={flowable}&variableName=paid"))
        .await
        .ok(200)
        .clone();
    assert_eq!(paid[0]["value"], true);
}

/// `form` with a text field `name` in front.
fn form_with(name: &str, boundary: &str, form: &[u8]) -> Vec<u8> {
    let mut out = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\nx\r\n").into_bytes();
    out.extend_from_slice(form);
    out
}

/// Messages, signals, deployment, definitions and their XML.
async fn deployments_definitions_messages_and_signals(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let wait = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="paid"/><signal id="g" name="closing"/>
  <process id="waits" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="a" sourceRef="s" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="b" sourceRef="fork" targetRef="msg"/><sequenceFlow id="c" sourceRef="fork" targetRef="sig"/>
    <intermediateCatchEvent id="msg"><messageEventDefinition messageRef="m"/></intermediateCatchEvent>
    <intermediateCatchEvent id="sig"><signalEventDefinition signalRef="g"/></intermediateCatchEvent>
    <sequenceFlow id="d" sourceRef="msg" targetRef="join"/><sequenceFlow id="e" sourceRef="sig" targetRef="join"/>
    <parallelGateway id="join"/><sequenceFlow id="f" sourceRef="join" targetRef="end"/><endEvent id="end"/>
  </process>
</definitions>"#;
    let boundary = "kairos-test-boundary";
    let mut form = Vec::new();
    for (name, value) in
        [("deployment-name", "waits"), ("enable-duplicate-filtering", "True"), ("deploy-changed-only", "false")]
    {
        form.extend(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    form.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"data\"; filename=\"waits.bpmn\"\r\nContent-Type: application/octet-stream\r\n\r\n{wait}\r\n--{boundary}--\r\n").as_bytes());
    let ct = format!("multipart/form-data; boundary={boundary}");
    let dep = s.request("POST", "/engine-rest/deployment/create", Some(&ct), &form).await;
    let dep = dep.ok(200).clone();
    assert_eq!(dep["name"], "waits");
    let def = dep["deployedProcessDefinitions"].as_object().unwrap().values().next().unwrap().clone();
    assert_eq!((def["key"].clone(), def["version"].clone()), (json!("waits"), json!(1)));
    let def_id = def["id"].as_str().unwrap();
    let xml = s.get(&format!("/engine-rest/process-definition/{def_id}/xml")).await.ok(200).clone();
    assert!(xml["bpmn20Xml"].as_str().unwrap().contains("intermediateCatchEvent"));
    assert_eq!(s.get("/engine-rest/process-definition/key/waits").await.ok(200)["id"], def_id);
    assert_eq!(s.get("/engine-rest/process-definition/count?latestVersion=true").await.ok(200)["count"], 1);
    // The same model again: kept as it is (duplicate filtering), no version 2.
    let again = s.request("POST", "/engine-rest/deployment/create", Some(&ct), &form).await.ok(200).clone();
    assert!(again["deployedProcessDefinitions"].as_object().unwrap().contains_key(def_id), "{again}");
    let unknown = form_with("bogus-field", boundary, &form);
    let r = s.request("POST", "/engine-rest/deployment/create", Some(&ct), &unknown).await;
    camunda_error(&r, 400, "InvalidRequestException", "bogus-field");
    let pi = s
        .post(
            &format!("/engine-rest/process-definition/{def_id}/start"),
            json!({"businessKey": "o-1", "withVariablesInReturn": true, "variables": {"a": {"value": 1}}}),
        )
        .await
        .ok(200)
        .clone();
    assert_eq!(pi["variables"]["a"]["value"], 1);
    let pi = pi["id"].as_str().unwrap().to_string();
    let r = s.post("/engine-rest/message", json!({"messageName": "nobody-waits"})).await;
    camunda_error(&r, 400, "MismatchingMessageCorrelationException", "nobody-waits");
    let r = s.post("/engine-rest/message", json!({"messageName": "paid", "businessKey": "o-1", "processVariables": {"amount": {"value": 3, "type": "Integer"}}, "resultEnabled": true})).await;
    let res = r.ok(200).clone();
    assert_eq!(
        (res[0]["resultType"].clone(), res[0]["processInstance"]["id"].clone()),
        (json!("Execution"), json!(pi))
    );
    s.post("/engine-rest/signal", json!({"name": "closing", "variables": {"late": {"value": false}}})).await.ok(204);
    let h = s.get(&format!("/engine-rest/history/process-instance?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(h[0]["state"], "COMPLETED");
    // Suspension and deletion of a running instance.
    let pi = s.post("/engine-rest/process-definition/key/waits/start", json!({})).await.ok(200)["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.put(&format!("/engine-rest/process-instance/{pi}/suspended"), json!({"suspended": true})).await.ok(204);
    assert_eq!(s.get(&format!("/engine-rest/process-instance/{pi}")).await.ok(200)["suspended"], true);
    s.delete(&format!("/engine-rest/process-instance/{pi}")).await;
    camunda_error(&s.get(&format!("/engine-rest/process-instance/{pi}")).await, 404, "InvalidRequestException", &pi);
    s.delete(&format!("/engine-rest/process-instance/{pi}?failIfNotExists=false")).await;
    let h = s.get(&format!("/engine-rest/history/process-instance?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(h[0]["state"], "EXTERNALLY_TERMINATED");
}

/// Jobs: a timer listed, its retries set, run now; a failed job (a dead letter) is an incident
/// until its retries are set again.
async fn jobs_list_set_retries_and_execute(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let timer = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="later" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="a" sourceRef="s" targetRef="wait"/>
    <intermediateCatchEvent id="wait"><timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition></intermediateCatchEvent>
    <sequenceFlow id="b" sourceRef="wait" targetRef="e"/><endEvent id="e"/>
  </process>
</definitions>"#;
    s.deployed("later.bpmn", timer).await;
    let pi = s.post("/engine-rest/process-definition/key/later/start", json!({})).await.ok(200)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let jobs = s.get(&format!("/engine-rest/job?processInstanceId={pi}&timers=true")).await.ok(200).clone();
    assert_eq!(jobs.as_array().unwrap().len(), 1, "{jobs}");
    let id = jobs[0]["id"].as_str().unwrap().to_string();
    assert_eq!(s.get("/engine-rest/job/count?messages=true").await.ok(200)["count"], 0);
    assert_eq!(s.get("/engine-rest/job/count?executable=true").await.ok(200)["count"], 0, "due in an hour");
    s.put(&format!("/engine-rest/job/{id}/retries"), json!({"retries": 7})).await.ok(204);
    assert_eq!(s.get(&format!("/engine-rest/job/{id}")).await.ok(200)["retries"], 7);
    camunda_error(
        &s.put(&format!("/engine-rest/job/{id}/retries"), json!({"retries": -1})).await,
        400,
        "InvalidRequestException",
        "retries",
    );
    s.post(&format!("/engine-rest/job/{id}/execute"), json!({})).await.ok(204);
    assert_eq!(s.get("/engine-rest/job/count?executable=true").await.ok(200)["count"], 1, "due now");
    camunda_error(&s.post("/engine-rest/job/nope/execute", json!({})).await, 404, "InvalidRequestException", "nope");
    // A dead letter is a failed job, an incident; retries move it back.
    s.engine
        .store()
        .sql_execute(
            "UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = 'boom' WHERE ID_ = ?",
            &[kairos::store::SqlValue::Text(id.clone())],
        )
        .await
        .unwrap();
    s.engine.store().sql_execute(
        "INSERT INTO ACT_RU_DEADLETTER_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_MSG_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_, PRIORITY_) \
         SELECT ID_, REV_, TYPE_, EXCLUSIVE_, EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, 0, ATTEMPTS_, EXCEPTION_MSG_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_, PRIORITY_ FROM ACT_RU_JOB WHERE ID_ = ?",
        &[kairos::store::SqlValue::Text(id.clone())],
    ).await.unwrap();
    s.engine
        .store()
        .sql_execute("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", &[kairos::store::SqlValue::Text(id.clone())])
        .await
        .unwrap();
    let failed = s.get("/engine-rest/job?noRetriesLeft=true").await.ok(200).clone();
    assert_eq!((failed[0]["retries"].clone(), failed[0]["exceptionMessage"].clone()), (json!(0), json!("boom")));
    let inc = s.get("/engine-rest/incident").await.ok(200).clone();
    assert_eq!((inc[0]["incidentType"].clone(), inc[0]["configuration"].clone()), (json!("failedJob"), json!(id)));
    camunda_error(
        &s.post(&format!("/engine-rest/job/{id}/execute"), json!({})).await,
        400,
        "BadUserRequestException",
        "retries",
    );
    s.put(&format!("/engine-rest/job/{id}/retries"), json!({"retries": 2})).await.ok(204);
    assert_eq!(s.get("/engine-rest/incident/count").await.ok(200)["count"], 0);
    assert_eq!(s.get(&format!("/engine-rest/job/{id}")).await.ok(200)["retries"], 2);
}

/// Deployments listed, read and deleted: refused while an instance runs unless cascade; the
/// key's version before takes its start events back.
async fn deployments_are_listed_and_deleted(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let model = |n: &str| {
        format!(
            r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="go"/>
  <process id="starts" isExecutable="true" name="{n}">
    <startEvent id="s"><messageEventDefinition messageRef="m"/></startEvent>
    <sequenceFlow id="a" sourceRef="s" targetRef="work"/><userTask id="work"/>
    <sequenceFlow id="b" sourceRef="work" targetRef="e"/><endEvent id="e"/>
  </process>
</definitions>"#
        )
    };
    let v1 = s.deployed("starts.bpmn", &model("one")).await["id"].as_str().unwrap().to_string();
    let v2 = s.deployed("starts.bpmn", &model("two")).await["id"].as_str().unwrap().to_string();
    assert_ne!(v1, v2);
    let all = s.get("/engine-rest/deployment?sortBy=deploymentTime&sortOrder=asc").await.ok(200).clone();
    let ids: Vec<&str> = all.as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![v1.as_str(), v2.as_str()]);
    assert_eq!(s.get("/engine-rest/deployment/count").await.ok(200)["count"], 2);
    assert_eq!(s.get(&format!("/engine-rest/deployment/{v2}")).await.ok(200)["id"], v2.as_str());
    assert_eq!(s.get(&format!("/engine-rest/deployment?id={v1}")).await.ok(200).as_array().unwrap().len(), 1);
    // The message starts version 2; its instance holds the deployment until cascade.
    let r = s.post("/engine-rest/message", json!({"messageName": "go", "resultEnabled": true})).await.ok(200).clone();
    let pi = r[0]["processInstance"]["id"].as_str().unwrap().to_string();
    assert!(r[0]["processInstance"]["definitionId"].as_str().unwrap().contains(":2:"), "{r}");
    camunda_error(&s.delete(&format!("/engine-rest/deployment/{v2}")).await, 400, "BadUserRequestException", "running");
    s.delete(&format!("/engine-rest/deployment/{v2}?cascade=true")).await.ok(204);
    camunda_error(&s.get(&format!("/engine-rest/deployment/{v2}")).await, 404, "InvalidRequestException", &v2);
    let h = s.get(&format!("/engine-rest/history/process-instance?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(h, json!([]), "cascade takes the instances' history too, as in Camunda");
    assert_eq!(s.get("/engine-rest/process-definition/key/starts").await.ok(200)["version"], 1);
    // Version 1 starts by the message again.
    let r = s.post("/engine-rest/message", json!({"messageName": "go", "resultEnabled": true})).await.ok(200).clone();
    assert!(r[0]["processInstance"]["definitionId"].as_str().unwrap().contains(":1:"), "{r}");
    camunda_error(&s.delete("/engine-rest/deployment/nope").await, 404, "InvalidRequestException", "nope");
}

/// The token guards `/engine-rest` as every route, answering in Camunda's shape.
async fn the_token_guards_the_facade(backend: Backend) {
    use tower::ServiceExt;
    let Some(s) = server(backend).await else { return };
    let router = kairos_server::router_with_token(s.engine.clone(), "s3cret-token-0123456789");
    let call = |auth: Option<&'static str>| {
        let mut b = axum::http::Request::builder().uri("/engine-rest/external-task/count");
        if let Some(a) = auth {
            b = b.header("Authorization", a);
        }
        router.clone().oneshot(b.body(axum::body::Body::empty()).unwrap())
    };
    let res = call(None).await.unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = serde_json::from_slice(&axum::body::to_bytes(res.into_body(), 10_000).await.unwrap()).unwrap();
    assert_eq!(body["type"], "AuthenticationException", "{body}");
    let res = call(Some("Bearer s3cret-token-0123456789")).await.unwrap();
    assert_eq!(res.status(), 200);
}

/// A receive task moved on through `/execution/{id}/signal`, found by `/execution`; escalations
/// and errors thrown from a task through `/task/{id}/bpmnEscalation` and `/bpmnError`.
async fn executions_signal_and_tasks_throw(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let xml = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <escalation id="late" escalationCode="LATE"/>
  <process id="parcel" isExecutable="true">
    <startEvent id="s"/><sequenceFlow id="a" sourceRef="s" targetRef="arrive"/>
    <receiveTask id="arrive"/><sequenceFlow id="b" sourceRef="arrive" targetRef="check"/>
    <userTask id="check"/><sequenceFlow id="c" sourceRef="check" targetRef="e"/><endEvent id="e"/>
    <boundaryEvent id="lateB" attachedToRef="check" cancelActivity="false"><escalationEventDefinition escalationRef="late"/></boundaryEvent>
    <sequenceFlow id="d" sourceRef="lateB" targetRef="chase"/><userTask id="chase"/>
    <sequenceFlow id="f" sourceRef="chase" targetRef="e2"/><endEvent id="e2"/>
    <boundaryEvent id="damaged" attachedToRef="check">
      <errorEventDefinition errorRef="DAMAGED" camunda:errorMessageVariable="why"/>
    </boundaryEvent>
    <sequenceFlow id="g" sourceRef="damaged" targetRef="e3"/><endEvent id="e3"/>
  </process>
</definitions>"#;
    s.deployed("parcel.bpmn", xml).await;
    let pi = s.post("/engine-rest/process-definition/key/parcel/start", json!({})).await.ok(200)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let found =
        s.get(&format!("/engine-rest/execution?processInstanceId={pi}&activityId=arrive")).await.ok(200).clone();
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found}");
    assert_eq!(found[0]["processInstanceId"], json!(pi));
    let exec = found[0]["id"].as_str().unwrap().to_string();
    assert_eq!(s.get(&format!("/engine-rest/execution/count?processInstanceId={pi}")).await.ok(200)["count"], 2);
    assert_eq!(s.get(&format!("/engine-rest/execution/{exec}")).await.ok(200)["id"], json!(exec));
    camunda_error(&s.get("/engine-rest/execution/nope").await, 404, "InvalidRequestException", "nope");
    camunda_error(&s.get("/engine-rest/execution?activity=arrive").await, 400, "InvalidRequestException", "activity");
    let r = s.post("/engine-rest/execution/nope/signal", json!({})).await;
    camunda_error(&r, 404, "InvalidRequestException", "nope");
    s.post(&format!("/engine-rest/execution/{exec}/signal"), json!({"variables": {"weight": {"value": 3}}}))
        .await
        .ok(204);
    let r = s.post(&format!("/engine-rest/execution/{pi}/signal"), json!({})).await;
    assert_eq!(r.status, 400, "not waiting in a receive task: {}", r.text);
    let tasks = s.get(&format!("/engine-rest/task?processInstanceId={pi}")).await.ok(200).clone();
    let check = tasks[0]["id"].as_str().unwrap().to_string();
    let r = s.post(&format!("/engine-rest/task/{check}/bpmnEscalation"), json!({})).await;
    camunda_error(&r, 400, "InvalidRequestException", "escalationCode");
    let r = s.post(&format!("/engine-rest/task/{check}/bpmnEscalation"), json!({"escalationCode": "NOBODY"})).await;
    camunda_error(&r, 400, "InvalidRequestException", "not caught");
    s.post(&format!("/engine-rest/task/{check}/bpmnEscalation"), json!({"escalationCode": "LATE"})).await.ok(204);
    assert_eq!(s.get(&format!("/engine-rest/task/count?processInstanceId={pi}")).await.ok(200)["count"], 2);
    let r = s.post("/engine-rest/task/nope/bpmnError", json!({"errorCode": "DAMAGED"})).await;
    camunda_error(&r, 404, "InvalidRequestException", "nope");
    s.post(
        &format!("/engine-rest/task/{check}/bpmnError"),
        json!({"errorCode": "DAMAGED", "errorMessage": "crushed", "variables": {"photo": {"value": "p.jpg"}}}),
    )
    .await
    .ok(204);
    let h = s.get(&format!("/engine-rest/history/variable-instance?processInstanceId={pi}&variableName=why")).await;
    assert_eq!(h.ok(200)[0]["value"], "crushed", "{}", h.text);
}

/// A process started by the condition `${name > limit}` over variable `name`.
fn conditional_start(key: &str, name: &str, limit: i64) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="{key}" isExecutable="true">
    <startEvent id="when"><conditionalEventDefinition camunda:variableName="{name}"><condition>${{{name} > {limit}}}</condition></conditionalEventDefinition></startEvent>
    <sequenceFlow id="a" sourceRef="when" targetRef="act"/>
    <userTask id="act"/>
  </process>
</definitions>"#
    )
}

async fn conditions_start_the_processes_whose_start_condition_holds(backend: Backend) {
    let Some(s) = server(backend).await else { return };
    let none = s.post("/engine-rest/condition", json!({"variables": {"temperature": {"value": 35}}})).await;
    camunda_error(&none, 400, "InvalidRequestException", "conditional start event");
    s.deployed("hot.bpmn", &conditional_start("tooHot", "temperature", 30)).await;
    s.deployed("pressure.bpmn", &conditional_start("highPressure", "pressure", 2)).await;
    let evaluate = |vars: Value| s.post("/engine-rest/condition", json!({"variables": vars, "businessKey": "room-7"}));
    let started = evaluate(json!({"temperature": {"value": 35, "type": "Integer"}})).await.ok(200).clone();
    let started = started.as_array().unwrap();
    assert_eq!(started.len(), 1, "{started:?}");
    assert!(started[0]["definitionId"].as_str().unwrap().starts_with("tooHot"), "{started:?}");
    assert_eq!(started[0]["businessKey"], "room-7");
    let pi = started[0]["id"].as_str().unwrap();
    let tasks = s.get(&format!("/engine-rest/task?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(tasks[0]["taskDefinitionKey"], "act");
    // Both hold; neither holds (a condition over a variable not given is false, not an error).
    let both = evaluate(json!({"temperature": {"value": 40}, "pressure": {"value": 3}})).await.ok(200).clone();
    assert_eq!(both.as_array().unwrap().len(), 2, "{both}");
    assert_eq!(evaluate(json!({"temperature": {"value": 20}})).await.ok(200).clone(), json!([]));
    assert_eq!(evaluate(json!({"humidity": {"value": 99}})).await.ok(200).clone(), json!([]));
    assert_eq!(s.get("/engine-rest/process-instance/count").await.ok(200)["count"], 3);
    // Bad requests change nothing.
    let r = s.post("/engine-rest/condition", json!({"processDefinitionId": "nope", "variables": {}})).await;
    assert_eq!(r.status, 404, "{}", r.text);
    let r = s
        .post("/engine-rest/condition", json!({"variables": {"temperature": {"value": "x", "type": "Integer"}}}))
        .await;
    camunda_error(&r, 400, "InvalidRequestException", "temperature");
    let r = s.post("/engine-rest/condition", json!({"tenantId": "acme", "variables": {}})).await;
    camunda_error(&r, 400, "InvalidRequestException", "tenantId");
    assert_eq!(s.get("/engine-rest/process-instance/count").await.ok(200)["count"], 3);
}

on_both_backends!(
    conditions_start_the_processes_whose_start_condition_holds,
    executions_signal_and_tasks_throw,
    errors_are_camundas_and_name_the_field,
    typed_variables_round_trip,
    long_polling_wakes_on_new_work_and_times_out_empty,
    a_fetch_whose_caller_left_locks_nothing,
    external_tasks_follow_camundas_rules,
    one_engine_under_both_faces,
    deployments_definitions_messages_and_signals,
    the_token_guards_the_facade,
    jobs_list_set_retries_and_execute,
    deployments_are_listed_and_deleted,
    a_shutdown_answers_waiting_fetches,
);
