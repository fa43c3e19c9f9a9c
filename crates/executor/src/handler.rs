//! Handlers: the code a job runs, registered by name (HANDLER_TYPE_).
//!
//! A handler gets a [`JobContext`] and returns `Ok(message)` (the message goes to the job log)
//! or an error whose whole `source()` chain is kept as the job's stack trace. A handler that
//! panics or runs past its timeout is a failed attempt like any other; it never takes the node
//! down.

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// Any error a handler returns; its `source()` chain is recorded in full.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a handler knows about the attempt it runs.
#[derive(Debug, Clone)]
pub struct JobContext {
    pub job_id: String,
    /// 1 for the first attempt; retries and take-overs count up.
    pub attempt: i32,
    pub handler_type: String,
    /// HANDLER_CFG_ parsed as JSON (`null` when absent).
    pub payload: serde_json::Value,
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub element_id: Option<String>,
    pub tenant_id: Option<String>,
    /// The node running the attempt.
    pub node_id: String,
    /// DUEDATE_ of the job when it was acquired.
    pub due_date: Option<jiff::Timestamp>,
    /// When this attempt started, on the database's clock (lateness = started - due_date).
    pub started: jiff::Timestamp,
    /// This node's own clock at the start (may differ from the database's; informational).
    pub node_now: jiff::Timestamp,
    /// Writes staged with [`JobContext::write_on_success`].
    pub(crate) staged: std::sync::Arc<std::sync::Mutex<Vec<kairos_store::JobEffect>>>,
}

impl JobContext {
    /// Stages a write (one SQL statement with `?` placeholders) to run in the same transaction
    /// that records this attempt's success, and only if this node still holds the job's lease
    /// then. Effects written this way happen exactly once, although the handler itself runs at
    /// least once. Staged writes of an attempt that fails are dropped.
    pub fn write_on_success(&self, sql: impl Into<String>, binds: Vec<kairos_store::SqlValue>) {
        self.staged.lock().unwrap_or_else(|e| e.into_inner()).push(kairos_store::JobEffect { sql: sql.into(), binds });
    }

    /// A key that is the same for every attempt of this job: pass it to external systems as an
    /// idempotency key, since a job whose lease expired may run again (at-least-once).
    pub fn idempotency_key(&self) -> &str {
        &self.job_id
    }
}

#[async_trait]
pub trait Handler: Send + Sync + 'static {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError>;
}

/// A handler made from an async closure.
pub fn handler_fn<F, Fut>(f: F) -> impl Handler
where
    F: Fn(JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<String>, HandlerError>> + Send + 'static,
{
    FnHandler(f)
}

struct FnHandler<F>(F);

#[async_trait]
impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<String>, HandlerError>> + Send + 'static,
{
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        (self.0)(ctx).await
    }
}

/// The handlers of one engine, by name.
#[derive(Clone, Default)]
pub struct Handlers {
    map: BTreeMap<String, Arc<dyn Handler>>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.map.keys()).finish()
    }
}

impl Handlers {
    /// The built-in handlers (`log`, `sleep`, `fail`, `noop`) and nothing else.
    pub fn with_builtins() -> Self {
        let mut h = Handlers::default();
        crate::builtin::register_builtins(&mut h);
        h
    }

    /// Registers (or replaces) the handler for `name`.
    pub fn register(&mut self, name: impl Into<String>, handler: impl Handler) -> &mut Self {
        self.map.insert(name.into(), Arc::new(handler));
        self
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Handler>> {
        self.map.get(name).cloned()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }
}

/// The error and all its causes, one per line: what goes to ACT_GE_BYTEARRAY.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push_str("\ncaused by: ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}
