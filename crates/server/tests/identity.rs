//! Flowable's identity REST over real HTTP on SQLite and PostgreSQL: users, groups and
//! memberships created, read, filtered, sorted, changed and deleted in Flowable's shapes; a
//! password stored as an Argon2id hash and never answered; a candidate-group task found through
//! a user's membership (`candidateUser`, `candidateOrAssigned`, Camunda's `candidateUser`); and
//! bad requests named, answered 4xx, and changing nothing.

mod processes_support;

use processes_support::{Backend, server};
use serde_json::{Value, json};

async fn identity_rows(srv: &processes_support::Server) -> Vec<i64> {
    let mut out = Vec::new();
    for t in ["ACT_ID_USER", "ACT_ID_GROUP", "ACT_ID_MEMBERSHIP"] {
        out.push(srv.rows(t).await);
    }
    out
}

fn ids(list: &Value) -> Vec<String> {
    list["data"].as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap().to_string()).collect()
}

async fn users_groups_and_memberships_in_flowables_shapes(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let r = srv
        .post(
            "/identity/users",
            json!({"id": "kermit", "firstName": "Kermit", "lastName": "the Frog", "email": "kermit@muppets.test",
                   "password": "it is not easy being green", "url": "ignored", "pictureUrl": null}),
        )
        .await;
    let kermit = r.ok(201).clone();
    assert_eq!(kermit["id"], json!("kermit"));
    assert_eq!(kermit["url"], json!("/identity/users/kermit"));
    assert_eq!(kermit["email"], json!("kermit@muppets.test"));
    assert!(kermit.get("password").is_none(), "a password never comes back: {kermit}");
    assert!(!r.text.contains("green"));
    srv.post("/identity/users", json!({"id": "gonzo", "firstName": "Gonzo", "tenantId": "acme"})).await.ok(201);
    srv.post("/identity/users", json!({"id": "fozzie", "firstName": "Fozzie", "lastName": "Bear"})).await.ok(201);

    // The password is kept as an Argon2id hash, not as text.
    let stored = srv.engine.store().sql_query("SELECT PWD_ FROM ACT_ID_USER WHERE ID_ = 'kermit'", &[]).await.unwrap();
    let hash = stored[0][0].as_str().unwrap().to_string();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(!hash.contains("green"));
    let id = srv.engine.identity();
    assert_eq!(id.check_password("kermit", "it is not easy being green").await.unwrap().unwrap().id, "kermit");
    assert!(id.check_password("kermit", "it is easy").await.unwrap().is_none());
    assert!(id.check_password("gonzo", "").await.unwrap().is_none(), "no password: no login");
    assert!(id.check_password("nobody", "x").await.unwrap().is_none());

    // A taken id is a conflict and changes nothing.
    let before = identity_rows(&srv).await;
    srv.post("/identity/users", json!({"id": "kermit"})).await.refused(409, None);
    assert_eq!(identity_rows(&srv).await, before);

    // Lists: filters, like, sort, paging.
    assert_eq!(ids(srv.get("/identity/users").await.ok(200)), ["fozzie", "gonzo", "kermit"]);
    assert_eq!(ids(srv.get("/identity/users?firstNameLike=%25o%25").await.ok(200)), ["fozzie", "gonzo"]);
    assert_eq!(ids(srv.get("/identity/users?tenantId=acme").await.ok(200)), ["gonzo"]);
    let page = srv.get("/identity/users?sort=firstName&order=desc&start=1&size=1").await;
    let page = page.ok(200);
    assert_eq!(ids(page), ["gonzo"]);
    assert_eq!(
        (page["total"].clone(), page["sort"].clone(), page["order"].clone()),
        (json!(3), json!("firstName"), json!("desc"))
    );
    assert_eq!(srv.get("/identity/users/gonzo").await.ok(200)["tenantId"], json!("acme"));

    // PUT changes what it names; null clears.
    let r = srv.put("/identity/users/fozzie", json!({"lastName": null, "email": "fozzie@muppets.test"})).await;
    let fozzie = r.ok(200);
    assert_eq!((fozzie["firstName"].clone(), fozzie["lastName"].clone()), (json!("Fozzie"), Value::Null));
    assert_eq!(fozzie["email"], json!("fozzie@muppets.test"));
    srv.put("/identity/users/gonzo", json!({"password": "the great gonzo"})).await.ok(200);
    assert!(id.check_password("gonzo", "the great gonzo").await.unwrap().is_some());

    // Groups and memberships.
    let g = srv.post("/identity/groups", json!({"id": "sales", "name": "Sales", "type": "assignment"})).await;
    assert_eq!(
        g.ok(201).clone(),
        json!({"id": "sales", "url": "/identity/groups/sales", "name": "Sales", "type": "assignment"})
    );
    srv.post("/identity/groups", json!({"id": "admins", "name": "Admins", "type": "security-role"})).await.ok(201);
    let m = srv.post("/identity/groups/sales/members", json!({"userId": "kermit"})).await;
    assert_eq!(
        m.ok(201).clone(),
        json!({"userId": "kermit", "url": "/identity/groups/sales/members/kermit", "groupId": "sales"})
    );
    srv.post("/identity/groups/sales/members", json!({"userId": "gonzo"})).await.ok(201);
    srv.post("/identity/groups/admins/members", json!({"userId": "kermit"})).await.ok(201);
    srv.post("/identity/groups/sales/members", json!({"userId": "kermit"})).await.refused(409, None);
    srv.post("/identity/groups/sales/members", json!({"userId": "nobody"})).await.refused(404, None);
    srv.post("/identity/groups/nogroup/members", json!({"userId": "kermit"})).await.refused(404, None);
    assert_eq!(ids(srv.get("/identity/users?memberOfGroup=sales").await.ok(200)), ["gonzo", "kermit"]);
    assert_eq!(ids(srv.get("/identity/groups?member=kermit").await.ok(200)), ["admins", "sales"]);
    assert_eq!(ids(srv.get("/identity/groups?type=security-role").await.ok(200)), ["admins"]);
    assert_eq!(ids(srv.get("/identity/groups?nameLike=S%25").await.ok(200)), ["sales"]);
    let r = srv.put("/identity/groups/sales", json!({"name": "Sales EMEA"})).await;
    assert_eq!(r.ok(200)["type"], json!("assignment"));

    assert_eq!(srv.delete("/identity/groups/sales/members/gonzo").await.status, 204);
    srv.delete("/identity/groups/sales/members/gonzo").await.refused(404, None);
    assert_eq!(ids(srv.get("/identity/users?memberOfGroup=sales").await.ok(200)), ["kermit"]);

    // Deleting a user or a group takes its memberships with it.
    assert_eq!(srv.delete("/identity/users/kermit").await.status, 204);
    srv.get("/identity/users/kermit").await.refused(404, None);
    assert_eq!(srv.rows("ACT_ID_MEMBERSHIP").await, 0);
    srv.delete("/identity/users/kermit").await.refused(404, None);
    assert_eq!(srv.delete("/identity/groups/admins").await.status, 204);
    srv.get("/identity/groups/admins").await.refused(404, None);
}

const CANDIDATES: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="candidates" isExecutable="true">
    <startEvent id="start"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <sequenceFlow id="f1" sourceRef="fork" targetRef="bySales"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="byName"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="byOther"/>
    <userTask id="bySales" name="For sales" flowable:candidateGroups="sales"/>
    <userTask id="byName" name="For Gonzo" flowable:candidateUsers="gonzo"/>
    <userTask id="byOther" name="For managers" flowable:candidateGroups="managers"/>
  </process>
</definitions>"#;

fn names(list: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    v.sort();
    v
}

async fn a_users_candidate_tasks_include_their_groups(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    for u in ["gonzo", "piggy"] {
        srv.post("/identity/users", json!({"id": u})).await.ok(201);
    }
    srv.post("/identity/groups", json!({"id": "sales"})).await.ok(201);
    srv.post("/identity/groups/sales/members", json!({"userId": "gonzo"})).await.ok(201);
    srv.deployed("candidates.bpmn", CANDIDATES).await;
    srv.started("candidates", "c-1", json!({})).await;

    let tasks = |q: &'static str| {
        let srv = &srv;
        async move { srv.get(&format!("/runtime/tasks?{q}")).await.ok(200)["data"].as_array().unwrap().clone() }
    };
    assert_eq!(names(&tasks("candidateUser=gonzo").await), ["For Gonzo", "For sales"]);
    assert_eq!(names(&tasks("candidateUser=piggy").await), Vec::<String>::new());
    assert_eq!(names(&tasks("candidateGroup=sales").await), ["For sales"]);
    // Camunda's task query resolves the groups too.
    let camunda = srv.get("/engine-rest/task?candidateUser=gonzo").await;
    assert_eq!(names(camunda.ok(200).as_array().unwrap()), ["For Gonzo", "For sales"]);

    // Joining a group shows its tasks at once; a claimed task leaves the candidates' lists and
    // stays in the assignee's tasklist (candidateOrAssigned).
    srv.post("/identity/groups/sales/members", json!({"userId": "piggy"})).await.ok(201);
    let sales = tasks("candidateUser=piggy").await;
    assert_eq!(names(&sales), ["For sales"]);
    let id = sales[0]["id"].as_str().unwrap();
    srv.post(&format!("/runtime/tasks/{id}"), json!({"action": "claim", "assignee": "piggy"})).await.ok(200);
    assert_eq!(names(&tasks("candidateUser=gonzo").await), ["For Gonzo"]);
    assert_eq!(names(&tasks("candidateOrAssigned=piggy").await), ["For sales"]);
    assert_eq!(names(&tasks("candidateOrAssigned=gonzo").await), ["For Gonzo"]);
    // Leaving the group takes its unclaimed tasks off the list.
    srv.post("/identity/groups", json!({"id": "managers"})).await.ok(201);
    srv.post("/identity/groups/managers/members", json!({"userId": "gonzo"})).await.ok(201);
    assert_eq!(names(&tasks("candidateUser=gonzo").await), ["For Gonzo", "For managers"]);
    srv.delete("/identity/groups/managers/members/gonzo").await;
    assert_eq!(names(&tasks("candidateUser=gonzo").await), ["For Gonzo"]);
}

async fn bad_identity_requests_are_named_and_change_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.post("/identity/users", json!({"id": "kermit", "password": "green"})).await.ok(201);
    srv.post("/identity/groups", json!({"id": "sales"})).await.ok(201);
    let before = identity_rows(&srv).await;
    let long = "x".repeat(65);
    for (body, field) in [
        (json!({}), "id"),
        (json!({"id": null}), "id"),
        (json!({"id": ""}), "id"),
        (json!({"id": "a:b"}), "id"),
        (json!({"id": long}), "id"),
        (json!({"id": "ok", "firstName": 7}), "firstName"),
        (json!({"id": "ok", "email": "y".repeat(256)}), "email"),
        (json!({"id": "ok", "password": ""}), "password"),
        (json!({"id": "ok", "password": "p".repeat(1025)}), "password"),
        (json!({"id": "ok", "password": 12345}), "password"),
        (json!({"id": "ok", "nickname": "x"}), "body"),
    ] {
        srv.post("/identity/users", body.clone()).await.refused(400, Some(field));
    }
    srv.put("/identity/users/kermit", json!({"id": "other"})).await.refused(400, Some("id"));
    srv.put("/identity/users/kermit", json!({"lastName": ["x"]})).await.refused(400, Some("lastName"));
    srv.put("/identity/users/nobody", json!({"lastName": "x"})).await.refused(404, None);
    srv.post("/identity/groups", json!({"name": "no id"})).await.refused(400, Some("id"));
    srv.post("/identity/groups", json!({"id": "sales"})).await.refused(409, None);
    srv.post("/identity/groups", json!({"id": "g", "members": []})).await.refused(400, Some("body"));
    srv.put("/identity/groups/nogroup", json!({"name": "x"})).await.refused(404, None);
    srv.post("/identity/groups/sales/members", json!({})).await.refused(400, Some("userId"));
    srv.post("/identity/groups/sales/members", json!({"userId": "kermit", "x": 1})).await.refused(400, None);
    srv.delete("/identity/groups/nogroup").await.refused(404, None);
    srv.get("/identity/users?sort=password").await.refused(400, Some("sort"));
    srv.get("/identity/users?potentialStarter=p:1").await.refused(400, Some("potentialStarter"));
    srv.get("/identity/users?size=-1").await.refused(400, Some("size"));
    srv.get("/identity/groups?order=up").await.refused(400, Some("order"));
    srv.get("/identity/groups?nickname=x").await.refused(400, None);
    assert_eq!(identity_rows(&srv).await, before, "nothing was written");
    let id = srv.engine.identity();
    assert!(id.check_password("kermit", "green").await.unwrap().is_some(), "the password is unchanged");
}

on_both_backends!(
    users_groups_and_memberships_in_flowables_shapes,
    a_users_candidate_tasks_include_their_groups,
    bad_identity_requests_are_named_and_change_nothing,
);
