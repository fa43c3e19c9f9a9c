//! External workers (SPEC I4): service tasks whose work is fetched and locked over HTTP by
//! programs in any language, as Camunda's external tasks and Flowable's external-worker jobs.
//!
//! The job row (TYPE_ 'external-worker', HANDLER_CFG_ = the topic) is the lock: a worker holds
//! LOCK_OWNER_ until LOCK_EXP_TIME_; completing, failing or throwing a BPMN error checks that it
//! still does, in the transaction that records the outcome. A failure spends a retry and, at
//! zero, moves the job to ACT_RU_DEADLETTER_JOB, the same rules as any job.

use super::{Processes, limits};
use crate::Error;
use jiff::{SignedDuration, Timestamp};
use kairos_process::{Command, ErrorKind, ProcessError};
use kairos_store::{Store, Write};
use kairos_store_engine::process as tables;
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::sync::Arc;

pub use kairos_store_engine::process::{ExternalOrder, ExternalQuery, ExternalRow};

/// The longest a fetch may wait for work (Camunda's cap on asyncResponseTimeout: 30 minutes).
pub const MAX_FETCH_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// How often a waiting fetch looks at the store for work this node was not told about (another
/// node's, a retry timeout that passed): each waiting fetch costs one query per period.
pub const FETCH_POLL_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// A locked external task, as a worker receives it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalTask {
    pub id: String,
    pub topic: String,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub execution_id: String,
    /// The service task's id.
    pub element_id: String,
    pub worker_id: String,
    pub lock_expiration_time: Timestamp,
    pub retries: i64,
    pub error_message: Option<String>,
    /// The variables visible at the service task.
    pub variables: Map<String, Json>,
    /// The definition's key, the instance's business key, the task's PRIORITY_ and when it
    /// was created: what Camunda's LockedExternalTaskDto adds (not serialized, so the shape of
    /// `/external-job-api` does not change).
    #[serde(skip)]
    pub process_definition_key: Option<String>,
    #[serde(skip)]
    pub business_key: Option<String>,
    #[serde(skip)]
    pub priority: i64,
    /// Its instance's tenant (`''`: none).
    pub tenant_id: String,
}

/// One topic of a fetch ([`Processes::external_fetch`]): its tasks, how long to lock them,
/// which of them (Camunda's topic filters) and which variables to hand over.
#[derive(Debug, Clone)]
pub struct FetchTopic {
    pub topic: String,
    pub lock: SignedDuration,
    pub definition_ids: Vec<String>,
    pub definition_keys: Vec<String>,
    pub business_key: Option<String>,
    /// Only these variables (`None`: all).
    pub variables: Option<Vec<String>>,
    /// Only the variables of the task's own execution, not those of the scopes above.
    pub local_variables: bool,
    /// Only tasks of these tenants (`''`: of no tenant); `None`: of any (Camunda's
    /// `tenantIdIn` and `withoutTenantId`; a tenant's worker: its own).
    pub tenants: Option<Vec<String>>,
}

impl FetchTopic {
    /// Every task of `topic`, locked for `lock`, with all its variables.
    pub fn new(topic: impl Into<String>, lock: SignedDuration) -> FetchTopic {
        FetchTopic {
            topic: topic.into(),
            lock,
            definition_ids: Vec::new(),
            definition_keys: Vec::new(),
            business_key: None,
            variables: None,
            local_variables: false,
            tenants: None,
        }
    }
}

/// Tasks a fetch locked and the promise to hand them over: dropped before
/// [`Hold::delivered`] (the caller went away before the answer left), it gives the locks back
/// at once, so that no task stays locked to a worker that never heard of it (Camunda locks
/// only what it returns).
#[must_use = "drop it only once the tasks are delivered (Hold::delivered), or to give them back"]
pub struct Hold {
    store: Arc<dyn Store>,
    worker: String,
    locked: Vec<(String, Timestamp)>,
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hold").field("worker", &self.worker).field("locked", &self.locked).finish()
    }
}

impl Hold {
    /// The tasks reached their worker: their locks stay.
    pub fn delivered(mut self) {
        self.locked.clear();
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.locked.is_empty() {
            return;
        }
        let writes: Vec<Write> =
            self.locked.iter().map(|(id, at)| tables::external_unlock_undelivered(id, &self.worker, *at)).collect();
        let (store, worker, n) = (self.store.clone(), self.worker.clone(), writes.len());
        // Drop cannot wait: the release runs on the runtime (if there is none, the locks
        // simply expire).
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                match store.write_all(&writes).await {
                    Ok(_) => tracing::info!(worker, tasks = n, "fetched external tasks were not delivered; unlocked"),
                    Err(e) => tracing::warn!(worker, error = %e, "could not unlock undelivered external tasks; they unlock when their lock expires"),
                }
            });
        }
    }
}

fn error(kind: ErrorKind, message: String) -> Error {
    Error::Process(ProcessError::new(kind, message))
}

impl Processes {
    /// Locks up to `max` due tasks of `topic` for `worker` for `lock`; returns them.
    pub async fn external_acquire(
        &self,
        topic: &str,
        lock: SignedDuration,
        max: usize,
        worker: &str,
    ) -> Result<Vec<ExternalTask>, Error> {
        self.external_acquire_in(None, topic, lock, max, worker).await
    }

    /// [`Processes::external_acquire`] of one tenant's tasks (`None`: any tenant's).
    pub async fn external_acquire_in(
        &self,
        tenant: Option<&str>,
        topic: &str,
        lock: SignedDuration,
        max: usize,
        worker: &str,
    ) -> Result<Vec<ExternalTask>, Error> {
        let mut t = FetchTopic::new(topic, lock);
        t.tenants = tenant.map(|t| vec![t.to_string()]);
        let (tasks, hold) = self.external_fetch(worker, max, false, &[t]).await?;
        hold.delivered();
        Ok(tasks)
    }

    /// Locks up to `max` due tasks of `topics` (in their order; by priority first when
    /// `by_priority`) for `worker`; returns them with the [`Hold`] to settle once they are
    /// delivered.
    pub async fn external_fetch(
        &self,
        worker: &str,
        max: usize,
        by_priority: bool,
        topics: &[FetchTopic],
    ) -> Result<(Vec<ExternalTask>, Hold), Error> {
        let store = self.store.as_ref();
        let mut hold = Hold { store: self.store.clone(), worker: worker.into(), locked: Vec::new() };
        let mut out = Vec::new();
        for topic in topics {
            if out.len() >= max {
                break;
            }
            let now = self.store.db_now().await?;
            let until = now + topic.lock;
            let filter = tables::ExternalFilter {
                topic: topic.topic.clone(),
                definition_ids: topic.definition_ids.clone(),
                definition_keys: topic.definition_keys.clone(),
                business_key: topic.business_key.clone(),
                tenants: topic.tenants.clone(),
                by_priority,
            };
            if tables::external_lock_filtered(store, &filter, worker, now, until, max - out.len()).await? == 0 {
                continue;
            }
            let locked = tables::external_locked(store, &topic.topic, worker, now).await?;
            hold.locked.extend(locked.iter().map(|r| (r.id.clone(), now)));
            for r in locked {
                let (mut variables, key, business_key) =
                    match tables::instance_load(store, &r.process_instance_id).await? {
                        Some(inst) => {
                            let vars = if topic.local_variables {
                                inst.variables
                                    .iter()
                                    .filter(|v| v.execution_id == r.execution_id && v.task_id.is_none())
                                    .map(|v| (v.name.clone(), v.value.clone()))
                                    .collect()
                            } else {
                                inst.visible_variables(&r.execution_id)
                            };
                            (vars, Some(inst.definition_key.clone()), inst.business_key.clone())
                        }
                        None => (Map::new(), None, None),
                    };
                if let Some(names) = &topic.variables {
                    variables.retain(|k, _| names.iter().any(|n| n == k));
                }
                out.push(ExternalTask {
                    id: r.id,
                    topic: topic.topic.clone(),
                    process_instance_id: r.process_instance_id,
                    process_definition_id: r.process_definition_id,
                    execution_id: r.execution_id,
                    element_id: r.element_id,
                    worker_id: worker.into(),
                    lock_expiration_time: r.lock_expiration_time.unwrap_or(until),
                    retries: r.retries,
                    error_message: r.error_message,
                    variables,
                    process_definition_key: key,
                    business_key,
                    priority: r.priority,
                    tenant_id: r.tenant_id,
                });
            }
        }
        Ok((out, hold))
    }

    /// [`Processes::external_fetch`], waiting up to `wait` (at most [`MAX_FETCH_WAIT`]) for
    /// work when there is none: woken at once by work created on this node, and looking at
    /// the store every [`FETCH_POLL_PERIOD`] for the rest. Nothing is locked while it waits;
    /// at the end of `wait` it answers no tasks.
    pub async fn external_fetch_wait(
        &self,
        worker: &str,
        max: usize,
        by_priority: bool,
        topics: &[FetchTopic],
        wait: std::time::Duration,
    ) -> Result<(Vec<ExternalTask>, Hold), Error> {
        let deadline = tokio::time::Instant::now() + wait.min(MAX_FETCH_WAIT);
        loop {
            // Registered before looking, so that work committed meanwhile is not missed.
            let woken = self.external_wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let (tasks, hold) = self.external_fetch(worker, max, by_priority, topics).await?;
            let now = tokio::time::Instant::now();
            let closing = self.external_closing.load(std::sync::atomic::Ordering::SeqCst);
            if !tasks.is_empty() || now >= deadline || closing {
                return Ok((tasks, hold));
            }
            hold.delivered();
            let nap = (deadline - now).min(FETCH_POLL_PERIOD);
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep(nap) => {}
            }
        }
    }

    /// The node's API is stopping: fetches waiting on this node answer what they have (none)
    /// at once, and new ones do not wait, so that a shutdown is not held up to 30 minutes by
    /// long polls. Their workers fetch again from another node.
    pub fn end_fetch_waits(&self) {
        self.external_closing.store(true, std::sync::atomic::Ordering::SeqCst);
        self.external_wake.notify_waiters();
    }

    /// Wakes the fetches waiting on this node: external work may be there.
    pub(crate) fn external_work_arrived(&self) {
        self.external_wake.notify_waiters();
    }

    /// External task `id`, running, suspended or out of retries.
    pub async fn external_task(&self, id: &str) -> Result<ExternalRow, Error> {
        let q = ExternalQuery { id: Some(id.into()), max: 1, ..ExternalQuery::default() };
        tables::external_list(self.store.as_ref(), &q)
            .await?
            .pop()
            .ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))
    }

    /// A page of the external tasks `q` asks for.
    pub async fn external_tasks(&self, q: &ExternalQuery) -> Result<Vec<ExternalRow>, Error> {
        Ok(tables::external_list(self.store.as_ref(), q).await?)
    }

    /// How many external tasks `q` admits.
    pub async fn external_task_count(&self, q: &ExternalQuery) -> Result<u64, Error> {
        Ok(tables::external_count(self.store.as_ref(), q).await?)
    }

    /// The errorDetails of external task `id`'s last failure (`None`: it has none).
    pub async fn external_error_details(&self, id: &str) -> Result<Option<String>, Error> {
        tables::external_details(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))
    }

    /// `worker` keeps external task `id` for `duration` from now (Camunda's extendLock): only
    /// while it holds an unexpired lock on it.
    pub async fn external_extend_lock(&self, id: &str, worker: &str, duration: SignedDuration) -> Result<(), Error> {
        self.locked_by(id, worker).await?;
        let now = self.store.db_now().await?;
        let write = tables::external_extend_lock(id, worker, now, now + duration);
        self.store.write_all(&[write]).await.map_err(|e| match e.kind {
            kairos_store::ErrorKind::Conflict => error(
                ErrorKind::Conflict,
                format!("the lock of worker {worker} on external task {id} has expired: fetch and lock it again"),
            ),
            _ => e.into(),
        })?;
        Ok(())
    }

    /// Locks external task `id` for `worker` for `duration` (Camunda's lock by id): refused
    /// while another worker holds an unexpired lock on it.
    pub async fn external_lock_one(&self, id: &str, worker: &str, duration: SignedDuration) -> Result<(), Error> {
        tables::external_lock_of(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))?;
        let now = self.store.db_now().await?;
        let write = tables::external_lock_one(id, worker, now, now + duration);
        self.store.write_all(&[write]).await.map_err(|e| match e.kind {
            kairos_store::ErrorKind::Conflict => error(
                ErrorKind::Conflict,
                format!("external task {id} is locked by another worker (or has no retries left)"),
            ),
            _ => e.into(),
        })?;
        Ok(())
    }

    /// Releases the lock on external task `id`, whoever holds it: it can be fetched at once.
    pub async fn external_unlock(&self, id: &str) -> Result<(), Error> {
        tables::external_lock_of(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))?;
        self.store.write_all(&[tables::external_unlock(id)]).await.map_err(limits::checked_write)?;
        self.external_work_arrived();
        Ok(())
    }

    /// The instance of external task `id`, after checking that `worker` holds its lock.
    async fn locked_by(&self, id: &str, worker: &str) -> Result<String, Error> {
        let lock = tables::external_lock_of(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))?;
        match lock.owner.as_deref() {
            Some(owner) if owner == worker => Ok(lock.process_instance_id),
            Some(owner) => {
                Err(error(ErrorKind::Conflict, format!("external task {id} is locked by worker {owner}, not {worker}")))
            }
            None => Err(error(
                ErrorKind::Conflict,
                format!("external task {id} is not locked by worker {worker}: fetch and lock it first"),
            )),
        }
    }

    /// The worker did the work: the process goes on past the service task.
    pub async fn external_complete(&self, id: &str, worker: &str, variables: Map<String, Json>) -> Result<(), Error> {
        self.external_complete_with(id, worker, variables, Map::new()).await
    }

    /// [`Processes::external_complete`], also setting `local_variables` in the service task's
    /// scope (Camunda's `localVariables`; see [`Command::CompleteExternal`]).
    pub async fn external_complete_with(
        &self,
        id: &str,
        worker: &str,
        variables: Map<String, Json>,
        local_variables: Map<String, Json>,
    ) -> Result<(), Error> {
        let pi = self.locked_by(id, worker).await?;
        self.command_with(
            self.store.as_ref(),
            &pi,
            Command::CompleteExternal { job_id: id.into(), variables, local_variables },
            &[tables::external_fence(id, worker)],
            &[],
        )
        .await
    }

    /// The worker reports a business error, caught by an error boundary event.
    pub async fn external_bpmn_error(
        &self,
        id: &str,
        worker: &str,
        code: &str,
        variables: Map<String, Json>,
    ) -> Result<(), Error> {
        self.external_bpmn_error_with(id, worker, code, None, variables).await
    }

    /// [`Processes::external_bpmn_error`] with the error's message (Camunda's `errorMessage`),
    /// which the catching event's `errorMessageVariable` receives.
    pub async fn external_bpmn_error_with(
        &self,
        id: &str,
        worker: &str,
        code: &str,
        message: Option<&str>,
        variables: Map<String, Json>,
    ) -> Result<(), Error> {
        let pi = self.locked_by(id, worker).await?;
        let message = message.map(str::to_owned);
        let cmd = Command::ExternalBpmnError { job_id: id.into(), code: code.into(), message, variables };
        self.command_with(self.store.as_ref(), &pi, cmd, &[tables::external_fence(id, worker)], &[]).await
    }

    /// The worker failed: the lock is released, `retries` (default: one less) are left, and the
    /// task is due again after `retry_timeout`; at zero retries it becomes a dead letter.
    pub async fn external_fail(
        &self,
        id: &str,
        worker: &str,
        message: &str,
        retries: Option<i64>,
        retry_timeout: Option<SignedDuration>,
    ) -> Result<i64, Error> {
        self.external_fail_with(id, worker, message, None, retries, retry_timeout).await
    }

    /// [`Processes::external_fail`] with `details` (Camunda's errorDetails: a stack trace),
    /// kept as the task's stack trace until the next failure or its end.
    pub async fn external_fail_with(
        &self,
        id: &str,
        worker: &str,
        message: &str,
        details: Option<&str>,
        retries: Option<i64>,
        retry_timeout: Option<SignedDuration>,
    ) -> Result<i64, Error> {
        self.locked_by(id, worker).await?;
        let retries_now = tables::external_retries(self.store.as_ref(), id).await?;
        let left = retries.unwrap_or_else(|| retries_now.unwrap_or(1) - 1).max(0);
        let now = self.store.db_now().await?;
        let timeout = retry_timeout.unwrap_or(SignedDuration::ZERO);
        let due = now + timeout;
        let message: String = message.chars().take(4000).collect();
        let writes = tables::external_fail_writes(id, worker, left, &message, details, due);
        self.store.write_all(&writes).await.map_err(limits::checked_write)?;
        if left > 0 && timeout.is_zero() {
            self.external_work_arrived();
        }
        Ok(left)
    }

    /// Sets the retries of live job `id` (Camunda's `PUT /job/{id}/retries`; a dead letter is
    /// moved back with `Store::deadletter_move` instead): refused while a node holds a lease
    /// on it, so the attempt under way keeps the retries it started with.
    pub async fn set_job_retries(&self, id: &str, retries: i64) -> Result<(), Error> {
        let now = self.store.db_now().await?;
        self.store.write_all(&[tables::job_retries_write(id, retries, now)]).await.map_err(|e| match e.kind {
            kairos_store::ErrorKind::Conflict => error(
                ErrorKind::Conflict,
                format!("job {id} is running on a node (or is no live job): its retries cannot change now"),
            ),
            _ => e.into(),
        })?;
        Ok(())
    }
}
