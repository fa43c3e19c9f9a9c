//! A process over real HTTP (API.md "Processes"), on SQLite and on PostgreSQL: from deployment
//! to history, task-local and global variables, bad instance and task requests refused. The
//! executor is off: these processes run on requests alone.

mod processes_support;

use kairos::store::SqlValue;
use processes_support::{Backend, ORDER, as_map, server};
use serde_json::{Value, json};

async fn a_process_runs_over_http_from_deployment_to_history(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let d = srv.deployed("orders", ORDER).await;
    assert_eq!(d["name"], "orders");
    assert!(d["id"].is_string() && d["deploymentTime"].as_str().unwrap().ends_with('Z'), "{d}");
    let def = &d["processDefinitions"][0];
    assert_eq!((def["key"].as_str(), def["version"].as_i64()), (Some("order"), Some(1)), "{d}");
    let def_id = def["id"].as_str().unwrap().to_string();

    // The definition, its XML, the list.
    let r = srv.get(&format!("/repository/process-definitions/{def_id}")).await;
    assert_eq!(r.ok(200)["key"], "order");
    let r = srv.get(&format!("/repository/process-definitions/{def_id}/resourcedata")).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("application/xml"), "{}", r.content_type);
    assert_eq!(r.text, ORDER);
    let v2 = ORDER.replace("name=\"Order\"", "name=\"Order v2\"");
    assert_eq!(srv.deployed("orders", &v2).await["processDefinitions"][0]["version"], 2);
    let r = srv.get("/repository/process-definitions?key=order").await;
    assert_eq!(r.ok(200)["total"], 2);
    let r = srv.get("/repository/process-definitions?key=order&latest=true").await;
    let latest = r.ok(200);
    assert_eq!((latest["total"].as_u64(), latest["data"][0]["version"].as_i64()), (Some(1), Some(2)), "{latest}");

    // Start by key with a business key: the latest version, waiting in "fill".
    let r = srv
        .post(
            "/runtime/process-instances",
            json!({"processDefinitionKey": "order", "businessKey": "ORDER-1", "variables": {"amount": 120}, "requestId": "req-1"}),
        )
        .await;
    let inst = r.ok(201).clone();
    let pi = inst["id"].as_str().unwrap().to_string();
    assert_eq!(inst["businessKey"], "ORDER-1");
    assert_eq!(inst["processDefinitionKey"], "order");
    assert_eq!(inst["processDefinitionId"], latest["data"][0]["id"]);
    assert_eq!((inst["ended"].as_bool(), inst["suspended"].as_bool()), (Some(false), Some(false)), "{inst}");
    assert_eq!(srv.get(&format!("/runtime/process-instances/{pi}")).await.ok(200)["id"], pi.as_str());
    let r = srv.get("/runtime/process-instances?businessKey=ORDER-1&processDefinitionKey=order").await;
    assert_eq!(r.ok(200)["total"], 1);
    assert_eq!(as_map(srv.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200))["amount"], 120);

    // The task, found by candidate group; claimed; completed with variables.
    let r = srv.get("/runtime/tasks?candidateGroup=clerks").await;
    let tasks = r.ok(200);
    assert_eq!(tasks["total"], 1, "{tasks}");
    let fill = tasks["data"][0].clone();
    for key in ["id", "name", "taskDefinitionKey", "processInstanceId", "executionId", "assignee", "createTime"] {
        assert!(fill.get(key).is_some(), "{key} in {fill}");
    }
    assert_eq!(
        (fill["taskDefinitionKey"].as_str(), fill["processInstanceId"].as_str()),
        (Some("fill"), Some(pi.as_str()))
    );
    let fill_id = fill["id"].as_str().unwrap();
    let r = srv.post(&format!("/runtime/tasks/{fill_id}"), json!({"action": "claim", "assignee": "kermit"})).await;
    assert_eq!(r.ok(200)["assignee"], "kermit");
    assert_eq!(srv.get("/runtime/tasks?assignee=kermit").await.ok(200)["total"], 1);
    let execs = srv.get(&format!("/runtime/executions?processInstanceId={pi}")).await;
    let execs = execs.ok(200)["data"].as_array().unwrap().clone();
    assert_eq!(execs.len(), 2, "the root and one child at the task: {execs:?}");
    let child = execs.iter().find(|e| e["id"] != pi.as_str()).unwrap();
    assert_eq!((child["activityId"].as_str(), child["parentId"].as_str()), (Some("fill"), Some(pi.as_str())));
    for key in
        ["processInstanceId", "superExecutionId", "isActive", "isConcurrent", "isScope", "isEventScope", "suspended"]
    {
        assert!(child.get(key).is_some(), "{key} in {child}");
    }

    let r = srv
        .post(&format!("/runtime/tasks/{fill_id}"), json!({"action": "complete", "variables": {"approver": "gonzo"}}))
        .await;
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.text);
    let approve = srv.tasks_of(&pi).await;
    assert_eq!(
        (approve[0]["taskDefinitionKey"].as_str(), approve[0]["assignee"].as_str()),
        (Some("approve"), Some("gonzo"))
    );
    let approve_id = approve[0]["id"].as_str().unwrap();
    assert_eq!(srv.get(&format!("/runtime/tasks/{approve_id}")).await.ok(200)["name"], "Approve");
    let r = srv.post(&format!("/runtime/tasks/{approve_id}"), json!({"action": "complete"})).await;
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.text);

    // Ended: gone from the runtime, in the history with its activities in order.
    let r = srv.get(&format!("/runtime/process-instances/{pi}")).await;
    assert!(r.refused(404, None).contains("historic-process-instances"), "{}", r.text);
    assert_eq!(srv.get("/runtime/process-instances?businessKey=ORDER-1").await.ok(200)["total"], 0);
    let r = srv.get(&format!("/history/historic-process-instances?processInstanceId={pi}")).await;
    let h = r.ok(200)["data"][0].clone();
    assert_eq!(h["ended"], true, "{h}");
    assert!(h["startTime"].is_string() && h["endTime"].is_string(), "{h}");
    assert!(h.get("deleteReason").is_some(), "{h}");
    let r = srv.get("/history/historic-process-instances?processDefinitionKey=order&finished=true").await;
    assert_eq!(r.ok(200)["total"], 1);
    assert_eq!(srv.get("/history/historic-process-instances?finished=false").await.ok(200)["total"], 0);

    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let acts = r.ok(200)["data"].as_array().unwrap().clone();
    let ids: Vec<&str> = acts.iter().map(|a| a["activityId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["start", "fill", "check", "approve", "end"]);
    let types: Vec<&str> = acts.iter().map(|a| a["activityType"].as_str().unwrap()).collect();
    assert_eq!(types, ["startEvent", "userTask", "serviceTask", "userTask", "endEvent"]);
    for a in &acts {
        assert!(a["startTime"].is_string() && a["endTime"].is_string() && a["executionId"].is_string(), "{a}");
    }
    assert_eq!(acts[1]["assignee"], "kermit");

    let r = srv.get(&format!("/history/historic-task-instances?processInstanceId={pi}")).await;
    let ht = r.ok(200);
    assert_eq!(ht["total"], 2, "{ht}");
    let keys: Vec<&str> =
        ht["data"].as_array().unwrap().iter().map(|t| t["taskDefinitionKey"].as_str().unwrap()).collect();
    assert_eq!(keys, ["fill", "approve"]);
    let t = &ht["data"][0];
    assert_eq!((t["assignee"].as_str(), t["processInstanceId"].as_str()), (Some("kermit"), Some(pi.as_str())));
    assert!(t["startTime"].is_string() && t["endTime"].is_string() && t["executionId"].is_string(), "{t}");
    assert_eq!(srv.get("/history/historic-task-instances?finished=false").await.ok(200)["total"], 0);
    let page = srv.get("/history/historic-task-instances?size=1&start=1").await;
    let page = page.ok(200);
    assert_eq!(
        (page["total"].as_u64(), page["size"].as_u64(), page["data"][0]["taskDefinitionKey"].as_str()),
        (Some(2), Some(1), Some("approve"))
    );
}

async fn bad_instance_and_task_requests_are_refused_naming_the_field_and_write_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("orders", ORDER).await;
    let pi = srv.started("order", "ORDER-9", json!({"amount": 1})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&pi).await[0]["id"].as_str().unwrap().to_string();
    let before = srv.written().await;
    let start = "/runtime/process-instances";

    let msg = srv
        .post(start, json!({"processDefinitionKey": "order", "variables": [1, 2]}))
        .await
        .refused(400, Some("variables"))
        .to_string();
    assert!(msg.contains("variables[0]"), "{msg}");
    srv.post(
        start,
        json!({"processDefinitionKey": "order", "variables": [{"name": "amount", "type": "integer", "value": 1.5}]}),
    )
    .await
    .refused(400, Some("variables"));
    srv.post(start, json!({"processDefinitionKey": "order", "variables": "amount=1"}))
        .await
        .refused(400, Some("variables"));
    srv.post(start, json!({"processDefinitionKey": "order", "variables": {"": 1}}))
        .await
        .refused(400, Some("variables"));
    let msg =
        srv.post(start, json!({"processDefinitionKey": "order", "colour": "red"})).await.refused(400, None).to_string();
    assert!(msg.contains("colour"), "{msg}");
    srv.post(start, json!({"businessKey": "B"})).await.refused(400, Some("processDefinitionKey"));
    srv.post(start, json!({"processDefinitionKey": ""})).await.refused(400, Some("processDefinitionKey"));
    srv.post(start, json!({"processDefinitionKey": "order", "processDefinitionId": "x"}))
        .await
        .refused(400, Some("processDefinitionId"));
    srv.post(start, json!({"processDefinitionKey": "order", "businessKey": "b".repeat(256)}))
        .await
        .refused(400, Some("businessKey"));
    srv.post(start, json!({"processDefinitionKey": "order", "businessKey": 7})).await.refused(400, Some("businessKey"));
    srv.post(start, json!({"processDefinitionKey": "nope"})).await.refused(404, Some("processDefinitionKey"));
    srv.request("POST", start, Some("application/json"), b"{\"processDefinitionKey\": ").await.refused(400, None);

    let t = format!("/runtime/tasks/{task}");
    srv.post("/runtime/tasks/no-such-task", json!({"action": "complete"})).await.refused(404, None);
    srv.post(&t, json!({"action": "claim", "assignee": ""})).await.refused(400, Some("assignee"));
    srv.post(&t, json!({"action": "finish"})).await.refused(400, Some("action"));
    srv.post(&t, json!({})).await.refused(400, Some("action"));
    srv.post(&t, json!({"action": "complete", "variables": 5})).await.refused(400, Some("variables"));
    srv.post(&t, json!({"action": "complete", "outcome": "ok"})).await.refused(400, None);
    srv.get("/runtime/tasks/no-such-task").await.refused(404, None);
    srv.get("/runtime/tasks?ownr=x").await.refused(400, None);
    srv.get("/runtime/tasks?dueBefore=soon").await.refused(400, Some("dueBefore"));
    srv.get("/runtime/tasks?size=5000").await.refused(400, Some("size"));

    let p = format!("/runtime/process-instances/{pi}");
    srv.put(&p, json!({"action": "freeze"})).await.refused(400, Some("action"));
    srv.put(&p, json!({"businessKey": "k".repeat(256)})).await.refused(400, Some("businessKey"));
    srv.put(&p, json!({"businessKey": "NEW", "action": "suspend"})).await.refused(400, Some("businessKey"));
    srv.put(&format!("{p}/variables"), json!({"": 1})).await.refused(400, Some("variables"));
    srv.delete(&format!("{p}?deleteReason={}", "r".repeat(4001))).await.refused(400, Some("deleteReason"));
    srv.get("/runtime/executions").await.refused(400, Some("processInstanceId"));
    srv.get("/history/historic-activity-instances").await.refused(400, Some("processInstanceId"));
    srv.get("/history/historic-process-instances?finished=maybe").await.refused(400, Some("finished"));
    srv.post("/runtime/messages", json!({"businessKey": "ORDER-9"})).await.refused(400, Some("messageName"));
    srv.post("/runtime/messages", json!({"messageName": "nobody-waits"})).await.refused(404, None);
    srv.post("/runtime/signals", json!({"signalName": "s", "variables": true})).await.refused(400, Some("variables"));
    srv.get("/runtime/process-instances/nope").await.refused(404, None);
    srv.delete("/runtime/process-instances/nope").await.refused(404, None);
    assert_eq!(srv.written().await, before, "nothing written");
    assert_eq!(as_map(srv.get(&format!("{p}/variables")).await.ok(200)), json!({"amount": 1}));
}

/// Task-local variables (SPEC P6) over HTTP: `scope=local` ones belong to the task (shadowing
/// a global of the same name), are not the instance's, and go when it completes, kept in
/// history with the task's id; `scope=global` ones land on the instance.
async fn task_variables_are_local_or_global(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("orders", ORDER).await;
    let pi = srv.started("order", "ORDER-9", json!({"amount": 120})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&pi).await[0]["id"].as_str().unwrap().to_string();
    let vars = format!("/runtime/tasks/{task}/variables");
    let r = srv.put(&format!("{vars}?scope=local"), json!({"note": "draft", "amount": 1})).await;
    assert_eq!(as_map(r.ok(200)), json!({"amount": 1, "note": "draft"}));
    assert_eq!(as_map(srv.get(&format!("{vars}?scope=local")).await.ok(200)), json!({"amount": 1, "note": "draft"}));
    assert_eq!(as_map(srv.get(&format!("{vars}?scope=global")).await.ok(200)), json!({"amount": 120}));
    // Without a scope: the local amount hides the global one, each item says its scope.
    let seen = srv.get(&vars).await.ok(200).clone();
    assert_eq!(
        seen,
        json!([
            {"name": "amount", "type": "integer", "value": 1, "scope": "local"},
            {"name": "note", "type": "string", "value": "draft", "scope": "local"}
        ])
    );
    srv.put(&vars, json!({"approvedBy": "gonzo"})).await.ok(200);
    // Flowable's list: local unless the item says global.
    srv.post(&vars, json!([{"name": "checkedBy", "type": "string", "value": "kermit", "scope": "global"}]))
        .await
        .ok(201);
    let instance = as_map(srv.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200));
    assert_eq!(
        instance,
        json!({"amount": 120, "approvedBy": "gonzo", "checkedBy": "kermit"}),
        "locals are not the instance's"
    );
    srv.get(&format!("{vars}?scope=nearby")).await.refused(400, Some("scope"));
    srv.put(&format!("{vars}?scope=local"), json!([1])).await.refused(400, None);

    let done = json!({"action": "complete", "variables": {"approver": "gonzo"}});
    let r = srv.post(&format!("/runtime/tasks/{task}"), done).await;
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.text);
    let store = srv.engine.store();
    let left = store
        .sql_query("SELECT COUNT(*) FROM ACT_RU_VARIABLE WHERE TASK_ID_ = ?", &[SqlValue::Text(task.clone())])
        .await
        .unwrap();
    assert_eq!(left[0][0].as_i64(), Some(0), "a task's locals go with it");
    let kept = store
        .sql_query("SELECT NAME_ FROM ACT_HI_VARINST WHERE TASK_ID_ = ? ORDER BY NAME_", &[SqlValue::Text(task)])
        .await
        .unwrap();
    let kept: Vec<&str> = kept.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(kept, ["amount", "note"], "history keeps them with the task's id");
}

/// Flowable's task calls: `PUT /runtime/tasks/{id}` changes what it names and nothing else,
/// identity links add and remove candidates, assignee and owner, a claim without an assignee
/// unclaims, the list filters by them; bad values are refused naming the field.
async fn tasks_are_updated_and_linked_as_flowable_does(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("orders", ORDER).await;
    let pi = srv.started("order", "ORDER-T", json!({"amount": 5})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&pi).await[0]["id"].as_str().unwrap().to_string();
    let url = format!("/runtime/tasks/{task}");

    let t = srv
        .put(&url, json!({"name": "Fill in the form", "priority": 80, "owner": "fozzie", "dueDate": "2030-01-02T03:04:05Z", "description": "by Friday"}))
        .await
        .ok(200)
        .clone();
    assert_eq!(t["name"], json!("Fill in the form"));
    assert_eq!(t["priority"], json!(80));
    assert_eq!(t["owner"], json!("fozzie"));
    assert_eq!(t["description"], json!("by Friday"));
    assert_eq!(t["dueDate"].as_str().map(|d| d.starts_with("2030-01-02T03:04:05")), Some(true), "{t}");
    assert_eq!(t["assignee"], json!(null));
    // Only what is named changes; null clears.
    let t = srv.put(&url, json!({"dueDate": null})).await.ok(200).clone();
    assert_eq!(
        (t["dueDate"].clone(), t["priority"].clone(), t["owner"].clone()),
        (json!(null), json!(80), json!("fozzie"))
    );
    srv.put(&url, json!({"priority": "high"})).await.refused(400, Some("priority"));
    srv.put(&url, json!({"colour": "red"})).await.refused(400, Some("body"));
    srv.put(&url, json!({"delegationState": "pending"})).await.refused(400, Some("body"));
    srv.put(&url, json!({"dueDate": "friday"})).await.refused(400, Some("dueDate"));

    // Identity links: the model's candidate group, then a user added and removed.
    let links = srv.get(&format!("{url}/identitylinks")).await.ok(200).clone();
    assert!(
        links.as_array().unwrap().iter().any(|l| l["group"] == json!("clerks") && l["type"] == json!("candidate")),
        "{links}"
    );
    assert!(
        links.as_array().unwrap().iter().any(|l| l["user"] == json!("fozzie") && l["type"] == json!("owner")),
        "{links}"
    );
    srv.post(&format!("{url}/identitylinks"), json!({"user": "gonzo", "type": "candidate"})).await.ok(201);
    let found = srv.get("/runtime/tasks?candidateUser=gonzo").await.ok(200).clone();
    assert_eq!(found["total"], json!(1), "{found}");
    let users = srv.get(&format!("{url}/identitylinks/users")).await.ok(200).clone();
    assert_eq!(users.as_array().unwrap().len(), 2, "owner and candidate gonzo: {users}");
    srv.delete(&format!("{url}/identitylinks/users/gonzo/candidate")).await.ok(204);
    assert_eq!(srv.get("/runtime/tasks?candidateUser=gonzo").await.ok(200)["total"], json!(0));
    srv.delete(&format!("{url}/identitylinks/users/gonzo/candidate")).await.refused(404, None);
    srv.post(&format!("{url}/identitylinks"), json!({"user": "gonzo", "type": "participant"}))
        .await
        .refused(400, Some("type"));
    srv.post(&format!("{url}/identitylinks"), json!({"group": "clerks", "type": "assignee"}))
        .await
        .refused(400, Some("group"));

    // Claim, then a claim without an assignee unclaims (Flowable).
    srv.post(&url, json!({"action": "claim", "assignee": "kermit"})).await.ok(200);
    assert_eq!(srv.get("/runtime/tasks?assignee=kermit").await.ok(200)["total"], json!(1));
    assert_eq!(srv.get("/runtime/tasks?unassigned=true").await.ok(200)["total"], json!(0));
    let t = srv.post(&url, json!({"action": "claim"})).await.ok(200).clone();
    assert_eq!(t["assignee"], json!(null), "{t}");
    assert_eq!(srv.get("/runtime/tasks?unassigned=true&nameLike=Fill%25").await.ok(200)["total"], json!(1));
    assert_eq!(srv.get("/runtime/tasks?minimumPriority=81").await.ok(200)["total"], json!(0));
    srv.get("/runtime/tasks?minimumPriority=high").await.refused(400, Some("minimumPriority"));
    // Flowable's POST queries: the same filters in a body, paging in the body or the URL.
    let found = srv
        .post("/query/tasks?size=5", json!({"nameLike": "Fill%", "unassigned": true, "minimumPriority": 80}))
        .await
        .ok(200)
        .clone();
    assert_eq!(found["total"], json!(1), "{found}");
    let found =
        srv.post("/query/process-instances", json!({"processDefinitionKey": "order", "size": 1})).await.ok(200).clone();
    assert_eq!((found["total"].clone(), found["size"].clone()), (json!(1), json!(1)), "{found}");
    srv.post("/query/tasks", json!({"variables": [{"name": "amount", "value": 5, "operation": "equals"}]}))
        .await
        .refused(400, Some("body"));
    srv.post("/query/tasks", json!({"colour": "red"})).await.refused(400, Some("body"));
    srv.post("/query/tasks?size=5", json!({"size": 5})).await.refused(400, Some("body"));
    assert_eq!(
        srv.post("/query/historic-task-instances", json!({"processInstanceId": pi})).await.ok(200)["total"],
        json!(1)
    );
    // Comments on the task, one shown on the instance too; they stay after the task ends.
    let c = srv
        .post(&format!("{url}/comments"), json!({"message": "waiting for the invoice", "author": "fozzie"}))
        .await
        .ok(201)
        .clone();
    assert_eq!((c["author"].clone(), c["taskId"].as_str()), (json!("fozzie"), Some(task.as_str())), "{c}");
    assert_eq!(c["processInstanceId"], json!(null), "a task-only comment");
    srv.post(&format!("{url}/comments"), json!({"message": "seen", "saveProcessInstanceId": true})).await.ok(201);
    srv.post(&format!("{url}/comments"), json!({"message": "  "})).await.refused(400, Some("message"));
    srv.post(&format!("{url}/comments"), json!({"message": "x", "type": "event"})).await.refused(400, Some("type"));
    assert_eq!(srv.get(&format!("{url}/comments")).await.ok(200).as_array().unwrap().len(), 2);
    let on_instance = srv.get(&format!("/history/historic-process-instances/{pi}/comments")).await.ok(200).clone();
    assert_eq!(on_instance.as_array().unwrap().len(), 1, "{on_instance}");
    assert_eq!(on_instance[0]["message"], json!("seen"));
    let cid = c["id"].as_str().unwrap();
    assert_eq!(srv.get(&format!("{url}/comments/{cid}")).await.ok(200)["message"], json!("waiting for the invoice"));
    srv.delete(&format!("{url}/comments/{cid}")).await.ok(204);
    srv.delete(&format!("{url}/comments/{cid}")).await.refused(404, None);
    srv.post(&format!("/history/historic-process-instances/{pi}/comments"), json!({"message": "done soon"}))
        .await
        .ok(201);
    srv.get("/history/historic-process-instances/nope/comments").await.refused(404, None);
    // The changes are the task's history too.
    let hist = srv.get(&format!("/history/historic-task-instances?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(hist["data"][0]["name"], json!("Fill in the form"), "{hist}");
}

/// Flowable's history calls: one historic instance by id, and each variable's last value
/// (ACT_HI_VARINST) of a running and of a deleted instance; jobs by Flowable's type filters.
async fn history_keeps_instances_and_variables_as_flowable_shows_them(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("orders", ORDER).await;
    let pi = srv.started("order", "ORDER-H", json!({"amount": 7, "customer": {"id": 3}})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    srv.put(&format!("/runtime/process-instances/{pi}/variables"), json!({"amount": 8})).await.ok(200);
    let one = srv.get(&format!("/history/historic-process-instances/{pi}")).await.ok(200).clone();
    assert_eq!((one["id"].as_str(), one["ended"].as_bool()), (Some(pi.as_str()), Some(false)), "{one}");
    srv.delete(&format!("/runtime/process-instances/{pi}?deleteReason=cancelled")).await.ok(204);
    let one = srv.get(&format!("/history/historic-process-instances/{pi}")).await.ok(200).clone();
    assert_eq!(one["ended"], json!(true), "{one}");
    srv.get("/history/historic-process-instances/nope").await.refused(404, None);

    let vars = srv.get(&format!("/history/historic-variable-instances?processInstanceId={pi}")).await.ok(200).clone();
    assert_eq!(vars["total"], json!(2), "{vars}");
    let by_name: Vec<(&str, &Value)> = vars["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["variable"]["name"].as_str().unwrap(), &v["variable"]["value"]))
        .collect();
    assert_eq!(by_name, [("amount", &json!(8)), ("customer", &json!({"id": 3}))], "the last value, after the delete");
    let amount = srv
        .get(&format!("/history/historic-variable-instances?processInstanceId={pi}&variableName=amount"))
        .await
        .ok(200)
        .clone();
    assert_eq!(amount["total"], json!(1));
    srv.get("/history/historic-variable-instances?excludeTaskVariables=maybe")
        .await
        .refused(400, Some("excludeTaskVariables"));
    srv.get("/history/historic-variable-instances?variable=amount").await.refused(400, None);

    assert_eq!(srv.get("/management/jobs?timersOnly=true").await.ok(200)["total"], json!(0));
    srv.get("/management/jobs?timersOnly=true&type=message").await.refused(400, Some("timersOnly"));
}

const WAITS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="paid"/>
  <process id="waits" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="wait"/>
    <receiveTask id="wait"/>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="payment"/>
    <intermediateCatchEvent id="payment"><messageEventDefinition messageRef="m"/></intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="payment" targetRef="check"/>
    <userTask id="check"/>
    <sequenceFlow id="f4" sourceRef="check" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Flowable's `PUT /runtime/executions/{id}`: a trigger moves a token out of a receive task,
/// messageEventReceived delivers to the execution's instance; an execution not in a receive
/// task is not triggered (409), unknown actions and executions are refused.
async fn executions_are_triggered_and_messaged_as_flowable_does(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("waits", WAITS).await;
    let pi = srv.started("waits", "W-1", json!({})).await["id"].as_str().unwrap().to_string();
    let execs = srv.get(&format!("/runtime/executions?processInstanceId={pi}")).await.ok(200).clone();
    let waiting = execs["data"].as_array().unwrap().iter().find(|e| e["activityId"] == json!("wait")).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let url = format!("/runtime/executions/{waiting}");
    assert_eq!(srv.get(&url).await.ok(200)["activityId"], json!("wait"));
    srv.put(&url, json!({"action": "messageEventReceived"})).await.refused(400, Some("messageName"));
    srv.put(&url, json!({"action": "jump"})).await.refused(400, Some("action"));
    let r = srv
        .put(&url, json!({"action": "trigger", "variables": [{"name": "seen", "type": "boolean", "value": true}]}))
        .await;
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.text);
    assert_eq!(
        as_map(srv.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200))["seen"],
        json!(true)
    );
    let execs = srv.get(&format!("/runtime/executions?processInstanceId={pi}")).await.ok(200).clone();
    let at_payment =
        execs["data"].as_array().unwrap().iter().find(|e| e["activityId"] == json!("payment")).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
    let url = format!("/runtime/executions/{at_payment}");
    srv.put(&url, json!({"action": "trigger"})).await.refused(409, None);
    let r = srv.put(&url, json!({"action": "messageEventReceived", "messageName": "paid"})).await;
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.text);
    assert_eq!(srv.tasks_of(&pi).await[0]["taskDefinitionKey"], json!("check"));
    srv.get("/runtime/executions/nope").await.refused(404, None);
    srv.put("/runtime/executions/nope", json!({"action": "trigger"})).await.refused(404, None);
}

on_both_backends!(
    executions_are_triggered_and_messaged_as_flowable_does,
    history_keeps_instances_and_variables_as_flowable_shows_them,
    tasks_are_updated_and_linked_as_flowable_does,
    task_variables_are_local_or_global,
    a_process_runs_over_http_from_deployment_to_history,
    bad_instance_and_task_requests_are_refused_naming_the_field_and_write_nothing,
);
