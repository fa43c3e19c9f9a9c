//! The command entry points: what a caller asks of an instance ([`Command`]), and the two
//! ways the engine comes back after a pause ([`Runtime::resume`] after a service task's
//! handler, [`Runtime::resume_called`] after starting a called instance). Each puts its first
//! operations on the agenda and runs it.

use kairos_bpmn::{ListenerEvent, NodeKind, StartEvent};
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::agenda::Op;
use crate::runtime::primitives::listeners::ListenerSite;
use crate::runtime::{Command, Runtime, ServiceResult, Step};
use crate::state::*;

impl Runtime<'_> {
    /// Applies a command and runs until every token waits or a handler must run.
    pub fn apply(&mut self, command: Command) -> Result<Step> {
        if !self.inst.is_running() {
            return Err(ProcessError::new(ErrorKind::NotFound, format!("process instance {} has ended", self.inst.id)));
        }
        let suspended = self.inst.suspension_state == SuspensionState::Suspended;
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
                let listen = self.listen_ops(&root, ListenerSite::Process, ListenerEvent::Start, None);
                self.agenda.extend(listen);
                let exec = self.new_token(&root, start);
                self.agenda.push_back(Op::Enter { exec, node: start, skip_async: false });
            }
            Command::CompleteTask { task_id, variables } => {
                let task = self.task(&task_id)?.clone();
                if suspended || task.suspension_state == SuspensionState::Suspended {
                    return Err(ProcessError::new(
                        ErrorKind::Conflict,
                        format!("task {task_id} cannot be completed: its process instance is suspended"),
                    ));
                }
                self.set_variables(&task.execution_id, variables)?;
                self.end_task(&task_id, None);
                let node = self.node_of(&task.execution_id)?;
                let listen = self.listen_ops(
                    &task.execution_id,
                    ListenerSite::Node(node),
                    ListenerEvent::Complete,
                    Some(&task_id),
                );
                self.agenda.extend(listen);
                self.agenda.push_back(Op::Leave { exec: task.execution_id, node, skip_async: false });
            }
            Command::ClaimTask { task_id, assignee } => self.claim_task(&task_id, assignee)?,
            Command::UpdateTask { task_id, update } => self.update_task(&task_id, update)?,
            Command::Trigger { execution_id, variables } => {
                if suspended {
                    return Err(ProcessError::new(ErrorKind::Conflict, "the process instance is suspended"));
                }
                let e = self.inst.execution(&execution_id).cloned().ok_or_else(|| {
                    ProcessError::new(ErrorKind::NotFound, format!("execution {execution_id} does not exist"))
                })?;
                let activity = e.activity.clone().unwrap_or_default();
                let at_receive_task = self
                    .node_idx(&activity)
                    .ok()
                    .is_some_and(|n| matches!(self.node(n).kind, kairos_bpmn::NodeKind::ReceiveTask(_)));
                if !at_receive_task {
                    return Err(ProcessError::new(
                        ErrorKind::Conflict,
                        format!(
                            "execution {execution_id} does not wait in a receive task (it is at '{activity}'); \
                             a trigger moves only those on — complete a user task, deliver a message or a signal"
                        ),
                    ));
                }
                let sub = self
                    .inst
                    .subscriptions
                    .iter()
                    .find(|s| s.execution_id == execution_id && s.activity_id == activity)
                    .map(|s| s.id.clone());
                self.set_variables(&execution_id, variables)?;
                self.fire(&execution_id, &activity, sub.as_deref())?;
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
                    .find(|s| s.event_type == EventType::Message && s.event_name == name)
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
                    .filter(|s| s.event_type == EventType::Signal && s.event_name == name)
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
                self.called_instance_ended(&execution_id, node, &variables)?;
                self.agenda.push_back(Op::Leave { exec: execution_id, node, skip_async: false });
            }
            Command::CalledRaised { execution_id, raised, ended } => {
                let node = self.node_of(&execution_id)?;
                if self.called_returned(&execution_id, node, raised, ended)? {
                    self.agenda.push_back(Op::Leave { exec: execution_id, node, skip_async: false });
                }
            }
            Command::TaskBpmnError { task_id, code, message, variables } => {
                self.task_error(&task_id, suspended, &code, message.as_deref(), variables)?;
            }
            Command::TaskEscalation { task_id, code, variables } => {
                self.task_escalation(&task_id, suspended, &code, variables)?;
            }
            Command::CompleteExternal { job_id, variables, local_variables } => {
                let job = self.external_job(&job_id, suspended)?;
                let mut scope = job.execution_id.clone();
                while let Some(e) = self.inst.execution(&scope).filter(|e| !e.is_scope) {
                    match &e.parent_id {
                        Some(p) => scope = p.clone(),
                        None => break,
                    }
                }
                for (name, value) in local_variables {
                    crate::validate_variable_name(&name)?;
                    self.set_local(&scope, &name, value);
                }
                self.set_variables(&job.execution_id, variables)?;
                let node = self.node_idx(&job.activity_id)?;
                self.agenda.push_back(Op::Leave { exec: job.execution_id, node, skip_async: false });
            }
            Command::ExternalBpmnError { job_id, code, message, variables } => {
                let job = self.external_job(&job_id, suspended)?;
                self.set_variables(&job.execution_id, variables)?;
                self.throw_error_with(&job.execution_id, &job.activity_id, &code, message.as_deref())?;
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
                    // A task-local variable is a property of the task (Camunda's `update`).
                    self.task_listeners(&task_id, &[ListenerEvent::Update])?;
                } else {
                    let exec = self.task(&task_id)?.execution_id.clone();
                    self.set_variables(&exec, variables)?;
                }
            }
            Command::Delete { reason, skip_listeners } => {
                // Tokens first, then (after the delete listeners of the tasks that go) the end.
                let root = self.inst.id.clone();
                self.remove_children(&root, Some(&reason));
                if skip_listeners {
                    self.deleted_tasks.clear();
                }
                self.plan_delete_listeners();
                self.agenda.push_back(Op::EndProcess { activity: None, reason: Some(reason) });
            }
            Command::Suspend | Command::Activate => {
                let state = if matches!(command, Command::Suspend) {
                    SuspensionState::Suspended
                } else {
                    SuspensionState::Active
                };
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
        if self.listening.is_some() {
            self.listened(result)?;
            return self.run();
        }
        let Some((exec, node)) = self.waiting.take() else {
            return Err(ProcessError::new(ErrorKind::Invalid, "no service task is waiting for a result"));
        };
        let id = self.node(node).id.clone();
        match result {
            ServiceResult::Done(value) => {
                self.service_task_done(&exec, node, value)?;
                self.agenda.push_front(Op::Leave { exec, node, skip_async: false });
                self.run()
            }
            ServiceResult::Output { result, variables } => {
                if !variables.is_empty() {
                    self.set_variables(&exec, variables)?;
                }
                self.service_task_done(&exec, node, result)?;
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
    /// `raised` holds the errors and escalations it raised that nothing in it caught (see
    /// [`Command::CalledRaised`]).
    pub fn resume_called(&mut self, ended: Option<Map<String, Json>>, raised: Vec<Raised>) -> Result<Step> {
        let Some((exec, node)) = self.waiting_call.take() else {
            return Err(ProcessError::new(ErrorKind::Invalid, "no call activity is waiting for its called instance"));
        };
        if ended.is_none() {
            self.wait(&exec);
        }
        if self.called_returned(&exec, node, raised, ended)? {
            self.agenda.push_front(Op::Leave { exec, node, skip_async: false });
        }
        self.run()
    }

    /// Takes an external-worker job out of the instance (its row is deleted with the command).
    pub(crate) fn external_job(&mut self, job_id: &str, suspended: bool) -> Result<ProcessJob> {
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

    pub(crate) fn run_job(&mut self, job_id: &str) -> Result<()> {
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
}
