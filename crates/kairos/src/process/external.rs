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
use kairos_store_engine::process as tables;
use serde::Serialize;
use serde_json::{Map, Value as Json};

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
        let now = self.store.db_now().await?;
        let until = now + lock;
        let store = self.store.as_ref();
        tables::external_lock(store, topic, worker, now, until, max).await?;
        let mut out = Vec::new();
        for r in tables::external_locked(store, topic, worker, now).await? {
            let variables = match tables::instance_load(store, &r.process_instance_id).await? {
                Some(inst) => inst.visible_variables(&r.execution_id),
                None => Map::new(),
            };
            out.push(ExternalTask {
                id: r.id,
                topic: topic.into(),
                process_instance_id: r.process_instance_id,
                process_definition_id: r.process_definition_id,
                execution_id: r.execution_id,
                element_id: r.element_id,
                worker_id: worker.into(),
                lock_expiration_time: r.lock_expiration_time.unwrap_or(until),
                retries: r.retries,
                error_message: r.error_message,
                variables,
            });
        }
        Ok(out)
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
        let pi = self.locked_by(id, worker).await?;
        self.command_with(
            self.store.as_ref(),
            &pi,
            Command::CompleteExternal { job_id: id.into(), variables },
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
        let pi = self.locked_by(id, worker).await?;
        let cmd = Command::ExternalBpmnError { job_id: id.into(), code: code.into(), variables };
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
        self.locked_by(id, worker).await?;
        let retries_now = tables::external_retries(self.store.as_ref(), id).await?;
        let left = retries.unwrap_or_else(|| retries_now.unwrap_or(1) - 1).max(0);
        let now = self.store.db_now().await?;
        let due = now + retry_timeout.unwrap_or(SignedDuration::ZERO);
        let message: String = message.chars().take(4000).collect();
        let writes = tables::external_fail_writes(id, worker, left, &message, due);
        self.store.write_all(&writes).await.map_err(limits::checked_write)?;
        Ok(left)
    }
}
