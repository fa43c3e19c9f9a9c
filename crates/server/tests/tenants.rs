//! Tenants (SPEC I7, issue 20): two tenants, acme and globex, deploy the same model and run it
//! side by side. For every route of the OpenAPI document, an id of globex's in the path, in any
//! query field or any body field answers acme's caller 404 (node-wide routes 403); no list
//! shows acme's caller a globex row; keys resolve within the tenant; a tenant's user sees
//! exactly their tenant's tasks; a tenant's caller acts in no other tenant.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::{App, app};
use kairos::process::Owned;
use serde_json::{Value, json};
use std::collections::BTreeMap;

const TOKEN: &str = "node-token-0123456789";

const MODEL: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="approval" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="approve"/>
    <userTask id="approve" camunda:candidateGroups="approvers"/>
    <sequenceFlow id="f2" sourceRef="approve" targetRef="work"/>
    <serviceTask id="work" camunda:type="external" camunda:topic="work"/>
    <sequenceFlow id="f3" sourceRef="work" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"#;

const DMN: &str = include_str!("../../kairos/tests/decisions/invoice.dmn");

fn basic(user: &str) -> String {
    use base64::Engine as _;
    let pair = format!("{user}:{user}-password");
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

async fn call(app: &App, method: &str, uri: &str, auth: &str, body: Option<Value>) -> common::Reply {
    let r = Request::builder().method(method).uri(uri).header(header::AUTHORIZATION, auth);
    let req = match body {
        Some(b) => r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())).unwrap(),
        None => r.body(Body::empty()).unwrap(),
    };
    app.call(req).await
}

async fn deploy(app: &App, auth: &str, uri: &str, xml: &str) -> common::Reply {
    let req = Request::builder()
        .method("POST")
        .uri(uri)
        .header(header::AUTHORIZATION, auth)
        .header(header::CONTENT_TYPE, "application/xml")
        .body(Body::from(xml.to_string()))
        .unwrap();
    app.call(req).await
}

/// The rows of one tenant the test names by kind.
#[derive(Debug, Default)]
struct Rows {
    deployment: String,
    definition: String,
    decision: String,
    instance: String,
    task: String,
    job: String,
    user: String,
}

impl Rows {
    fn of(&self, kind: Owned) -> &str {
        match kind {
            Owned::Deployment => &self.deployment,
            Owned::ProcessDefinition => &self.definition,
            Owned::DecisionDefinition => &self.decision,
            // The root execution's id is the instance's.
            Owned::Instance | Owned::Execution => &self.instance,
            Owned::Task => &self.task,
            Owned::Job | Owned::Subscription => &self.job,
            Owned::User => &self.user,
        }
    }
}

/// A node with the two tenants' admins, operators and users, each tenant's deployment of the
/// model and the DMN, one instance each (waiting at its user task) and one standalone job.
async fn node() -> (App, Rows, Rows) {
    let mut app = app().await;
    let access = kairos_server::Access { token: Some(TOKEN.into()), users: true, ..Default::default() };
    app.router = kairos_server::router_for(app.engine.clone(), &access);
    let node = format!("Bearer {TOKEN}");
    for g in ["kairos-admin", "kairos-operator", "approvers"] {
        let r = call(&app, "POST", "/identity/groups", &node, Some(json!({"id": g}))).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
    for tenant in ["acme", "globex"] {
        for (who, group) in [("admin", "kairos-admin"), ("ops", "kairos-operator"), ("user", "approvers")] {
            let id = format!("{tenant}-{who}");
            let body = json!({"id": id, "password": format!("{id}-password"), "tenantId": tenant});
            let r = call(&app, "POST", "/identity/users", &node, Some(body)).await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
            let r =
                call(&app, "POST", &format!("/identity/groups/{group}/members"), &node, Some(json!({"userId": id})))
                    .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        }
    }
    let mut rows = Vec::new();
    for tenant in ["acme", "globex"] {
        let admin = basic(&format!("{tenant}-admin"));
        // A tenant's admin deploys into their tenant without naming it.
        let d = deploy(&app, &admin, "/repository/deployments?name=approval.bpmn", MODEL).await;
        assert_eq!(d.status, StatusCode::CREATED, "{}", d.text);
        assert_eq!(d.json["tenantId"], tenant, "{}", d.text);
        let def = &d.json["processDefinitions"][0];
        assert_eq!(
            (def["version"].as_i64(), def["tenantId"].as_str()),
            (Some(1), Some(tenant)),
            "versions count per tenant"
        );
        let dmn = deploy(&app, &admin, "/repository/deployments?name=invoice.dmn", DMN).await;
        assert_eq!(dmn.status, StatusCode::CREATED, "{}", dmn.text);
        let ops = basic(&format!("{tenant}-ops"));
        let started =
            call(&app, "POST", "/runtime/process-instances", &ops, Some(json!({"processDefinitionKey": "approval"})))
                .await;
        assert_eq!(started.status, StatusCode::CREATED, "{}", started.text);
        assert_eq!(started.json["tenantId"], tenant);
        assert_eq!(started.json["processDefinitionId"], def["id"], "the key resolved within {tenant}");
        let instance = started.json["id"].as_str().unwrap().to_string();
        let tasks = call(&app, "GET", &format!("/runtime/tasks?processInstanceId={instance}"), &ops, None).await;
        assert_eq!(tasks.status, StatusCode::OK, "{}", tasks.text);
        let task = tasks.json["data"][0]["id"].as_str().unwrap().to_string();
        let job = call(&app, "POST", "/management/jobs", &ops, Some(json!({"handler": "noop"}))).await;
        assert_eq!(job.status, StatusCode::CREATED, "{}", job.text);
        assert_eq!(job.json["tenantId"], tenant, "a tenant's job: {}", job.text);
        let decisions = call(&app, "GET", "/dmn-api/dmn-repository/decisions", &ops, None).await;
        rows.push(Rows {
            deployment: d.json["id"].as_str().unwrap().to_string(),
            definition: def["id"].as_str().unwrap().to_string(),
            decision: decisions.json["data"][0]["id"].as_str().unwrap().to_string(),
            instance,
            task,
            job: job.json["id"].as_str().unwrap().to_string(),
            user: format!("{tenant}-user"),
        });
    }
    let globex = rows.pop().unwrap();
    let acme = rows.pop().unwrap();
    (app, acme, globex)
}

/// The routes of the OpenAPI document: `(method, pattern)`.
fn routes() -> Vec<(String, String)> {
    let doc: Value = serde_json::from_str(include_str!("../openapi.json")).unwrap();
    let mut out = Vec::new();
    for (pattern, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            if ["get", "post", "put", "delete"].contains(&method.as_str()) {
                out.push((method.to_uppercase(), pattern.clone()));
            }
        }
    }
    out
}

/// Routes no credential is asked for (the guard is not theirs to run).
fn open(pattern: &str) -> bool {
    matches!(pattern, "/" | "/console/{file}" | "/health" | "/openapi.json" | "/auth/login" | "/auth/session")
}

/// `pattern` with each parameter filled: ids of `kind` from `ids(kind)`, others with `x`.
fn fill(pattern: &str, ids: impl Fn(Owned) -> String) -> String {
    pattern
        .split('/')
        .map(|seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            None => seg.to_string(),
            Some(param) => match kairos_server::tenancy::path_kind(pattern, param) {
                Some(Some(kind)) => ids(kind),
                _ => "x".to_string(),
            },
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn another_tenants_ids_are_not_found_on_any_route_in_any_field() {
    let (app, acme, globex) = node().await;
    let admin = basic("acme-admin");
    let mut checked = 0;
    for (method, pattern) in routes() {
        if open(&pattern) {
            continue;
        }
        if kairos_server::tenancy::node_wide(&pattern) {
            let uri = fill(&pattern, |k| acme.of(k).to_string());
            let r = call(&app, &method, &uri, &admin, None).await;
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{method} {uri} is the node's: {}", r.text);
            continue;
        }
        // globex's id in the path.
        let tenanted = pattern.split('/').any(|s| {
            s.strip_prefix('{')
                .and_then(|p| p.strip_suffix('}'))
                .is_some_and(|p| matches!(kairos_server::tenancy::path_kind(&pattern, p), Some(Some(_))))
        });
        if tenanted {
            let uri = fill(&pattern, |k| globex.of(k).to_string());
            let body = (method == "POST" || method == "PUT").then(|| json!({}));
            let r = call(&app, &method, &uri, &admin, body).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri} with globex's id: {}", r.text);
            // It may echo the id asked for (the user's id names the tenant), nothing more.
            let told = r.text.replace(&globex.user, "");
            assert!(!told.contains("globex"), "{method} {uri} tells nothing of globex: {}", r.text);
            checked += 1;
        }
        // acme's own ids in the path, globex's in each field of the query and of the body.
        let uri = fill(&pattern, |k| acme.of(k).to_string());
        for (field, kind) in kairos_server::tenancy::FIELDS {
            let id = globex.of(*kind);
            let r = call(&app, &method, &format!("{uri}?{field}={id}"), &admin, None).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri}?{field}= globex's: {}", r.text);
            if method == "POST" || method == "PUT" {
                let value = if field.ends_with("Ids") || field.ends_with("In") { json!([id]) } else { json!(id) };
                let r = call(&app, &method, &uri, &admin, Some(json!({ *field: value }))).await;
                assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri} {{{field}: globex's}}: {}", r.text);
                // Nested, as Camunda's fetchAndLock topics carry them.
                let nested = json!({"topics": [{ *field: value }]});
                let r = call(&app, &method, &uri, &admin, Some(nested)).await;
                assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri} topics[0].{field}: {}", r.text);
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked} checks");
}

#[tokio::test]
async fn lists_never_show_another_tenants_rows() {
    let (app, acme, _globex) = node().await;
    let mut listed = BTreeMap::new();
    for who in ["acme-admin", "acme-ops", "acme-user"] {
        let auth = basic(who);
        for (method, pattern) in routes() {
            if open(&pattern) || pattern.contains('{') || kairos_server::tenancy::node_wide(&pattern) {
                continue;
            }
            let calls: Vec<(String, Option<Value>)> = match method.as_str() {
                "GET" => {
                    vec![(pattern.clone(), None), (format!("{pattern}?processInstanceId={}", acme.instance), None)]
                }
                "POST" if pattern.starts_with("/query/") => vec![(pattern.clone(), Some(json!({})))],
                _ => continue,
            };
            for (uri, body) in calls {
                let r = call(&app, &method, &uri, &auth, body).await;
                assert!(r.status != StatusCode::INTERNAL_SERVER_ERROR, "{who}: {method} {uri}: {}", r.text);
                assert!(!r.text.contains("globex"), "{who}: {method} {uri} shows globex's rows: {}", r.text);
                if r.status == StatusCode::OK {
                    *listed.entry(who).or_insert(0) += 1;
                }
            }
        }
    }
    assert!(listed["acme-admin"] > 40 && listed["acme-user"] > 0, "lists answered: {listed:?}");
    // …and they do show the tenant's own.
    let ops = basic("acme-ops");
    for (uri, id) in [
        ("/runtime/process-instances", &acme.instance),
        ("/runtime/tasks", &acme.task),
        ("/management/jobs", &acme.job),
        ("/repository/process-definitions", &acme.definition),
        ("/repository/deployments", &acme.deployment),
        ("/history/historic-process-instances", &acme.instance),
        ("/history/historic-task-instances", &acme.task),
        ("/engine-rest/process-instance", &acme.instance),
        ("/engine-rest/task", &acme.task),
        ("/engine-rest/process-definition", &acme.definition),
        ("/engine-rest/deployment", &acme.deployment),
        ("/engine-rest/history/process-instance", &acme.instance),
        ("/engine-rest/decision-definition", &acme.decision),
    ] {
        let r = call(&app, "GET", uri, &ops, None).await;
        assert_eq!(r.status, StatusCode::OK, "{uri}: {}", r.text);
        assert!(r.text.contains(id.as_str()), "{uri} lists acme's {id}: {}", r.text);
        assert!(r.text.contains("acme"), "{uri} says the tenant: {}", r.text);
    }
}

#[tokio::test]
async fn a_tenants_users_see_exactly_their_tasks_and_workers_their_work() {
    let (app, acme, globex) = node().await;
    // Both users are in the group the task is offered to; each sees their tenant's task only.
    for (user, mine, theirs) in [("acme-user", &acme, &globex), ("globex-user", &globex, &acme)] {
        let auth = basic(user);
        let r = call(&app, "GET", "/runtime/tasks", &auth, None).await;
        let ids: Vec<&str> = r.json["data"].as_array().unwrap().iter().filter_map(|t| t["id"].as_str()).collect();
        assert_eq!(ids, [mine.task.as_str()], "{user}: {}", r.text);
        let r = call(&app, "GET", "/engine-rest/task?candidateUser=".to_string().as_str(), &auth, None).await;
        assert!(!r.text.contains(&theirs.task), "{user}: {}", r.text);
        let r = call(&app, "GET", &format!("/runtime/tasks/{}", theirs.task), &auth, None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{user}: {}", r.text);
        let r = call(&app, "POST", &format!("/runtime/tasks/{}", theirs.task), &auth, Some(json!({"action": "claim"})))
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{user}: {}", r.text);
        let r =
            call(&app, "POST", &format!("/engine-rest/task/{}/claim", mine.task), &auth, Some(json!({"userId": user})))
                .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{user} claims their task: {}", r.text);
        let r = call(&app, "POST", &format!("/engine-rest/task/{}/complete", mine.task), &auth, Some(json!({}))).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{user} completes their task: {}", r.text);
    }
    // Each instance now waits at its external task: a tenant's worker fetches its own only.
    let fetch = json!({"workerId": "w", "maxTasks": 10, "topics": [{"topicName": "work", "lockDuration": 60000}]});
    let r =
        call(&app, "POST", "/engine-rest/external-task/fetchAndLock", &basic("acme-ops"), Some(fetch.clone())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got: Vec<&str> = r.json.as_array().unwrap().iter().filter_map(|t| t["processInstanceId"].as_str()).collect();
    assert_eq!(got, [acme.instance.as_str()], "{}", r.text);
    assert_eq!(r.json[0]["tenantId"], "acme");
    let r = call(
        &app,
        "POST",
        "/external-job-api/acquire/jobs",
        &basic("globex-ops"),
        Some(json!({
            "topic": "work", "lockDuration": "PT1M", "workerId": "w2", "numberOfTasks": 10,
        })),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let got: Vec<&str> = r.json.as_array().unwrap().iter().filter_map(|t| t["processInstanceId"].as_str()).collect();
    assert_eq!(got, [globex.instance.as_str()], "{}", r.text);
}

#[tokio::test]
async fn keys_resolve_within_the_tenant_and_a_tenants_caller_acts_in_no_other() {
    let (app, acme, globex) = node().await;
    // acme deploys a second version; globex's key still resolves to its own version 1.
    let v2 = MODEL.replace("<endEvent id=\"e\"/>", "<endEvent id=\"e\" name=\"done\"/>");
    let d = deploy(&app, &basic("acme-admin"), "/repository/deployments?name=approval.bpmn", &v2).await;
    assert_eq!(d.json["processDefinitions"][0]["version"], 2, "{}", d.text);
    for (who, rows, version) in [("globex-ops", &globex, 1), ("acme-ops", &acme, 2)] {
        let r = call(&app, "GET", "/engine-rest/process-definition/key/approval", &basic(who), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.json["version"], version, "{who}: {}", r.text);
        if version == 1 {
            assert_eq!(r.json["id"], rows.definition.as_str());
        }
        let r = call(&app, "POST", "/engine-rest/process-definition/key/approval/start", &basic(who), Some(json!({})))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.json["tenantId"], if version == 1 { "globex" } else { "acme" });
    }
    // A key only another tenant has is not found.
    let only = MODEL.replace("approval", "globex-only");
    deploy(&app, &basic("globex-admin"), "/repository/deployments?name=g.bpmn", &only).await;
    let r = call(
        &app,
        "POST",
        "/runtime/process-instances",
        &basic("acme-ops"),
        Some(json!({"processDefinitionKey": "globex-only"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    // A business object bound to one tenant's instance is neither answered to nor doubled by
    // another tenant, whose binding list does not show it.
    let bound = json!({"processDefinitionKey": "approval", "binding": {"businessType": "order", "businessId": "42"}});
    let r = call(&app, "POST", "/runtime/process-instances", &basic("acme-ops"), Some(bound.clone())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let r = call(&app, "POST", "/runtime/process-instances", &basic("globex-ops"), Some(bound)).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    let uri = "/bindings?businessType=order&businessId=42";
    let r = call(&app, "GET", uri, &basic("globex-ops"), None).await;
    assert_eq!((r.status, r.json["total"].as_u64()), (StatusCode::OK, Some(0)), "{}", r.text);
    let r = call(&app, "GET", uri, &basic("acme-ops"), None).await;
    assert_eq!(r.json["total"], 1, "{}", r.text);
    // The body is read as the route reads it: a media type in capitals is still JSON.
    let req = Request::builder()
        .method("POST")
        .uri("/query/tasks")
        .header(header::AUTHORIZATION, basic("acme-ops"))
        .header(header::CONTENT_TYPE, "Application/JSON; charset=UTF-8")
        .body(Body::from(json!({"processInstanceId": globex.instance}).to_string()))
        .unwrap();
    let r = app.call(req).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    // Naming another tenant is refused, whatever the route.
    let ops = basic("acme-ops");
    for (method, uri, body) in [
        ("GET", "/runtime/tasks?tenantId=globex", None),
        ("GET", "/engine-rest/process-instance?tenantIdIn=globex", None),
        ("POST", "/runtime/process-instances", Some(json!({"processDefinitionKey": "approval", "tenantId": "globex"}))),
        ("POST", "/management/jobs", Some(json!({"handler": "noop", "tenantId": "globex"}))),
        ("POST", "/runtime/signals", Some(json!({"signalName": "go", "tenantId": "globex"}))),
    ] {
        let r = call(&app, method, uri, &ops, body).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{method} {uri}: {}", r.text);
    }
    let r = deploy(&app, &basic("acme-admin"), "/repository/deployments?name=x.bpmn&tenantId=globex", MODEL).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    // The node's token sees both, and names the tenant it deploys to.
    let node = format!("Bearer {TOKEN}");
    let r = call(&app, "GET", "/runtime/process-instances", &node, None).await;
    assert!(r.text.contains(&acme.instance) && r.text.contains(&globex.instance), "{}", r.text);
    let r = call(&app, "GET", "/runtime/process-instances?tenantId=globex", &node, None).await;
    assert!(!r.text.contains(&acme.instance) && r.text.contains(&globex.instance), "{}", r.text);
    let r = deploy(&app, &node, "/repository/deployments?name=i.bpmn&tenantId=initech", MODEL).await;
    assert_eq!((r.status, r.json["tenantId"].as_str()), (StatusCode::CREATED, Some("initech")), "{}", r.text);
}

#[tokio::test]
async fn scheduler_jobs_and_triggers_are_their_tenants() {
    let (app, _acme, _globex) = node().await;
    let (acme, globex) = (basic("acme-ops"), basic("globex-ops"));
    let job = json!({"name": "nightly", "group": "reports", "handler": "log", "durable": true});
    let r = call(&app, "POST", "/scheduler/jobs", &globex, Some(job.clone())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.json["tenantId"], "globex");
    let cron = json!({"name": "at-two", "group": "reports", "jobName": "nightly", "jobGroup": "reports",
        "cron": {"expression": "0 0 2 * * ?"}});
    let r = call(&app, "POST", "/scheduler/triggers", &globex, Some(cron.clone())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // acme finds none of it, by list or by key, and can neither act on it nor take its key.
    for uri in ["/scheduler/jobs", "/scheduler/triggers", "/scheduler/jobs?group=reports"] {
        let r = call(&app, "GET", uri, &acme, None).await;
        assert_eq!((r.status, r.json["total"].as_u64()), (StatusCode::OK, Some(0)), "{uri}: {}", r.text);
    }
    for (method, uri, body) in [
        ("GET", "/scheduler/jobs/reports/nightly", None),
        ("DELETE", "/scheduler/jobs/reports/nightly", None),
        ("PUT", "/scheduler/jobs/reports/nightly", Some(json!({"action": "pause"}))),
        ("GET", "/scheduler/triggers/reports/at-two", None),
        ("PUT", "/scheduler/triggers/reports/at-two", Some(json!({"action": "pause"}))),
        ("DELETE", "/scheduler/triggers/reports/at-two", None),
        (
            "POST",
            "/scheduler/triggers",
            Some(json!({"name": "mine", "jobName": "nightly", "jobGroup": "reports",
            "cron": {"expression": "0 0 3 * * ?"}})),
        ),
    ] {
        let r = call(&app, method, uri, &acme, body).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri}: {}", r.text);
    }
    let taken = json!({"name": "nightly", "group": "reports", "handler": "log", "durable": true, "replace": true});
    let r = call(&app, "POST", "/scheduler/jobs", &acme, Some(taken)).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "another tenant's job is never replaced: {}", r.text);
    for uri in ["/scheduler/calendars", "/scheduler/fired-triggers", "/scheduler/nodes"] {
        assert_eq!(call(&app, "GET", uri, &acme, None).await.status, StatusCode::FORBIDDEN, "{uri}");
    }
    // globex sees its own; the node's token sees it too.
    let r = call(&app, "GET", "/scheduler/triggers", &globex, None).await;
    assert_eq!(r.json["total"], 1, "{}", r.text);
    let r = call(&app, "GET", "/scheduler/jobs/reports/nightly", &format!("Bearer {TOKEN}"), None).await;
    assert_eq!((r.status, r.json["tenantId"].as_str()), (StatusCode::OK, Some("globex")), "{}", r.text);
}
