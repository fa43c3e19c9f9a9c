//! The agenda and its operations, the way Camunda's atomic operations and Flowable's agenda
//! run a command: a queue of small steps (enter a node, leave it, end a token) run one after
//! another, so nothing recurses and a long chain of pass-through nodes cannot blow the stack.
//!
//! This is the one place that dispatches by element kind: [`Runtime::enter`] hands a token to
//! the behaviour of the node it arrives at, [`Runtime::fire`] hands an event that happened to
//! the behaviour of the event that waited for it. Behaviours plan further steps through
//! [`Runtime::push_leave`] and friends, or perform one of the few operations that must happen
//! at once (`fire`, and the throws of `propagation`).

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::{CalledStart, Runtime, ServiceCall, Step};
use crate::state::*;
use kairos_bpmn::{EndEvent, EventTrigger, FlowIdx, FlowNode, Implementation, NodeIdx, NodeKind, ThrowEvent};
use serde_json::{Map, Value as Json};

#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// A token arrives at a node (async-before is honoured unless `skip_async`).
    Enter { exec: String, node: NodeIdx, skip_async: bool },
    /// A token leaves a node along its outgoing flows (async-after unless `skip_async`).
    Leave { exec: String, node: NodeIdx, skip_async: bool },
    /// A token has nowhere to go: it ends, and its scope may complete.
    End { exec: String },
}

/// Why [`Runtime::enter`] stopped the agenda.
pub(crate) enum Pause {
    Service(ServiceCall),
    Called(CalledStart),
}

impl Runtime<'_> {
    pub(crate) fn run(&mut self) -> Result<Step> {
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
    pub(crate) fn drain(&mut self, budget: &mut usize) -> Result<Option<Step>> {
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

    /// A token arrives at `node`.
    pub(crate) fn enter(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<Option<Pause>> {
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
    pub(crate) fn leave(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<()> {
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
    pub(crate) fn take(&mut self, exec: &str, flows: Vec<FlowIdx>) {
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

    /// A token ends; when it was the last of its scope, the scope completes.
    pub(crate) fn end_token(&mut self, exec: &str) -> Result<()> {
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

    pub(crate) fn push_leave(&mut self, exec: &str, node: NodeIdx) {
        self.agenda.push_back(Op::Leave { exec: exec.to_string(), node, skip_async: false });
    }

    /// The event `activity` that `exec` waits for happened (a timer fired, a message or signal
    /// arrived). `exec` is the waiting token (catch event, receive task, event-based gateway) or
    /// the event-scope execution of a boundary event.
    pub(crate) fn fire(&mut self, exec: &str, activity: &str, subscription: Option<&str>) -> Result<()> {
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

    /// Outgoing flows of an activity: unconditional ones and those whose condition holds; the
    /// default flow when none of the conditional ones does.
    pub(crate) fn choose_activity_flows(&self, exec: &str, n: &FlowNode) -> Result<Vec<FlowIdx>> {
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
}
