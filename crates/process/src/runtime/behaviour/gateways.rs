//! Gateways: exclusive and inclusive choice, parallel and inclusive joins, and the
//! event-based gateway whose first branch to fire wins.

use kairos_bpmn::{FlowIdx, FlowNode, NodeIdx, NodeKind, ThrowEvent};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
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
                    "no outgoing flow of inclusive gateway '{}' has a condition that holds, and it has no default flow",
                    n.id
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
        let others_can_arrive = siblings.iter().filter(|e| !waiting.contains(&e.id)).any(|e| {
            let at = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
            at.is_some_and(|a| self.reaches(a, node))
        }) || self.planned_moves().any(|(x, at)| {
            !waiting.iter().any(|w| w == x) && siblings.iter().any(|s| s.id == x) && self.reaches(at, node)
        });
        if others_can_arrive {
            return Ok(false);
        }
        self.merge_at(exec, &id, &waiting);
        Ok(true)
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
