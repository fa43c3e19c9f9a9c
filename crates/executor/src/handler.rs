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
    /// What a service task's handler answered with [`JobContext::answer`].
    pub(crate) answer: std::sync::Arc<std::sync::Mutex<Option<Answer>>>,
}

/// Data a service task's handler hands back to its process (an HTTP endpoint's JSON reply):
/// `result` goes to the task's `resultVariable`, `variables` are set as the task's outputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub result: Option<serde_json::Value>,
    pub variables: serde_json::Map<String, serde_json::Value>,
}

impl JobContext {
    /// Stages a write (one SQL statement with `?` placeholders) to run in the same transaction
    /// that records this attempt's success, and only if this node still holds the job's lease
    /// then. Effects written this way happen exactly once, although the handler itself runs at
    /// least once. Staged writes of an attempt that fails are dropped.
    pub fn write_on_success(&self, sql: impl Into<String>, binds: Vec<kairos_store::SqlValue>) {
        self.stage(kairos_store::Write::new(sql, binds));
    }

    /// Stages a write like [`JobContext::write_on_success`], with the rows it must affect: if it
    /// affects another number when the success is recorded, the completion is refused as a
    /// conflict and the job is handed back to run again on fresh state, no retry spent. The
    /// process engine stages a command's whole outcome this way (REV_-checked).
    pub fn stage(&self, write: kairos_store::Write) {
        self.staged.lock().unwrap_or_else(|e| e.into_inner()).push(write);
    }

    /// A context for a handler run outside a job: a process's service task, executed inside the
    /// command that reached it. `key` is its idempotency key (the execution and the element);
    /// what the handler stages with [`JobContext::write_on_success`] is returned by
    /// [`JobContext::take_staged`] and committed with the command's own writes.
    #[allow(clippy::too_many_arguments)]
    pub fn for_service_task(
        key: String,
        handler: &str,
        payload: serde_json::Value,
        process_instance_id: &str,
        execution_id: &str,
        element_id: &str,
        node_id: &str,
        now: jiff::Timestamp,
    ) -> JobContext {
        JobContext {
            job_id: key,
            attempt: 1,
            handler_type: handler.to_string(),
            payload,
            process_instance_id: Some(process_instance_id.to_string()),
            execution_id: Some(execution_id.to_string()),
            element_id: Some(element_id.to_string()),
            tenant_id: None,
            node_id: node_id.to_string(),
            due_date: None,
            started: now,
            node_now: jiff::Timestamp::now(),
            staged: Default::default(),
            answer: Default::default(),
        }
    }

    /// Answers the service task this handler runs for with data (a job's handler has no
    /// process to answer: there it is dropped). Replaces an earlier answer.
    pub fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
    }

    /// The answer given with [`JobContext::answer`], if any (taken).
    pub fn take_answer(&self) -> Option<Answer> {
        self.answer.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The writes staged so far (emptied).
    pub fn take_staged(&self) -> Vec<kairos_store::Write> {
        std::mem::take(&mut *self.staged.lock().unwrap_or_else(|e| e.into_inner()))
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

    /// Registers an already shared handler under `name` as well (an alias).
    pub fn register_shared(&mut self, name: impl Into<String>, handler: Arc<dyn Handler>) -> &mut Self {
        self.map.insert(name.into(), handler);
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
