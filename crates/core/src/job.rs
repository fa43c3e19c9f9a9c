//! The job as it lives in ACT_RU_JOB (and, with the same columns, in ACT_RU_DEADLETTER_JOB and
//! ACT_RU_SUSPENDED_JOB). Field names follow the Activiti columns of seed 000 §2.1 so that a
//! reader can map every field to the column an operator sees in SQL.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// A new, time-ordered id (UUID v7). Time order keeps B-tree inserts at the right edge and
/// makes ids of one burst sort in creation order, which helps operators reading logs.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// TYPE_: what kind of job a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobType {
    /// Runs as soon as a worker is free (async continuations and queued jobs).
    Message,
    /// Runs at DUEDATE_; may repeat per REPEAT_.
    Timer,
    /// Done by an external worker over HTTP (fetch-and-lock).
    ExternalWorker,
}

impl JobType {
    pub fn as_str(self) -> &'static str {
        match self {
            JobType::Message => "message",
            JobType::Timer => "timer",
            JobType::ExternalWorker => "external-worker",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "message" => Some(JobType::Message),
            "timer" => Some(JobType::Timer),
            "external-worker" => Some(JobType::ExternalWorker),
            _ => None,
        }
    }
}

/// Which of the three job tables a row is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobTable {
    /// ACT_RU_JOB: waiting, executable or running.
    Runtime,
    /// ACT_RU_DEADLETTER_JOB: retries exhausted; waits for an operator.
    DeadLetter,
    /// ACT_RU_SUSPENDED_JOB: its process instance is suspended.
    Suspended,
}

impl JobTable {
    pub fn table_name(self) -> &'static str {
        match self {
            JobTable::Runtime => "ACT_RU_JOB",
            JobTable::DeadLetter => "ACT_RU_DEADLETTER_JOB",
            JobTable::Suspended => "ACT_RU_SUSPENDED_JOB",
        }
    }
}

/// One row of a job table.
///
/// Besides the Activiti columns, kairos keeps four of its own:
/// `EXCLUSIVE_KEY_` (the key exclusivity is enforced on: the process instance for process jobs,
/// any caller-chosen key for standalone jobs), `LOCK_TIME_`, `ATTEMPTS_` (attempts started so far; it is also
/// the fencing token of a lease, see [`crate::outcome`]) and `RETRY_CYCLE_` (the
/// failedJobRetryTimeCycle the job was created with).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    pub rev: i32,
    pub job_type: JobType,
    pub lock_owner: Option<String>,
    pub lock_exp_time: Option<Timestamp>,
    /// LOCK_TIME_: when the current lease was taken (database clock); the start of the attempt.
    pub lock_time: Option<Timestamp>,
    pub exclusive: bool,
    pub exclusive_key: Option<String>,
    pub execution_id: Option<String>,
    pub process_instance_id: Option<String>,
    pub proc_def_id: Option<String>,
    pub element_id: Option<String>,
    pub element_name: Option<String>,
    pub scope_id: Option<String>,
    pub scope_type: Option<String>,
    pub scope_definition_id: Option<String>,
    pub retries: i32,
    pub attempts: i32,
    pub exception_stack_id: Option<String>,
    pub exception_msg: Option<String>,
    pub duedate: Option<Timestamp>,
    pub repeat: Option<String>,
    pub retry_cycle: Option<String>,
    pub handler_type: String,
    /// HANDLER_CFG_: the job's JSON payload.
    pub handler_cfg: Option<String>,
    pub customvalues_id: Option<String>,
    pub create_time: Timestamp,
    /// TENANT_ID_; stored as '' (Activiti's default) when absent.
    pub tenant_id: Option<String>,
}

/// How an attempt ended, as recorded in ACT_HI_JOB_LOG.OUTCOME_.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobLogOutcome {
    Succeeded,
    Failed,
    DeadLettered,
    /// A repeating timer fired successfully and was moved to its next due date.
    Rescheduled,
    /// The node running it died, stopped or handed it back; logged when its lease was taken over
    /// or released.
    Abandoned,
    /// The lease was taken over before the handler started (a job taken ahead of its due date
    /// by a node that died before it): not an attempt, no retry spent.
    NotStarted,
}

impl JobLogOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            JobLogOutcome::Succeeded => "succeeded",
            JobLogOutcome::Failed => "failed",
            JobLogOutcome::DeadLettered => "dead-lettered",
            JobLogOutcome::Rescheduled => "rescheduled",
            JobLogOutcome::Abandoned => "abandoned",
            JobLogOutcome::NotStarted => "not-started",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [
            JobLogOutcome::Succeeded,
            JobLogOutcome::Failed,
            JobLogOutcome::DeadLettered,
            JobLogOutcome::Rescheduled,
            JobLogOutcome::Abandoned,
            JobLogOutcome::NotStarted,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// One row of ACT_HI_JOB_LOG: one attempt of one job. It outlives the job row, so it answers
/// "what happened to job X" after the job is gone (SPEC J12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLogEntry {
    pub id: String,
    pub job_id: String,
    pub attempt: i32,
    pub node: Option<String>,
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub outcome: JobLogOutcome,
    pub message: Option<String>,
    pub handler_type: String,
    pub job_type: JobType,
    pub process_instance_id: Option<String>,
    pub element_id: Option<String>,
    pub exclusive_key: Option<String>,
    pub duedate: Option<Timestamp>,
    pub tenant_id: Option<String>,
}

/// A node of the cluster as registered in KAIROS_NODE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub workers: i32,
    pub started: Timestamp,
    pub heartbeat: Timestamp,
    /// `running`, `stopped` (left cleanly) or `dead` (missed its heartbeats; its leases were expired).
    pub state: String,
    /// What the node runs with; `None` for a row written before they were recorded.
    pub settings: Option<NodeSettings>,
}

/// The settings a node runs with, recorded in KAIROS_NODE beside its heartbeat: a tool (the
/// `kairos doctor` CLI) has no settings of its own worth trusting, so it judges leases, liveness
/// and time zones by these.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeSettings {
    /// How long an acquired job stays locked before another node may take it over.
    pub lock_time: SignedDuration,
    /// How often the node heartbeats.
    pub heartbeat_interval: SignedDuration,
    /// How long a node may be silent before the others declare it dead.
    pub dead_after: SignedDuration,
    /// How far ahead of its due date the node takes a job.
    pub lookahead: SignedDuration,
    /// How often the node polls for due jobs when idle.
    pub poll_interval: SignedDuration,
    /// The IANA name of the node's time zone (empty when it has none).
    pub time_zone: String,
}
