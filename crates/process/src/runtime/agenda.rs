//! The agenda and its operations, the way Camunda's atomic operations and Flowable's agenda
//! run a command: a queue of small steps (enter a node, leave it, end a token) run one after
//! another, so nothing recurses and a long chain of pass-through nodes cannot blow the stack.
//!
//! This is the one place that dispatches by element kind: [`Runtime::enter`] hands a token to
//! the behaviour of the node it arrives at, [`Runtime::fire`] hands an event that happened to
//! the behaviour of the event that waited for it. Behaviours plan further steps through
//! [`Runtime::push_leave`] and friends, or perform one of the few operations that must happen
//! at once (`fire`, and the throws of `propagation`).

use std::collections::HashSet;

use kairos_bpmn::{EndEvent, EventTrigger, FlowIdx, FlowNode, ListenerEvent, NodeIdx, NodeKind, ThrowEvent};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::primitives::listeners::ListenerSite;
use crate::runtime::{Runtime, Step};
use crate::state::*;

pub(crate) use super::ops::{Op, Pause};

impl Runtime<'_> {
    /// Runs the agenda, then the conditional events its changes made true, until every token
    /// waits (or a handler or called instance must run).
    pub(crate) fn run(&mut self) -> Result<Step> {
        let mut budget = 100_000usize;
        let mut rounds = 0;
        loop {
            match self.drain(&mut budget)? {
                Some(pause) => return Ok(pause),
                None if !self.inst.is_running() => break,
                None => {}
            }
            // A join waiting for a token that ended elsewhere fires now; then conditions.
            if !self.settle_joins()? && !self.check_conditions()? {
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
        // Tasks cancelled before the agenda ran (a boundary event fired by a command).
        self.plan_delete_listeners();
        while let Some(op) = self.agenda.pop_front() {
            *budget -= 1;
            if *budget == 0 {
                return Err(ProcessError::new(
                    ErrorKind::Model,
                    "the command took more than 100,000 steps without reaching a wait state (a loop without a wait state?)",
                ));
            }
            let pause = match op {
                Op::Enter { exec, node, skip_async } => self.enter(&exec, node, skip_async)?,
                Op::Leave { exec, node, skip_async } => self.leave(&exec, node, skip_async).map(|()| None)?,
                Op::End { exec } => self.end_token(&exec).map(|()| None)?,
                Op::Listen { exec, site, index, task } => self.listen(&exec, site, index, task.as_deref())?,
                Op::EnterBody { exec, node } => self.enter_body(&exec, node)?,
                Op::LeaveBody { exec, node, skip_async } => self.leave_body(&exec, node, skip_async).map(|()| None)?,
                Op::EndProcess { activity, reason } => {
                    self.end_instance(activity, reason);
                    None
                }
            };
            self.plan_delete_listeners();
            match pause {
                Some(Pause::Service(call)) => return Ok(Some(Step::Call(call))),
                Some(Pause::Called(start)) => return Ok(Some(Step::StartCalled(start))),
                None => {}
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
        if !self.standard_loop_runs(exec, &n)? {
            // A while loop whose condition failed: the activity is passed over.
            let flows = self.choose_activity_flows(exec, &n)?;
            self.take(exec, flows);
            return Ok(None);
        }
        if let Some(io) = &n.io {
            self.map_inputs(exec, &n.id, io)?;
        }
        // A join is one activity in history, recorded when it fires, not once per arrival.
        let join = n.kind.is_join() && n.incoming.len() > 1;
        if !join {
            self.open_record(exec, &n, None);
        }
        if !n.boundary_events.is_empty() && !mi_child {
            self.arm_boundary_events(exec, &n)?;
        }
        let listen = self.listen_ops(exec, ListenerSite::Node(node), ListenerEvent::Start, None);
        if !listen.is_empty() {
            let body = Op::EnterBody { exec: exec.to_string(), node };
            self.push_front_all(listen.into_iter().chain([body]).collect());
            return Ok(None);
        }
        self.enter_body(exec, node)
    }

    /// What `node` does with the token that arrived (its start listeners ran).
    pub(crate) fn enter_body(&mut self, exec: &str, node: NodeIdx) -> Result<Option<Pause>> {
        let n = self.node(node).clone();
        let join = n.kind.is_join() && n.incoming.len() > 1;
        // The one dispatch by element kind: each arm hands the token to its behaviour.
        match &n.kind {
            NodeKind::StartEvent(_) | NodeKind::PassThrough => self.push_leave(exec, node),
            // A catching link event is where a throwing one's token continues: nothing to wait for.
            NodeKind::IntermediateCatchEvent(c) if matches!(c.trigger, EventTrigger::Link(_)) => {
                self.push_leave(exec, node)
            }
            NodeKind::IntermediateCatchEvent(c) => self.enter_catch_event(exec, &n, &c.trigger)?,
            NodeKind::IntermediateThrowEvent(ThrowEvent { compensate: Some(c), .. })
            | NodeKind::EndEvent(EndEvent::Compensate(c)) => self.enter_compensation_throw(exec, node, c)?,
            NodeKind::IntermediateThrowEvent(t) => self.enter_throw_event(exec, node, t)?,
            NodeKind::EndEvent(EndEvent::Cancel) => self.enter_cancel_end(exec, &n)?,
            NodeKind::EndEvent(end) => self.enter_end_event(exec, &n, end)?,
            NodeKind::UserTask(_) => self.create_task(exec, &n)?,
            NodeKind::ServiceTask(s) => return Ok(self.enter_service_task(exec, node, &n, s)?.map(Pause::Service)),
            NodeKind::ScriptTask(s) => self.enter_script_task(exec, node, &n, s)?,
            NodeKind::ReceiveTask(r) => self.enter_receive_task(exec, &n, r),
            NodeKind::ExclusiveGateway => self.enter_exclusive_gateway(exec, &n)?,
            NodeKind::InclusiveGateway => self.enter_inclusive_gateway(exec, node, &n, None, join)?,
            NodeKind::ComplexGateway(g) => {
                self.enter_inclusive_gateway(exec, node, &n, g.activation.as_deref(), join)?;
            }
            NodeKind::ParallelGateway => self.enter_parallel_gateway(exec, node, &n, join),
            NodeKind::EventBasedGateway => self.enter_event_based_gateway(exec, &n)?,
            NodeKind::CallActivity(ca) => {
                return self.enter_call_activity(exec, node, &n, ca).map(|s| Some(Pause::Called(s)));
            }
            NodeKind::SubProcess(sp) if !sp.triggered_by_event => self.enter_sub_process(exec, node, &n)?,
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

    /// A token leaves `node` along its outgoing flows: its end listeners first (once: not again
    /// after its async-after job, nor for a multi-instance body).
    pub(crate) fn leave(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<()> {
        let n = self.node(node);
        let body = self.inst.execution(exec).is_some_and(|e| e.is_mi_root);
        if !(body || (skip_async && n.async_after)) {
            let listen = self.listen_ops(exec, ListenerSite::Node(node), ListenerEvent::End, None);
            if !listen.is_empty() {
                let rest = Op::LeaveBody { exec: exec.to_string(), node, skip_async };
                self.push_front_all(listen.into_iter().chain([rest]).collect());
                return Ok(());
            }
        }
        self.leave_body(exec, node, skip_async)
    }

    /// The rest of leaving `node`, its end listeners done.
    pub(crate) fn leave_body(&mut self, exec: &str, node: NodeIdx, skip_async: bool) -> Result<()> {
        let n = self.node(node).clone();
        self.close_record(exec, &n.id, None);
        // Outputs are mapped once per run of the activity: by each multi-instance child, not by
        // the body; and before an async-after job is made, not again after it.
        let body = self.inst.execution(exec).is_some_and(|e| e.is_mi_root);
        let after_job = skip_async && n.async_after;
        // Before the outputs drop the inputs: a completed sub-process's snapshot keeps them.
        if !(body || after_job) {
            self.record_completion(exec, node, &n);
        }
        if let Some(io) = n.io.as_ref().filter(|_| !(body || after_job)) {
            self.map_outputs(exec, &n.id, io)?;
        }
        if n.multi_instance.is_some() && self.is_mi_child(exec, &n.id) {
            return self.multi_instance_child_done(exec, node);
        }
        self.disarm_boundary_events(exec);
        if matches!(n.kind, NodeKind::SubProcess(_)) {
            self.end_sub_process_scope(exec);
        }
        self.end_multi_instance_body(exec);
        if n.async_after && !skip_async {
            self.add_job(exec, &n, JobKind::AsyncAfter, None, None);
            self.wait(exec);
            return Ok(());
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_scope = false;
        }
        if self.standard_loop_again(exec, &n)? {
            self.push_enter(exec.to_string(), node, false);
            return Ok(());
        }
        if let NodeKind::IntermediateThrowEvent(ThrowEvent { link: Some(link), .. }) = &n.kind {
            self.push_enter(exec.to_string(), link.target, false);
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
            self.push_end(exec);
            return;
        };
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let mut ops = self.listen_ops(exec, ListenerSite::Flow(*first), ListenerEvent::Take, None);
        ops.push(Op::Enter { exec: exec.to_string(), node: self.flow_target(*first), skip_async: false });
        for &f in rest {
            let target = self.flow_target(f);
            let token = self.new_token(&parent, target);
            ops.extend(self.listen_ops(&token, ListenerSite::Flow(f), ListenerEvent::Take, None));
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
        if tokens_left || self.compensation_step_done(&scope)? {
            return Ok(());
        }
        if scope == self.inst.id {
            let listen = self.listen_ops(&scope, ListenerSite::Process, ListenerEvent::End, None);
            if listen.is_empty() {
                self.end_instance(e.activity.clone(), None);
            } else {
                self.push_front_all(
                    listen.into_iter().chain([Op::EndProcess { activity: e.activity.clone(), reason: None }]).collect(),
                );
            }
        } else {
            let node = self.node_of(&scope)?;
            self.push_leave(&scope, node);
        }
        Ok(())
    }

    // ----- planning: what behaviours put on the agenda -------------------------------------------

    /// Plans a token's arrival at `node` (`skip_async`: its async-before job already ran).
    pub(crate) fn push_enter(&mut self, exec: String, node: NodeIdx, skip_async: bool) {
        self.agenda.push_back(Op::Enter { exec, node, skip_async });
    }

    /// Plans a token's leaving `node`.
    pub(crate) fn push_leave(&mut self, exec: &str, node: NodeIdx) {
        self.plan_leave(exec, node, false);
    }

    /// Plans a token's leaving `node` (`skip_async`: its async-after job already ran, or the
    /// node was never run, as a multi-instance body of no instances).
    pub(crate) fn plan_leave(&mut self, exec: &str, node: NodeIdx, skip_async: bool) {
        self.agenda.push_back(Op::Leave { exec: exec.to_string(), node, skip_async });
    }

    /// Plans the end of a token with nowhere to go.
    pub(crate) fn push_end(&mut self, exec: &str) {
        self.agenda.push_back(Op::End { exec: exec.to_string() });
    }

    /// Drops the planned steps of executions that are gone (cancelled by an interrupting event).
    pub(crate) fn prune_agenda(&mut self) {
        let alive: HashSet<&str> = self.inst.executions.iter().map(|e| e.id.as_str()).collect();
        self.agenda.retain(|op| op.execution().is_none_or(|exec| alive.contains(exec)));
    }

    /// The planned arrivals and departures: (execution, node).
    pub(crate) fn planned_moves(&self) -> impl Iterator<Item = (&str, NodeIdx)> {
        self.agenda.iter().filter_map(|op| match op {
            Op::Enter { exec, node, .. }
            | Op::Leave { exec, node, .. }
            | Op::EnterBody { exec, node }
            | Op::LeaveBody { exec, node, .. } => Some((exec.as_str(), *node)),
            Op::End { .. } | Op::Listen { .. } | Op::EndProcess { .. } => None,
        })
    }

    // ----- operations performed at once -----------------------------------------------------------

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
            self.boundary_event_fired(&e, node, &n, b.cancel_activity, subscription);
            return Ok(());
        }
        if let Some(sub) = subscription {
            self.inst.subscriptions.retain(|s| s.id != sub);
        }
        match e.activity.as_deref() {
            Some(at) if at == activity => self.catch_event_fired(exec, activity),
            gateway => self.event_gateway_branch_fired(exec, gateway.unwrap_or_default(), &n),
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
                    if self.condition_holds(exec, &flow.id, c)? {
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
