//! Gateways: exclusive and inclusive choice, parallel, inclusive and complex joins, and the
//! event-based gateway whose first branch to fire wins.
//!
//! A complex join that fired keeps one marker per token of its scope that could still arrive:
//! an event-scope execution at the gateway (it holds no token, so the scope does not wait for
//! it). Each arrival while markers are there is absorbed and takes one away; when no token can
//! arrive any more the rest go. Counting, rather than asking "can any token still come?",
//! keeps a gateway in a loop from absorbing the next round's tokens.

use kairos_bpmn::{ComplexGateway, FlowIdx, FlowNode, NodeIdx, NodeKind, ThrowEvent};
use std::collections::HashSet;

use serde_json::Value as Json;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::runtime::agenda::Op;
use crate::state::*;

impl Runtime<'_> {
    /// An exclusive gateway: the token takes the first flow whose condition holds.
    pub(crate) fn enter_exclusive_gateway(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        let flow = self.choose_exclusive(exec, n)?;
        self.close_record(exec, &n.id, None);
        self.take(exec, vec![flow]);
        Ok(())
    }

    /// An inclusive gateway: a join (`join`) waits for the tokens that can still arrive; then
    /// one token takes every flow whose condition holds.
    pub(crate) fn enter_inclusive_gateway(
        &mut self,
        exec: &str,
        node: NodeIdx,
        n: &FlowNode,
        join: bool,
    ) -> Result<()> {
        if join {
            if !self.join_inclusive(exec, node)? {
                return Ok(());
            }
            self.open_record(exec, n, None);
        }
        let flows = self.choose_inclusive(exec, n)?;
        self.close_record(exec, &n.id, None);
        self.take(exec, flows);
        Ok(())
    }

    /// A complex gateway: a join (`join`) waits until its activation condition holds (an
    /// inclusive join when it has none); then one token takes every flow whose condition
    /// holds, as from an inclusive gateway.
    pub(crate) fn enter_complex_gateway(
        &mut self,
        exec: &str,
        node: NodeIdx,
        n: &FlowNode,
        g: &ComplexGateway,
        join: bool,
    ) -> Result<()> {
        if join {
            let goes_on = match &g.activation {
                Some(activation) => self.join_complex(exec, node, activation)?,
                None => self.join_inclusive(exec, node)?,
            };
            if !goes_on {
                return Ok(());
            }
            self.open_record(exec, n, None);
        }
        let flows = self.choose_inclusive(exec, n)?;
        self.close_record(exec, &n.id, None);
        self.take(exec, flows);
        Ok(())
    }

    /// A parallel gateway: a join (`join`) waits for a token on every incoming flow; then one
    /// token takes every outgoing flow.
    pub(crate) fn enter_parallel_gateway(&mut self, exec: &str, node: NodeIdx, n: &FlowNode, join: bool) {
        if join {
            if !self.join_parallel(exec, node) {
                return;
            }
            self.open_record(exec, n, None);
        }
        self.close_record(exec, &n.id, None);
        self.take(exec, n.outgoing.clone());
    }

    /// An event-based gateway: the token waits for whichever of its branches' events comes first.
    pub(crate) fn enter_event_based_gateway(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        self.arm_waits(exec, n)?;
        self.wait(exec);
        Ok(())
    }

    /// The event `n` of one branch of the event-based gateway `gateway`, where `exec` waits,
    /// came: the other branches' waits go, and the token moves to `n`.
    pub(crate) fn event_gateway_branch_fired(&mut self, exec: &str, gateway: &str, n: &FlowNode) {
        self.inst.jobs.retain(|j| j.execution_id != exec);
        self.inst.subscriptions.retain(|s| s.execution_id != exec);
        self.close_record(exec, gateway, None);
        if let Some(x) = self.inst.execution_mut(exec) {
            x.activity = Some(n.id.clone());
            x.is_active = true;
        }
        self.open_record(exec, n, None);
    }

    pub(crate) fn choose_exclusive(&self, exec: &str, n: &FlowNode) -> Result<FlowIdx> {
        for &f in &n.outgoing {
            if Some(f) == n.default_flow {
                continue;
            }
            let flow = self.env.process.flow(f);
            match &flow.condition {
                None => return Ok(f),
                Some(c) if self.condition_holds(exec, &flow.id, c)? => return Ok(f),
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

    pub(crate) fn choose_inclusive(&self, exec: &str, n: &FlowNode) -> Result<Vec<FlowIdx>> {
        let mut out = Vec::new();
        for &f in &n.outgoing {
            if Some(f) == n.default_flow {
                continue;
            }
            let flow = self.env.process.flow(f);
            let holds = match &flow.condition {
                None => true,
                Some(c) => self.condition_holds(exec, &flow.id, c)?,
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
                    "no outgoing flow of {} '{}' has a condition that holds, and it has no default flow",
                    n.element, n.id
                ),
            ));
        }
        Ok(out)
    }

    /// Parallel join: the token waits; when a token has arrived on every incoming flow, one
    /// goes on and the others end. True when this token goes on.
    pub(crate) fn join_parallel(&mut self, exec: &str, node: NodeIdx) -> bool {
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
    pub(crate) fn join_inclusive(&mut self, exec: &str, node: NodeIdx) -> Result<bool> {
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
        if self.arrivals_expected(node, &siblings, &waiting) > 0 {
            return Ok(false);
        }
        self.merge_at(exec, &id, &waiting);
        Ok(true)
    }

    /// Complex join with an activation condition: the token waits until the condition holds
    /// over the tokens waiting (`activationCount`); then it goes on, and tokens still able to
    /// arrive are absorbed when they do. True when this token goes on.
    fn join_complex(&mut self, exec: &str, node: NodeIdx, activation: &str) -> Result<bool> {
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
        let expected = self.arrivals_expected(node, &siblings, &waiting);
        let absorb: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.parent_id == parent && e.is_event_scope && e.activity.as_deref() == Some(&id))
            .map(|e| e.id.clone())
            .collect();
        if !absorb.is_empty() {
            // Waiting for reset: the gateway fired already; these tokens were on their way.
            let used = if expected == 0 { absorb.len() } else { waiting.len().min(absorb.len()) };
            self.inst.executions.retain(|e| !absorb[..used].contains(&e.id));
            for w in &waiting {
                self.push_end(w);
            }
            return Ok(false);
        }
        // `activationCount` is seen by the condition only, not kept or written to history.
        self.put_variable(exec, None, ACTIVATION_COUNT, Json::from(waiting.len()));
        let holds = self.eval_bool(exec, &id, activation);
        self.drop_local(exec, ACTIVATION_COUNT);
        if holds? {
            self.merge_at(exec, &id, &waiting);
            // One marker per token still on its way: each absorbs one arrival.
            for _ in 0..expected {
                let marker = self.new_token(parent.as_deref().unwrap_or_default(), node);
                if let Some(m) = self.inst.execution_mut(&marker) {
                    m.is_event_scope = true;
                    m.is_active = false;
                }
            }
            return Ok(true);
        }
        if expected == 0 {
            return Err(ProcessError::at(
                ErrorKind::Model,
                &id,
                format!(
                    "complex gateway '{id}' cannot fire: its activationCondition '{activation}' is false with {} token(s) waiting, and no other can arrive",
                    waiting.len()
                ),
            ));
        }
        Ok(false)
    }

    /// Tokens waiting at an inclusive or complex join that nothing can reach any more (the
    /// token they waited for ended elsewhere, or left by a boundary event): each such join is
    /// evaluated again, as Flowable's agenda re-runs its inactive behaviours. True when one
    /// was, so the agenda has work again.
    pub(crate) fn wake_waiting_joins(&mut self) -> Result<bool> {
        let mut joins: Vec<(String, NodeIdx)> = Vec::new();
        for e in self.inst.executions.iter().filter(|e| !e.is_active && !e.is_event_scope) {
            let Some(node) = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { continue };
            let n = self.node(node);
            let waits = matches!(n.kind, NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_))
                && n.incoming.len() > 1
                && self.inst.children(&e.id).is_empty();
            if waits && !joins.iter().any(|(x, at)| *at == node && self.parent_of(x) == e.parent_id) {
                joins.push((e.id.clone(), node));
            }
        }
        let mut woke = false;
        for (exec, node) in joins {
            let parent = self.parent_of(&exec);
            let siblings: Vec<Execution> =
                self.inst.executions.iter().filter(|e| e.parent_id == parent && !e.is_event_scope).cloned().collect();
            let id = &self.node(node).id;
            let waiting: Vec<String> = siblings
                .iter()
                .filter(|e| e.activity.as_deref() == Some(id) && !e.is_active)
                .map(|e| e.id.clone())
                .collect();
            if self.arrivals_expected(node, &siblings, &waiting) == 0 {
                self.agenda.push_back(Op::EnterBody { exec, node });
                woke = true;
            }
        }
        Ok(woke)
    }

    fn parent_of(&self, exec: &str) -> Option<String> {
        self.inst.execution(exec).and_then(|e| e.parent_id.clone())
    }

    /// How many tokens of the scope (`siblings`) other than those `waiting` at `node`, or
    /// moving on the agenda, can still reach it.
    fn arrivals_expected(&self, node: NodeIdx, siblings: &[Execution], waiting: &[String]) -> usize {
        let mut coming: HashSet<&str> = siblings
            .iter()
            .filter(|e| !waiting.contains(&e.id))
            .filter(|e| {
                let at = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
                at.is_some_and(|a| self.reaches(a, node))
            })
            .map(|e| e.id.as_str())
            .collect();
        coming.extend(
            self.planned_moves()
                .filter(|(x, at)| {
                    !waiting.iter().any(|w| w == x) && siblings.iter().any(|s| s.id == *x) && self.reaches(*at, node)
                })
                .map(|(x, _)| x),
        );
        coming.len()
    }

    /// The tokens `waiting` at a join become `exec` alone.
    pub(crate) fn merge_at(&mut self, exec: &str, _gateway: &str, waiting: &[String]) {
        for w in waiting.iter().filter(|w| w.as_str() != exec) {
            self.inst.executions.retain(|e| &e.id != w);
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = true;
        }
    }

    /// Whether a token at `from` can reach `to` along sequence flows (and links).
    pub(crate) fn reaches(&self, from: NodeIdx, to: NodeIdx) -> bool {
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
}

/// The variable an activation condition counts the waiting tokens by (BPMN's `activationCount`).
const ACTIVATION_COUNT: &str = "activationCount";
