//! The command worker (SPEC C6, seed 002 §8, §18–§20): runs the `workflow_command` rows a team
//! wrote in its BUSINESS database in the same transaction as its business change, and writes
//! each outcome back to the row.
//!
//! Each command is made idempotent on the engine's side before it runs, so that a run repeated
//! after a crash — the engine committed, the write-back did not — converges instead of acting
//! twice:
//! - START_PROCESS starts with a binding (business type, business id, process type, lifecycle):
//!   a repeated run finds the lifecycle's instance and adopts it; and with the command's
//!   request id, so a repeated start with the same request answers the first instance.
//! - COMPLETE_TASK completes with [`Processes::complete_task_once`] under the request id: a
//!   repeated run succeeds again. A task that is gone was completed by someone else or
//!   cancelled: FAILED with a result code saying which. The worker never completes another task.

use crate::Engine;
use crate::Error;
use crate::process::{BindingRequest, Processes, StartRequest};
use jiff::SignedDuration;
use kairos_process::ErrorKind as PErr;
use kairos_store::Sql;
/// The table's typed operations (insert in the team's transaction, get, list, schema).
pub use kairos_store_engine::commands as table;
use serde_json::{Map, Value as Json};
use std::sync::Arc;
use std::time::Duration;
use table::{Command, Outcome};

/// How the worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The name written to `owner`; unique per running worker.
    pub owner: String,
    /// How long a claimed row stays this worker's; past it another worker takes the row over.
    pub lease: SignedDuration,
    /// Rows claimed per poll.
    pub batch: u32,
    pub poll_interval: Duration,
    /// Runs that may end in RETRY; the run after the last fails the command (EXHAUSTED).
    pub max_attempts: i64,
    /// The first retry's wait; doubled per attempt, up to an hour.
    pub backoff: SignedDuration,
    /// Test hook: a pause between the engine's effect and the write-back, the window a crash
    /// test kills the process in. Only set from `KAIROS_FAULT_COMMAND_PAUSE_MS`.
    pub fault_pause: Option<Duration>,
}

impl WorkerConfig {
    pub fn new(owner: impl Into<String>) -> WorkerConfig {
        let fault_pause = std::env::var("KAIROS_FAULT_COMMAND_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis);
        WorkerConfig {
            owner: owner.into(),
            lease: SignedDuration::from_secs(30),
            batch: 16,
            poll_interval: Duration::from_millis(500),
            max_attempts: 5,
            backoff: SignedDuration::from_secs(1),
            fault_pause,
        }
    }
}

/// Counts of outcomes since start, for the metrics.
#[derive(Debug, Default)]
pub struct OutcomeCounts {
    pub succeeded: std::sync::atomic::AtomicU64,
    pub retried: std::sync::atomic::AtomicU64,
    pub failed: std::sync::atomic::AtomicU64,
}

/// The worker: the business database, the engine's processes, its settings.
pub struct Worker {
    business: Arc<dyn Sql>,
    engine: Arc<Engine>,
    config: WorkerConfig,
    pub outcomes: Arc<OutcomeCounts>,
}

impl Worker {
    pub fn new(business: Arc<dyn Sql>, engine: Arc<Engine>, config: WorkerConfig) -> Worker {
        Worker { business, engine, config, outcomes: Arc::default() }
    }

    fn processes(&self) -> &Processes {
        self.engine.processes()
    }

    /// Claims due commands once and runs them; answers how many it ran.
    pub async fn run_once(&self) -> Result<usize, Error> {
        let claimed =
            table::claim(self.business.as_ref(), &self.config.owner, self.config.lease, self.config.batch).await?;
        if claimed.is_empty() {
            return Ok(0);
        }
        // The batch runs one command at a time: every command not yet marked keeps its lease
        // renewed meanwhile (every third of it), so a slow command does not let another worker
        // take over the ones queued behind it — or itself — while it still runs.
        let pending = Arc::new(std::sync::Mutex::new(claimed.iter().map(|c| c.request_id.clone()).collect::<Vec<_>>()));
        let renewer = {
            let (db, owner, lease, pending) =
                (self.business.clone(), self.config.owner.clone(), self.config.lease, pending.clone());
            let every = (lease.unsigned_abs() / 3).max(std::time::Duration::from_millis(10));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let ids = pending.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    for id in ids {
                        if let Err(e) = table::renew(db.as_ref(), &id, &owner, lease).await {
                            tracing::warn!(command = %id, error = %e, "command worker: renewing a lease failed");
                        }
                    }
                }
            })
        };
        let done = |id: &str| pending.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != id);
        let result = self.run_claimed(&claimed, &done).await;
        renewer.abort();
        result.map(|()| claimed.len())
    }

    async fn run_claimed(&self, claimed: &[Command], done: &(dyn Fn(&str) + Sync)) -> Result<(), Error> {
        for c in claimed {
            let outcome = self.outcome(c).await;
            if let Some(pause) = self.config.fault_pause {
                tokio::time::sleep(pause).await;
            }
            use std::sync::atomic::Ordering::Relaxed;
            match &outcome {
                Outcome::Succeeded { .. } => self.outcomes.succeeded.fetch_add(1, Relaxed),
                Outcome::Retry { .. } => self.outcomes.retried.fetch_add(1, Relaxed),
                Outcome::Failed { .. } => self.outcomes.failed.fetch_add(1, Relaxed),
            };
            // A mark that is not written means the lease passed and another worker owns the
            // row: its run (idempotent, as this one) writes the outcome.
            table::mark(self.business.as_ref(), &c.request_id, &self.config.owner, &outcome).await?;
            done(&c.request_id);
        }
        Ok(())
    }

    /// Polls until the task is dropped; a failed poll (the business database away) is logged
    /// and polled again.
    pub async fn run(self) {
        loop {
            match self.run_once().await {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "command worker: poll failed"),
            }
            tokio::time::sleep(self.config.poll_interval).await;
        }
    }

    async fn outcome(&self, c: &Command) -> Outcome {
        let run = match c.command_type.as_str() {
            table::START_PROCESS => self.start(c).await,
            table::COMPLETE_TASK => self.complete(c).await,
            other => Err(Refused(format!("UNKNOWN_COMMAND_TYPE: {other}"))),
        };
        match run {
            Ok(out) => out,
            Err(Refused(code)) => {
                let (code, error) = match code.split_once(": ") {
                    Some((c, e)) => (c.to_string(), Some(e.to_string())),
                    None => (code, None),
                };
                Outcome::Failed { result_code: code, error }
            }
        }
    }

    /// The outcome of an engine error: refusals (bad input, a conflict) fail the command, the
    /// rest (the store away, a timeout) retry with a doubling wait until the attempts run out.
    fn engine_error(&self, c: &Command, e: Error) -> Outcome {
        let refused = match &e {
            Error::Invalid(_) | Error::Deploy(_) => Some("INVALID"),
            Error::Process(p) => match p.kind {
                PErr::NotFound => Some("NOT_FOUND"),
                PErr::Conflict => Some("CONFLICT"),
                PErr::Invalid => Some("INVALID"),
                PErr::Model => Some("MODEL_ERROR"),
                PErr::Handler => None,
            },
            Error::Store(s) if s.kind == kairos_store::ErrorKind::Invalid => Some("INVALID"),
            _ => None,
        };
        if let Some(code) = refused {
            return Outcome::Failed { result_code: code.into(), error: Some(e.to_string()) };
        }
        if c.attempts >= self.config.max_attempts {
            return Outcome::Failed { result_code: "EXHAUSTED".into(), error: Some(e.to_string()) };
        }
        let exp = u32::try_from(c.attempts.clamp(1, 12) - 1).unwrap_or(0);
        let wait = self.config.backoff.checked_mul(1 << exp).unwrap_or(SignedDuration::from_secs(3600));
        Outcome::Retry { error: e.to_string(), backoff: wait.min(SignedDuration::from_secs(3600)) }
    }

    async fn start(&self, c: &Command) -> Result<Outcome, Refused> {
        let p = &c.payload;
        let key =
            text(p, "processDefinitionKey")?.ok_or_else(|| Refused::field("processDefinitionKey", "is required"))?;
        let variables = vars(p)?;
        let business_key = text(p, "businessKey")?;
        let process_type = text(p, "processType")?.unwrap_or_else(|| key.clone());
        let req = StartRequest {
            process_definition_key: Some(key),
            business_key,
            variables,
            request_id: Some(c.request_id.clone()),
            binding: Some(BindingRequest {
                business_type: c.business_type.clone(),
                business_id: c.business_id.clone(),
                process_type,
                lifecycle: c.lifecycle_no,
            }),
            ..StartRequest::default()
        };
        Ok(match self.processes().start(req).await {
            Ok(pi) => Outcome::Succeeded { process_instance_id: Some(pi.id), result_code: "STARTED".into() },
            Err(e) => self.engine_error(c, e),
        })
    }

    async fn complete(&self, c: &Command) -> Result<Outcome, Refused> {
        let p = &c.payload;
        let task_id = text(p, "taskId")?.ok_or_else(|| Refused::field("taskId", "is required"))?;
        let user = text(p, "userId")?;
        let variables = vars(p)?;
        // The user may complete only a task that is theirs or, unassigned, offered to them.
        // A task that is gone is settled by complete_task_once itself: done under this
        // request id → success again; done by another or cancelled → a conflict.
        if let Some(user) = &user {
            match self.processes().task(&task_id).await {
                Ok(task) => {
                    let allowed = match &task.assignee {
                        Some(a) => a == user,
                        None => match self.processes().tasks(None, None, Some(user), None).await {
                            Ok(offered) => offered.iter().any(|t| t.id == task_id),
                            Err(e) => return Ok(self.engine_error(c, e)),
                        },
                    };
                    if !allowed {
                        return Ok(Outcome::Failed {
                            result_code: "NOT_ALLOWED".into(),
                            error: Some(format!("user {user} may not complete task {task_id}")),
                        });
                    }
                }
                Err(Error::Process(pe)) if pe.kind == PErr::NotFound => {}
                Err(e) => return Ok(self.engine_error(c, e)),
            }
        }
        Ok(match self.processes().complete_task_once(&task_id, variables, &c.request_id).await {
            Ok(()) => Outcome::Succeeded { process_instance_id: None, result_code: "COMPLETED".into() },
            Err(Error::Process(pe)) if pe.kind == PErr::Conflict => {
                let code = if pe.message.contains("cancelled") { "TASK_CANCELLED" } else { "TASK_ALREADY_COMPLETED" };
                Outcome::Failed { result_code: code.into(), error: Some(pe.message) }
            }
            Err(Error::Process(pe)) if pe.kind == PErr::NotFound => {
                Outcome::Failed { result_code: "TASK_NOT_FOUND".into(), error: Some(pe.message) }
            }
            Err(e) => self.engine_error(c, e),
        })
    }
}

/// A payload the command cannot run with: `CODE: message`.
struct Refused(String);

impl Refused {
    fn field(name: &str, problem: &str) -> Refused {
        Refused(format!("INVALID_PAYLOAD: payload.{name} {problem}"))
    }
}

fn text(p: &Json, name: &str) -> Result<Option<String>, Refused> {
    match p.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Refused::field(name, "must be a string")),
    }
}

fn vars(p: &Json) -> Result<Map<String, Json>, Refused> {
    match p.get("variables") {
        None | Some(Json::Null) => Ok(Map::new()),
        Some(Json::Object(m)) => Ok(m.clone()),
        Some(_) => Err(Refused::field("variables", "must be an object")),
    }
}
