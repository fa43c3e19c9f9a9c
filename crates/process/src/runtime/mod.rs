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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use jiff::Timestamp;
use kairos_bpmn::{
    Definitions, EndEvent, EventTrigger, FlowIdx, FlowNode, Implementation, IoMapping, IoValue, NodeIdx, NodeKind,
    Process, StartEvent, ThrowEvent, TimerKind, TimerValue,
};
use kairos_expr::{Context, ExecutionInfo, Expression};

use crate::migrate::Migration;
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::state::*;

/// What the runtime needs from outside: the model, the database's now, and fresh ids.
pub struct Env<'a> {
    pub definitions: &'a Definitions,
    pub process: &'a Process,
    pub now: Timestamp,
    pub ids: &'a mut (dyn FnMut() -> String + Send),
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
    },
    /// An external worker reported a BPMN error for job `job_id`'s service task.
    ExternalBpmnError {
        job_id: String,
        code: String,
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
}

/// What a service task's handler answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceResult {
    /// It did its work; the value goes to `resultVariable` when the model names one.
    Done(Option<Json>),
    /// A business error (BPMN error code) for an error boundary event or event sub-process.
    BpmnError(String),
    /// It failed: the command fails (a job is retried; a request gets the message).
    Failed(String),
}

#[derive(Debug, Clone)]
enum Op {
    /// A token arrives at a node (async-before is honoured unless `skip_async`).
    Enter { exec: String, node: NodeIdx, skip_async: bool },
    /// A token leaves a node along its outgoing flows (async-after unless `skip_async`).
    Leave { exec: String, node: NodeIdx, skip_async: bool },
    /// A token has nowhere to go: it ends, and its scope may complete.
    End { exec: String },
}

/// Why [`Runtime::enter`] stopped the agenda.
enum Pause {
    Service(ServiceCall),
    Called(CalledStart),
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
    /// Variables set since conditional events were last checked.
    changed: BTreeSet<String>,
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
            changed: BTreeSet::new(),
            fresh_conditions: Vec::new(),
            open_records,
        }
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
            suspension_state: ACTIVE,
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
            suspension_state: ACTIVE,
            ended_tasks: Vec::new(),
            thrown_signals: Vec::new(),
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

    /// Applies a command and runs until every token waits or a handler must run.
    pub fn apply(&mut self, command: Command) -> Result<Step> {
        if !self.inst.is_running() {
            return Err(ProcessError::new(ErrorKind::NotFound, format!("process instance {} has ended", self.inst.id)));
        }
        let suspended = self.inst.suspension_state == SUSPENDED;
        match command {
            Command::Start { mut variables, start_user, start_event } => {
                let start = match start_event {
                    Some(id) => self.node_idx(&id)?,
                    None => self.none_start()?,
                };
                self.inst.start_activity = Some(self.node(start).id.clone());
                // As in Flowable and Camunda, the initiator variable exists even when nobody is
                // known to have started the instance (then it is null, so `${initiator}` is
                // null rather than an undefined variable).
                if let NodeKind::StartEvent(StartEvent { initiator: Some(var), .. }) = &self.node(start).kind {
                    match &start_user {
                        Some(user) => {
                            variables.insert(var.clone(), Json::String(user.clone()));
                        }
                        None => {
                            variables.entry(var.clone()).or_insert(Json::Null);
                        }
                    }
                }
                self.inst.start_user = start_user;
                let root = self.inst.id.clone();
                self.set_variables(&root, variables)?;
                self.arm_event_sub_processes(&root, None)?;
                let exec = self.new_token(&root, start);
                self.agenda.push_back(Op::Enter { exec, node: start, skip_async: false });
            }
            Command::CompleteTask { task_id, variables } => {
                let task = self.task(&task_id)?.clone();
                if suspended || task.suspension_state == SUSPENDED {
                    return Err(ProcessError::new(
                        ErrorKind::Conflict,
                        format!("task {task_id} cannot be completed: its process instance is suspended"),
                    ));
                }
                self.set_variables(&task.execution_id, variables)?;
                self.end_task(&task_id, None);
                let node = self.node_of(&task.execution_id)?;
                self.agenda.push_back(Op::Leave { exec: task.execution_id, node, skip_async: false });
            }
            Command::ClaimTask { task_id, assignee } => {
                let now = self.env.now;
                let task = self.task(&task_id)?;
                if let Some(current) = task.assignee.as_ref().filter(|a| **a != assignee) {
                    return Err(ProcessError::new(
                        ErrorKind::Conflict,
                        format!("task {task_id} is already claimed by {current}"),
                    ));
                }
                if let Some(t) = self.inst.tasks.iter_mut().find(|t| t.id == task_id) {
                    t.assignee = Some(assignee.clone());
                    t.claim_time = Some(now);
                }
                if let Some(a) = self.inst.activities.iter_mut().find(|a| a.task_id.as_deref() == Some(&task_id)) {
                    a.assignee = Some(assignee);
                }
            }
            Command::RunJob { job_id } => {
                if suspended {
                    return Err(ProcessError::new(ErrorKind::Conflict, "the process instance is suspended"));
                }
                self.run_job(&job_id)?;
            }
            Command::Message { name, variables } => {
                let sub = self
                    .inst
                    .subscriptions
                    .iter()
                    .find(|s| s.event_type == "message" && s.event_name == name)
                    .cloned()
                    .ok_or_else(|| {
                        ProcessError::new(
                            ErrorKind::NotFound,
                            format!("process instance {} does not wait for message '{name}'", self.inst.id),
                        )
                    })?;
                if suspended {
                    return Err(ProcessError::new(ErrorKind::Conflict, "the process instance is suspended"));
                }
                self.set_variables(&sub.execution_id, variables)?;
                self.fire(&sub.execution_id, &sub.activity_id, Some(&sub.id))?;
            }
            Command::Signal { name, variables } => {
                let subs: Vec<Subscription> = self
                    .inst
                    .subscriptions
                    .iter()
                    .filter(|s| s.event_type == "signal" && s.event_name == name)
                    .cloned()
                    .collect();
                if !subs.is_empty() && !suspended {
                    let root = self.inst.id.clone();
                    self.set_variables(&root, variables)?;
                    for s in subs {
                        // An earlier delivery of this signal may have cancelled this one's wait.
                        if self.inst.subscriptions.iter().any(|x| x.id == s.id) {
                            self.fire(&s.execution_id, &s.activity_id, Some(&s.id))?;
                        }
                    }
                }
            }
            Command::CalledEnded { execution_id, variables } => {
                let node = self.node_of(&execution_id)?;
                let NodeKind::CallActivity(ca) = &self.node(node).kind else {
                    return Err(ProcessError::new(
                        ErrorKind::Conflict,
                        format!("execution {execution_id} is not at a call activity"),
                    ));
                };
                let outputs = ca.outputs.clone();
                let id = self.node(node).id.clone();
                let out = self.map_variables(&outputs, &variables, &id)?;
                self.set_variables(&execution_id, out)?;
                self.agenda.push_back(Op::Leave { exec: execution_id, node, skip_async: false });
            }
            Command::CompleteExternal { job_id, variables } => {
                let job = self.external_job(&job_id, suspended)?;
                self.set_variables(&job.execution_id, variables)?;
                let node = self.node_idx(&job.activity_id)?;
                self.agenda.push_back(Op::Leave { exec: job.execution_id, node, skip_async: false });
            }
            Command::ExternalBpmnError { job_id, code, variables } => {
                let job = self.external_job(&job_id, suspended)?;
                self.set_variables(&job.execution_id, variables)?;
                self.throw_error(&job.execution_id, &job.activity_id, &code)?;
            }
            Command::SetBusinessKey { business_key } => {
                self.inst.business_key = business_key;
                return Ok(Step::Done);
            }
            Command::SetVariables { variables } => {
                let root = self.inst.id.clone();
                self.set_variables(&root, variables)?;
            }
            Command::SetTaskVariables { task_id, variables, local } => {
                if local {
                    self.set_task_locals(&task_id, variables)?;
                } else {
                    let exec = self.task(&task_id)?.execution_id.clone();
                    self.set_variables(&exec, variables)?;
                }
            }
            Command::Delete { reason } => {
                self.end_instance(None, Some(reason));
                return Ok(Step::Done);
            }
            Command::Suspend | Command::Activate => {
                let state = if matches!(command, Command::Suspend) { SUSPENDED } else { ACTIVE };
                self.inst.suspension_state = state;
                for e in &mut self.inst.executions {
                    e.suspension_state = state;
                }
                for t in &mut self.inst.tasks {
                    t.suspension_state = state;
                }
                return Ok(Step::Done);
            }
        }
        self.run()
    }

    /// Continues after a service task's handler: [`ServiceResult::Done`] leaves the task
    /// (storing the result in `resultVariable` if the model names one), a BPMN error goes to
    /// the boundary event or sub-process that catches it, a failure fails the command.
    pub fn resume(&mut self, result: ServiceResult) -> Result<Step> {
        let Some((exec, node)) = self.waiting.take() else {
            return Err(ProcessError::new(ErrorKind::Invalid, "no service task is waiting for a result"));
        };
        let n = self.node(node);
        let id = n.id.clone();
        let result_variable = match &n.kind {
            NodeKind::ServiceTask(s) => s.result_variable.clone(),
            _ => None,
        };
        match result {
            ServiceResult::Done(value) => {
                if let (Some(name), Some(value)) = (result_variable, value) {
                    let mut vars = Map::new();
                    vars.insert(name, value);
                    self.set_variables(&exec, vars)?;
                }
                self.agenda.push_front(Op::Leave { exec, node, skip_async: false });
                self.run()
            }
            ServiceResult::BpmnError(code) => {
                self.throw_error(&exec, &id, &code)?;
                self.run()
            }
            ServiceResult::Failed(message) => {
                Err(ProcessError::at(ErrorKind::Handler, &id, format!("service task '{id}' failed: {message}")))
            }
        }
    }

    /// Continues after the engine started the instance a call activity asked for: `ended`
    /// with its final variables when it ran to its end at once, else the call activity waits
    /// for [`Command::CalledEnded`].
    pub fn resume_called(&mut self, ended: Option<Map<String, Json>>) -> Result<Step> {
        let Some((exec, node)) = self.waiting_call.take() else {
            return Err(ProcessError::new(ErrorKind::Invalid, "no call activity is waiting for its called instance"));
        };
        match ended {
            Some(variables) => {
                let NodeKind::CallActivity(ca) = &self.node(node).kind else {
                    unreachable!("waiting_call is a call activity")
                };
                let outputs = ca.outputs.clone();
                let id = self.node(node).id.clone();
                let out = self.map_variables(&outputs, &variables, &id)?;
                self.set_variables(&exec, out)?;
                self.agenda.push_front(Op::Leave { exec, node, skip_async: false });
            }
            None => self.wait(&exec),
        }
        self.run()
    }

    /// Applies call-activity mappings to `from` (the caller's visible variables for `in`, the
    /// called instance's final ones for `out`).
    fn map_variables(
        &self,
        mappings: &[kairos_bpmn::VariableMapping],
        from: &Map<String, Json>,
        element: &str,
    ) -> Result<Map<String, Json>> {
        let mut out = Map::new();
        for m in mappings {
            match m {
                kairos_bpmn::VariableMapping::All { .. } => out.extend(from.clone()),
                kairos_bpmn::VariableMapping::Variable { source, target, .. } => {
                    out.insert(target.clone(), from.get(source).cloned().unwrap_or(Json::Null));
                }
                kairos_bpmn::VariableMapping::Expression { expression, target, .. } => {
                    let expr = Expression::parse(expression).map_err(|e| {
                        ProcessError::at(
                            ErrorKind::Model,
                            element,
                            format!("mapping '{expression}' of '{element}': {e}"),
                        )
                    })?;
                    let v = expr.eval(from).map_err(|e| {
                        ProcessError::at(
                            ErrorKind::Model,
                            element,
                            format!("mapping '{expression}' of '{element}': {e}"),
                        )
                    })?;
                    out.insert(target.clone(), v);
                }
                _ => {}
            }
        }
        Ok(out)
    }

    // ----- the agenda ------------------------------------------------------------------------

    fn run(&mut self) -> Result<Step> {
        let mut budget = 100_000usize;
        let mut rounds = 0;
        loop {
            match self.drain(&mut budget)? {
                Some(pause) => return Ok(pause),
                None if !self.inst.is_running() => break,
                None => {}
            }
            if !self.check_conditions()? {
                break;
            }
            rounds += 1;
            if rounds > 100 {
                return Err(ProcessError::new(
                    ErrorKind::Model,
                    "conditional events kept firing one another (more than 100 rounds in one command)",
                ));
            }
        }
        self.normalize();
        Ok(Step::Done)
    }

    /// Runs the agenda until it is empty (`None`) or a service task or call activity pauses it.
    fn drain(&mut self, budget: &mut usize) -> Result<Option<Step>> {
        while let Some(op) = self.agenda.pop_front() {
            *budget -= 1;
            if *budget == 0 {
                return Err(ProcessError::new(
                    ErrorKind::Model,
                    "the command took more than 100,000 steps without reaching a wait state (a loop without a wait state?)",
                ));
            }
            match op {
                Op::Enter { exec, node, skip_async } => match self.enter(&exec, node, skip_async)? {
                    Some(Pause::Service(call)) => return Ok(Some(Step::Call(call))),
                    Some(Pause::Called(start)) => return Ok(Some(Step::StartCalled(start))),
                    None => {}
                },
                Op::Leave { exec, node, skip_async } => self.leave(&exec, node, skip_async)?,
                Op::End { exec } => self.end_token(&exec)?,
            }
            if !self.inst.is_running() {
                self.agenda.clear();
            }
        }
        Ok(None)
    }

    /// Checks the conditional events (SPEC-wise BPMN 2.0 §10.5.2): those armed since the last
    /// check, and — when variables changed — every other one (but one naming a
    /// `camunda:variableName` only when that variable changed). A true condition fires its
    /// event. True when something fired (the agenda has work again).
    fn check_conditions(&mut self) -> Result<bool> {
        let changed = std::mem::take(&mut self.changed);
        let fresh = std::mem::take(&mut self.fresh_conditions);
        if changed.is_empty() && fresh.is_empty() {
            return Ok(false);
        }
        let subs: Vec<Subscription> =
            self.inst.subscriptions.iter().filter(|s| s.event_type == "conditional").cloned().collect();
        let mut fired = false;
        for s in subs {
            if !self.inst.subscriptions.iter().any(|x| x.id == s.id) {
                continue; // gone with an event that fired before it
            }
            let Some(EventTrigger::Conditional(c)) =
                self.env.process.node_by_id(&s.activity_id).and_then(|n| n.kind.trigger()).cloned()
            else {
                continue;
            };
            let relevant = fresh.contains(&s.id)
                || (!changed.is_empty() && c.variable_name.as_ref().is_none_or(|v| changed.contains(v)));
            if !relevant {
                continue;
            }
            // Edge-triggered (BPMN 2.0 §10.5.2: "when the condition becomes true"): a
            // non-interrupting event that stays true does not fire again on every change.
            let (was, now) =
                (s.event_name == "true", self.event_condition(&s.execution_id, &s.activity_id, &c.condition)?);
            if now && !was {
                self.fire(&s.execution_id, &s.activity_id, Some(&s.id))?;
                fired = true;
            }
            if now != was {
                let new_id = (self.env.ids)();
                if let Some(kept) = self.inst.subscriptions.iter_mut().find(|x| x.id == s.id) {
                    // Subscriptions are written as inserts and deletes: a new row for the new value.
                    kept.id = new_id;
                    kept.event_name = now.to_string();
                }
            }
        }
        Ok(fired || !self.agenda.is_empty())
    }

    /// A token arrives at `node`.
    fn enter(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<Option<Pause>> {
        let n = self.node(node).clone();
        if let Some(e) = self.inst.execution_mut(exec) {
            e.activity = Some(n.id.clone());
            e.is_active = true;
        }
        if n.async_before && !skip_async {
            self.add_job(exec, &n, JobKind::AsyncBefore, None, None);
            if let Some(e) = self.inst.execution_mut(exec) {
                e.is_active = false;
            }
            return Ok(None);
        }
        let mi_child = self.is_mi_child(exec, &n.id);
        if let Some(mi) = n.multi_instance.as_ref().filter(|_| !mi_child) {
            // The multi-instance body: this token becomes its root, the instances its children.
            if !n.boundary_events.is_empty() {
                self.arm_boundary_events(exec, &n)?;
            }
            return self.start_multi_instance(exec, node, &mi.clone()).map(|()| None);
        }
        if let Some(io) = &n.io {
            self.map_inputs(exec, &n.id, io)?;
        }
        // A join is one activity in history, recorded when it fires, not once per arrival.
        let join = matches!(n.kind, NodeKind::ParallelGateway | NodeKind::InclusiveGateway) && n.incoming.len() > 1;
        if !join {
            self.open_record(exec, &n, None);
        }
        if !n.boundary_events.is_empty() && !mi_child {
            self.arm_boundary_events(exec, &n)?;
        }
        match &n.kind {
            NodeKind::StartEvent(_) | NodeKind::PassThrough => self.push_leave(exec, node),
            NodeKind::IntermediateThrowEvent(t) => {
                if let Some(signal) = &t.signal {
                    self.broadcast_in_instance(&signal.name.clone())?;
                    self.inst.thrown_signals.push(signal.name.clone());
                }
                if let Some(escalation) = &t.escalation {
                    self.throw_escalation(exec, escalation.code.as_deref())?;
                }
                // An interrupting catch of its escalation ended this token.
                if self.inst.execution(exec).is_some() {
                    self.push_leave(exec, node);
                }
            }
            NodeKind::EndEvent(end) => {
                self.close_record(exec, &n.id, None);
                match end {
                    EndEvent::None => self.agenda.push_back(Op::End { exec: exec.to_string() }),
                    EndEvent::Terminate => self.terminate_scope(exec, &n.id)?,
                    EndEvent::Error(err) => {
                        let code = err.code.clone().unwrap_or_default();
                        self.throw_error(exec, &n.id, &code)?;
                    }
                    EndEvent::Signal(signal) => {
                        self.broadcast_in_instance(&signal.name.clone())?;
                        self.inst.thrown_signals.push(signal.name.clone());
                        self.agenda.push_back(Op::End { exec: exec.to_string() });
                    }
                    EndEvent::Escalation(escalation) => {
                        self.throw_escalation(exec, escalation.code.as_deref())?;
                        if self.inst.execution(exec).is_some() {
                            self.agenda.push_back(Op::End { exec: exec.to_string() });
                        }
                    }
                    _ => self.agenda.push_back(Op::End { exec: exec.to_string() }),
                }
            }
            NodeKind::UserTask(_) => self.create_task(exec, &n)?,
            NodeKind::ServiceTask(s) => match &s.implementation {
                Implementation::Handler { name, .. } => {
                    let mut payload = self.inst.visible_variables(exec);
                    if !s.fields.is_empty() {
                        let mut fields = Map::new();
                        for f in &s.fields {
                            let v = if f.expression {
                                self.eval(exec, &n.id, &f.value)?
                            } else {
                                Json::String(f.value.clone())
                            };
                            fields.insert(f.name.clone(), v);
                        }
                        payload.insert("fields".into(), Json::Object(fields));
                    }
                    self.waiting = Some((exec.to_string(), node));
                    return Ok(Some(Pause::Service(ServiceCall {
                        execution_id: exec.to_string(),
                        activity_id: n.id.clone(),
                        handler: name.clone(),
                        payload: Json::Object(payload),
                    })));
                }
                Implementation::Expression { text } => {
                    // Flowable's expression service task: its value goes to resultVariable.
                    let value = self.eval(exec, &n.id, text)?;
                    if let Some(name) = &s.result_variable {
                        self.set_variables(exec, Map::from_iter([(name.clone(), value)]))?;
                    }
                    self.push_leave(exec, node);
                }
                Implementation::External { topic } => {
                    self.add_job(exec, &n, JobKind::External, None, None);
                    if let Some(j) = self.inst.jobs.last_mut() {
                        j.topic = Some(topic.clone());
                    }
                    self.wait(exec);
                }
                _ => {
                    return Err(ProcessError::at(
                        ErrorKind::Model,
                        &n.id,
                        format!("service task '{}' names no handler this engine can run", n.id),
                    ));
                }
            },
            NodeKind::ReceiveTask(r) => {
                if let Some(m) = &r.message {
                    self.subscribe(exec, "message", &m.name.clone(), &n.id);
                }
                self.wait(exec);
            }
            // A catching link event is where a throwing one's token continues: nothing to wait for.
            NodeKind::IntermediateCatchEvent(c) if matches!(c.trigger, EventTrigger::Link(_)) => {
                self.push_leave(exec, node)
            }
            NodeKind::IntermediateCatchEvent(c) => {
                self.arm_trigger(exec, &n, &c.trigger.clone())?;
                self.wait(exec);
            }
            NodeKind::ExclusiveGateway => {
                let flow = self.choose_exclusive(exec, &n)?;
                self.close_record(exec, &n.id, None);
                self.take(exec, vec![flow]);
            }
            NodeKind::InclusiveGateway => {
                if join {
                    if !self.join_inclusive(exec, node)? {
                        return Ok(None);
                    }
                    self.open_record(exec, &n, None);
                }
                let flows = self.choose_inclusive(exec, &n)?;
                self.close_record(exec, &n.id, None);
                self.take(exec, flows);
            }
            NodeKind::ParallelGateway => {
                if join {
                    if !self.join_parallel(exec, node) {
                        return Ok(None);
                    }
                    self.open_record(exec, &n, None);
                }
                self.close_record(exec, &n.id, None);
                self.take(exec, n.outgoing.clone());
            }
            NodeKind::EventBasedGateway => {
                self.arm_waits(exec, &n)?;
                self.wait(exec);
            }
            NodeKind::CallActivity(ca) => {
                let ca = ca.clone();
                let process_key = self.eval_string(exec, &n.id, &ca.called_element)?;
                let business_key = match (&ca.business_key, ca.inherit_business_key) {
                    (Some(expr), _) => Some(self.eval_string(exec, &n.id, expr)?),
                    (None, true) => self.inst.business_key.clone(),
                    (None, false) => None,
                };
                let visible = self.inst.visible_variables(exec);
                let variables = self.map_variables(&ca.inputs, &visible, &n.id)?;
                self.waiting_call = Some((exec.to_string(), node));
                return Ok(Some(Pause::Called(CalledStart {
                    execution_id: exec.to_string(),
                    activity_id: n.id.clone(),
                    process_key,
                    business_key,
                    variables,
                })));
            }
            NodeKind::SubProcess(sp) if !sp.triggered_by_event => {
                let start = self
                    .env
                    .process
                    .start_events_in(Some(node))
                    .find(|&s| matches!(self.node(s).kind.trigger(), Some(EventTrigger::None)))
                    .ok_or_else(|| {
                        ProcessError::at(
                            ErrorKind::Model,
                            &n.id,
                            format!("sub-process '{}' has no none start event", n.id),
                        )
                    })?;
                if let Some(e) = self.inst.execution_mut(exec) {
                    e.is_scope = true;
                }
                self.arm_event_sub_processes(exec, Some(node))?;
                let inner = self.new_token(exec, start);
                self.agenda.push_back(Op::Enter { exec: inner, node: start, skip_async: false });
            }
            _ => {
                return Err(ProcessError::at(
                    ErrorKind::Model,
                    &n.id,
                    format!("{} '{}' is not supported by this engine yet", n.element, n.id),
                ));
            }
        }
        Ok(None)
    }

    /// A token leaves `node` along its outgoing flows.
    fn leave(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<()> {
        let n = self.node(node).clone();
        self.close_record(exec, &n.id, None);
        // Outputs are mapped once per run of the activity: by each multi-instance child, not by
        // the body; and before an async-after job is made, not again after it.
        let body = self.inst.execution(exec).is_some_and(|e| e.is_mi_root);
        let after_job = skip_async && n.async_after;
        if let Some(io) = n.io.as_ref().filter(|_| !(body || after_job)) {
            self.map_outputs(exec, &n.id, io)?;
        }
        if n.multi_instance.is_some() && self.is_mi_child(exec, &n.id) {
            return self.multi_instance_child_done(exec, node);
        }
        self.disarm_boundary_events(exec);
        if matches!(n.kind, NodeKind::SubProcess(_)) {
            // The sub-process scope ends: its event sub-processes stop listening.
            self.inst.jobs.retain(|j| j.execution_id != exec);
            self.inst.subscriptions.retain(|s| s.execution_id != exec);
        }
        if let Some(e) = self.inst.execution_mut(exec).filter(|e| e.is_mi_root) {
            e.is_mi_root = false;
            e.is_concurrent = false;
            let root = exec.to_string();
            self.inst.variables.retain(|v| v.execution_id != root);
        }
        if n.async_after && !skip_async {
            self.add_job(exec, &n, JobKind::AsyncAfter, None, None);
            self.wait(exec);
            return Ok(());
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_scope = false;
        }
        if let NodeKind::IntermediateThrowEvent(ThrowEvent { link: Some(link), .. }) = &n.kind {
            self.agenda.push_back(Op::Enter { exec: exec.to_string(), node: link.target, skip_async: false });
            return Ok(());
        }
        let flows = if n.kind.is_gateway() { n.outgoing.clone() } else { self.choose_activity_flows(exec, &n)? };
        self.take(exec, flows);
        Ok(())
    }

    /// Moves a token along `flows`: none ends it, one moves it, several split it into
    /// concurrent tokens of the same scope.
    fn take(&mut self, exec: &str, flows: Vec<FlowIdx>) {
        let Some((first, rest)) = flows.split_first() else {
            self.agenda.push_back(Op::End { exec: exec.to_string() });
            return;
        };
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let mut ops = vec![Op::Enter { exec: exec.to_string(), node: self.flow_target(*first), skip_async: false }];
        for &f in rest {
            let target = self.flow_target(f);
            let token = self.new_token(&parent, target);
            ops.push(Op::Enter { exec: token, node: target, skip_async: false });
        }
        self.agenda.extend(ops);
    }

    // ----- multi-instance ----------------------------------------------------------------------

    fn is_mi_child(&self, exec: &str, activity: &str) -> bool {
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        parent
            .and_then(|p| self.inst.execution(&p))
            .is_some_and(|p| p.is_mi_root && p.activity.as_deref() == Some(activity))
    }

    /// Sets up the multi-instance body at `exec` (seed 003 §3.2 and §5.3: the root is a scope
    /// and concurrent; each instance a concurrent child with its own `loopCounter` and element
    /// variable; `nrOfInstances` / `nrOfCompletedInstances` / `nrOfActiveInstances` live on
    /// the root).
    fn start_multi_instance(&mut self, exec: &str, node: NodeIdx, mi: &kairos_bpmn::MultiInstance) -> Result<()> {
        let id = self.node(node).id.clone();
        let items: Option<Vec<Json>> = match &mi.collection {
            Some(c) => {
                let value = if is_expression(c) {
                    self.eval(exec, &id, c)?
                } else {
                    self.inst.visible_variable(exec, c).cloned().ok_or_else(|| {
                        ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("multi-instance collection '{c}' of '{id}' is not a variable"),
                        )
                    })?
                };
                match value {
                    Json::Array(a) if a.len() > MAX_MULTI_INSTANCE => {
                        return Err(ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!(
                                "multi-instance collection '{c}' of '{id}' has {} items; the limit is {MAX_MULTI_INSTANCE}",
                                a.len()
                            ),
                        ));
                    }
                    Json::Array(a) => Some(a),
                    other => {
                        return Err(ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("multi-instance collection '{c}' of '{id}' is not a list but {other}"),
                        ));
                    }
                }
            }
            None => None,
        };
        let count = match (&items, &mi.cardinality) {
            (Some(items), _) => items.len() as i64,
            (None, Some(card)) => {
                let v = self.eval_string(exec, &id, card)?;
                v.trim().parse::<i64>().ok().filter(|n| (0..=MAX_MULTI_INSTANCE as i64).contains(n)).ok_or_else(
                    || {
                        ProcessError::at(
                            ErrorKind::Model,
                            &id,
                            format!("loopCardinality of '{id}' is not an integer 0..={MAX_MULTI_INSTANCE}: '{v}'"),
                        )
                    },
                )?
            }
            (None, None) => {
                return Err(ProcessError::at(
                    ErrorKind::Model,
                    &id,
                    format!("multi-instance '{id}' has no collection and no loopCardinality"),
                ));
            }
        };
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_mi_root = true;
            e.is_scope = true;
            e.is_concurrent = true;
            e.is_active = false;
        }
        self.set_local(exec, "nrOfInstances", Json::from(count));
        self.set_local(exec, "nrOfCompletedInstances", Json::from(0));
        let active = if mi.sequential { count.min(1) } else { count };
        self.set_local(exec, "nrOfActiveInstances", Json::from(active));
        if count == 0 {
            self.agenda.push_back(Op::Leave { exec: exec.to_string(), node, skip_async: true });
            return Ok(());
        }
        let first_batch = if mi.sequential { 1 } else { count };
        for i in 0..first_batch {
            self.start_mi_child(exec, node, mi, i, items.as_ref().and_then(|it| it.get(i as usize)).cloned());
        }
        Ok(())
    }

    fn start_mi_child(
        &mut self,
        root: &str,
        node: NodeIdx,
        mi: &kairos_bpmn::MultiInstance,
        i: i64,
        item: Option<Json>,
    ) {
        let child = self.new_token(root, node);
        if let Some(e) = self.inst.execution_mut(&child) {
            e.is_concurrent = true;
        }
        self.set_local(&child, "loopCounter", Json::from(i));
        if let (Some(var), Some(item)) = (&mi.element_variable, item) {
            self.set_local(&child, var, item);
        }
        self.agenda.push_back(Op::Enter { exec: child, node, skip_async: true });
    }

    /// One instance of a multi-instance activity completed.
    fn multi_instance_child_done(&mut self, child: &str, node: NodeIdx) -> Result<()> {
        let n = self.node(node).clone();
        let Some(mi) = n.multi_instance.clone() else { return Ok(()) };
        let root = self.inst.execution(child).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let get = |rt: &Self, name: &str| rt.inst.visible_variable(&root, name).and_then(Json::as_i64).unwrap_or(0);
        let total = get(self, "nrOfInstances");
        let completed = get(self, "nrOfCompletedInstances") + 1;
        let active = (get(self, "nrOfActiveInstances") - 1).max(0);
        self.set_local(&root, "nrOfCompletedInstances", Json::from(completed));
        self.set_local(&root, "nrOfActiveInstances", Json::from(active));
        let done_early = match &mi.completion_condition {
            Some(c) => self.eval_bool(child, &n.id, c)?,
            None => false,
        };
        let loop_counter = self.inst.visible_variable(child, "loopCounter").and_then(Json::as_i64).unwrap_or(0);
        self.remove_execution_tree(child, None);
        if done_early || completed >= total {
            // Instances still running are cancelled (a completion condition that held).
            let others: Vec<String> = self
                .inst
                .executions
                .iter()
                .filter(|e| e.parent_id.as_deref() == Some(&root) && !e.is_event_scope)
                .map(|e| e.id.clone())
                .collect();
            for o in others {
                self.remove_execution_tree(&o, Some("multi-instance completion condition held"));
            }
            self.agenda.push_back(Op::Leave { exec: root, node, skip_async: false });
        } else if mi.sequential {
            let next = loop_counter + 1;
            let item = match &mi.collection {
                Some(c) if is_expression(c) => self.eval(&root, &n.id, c)?.get(next as usize).cloned(),
                Some(c) => self.inst.visible_variable(&root, c).and_then(|v| v.get(next as usize)).cloned(),
                None => None,
            };
            self.set_local(&root, "nrOfActiveInstances", Json::from(1));
            self.start_mi_child(&root, node, &mi, next, item);
        }
        Ok(())
    }

    /// `camunda:inputOutput` inputs: evaluated in order at the activity's token (so a later
    /// one sees an earlier one) and kept local to it.
    fn map_inputs(&mut self, exec: &str, element: &str, io: &IoMapping) -> Result<()> {
        for p in &io.inputs {
            let value = self.io_value(exec, element, &p.value)?;
            self.set_local(exec, &p.name, value);
        }
        Ok(())
    }

    /// `camunda:inputOutput` outputs: evaluated at the token (seeing the inputs), then the
    /// inputs go and the outputs are set from the enclosing scope (where a variable of that
    /// name lives, else the instance), as a completing Camunda activity does.
    fn map_outputs(&mut self, exec: &str, element: &str, io: &IoMapping) -> Result<()> {
        let mut values = Map::new();
        for p in &io.outputs {
            values.insert(p.name.clone(), self.io_value(exec, element, &p.value)?);
        }
        self.drop_inputs(exec, io);
        let scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_else(|| exec.to_string());
        self.set_variables(&scope, values)
    }

    fn drop_inputs(&mut self, exec: &str, io: &IoMapping) {
        self.inst.variables.retain(|v| !v.in_scope(exec) || !io.inputs.iter().any(|p| p.name == v.name));
    }

    fn io_value(&self, exec: &str, element: &str, value: &IoValue) -> Result<Json> {
        Ok(match value {
            IoValue::Null => Json::Null,
            IoValue::Text(t) if is_expression(t) => self.eval(exec, element, t)?,
            IoValue::Text(t) => Json::String(t.clone()),
            IoValue::List(items) => {
                Json::Array(items.iter().map(|i| self.io_value(exec, element, i)).collect::<Result<_>>()?)
            }
            IoValue::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.io_value(exec, element, v)?)))
                    .collect::<Result<_>>()?,
            ),
            _ => Json::Null,
        })
    }

    /// Sets a variable in `exec`'s own scope.
    fn set_local(&mut self, exec: &str, name: &str, value: Json) {
        self.changed.insert(name.to_string());
        let at = self.put_variable(exec, None, name, value);
        self.log_variable(at, exec);
    }

    /// Sets `name` in `execution`'s scope (or on `task`, for a task-local variable), creating
    /// the row when there is none; returns its index in the instance's variables. Scope
    /// variables are found through the instance's index (a large multi-instance body has
    /// thousands); a task's few locals by a scan.
    fn put_variable(&mut self, execution: &str, task: Option<&str>, name: &str, value: Json) -> usize {
        let found = match task {
            None => self.inst.index.scope_variable(&self.inst.variables, execution, name),
            Some(t) => self.inst.variables.iter().position(|v| v.name == name && v.task_id.as_deref() == Some(t)),
        };
        if let Some(at) = found {
            self.inst.variables[at].value = value;
            return at;
        }
        let id = (self.env.ids)();
        self.inst.variables.push(Variable {
            id,
            rev: 0,
            name: name.to_string(),
            execution_id: execution.to_string(),
            value,
            task_id: task.map(str::to_string),
        });
        self.inst.variables.len() - 1
    }

    /// Records the change of variable `at`, set from execution `source`, for history.
    fn log_variable(&mut self, at: usize, source: &str) {
        let v = &self.inst.variables[at];
        let activity_instance_id = self.open_records.get(source).cloned();
        let change = VariableChange {
            variable_id: v.id.clone(),
            name: v.name.clone(),
            execution_id: v.execution_id.clone(),
            task_id: v.task_id.clone(),
            value: v.value.clone(),
            time: self.env.now,
            activity_instance_id,
        };
        self.inst.variable_log.push(change);
    }

    /// A token ends; when it was the last of its scope, the scope completes.
    fn end_token(&mut self, exec: &str) -> Result<()> {
        let Some(e) = self.inst.execution(exec).cloned() else { return Ok(()) };
        let Some(scope) = e.parent_id.clone() else {
            // The root itself (a process without a start token).
            self.end_instance(e.activity.clone(), None);
            return Ok(());
        };
        self.remove_execution_tree(exec, None);
        let tokens_left =
            self.inst.executions.iter().any(|x| x.parent_id.as_deref() == Some(&scope) && !x.is_event_scope);
        if tokens_left {
            return Ok(());
        }
        if scope == self.inst.id {
            self.end_instance(e.activity.clone(), None);
        } else {
            let node = self.node_of(&scope)?;
            self.agenda.push_back(Op::Leave { exec: scope, node, skip_async: false });
        }
        Ok(())
    }

    // ----- jobs, timers, events ----------------------------------------------------------------

    /// Takes an external-worker job out of the instance (its row is deleted with the command).
    fn external_job(&mut self, job_id: &str, suspended: bool) -> Result<ProcessJob> {
        if suspended {
            return Err(ProcessError::new(ErrorKind::Conflict, "the process instance is suspended"));
        }
        let job =
            self.inst.jobs.iter().find(|j| j.id == job_id && j.kind == JobKind::External).cloned().ok_or_else(
                || ProcessError::new(ErrorKind::NotFound, format!("external task {job_id} does not exist")),
            )?;
        self.inst.jobs.retain(|j| j.id != job_id);
        Ok(job)
    }

    fn run_job(&mut self, job_id: &str) -> Result<()> {
        let job = self.inst.jobs.iter().find(|j| j.id == job_id).cloned().ok_or_else(|| {
            ProcessError::new(
                ErrorKind::NotFound,
                format!("job {job_id} is not a job of process instance {}", self.inst.id),
            )
        })?;
        if job.repeat.is_none() {
            self.inst.jobs.retain(|j| j.id != job_id);
        }
        let node = self.node_idx(&job.activity_id)?;
        match job.kind {
            JobKind::AsyncBefore => {
                self.agenda.push_back(Op::Enter { exec: job.execution_id, node, skip_async: true });
            }
            JobKind::AsyncAfter => {
                self.agenda.push_back(Op::Leave { exec: job.execution_id, node, skip_async: true });
            }
            JobKind::Timer => self.fire(&job.execution_id, &job.activity_id, None)?,
            JobKind::External => {
                return Err(ProcessError::new(
                    ErrorKind::Conflict,
                    format!("job {job_id} is done by an external worker"),
                ));
            }
        }
        Ok(())
    }

    /// The event `activity` that `exec` waits for happened (a timer fired, a message or signal
    /// arrived). `exec` is the waiting token (catch event, receive task, event-based gateway) or
    /// the event-scope execution of a boundary event.
    fn fire(&mut self, exec: &str, activity: &str, subscription: Option<&str>) -> Result<()> {
        let node = self.node_idx(activity)?;
        let n = self.node(node).clone();
        let Some(e) = self.inst.execution(exec).cloned() else {
            return Err(ProcessError::new(ErrorKind::NotFound, format!("execution {exec} is gone")));
        };
        if let (NodeKind::StartEvent(start), Some(esp)) = (&n.kind, n.scope) {
            let interrupting = start.interrupting;
            if let Some(sub) = subscription.filter(|_| interrupting) {
                self.inst.subscriptions.retain(|s| s.id != sub);
            }
            return self.start_event_sub_process(exec, esp, node, interrupting);
        }
        if let NodeKind::BoundaryEvent(b) = &n.kind {
            let activity_exec = e.parent_id.clone().unwrap_or_default();
            if b.cancel_activity {
                self.cancel_activity(&activity_exec, &format!("boundary event {activity}"));
                self.open_record(&activity_exec, &n, None);
                self.push_leave(&activity_exec, node);
            } else {
                let scope = self.inst.execution(&activity_exec).and_then(|a| a.parent_id.clone()).unwrap_or_default();
                let token = self.new_token(&scope, node);
                self.open_record(&token, &n, None);
                self.push_leave(&token, node);
                // A one-shot trigger of a non-interrupting boundary is used up; cycles re-arm.
                if let Some(sub) = subscription {
                    // Signals and conditions can come again; a message or a timer is used up.
                    let keep = n
                        .kind
                        .trigger()
                        .is_some_and(|t| matches!(t, EventTrigger::Signal(_) | EventTrigger::Conditional(_)));
                    if !keep {
                        self.inst.subscriptions.retain(|s| s.id != sub);
                    }
                }
            }
            return Ok(());
        }
        if let Some(sub) = subscription {
            self.inst.subscriptions.retain(|s| s.id != sub);
        }
        let at_gateway = e.activity.as_deref() != Some(activity);
        if at_gateway {
            // An event-based gateway's branch won: the other branches' waits go.
            let gateway = e.activity.clone().unwrap_or_default();
            self.inst.jobs.retain(|j| j.execution_id != exec);
            self.inst.subscriptions.retain(|s| s.execution_id != exec);
            self.close_record(exec, &gateway, None);
            if let Some(x) = self.inst.execution_mut(exec) {
                x.activity = Some(activity.to_string());
                x.is_active = true;
            }
            self.open_record(exec, &n, None);
        } else {
            self.inst.jobs.retain(|j| !(j.execution_id == exec && j.activity_id == activity && j.repeat.is_none()));
            if let Some(x) = self.inst.execution_mut(exec) {
                x.is_active = true;
            }
        }
        self.push_leave(exec, node);
        Ok(())
    }

    /// Arms what a token at an event-based gateway waits for: the timers and subscriptions of
    /// the catch events and receive tasks its flows lead to (the first to fire wins).
    fn arm_waits(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        match &n.kind {
            NodeKind::EventBasedGateway => {
                for &f in &n.outgoing {
                    let target = self.node(self.flow_target(f)).clone();
                    let trigger = match &target.kind {
                        NodeKind::IntermediateCatchEvent(c) => c.trigger.clone(),
                        NodeKind::ReceiveTask(r) => match &r.message {
                            Some(m) => EventTrigger::Message(m.clone()),
                            None => continue,
                        },
                        _ => continue,
                    };
                    self.arm_trigger(exec, &target, &trigger)?;
                }
            }
            NodeKind::IntermediateCatchEvent(c) => self.arm_trigger(exec, n, &c.trigger.clone())?,
            NodeKind::ReceiveTask(r) => {
                if let Some(m) = &r.message {
                    self.subscribe(exec, "message", &m.name.clone(), &n.id);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Moves the instance to the definition this runtime was made with (SPEC P13), along a
    /// checked [`Migration`]: every token and open history record moves to its target
    /// activity, tasks take the target's key and name, async and external jobs follow their
    /// activity. Waits are re-armed from the target model — boundary events, event
    /// sub-processes, catch events, event-based gateways — so a message or signal renamed in
    /// the new version is listened for under its new name; a timer that is the same in both
    /// (same id after mapping, same text) keeps its due date instead of starting over.
    pub fn migrate(&mut self, migration: &Migration, definition_id: &str, definition_key: &str) -> Result<()> {
        if !self.inst.is_running() {
            return Err(ProcessError::new(ErrorKind::NotFound, format!("process instance {} has ended", self.inst.id)));
        }
        self.inst.definition_id = definition_id.to_string();
        self.inst.definition_key = definition_key.to_string();
        // The due dates (and cycles) of timers that stay the same, by (the execution holding the
        // wait, or for a boundary event the activity's execution; the target event's id).
        let mut dues = BTreeMap::new();
        // Which waits were live, by the same key (a used-up one is not armed again), and when
        // each subscription was made (same-named waits are served in that order).
        let mut live = BTreeSet::new();
        let mut created = BTreeMap::new();
        for s in &self.inst.subscriptions {
            let key = (self.wait_anchor(&s.execution_id), migration.target_of(&s.activity_id).to_string());
            created.insert((key.0.clone(), key.1.clone(), s.event_type.clone()), (s.created, s.event_name.clone()));
            live.insert(key);
        }
        for j in self.inst.jobs.iter().filter(|j| j.kind == JobKind::Timer) {
            let anchor = self.wait_anchor(&j.execution_id);
            live.insert((anchor.clone(), migration.target_of(&j.activity_id).to_string()));
            let to = migration.target_of(&j.activity_id);
            let same = match (migration.source_timers.get(&j.activity_id), self.env.process.node_by_id(to)) {
                (Some(text), Some(n)) => matches!(n.kind.trigger(), Some(EventTrigger::Timer(t)) if &t.text == text),
                _ => false,
            };
            if let (true, Some(due)) = (same, j.due) {
                dues.insert((anchor, to.to_string()), (due, j.repeat.clone()));
            }
        }
        // Every wait goes; async continuations and external tasks follow their activity.
        let event_scopes: Vec<String> =
            self.inst.executions.iter().filter(|e| e.is_event_scope).map(|e| e.id.clone()).collect();
        for es in event_scopes {
            self.remove_execution_tree(&es, None);
        }
        self.inst.jobs.retain(|j| j.kind != JobKind::Timer);
        self.inst.subscriptions.clear();
        for j in &mut self.inst.jobs {
            j.activity_id = migration.target_of(&j.activity_id).to_string();
        }
        for j in self.inst.jobs.iter_mut().filter(|j| j.kind == JobKind::External) {
            if let Some(NodeKind::ServiceTask(s)) = self.env.process.node_by_id(&j.activity_id).map(|n| &n.kind)
                && let Implementation::External { topic } = &s.implementation
            {
                j.topic = Some(topic.clone());
            }
        }
        for e in &mut self.inst.executions {
            if let Some(a) = &e.activity {
                e.activity = Some(migration.target_of(a).to_string());
            }
        }
        for t in &mut self.inst.tasks {
            t.task_def_key = migration.target_of(&t.task_def_key).to_string();
            if let Some(n) = self.env.process.node_by_id(&t.task_def_key) {
                t.name = n.name.clone();
                if let NodeKind::UserTask(ut) = &n.kind {
                    t.form_key.clone_from(&ut.form_key);
                }
            }
        }
        for r in self.inst.activities.iter_mut().filter(|r| r.end.is_none()) {
            r.activity_id = migration.target_of(&r.activity_id).to_string();
            if let Some(n) = self.env.process.node_by_id(&r.activity_id) {
                r.activity_name = n.name.clone();
            }
        }
        // Re-arm from the target: event sub-processes of each scope, boundary events of each
        // activity a token is in, and what waiting tokens wait for.
        let root = self.inst.id.clone();
        if !self.interrupted_by_event_sub_process(&root) {
            self.arm_event_sub_processes(&root, None)?;
        }
        let executions = self.inst.executions.clone();
        for e in executions.iter().filter(|e| e.id != root) {
            let Some(idx) = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { continue };
            let n = self.node(idx).clone();
            let pending = self
                .inst
                .jobs
                .iter()
                .any(|j| j.execution_id == e.id && matches!(j.kind, JobKind::AsyncBefore | JobKind::AsyncAfter));
            if pending {
                continue; // not inside the activity (yet, or any more): nothing is armed there
            }
            if let NodeKind::SubProcess(sp) = &n.kind
                && !sp.triggered_by_event
                && e.is_scope
                && !e.is_mi_root
                && !self.interrupted_by_event_sub_process(&e.id)
            {
                self.arm_event_sub_processes(&e.id, Some(idx))?;
            }
            if !n.boundary_events.is_empty() && !self.is_mi_child(&e.id, &n.id) && (e.is_active || e.is_scope) {
                self.arm_boundary_events(&e.id, &n)?;
            }
            if e.is_active && !e.is_scope {
                self.arm_waits(&e.id, &n)?;
            }
        }
        // A wait of the source that was used up stays used up; new events of the target wait.
        let anchors: BTreeMap<String, String> =
            self.inst.executions.iter().map(|e| (e.id.clone(), self.wait_anchor(&e.id))).collect();
        let stale = |exec: &str, activity: &str| {
            let anchor = anchors.get(exec).cloned().unwrap_or_default();
            migration.source_waits.contains(activity) && !live.contains(&(anchor, activity.to_string()))
        };
        self.inst.jobs.retain(|j| j.kind != JobKind::Timer || !stale(&j.execution_id, &j.activity_id));
        self.inst.subscriptions.retain(|s| !stale(&s.execution_id, &s.activity_id));
        let idle: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.is_event_scope)
            .filter(|e| !self.inst.jobs.iter().any(|j| j.execution_id == e.id))
            .filter(|e| !self.inst.subscriptions.iter().any(|s| s.execution_id == e.id))
            .map(|e| e.id.clone())
            .collect();
        for es in idle {
            self.remove_execution_tree(&es, None);
        }
        for s in &mut self.inst.subscriptions {
            let anchor = anchors.get(&s.execution_id).cloned().unwrap_or_default();
            if let Some((at, name)) = created.get(&(anchor, s.activity_id.clone(), s.event_type.clone())) {
                s.created = *at;
                if s.event_type == "conditional" {
                    s.event_name.clone_from(name); // the condition's last value: true stays true
                }
            }
        }
        for j in self.inst.jobs.iter_mut().filter(|j| j.kind == JobKind::Timer) {
            let anchor = anchors.get(&j.execution_id).cloned().unwrap_or_default();
            // The due date, and for a cycle what is left of it (REPEAT_ as the job engine keeps it).
            if let Some((due, repeat)) = dues.get(&(anchor, j.activity_id.clone())) {
                j.due = Some(*due);
                j.repeat.clone_from(repeat);
            }
        }
        self.normalize();
        Ok(())
    }

    /// Where a wait held by `exec` belongs: a boundary event's event-scope execution waits for
    /// the activity's execution; any other execution for itself.
    fn wait_anchor(&self, exec: &str) -> String {
        match self.inst.execution(exec) {
            Some(e) if e.is_event_scope => e.parent_id.clone().unwrap_or_default(),
            _ => exec.to_string(),
        }
    }

    /// True when an interrupting event sub-process runs in `scope`: the scope's event
    /// sub-processes stopped listening when it started.
    fn interrupted_by_event_sub_process(&self, scope: &str) -> bool {
        self.inst.children(scope).iter().any(|c| {
            let Some(esp) = c.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { return false };
            matches!(&self.node(esp).kind, NodeKind::SubProcess(sp) if sp.triggered_by_event)
                && self
                    .env
                    .process
                    .start_events_in(Some(esp))
                    .any(|st| matches!(&self.node(st).kind, NodeKind::StartEvent(s) if s.interrupting))
        })
    }

    /// Creates the event-scope executions of `n`'s boundary events under `exec`.
    fn arm_boundary_events(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        for &b in &n.boundary_events {
            let bn = self.node(b).clone();
            let Some(trigger) = bn.kind.trigger().cloned() else { continue };
            if matches!(trigger, EventTrigger::Error(_) | EventTrigger::Escalation(_)) {
                continue; // errors and escalations are looked up when thrown
            }
            let es = (self.env.ids)();
            self.inst.executions.push(Execution {
                id: es.clone(),
                rev: 0,
                parent_id: Some(exec.to_string()),
                super_exec: None,
                activity: Some(bn.id.clone()),
                is_active: false,
                is_concurrent: false,
                is_scope: false,
                is_event_scope: true,
                is_mi_root: false,
                start_time: self.env.now,
                suspension_state: self.inst.suspension_state,
            });
            self.arm_trigger(&es, &bn, &trigger)?;
        }
        Ok(())
    }

    /// Arms the start events of the event sub-processes directly in `scope_node` (the process
    /// when `None`), held by the scope execution `scope`: they listen while the scope is active.
    fn arm_event_sub_processes(&mut self, scope: &str, scope_node: Option<NodeIdx>) -> Result<()> {
        let esps: Vec<NodeIdx> = self.env.process.event_sub_processes_in(scope_node).collect();
        for esp in esps {
            let starts: Vec<NodeIdx> = self.env.process.start_events_in(Some(esp)).collect();
            for st in starts {
                let sn = self.node(st).clone();
                let thrown = |t: &EventTrigger| matches!(t, EventTrigger::Error(_) | EventTrigger::Escalation(_));
                if let Some(trigger) = sn.kind.trigger().cloned().filter(|t| !thrown(t)) {
                    self.arm_trigger(scope, &sn, &trigger)?;
                }
            }
        }
        Ok(())
    }

    /// An event sub-process of scope execution `scope` starts at `start`: interrupting ones end
    /// everything else the scope does first (and its other event sub-processes stop listening).
    fn start_event_sub_process(&mut self, scope: &str, esp: NodeIdx, start: NodeIdx, interrupting: bool) -> Result<()> {
        let esp_id = self.node(esp).id.clone();
        if interrupting {
            let reason = format!("interrupted by event sub-process {esp_id}");
            self.remove_children(scope, Some(&reason));
            self.inst.jobs.retain(|j| j.execution_id != scope);
            self.inst.subscriptions.retain(|s| s.execution_id != scope);
            let alive: Vec<String> = self.inst.executions.iter().map(|e| e.id.clone()).collect();
            self.agenda.retain(|op| match op {
                Op::Enter { exec, .. } | Op::Leave { exec, .. } | Op::End { exec } => alive.contains(exec),
            });
        }
        // The event sub-process runs as a scope token of `scope` (not in history itself: its
        // start event and activities are).
        let token = self.new_token(scope, esp);
        if let Some(e) = self.inst.execution_mut(&token) {
            e.is_scope = true;
        }
        let inner = self.new_token(&token, start);
        self.agenda.push_back(Op::Enter { exec: inner, node: start, skip_async: true });
        Ok(())
    }

    /// Removes the boundary waits of `exec` (it left its activity).
    fn disarm_boundary_events(&mut self, exec: &str) {
        let scopes: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(exec) && e.is_event_scope)
            .map(|e| e.id.clone())
            .collect();
        for es in scopes {
            self.remove_execution_tree(&es, None);
        }
    }

    /// A timer job or a subscription for `target`'s trigger, held by `exec`.
    fn arm_trigger(&mut self, exec: &str, target: &FlowNode, trigger: &EventTrigger) -> Result<()> {
        match trigger {
            EventTrigger::Timer(t) => {
                let (due, repeat) = self.timer_due(exec, target, t)?;
                self.add_job(exec, target, JobKind::Timer, Some(due), repeat);
            }
            EventTrigger::Message(m) => self.subscribe(exec, "message", &m.name, &target.id),
            EventTrigger::Signal(s) => self.subscribe(exec, "signal", &s.name, &target.id),
            EventTrigger::Conditional(_) => {
                // EVENT_NAME_ holds the condition's value at the last check: "false" until true.
                self.subscribe(exec, "conditional", "false", &target.id);
                if let Some(s) = self.inst.subscriptions.last() {
                    self.fresh_conditions.push(s.id.clone());
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// When a timer is first due, and its REPEAT_ for cycles.
    fn timer_due(&mut self, exec: &str, n: &FlowNode, t: &kairos_bpmn::Timer) -> Result<(Timestamp, Option<String>)> {
        let now = self.env.now;
        let bad =
            |e: &dyn std::fmt::Display| ProcessError::at(ErrorKind::Model, &n.id, format!("timer of '{}': {e}", n.id));
        let value = match &t.value {
            TimerValue::Expression(text) => {
                let v = self.eval(exec, &n.id, text)?;
                let s = match v {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                match t.kind {
                    TimerKind::Date => TimerValue::Date(kairos_time::parse_instant(&s).map_err(|e| bad(&e))?),
                    TimerKind::Duration => {
                        TimerValue::Duration(kairos_time::IsoDuration::parse_delay(&s).map_err(|e| bad(&e))?)
                    }
                    TimerKind::Cycle if kairos_cron::looks_like_cron(&s) => TimerValue::Cron(
                        kairos_cron::CronExpr::parse(&s).map_err(|e| bad(&format!("cron {e}")))?.to_string(),
                    ),
                    TimerKind::Cycle => TimerValue::Cycle(kairos_time::RepeatCycle::parse(&s).map_err(|e| bad(&e))?),
                }
            }
            other => other.clone(),
        };
        match value {
            TimerValue::Date(at) => Ok((at, None)),
            TimerValue::Duration(d) => Ok((d.add_to(now).map_err(|e| bad(&e))?, None)),
            TimerValue::Cycle(c) => {
                let due = c.first_due(now).map_err(|e| bad(&e))?.ok_or_else(|| bad(&"the cycle has no fire left"))?;
                Ok((due, Some(c.to_string())))
            }
            // Evaluated in UTC; REPEAT_ keeps the expression, and the job engine moves the timer
            // to its next fire time after each one (kairos_core::Repeat).
            TimerValue::Cron(expr) => {
                let cron = kairos_cron::CronExpr::parse(&expr).map_err(|e| bad(&format!("cron {e}")))?;
                let due = cron
                    .next_after(now, &jiff::tz::TimeZone::UTC)
                    .ok_or_else(|| bad(&format!("cron '{expr}' never fires after {now}")))?;
                Ok((due, Some(cron.to_string())))
            }
            _ => Err(bad(&"unsupported timer value")),
        }
    }

    fn subscribe(&mut self, exec: &str, event_type: &str, name: &str, activity: &str) {
        let id = (self.env.ids)();
        self.inst.subscriptions.push(Subscription {
            id,
            event_type: event_type.into(),
            event_name: name.into(),
            execution_id: exec.into(),
            activity_id: activity.into(),
            created: self.env.now,
        });
    }

    fn add_job(&mut self, exec: &str, n: &FlowNode, kind: JobKind, due: Option<Timestamp>, repeat: Option<String>) {
        let id = (self.env.ids)();
        self.inst.jobs.push(ProcessJob {
            id,
            kind,
            execution_id: exec.into(),
            activity_id: n.id.clone(),
            due,
            repeat,
            exclusive: n.exclusive,
            retry_cycle: n.retry_time_cycle.clone(),
            topic: None,
        });
    }

    /// A signal thrown inside the instance reaches the instance's own signal waits.
    fn broadcast_in_instance(&mut self, name: &str) -> Result<()> {
        let subs: Vec<Subscription> = self
            .inst
            .subscriptions
            .iter()
            .filter(|s| s.event_type == "signal" && s.event_name == name)
            .cloned()
            .collect();
        for s in subs {
            if self.inst.subscriptions.iter().any(|x| x.id == s.id) {
                self.fire(&s.execution_id, &s.activity_id, Some(&s.id))?;
            }
        }
        Ok(())
    }

    /// Throws error `code` from `exec`: the nearest enclosing sub-process with an error
    /// boundary event catching it is cancelled and continues from that boundary event.
    fn throw_error(&mut self, exec: &str, at: &str, code: &str) -> Result<()> {
        // The thrower's own activity first (a service task's boundary), then enclosing scopes.
        let mut scope = Some(exec.to_string());
        while let Some(s) = scope {
            // An error-start event sub-process of this scope (the root, or a sub-process).
            let this = self.inst.execution(&s).cloned();
            if let Some(e) = this.filter(|e| e.is_scope && !e.is_mi_root) {
                let scope_node = if e.parent_id.is_none() {
                    None
                } else {
                    e.activity.as_deref().and_then(|a| self.env.process.node_idx(a))
                };
                if e.parent_id.is_none() || scope_node.is_some() {
                    let catcher = self.env.process.event_sub_processes_in(scope_node).find_map(|esp| {
                        self.env.process.start_events_in(Some(esp)).find_map(|st| match self.node(st).kind.trigger() {
                            Some(EventTrigger::Error(er)) if er.code.as_deref().is_none_or(|c| c == code) => {
                                Some((esp, st, er.clone()))
                            }
                            _ => None,
                        })
                    });
                    if let Some((esp, st, caught)) = catcher {
                        self.store_caught_error(&s, &caught, code)?;
                        return self.start_event_sub_process(&s, esp, st, true);
                    }
                }
            }
            let activity = self.inst.execution(&s).and_then(|e| e.activity.clone());
            if let Some(node) = activity.as_deref().and_then(|a| self.env.process.node_idx(a)) {
                let catcher = self.node(node).boundary_events.iter().copied().find_map(|b| match &self.node(b).kind {
                    NodeKind::BoundaryEvent(be) => match &be.trigger {
                        EventTrigger::Error(e) if e.code.as_deref().is_none_or(|c| c == code) => Some((b, e.clone())),
                        _ => None,
                    },
                    _ => None,
                });
                if let Some((b, caught)) = catcher {
                    let bn = self.node(b).clone();
                    self.cancel_activity(&s, &format!("error {code} caught by {}", bn.id));
                    self.store_caught_error(&s, &caught, code)?;
                    self.open_record(&s, &bn, None);
                    self.push_leave(&s, b);
                    return Ok(());
                }
            }
            scope = self.inst.execution(&s).and_then(|e| e.parent_id.clone());
        }
        Err(ProcessError::at(
            ErrorKind::Model,
            at,
            format!("error '{code}' thrown by '{at}' is not caught by any boundary event"),
        ))
    }

    /// Raises an escalation from `exec` (BPMN 2.0 §10.5.3): the nearest enclosing scope with an
    /// event sub-process catching it, or a sub-process / call activity with a boundary event
    /// catching it, takes it — interrupting (that scope's work is cancelled, the thrower with
    /// it) or not (a new token runs beside). A catch naming no code takes any escalation.
    /// Nobody catching it is not an error: the thrower carries on.
    fn throw_escalation(&mut self, exec: &str, code: Option<&str>) -> Result<()> {
        let catches = |t: Option<&EventTrigger>| match t {
            Some(EventTrigger::Escalation(e)) => e.code.is_none() || e.code.as_deref() == code,
            _ => false,
        };
        let mut scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        while let Some(s) = scope {
            let Some(e) = self.inst.execution(&s).cloned() else { break };
            let scope_node = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
            if e.is_scope && !e.is_mi_root && (e.parent_id.is_none() || scope_node.is_some()) {
                let within = if e.parent_id.is_none() { None } else { scope_node };
                let esp = self.env.process.event_sub_processes_in(within).find_map(|esp| {
                    let mut starts = self.env.process.start_events_in(Some(esp));
                    starts.find(|&st| catches(self.node(st).kind.trigger())).map(|st| (esp, st))
                });
                if let Some((esp, st)) = esp {
                    let interrupting = matches!(&self.node(st).kind, NodeKind::StartEvent(s) if s.interrupting);
                    return self.start_event_sub_process(&s, esp, st, interrupting);
                }
            }
            // A multi-instance sub-process's boundary belongs to its body, not to each instance.
            let per_instance = scope_node.is_some_and(|n| self.is_mi_child(&s, &self.node(n).id.clone()));
            if let Some(host) = scope_node.filter(|_| e.parent_id.is_some() && !per_instance) {
                let boundary =
                    self.node(host).boundary_events.iter().copied().find(|&b| catches(self.node(b).kind.trigger()));
                if let Some(b) = boundary {
                    let bn = self.node(b).clone();
                    let interrupting = matches!(&bn.kind, NodeKind::BoundaryEvent(be) if be.cancel_activity);
                    if interrupting {
                        self.cancel_activity(&s, &format!("escalation {} caught by {}", code.unwrap_or(""), bn.id));
                        let alive: Vec<String> = self.inst.executions.iter().map(|e| e.id.clone()).collect();
                        self.agenda.retain(|op| match op {
                            Op::Enter { exec, .. } | Op::Leave { exec, .. } | Op::End { exec } => alive.contains(exec),
                        });
                        self.open_record(&s, &bn, None);
                        self.push_leave(&s, b);
                    } else {
                        let parent = e.parent_id.clone().unwrap_or_default();
                        let token = self.new_token(&parent, b);
                        self.open_record(&token, &bn, None);
                        self.push_leave(&token, b);
                    }
                    return Ok(());
                }
            }
            scope = e.parent_id.clone();
        }
        Ok(())
    }

    /// `camunda:errorCodeVariable` / `errorMessageVariable` of the catching event, set from
    /// the execution that caught it (where a variable of that name lives, else the instance).
    fn store_caught_error(&mut self, exec: &str, caught: &kairos_bpmn::ErrorRef, code: &str) -> Result<()> {
        let mut vars = Map::new();
        if let Some(v) = &caught.code_variable {
            vars.insert(v.clone(), Json::String(code.to_string()));
        }
        if let Some(v) = &caught.message_variable {
            vars.insert(v.clone(), Json::Null);
        }
        self.set_variables(exec, vars)
    }

    /// Terminate end event: every token of the scope ends, then the scope completes.
    fn terminate_scope(&mut self, exec: &str, at: &str) -> Result<()> {
        let scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let reason = format!("terminated by {at}");
        self.remove_children(&scope, Some(&reason));
        self.agenda.retain(|op| match op {
            Op::Enter { exec, .. } | Op::Leave { exec, .. } | Op::End { exec } => {
                self.inst.executions.iter().any(|e| &e.id == exec)
            }
        });
        if scope == self.inst.id {
            self.end_instance(Some(at.to_string()), None);
        } else {
            let node = self.node_of(&scope)?;
            self.agenda.push_back(Op::Leave { exec: scope, node, skip_async: false });
        }
        Ok(())
    }

    /// Cancels what `exec` is doing at its activity (an interrupting boundary event): its
    /// task, its waits, its inner tokens; `exec` itself stays, to leave by the boundary event.
    fn cancel_activity(&mut self, exec: &str, reason: &str) {
        self.note_interrupted_call(exec);
        self.remove_children(exec, Some(reason));
        let tasks: Vec<String> =
            self.inst.tasks.iter().filter(|t| t.execution_id == exec).map(|t| t.id.clone()).collect();
        for t in tasks {
            self.end_task(&t, Some(reason));
        }
        self.inst.jobs.retain(|j| j.execution_id != exec);
        self.inst.subscriptions.retain(|s| s.execution_id != exec);
        if let Some(activity) = self.inst.execution(exec).and_then(|e| e.activity.clone()) {
            self.close_record(exec, &activity, Some(reason));
            if let Some(io) = self.env.process.node_by_id(&activity).and_then(|n| n.io.clone()) {
                self.drop_inputs(exec, &io);
            }
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_scope = false;
            e.is_active = true;
        }
    }

    // ----- tasks -------------------------------------------------------------------------------

    fn create_task(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        let NodeKind::UserTask(ut) = &n.kind else { return Ok(()) };
        let assignee = match &ut.assignee {
            Some(a) => self.eval_people(exec, &n.id, a, false)?.into_iter().next(),
            None => None,
        };
        let mut candidate_users = Vec::new();
        for c in &ut.candidate_users {
            candidate_users.extend(self.eval_people(exec, &n.id, c, true)?);
        }
        let mut candidate_groups = Vec::new();
        for c in &ut.candidate_groups {
            candidate_groups.extend(self.eval_people(exec, &n.id, c, true)?);
        }
        let priority = match &ut.priority {
            Some(p) => self.eval_string(exec, &n.id, p)?.trim().parse::<i32>().map_err(|_| {
                ProcessError::at(ErrorKind::Model, &n.id, format!("priority of '{}' is not an integer", n.id))
            })?,
            None => 50,
        };
        let due_date = match &ut.due_date {
            Some(d) => {
                let text = self.eval_string(exec, &n.id, d)?;
                let bad = || {
                    ProcessError::at(
                        ErrorKind::Model,
                        &n.id,
                        format!("dueDate of '{}': '{text}' is neither an instant nor an ISO 8601 duration", n.id),
                    )
                };
                Some(match kairos_time::parse_instant(&text) {
                    Ok(t) => t,
                    Err(_) => kairos_time::IsoDuration::parse(&text)
                        .map_err(|_| bad())?
                        .add_to(self.env.now)
                        .map_err(|_| bad())?,
                })
            }
            None => None,
        };
        let id = (self.env.ids)();
        self.inst.tasks.push(Task {
            id: id.clone(),
            rev: 0,
            execution_id: exec.into(),
            name: n.name.clone(),
            task_def_key: n.id.clone(),
            assignee: assignee.clone(),
            priority,
            create_time: self.env.now,
            due_date,
            form_key: ut.form_key.clone(),
            claim_time: None,
            suspension_state: self.inst.suspension_state,
            candidate_users,
            candidate_groups,
        });
        if let Some(r) = self.open_record_mut(exec, &n.id) {
            r.task_id = Some(id);
            r.assignee = assignee;
        }
        self.wait(exec);
        Ok(())
    }

    /// Removes a task (completed, or cancelled with `reason`).
    fn end_task(&mut self, task_id: &str, reason: Option<&str>) {
        if let Some(t) = self.inst.task(task_id) {
            let ended = EndedTask {
                id: t.id.clone(),
                start: t.create_time,
                end: self.env.now,
                reason: reason.map(str::to_string),
            };
            self.inst.ended_tasks.push(ended);
        }
        self.inst.tasks.retain(|t| t.id != task_id);
        self.inst.variables.retain(|v| v.task_id.as_deref() != Some(task_id));
    }

    /// Task-local variables (SPEC P6), kept on the task's execution row with TASK_ID_ set.
    fn set_task_locals(&mut self, task_id: &str, variables: Map<String, Json>) -> Result<()> {
        let execution_id = self.task(task_id)?.execution_id.clone();
        for (name, value) in variables {
            validate_variable_name(&name)?;
            let at = self.put_variable(&execution_id, Some(task_id), &name, value);
            self.log_variable(at, &execution_id);
        }
        Ok(())
    }

    // ----- variables and expressions -------------------------------------------------------------

    /// Sets variables as Activiti's `execution.setVariable` does: where a visible variable of
    /// that name lives, else on the instance.
    fn set_variables(&mut self, exec: &str, variables: Map<String, Json>) -> Result<()> {
        for (name, value) in variables {
            validate_variable_name(&name)?;
            self.changed.insert(name.clone());
            let mut at = Some(exec.to_string());
            let mut owner = None;
            while let Some(id) = at {
                if self.inst.variables.iter().any(|v| v.name == name && v.in_scope(&id)) {
                    owner = Some(id);
                    break;
                }
                at = self.inst.execution(&id).and_then(|e| e.parent_id.clone());
            }
            let owner = owner.unwrap_or_else(|| self.inst.id.clone());
            let at = self.put_variable(&owner, None, &name, value);
            self.log_variable(at, exec);
        }
        Ok(())
    }

    /// Evaluates `text` at `exec` with `how`; any failure is a model error naming the
    /// expression (`what`: "expression" or "condition") and the element.
    fn evaluate<T>(
        &self,
        exec: &str,
        element: &str,
        text: &str,
        what: &str,
        how: impl FnOnce(&Expression, &VarContext<'_>) -> std::result::Result<T, kairos_expr::EvalError>,
    ) -> Result<T> {
        let fail = |e: &dyn std::fmt::Display| {
            ProcessError::at(ErrorKind::Model, element, format!("{what} '{text}' of '{element}': {e}"))
        };
        let expr = Expression::parse(text).map_err(|e| fail(&e))?;
        how(&expr, &self.context(exec)).map_err(|e| fail(&e))
    }

    fn eval(&self, exec: &str, element: &str, text: &str) -> Result<Json> {
        self.evaluate(exec, element, text, "expression", |e, c| e.eval(c))
    }

    fn eval_string(&self, exec: &str, element: &str, text: &str) -> Result<String> {
        if !is_expression(text) {
            return Ok(text.to_string());
        }
        self.evaluate(exec, element, text, "expression", |e, c| e.eval_string(c))
    }

    /// An assignee (`list` false: one id) or a candidate list (`list` true: a comma list, or an
    /// expression giving a comma list or a list of ids). Null is nobody, as Flowable and Camunda
    /// read it: `${initiator}` of an instance started by no known user leaves the task
    /// unassigned instead of failing; an undefined variable is still an error.
    fn eval_people(&self, exec: &str, element: &str, text: &str, list: bool) -> Result<Vec<String>> {
        let one = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty()).into_iter().collect();
        if !is_expression(text) {
            return Ok(if list { split_list(text) } else { one(text) });
        }
        let bad = |what: &str| {
            ProcessError::at(
                ErrorKind::Model,
                element,
                format!(
                    "expression '{text}' of '{element}' gave {what}; {} or null is needed",
                    if list { "ids (a comma list or a list of strings)" } else { "one user id" }
                ),
            )
        };
        match self.eval(exec, element, text)? {
            Json::Null => Ok(Vec::new()),
            Json::String(s) if list => Ok(split_list(&s)),
            Json::String(s) => Ok(one(&s)),
            n @ Json::Number(_) => Ok(vec![n.to_string()]),
            Json::Array(_) if !list => Err(bad("a list")),
            Json::Array(items) => items
                .into_iter()
                .filter(|i| !i.is_null())
                .map(|i| match i {
                    Json::String(s) => Ok(s.trim().to_string()),
                    n @ Json::Number(_) => Ok(n.to_string()),
                    _ => Err(bad("a list holding something other than ids")),
                })
                .filter(|r| !matches!(r, Ok(s) if s.is_empty()))
                .collect(),
            Json::Bool(_) => Err(bad("a boolean")),
            Json::Object(_) => Err(bad("an object")),
        }
    }

    fn eval_bool(&self, exec: &str, element: &str, text: &str) -> Result<bool> {
        self.evaluate(exec, element, text, "condition", |e, c| e.eval_bool(c))
    }

    /// A conditional event's condition, as Camunda reads it: one that names a variable that
    /// does not exist yet is false until the variable appears (an order process waits for
    /// `${paid}`). Every other failure is an error, and gateways and sequence flows stay
    /// strict: there an undefined variable is a mistake, not a wait.
    fn event_condition(&self, exec: &str, element: &str, text: &str) -> Result<bool> {
        self.evaluate(exec, element, text, "condition", |e, c| match e.eval_bool(c) {
            Err(kairos_expr::EvalError::UndefinedVariable { .. }) => Ok(false),
            other => other,
        })
    }

    fn context(&self, exec: &str) -> VarContext<'_> {
        let current = self.inst.execution(exec).and_then(|e| e.activity.clone());
        VarContext {
            inst: &self.inst,
            now: self.env.now,
            exec: exec.to_string(),
            info: ExecutionInfo {
                id: exec.to_string(),
                process_instance_id: self.inst.id.clone(),
                process_business_key: self.inst.business_key.clone(),
                current_activity_id: current,
            },
        }
    }

    // ----- gateways and flow choice ----------------------------------------------------------------

    fn choose_exclusive(&self, exec: &str, n: &FlowNode) -> Result<FlowIdx> {
        for &f in &n.outgoing {
            if Some(f) == n.default_flow {
                continue;
            }
            let flow = self.env.process.flow(f);
            match &flow.condition {
                None => return Ok(f),
                Some(c) if self.eval_bool(exec, &flow.id, c)? => return Ok(f),
                Some(_) => {}
            }
        }
        n.default_flow.ok_or_else(|| {
            ProcessError::at(
                ErrorKind::Model,
                &n.id,
                format!(
                    "no outgoing flow of exclusive gateway '{}' has a condition that holds, and it has no default flow",
                    n.id
                ),
            )
        })
    }

    fn choose_inclusive(&self, exec: &str, n: &FlowNode) -> Result<Vec<FlowIdx>> {
        let mut out = Vec::new();
        for &f in &n.outgoing {
            if Some(f) == n.default_flow {
                continue;
            }
            let flow = self.env.process.flow(f);
            let holds = match &flow.condition {
                None => true,
                Some(c) => self.eval_bool(exec, &flow.id, c)?,
            };
            if holds {
                out.push(f);
            }
        }
        if out.is_empty() {
            out.extend(n.default_flow);
        }
        if out.is_empty() {
            return Err(ProcessError::at(
                ErrorKind::Model,
                &n.id,
                format!(
                    "no outgoing flow of inclusive gateway '{}' has a condition that holds, and it has no default flow",
                    n.id
                ),
            ));
        }
        Ok(out)
    }

    /// Outgoing flows of an activity: unconditional ones and those whose condition holds; the
    /// default flow when none of the conditional ones does.
    fn choose_activity_flows(&self, exec: &str, n: &FlowNode) -> Result<Vec<FlowIdx>> {
        let mut out = Vec::new();
        let mut conditional = false;
        for &f in &n.outgoing {
            if Some(f) == n.default_flow {
                continue;
            }
            let flow = self.env.process.flow(f);
            match &flow.condition {
                None => out.push(f),
                Some(c) => {
                    conditional = true;
                    if self.eval_bool(exec, &flow.id, c)? {
                        out.push(f);
                    }
                }
            }
        }
        if out.is_empty() && (conditional || n.default_flow.is_some()) {
            out.extend(n.default_flow);
        }
        Ok(out)
    }

    /// Parallel join: the token waits; when a token has arrived on every incoming flow, one
    /// goes on and the others end. True when this token goes on.
    fn join_parallel(&mut self, exec: &str, node: NodeIdx) -> bool {
        let incoming = self.node(node).incoming.len();
        let id = self.node(node).id.clone();
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = false;
        }
        let waiting: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| {
                e.parent_id == parent && e.activity.as_deref() == Some(&id) && !e.is_active && !e.is_event_scope
            })
            .map(|e| e.id.clone())
            .collect();
        if waiting.len() < incoming {
            return false;
        }
        self.merge_at(exec, &id, &waiting);
        true
    }

    /// Inclusive join: the token waits until no other token of the scope can still reach the
    /// gateway. True when this token goes on.
    fn join_inclusive(&mut self, exec: &str, node: NodeIdx) -> Result<bool> {
        let id = self.node(node).id.clone();
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = false;
        }
        let siblings: Vec<Execution> =
            self.inst.executions.iter().filter(|e| e.parent_id == parent && !e.is_event_scope).cloned().collect();
        let waiting: Vec<String> = siblings
            .iter()
            .filter(|e| e.activity.as_deref() == Some(&id) && !e.is_active)
            .map(|e| e.id.clone())
            .collect();
        let others_can_arrive = siblings.iter().filter(|e| !waiting.contains(&e.id)).any(|e| {
            let at = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
            at.is_some_and(|a| self.reaches(a, node))
        }) || self.agenda.iter().any(|op| match op {
            Op::Enter { exec: x, node: at, .. } | Op::Leave { exec: x, node: at, .. } => {
                !waiting.contains(x) && siblings.iter().any(|s| &s.id == x) && self.reaches(*at, node)
            }
            Op::End { .. } => false,
        });
        if others_can_arrive {
            return Ok(false);
        }
        self.merge_at(exec, &id, &waiting);
        Ok(true)
    }

    /// The tokens `waiting` at a join become `exec` alone.
    fn merge_at(&mut self, exec: &str, _gateway: &str, waiting: &[String]) {
        for w in waiting.iter().filter(|w| w.as_str() != exec) {
            self.inst.executions.retain(|e| &e.id != w);
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = true;
        }
    }

    /// Whether a token at `from` can reach `to` along sequence flows (and links).
    fn reaches(&self, from: NodeIdx, to: NodeIdx) -> bool {
        let mut seen = vec![false; self.env.process.nodes.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            if n == to && n != from {
                return true;
            }
            if std::mem::replace(&mut seen[n.index()], true) {
                continue;
            }
            let node = self.node(n);
            let link = match &node.kind {
                NodeKind::IntermediateThrowEvent(ThrowEvent { link: Some(link), .. }) => Some(link.target),
                _ => None,
            };
            for t in node.outgoing.iter().map(|&f| self.flow_target(f)).chain(link) {
                if t == to {
                    return true;
                }
                stack.push(t);
            }
        }
        false
    }

    // ----- the tree ----------------------------------------------------------------------------

    fn new_token(&mut self, parent: &str, at: NodeIdx) -> String {
        let id = (self.env.ids)();
        let activity = Some(self.node(at).id.clone());
        self.inst.executions.push(Execution {
            id: id.clone(),
            rev: 0,
            parent_id: Some(parent.to_string()),
            super_exec: None,
            activity,
            is_active: true,
            is_concurrent: false,
            is_scope: false,
            is_event_scope: false,
            is_mi_root: false,
            start_time: self.env.now,
            suspension_state: self.inst.suspension_state,
        });
        id
    }

    /// Removes every child of `parent` with everything under it (see `remove_execution_tree`).
    fn remove_children(&mut self, parent: &str, reason: Option<&str>) {
        let children: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(parent))
            .map(|e| e.id.clone())
            .collect();
        for c in children {
            self.remove_execution_tree(&c, reason);
        }
    }

    /// Notes `exec` in [`Instance::interrupted_calls`] when it waits at a call activity: it is
    /// being cancelled, and so must what it called. (A multi-instance body only holds the
    /// executions that call.)
    fn note_interrupted_call(&mut self, exec: &str) {
        let Some(e) = self.inst.execution(exec).filter(|e| !e.is_mi_root) else { return };
        let Some(activity) = e.activity.clone() else { return };
        if matches!(self.env.process.node_by_id(&activity).map(|n| &n.kind), Some(NodeKind::CallActivity(_))) {
            self.inst.interrupted_calls.push((exec.to_string(), activity));
        }
    }

    /// Removes an execution and everything under it: children, tasks, jobs, subscriptions,
    /// variables; open history rows close with `reason` (a cancellation; `None`: it completed).
    fn remove_execution_tree(&mut self, exec: &str, reason: Option<&str>) {
        let mut doomed = vec![exec.to_string()];
        let mut i = 0;
        while i < doomed.len() {
            let id = doomed[i].clone();
            doomed.extend(
                self.inst.executions.iter().filter(|e| e.parent_id.as_deref() == Some(&id)).map(|e| e.id.clone()),
            );
            i += 1;
        }
        if reason.is_some() {
            for id in &doomed {
                self.note_interrupted_call(id);
            }
        }
        for id in &doomed {
            let tasks: Vec<String> =
                self.inst.tasks.iter().filter(|t| &t.execution_id == id).map(|t| t.id.clone()).collect();
            for t in tasks {
                self.end_task(&t, reason.or(Some("deleted")));
            }
            if let Some(r) = reason {
                let open: Vec<String> = self
                    .inst
                    .activities
                    .iter()
                    .filter(|a| &a.execution_id == id && a.end.is_none())
                    .map(|a| a.activity_id.clone())
                    .collect();
                for a in open {
                    self.close_record(id, &a, Some(r));
                }
            }
        }
        self.inst.executions.retain(|e| !doomed.contains(&e.id));
        self.inst.jobs.retain(|j| !doomed.contains(&j.execution_id));
        self.inst.subscriptions.retain(|s| !doomed.contains(&s.execution_id));
        self.inst.variables.retain(|v| !doomed.contains(&v.execution_id));
    }

    /// The instance ends: everything goes; history keeps the end (and the reason).
    fn end_instance(&mut self, end_activity: Option<String>, reason: Option<String>) {
        let root = self.inst.id.clone();
        let why = reason.clone().unwrap_or_else(|| "ended".into());
        self.remove_children(&root, Some(&why));
        let open: Vec<String> = self
            .inst
            .activities
            .iter()
            .filter(|a| a.execution_id == root && a.end.is_none())
            .map(|a| a.activity_id.clone())
            .collect();
        for a in open {
            self.close_record(&root, &a, reason.as_deref());
        }
        self.inst.executions.clear();
        self.inst.tasks.clear();
        self.inst.jobs.clear();
        self.inst.subscriptions.clear();
        let root = self.inst.id.clone();
        self.inst.final_variables = self.inst.visible_variables(&root);
        self.inst.variables.clear();
        self.inst.ended = Some((self.env.now, end_activity));
        self.inst.delete_reason = reason;
    }

    /// IS_CONCURRENT_ and IS_ACTIVE_ of scope executions, as seed 003 §5.3 tabulates them:
    /// tokens of a scope are concurrent when there is more than one; a scope execution
    /// holding tokens is a container, not active itself.
    fn normalize(&mut self) {
        // Tokens per scope, counted in one pass (a scan per scope was quadratic in a big
        // multi-instance body).
        let mut tokens: HashMap<String, usize> = HashMap::new();
        for e in self.inst.executions.iter().filter(|e| !e.is_event_scope) {
            if let Some(p) = &e.parent_id {
                *tokens.entry(p.clone()).or_default() += 1;
            }
        }
        let mi_roots: HashSet<String> =
            self.inst.executions.iter().filter(|e| e.is_mi_root).map(|e| e.id.clone()).collect();
        for e in &mut self.inst.executions {
            if let Some(p) = e.parent_id.as_deref().filter(|_| !e.is_event_scope && !e.is_mi_root) {
                // Instances of a multi-instance body are concurrent even when one is left.
                e.is_concurrent = tokens.get(p).copied().unwrap_or(0) > 1 || mi_roots.contains(p);
            }
            if tokens.contains_key(&e.id) {
                e.is_active = false;
            }
        }
    }

    fn wait(&mut self, exec: &str) {
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = true;
        }
    }

    fn push_leave(&mut self, exec: &str, node: NodeIdx) {
        self.agenda.push_back(Op::Leave { exec: exec.to_string(), node, skip_async: false });
    }

    // ----- history -----------------------------------------------------------------------------

    fn open_record(&mut self, exec: &str, n: &FlowNode, task_id: Option<String>) {
        self.inst.seq += 1;
        let id = (self.env.ids)();
        self.open_records.insert(exec.to_string(), id.clone());
        self.inst.activities.push(ActivityRecord {
            id,
            execution_id: exec.to_string(),
            activity_id: n.id.clone(),
            activity_name: n.name.clone(),
            activity_type: n.element.to_string(),
            task_id,
            assignee: None,
            start: self.env.now,
            end: None,
            delete_reason: None,
            seq: self.inst.seq,
        });
    }

    fn open_record_mut(&mut self, exec: &str, activity: &str) -> Option<&mut ActivityRecord> {
        self.inst
            .activities
            .iter_mut()
            .rev()
            .find(|a| a.execution_id == exec && a.activity_id == activity && a.end.is_none())
    }

    fn close_record(&mut self, exec: &str, activity: &str, reason: Option<&str>) {
        let now = self.env.now;
        if let Some(r) = self.open_record_mut(exec, activity) {
            r.end = Some(now);
            r.delete_reason = reason.map(str::to_string);
            let closed = r.id.clone();
            if self.open_records.get(exec) == Some(&closed) {
                self.open_records.remove(exec);
            }
        }
    }

    // ----- look-ups ----------------------------------------------------------------------------

    fn node(&self, idx: NodeIdx) -> &FlowNode {
        self.env.process.node(idx)
    }

    fn flow_target(&self, f: FlowIdx) -> NodeIdx {
        self.env.process.flow(f).target
    }

    fn node_idx(&self, id: &str) -> Result<NodeIdx> {
        self.env.process.node_idx(id).ok_or_else(|| {
            ProcessError::at(
                ErrorKind::Model,
                id,
                format!("element '{id}' is not in process definition {}", self.inst.definition_id),
            )
        })
    }

    fn node_of(&self, exec: &str) -> Result<NodeIdx> {
        let activity = self
            .inst
            .execution(exec)
            .and_then(|e| e.activity.clone())
            .ok_or_else(|| ProcessError::new(ErrorKind::NotFound, format!("execution {exec} is at no activity")))?;
        self.node_idx(&activity)
    }

    fn task(&self, id: &str) -> Result<&Task> {
        self.inst.task(id).ok_or_else(|| ProcessError::new(ErrorKind::NotFound, format!("task {id} does not exist")))
    }

    fn none_start(&self) -> Result<NodeIdx> {
        self.env
            .process
            .start_events
            .iter()
            .copied()
            .find(|&s| matches!(self.node(s).kind.trigger(), Some(EventTrigger::None)))
            .ok_or_else(|| {
                ProcessError::new(
                    ErrorKind::Conflict,
                    format!(
                        "process '{}' has no none start event: it starts by a timer, message or signal",
                        self.env.process.id
                    ),
                )
            })
    }
}

/// The variables and `execution` an expression sees.
struct VarContext<'i> {
    inst: &'i Instance,
    /// The database's now, for `dateTime()`.
    now: Timestamp,
    exec: String,
    info: ExecutionInfo,
}

impl Context for VarContext<'_> {
    fn variable(&self, name: &str) -> Option<Json> {
        self.inst.visible_variable(&self.exec, name).cloned()
    }

    fn local_variable(&self, name: &str) -> Option<Json> {
        self.inst.variables.iter().find(|v| v.in_scope(&self.exec) && v.name == name).map(|v| v.value.clone())
    }

    fn execution(&self) -> Option<&ExecutionInfo> {
        Some(&self.info)
    }

    fn now(&self) -> Option<Timestamp> {
        Some(self.now)
    }
}

/// True when `text` holds a `${…}` / `#{…}` expression; anything else is taken literally.
/// Most instances one multi-instance activity may have (its collection's length, its
/// `loopCardinality`): each is an execution, variables, a task or job and history rows, all
/// written in one transaction (docs/limits.md).
pub const MAX_MULTI_INSTANCE: usize = 10_000;

fn is_expression(text: &str) -> bool {
    text.contains("${") || text.contains("#{")
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()
}

/// A variable name: 1 to 255 characters, no control characters.
pub fn validate_variable_name(name: &str) -> Result<()> {
    if name.is_empty() || name.chars().count() > 255 || name.chars().any(char::is_control) {
        return Err(ProcessError::new(
            ErrorKind::Invalid,
            format!("variable name '{}' must be 1 to 255 characters without control characters", name.escape_debug()),
        ));
    }
    Ok(())
}
