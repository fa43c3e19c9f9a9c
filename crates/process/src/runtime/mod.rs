//! The process runtime: moves tokens through a BPMN model over one [`Instance`].
//!
//! A command ([`Command`]) is run to its next wait state through an agenda of small
//! operations (enter a node, leave it, end a token), the way Activiti's and Flowable's
//! `Agenda` do; it never recurses, so a long chain of pass-through nodes cannot blow the stack.
//! Service tasks are the one thing the runtime cannot do itself (handlers are async code
//! with side effects): it stops with [`Step::Call`], the engine runs the handler and calls
//! [`Runtime::resume`]. Everything else is pure: the clock (`now`, the database's) and id
//! generation come in through [`Env`].
//!
//! The execution tree follows seed 003: the root execution is the instance (IS_SCOPE_),
//! each token is a child execution of its scope execution with ACT_ID_ = where it is; tokens
//! of one scope are IS_CONCURRENT_ when there is more than one; an embedded sub-process turns
//! its token into a scope execution (IS_SCOPE_) whose children are the inner tokens; each
//! boundary event of a waiting activity is an event-scope child (IS_EVENT_SCOPE_) of the
//! activity's execution, holding the timer job or the subscription. A scope execution that
//! contains tokens is not itself active (IS_ACTIVE_ false), as seed 003 §3.2 shows for a
//! parallel split.
//!
//! The runtime is cut by behaviour, in three layers (one `impl Runtime` block per file):
//! - on top, the entry points (`commands`, `migration`) and the agenda (`agenda`: the
//!   run loop, the one dispatch by element kind, and the operations behaviours plan or
//!   perform; `propagation`: throwing errors and escalations up the tree);
//! - `behaviour`: one file per family of BPMN elements (events, boundary events, gateways,
//!   tasks, multi-instance, call activities, sub-processes), which never call one another;
//! - `primitives`: the execution tree, waits, variables and I/O mapping, history records,
//!   expressions, which call only each other.
//!
//! `layering.rs` checks the rules on the sources.

mod agenda;
mod behaviour;
mod commands;
#[cfg(test)]
mod layering;
mod migration;
mod ops;
mod primitives;
mod propagation;
mod task_commands;

use std::collections::{BTreeSet, HashMap, VecDeque};

use jiff::Timestamp;
use kairos_bpmn::{Definitions, NodeIdx, Process};
use serde_json::{Map, Value as Json};

use crate::state::*;
use agenda::Op;

pub use primitives::scripts::{ScriptOutcome, ScriptRunner, ScriptSite};
pub use primitives::variables::validate_variable_name;

/// What the runtime needs from outside: the model, the database's now, and fresh ids.
pub struct Env<'a> {
    pub definitions: &'a Definitions,
    pub process: &'a Process,
    pub now: Timestamp,
    pub ids: &'a mut (dyn FnMut() -> String + Send),
}

/// What [`Command::UpdateTask`] changes: each `Some` field is set (`Some(None)` clears it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskUpdate {
    pub name: Option<Option<String>>,
    pub description: Option<Option<String>>,
    /// Assigning sets the claim time; `Some(None)` unassigns (Flowable's unclaim).
    pub assignee: Option<Option<String>>,
    pub owner: Option<Option<String>>,
    pub priority: Option<i32>,
    pub due_date: Option<Option<Timestamp>>,
    pub add_candidate_users: Vec<String>,
    pub add_candidate_groups: Vec<String>,
    pub remove_candidate_users: Vec<String>,
    pub remove_candidate_groups: Vec<String>,
}

/// What a caller asks of an instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Start a new instance at the none start event (the instance passed in is empty).
    /// `start_user` goes to START_USER_ID_ and to the start event's `initiator` variable.
    /// `start_event` picks a message, signal or timer start event; `None` is the none start.
    Start {
        variables: Map<String, Json>,
        start_user: Option<String>,
        start_event: Option<String>,
    },
    /// Complete a user task, setting variables first.
    CompleteTask {
        task_id: String,
        variables: Map<String, Json>,
    },
    /// Claim a task for `assignee`.
    ClaimTask {
        task_id: String,
        assignee: String,
    },
    /// Change a task's properties and candidates (Flowable's `PUT /runtime/tasks/{id}` and its
    /// identity links): only what `update` names changes.
    UpdateTask {
        task_id: String,
        update: TaskUpdate,
    },
    /// Flowable's trigger of an execution waiting in a receive task: set the variables on it,
    /// then the token goes on.
    Trigger {
        execution_id: String,
        variables: Map<String, Json>,
    },
    /// Run one of the instance's jobs (async continuation or timer).
    RunJob {
        job_id: String,
    },
    /// Deliver a message to the instance's subscription with this name.
    Message {
        name: String,
        variables: Map<String, Json>,
    },
    /// Deliver a signal to every subscription of the instance with this name.
    Signal {
        name: String,
        variables: Map<String, Json>,
    },
    /// An external worker completed the service task of job `job_id`.
    CompleteExternal {
        job_id: String,
        variables: Map<String, Json>,
        /// Set in the service task's scope (Camunda's `localVariables`): the token's own
        /// execution when it is a scope, else the nearest scope above it (the instance, for a
        /// task at the top level), as Camunda's `setVariablesLocal` on its execution.
        local_variables: Map<String, Json>,
    },
    /// An external worker reported a BPMN error for job `job_id`'s service task.
    ExternalBpmnError {
        job_id: String,
        code: String,
        /// The error's message, for the catching event's `errorMessageVariable`.
        message: Option<String>,
        variables: Map<String, Json>,
    },
    /// Change the instance's business key (SPEC P9).
    SetBusinessKey {
        business_key: Option<String>,
    },
    /// Set instance variables.
    SetVariables {
        variables: Map<String, Json>,
    },
    /// Set variables through a task: `local` ones belong to the task alone; the others are set
    /// as the task's execution sets them (where a visible variable of that name lives, else
    /// on the instance), as Flowable's `setVariableLocal` / `setVariable` on a task do.
    SetTaskVariables {
        task_id: String,
        variables: Map<String, Json>,
        local: bool,
    },
    /// End the instance with a reason, cascading through everything it holds (SPEC P10).
    Delete {
        reason: String,
        /// Camunda's `skipCustomListeners`: the tasks' delete listeners do not run.
        skip_listeners: bool,
    },
    /// Suspend or activate the instance (SPEC P8).
    Suspend,
    Activate,
    /// The instance called by the call activity `execution_id` waits at has ended with these
    /// variables: apply the `out` mappings and go on.
    CalledEnded {
        execution_id: String,
        variables: Map<String, Json>,
    },
    /// The instance called by the call activity `execution_id` waits at raised errors or
    /// escalations nothing in it caught: each is thrown from the call activity (its boundary
    /// events first, then the scopes around it). When it also `ended`, the call activity then
    /// goes on as after [`Command::CalledEnded`], unless a catch interrupted it.
    CalledRaised {
        execution_id: String,
        raised: Vec<Raised>,
        ended: Option<Map<String, Json>>,
    },
    /// Camunda's `handleBpmnError` on a user task: the task's variables are set, then error
    /// `code` is thrown from it. An error nobody catches fails the command.
    TaskBpmnError {
        task_id: String,
        code: String,
        message: Option<String>,
        variables: Map<String, Json>,
    },
    /// Camunda's `handleEscalation` on a user task: the variables are set, then escalation
    /// `code` is thrown from the task (an interrupting catch cancels it, a non-interrupting
    /// one runs beside it). An escalation nobody catches fails the command, as in Camunda.
    TaskEscalation {
        task_id: String,
        code: String,
        variables: Map<String, Json>,
    },
}

/// Where a command stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Every token is in a wait state (or the instance ended).
    Done,
    /// A service task's handler must run; call [`Runtime::resume`] with its result.
    Call(ServiceCall),
    /// A call activity starts another process; start it and call [`Runtime::resume_called`].
    StartCalled(CalledStart),
}

/// What a call activity asks the engine to start.
#[derive(Debug, Clone, PartialEq)]
pub struct CalledStart {
    /// The call activity's execution: SUPER_EXEC_ of the called instance.
    pub execution_id: String,
    pub activity_id: String,
    /// The key of the process to start (latest version).
    pub process_key: String,
    pub business_key: Option<String>,
    /// The `in` mappings' result.
    pub variables: Map<String, Json>,
}

/// A handler invocation a service task asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceCall {
    pub execution_id: String,
    pub activity_id: String,
    pub handler: String,
    /// The variables visible at the task, plus the task's field injections under `fields`.
    pub payload: Json,
    /// For a business rule task, the decision to evaluate over the payload (then `handler` is
    /// [`DECISION_HANDLER`]); the caller answers with the mapped result.
    pub decision: Option<DecisionCall>,
}

/// The handler name of a [`ServiceCall`] that evaluates a decision.
pub const DECISION_HANDLER: &str = "kairos:decision";

/// A decision a business rule task evaluates, its key and version resolved at the token.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionCall {
    pub key: String,
    /// `Version` holds the evaluated version number.
    pub binding: kairos_bpmn::DecisionBinding,
    pub mapping: kairos_bpmn::DecisionMapping,
}

/// What a service task's handler answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceResult {
    /// It did its work; the value goes to `resultVariable` when the model names one.
    Done(Option<Json>),
    /// It did its work and answered with data (an HTTP endpoint's reply): `variables` are set
    /// where the task sets variables, then `result` goes to `resultVariable` as with `Done`.
    Output { result: Option<Json>, variables: Map<String, Json> },
    /// A business error (BPMN error code) for an error boundary event or event sub-process.
    BpmnError(String),
    /// It failed: the command fails (a job is retried; a request gets the message).
    Failed(String),
}

/// One command's run over one instance.
pub struct Runtime<'a> {
    env: Env<'a>,
    inst: Instance,
    agenda: VecDeque<Op>,
    /// The service task waiting for its handler's result.
    waiting: Option<(String, NodeIdx)>,
    /// The call activity waiting for its called instance to start.
    waiting_call: Option<(String, NodeIdx)>,
    /// The listener waiting for its handler: (execution, element id, what it is).
    listening: Option<(String, String, String)>,
    /// Tasks cancelled whose delete listeners are still to be planned: (task, its node, its
    /// execution and that execution's ancestors, nearest first).
    deleted_tasks: Vec<(String, NodeIdx, Vec<String>)>,
    /// Variables set since conditional events were last checked.
    changed: BTreeSet<String>,
    /// Runs the model's scripts; `None` when scripts are switched off.
    scripts: Option<&'a dyn ScriptRunner>,
    /// Conditional subscriptions made since then: checked once whatever changed.
    fresh_conditions: Vec<String>,
    /// The latest open activity record of each execution (ACT_INST_ID_ of the variable
    /// changes it makes), kept so that finding it does not scan every record.
    open_records: HashMap<String, String>,
}

impl<'a> Runtime<'a> {
    pub fn new(env: Env<'a>, inst: Instance) -> Runtime<'a> {
        let open_records = inst
            .activities
            .iter()
            .filter(|a| a.end.is_none())
            .map(|a| (a.execution_id.clone(), a.id.clone()))
            .collect();
        Runtime {
            env,
            inst,
            agenda: VecDeque::new(),
            waiting: None,
            waiting_call: None,
            listening: None,
            deleted_tasks: Vec::new(),
            scripts: None,
            changed: BTreeSet::new(),
            fresh_conditions: Vec::new(),
            open_records,
        }
    }

    /// Runs the model's scripts with `scripts` (none: a script fails the command, saying that
    /// scripts are switched off).
    pub fn with_scripts(mut self, scripts: Option<&'a dyn ScriptRunner>) -> Runtime<'a> {
        self.scripts = scripts;
        self
    }

    /// A new, empty instance of `env.process` with its root execution.
    pub fn new_instance(env: &mut Env<'_>, definition_id: &str, business_key: Option<String>) -> Instance {
        let id = (env.ids)();
        let root = Execution {
            id: id.clone(),
            rev: 0,
            parent_id: None,
            super_exec: None,
            activity: None,
            is_active: true,
            is_concurrent: false,
            is_scope: true,
            is_event_scope: false,
            is_mi_root: false,
            start_time: env.now,
            suspension_state: SuspensionState::Active,
        };
        Instance {
            id,
            definition_id: definition_id.to_string(),
            definition_key: env.process.id.clone(),
            business_key,
            tenant_id: String::new(),
            start_time: env.now,
            start_activity: None,
            start_user: None,
            super_exec: None,
            super_instance: None,
            root_rev: 0,
            seq: 0,
            executions: vec![root],
            tasks: Vec::new(),
            variables: Vec::new(),
            subscriptions: Vec::new(),
            jobs: Vec::new(),
            activities: Vec::new(),
            ended: None,
            delete_reason: None,
            suspension_state: SuspensionState::Active,
            ended_tasks: Vec::new(),
            thrown_signals: Vec::new(),
            raised: Vec::new(),
            interrupted_calls: Vec::new(),
            final_variables: Map::new(),
            index: Default::default(),
            variable_log: Vec::new(),
        }
    }

    /// The instance as it stands.
    pub fn instance(&self) -> &Instance {
        &self.inst
    }

    /// The instance after the command.
    pub fn into_instance(self) -> Instance {
        self.inst
    }
}

/// Most instances one multi-instance activity may have (its collection's length, its
/// `loopCardinality`): each is an execution, variables, a task or job and history rows, all
/// written in one transaction (docs/limits.md).
pub const MAX_MULTI_INSTANCE: usize = 10_000;

/// The local variable counting the runs of a standard loop (BPMN's `loopCounter`).
pub(crate) const LOOP_COUNTER: &str = "loopCounter";
