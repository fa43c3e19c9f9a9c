//! Execution and task listeners: what a model runs when an element starts or ends, a flow is
//! taken, the process starts or ends, or a user task is created, assigned, completed or
//! deleted (cancelled before it was completed).
//!
//! Each listener is one agenda operation ([`Op::Listen`]) planned right before the step it
//! precedes, so a listener naming a handler can pause the agenda the way a service task does
//! (the engine runs the handler, [`Runtime::resume`] goes on) and the rest of the command
//! continues after it. Scripts run in the engine's sandbox and expressions are evaluated
//! inline. A listener that fails fails the command: nothing of it is written (an async
//! continuation's job is retried, then an incident).

use kairos_bpmn::{FlowIdx, Listener, ListenerAction, ListenerEvent, NodeIdx};
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::agenda::{Op, Pause};
use crate::runtime::{Runtime, ServiceCall};

/// Whose listeners an [`Op::Listen`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListenerSite {
    Node(NodeIdx),
    Flow(FlowIdx),
    Process,
}

impl Runtime<'_> {
    fn listeners_of(&self, site: ListenerSite) -> &[Listener] {
        match site {
            ListenerSite::Node(n) => &self.env.process.node(n).listeners,
            ListenerSite::Flow(f) => &self.env.process.flow(f).listeners,
            ListenerSite::Process => &self.env.process.listeners,
        }
    }

    fn site_id(&self, site: ListenerSite) -> String {
        match site {
            ListenerSite::Node(n) => self.env.process.node(n).id.clone(),
            ListenerSite::Flow(f) => self.env.process.flow(f).id.clone(),
            ListenerSite::Process => self.env.process.id.clone(),
        }
    }

    /// The operations that run `site`'s listeners of `event` at `exec`, in model order (empty
    /// when it has none). `task` is the user task a task listener is about.
    pub(crate) fn listen_ops(
        &self,
        exec: &str,
        site: ListenerSite,
        event: ListenerEvent,
        task: Option<&str>,
    ) -> Vec<Op> {
        self.listeners_of(site)
            .iter()
            .enumerate()
            .filter(|(_, l)| l.event == event)
            .map(|(index, _)| Op::Listen { exec: exec.to_string(), site, index, task: task.map(str::to_owned) })
            .collect()
    }

    /// Plans the delete listeners of the tasks cancelled by the step just run, next: each at
    /// the task's execution, or (when the cancellation removed it) at its nearest ancestor
    /// still there, with the task's id. The steps that end the whole instance (a terminate
    /// end event, a deletion) leave its root in place until these ran.
    pub(crate) fn plan_delete_listeners(&mut self) {
        if self.deleted_tasks.is_empty() {
            return;
        }
        let mut ops = Vec::new();
        for (task, node, chain) in std::mem::take(&mut self.deleted_tasks) {
            let Some(exec) = chain.iter().find(|e| self.inst.execution(e).is_some()) else { continue };
            ops.extend(self.listen_ops(exec, ListenerSite::Node(node), ListenerEvent::Delete, Some(&task)));
        }
        self.push_front_all(ops);
    }

    /// Plans `ops` to run next, before anything already planned.
    pub(crate) fn push_front_all(&mut self, ops: Vec<Op>) {
        for op in ops.into_iter().rev() {
            self.agenda.push_front(op);
        }
    }

    /// Runs listener `index` of `site` at `exec`; a handler pauses the agenda.
    pub(crate) fn listen(
        &mut self,
        exec: &str,
        site: ListenerSite,
        index: usize,
        task: Option<&str>,
    ) -> Result<Option<Pause>> {
        let Some(listener) = self.listeners_of(site).get(index).cloned() else { return Ok(None) };
        if self.inst.execution(exec).is_none() {
            return Ok(None);
        }
        let element = self.site_id(site);
        let what = format!("{} listener", listener.event.as_str());
        match &listener.action {
            ListenerAction::Script(script) => {
                let out = self.run_script(exec, &element, &what, script)?;
                if !out.set.is_empty() {
                    self.set_variables(exec, out.set)?;
                }
            }
            ListenerAction::Expression(text) => {
                self.eval_with_effects(exec, &element, text)?;
            }
            ListenerAction::Handler { name, arguments, .. } => {
                let mut payload = self.inst.visible_variables(exec);
                if !listener.fields.is_empty() {
                    let mut fields = Map::new();
                    for f in &listener.fields {
                        let v = if f.expression {
                            self.eval(exec, &element, &f.value)?
                        } else {
                            Json::String(f.value.clone())
                        };
                        fields.insert(f.name.clone(), v);
                    }
                    payload.insert("fields".into(), Json::Object(fields));
                }
                if !arguments.is_empty() {
                    let mut args = Vec::new();
                    for a in arguments {
                        // `execution` and `task`, the objects a Java listener is handed, are
                        // their ids here.
                        let bare =
                            a.trim().trim_start_matches(['$', '#']).trim_start_matches('{').trim_end_matches('}');
                        args.push(match (bare.trim(), task) {
                            ("execution", _) => Json::String(exec.to_string()),
                            ("task", Some(t)) => Json::String(t.to_string()),
                            _ => self.eval(exec, &element, a)?,
                        });
                    }
                    payload.insert("arguments".into(), Json::Array(args));
                }
                let mut about = Map::new();
                about.insert("event".into(), Json::String(listener.event.as_str().into()));
                about.insert("elementId".into(), Json::String(element.clone()));
                if let Some(t) = task {
                    about.insert("taskId".into(), Json::String(t.to_string()));
                }
                payload.insert("listener".into(), Json::Object(about));
                self.listening = Some((exec.to_string(), element.clone(), what));
                return Ok(Some(Pause::Service(ServiceCall {
                    execution_id: exec.to_string(),
                    activity_id: element,
                    handler: name.clone(),
                    payload: Json::Object(payload),
                    decision: None,
                })));
            }
        }
        Ok(None)
    }

    /// After a listener's handler answered: its variables are set where it ran. A listener
    /// cannot throw a BPMN error (Camunda lets only delegates of activities do that).
    pub(crate) fn listened(&mut self, result: crate::runtime::ServiceResult) -> Result<()> {
        use crate::runtime::ServiceResult;
        let Some((exec, element, what)) = self.listening.take() else {
            return Err(ProcessError::new(ErrorKind::Invalid, "no listener is waiting for a result"));
        };
        match result {
            ServiceResult::Done(_) => Ok(()),
            ServiceResult::Output { variables, .. } if variables.is_empty() => Ok(()),
            ServiceResult::Output { variables, .. } => self.set_variables(&exec, variables),
            ServiceResult::BpmnError(code) => Err(ProcessError::at(
                ErrorKind::Model,
                &element,
                format!("the {what} of '{element}' threw BPMN error '{code}': a listener cannot throw one"),
            )),
            ServiceResult::Failed(message) => Err(ProcessError::at(
                ErrorKind::Handler,
                &element,
                format!("the {what} of '{element}' failed: {message}"),
            )),
        }
    }
}
