//! Compensation (BPMN 2.0 §10.7), in the shape Flowable and Camunda 7 keep it:
//! - an activity with a compensation handler that completes leaves a `compensate`
//!   subscription (ACT_RU_EVENT_SUBSCR, EVENT_TYPE_ 'compensate') held by its scope
//!   execution, ACTIVITY_ID_ the activity, EVENT_NAME_ the completion's order (a number from
//!   the instance's history sequence: the last completed is compensated first, and the order
//!   survives between commands where CREATED_ of one command's rows ties);
//! - an embedded sub-process that completes with compensations inside it (or with a handler or
//!   compensation event sub-process of its own) leaves a **snapshot**: an event-scope
//!   execution at the sub-process under its scope, holding a copy of the sub-process's
//!   variables, the inner subscriptions and inner snapshots, and the sub-process's own
//!   `compensate` subscription;
//! - everything goes when its scope ends (the rows hang under the scope execution).
//!
//! A throw claims what it compensates (the subscriptions and snapshots move under the throwing
//! token), then runs one handler at a time, the latest completion first; the throwing token
//! waits until none is left (`waitForCompletion`; without it, a token of the compensation's
//! own beside it is the one that waits), so a handler that waits (a user task, a
//! failing job) keeps the throw waiting across commands, with nothing but the tree and the
//! subscriptions to remember where it is. Each subscription is removed when its handler
//! starts: a handler runs at most once per completed execution.

use kairos_bpmn::{Compensation, EndEvent, FlowNode, NodeIdx, NodeKind, SubProcess};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::*;

/// What a holder compensates next, with the completion's order.
enum Next {
    /// A completed activity's subscription: run its handler.
    Activity { subscription: String, activity: String, order: i64 },
    /// A completed sub-process's snapshot.
    Snapshot { execution: String, order: i64 },
}

impl Runtime<'_> {
    /// `exec` completed `n` (once per run: each multi-instance instance, not the body): keeps
    /// what compensating it will need.
    pub(crate) fn record_completion(&mut self, exec: &str, node: NodeIdx, n: &FlowNode) {
        let sub = matches!(n.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: false, .. }));
        if n.for_compensation || (!sub && n.compensation_handler.is_none()) {
            return;
        }
        if sub && !self.may_compensate(node) {
            return; // nothing inside it could have left anything (no scan of a big body's rows)
        }
        let holder = self.compensation_holder_of(exec, &n.id);
        self.inst.seq += 1;
        let order = self.inst.seq.to_string();
        if !sub {
            self.subscribe(&holder, EventType::Compensate, &order, &n.id);
            return;
        }
        let inner: Vec<usize> = (0..self.inst.subscriptions.len())
            .filter(|&i| {
                let s = &self.inst.subscriptions[i];
                s.execution_id == exec && s.event_type == EventType::Compensate
            })
            .collect();
        let snapshots: Vec<String> = self
            .inst
            .children(exec)
            .into_iter()
            .filter(|e| self.is_compensation_snapshot(e))
            .map(|e| e.id.clone())
            .collect();
        let esp = self.env.process.compensation_event_sub_process(node);
        if inner.is_empty() && snapshots.is_empty() && esp.is_none() && n.compensation_handler.is_none() {
            return;
        }
        let snapshot = self.new_token(&holder, node);
        if let Some(e) = self.inst.execution_mut(&snapshot) {
            e.is_event_scope = true;
            e.is_active = false;
        }
        // The sub-process's variables as they were when it completed (Flowable copies them
        // the same way); not a change of any variable, so history records nothing.
        let copies: Vec<Variable> = self.inst.variables.iter().filter(|v| v.in_scope(exec)).cloned().collect();
        for mut v in copies {
            (v.id, v.rev, v.execution_id) = ((self.env.ids)(), 0, snapshot.clone());
            self.inst.variables.push(v);
        }
        for i in inner {
            // Subscriptions are written as inserts and deletes: a moved one is a new row.
            let id = (self.env.ids)();
            let s = &mut self.inst.subscriptions[i];
            (s.id, s.execution_id) = (id, snapshot.clone());
        }
        for e in snapshots {
            if let Some(e) = self.inst.execution_mut(&e) {
                e.parent_id = Some(snapshot.clone());
            }
        }
        self.inst.index = Default::default();
        self.subscribe(&snapshot, EventType::Compensate, &order, &n.id);
    }

    /// A compensation throw (intermediate or end event) at `exec`: claims the completed
    /// activities it compensates and starts the first handler; the token goes on when none is
    /// left. Without `waitForCompletion` a token of its own beside it holds them (at the throw
    /// event, ending when they finished) and `exec` goes on at once.
    pub(crate) fn enter_compensation_throw(&mut self, exec: &str, node: NodeIdx, c: &Compensation) -> Result<()> {
        let scope = self.compensation_scope(exec);
        if !c.wait_for_completion {
            let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
            let holder = self.new_token(&parent, node);
            self.claim_compensations(&holder, &scope, c.activity);
            self.continue_compensation(&holder)?;
            return self.leave_throw(exec, node);
        }
        self.claim_compensations(exec, &scope, c.activity);
        self.continue_compensation(exec)
    }

    /// A cancel end event at `exec` (BPMN 2.0 §10.3.2): the transaction's other paths are
    /// cancelled, then everything it completed is compensated, latest first, `exec` waiting
    /// at the event; then the transaction leaves by its cancel boundary event.
    pub(crate) fn enter_cancel_end(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        self.close_record(exec, &n.id, None);
        let scope = self.compensation_scope(exec);
        let others: Vec<String> = self
            .inst
            .children(&scope)
            .into_iter()
            .filter(|e| e.id != exec && !self.is_compensation_snapshot(e))
            .map(|e| e.id.clone())
            .collect();
        for e in others {
            self.remove_execution_tree(&e, Some("transaction cancelled"));
        }
        self.prune_agenda();
        self.claim_compensations(exec, &scope, None);
        self.continue_compensation(exec)
    }

    /// The compensation of a cancelled transaction finished at its cancel end event `exec`:
    /// the transaction ends, cancelled, and the token leaves by its cancel boundary event.
    fn leave_cancelled_transaction(&mut self, exec: &str) -> Result<()> {
        let tx = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let tx_node = self.node_of(&tx)?;
        let boundary = self.node(tx_node).boundary_events.iter().copied().find(|&b| {
            matches!(&self.node(b).kind, NodeKind::BoundaryEvent(be) if be.trigger == kairos_bpmn::EventTrigger::Cancel)
        });
        let Some(b) = boundary else {
            let id = self.node(tx_node).id.clone();
            return Err(ProcessError::at(
                ErrorKind::Model,
                &id,
                format!("transaction '{id}' has no cancel boundary event"),
            ));
        };
        let bn = self.node(b).clone();
        let reason = format!("transaction {} cancelled", self.node(tx_node).id);
        self.cancel_activity(&tx, &reason);
        self.prune_agenda();
        self.open_record(&tx, &bn, None);
        self.push_leave(&tx, b);
        Ok(())
    }

    /// Moves what a throw compensates in `scope` under `holder`: `activity`, or everything.
    fn claim_compensations(&mut self, holder: &str, scope: &str, activity: Option<NodeIdx>) {
        let wanted = activity.map(|a| self.node(a).id.clone());
        let wanted = |activity: &str| wanted.as_deref().is_none_or(|w| w == activity);
        let own = self.snapshot_activity(scope);
        for i in 0..self.inst.subscriptions.len() {
            let s = &self.inst.subscriptions[i];
            let mine = s.execution_id == scope && s.event_type == EventType::Compensate;
            if mine && Some(&s.activity_id) != own.as_ref() && wanted(&s.activity_id) {
                let id = (self.env.ids)();
                let s = &mut self.inst.subscriptions[i];
                (s.id, s.execution_id) = (id, holder.to_string());
            }
        }
        let snapshots: Vec<String> = self
            .inst
            .children(scope)
            .into_iter()
            .filter(|e| self.is_compensation_snapshot(e) && e.activity.as_deref().is_some_and(wanted))
            .map(|e| e.id.clone())
            .collect();
        for e in snapshots {
            if let Some(e) = self.inst.execution_mut(&e) {
                e.parent_id = Some(holder.to_string());
            }
        }
        self.inst.index = Default::default();
    }

    /// The last token under a compensating `holder` ended (a handler finished, or a
    /// compensation event sub-process): true when `holder` is one, and the next step is
    /// planned.
    pub(crate) fn compensation_step_done(&mut self, holder: &str) -> Result<bool> {
        let Some(e) = self.inst.execution(holder).cloned() else { return Ok(false) };
        if self.is_compensation_snapshot(&e) {
            let sub = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
            let replaced = sub.is_some_and(|s| {
                self.node(s).compensation_handler.is_some()
                    || self.env.process.compensation_event_sub_process(s).is_some()
            });
            if replaced {
                self.compensation_done(holder)?;
            } else {
                self.continue_compensation(holder)?;
            }
            return Ok(true);
        }
        let throws = e.activity.as_deref().and_then(|a| self.env.process.node_by_id(a)).is_some_and(|n| {
            matches!(&n.kind, NodeKind::IntermediateThrowEvent(t) if t.compensate.is_some())
                || matches!(n.kind, NodeKind::EndEvent(EndEvent::Compensate(_) | EndEvent::Cancel))
        });
        if throws {
            self.continue_compensation(holder)?;
        }
        Ok(throws)
    }

    /// Starts the next compensation `holder` (a throwing token, or a snapshot being
    /// compensated activity by activity) has claimed, or finishes it.
    fn continue_compensation(&mut self, holder: &str) -> Result<()> {
        let mut holder = holder.to_string();
        loop {
            match self.next_compensation(&holder) {
                None => return self.compensation_done(&holder),
                Some(Next::Activity { subscription, activity, order }) => {
                    self.inst.subscriptions.retain(|s| s.id != subscription);
                    // An instance migrated to a version whose activity has no handler any more
                    // has nothing to run for it.
                    let handler = self.env.process.node_by_id(&activity).and_then(|n| n.compensation_handler);
                    let Some(handler) = handler else { continue };
                    let token = self.handler_token(&holder, handler, order);
                    self.push_enter(token, handler, false);
                    return Ok(());
                }
                Some(Next::Snapshot { execution, order }) => {
                    let sub = self.node_of(&execution)?;
                    let sub_id = self.node(sub).id.clone();
                    self.inst.subscriptions.retain(|s| !(s.execution_id == execution && s.activity_id == sub_id));
                    if let Some(handler) = self.node(sub).compensation_handler {
                        let token = self.handler_token(&execution, handler, order);
                        self.push_enter(token, handler, false);
                        return Ok(());
                    }
                    if let Some(esp) = self.env.process.compensation_event_sub_process(sub) {
                        // As any event sub-process runs: a scope token, and its start event inside.
                        let start = self.env.process.start_events_in(Some(esp)).next().unwrap_or(esp);
                        let scope = self.new_token(&execution, esp);
                        if let Some(e) = self.inst.execution_mut(&scope) {
                            e.is_scope = true;
                        }
                        let inner = self.new_token(&scope, start);
                        self.push_enter(inner, start, true);
                        return Ok(());
                    }
                    holder = execution; // the default: its inner activities, one by one
                }
            }
        }
    }

    /// The latest completion `holder` still has to compensate.
    fn next_compensation(&self, holder: &str) -> Option<Next> {
        let order = |s: &Subscription| s.event_name.parse::<i64>().unwrap_or(0);
        let own = self.snapshot_activity(holder);
        let activities = self
            .inst
            .subscriptions
            .iter()
            .filter(|s| s.execution_id == holder && s.event_type == EventType::Compensate)
            .filter(|s| Some(&s.activity_id) != own.as_ref())
            .map(|s| {
                let next =
                    Next::Activity { subscription: s.id.clone(), activity: s.activity_id.clone(), order: order(s) };
                (order(s), next)
            });
        let snapshots =
            self.inst.children(holder).into_iter().filter(|e| self.is_compensation_snapshot(e)).filter_map(|e| {
                let s = self.inst.subscriptions.iter().find(|s| {
                    s.execution_id == e.id
                        && s.event_type == EventType::Compensate
                        && e.activity.as_ref() == Some(&s.activity_id)
                })?;
                Some((order(s), Next::Snapshot { execution: e.id.clone(), order: order(s) }))
            });
        activities.chain(snapshots).max_by_key(|(o, _)| *o).map(|(_, next)| next)
    }

    /// The token of a handler compensating completion `order`. Its id is made from the
    /// instance and the completion (`{instance}:c{order}`), not drawn fresh: a throw whose
    /// command fails and runs again hands the handler the same execution, so the same
    /// idempotency key (`JobContext`'s execution and element; seed 002 §25's "original
    /// operation + compensation type"), and a compensation done twice can be told.
    fn handler_token(&mut self, holder: &str, handler: NodeIdx, order: i64) -> String {
        let id = format!("{}:c{order}", self.inst.id);
        // Ids are VARCHAR(64): a longer one (an instance id of another shape) is drawn fresh.
        if id.len() > 64 || self.inst.execution(&id).is_some() {
            return self.new_token(holder, handler);
        }
        self.new_token_with_id(holder, handler, id)
    }

    /// `holder` has nothing left to compensate: a snapshot goes (and its holder goes on), a
    /// throwing token leaves its event.
    fn compensation_done(&mut self, holder: &str) -> Result<()> {
        let Some(e) = self.inst.execution(holder).cloned() else { return Ok(()) };
        if self.is_compensation_snapshot(&e) {
            self.remove_execution_tree(holder, None);
            return match e.parent_id {
                Some(parent) => self.continue_compensation(&parent),
                None => Ok(()),
            };
        }
        let node = self.node_of(holder)?;
        if matches!(self.node(node).kind, NodeKind::EndEvent(EndEvent::Cancel)) {
            return self.leave_cancelled_transaction(holder);
        }
        let detached = match &self.node(node).kind {
            NodeKind::IntermediateThrowEvent(t) => t.compensate.as_ref().is_some_and(|c| !c.wait_for_completion),
            NodeKind::EndEvent(EndEvent::Compensate(c)) => !c.wait_for_completion,
            _ => false,
        };
        if detached {
            self.push_end(holder); // the throw itself went on long ago
            return Ok(());
        }
        self.leave_throw(holder, node)
    }

    /// The throwing token goes on: along its flow, or (an end event) it ends.
    fn leave_throw(&mut self, exec: &str, node: NodeIdx) -> Result<()> {
        let n = self.node(node).clone();
        if matches!(n.kind, NodeKind::EndEvent(_)) {
            self.close_record(exec, &n.id, None);
            self.push_end(exec);
        } else {
            self.push_leave(exec, node);
        }
        Ok(())
    }

    /// True when the sub-process `node` has a handler or compensation event sub-process of its
    /// own, or an activity inside it (at any depth) has a handler: only then can completing it
    /// leave something to compensate. Walks the model, not the instance.
    fn may_compensate(&self, node: NodeIdx) -> bool {
        let process = self.env.process;
        let mut stack = vec![node];
        while let Some(at) = stack.pop() {
            let n = process.node(at);
            if n.compensation_handler.is_some() || process.compensation_event_sub_process(at).is_some() {
                return true;
            }
            stack.extend(
                process.children(Some(at)).filter(|&c| matches!(process.node(c).kind, NodeKind::SubProcess(_))),
            );
            if process.children(Some(at)).any(|c| process.node(c).compensation_handler.is_some()) {
                return true;
            }
        }
        false
    }

    /// The execution that keeps the compensation of what `exec` completes at `activity`: its
    /// scope (past a multi-instance body, so each instance counts once).
    fn compensation_holder_of(&self, exec: &str, activity: &str) -> String {
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        match self.inst.execution(&parent) {
            Some(p) if p.is_mi_root && p.activity.as_deref() == Some(activity) => {
                p.parent_id.clone().unwrap_or_default()
            }
            _ => parent,
        }
    }

    /// The scope a throw at `exec` compensates: its own, or past the event sub-processes it
    /// runs in (a compensation or error event sub-process compensating its sub-process).
    fn compensation_scope(&self, exec: &str) -> String {
        let mut scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        while let Some(e) = self.inst.execution(&scope) {
            let esp =
                e.activity.as_deref().and_then(|a| self.env.process.node_by_id(a)).is_some_and(|n| {
                    matches!(n.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: true, .. }))
                });
            match e.parent_id.clone().filter(|_| esp) {
                Some(p) => scope = p,
                None => break,
            }
        }
        scope
    }

    /// The sub-process of the snapshot `exec`, if it is one (its own subscription is not one
    /// of its inner ones).
    fn snapshot_activity(&self, exec: &str) -> Option<String> {
        self.inst.execution(exec).filter(|e| self.is_compensation_snapshot(e)).and_then(|e| e.activity.clone())
    }
}
