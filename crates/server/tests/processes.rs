//! The process API (API.md "Processes") over real HTTP: `kairos_server::serve` on a socket,
//! plain HTTP/1.1 requests, on SQLite and on PostgreSQL (`KAIROS_TEST_PG_URL`; skipped without
//! it unless `KAIROS_REQUIRE_PG=1`). The executor is off: these processes run on requests alone.

use kairos::Engine;
use kairos::store::SqlValue;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// An engine on a fresh store, served on 127.0.0.1 until dropped.
struct Server {
    addr: std::net::SocketAddr,
    engine: Arc<Engine>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A reply: status, content type, body as text and (when it is JSON) as JSON.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: String,
    text: String,
    json: Value,
}

impl Reply {
    fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "unexpected reply: {} {}", self.status, self.text);
        &self.json
    }

    /// Asserts an error reply: status, and the field it names (when `field` is given).
    fn refused(&self, status: u16, field: Option<&str>) -> &str {
        assert_eq!(self.status, status, "unexpected reply: {} {}", self.status, self.text);
        let e = &self.json["error"];
        assert!(e["code"].is_string(), "error body: {}", self.text);
        if let Some(f) = field {
            assert_eq!(e["field"].as_str(), Some(f), "the error names {f}: {}", self.text);
        }
        e["message"].as_str().unwrap_or("")
    }
}

async fn server(backend: Backend) -> Option<Server> {
    let (url, dir) = match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            (format!("sqlite://{}/k.db", dir.path().display()), Some(dir))
        }
        Backend::Postgres => (kairos_store_postgres::test_support::fresh_schema_url().await?, None),
    };
    let engine = Arc::new(Engine::builder(url).node_id("test-node").executor_enabled(false).build().await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(kairos_server::serve(engine.clone(), listener, async {
        let _ = stopped.await;
    }));
    Some(Server { addr, engine, stop: Some(stop), _dir: dir })
}

impl Server {
    async fn request(&self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
        let mut s = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.addr);
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(body).await.unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(std::time::Duration::from_secs(30), s.read_to_end(&mut raw))
            .await
            .expect("the server answers within 30 s")
            .unwrap();
        parse_response(&raw)
    }

    async fn get(&self, path: &str) -> Reply {
        self.request("GET", path, None, b"").await
    }
    async fn post(&self, path: &str, body: Value) -> Reply {
        self.request("POST", path, Some("application/json"), body.to_string().as_bytes()).await
    }
    async fn put(&self, path: &str, body: Value) -> Reply {
        self.request("PUT", path, Some("application/json"), body.to_string().as_bytes()).await
    }
    async fn delete(&self, path: &str) -> Reply {
        self.request("DELETE", path, None, b"").await
    }
    async fn deploy_xml(&self, name: &str, xml: &str) -> Reply {
        self.request("POST", &format!("/repository/deployments?name={name}"), Some("application/xml"), xml.as_bytes())
            .await
    }

    /// Rows of `table`, counted with SQL.
    async fn rows(&self, table: &str) -> i64 {
        let rows = self.engine.store().sql_query(&format!("SELECT COUNT(*) FROM {table}"), &[]).await.unwrap();
        rows[0][0].as_i64().unwrap()
    }

    /// Rows of every table a deployment or a start writes.
    async fn written(&self) -> Vec<i64> {
        let mut out = Vec::new();
        for t in [
            "ACT_RE_DEPLOYMENT",
            "ACT_RE_PROCDEF",
            "ACT_GE_BYTEARRAY",
            "ACT_HI_PROCINST",
            "ACT_RU_EXECUTION",
            "ACT_RU_TASK",
            "ACT_RU_VARIABLE",
        ] {
            out.push(self.rows(t).await);
        }
        out
    }

    /// Deploys `xml` and returns the deployment.
    async fn deployed(&self, name: &str, xml: &str) -> Value {
        self.deploy_xml(name, xml).await.ok(201).clone()
    }

    /// Starts `key` and returns the instance.
    async fn started(&self, key: &str, business_key: &str, vars: Value) -> Value {
        let r = self
            .post(
                "/runtime/process-instances",
                json!({"processDefinitionKey": key, "businessKey": business_key, "variables": vars}),
            )
            .await;
        r.ok(201).clone()
    }

    /// The open tasks of an instance.
    async fn tasks_of(&self, pi: &str) -> Vec<Value> {
        let r = self.get(&format!("/runtime/tasks?processInstanceId={pi}")).await;
        r.ok(200)["data"].as_array().unwrap().clone()
    }
}

fn parse_response(raw: &[u8]) -> Reply {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete HTTP head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body);
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Reply { status, content_type: header("content-type").unwrap_or_default(), text, json }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else { return out };
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[eol + 2 + n + 2..];
    }
}

/// A `multipart/form-data` body of `(field, filename?, content)` parts, and its content type.
fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "kairos-test-boundary-7d1f";
    let mut body = Vec::new();
    for (field, file, content) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{field}\"; filename=\"{f}\"\r\nContent-Type: application/xml\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{field}\"\r\n\r\n").as_bytes()),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Fill in → (service task `noop`) → approve → end; the approver comes from a variable.
const ORDER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:kairos="urn:kairos:bpmn" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="order" name="Order" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fill"/>
    <userTask id="fill" name="Fill in" activiti:candidateGroups="clerks"/>
    <sequenceFlow id="f2" sourceRef="fill" targetRef="check"/>
    <serviceTask id="check" name="Check" kairos:handler="noop"/>
    <sequenceFlow id="f3" sourceRef="check" targetRef="approve"/>
    <userTask id="approve" name="Approve" activiti:assignee="${approver}"/>
    <sequenceFlow id="f4" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Waits for a message and a signal side by side, then a task.
const EVENTS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="paid"/>
  <signal id="s" name="alarm"/>
  <process id="events" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fork"/>
    <parallelGateway id="fork"/>
    <sequenceFlow id="f2" sourceRef="fork" targetRef="waitPaid"/>
    <sequenceFlow id="f3" sourceRef="fork" targetRef="waitAlarm"/>
    <intermediateCatchEvent id="waitPaid"><messageEventDefinition messageRef="m"/></intermediateCatchEvent>
    <intermediateCatchEvent id="waitAlarm"><signalEventDefinition signalRef="s"/></intermediateCatchEvent>
    <sequenceFlow id="f4" sourceRef="waitPaid" targetRef="join"/>
    <sequenceFlow id="f5" sourceRef="waitAlarm" targetRef="join"/>
    <parallelGateway id="join"/>
    <sequenceFlow id="f6" sourceRef="join" targetRef="ship"/>
    <userTask id="ship" name="Ship"/>
    <sequenceFlow id="f7" sourceRef="ship" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// One user task.
fn one_task(key: &str) -> String {
    format!(
        r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="{key}" isExecutable="true">
    <startEvent id="start"/><sequenceFlow id="f1" sourceRef="start" targetRef="task"/>
    <userTask id="task" name="Task"/><sequenceFlow id="f2" sourceRef="task" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#
    )
}

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
    assert_eq!(srv.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200)["amount"], 120);

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

async fn a_multipart_form_deploys_every_file_or_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let (a, b) = (one_task("alpha"), one_task("beta"));
    let (ct, body) =
        multipart(&[("file", Some("alpha.bpmn"), a.as_bytes()), ("file", Some("beta.bpmn20.xml"), b.as_bytes())]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let d = r.ok(201);
    let keys: Vec<&str> =
        d["processDefinitions"].as_array().unwrap().iter().map(|p| p["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["alpha", "beta"], "{d}");
    assert_eq!(d["deployments"].as_array().map(Vec::len), Some(2), "{d}");
    let beta = d["processDefinitions"][1]["id"].as_str().unwrap();
    let xml = srv.get(&format!("/repository/process-definitions/{beta}/resourcedata")).await;
    assert_eq!(xml.text, b);

    // One file with a name field.
    let g = one_task("gamma");
    let (ct, body) = multipart(&[("name", None, b"gamma deployment"), ("file", Some("g.bpmn"), g.as_bytes())]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let d = r.ok(201);
    assert_eq!(
        (d["name"].as_str(), d["processDefinitions"][0]["key"].as_str()),
        (Some("gamma deployment"), Some("gamma"))
    );
    assert!(d.get("deployments").is_none(), "{d}");

    // A form whose second file is malformed deploys neither.
    let before = srv.written().await;
    let bad =
        "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n  <process id=\"x\">\n</definitions>";
    let (ct, body) = multipart(&[
        ("file", Some("delta.bpmn"), one_task("delta").as_bytes()),
        ("file", Some("broken.bpmn"), bad.as_bytes()),
    ]);
    let r = srv.request("POST", "/repository/deployments", Some(&ct), &body).await;
    let msg = r.refused(400, None);
    assert!(msg.contains("broken.bpmn") && msg.contains("line 3"), "names the file and the line: {msg}");
    assert_eq!(srv.written().await, before, "nothing written");

    // A form without files, an unknown field, a file that is not UTF-8.
    let (ct, body) = multipart(&[("name", None, b"x")]);
    srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file"));
    let (ct, body) = multipart(&[("tenant", None, b"x"), ("file", Some("a.bpmn"), a.as_bytes())]);
    let msg =
        srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file")).to_string();
    assert!(msg.contains("tenant"), "{msg}");
    let (ct, body) = multipart(&[("file", Some("latin1.bpmn"), b"<definitions name=\"caf\xe9\"/>")]);
    let msg =
        srv.request("POST", "/repository/deployments", Some(&ct), &body).await.refused(400, Some("file")).to_string();
    assert!(msg.contains("UTF-8") && msg.contains("latin1.bpmn"), "{msg}");
    assert_eq!(srv.written().await, before, "nothing written");
}

async fn two_concurrent_completions_of_one_task_one_wins(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("race", &one_task("race")).await;
    let pi = srv.started("race", "RACE-1", json!({})).await["id"].as_str().unwrap().to_string();
    let task = srv.tasks_of(&pi).await[0]["id"].as_str().unwrap().to_string();
    let path = format!("/runtime/tasks/{task}");
    let (a, b) = tokio::join!(
        srv.post(&path, json!({"action": "complete", "variables": {"by": "a"}})),
        srv.post(&path, json!({"action": "complete", "variables": {"by": "b"}})),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    let won = statuses.iter().filter(|s| **s == 200 || **s == 204).count();
    let lost = statuses.iter().filter(|s| **s == 409 || **s == 404).count();
    assert_eq!((won, lost), (1, 1), "one wins, one is refused: {} {} / {} {}", a.status, a.text, b.status, b.text);
    let loser = if a.status >= 400 { &a } else { &b };
    assert!(matches!(loser.json["error"]["code"].as_str(), Some("conflict" | "not-found")), "{}", loser.text);
    let r = srv.get(&format!("/history/historic-process-instances?processInstanceId={pi}")).await;
    assert_eq!(r.ok(200)["data"][0]["ended"], true);
    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let n = r.ok(200)["data"].as_array().unwrap().iter().filter(|a| a["activityId"] == "task").count();
    assert_eq!(n, 1, "the task was done once: {}", r.text);
}

/// SPEC C2 over HTTP: a start or completion retried with its requestId gets the first result;
/// concurrent duplicates have one effect; a requestId reused for another request is a 409.
async fn request_ids_make_starts_and_completions_idempotent(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("idem", &one_task("idem")).await;
    let start = |bk: &str, rid: &str| json!({"processDefinitionKey": "idem", "businessKey": bk, "requestId": rid});

    // A retried start: the first instance, the same answer, one instance.
    let first = srv.post("/runtime/process-instances", start("IDEM-1", "s-1")).await.ok(201).clone();
    let again = srv.post("/runtime/process-instances", start("IDEM-1", "s-1")).await.ok(201).clone();
    assert_eq!(first, again, "a retry gets the first answer");
    let running = srv.get("/runtime/process-instances?businessKey=IDEM-1").await;
    assert_eq!(running.ok(200)["total"], 1, "{}", running.text);

    // Concurrent duplicates: every caller gets the one instance that was started.
    let path = "/runtime/process-instances";
    let (a, b, c, d) = tokio::join!(
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
        srv.post(path, start("IDEM-2", "s-2")),
    );
    let ids: Vec<&str> = [&a, &b, &c, &d].iter().map(|r| r.ok(201)["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one instance for all: {ids:?}");
    let running = srv.get("/runtime/process-instances?businessKey=IDEM-2").await;
    assert_eq!(running.ok(200)["total"], 1, "{}", running.text);

    // A requestId reused for another request: 409 naming it, nothing written.
    let before = srv.written().await;
    let r = srv.post(path, start("IDEM-3", "s-1")).await;
    let msg = r.refused(409, Some("requestId")).to_string();
    assert!(msg.contains("s-1") && msg.contains("other parameters"), "{msg}");
    for bad in [String::new(), "x".repeat(65)] {
        srv.post(path, start("IDEM-4", &bad)).await.refused(400, Some("requestId"));
    }
    assert_eq!(srv.written().await, before, "nothing written");

    // A retried completion succeeds again; a completion without it is a conflict.
    let pi = first["id"].as_str().unwrap();
    let task = srv.tasks_of(pi).await[0]["id"].as_str().unwrap().to_string();
    let task_path = format!("/runtime/tasks/{task}");
    let complete = |rid: &str, by: &str| json!({"action": "complete", "variables": {"by": by}, "requestId": rid});
    assert_eq!(srv.post(&task_path, complete("c-1", "a")).await.status, 204);
    assert_eq!(srv.post(&task_path, complete("c-1", "a")).await.status, 204, "a retry succeeds");
    srv.post(&task_path, json!({"action": "complete"})).await.refused(409, None);
    srv.post(&task_path, complete("c-1", "b")).await.refused(409, Some("requestId"));
    srv.post(&task_path, complete("s-1", "a")).await.refused(409, Some("requestId"));

    // Concurrent duplicate completions: both succeed, the task was done once.
    let pi = ids[0];
    let task = srv.tasks_of(pi).await[0]["id"].as_str().unwrap().to_string();
    let task_path = format!("/runtime/tasks/{task}");
    let (a, b) = tokio::join!(srv.post(&task_path, complete("c-2", "a")), srv.post(&task_path, complete("c-2", "a")));
    assert_eq!((a.status, b.status), (204, 204), "{} / {}", a.text, b.text);
    let r = srv.get(&format!("/history/historic-activity-instances?processInstanceId={pi}")).await;
    let n = r.ok(200)["data"].as_array().unwrap().iter().filter(|a| a["activityId"] == "task").count();
    assert_eq!(n, 1, "the task was done once: {}", r.text);
    assert_eq!(srv.rows("KAIROS_REQUEST").await, 4, "s-1, s-2, c-1, c-2");

    // Signals and messages take one too: a retried broadcast answers as the first did.
    let signal = |rid: &str| json!({"signalName": "nobody-listens", "requestId": rid});
    let first = srv.post("/runtime/signals", signal("g-1")).await.ok(200).clone();
    assert_eq!(srv.post("/runtime/signals", signal("g-1")).await.ok(200).clone(), first);
    srv.post("/runtime/signals", signal(&"x".repeat(65))).await.refused(400, Some("requestId"));
    let message = json!({"messageName": "nobody-waits", "requestId": "s-1"});
    srv.post("/runtime/messages", message).await.refused(409, Some("requestId"));
}

async fn bad_deployments_are_refused_naming_what_is_wrong_and_write_nothing(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    let before = srv.written().await;

    let malformed = "<?xml version=\"1.0\"?>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n  <process id=\"p\">\n    <startEvent id=\"s\">\n  </process>\n</definitions>";
    let r = srv.deploy_xml("bad", malformed).await;
    let msg = r.refused(400, None);
    assert_eq!(r.json["error"]["code"], "invalid-bpmn", "{}", r.text);
    assert!(msg.contains("line 5"), "names the line: {msg}");

    let dtd = "<?xml version=\"1.0\"?>\n<!DOCTYPE definitions [<!ENTITY x \"y\">]>\n<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"/>";
    let msg = srv.deploy_xml("dtd", dtd).await.refused(400, None).to_string();
    assert!(msg.contains("DOCTYPE") && msg.contains("line 2"), "{msg}");

    let unknown = ORDER.replace("kairos:handler=\"noop\"", "kairos:handler=\"no-such-handler\"");
    let msg = srv.deploy_xml("unknown", &unknown).await.refused(400, None).to_string();
    assert!(msg.contains("no-such-handler") && msg.contains("check"), "names the handler and the element: {msg}");

    let r = srv
        .request("POST", "/repository/deployments", Some("application/xml"), b"<definitions name=\"caf\xe9\"/>")
        .await;
    assert!(r.refused(400, Some("body")).contains("UTF-8"), "{}", r.text);
    srv.request("POST", "/repository/deployments", Some("application/xml"), b"").await.refused(400, Some("body"));
    let r = srv.request("POST", "/repository/deployments", Some("application/json"), b"{}").await;
    assert!(r.refused(415, None).contains("application/xml"), "{}", r.text);
    srv.deploy_xml(&"n".repeat(300), ORDER).await.refused(400, Some("name"));
    srv.request("POST", "/repository/deployments?tenant=x", Some("application/xml"), ORDER.as_bytes())
        .await
        .refused(400, None);

    // Over the parser's 10 MiB: 413 (in-process: over a socket the server may close before
    // the client has sent it all).
    let big = format!("<definitions>{}</definitions>", " ".repeat(11 * 1024 * 1024));
    let req = axum::http::Request::post("/repository/deployments")
        .header("content-type", "application/xml")
        .body(axum::body::Body::from(big))
        .unwrap();
    let res = tower::ServiceExt::oneshot(kairos_server::router(srv.engine.clone()), req).await.unwrap();
    assert_eq!(res.status(), 413);
    let body = http_body_util::BodyExt::collect(res.into_body()).await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("10 MiB"), "{body:?}");
    assert_eq!(srv.written().await, before, "nothing written");

    // Between 2 MiB (the JSON limit) and 10 MiB: read, and judged by the parser.
    let padded = ORDER.replace(
        "<startEvent id=\"start\"/>",
        &format!("<startEvent id=\"start\"/><!--{}-->", "x".repeat(3 * 1024 * 1024)),
    );
    let r = srv.deploy_xml("padded", &padded).await;
    assert_eq!(r.ok(201)["processDefinitions"][0]["key"], "order");

    // Definitions: unknown id, bad action, a suspended definition starts nothing.
    srv.get("/repository/process-definitions/nope").await.refused(404, None);
    srv.get("/repository/process-definitions?latest=yes").await.refused(400, Some("latest"));
    let def = srv.get("/repository/process-definitions?key=order").await.ok(200)["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/repository/process-definitions/{def}");
    srv.put(&path, json!({"action": "pause"})).await.refused(400, Some("action"));
    assert_eq!(srv.put(&path, json!({"action": "suspend"})).await.ok(200)["suspended"], true);
    let before = srv.written().await;
    let r = srv.post("/runtime/process-instances", json!({"processDefinitionKey": "order"})).await;
    assert!(r.refused(409, None).contains("suspended"), "{}", r.text);
    assert_eq!(srv.written().await, before, "nothing written");
    assert_eq!(srv.put(&path, json!({"action": "activate"})).await.ok(200)["suspended"], false);
    srv.started("order", "OK-1", json!({})).await;
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
    assert!(msg.contains("object"), "{msg}");
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
    srv.post(&t, json!({"action": "claim"})).await.refused(400, Some("assignee"));
    srv.post(&t, json!({"action": "claim", "assignee": ""})).await.refused(400, Some("assignee"));
    srv.post(&t, json!({"action": "finish"})).await.refused(400, Some("action"));
    srv.post(&t, json!({})).await.refused(400, Some("action"));
    srv.post(&t, json!({"action": "complete", "variables": 5})).await.refused(400, Some("variables"));
    srv.post(&t, json!({"action": "complete", "outcome": "ok"})).await.refused(400, None);
    srv.get("/runtime/tasks/no-such-task").await.refused(404, None);
    srv.get("/runtime/tasks?owner=x").await.refused(400, None);
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
    assert_eq!(srv.get(&format!("{p}/variables")).await.ok(200).clone(), json!({"amount": 1}));
}

async fn instances_are_suspended_signalled_messaged_and_deleted(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("events", EVENTS).await;
    let a = srv.started("events", "EV-A", json!({})).await["id"].as_str().unwrap().to_string();
    let b = srv.started("events", "EV-B", json!({})).await["id"].as_str().unwrap().to_string();
    assert_eq!(srv.get("/runtime/process-instances?processDefinitionKey=events").await.ok(200)["total"], 2);

    // Variables, read and written.
    let r = srv.put(&format!("/runtime/process-instances/{a}/variables"), json!({"x": 1, "y": {"deep": [true]}})).await;
    assert_eq!(r.ok(200).clone(), json!({"x": 1, "y": {"deep": [true]}}));

    // Suspend and activate.
    let p = format!("/runtime/process-instances/{a}");
    assert_eq!(srv.put(&p, json!({"action": "suspend"})).await.ok(200)["suspended"], true);
    let execs = srv.get(&format!("/runtime/executions?processInstanceId={a}")).await;
    assert!(execs.ok(200)["data"].as_array().unwrap().iter().all(|e| e["suspended"] == true), "{}", execs.text);
    assert_eq!(srv.put(&p, json!({"action": "activate"})).await.ok(200)["suspended"], false);

    // Two instances wait for "paid": the message must say which.
    let r = srv.post("/runtime/messages", json!({"messageName": "paid"})).await;
    assert!(r.refused(409, None).contains("businessKey"), "{}", r.text);
    let r = srv
        .post(
            "/runtime/messages",
            json!({"messageName": "paid", "businessKey": "EV-A", "variables": {"paidBy": "card"}}),
        )
        .await;
    assert_eq!(r.ok(200)["processInstanceId"], a.as_str());
    let r = srv.post("/runtime/messages", json!({"messageName": "paid", "processInstanceId": b})).await;
    assert_eq!(r.ok(200)["processInstanceId"], b.as_str());
    let r = srv.post("/runtime/signals", json!({"signalName": "alarm"})).await;
    assert_eq!(r.ok(200)["received"], 2);
    assert_eq!(srv.get(&format!("{p}/variables")).await.ok(200)["paidBy"], "card");
    assert_eq!(srv.tasks_of(&a).await[0]["taskDefinitionKey"], "ship");
    assert_eq!(srv.tasks_of(&b).await.len(), 1);

    // Delete one: 204, its history keeps the reason.
    assert_eq!(
        srv.delete(&format!("/runtime/process-instances/{b}?deleteReason=cancelled%20by%20customer")).await.status,
        204
    );
    srv.get(&format!("/runtime/process-instances/{b}")).await.refused(404, None);
    let r = srv.get(&format!("/history/historic-process-instances?processInstanceId={b}")).await;
    let h = r.ok(200)["data"][0].clone();
    assert_eq!((h["ended"].as_bool(), h["deleteReason"].as_str()), (Some(true), Some("cancelled by customer")), "{h}");
    let r = srv.get(&format!("/history/historic-task-instances?processInstanceId={b}")).await;
    let t = r.ok(200)["data"][0].clone();
    assert!(t["endTime"].is_string(), "the open task ended with the instance: {t}");
    assert_eq!(srv.get("/runtime/process-instances?processDefinitionKey=events").await.ok(200)["total"], 1);
    assert_eq!(srv.get(&format!("/runtime/executions?processInstanceId={b}")).await.ok(200)["total"], 0);
}

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
    assert_eq!(task["variables"]["amount"], json!(7));
    let id = task["id"].as_str().unwrap().to_string();
    assert_eq!(
        s.post("/external-job-api/acquire/jobs", acquire("w2")).await.ok(200).as_array().unwrap().len(),
        0,
        "locked"
    );
    s.post(&format!("/external-job-api/acquire/jobs/{id}/complete"), json!({"workerId": "w2"}))
        .await
        .refused(409, None);
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
        .await
        .ok(200)
        .clone();
    assert_eq!(r["retries"], json!(1));
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
    assert_eq!(again[0]["errorMessage"], json!("gateway down"));
    let r = s
        .post(
            &format!("/external-job-api/acquire/jobs/{id}/fail"),
            json!({"workerId": "w1", "errorMessage": "still down"}),
        )
        .await
        .ok(200)
        .clone();
    assert_eq!(r["deadLetter"], json!(true));
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

macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::Backend::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::Backend::Postgres).await } )*
        }
    };
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
    assert_eq!(r.ok(200).clone(), json!({"amount": 1, "note": "draft"}));
    assert_eq!(srv.get(&format!("{vars}?scope=local")).await.ok(200).clone(), json!({"amount": 1, "note": "draft"}));
    assert_eq!(srv.get(&format!("{vars}?scope=global")).await.ok(200).clone(), json!({"amount": 120}));
    srv.put(&vars, json!({"approvedBy": "gonzo"})).await.ok(200);
    let instance = srv.get(&format!("/runtime/process-instances/{pi}/variables")).await.ok(200).clone();
    assert_eq!(instance, json!({"amount": 120, "approvedBy": "gonzo"}), "locals are not the instance's");
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

/// `POST /runtime/process-instances/{id}/migrate` (SPEC P13): a mapping problem is a 400
/// naming the activity; a good mapping moves the instance and its task.
async fn an_instance_migrates_over_http(backend: Backend) {
    let Some(srv) = server(backend).await else { return };
    srv.deployed("mig", &one_task("mig")).await;
    let pi = srv.started("mig", "MIG-1", json!({})).await["id"].as_str().unwrap().to_string();
    let v2 = one_task("mig").replace("\"task\"", "\"approve\"").replace("name=\"Task\"", "name=\"Approve\"");
    let v2_id = srv.deployed("mig", &v2).await["processDefinitions"][0]["id"].as_str().unwrap().to_string();
    let path = format!("/runtime/process-instances/{pi}/migrate");
    let msg = srv.post(&path, json!({})).await.refused(400, Some("task")).to_string();
    assert!(msg.contains("has no 'task'"), "{msg}");
    srv.post(&path, json!({"activityMappings": [{"fromActivityId": "task"}]})).await.refused(400, Some("toActivityId"));
    srv.post(&path, json!({"toVersion": 2})).await.refused(400, None);
    let body = json!({"toProcessDefinitionVersion": 2, "activityMappings": [{"fromActivityId": "task", "toActivityId": "approve"}]});
    let moved = srv.post(&path, body).await.ok(200).clone();
    assert_eq!(moved["processDefinitionId"], v2_id.as_str());
    let task = &srv.tasks_of(&pi).await[0];
    assert_eq!((task["taskDefinitionKey"].as_str(), task["name"].as_str()), (Some("approve"), Some("Approve")));
    srv.post("/runtime/process-instances/nope/migrate", json!({})).await.refused(404, None);
    // Every running instance of a definition at once (here: v2's one, to the latest, v2).
    let all = srv.post(&format!("/repository/process-definitions/{v2_id}/migrate"), json!({})).await.ok(200).clone();
    assert_eq!(all["migrated"], 1, "{all}");
    assert_eq!(all["instances"][0]["processInstanceId"], pi.as_str(), "{all}");
    srv.post("/repository/process-definitions/nope/migrate", json!({})).await.refused(404, None);
}

on_both_backends!(
    an_instance_migrates_over_http,
    task_variables_are_local_or_global,
    external_workers_fetch_lock_complete_fail_and_throw,
    a_process_runs_over_http_from_deployment_to_history,
    a_multipart_form_deploys_every_file_or_nothing,
    two_concurrent_completions_of_one_task_one_wins,
    request_ids_make_starts_and_completions_idempotent,
    bad_deployments_are_refused_naming_what_is_wrong_and_write_nothing,
    bad_instance_and_task_requests_are_refused_naming_the_field_and_write_nothing,
    instances_are_suspended_signalled_messaged_and_deleted,
);
