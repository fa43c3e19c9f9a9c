//! Shared by the HTTP tests: an engine on a fresh SQLite file, the router driven in-process
//! with `oneshot`, and fixtures made through the store's own operations.
#![allow(dead_code)]

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use kairos::store::{JobAcquireParams, JobCompletion};
use kairos::{Completion, Engine, EnqueueRequest, Job, JobTable, SignedDuration};
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

/// An engine with its executor off (jobs stay where the test puts them) and its router.
pub struct App {
    pub engine: Arc<Engine>,
    pub router: Router,
    _dir: Option<tempfile::TempDir>,
}

pub async fn app() -> App {
    app_with(|b| b.executor_enabled(false)).await
}

pub async fn app_with(f: impl FnOnce(kairos::EngineBuilder) -> kairos::EngineBuilder) -> App {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/k.db", dir.path().display());
    let engine = Arc::new(f(Engine::builder(url).node_id("test-node")).build().await.unwrap());
    App { router: kairos_server::router(engine.clone()), engine, _dir: Some(dir) }
}

/// A response, its body as JSON when it is JSON and as text always.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub text: String,
    pub json: Value,
}

impl Reply {
    /// The error code and message of an error body.
    pub fn error(&self) -> (&str, &str) {
        let e = &self.json["error"];
        (e["code"].as_str().unwrap_or_else(|| panic!("no error body: {self:?}")), e["message"].as_str().unwrap_or(""))
    }
}

impl App {
    /// An app over an engine the test built itself (and whose files it keeps alive).
    pub fn from_engine(engine: Arc<Engine>) -> App {
        App { router: kairos_server::router(engine.clone()), engine, _dir: None }
    }

    pub async fn send(&self, method: Method, uri: &str, body: Option<Vec<u8>>) -> Reply {
        let mut req = Request::builder().method(method).uri(uri);
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        let req = req.body(body.map(Body::from).unwrap_or_else(Body::empty)).unwrap();
        self.call(req).await
    }

    pub async fn call(&self, req: Request<Body>) -> Reply {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let content_type =
            res.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { status, content_type, text, json }
    }

    pub async fn get(&self, uri: &str) -> Reply {
        self.send(Method::GET, uri, None).await
    }
    pub async fn post(&self, uri: &str, body: Value) -> Reply {
        self.send(Method::POST, uri, Some(body.to_string().into_bytes())).await
    }
    pub async fn post_raw(&self, uri: &str, body: &str) -> Reply {
        self.send(Method::POST, uri, Some(body.as_bytes().to_vec())).await
    }
    pub async fn delete(&self, uri: &str) -> Reply {
        self.send(Method::DELETE, uri, None).await
    }

    /// Rows in ACT_RU_JOB and ACT_RU_DEADLETTER_JOB, counted with SQL.
    pub async fn job_rows(&self) -> i64 {
        let rows = self
            .engine
            .store()
            .sql_query("SELECT (SELECT COUNT(*) FROM ACT_RU_JOB) + (SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB)", &[])
            .await
            .unwrap();
        rows[0][0].as_i64().unwrap()
    }

    /// Enqueues through the engine (not HTTP), for fixtures.
    pub async fn enqueue(&self, req: EnqueueRequest) -> Job {
        self.engine.enqueue(&req).await.unwrap()
    }

    /// Locks every due job for `node` (as another node's acquisition would).
    pub async fn acquire(&self, node: &str, lock_time: SignedDuration) -> Vec<Job> {
        let params =
            JobAcquireParams { node: node.into(), limit: 100, lock_time, now: None, lookahead: SignedDuration::ZERO };
        let got = self.engine.store().job_acquire(&params).await.unwrap();
        got.jobs.into_iter().map(|a| a.job).collect()
    }

    /// Finishes an acquired attempt as `completion`.
    pub async fn complete(&self, job: &Job, completion: Completion) {
        let now = self.engine.store().db_now().await.unwrap();
        let c = JobCompletion {
            job_id: job.id.clone(),
            node: job.lock_owner.clone().unwrap(),
            attempt: job.attempts,
            started: now,
            finished: now,
            completion,
            effects: Vec::new(),
        };
        let applied = self.engine.store().job_complete_many(&[c]).await.unwrap();
        assert_eq!(applied, vec![true], "completion of {} was not applied", job.id);
    }

    /// A dead letter made the way the executor makes one: acquire, then fail the last retry.
    /// Make it before other due jobs: the acquisition locks every due job.
    pub async fn dead_letter(&self, handler: &str) -> Job {
        let job =
            self.enqueue(EnqueueRequest { handler: handler.into(), retries: Some(1), ..Default::default() }).await;
        let locked = self.acquire("other-node", SignedDuration::from_mins(5)).await;
        let locked = locked.into_iter().find(|j| j.id == job.id).expect("the new job is acquired");
        let completion = Completion::DeadLetter {
            message: "boom: the service said no".into(),
            stack: "boom: the service said no\ncaused by: connection refused".into(),
        };
        self.complete(&locked, completion).await;
        let dl = self.engine.store().job_get(JobTable::DeadLetter, &job.id).await.unwrap();
        dl.expect("the job is a dead letter")
    }
}

/// A request body of `n` bytes of payload text.
pub fn big_payload_body(n: usize) -> Vec<u8> {
    format!(r#"{{"handler":"log","payload":{{"blob":"{}"}}}}"#, "x".repeat(n)).into_bytes()
}

pub fn ok_json(r: &Reply, status: StatusCode) -> &Value {
    assert_eq!(r.status, status, "unexpected reply: {} {}", r.status, r.text);
    &r.json
}
