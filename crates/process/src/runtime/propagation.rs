//! Throwing errors and escalations: agenda operations that walk up the execution tree from the
//! thrower to the nearest boundary event or event sub-process that catches it. Behaviours
//! (error and escalation end events, service tasks) perform them at once, since what the
//! thrower does next depends on whether its own token survived.

use kairos_bpmn::{EventTrigger, NodeKind};
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::{Raised, SuspensionState};

impl Runtime<'_> {
    /// Throws error `code` from `exec`: the nearest enclosing sub-process with an error
    /// boundary event catching it is cancelled and continues from that boundary event. In a
    /// called instance, an error nothing catches is raised to the caller's call activity.
    pub(crate) fn throw_error(&mut self, exec: &str, at: &str, code: &str) -> Result<()> {
        self.throw_error_with(exec, at, code, None)
    }

    /// [`Runtime::throw_error`] with the error's `message` (for `errorMessageVariable`).
    pub(crate) fn throw_error_with(&mut self, exec: &str, at: &str, code: &str, message: Option<&str>) -> Result<()> {
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
                        self.store_caught_error(&s, &caught, code, message)?;
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
                    self.store_caught_error(&s, &caught, code, message)?;
                    self.open_record(&s, &bn, None);
                    self.push_leave(&s, b);
                    return Ok(());
                }
            }
            scope = self.inst.execution(&s).and_then(|e| e.parent_id.clone());
        }
        if self.inst.super_exec.is_some() {
            self.inst.raised.push(Raised::Error(code.to_string()));
            return Ok(());
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
    /// Nobody catching it is not an error: the thrower carries on (and, in a called instance,
    /// the escalation is raised to the caller's call activity). The thrower's own activity is
    /// looked at first: a user task's boundary events catch what is thrown from the task.
    /// False when nothing in this instance caught it.
    pub(crate) fn throw_escalation(&mut self, exec: &str, code: Option<&str>) -> Result<bool> {
        let catches = |t: Option<&EventTrigger>| match t {
            Some(EventTrigger::Escalation(e)) => e.code.is_none() || e.code.as_deref() == code,
            _ => false,
        };
        let mut scope = Some(exec.to_string());
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
                    self.start_event_sub_process(&s, esp, st, interrupting)?;
                    return Ok(true);
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
                        self.prune_agenda();
                        self.open_record(&s, &bn, None);
                        self.push_leave(&s, b);
                    } else {
                        let parent = e.parent_id.clone().unwrap_or_default();
                        let token = self.new_token(&parent, b);
                        self.open_record(&token, &bn, None);
                        self.push_leave(&token, b);
                    }
                    return Ok(true);
                }
            }
            scope = e.parent_id.clone();
        }
        if self.inst.super_exec.is_some() {
            self.inst.raised.push(Raised::Escalation(code.map(str::to_string)));
        }
        Ok(false)
    }

    /// `camunda:errorCodeVariable` / `errorMessageVariable` of the catching event, set from
    /// the execution that caught it (where a variable of that name lives, else the instance).
    pub(crate) fn store_caught_error(
        &mut self,
        exec: &str,
        caught: &kairos_bpmn::ErrorRef,
        code: &str,
        message: Option<&str>,
    ) -> Result<()> {
        let mut vars = Map::new();
        if let Some(v) = &caught.code_variable {
            vars.insert(v.clone(), Json::String(code.to_string()));
        }
        if let Some(v) = &caught.message_variable {
            vars.insert(v.clone(), message.map_or(Json::Null, |m| Json::String(m.to_string())));
        }
        self.set_variables(exec, vars)
    }

    /// Camunda's `handleBpmnError` on task `task_id`: `variables` set, then error `code`
    /// thrown from the task (with `message` for `errorMessageVariable`).
    pub(crate) fn task_error(
        &mut self,
        task_id: &str,
        suspended: bool,
        code: &str,
        message: Option<&str>,
        variables: Map<String, Json>,
    ) -> Result<()> {
        let (exec, activity) = self.task_thrower(task_id, suspended, code)?;
        self.set_variables(&exec, variables)?;
        self.throw_error_with(&exec, &activity, code, message)
    }

    /// Camunda's `handleEscalation` on task `task_id`: `variables` set, then escalation `code`
    /// thrown from the task; nothing catching it fails the command, as in Camunda.
    pub(crate) fn task_escalation(
        &mut self,
        task_id: &str,
        suspended: bool,
        code: &str,
        variables: Map<String, Json>,
    ) -> Result<()> {
        let (exec, activity) = self.task_thrower(task_id, suspended, code)?;
        self.set_variables(&exec, variables)?;
        if self.throw_escalation(&exec, Some(code))? {
            return Ok(());
        }
        Err(ProcessError::at(
            ErrorKind::Invalid,
            &activity,
            format!(
                "escalation '{code}' thrown from task {task_id} ('{activity}') is not caught: \
                 no boundary event on it or event sub-process around it catches that code"
            ),
        ))
    }

    /// The execution and activity of open task `task_id`, from which an error or escalation
    /// with `code` is to be thrown.
    fn task_thrower(&self, task_id: &str, suspended: bool, code: &str) -> Result<(String, String)> {
        let task = self.task(task_id)?;
        if suspended || task.suspension_state == SuspensionState::Suspended {
            return Err(ProcessError::new(
                ErrorKind::Conflict,
                format!("task {task_id} cannot throw: its process instance is suspended"),
            ));
        }
        if code.trim().is_empty() {
            return Err(ProcessError::new(ErrorKind::Invalid, "the code to throw is empty"));
        }
        Ok((task.execution_id.clone(), task.task_def_key.clone()))
    }
}
