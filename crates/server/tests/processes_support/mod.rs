//! What the processes_* test binaries share: an engine served on 127.0.0.1 on either backend,
//! plain HTTP/1.1 requests and their replies, the models several tests deploy, and one test per
//! backend for each test body.

#![allow(dead_code)]

use kairos::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// An engine on a fresh store, served on 127.0.0.1 until dropped.
pub struct Server {
    pub addr: std::net::SocketAddr,
    pub engine: Arc<Engine>,
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
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    /// The status line and headers as sent.
    pub head: String,
    pub text: String,
    pub json: Value,
}

impl Reply {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .skip(1)
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
    }

    pub fn ok(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "unexpected reply: {} {}", self.status, self.text);
        &self.json
    }

    /// Asserts an error reply: status, and the field it names (when `field` is given).
    pub fn refused(&self, status: u16, field: Option<&str>) -> &str {
        assert_eq!(self.status, status, "unexpected reply: {} {}", self.status, self.text);
        let e = &self.json["error"];
        assert!(e["code"].is_string(), "error body: {}", self.text);
        if let Some(f) = field {
            assert_eq!(e["field"].as_str(), Some(f), "the error names {f}: {}", self.text);
        }
        e["message"].as_str().unwrap_or("")
    }
}

pub async fn server(backend: Backend) -> Option<Server> {
    server_with(backend, None).await
}

/// [`server`] for the holders of `token` only (`kairos serve --api-token`).
pub async fn server_with(backend: Backend, token: Option<&str>) -> Option<Server> {
    let (url, dir) = match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            (format!("sqlite://{}/k.db", dir.path().display()), Some(dir))
        }
        Backend::Postgres => (kairos_store_postgres::test_support::fresh_schema_url().await?, None),
    };
    let engine = Arc::new(Engine::builder(url).node_id("test-node").executor_enabled(false).build().await.unwrap());
    let engine_for_server = engine.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let token = token.map(str::to_string);
    tokio::spawn(async move {
        kairos_server::serve_with_token(
            engine_for_server,
            listener,
            async {
                let _ = stopped.await;
            },
            token.as_deref(),
        )
        .await
    });
    Some(Server { addr, engine, stop: Some(stop), _dir: dir })
}

impl Server {
    pub async fn request(&self, method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Reply {
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

    pub async fn get(&self, path: &str) -> Reply {
        self.request("GET", path, None, b"").await
    }
    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.request("POST", path, Some("application/json"), body.to_string().as_bytes()).await
    }
    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.request("PUT", path, Some("application/json"), body.to_string().as_bytes()).await
    }
    pub async fn delete(&self, path: &str) -> Reply {
        self.request("DELETE", path, None, b"").await
    }
    pub async fn deploy_xml(&self, name: &str, xml: &str) -> Reply {
        self.request("POST", &format!("/repository/deployments?name={name}"), Some("application/xml"), xml.as_bytes())
            .await
    }

    /// Rows of `table`, counted with SQL.
    pub async fn rows(&self, table: &str) -> i64 {
        let rows = self.engine.store().sql_query(&format!("SELECT COUNT(*) FROM {table}"), &[]).await.unwrap();
        rows[0][0].as_i64().unwrap()
    }

    /// Rows of every table a deployment or a start writes.
    pub async fn written(&self) -> Vec<i64> {
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
    pub async fn deployed(&self, name: &str, xml: &str) -> Value {
        self.deploy_xml(name, xml).await.ok(201).clone()
    }

    /// Starts `key` and returns the instance.
    pub async fn started(&self, key: &str, business_key: &str, vars: Value) -> Value {
        let r = self
            .post(
                "/runtime/process-instances",
                json!({"processDefinitionKey": key, "businessKey": business_key, "variables": vars}),
            )
            .await;
        r.ok(201).clone()
    }

    /// The open tasks of an instance.
    pub async fn tasks_of(&self, pi: &str) -> Vec<Value> {
        let r = self.get(&format!("/runtime/tasks?processInstanceId={pi}")).await;
        r.ok(200)["data"].as_array().unwrap().clone()
    }
}

pub fn parse_response(raw: &[u8]) -> Reply {
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
    Reply { status, content_type: header("content-type").unwrap_or_default(), head, text, json }
}

pub fn dechunk(mut b: &[u8]) -> Vec<u8> {
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

/// Fill in → (service task `noop`) → approve → end; the approver comes from a variable.
pub const ORDER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
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

/// One user task.
pub fn one_task(key: &str) -> String {
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

#[macro_export]
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

/// Flowable's variable list `[{"name", "type", "value"}]` as an object `{name: value}`.
pub fn as_map(list: &Value) -> Value {
    let items = list.as_array().unwrap_or_else(|| panic!("a variable list: {list}"));
    Value::Object(items.iter().map(|v| (v["name"].as_str().unwrap().to_string(), v["value"].clone())).collect())
}
