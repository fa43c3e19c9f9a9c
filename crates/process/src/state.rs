//! One process instance in memory: the rows of ACT_RU_EXECUTION, ACT_RU_TASK, ACT_RU_VARIABLE,
//! ACT_RU_EVENT_SUBSCR and the instance's jobs, plus its open history rows.
//!
//! A command loads an [`Instance`], changes it through the runtime, and the engine writes the
//! difference between the loaded and the final state (see [`crate::Changes`]). Field names
//! follow the columns; booleans are the IS_*_ flags of seed 003 §2.3.

use jiff::Timestamp;
use serde_json::Value as Json;

use crate::error::{ErrorKind, ProcessError, Result};
pub use crate::index::RowIndex;

/// SUSPENSION_STATE_ of an instance, its executions and tasks (SPEC P8): a suspended instance
/// refuses task completions, messages and job runs until it is activated again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SuspensionState {
    #[default]
    Active,
    Suspended,
}

impl SuspensionState {
    /// The stored SUSPENSION_STATE_: 1 active, 2 suspended.
    pub fn as_i32(self) -> i32 {
        match self {
            SuspensionState::Active => 1,
            SuspensionState::Suspended => 2,
        }
    }

    /// The state stored as `value`; any other number is an error.
    pub fn from_i32(value: i32) -> Result<SuspensionState> {
        match value {
            1 => Ok(SuspensionState::Active),
            2 => Ok(SuspensionState::Suspended),
            other => Err(ProcessError::new(
                ErrorKind::Invalid,
                format!("SUSPENSION_STATE_ {other} is neither 1 (active) nor 2 (suspended)"),
            )),
        }
    }
}

/// EVENT_TYPE_ of an event subscription: what the execution waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    /// A message (catch event, receive task, boundary or event sub-process start), by name.
    Message,
    /// A signal, by name; every subscription of that name gets it.
    Signal,
    /// A conditional event; EVENT_NAME_ holds the condition's value at the last check.
    Conditional,
    /// A completed activity that has a compensation handler, held by its scope execution;
    /// EVENT_NAME_ holds the completion's order (the last completed is compensated first).
    Compensate,
}

impl EventType {
    /// The stored EVENT_TYPE_ text.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Message => "message",
            EventType::Signal => "signal",
            EventType::Conditional => "conditional",
            EventType::Compensate => "compensate",
        }
    }

    /// The type stored as `text`; any other word is an error.
    pub fn parse(text: &str) -> Result<EventType> {
        match text {
            "message" => Ok(EventType::Message),
            "signal" => Ok(EventType::Signal),
            "conditional" => Ok(EventType::Conditional),
            "compensate" => Ok(EventType::Compensate),
            other => Err(ProcessError::new(
                ErrorKind::Invalid,
                format!("EVENT_TYPE_ '{other}' is not one of message, signal, conditional, compensate"),
            )),
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A row of ACT_RU_EXECUTION.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    pub id: String,
    pub rev: i32,
    pub parent_id: Option<String>,
    /// SUPER_EXEC_: on a called instance's root, the caller's execution.
    pub super_exec: Option<String>,
    /// ACT_ID_: where the execution is (`None` on a root that only contains others).
    pub activity: Option<String>,
    pub is_active: bool,
    pub is_concurrent: bool,
    pub is_scope: bool,
    pub is_event_scope: bool,
    pub is_mi_root: bool,
    pub start_time: Timestamp,
    pub suspension_state: SuspensionState,
}

/// A row of ACT_RU_TASK.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    pub rev: i32,
    pub execution_id: String,
    pub name: Option<String>,
    pub task_def_key: String,
    pub assignee: Option<String>,
    /// Who is responsible for the task (Flowable's owner; delegation hands it to an assignee).
    pub owner: Option<String>,
    pub description: Option<String>,
    pub priority: i32,
    pub create_time: Timestamp,
    pub due_date: Option<Timestamp>,
    pub form_key: Option<String>,
    pub claim_time: Option<Timestamp>,
    pub suspension_state: SuspensionState,
    /// Candidate users and groups (ACT_RU_IDENTITYLINK, TYPE_ 'candidate').
    pub candidate_users: Vec<String>,
    pub candidate_groups: Vec<String>,
}

/// A row of ACT_RU_VARIABLE: a name in the scope of an execution (the root for instance
/// variables).
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub id: String,
    pub rev: i32,
    pub name: String,
    pub execution_id: String,
    pub value: Json,
    /// Set for a task-local variable (SPEC P6): it belongs to that task alone, is seen only
    /// through it, and goes when the task ends (its history stays in ACT_HI_VARINST).
    pub task_id: Option<String>,
}

/// Which of a task's variables: its own (task-local), those of its execution and the scopes
/// above (global), or both (local ones shadowing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskScope {
    All,
    Local,
    Global,
}

impl Variable {
    /// True for a variable of `execution`'s own scope (not a task's local one).
    pub fn in_scope(&self, execution: &str) -> bool {
        self.execution_id == execution && self.task_id.is_none()
    }
}

/// A row of ACT_RU_EVENT_SUBSCR: an execution waiting for a message or a signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    pub id: String,
    pub event_type: EventType,
    pub event_name: String,
    pub execution_id: String,
    pub activity_id: String,
    pub created: Timestamp,
}

/// A job of the instance (ACT_RU_JOB), as far as the runtime cares.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessJob {
    pub id: String,
    pub kind: JobKind,
    pub execution_id: String,
    /// The element the job belongs to (ELEMENT_ID_).
    pub activity_id: String,
    /// DUEDATE_ (timers); `None` runs as soon as a worker is free.
    pub due: Option<Timestamp>,
    /// REPEAT_ of a cycle timer (`R3/PT1S`).
    pub repeat: Option<String>,
    pub exclusive: bool,
    /// failedJobRetryTimeCycle of the element.
    pub retry_cycle: Option<String>,
    /// The topic of an external-worker job.
    pub topic: Option<String>,
}

/// HANDLER_TYPE_ of the process engine's jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// Continue before the activity (`async` / `asyncBefore`).
    AsyncBefore,
    /// Continue after the activity (`asyncAfter`).
    AsyncAfter,
    /// A timer of a catch event, a boundary event or an event-based gateway's branch.
    Timer,
    /// A service task done by an external worker (SPEC I4): fetched and locked over HTTP,
    /// never run by the executor. HANDLER_CFG_ is the topic.
    External,
}

impl JobKind {
    pub const ASYNC_CONTINUATION: &'static str = "async-continuation";
    pub const TRIGGER_TIMER: &'static str = "trigger-timer";
    pub const EXTERNAL_WORKER: &'static str = "external-worker";

    /// HANDLER_TYPE_.
    pub fn handler_type(self) -> &'static str {
        match self {
            JobKind::AsyncBefore | JobKind::AsyncAfter => Self::ASYNC_CONTINUATION,
            JobKind::Timer => Self::TRIGGER_TIMER,
            JobKind::External => Self::EXTERNAL_WORKER,
        }
    }

    /// TYPE_.
    pub fn job_type(self) -> &'static str {
        match self {
            JobKind::Timer => "timer",
            JobKind::External => "external-worker",
            _ => "message",
        }
    }

    /// HANDLER_CFG_ (JSON): which element and which side of it.
    pub fn config(self, activity: &str) -> String {
        let phase = match self {
            JobKind::AsyncBefore => "before",
            JobKind::AsyncAfter => "after",
            JobKind::Timer => "timer",
            JobKind::External => "external",
        };
        serde_json::json!({ "activityId": activity, "phase": phase }).to_string()
    }

    /// The kind from HANDLER_TYPE_ and HANDLER_CFG_.
    pub fn from_row(handler_type: &str, config: Option<&str>) -> Option<JobKind> {
        let phase = config
            .and_then(|c| serde_json::from_str::<Json>(c).ok())
            .and_then(|v| v.get("phase").and_then(Json::as_str).map(str::to_string));
        match (handler_type, phase.as_deref()) {
            (Self::ASYNC_CONTINUATION, Some("after")) => Some(JobKind::AsyncAfter),
            (Self::ASYNC_CONTINUATION, _) => Some(JobKind::AsyncBefore),
            (Self::TRIGGER_TIMER, _) => Some(JobKind::Timer),
            (Self::EXTERNAL_WORKER, _) => Some(JobKind::External),
            _ => None,
        }
    }
}

/// An ACT_HI_ACTINST row that is open (no end) or was opened by this command.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityRecord {
    pub id: String,
    pub execution_id: String,
    pub activity_id: String,
    pub activity_name: Option<String>,
    pub activity_type: String,
    pub task_id: Option<String>,
    pub assignee: Option<String>,
    pub start: Timestamp,
    pub end: Option<Timestamp>,
    pub delete_reason: Option<String>,
    /// Start order within the instance.
    pub seq: i64,
}

/// One process instance: the root execution and everything that hangs off it.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// PROC_INST_ID_ = the root execution's ID_.
    pub id: String,
    pub definition_id: String,
    pub definition_key: String,
    pub business_key: Option<String>,
    pub tenant_id: String,
    pub start_time: Timestamp,
    pub start_activity: Option<String>,
    pub start_user: Option<String>,
    /// The call activity's execution in the calling instance, if called.
    pub super_exec: Option<String>,
    /// The calling instance (PROC_INST_ID_ of `super_exec`).
    pub super_instance: Option<String>,
    /// REV_ of the root execution when loaded: every command on the instance bumps it, so two
    /// commands on one instance never both commit (seed 003 §2.1's optimistic lock).
    pub root_rev: i32,
    /// SEQ_ of the root: the last history sequence number used.
    pub seq: i64,
    pub executions: Vec<Execution>,
    pub tasks: Vec<Task>,
    pub variables: Vec<Variable>,
    pub subscriptions: Vec<Subscription>,
    pub jobs: Vec<ProcessJob>,
    /// Open activity history rows (and those this command opened and closed).
    pub activities: Vec<ActivityRecord>,
    /// Set when the instance ended in this command: END_TIME_ and the end activity.
    pub ended: Option<(Timestamp, Option<String>)>,
    /// DELETE_REASON_ when it ended by deletion or termination.
    pub delete_reason: Option<String>,
    /// SUSPENSION_STATE_ of the instance.
    pub suspension_state: SuspensionState,
    /// Tasks this command completed or cancelled (their history rows get an end).
    pub ended_tasks: Vec<EndedTask>,
    /// Signals this command threw (intermediate signal throw events): the instance's own waits
    /// got them at once; the engine delivers them to every other instance after the commit.
    pub thrown_signals: Vec<String>,
    /// Errors and escalations that nothing in this called instance caught: they go on to the
    /// call activity that called it, in its caller (BPMN 2.0 §10.5.3; Camunda and Flowable
    /// carry both out of a called process). Empty for an instance nobody called.
    pub raised: Vec<Raised>,
    /// Call activities this command cancelled while they waited for their called instance (an
    /// interrupting boundary event or event sub-process, a terminate or error end, a delete),
    /// as (execution, activity): the engine deletes what they called, in the same commit.
    pub interrupted_calls: Vec<(String, String)>,
    /// The instance variables as they were when the instance ended (for a call activity's
    /// `out` mappings; the rows themselves are gone).
    pub final_variables: serde_json::Map<String, Json>,
    /// Where each execution and variable is in the lists above (rebuilt by itself when they
    /// change; `Default::default()` when building an instance).
    pub index: RowIndex,
    /// Every variable this command set, in order. The diff of the rows cannot see a variable
    /// set and removed in one command (the completion that ends the instance) nor a value set
    /// twice; history needs both (ACT_HI_VARINST, and ACT_HI_DETAIL's row per change).
    pub variable_log: Vec<VariableChange>,
}

/// An error or escalation a called instance passes to its caller's call activity.
#[derive(Debug, Clone, PartialEq)]
pub enum Raised {
    /// A BPMN error with its code: the caller must catch it (else the command fails).
    Error(String),
    /// An escalation with its code (`None`: only a catch-all catches it); nobody catching it
    /// is no failure.
    Escalation(Option<String>),
}

/// One variable set by a command: its row as it was just after the change.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableChange {
    /// ID_ of the ACT_RU_VARIABLE row (and of its ACT_HI_VARINST row).
    pub variable_id: String,
    pub name: String,
    /// The execution whose scope holds the variable.
    pub execution_id: String,
    /// Set for a task-local variable.
    pub task_id: Option<String>,
    pub value: Json,
    pub time: Timestamp,
    /// The open ACT_HI_ACTINST row of the execution that set it, if any.
    pub activity_instance_id: Option<String>,
}

/// A task that ended in this command.
#[derive(Debug, Clone, PartialEq)]
pub struct EndedTask {
    pub id: String,
    pub start: Timestamp,
    pub end: Timestamp,
    /// DELETE_REASON_: `None` when completed.
    pub reason: Option<String>,
}

impl Instance {
    pub fn execution(&self, id: &str) -> Option<&Execution> {
        self.index.execution(&self.executions, id).map(|i| &self.executions[i])
    }

    pub fn execution_mut(&mut self, id: &str) -> Option<&mut Execution> {
        self.index.execution(&self.executions, id).map(|i| &mut self.executions[i])
    }

    /// The children of an execution, in creation order.
    pub fn children(&self, id: &str) -> Vec<&Execution> {
        self.executions.iter().filter(|e| e.parent_id.as_deref() == Some(id)).collect()
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// The instance variable `name` (root scope).
    pub fn variable(&self, name: &str) -> Option<&Json> {
        self.scope_variable(&self.id, name).map(|v| &v.value)
    }

    /// The variable `name` of `execution`'s own scope (not a task's local one).
    pub fn scope_variable(&self, execution: &str, name: &str) -> Option<&Variable> {
        self.index.scope_variable(&self.variables, execution, name).map(|i| &self.variables[i])
    }

    /// [`Instance::scope_variable`], to change.
    pub fn scope_variable_mut(&mut self, execution: &str, name: &str) -> Option<&mut Variable> {
        self.index.scope_variable(&self.variables, execution, name).map(|i| &mut self.variables[i])
    }

    /// The variable visible from `execution`: its own scope first, then each parent's.
    pub fn visible_variable(&self, execution: &str, name: &str) -> Option<&Json> {
        let mut at = Some(execution);
        while let Some(id) = at {
            if let Some(v) = self.scope_variable(id, name) {
                return Some(&v.value);
            }
            at = self.execution(id).and_then(|e| e.parent_id.as_deref());
        }
        None
    }

    /// Every variable visible from `execution`, inner scopes shadowing outer ones.
    pub fn visible_variables(&self, execution: &str) -> serde_json::Map<String, Json> {
        let mut chain = Vec::new();
        let mut at = Some(execution);
        while let Some(id) = at {
            at = self.execution(id).and_then(|e| e.parent_id.as_deref());
            chain.push(id);
        }
        let mut out = serde_json::Map::new();
        for id in chain.iter().rev() {
            for i in self.index.scope_variables(&self.variables, id) {
                let v = &self.variables[i];
                out.insert(v.name.clone(), v.value.clone());
            }
        }
        out
    }

    /// The variables a task sees in `scope`: [`TaskScope::All`] is those visible from its
    /// execution with its local ones shadowing them.
    pub fn task_variables(&self, task: &Task, scope: TaskScope) -> serde_json::Map<String, Json> {
        let mut out = match scope {
            TaskScope::Local => serde_json::Map::new(),
            TaskScope::All | TaskScope::Global => self.visible_variables(&task.execution_id),
        };
        if scope != TaskScope::Global {
            for v in self.variables.iter().filter(|v| v.task_id.as_deref() == Some(task.id.as_str())) {
                out.insert(v.name.clone(), v.value.clone());
            }
        }
        out
    }

    /// True while the instance has not ended.
    pub fn is_running(&self) -> bool {
        self.ended.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_types_read_back_what_they_store_and_refuse_other_words() {
        for t in [EventType::Message, EventType::Signal, EventType::Conditional, EventType::Compensate] {
            assert_eq!(EventType::parse(t.as_str()), Ok(t));
        }
        assert_eq!(EventType::Signal.as_str(), "signal");
        let err = EventType::parse("cancel").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Invalid);
        assert_eq!(err.message, "EVENT_TYPE_ 'cancel' is not one of message, signal, conditional, compensate");
    }

    #[test]
    fn suspension_states_read_back_what_they_store_and_refuse_other_numbers() {
        assert_eq!((SuspensionState::Active.as_i32(), SuspensionState::Suspended.as_i32()), (1, 2));
        assert_eq!(SuspensionState::from_i32(2), Ok(SuspensionState::Suspended));
        assert_eq!(SuspensionState::from_i32(1), Ok(SuspensionState::Active));
        assert_eq!(
            SuspensionState::from_i32(0).unwrap_err().message,
            "SUSPENSION_STATE_ 0 is neither 1 (active) nor 2 (suspended)"
        );
    }
}
