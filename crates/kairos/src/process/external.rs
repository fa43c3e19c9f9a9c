//! External workers (SPEC I4): service tasks whose work is fetched and locked over HTTP by
//! programs in any language, as Camunda's external tasks and Flowable's external-worker jobs.
//!
//! The job row (TYPE_ 'external-worker', HANDLER_CFG_ = the topic) is the lock: a worker holds
//! LOCK_OWNER_ until LOCK_EXP_TIME_; completing, failing or throwing a BPMN error checks that it
//! still does, in the transaction that records the outcome. A failure spends a retry and, at
//! zero, moves the job to ACT_RU_DEADLETTER_JOB, the same rules as any job.

use super::{JOB_COLUMNS, JOB_COLUMNS_UNLOCKED, Processes, limits, rows};
use crate::Error;
use jiff::{SignedDuration, Timestamp};
use kairos_process::{Command, ErrorKind, ProcessError};
use kairos_store::{SqlValue, Write};
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

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
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
        // The outer lock condition is re-checked on the row PostgreSQL finally updates, so two
        // workers racing for one task cannot both get it.
        self.store
            .write_all(&[Write::new(
                "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = ?, LOCK_EXP_TIME_ = ?, LOCK_TIME_ = ?, ATTEMPTS_ = ATTEMPTS_ + 1, \
                 REV_ = REV_ + 1 WHERE ID_ IN (SELECT ID_ FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' \
                 AND HANDLER_CFG_ = ? AND RETRIES_ > 0 AND (DUEDATE_ IS NULL OR DUEDATE_ <= ?) \
                 AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?) ORDER BY CREATE_TIME_, ID_ LIMIT ?) \
                 AND (LOCK_OWNER_ IS NULL OR LOCK_EXP_TIME_ <= ?)",
                vec![
                    text(worker),
                    SqlValue::Timestamp(until),
                    SqlValue::Timestamp(now),
                    text(topic),
                    SqlValue::Timestamp(now),
                    SqlValue::Timestamp(now),
                    SqlValue::Int(max as i64),
                    SqlValue::Timestamp(now),
                ],
            )])
            .await?;
        let rows = self
            .store
            .read(
                "SELECT ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, EXECUTION_ID_, ELEMENT_ID_, RETRIES_, EXCEPTION_MSG_, LOCK_EXP_TIME_ \
                 FROM ACT_RU_JOB WHERE TYPE_ = 'external-worker' AND HANDLER_CFG_ = ? AND LOCK_OWNER_ = ? AND LOCK_TIME_ = ? \
                 ORDER BY CREATE_TIME_, ID_",
                &[text(topic), text(worker), SqlValue::Timestamp(now)],
            )
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let pi = r[1].as_str().unwrap_or_default().to_string();
            let exec = r[3].as_str().unwrap_or_default().to_string();
            let variables = match rows::load(self.store.as_ref(), &pi).await? {
                Some(inst) => inst.visible_variables(&exec),
                None => Map::new(),
            };
            out.push(ExternalTask {
                id: r[0].as_str().unwrap_or_default().into(),
                topic: topic.into(),
                process_instance_id: pi,
                process_definition_id: r[2].as_str().unwrap_or_default().into(),
                execution_id: exec,
                element_id: r[4].as_str().unwrap_or_default().into(),
                worker_id: worker.into(),
                lock_expiration_time: r[7].as_timestamp().unwrap_or(until),
                retries: r[5].as_i64().unwrap_or_default(),
                error_message: r[6].as_str().map(str::to_string),
                variables,
            });
        }
        Ok(out)
    }

    /// The instance of external task `id`, after checking that `worker` holds its lock.
    async fn locked_by(&self, id: &str, worker: &str) -> Result<String, Error> {
        let rows = self
            .store
            .read(
                "SELECT PROCESS_INSTANCE_ID_, LOCK_OWNER_, LOCK_EXP_TIME_ FROM ACT_RU_JOB WHERE ID_ = ? AND TYPE_ = 'external-worker'",
                &[text(id)],
            )
            .await?;
        let r = rows.first().ok_or_else(|| error(ErrorKind::NotFound, format!("external task {id} does not exist")))?;
        match r[1].as_str() {
            Some(owner) if owner == worker => Ok(r[0].as_str().unwrap_or_default().to_string()),
            Some(owner) => {
                Err(error(ErrorKind::Conflict, format!("external task {id} is locked by worker {owner}, not {worker}")))
            }
            None => Err(error(
                ErrorKind::Conflict,
                format!("external task {id} is not locked by worker {worker}: fetch and lock it first"),
            )),
        }
    }

    /// The lock check that commits with an outcome: the row must still be `worker`'s.
    fn fence(id: &str, worker: &str) -> Write {
        Write::new(
            "UPDATE ACT_RU_JOB SET REV_ = REV_ + 1 WHERE ID_ = ? AND LOCK_OWNER_ = ?",
            vec![text(id), text(worker)],
        )
        .expect(1)
    }

    /// The worker did the work: the process goes on past the service task.
    pub async fn external_complete(&self, id: &str, worker: &str, variables: Map<String, Json>) -> Result<(), Error> {
        let pi = self.locked_by(id, worker).await?;
        self.command_with(
            &pi,
            Command::CompleteExternal { job_id: id.into(), variables },
            &[Self::fence(id, worker)],
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
        self.command_with(&pi, cmd, &[Self::fence(id, worker)], &[]).await
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
        let rows = self.store.read("SELECT RETRIES_ FROM ACT_RU_JOB WHERE ID_ = ?", &[text(id)]).await?;
        let left = retries.unwrap_or_else(|| rows.first().and_then(|r| r[0].as_i64()).unwrap_or(1) - 1).max(0);
        let now = self.store.db_now().await?;
        let due = now + retry_timeout.unwrap_or(SignedDuration::ZERO);
        let message: String = message.chars().take(4000).collect();
        let mut writes = vec![
            Self::fence(id, worker),
            Write::new(
                "UPDATE ACT_RU_JOB SET RETRIES_ = ?, EXCEPTION_MSG_ = ?, LOCK_OWNER_ = NULL, LOCK_EXP_TIME_ = NULL, \
                 LOCK_TIME_ = NULL, DUEDATE_ = ? WHERE ID_ = ?",
                vec![SqlValue::Int(left), text(&message), SqlValue::Timestamp(due), text(id)],
            ),
        ];
        if left == 0 {
            writes.push(Write::new(
                format!("INSERT INTO ACT_RU_DEADLETTER_JOB ({JOB_COLUMNS}) SELECT {JOB_COLUMNS_UNLOCKED} FROM ACT_RU_JOB WHERE ID_ = ?"),
                vec![text(id)],
            ));
            writes.push(Write::new("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", vec![text(id)]).expect(1));
        }
        self.store.write_all(&writes).await.map_err(limits::checked_write)?;
        Ok(left)
    }
}
