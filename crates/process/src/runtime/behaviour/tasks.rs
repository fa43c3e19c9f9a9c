//! Tasks: user tasks (a row of ACT_RU_TASK with assignee, candidates, priority and due date),
//! service tasks (a handler the engine runs, an expression, or an external worker's job) and
//! receive tasks.

use kairos_bpmn::{
    DecisionBinding, FlowNode, Implementation, ListenerEvent, NodeIdx, NodeKind, ReceiveTask, ServiceTask,
};
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::primitives::expressions::is_expression;
use crate::runtime::primitives::listeners::ListenerSite;
use crate::runtime::{DecisionCall, Runtime, ServiceCall};
use crate::state::*;

impl Runtime<'_> {
    pub(crate) fn create_task(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
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
        // A task's name may be an expression, as in Camunda and Flowable (`Review ${loopCounter}`).
        let name = match &n.name {
            Some(text) if is_expression(text) => Some(self.eval_string(exec, &n.id, text)?),
            other => other.clone(),
        };
        let id = (self.env.ids)();
        self.inst.tasks.push(Task {
            id: id.clone(),
            rev: 0,
            execution_id: exec.into(),
            name,
            task_def_key: n.id.clone(),
            assignee: assignee.clone(),
            owner: None,
            description: None,
            priority,
            create_time: self.env.now,
            due_date,
            form_key: ut.form_key.clone(),
            claim_time: None,
            suspension_state: self.inst.suspension_state,
            candidate_users,
            candidate_groups,
        });
        let assigned = assignee.is_some();
        if let Some(r) = self.open_record_mut(exec, &n.id) {
            r.task_id = Some(id.clone());
            r.assignee = assignee;
        }
        self.wait(exec);
        // As in Flowable and Camunda: a task created with an assignee fires `assignment`, then
        // `create`.
        let node = self.node_idx(&n.id)?;
        let site = ListenerSite::Node(node);
        let mut listen = Vec::new();
        if assigned {
            listen = self.listen_ops(exec, site, ListenerEvent::Assignment, Some(&id));
        }
        listen.extend(self.listen_ops(exec, site, ListenerEvent::Create, Some(&id)));
        self.push_front_all(listen);
        Ok(())
    }

    /// A script task: its `setVariable` calls are applied where the execution sets variables,
    /// then its value goes to `resultVariable`.
    pub(crate) fn enter_script_task(
        &mut self,
        exec: &str,
        node: kairos_bpmn::NodeIdx,
        n: &kairos_bpmn::FlowNode,
        s: &kairos_bpmn::ScriptTask,
    ) -> Result<()> {
        let out = self.run_script(exec, &n.id, "script", &s.script)?;
        let mut vars = out.set;
        if let Some(name) = &s.result_variable {
            vars.insert(name.clone(), out.value);
        }
        self.set_variables(exec, vars)?;
        self.push_leave(exec, node);
        Ok(())
    }

    /// A service task: a handler pauses the agenda for the engine to run it (the call is
    /// returned), an expression is evaluated here, an external worker's task waits for its job.
    pub(crate) fn enter_service_task(
        &mut self,
        exec: &str,
        node: NodeIdx,
        n: &FlowNode,
        s: &ServiceTask,
    ) -> Result<Option<ServiceCall>> {
        match &s.implementation {
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
                if !s.arguments.is_empty() {
                    payload.insert("arguments".into(), Json::Array(self.arguments(exec, &n.id, s)?));
                }
                self.waiting = Some((exec.to_string(), node));
                return Ok(Some(ServiceCall {
                    execution_id: exec.to_string(),
                    activity_id: n.id.clone(),
                    handler: name.clone(),
                    payload: Json::Object(payload),
                    decision: None,
                }));
            }
            Implementation::Decision(d) => {
                let key = self.eval_string(exec, &n.id, &d.key)?;
                let binding = match &d.binding {
                    DecisionBinding::Version(v) => {
                        let version = self.eval_string(exec, &n.id, v)?;
                        if version.trim().parse::<u32>().is_err() {
                            return Err(ProcessError::at(
                                ErrorKind::Model,
                                &n.id,
                                format!("the decision version of '{}' is '{version}', not a version number", n.id),
                            ));
                        }
                        DecisionBinding::Version(version.trim().to_owned())
                    }
                    other => other.clone(),
                };
                self.waiting = Some((exec.to_string(), node));
                return Ok(Some(ServiceCall {
                    execution_id: exec.to_string(),
                    activity_id: n.id.clone(),
                    handler: crate::runtime::DECISION_HANDLER.to_owned(),
                    payload: Json::Object(self.inst.visible_variables(exec)),
                    decision: Some(DecisionCall { key, binding, mapping: d.mapping }),
                }));
            }
            Implementation::Expression { text } => {
                // Flowable's expression service task: its value goes to resultVariable.
                let value = self.eval_with_effects(exec, &n.id, text)?;
                if let Some(name) = &s.result_variable {
                    self.set_variables(exec, Map::from_iter([(name.clone(), value)]))?;
                }
                self.push_leave(exec, node);
            }
            Implementation::External { topic } => {
                self.add_job(exec, n, JobKind::External, None, None);
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
        }
        Ok(None)
    }

    /// The arguments of a bean method call naming the handler, evaluated in order.
    fn arguments(&self, exec: &str, element: &str, s: &ServiceTask) -> Result<Vec<Json>> {
        s.arguments.iter().map(|a| self.eval(exec, element, a)).collect()
    }

    /// A receive task: the token waits for its message.
    pub(crate) fn enter_receive_task(&mut self, exec: &str, n: &FlowNode, r: &ReceiveTask) {
        if let Some(m) = &r.message {
            self.subscribe(exec, EventType::Message, &m.name.clone(), &n.id);
        }
        self.wait(exec);
    }

    /// A service task's handler did its work: its value goes to `resultVariable` when the model
    /// names one (the token then leaves).
    pub(crate) fn service_task_done(&mut self, exec: &str, node: NodeIdx, value: Option<Json>) -> Result<()> {
        let result_variable = match &self.node(node).kind {
            NodeKind::ServiceTask(s) => s.result_variable.clone(),
            _ => None,
        };
        if let (Some(name), Some(value)) = (result_variable, value) {
            let mut vars = Map::new();
            vars.insert(name, value);
            self.set_variables(exec, vars)?;
        }
        Ok(())
    }
}
