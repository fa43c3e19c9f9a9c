//! Users as callers (SPEC I7): HTTP Basic with a user's password, per-user API tokens kept
//! only as hashes, roles from the groups `kairos-admin` and `kairos-operator`, every route
//! checked by the route it matched; a user reaches their tasklist only (other tasks are 404);
//! repeated wrong passwords are slowed; the node's token stays an admin credential.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use base64::Engine as _;
use common::{App, app};
use serde_json::{Value, json};

const TOKEN: &str = "node-token-0123456789";

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

async fn call(app: &App, method: &str, uri: &str, auth: Option<&str>, body: Option<Value>) -> common::Reply {
    let mut r = Request::builder().method(method).uri(uri);
    if let Some(a) = auth {
        r = r.header(header::AUTHORIZATION, a);
    }
    let req = match body {
        Some(b) => r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())).unwrap(),
        None => r.body(Body::empty()).unwrap(),
    };
    app.call(req).await
}

/// A node that takes its token and its users' credentials, with kermit (admin), fozzie
/// (operator) and gonzo and piggy (users, gonzo in sales).
async fn node() -> App {
    let mut app = app().await;
    let access = kairos_server::Access { token: Some(TOKEN.into()), users: true, ..Default::default() };
    app.router = kairos_server::router_for(app.engine.clone(), &access);
    let admin = bearer(TOKEN);
    for (u, g) in [
        ("kermit", Some("kairos-admin")),
        ("fozzie", Some("kairos-operator")),
        ("gonzo", Some("sales")),
        ("piggy", None),
    ] {
        let r = call(
            &app,
            "POST",
            "/identity/users",
            Some(&admin),
            Some(json!({"id": u, "password": format!("{u}-password")})),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        if let Some(g) = g {
            let _ = call(&app, "POST", "/identity/groups", Some(&admin), Some(json!({"id": g}))).await;
            let r =
                call(&app, "POST", &format!("/identity/groups/{g}/members"), Some(&admin), Some(json!({"userId": u})))
                    .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        }
    }
    app
}

#[tokio::test]
async fn roles_come_from_groups_and_every_route_checks_them() {
    let app = node().await;
    let (kermit, fozzie, gonzo) =
        (basic("kermit", "kermit-password"), basic("fozzie", "fozzie-password"), basic("gonzo", "gonzo-password"));
    let bpmn = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t"><process id="p" isExecutable="true"><startEvent id="s"/></process></definitions>"#;
    let deploy = |auth: String| {
        let req = Request::builder()
            .method("POST")
            .uri("/repository/deployments")
            .header(header::AUTHORIZATION, auth)
            .header(header::CONTENT_TYPE, "application/xml")
            .body(Body::from(bpmn))
            .unwrap();
        app.call(req)
    };
    // Reading jobs: operators and admins; a user is refused by role, naming it.
    assert_eq!(call(&app, "GET", "/management/jobs", Some(&fozzie), None).await.status, StatusCode::OK);
    assert_eq!(call(&app, "GET", "/management/jobs", Some(&kermit), None).await.status, StatusCode::OK);
    let r = call(&app, "GET", "/management/jobs", Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert_eq!(r.error().0, "forbidden");
    assert!(r.error().1.contains("operator"), "{}", r.text);
    // Deploying: admins only.
    assert_eq!(deploy(fozzie.clone()).await.status, StatusCode::FORBIDDEN);
    assert_eq!(deploy(gonzo.clone()).await.status, StatusCode::FORBIDDEN);
    assert_eq!(call(&app, "GET", "/repository/deployments", Some(&fozzie), None).await.json["total"], json!(0));
    assert_eq!(deploy(kermit.clone()).await.status, StatusCode::CREATED);
    // Camunda's face is checked the same way.
    assert_eq!(
        call(&app, "GET", "/engine-rest/process-definition", Some(&gonzo), None).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(call(&app, "GET", "/engine-rest/process-definition", Some(&fozzie), None).await.status, StatusCode::OK);
    // Users and groups: admins (and the node's token, with any user name, as Basic password).
    assert_eq!(call(&app, "GET", "/identity/users", Some(&fozzie), None).await.status, StatusCode::FORBIDDEN);
    assert_eq!(call(&app, "GET", "/identity/users", Some(&basic("anyone", TOKEN)), None).await.status, StatusCode::OK);
    // A user reads themselves, not others.
    assert_eq!(call(&app, "GET", "/identity/users/gonzo", Some(&gonzo), None).await.status, StatusCode::OK);
    assert_eq!(call(&app, "GET", "/identity/users/piggy", Some(&gonzo), None).await.status, StatusCode::FORBIDDEN);
    assert_eq!(
        call(&app, "PUT", "/identity/users/gonzo", Some(&gonzo), Some(json!({"tenantId": "other"}))).await.status,
        StatusCode::FORBIDDEN
    );
    // Open: health and the document.
    assert_eq!(call(&app, "GET", "/health", None, None).await.status, StatusCode::OK);
    // Wrong or missing credentials: 401, whatever the route.
    for auth in [
        None,
        Some(basic("gonzo", "wrong")),
        Some(basic("nobody", "x")),
        Some(bearer("kairos_0000")),
        Some("Digest x".to_string()),
    ] {
        let r = call(&app, "GET", "/runtime/tasks", auth.as_deref(), None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{auth:?}: {}", r.text);
        assert!(!r.text.contains("password\""), "{}", r.text);
    }
    // Leaving the admin group takes the role away at once.
    let r = call(&app, "DELETE", "/identity/groups/kairos-admin/members/kermit", Some(&bearer(TOKEN)), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(deploy(kermit).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn api_tokens_are_shown_once_kept_hashed_and_revocable() {
    let app = node().await;
    let gonzo = basic("gonzo", "gonzo-password");
    // A user makes their own; not someone else's.
    let r = call(&app, "POST", "/identity/users/gonzo/tokens", Some(&gonzo), Some(json!({"name": "laptop"}))).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let token = r.json["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("kairos_") && token.len() > 60, "{token}");
    let id = r.json["id"].as_str().unwrap().to_string();
    let r = call(&app, "POST", "/identity/users/piggy/tokens", Some(&gonzo), Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    // It authenticates as gonzo, with gonzo's role.
    assert_eq!(call(&app, "GET", "/runtime/tasks", Some(&bearer(&token)), None).await.status, StatusCode::OK);
    assert_eq!(call(&app, "GET", "/management/jobs", Some(&bearer(&token)), None).await.status, StatusCode::FORBIDDEN);
    // Only its SHA-256 is stored; the list never shows it.
    let rows = app.engine.store().sql_query("SELECT TOKEN_VALUE_, USER_ID_ FROM ACT_ID_TOKEN", &[]).await.unwrap();
    assert_eq!(rows.len(), 1);
    let stored = rows[0][0].as_str().unwrap();
    assert_eq!(stored, kairos::identity::token_hash(&token));
    assert!(!stored.contains(&token[7..]));
    let listed = call(&app, "GET", "/identity/users/gonzo/tokens", Some(&gonzo), None).await;
    assert_eq!(listed.json.as_array().unwrap().len(), 1);
    assert_eq!(listed.json[0]["name"], json!("laptop"));
    assert!(!listed.text.contains(&token[7..]), "{}", listed.text);

    // Revoked, it no longer works.
    let r = call(&app, "DELETE", &format!("/identity/users/gonzo/tokens/{id}"), Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(call(&app, "GET", "/runtime/tasks", Some(&bearer(&token)), None).await.status, StatusCode::UNAUTHORIZED);
}

const TASKS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="work" isExecutable="true">
    <startEvent id="start"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f0" sourceRef="start" targetRef="fork"/>
    <sequenceFlow id="f1" sourceRef="fork" targetRef="sales"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="piggys"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="nobodys"/>
    <userTask id="sales" name="Sales work" flowable:candidateGroups="sales"/>
    <userTask id="piggys" name="Piggy's work" flowable:assignee="piggy"/>
    <userTask id="nobodys" name="Managers' work" flowable:candidateGroups="managers"/>
    <sequenceFlow id="f4" sourceRef="sales" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

fn names(r: &common::Reply) -> Vec<String> {
    let mut v: Vec<String> =
        r.json["data"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_user_reaches_their_own_tasks_only() {
    let app = node().await;
    app.engine.processes().deploy("work.bpmn", TASKS).await.unwrap();
    let admin = bearer(TOKEN);
    let r =
        call(&app, "POST", "/runtime/process-instances", Some(&admin), Some(json!({"processDefinitionKey": "work"})))
            .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let (gonzo, piggy) = (basic("gonzo", "gonzo-password"), basic("piggy", "piggy-password"));

    let all = call(&app, "GET", "/runtime/tasks", Some(&admin), None).await;
    assert_eq!(names(&all), ["Managers' work", "Piggy's work", "Sales work"]);
    let id_of = |name: &str| {
        all.json["data"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (sales, piggys, managers) = (id_of("Sales work"), id_of("Piggy's work"), id_of("Managers' work"));

    // The list is the caller's tasklist, whatever the query asks.
    assert_eq!(names(&call(&app, "GET", "/runtime/tasks", Some(&gonzo), None).await), ["Sales work"]);
    assert_eq!(names(&call(&app, "GET", "/runtime/tasks", Some(&piggy), None).await), ["Piggy's work"]);
    assert_eq!(
        names(&call(&app, "GET", "/runtime/tasks?candidateGroup=managers", Some(&gonzo), None).await),
        Vec::<String>::new()
    );
    assert_eq!(
        names(&call(&app, "GET", "/runtime/tasks?candidateOrAssigned=piggy", Some(&gonzo), None).await),
        Vec::<String>::new()
    );
    // Another's task is not there for them: 404 on every task route, and nothing changes.
    for (m, path, body) in [
        ("GET", format!("/runtime/tasks/{piggys}"), None),
        ("POST", format!("/runtime/tasks/{piggys}"), Some(json!({"action": "complete"}))),
        ("GET", format!("/runtime/tasks/{managers}/variables"), None),
        ("POST", format!("/runtime/tasks/{managers}/comments"), Some(json!({"message": "mine now"}))),
        ("GET", format!("/runtime/tasks/{managers}/identitylinks"), None),
    ] {
        let r = call(&app, m, &path, Some(&gonzo), body).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{m} {path}: {}", r.text);
    }
    assert_eq!(call(&app, "POST", "/query/tasks", Some(&gonzo), Some(json!({}))).await.status, StatusCode::FORBIDDEN);
    // Camunda's task routes hold the same rules.
    let camunda = call(&app, "GET", "/engine-rest/task", Some(&gonzo), None).await;
    let names_of =
        |v: &Value| v.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(names_of(&camunda.json), ["Sales work"], "{}", camunda.text);
    assert_eq!(call(&app, "GET", "/engine-rest/task/count", Some(&gonzo), None).await.json["count"], json!(1));
    assert_eq!(call(&app, "GET", "/engine-rest/task?assignee=piggy", Some(&gonzo), None).await.json, json!([]));
    assert_eq!(
        call(&app, "GET", &format!("/engine-rest/task/{piggys}"), Some(&gonzo), None).await.status,
        StatusCode::NOT_FOUND
    );
    let r = call(&app, "POST", &format!("/engine-rest/task/{piggys}/complete"), Some(&gonzo), Some(json!({}))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    let r =
        call(&app, "POST", &format!("/engine-rest/task/{sales}/claim"), Some(&gonzo), Some(json!({"userId": "piggy"})))
            .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    let r = call(
        &app,
        "POST",
        &format!("/engine-rest/task/{sales}/assignee"),
        Some(&gonzo),
        Some(json!({"userId": "gonzo"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert_eq!(
        call(&app, "GET", &format!("/engine-rest/task/{sales}"), Some(&gonzo), None).await.status,
        StatusCode::OK
    );

    // A task's form: theirs only (by the taskId parameter).
    let r = call(&app, "GET", &format!("/form/form-data?taskId={sales}"), Some(&gonzo), None).await;
    assert_eq!(
        (r.status, r.json["taskId"].clone(), r.json["formProperties"].clone()),
        (StatusCode::OK, json!(sales), json!([])),
        "{}",
        r.text
    );
    let r = call(&app, "GET", &format!("/form/form-data?taskId={piggys}"), Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    assert_eq!(call(&app, "GET", "/form/form-data", Some(&gonzo), None).await.status, StatusCode::NOT_FOUND);
    assert_eq!(call(&app, "GET", "/form/form-data", Some(&admin), None).await.status, StatusCode::BAD_REQUEST);

    // Their own: claim, then complete with variables.
    let r = call(&app, "GET", &format!("/runtime/tasks/{sales}"), Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = call(
        &app,
        "POST",
        &format!("/runtime/tasks/{sales}"),
        Some(&gonzo),
        Some(json!({"action": "claim", "assignee": "gonzo"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = call(
        &app,
        "POST",
        &format!("/runtime/tasks/{sales}"),
        Some(&gonzo),
        Some(json!({"action": "complete", "variables": [{"name": "ok", "value": true}]})),
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(
        names(&call(&app, "GET", "/runtime/tasks", Some(&admin), None).await),
        ["Managers' work", "Piggy's work"]
    );
}

#[tokio::test]
async fn repeated_wrong_passwords_are_slowed_and_a_success_clears_them() {
    let app = node().await;
    let free = kairos_server::access::FREE_FAILURES;
    for i in 0..free {
        let r = call(&app, "GET", "/runtime/tasks", Some(&basic("gonzo", &format!("guess-{i}"))), None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "attempt {i}: {}", r.text);
    }
    // Now even the right password waits.
    let req = Request::builder()
        .uri("/runtime/tasks")
        .header(header::AUTHORIZATION, basic("gonzo", "gonzo-password"))
        .body(Body::empty())
        .unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(res.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));
    // Another user is not held up.
    assert_eq!(
        call(&app, "GET", "/runtime/tasks", Some(&basic("piggy", "piggy-password")), None).await.status,
        StatusCode::OK
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(
        call(&app, "GET", "/runtime/tasks", Some(&basic("gonzo", "gonzo-password")), None).await.status,
        StatusCode::OK
    );
    // The count was cleared: a wrong password is a plain 401 again.
    let r = call(&app, "GET", "/runtime/tasks", Some(&basic("gonzo", "nope")), None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // A client this node saw with the right password lately (piggy, above) is not held up by
    // someone else's guesses at piggy's password; the guesser is.
    for i in 0..free {
        call(&app, "GET", "/runtime/tasks", Some(&basic("piggy", &format!("guess-{i}"))), None).await;
    }
    assert_eq!(
        call(&app, "GET", "/runtime/tasks", Some(&basic("piggy", "guess-x")), None).await.status,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        call(&app, "GET", "/runtime/tasks", Some(&basic("piggy", "piggy-password")), None).await.status,
        StatusCode::OK
    );
    // Ids no user can have are not counted (the counts stay small): never a 429.
    let junk = "j".repeat(65);
    for _ in 0..free + 2 {
        let r = call(&app, "GET", "/runtime/tasks", Some(&basic(&junk, "x")), None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
}

#[tokio::test]
async fn users_act_as_themselves_and_a_new_password_ends_their_sessions() {
    let app = node().await;
    app.engine.processes().deploy("work.bpmn", TASKS).await.unwrap();
    let admin = bearer(TOKEN);
    call(&app, "POST", "/runtime/process-instances", Some(&admin), Some(json!({"processDefinitionKey": "work"}))).await;
    let gonzo = basic("gonzo", "gonzo-password");
    let mine = call(&app, "GET", "/runtime/tasks", Some(&gonzo), None).await;
    let id = mine.json["data"][0]["id"].as_str().unwrap().to_string();
    // Claiming for someone else: refused, naming the field; for themselves: fine.
    let r = call(
        &app,
        "POST",
        &format!("/runtime/tasks/{id}"),
        Some(&gonzo),
        Some(json!({"action": "claim", "assignee": "piggy"})),
    )
    .await;
    assert_eq!((r.status, r.json["error"]["field"].clone()), (StatusCode::FORBIDDEN, json!("assignee")), "{}", r.text);
    let r = call(
        &app,
        "POST",
        &format!("/runtime/tasks/{id}"),
        Some(&gonzo),
        Some(json!({"action": "claim", "assignee": "gonzo"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    // A comment is signed by its author, whatever the body says.
    let r = call(
        &app,
        "POST",
        &format!("/runtime/tasks/{id}/comments"),
        Some(&gonzo),
        Some(json!({"message": "done soon", "author": "kermit"})),
    )
    .await;
    assert_eq!((r.status, r.json["author"].clone()), (StatusCode::CREATED, json!("gonzo")), "{}", r.text);

    // A deployed file is answered inert: a browser opening it runs nothing.
    let defs = call(&app, "GET", "/repository/process-definitions", Some(&admin), None).await;
    let def = defs.json["data"][0]["id"].as_str().unwrap().to_string();
    let req = Request::builder()
        .uri(format!("/repository/process-definitions/{def}/resourcedata"))
        .header(header::AUTHORIZATION, &admin)
        .body(Body::empty())
        .unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.headers().get(header::CONTENT_SECURITY_POLICY).unwrap(), "sandbox; default-src 'none'");
    assert_eq!(res.headers().get(header::X_CONTENT_TYPE_OPTIONS).unwrap(), "nosniff");

    // A new password logs out the sessions opened with the old one.
    let (cookie, _, _) = login(&app, "gonzo", "gonzo-password", None).await;
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &cookie, None, None).await.status, StatusCode::OK);
    let r = call(&app, "PUT", "/identity/users/gonzo", Some(&admin), Some(json!({"password": "a fresh one"}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &cookie, None, None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&app, "GET", "/runtime/tasks", Some(&gonzo), None).await.status, StatusCode::UNAUTHORIZED);
}

/// A request with a session cookie and, optionally, a CSRF token.
async fn with_cookie(
    app: &App,
    method: &str,
    uri: &str,
    cookie: &str,
    csrf: Option<&str>,
    body: Option<Value>,
) -> common::Reply {
    let mut r = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::COOKIE, format!("theme=dark; kairos_session={cookie}"));
    if let Some(c) = csrf {
        r = r.header("X-CSRF-Token", c);
    }
    let req = match body {
        Some(b) => r.header(header::CONTENT_TYPE, "application/json").body(Body::from(b.to_string())).unwrap(),
        None => r.body(Body::empty()).unwrap(),
    };
    app.call(req).await
}

/// Logs in; the session cookie's value and the whole Set-Cookie header, and the CSRF token.
async fn login(app: &App, user: &str, password: &str, planted: Option<&str>) -> (String, String, String) {
    let mut r = Request::builder().method("POST").uri("/auth/login").header(header::CONTENT_TYPE, "application/json");
    if let Some(p) = planted {
        r = r.header(header::COOKIE, format!("kairos_session={p}"));
    }
    let req = r.body(Body::from(json!({"userId": user, "password": password}).to_string())).unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let set = res.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap().to_string();
    let value = set.split(';').next().unwrap().strip_prefix("kairos_session=").unwrap().to_string();
    let bytes = http_body_util::BodyExt::collect(res.into_body()).await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["userId"], json!(user));
    (value, set, body["csrfToken"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn console_sessions_are_cookies_with_csrf_tokens_and_fixation_is_refused() {
    let app = node().await;
    let r = call(&app, "POST", "/auth/login", None, Some(json!({"userId": "gonzo", "password": "wrong"}))).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    let (cookie, set, csrf) = login(&app, "gonzo", "gonzo-password", None).await;
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set.contains(attr), "{set}");
    }
    assert!(!set.contains("Secure"), "plain HTTP: no Secure attribute ({set})");
    // Only the hash of the session's secret is kept.
    let rows = app
        .engine
        .store()
        .sql_query("SELECT TOKEN_VALUE_ FROM ACT_ID_TOKEN WHERE KIND_ = 'session'", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0].as_str().unwrap(), kairos::identity::token_hash(&cookie));

    // Reading needs the cookie only; changing needs the CSRF token too.
    let me = with_cookie(&app, "GET", "/auth/session", &cookie, None, None).await;
    assert_eq!(
        (me.status, me.json["role"].clone(), me.json["csrfToken"].clone()),
        (StatusCode::OK, json!("user"), json!(csrf))
    );
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &cookie, None, None).await.status, StatusCode::OK);
    let make = json!({"name": "from the console"});
    for bad in [None, Some("0".repeat(64)), Some(csrf[1..].to_string())] {
        let r = with_cookie(&app, "POST", "/identity/users/gonzo/tokens", &cookie, bad.as_deref(), Some(make.clone()))
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{bad:?}: {}", r.text);
        assert_eq!(r.error().0, "csrf-token-missing");
    }
    assert_eq!(app.engine.identity().tokens("gonzo").await.unwrap().len(), 0, "nothing was made");
    let r = with_cookie(&app, "POST", "/identity/users/gonzo/tokens", &cookie, Some(&csrf), Some(make)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    // A cookie the node never issued is nobody's.
    let forged = format!("kairos-session_{}", "ab".repeat(32));
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &forged, None, None).await.status, StatusCode::UNAUTHORIZED);

    // Session fixation: a login always makes a new session and ends the one it came with.
    let (second, _, _) = login(&app, "gonzo", "gonzo-password", Some(&cookie)).await;
    assert_ne!(second, cookie);
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &cookie, None, None).await.status, StatusCode::UNAUTHORIZED);
    let (third, _, _) = login(&app, "gonzo", "gonzo-password", Some(&forged)).await;
    assert_ne!(third, forged, "a planted id is never adopted");

    // Logout ends it and clears the cookie.
    let csrf3 = kairos::identity::csrf_token(&third);
    let req = Request::builder()
        .method("POST")
        .uri("/auth/logout")
        .header(header::COOKIE, format!("kairos_session={third}"))
        .header("X-CSRF-Token", csrf3)
        .body(Body::empty())
        .unwrap();
    let res = tower::ServiceExt::oneshot(app.router.clone(), req).await.unwrap();
    assert_eq!(res.status(), StatusCode::NO_CONTENT);
    assert!(res.headers().get(header::SET_COOKIE).unwrap().to_str().unwrap().contains("Max-Age=0"));
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &third, None, None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(with_cookie(&app, "GET", "/runtime/tasks", &second, None, None).await.status, StatusCode::OK);

    // Logins count against the same failures as Basic credentials.
    for _ in 0..kairos_server::access::FREE_FAILURES {
        call(&app, "POST", "/auth/login", None, Some(json!({"userId": "piggy", "password": "nope"}))).await;
    }
    let r =
        call(&app, "POST", "/auth/login", None, Some(json!({"userId": "piggy", "password": "piggy-password"}))).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text);
}

#[tokio::test]
async fn a_node_without_users_takes_no_logins_and_an_open_one_needs_none() {
    let open = app().await;
    let r = open.get("/auth/session").await;
    assert_eq!((r.status, r.json["role"].clone()), (StatusCode::OK, json!("admin")));
    let r = open.post("/auth/login", json!({"userId": "x", "password": "y"})).await;
    assert_eq!((r.status, r.error().0), (StatusCode::NOT_FOUND, "no-logins"));
    let mut token_only = app().await;
    token_only.router = kairos_server::router_with_token(token_only.engine.clone(), TOKEN);
    let r = call(&token_only, "POST", "/auth/login", None, Some(json!({"userId": "x", "password": "y"}))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
}

const FORM: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="form" isExecutable="true">
    <startEvent id="start"/><sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve" camunda:candidateGroups="sales">
      <extensionElements><camunda:formData>
        <camunda:formField id="approved" label="Approved?" type="boolean" defaultValue="true"/>
        <camunda:formField id="amount" label="Amount" type="long"/>
        <camunda:formField id="level" type="enum"><camunda:value id="low" name="Low"/><camunda:value id="high" name="High"/></camunda:formField>
      </camunda:formData></extensionElements>
    </userTask>
  </process>
</definitions>"#;

#[tokio::test]
async fn a_tasks_form_comes_from_its_model_on_both_faces() {
    let app = node().await;
    app.engine.processes().deploy("form.bpmn", FORM).await.unwrap();
    let admin = bearer(TOKEN);
    let body = json!({"processDefinitionKey": "form", "variables": [{"name": "amount", "value": 1200}]});
    assert_eq!(
        call(&app, "POST", "/runtime/process-instances", Some(&admin), Some(body)).await.status,
        StatusCode::CREATED
    );
    let gonzo = basic("gonzo", "gonzo-password");
    let id = call(&app, "GET", "/runtime/tasks", Some(&gonzo), None).await.json["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let r = call(&app, "GET", &format!("/form/form-data?taskId={id}"), Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let props = r.json["formProperties"].as_array().unwrap();
    let by = |f: &str| props.iter().find(|p| p["id"] == f).unwrap().clone();
    assert_eq!((by("approved")["type"].clone(), by("approved")["value"].clone()), (json!("boolean"), json!("true")));
    assert_eq!(by("amount")["value"], json!("1200"), "the variable the task sees");
    assert_eq!(by("level")["enumValues"], json!([{"id": "low", "name": "Low"}, {"id": "high", "name": "High"}]));

    let r = call(&app, "GET", &format!("/engine-rest/task/{id}/form-variables"), Some(&gonzo), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json["approved"], json!({"type": "Boolean", "value": true, "valueInfo": {}}));
    assert_eq!(r.json["amount"], json!({"type": "Long", "value": 1200, "valueInfo": {}}));
    assert_eq!(r.json["level"]["value"], json!(null));
    let r =
        call(&app, "GET", &format!("/engine-rest/task/{id}/form-variables?variableNames=amount"), Some(&gonzo), None)
            .await;
    assert_eq!(r.json.as_object().unwrap().len(), 1);
    let piggy = basic("piggy", "piggy-password");
    assert_eq!(
        call(&app, "GET", &format!("/engine-rest/task/{id}/form-variables"), Some(&piggy), None).await.status,
        StatusCode::NOT_FOUND
    );
}
