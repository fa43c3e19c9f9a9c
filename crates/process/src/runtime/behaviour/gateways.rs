//! Gateways: exclusive and inclusive choice, parallel, inclusive and complex joins, and the
//! event-based gateway whose first branch to fire wins.
//!
//! A complex join that fired keeps one marker per token of its scope that could still arrive:
//! an event-scope execution at the gateway (it holds no token, so the scope does not wait for
//! it). Each arrival while markers are there is absorbed and takes one away; when no token can
//! arrive any more the rest go. Counting, rather than asking "can any token still come?",
//! keeps a gateway in a loop from absorbing the next round's tokens.

use kairos_bpmn::{FlowIdx, FlowNode, NodeIdx, NodeKind};
use std::collections::{HashMap, HashSet};

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

    /// An inclusive gateway, or a complex one (`activation`: its activation condition): a join
    /// (`join`) waits for the tokens that can still arrive, or until the activation condition
    /// holds; then one token takes every flow whose condition holds.
    pub(crate) fn enter_inclusive_gateway(
        &mut self,
        exec: &str,
        node: NodeIdx,
        n: &FlowNode,
        activation: Option<&str>,
        join: bool,
    ) -> Result<()> {
        if join {
            let goes_on = match activation {
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
        let waiting = self.arrive(exec, node).1;
        if waiting.len() < incoming {
            return false;
        }
        self.merge_at(exec, &waiting);
        true
    }

    /// Inclusive join: the token waits until no other token of the scope can still reach the
    /// gateway. True when this token goes on.
    pub(crate) fn join_inclusive(&mut self, exec: &str, node: NodeIdx) -> Result<bool> {
        let (tokens, waiting) = self.arrive(exec, node);
        if self.arrivals_expected(node, &tokens, &waiting, &self.moving()) > 0 {
            return Ok(false);
        }
        self.merge_at(exec, &waiting);
        Ok(true)
    }

    /// Complex join with an activation condition: the token waits until the condition holds
    /// over the tokens waiting (`activationCount`); then it goes on, and tokens still able to
    /// arrive are absorbed when they do. True when this token goes on.
    fn join_complex(&mut self, exec: &str, node: NodeIdx, activation: &str) -> Result<bool> {
        let id = self.node(node).id.clone();
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        let (tokens, waiting) = self.arrive(exec, node);
        let expected = self.arrivals_expected(node, &tokens, &waiting, &self.moving());
        let absorb = self.markers_at(parent.as_deref(), &id);
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
            self.merge_at(exec, &waiting);
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

    /// The token `exec` waits at join `node`: the tokens of its scope, and those waiting there.
    fn arrive(&mut self, exec: &str, node: NodeIdx) -> (Vec<Execution>, Vec<String>) {
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = false;
        }
        let tokens = self.tokens_of(parent.as_deref());
        let waiting = self.waiting_at(node, &tokens);
        (tokens, waiting)
    }

    /// The moves the agenda has planned: (execution, node).
    fn moving(&self) -> Vec<(String, NodeIdx)> {
        self.planned_moves().map(|(x, at)| (x.to_string(), at)).collect()
    }

    /// The markers a complex gateway `id` that fired keeps in scope `parent`.
    fn markers_at(&self, parent: Option<&str>, id: &str) -> Vec<String> {
        self.inst
            .executions
            .iter()
            .filter(|e| e.parent_id.as_deref() == parent && e.is_event_scope && e.activity.as_deref() == Some(id))
            .map(|e| e.id.clone())
            .collect()
    }

    /// After a command's agenda drained, the joins whose counts its moves changed (as
    /// Flowable's agenda re-runs its inactive behaviours): an inclusive or complex join with
    /// tokens waiting that nothing can reach any more (the awaited token ended elsewhere, or
    /// left by a boundary event) is evaluated again, and a fired complex gateway keeps only
    /// the markers of tokens still on their way. True when a join was planned, so the agenda
    /// has work again.
    pub(crate) fn settle_joins(&mut self) -> Result<bool> {
        let mut seen = HashSet::new();
        let (mut waiting_joins, mut fired) = (Vec::new(), Vec::new());
        for e in self.inst.executions.iter().filter(|e| !e.is_active) {
            let Some(node) = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { continue };
            let n = self.node(node);
            let join =
                matches!(n.kind, NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_)) && n.incoming.len() > 1;
            if join && seen.insert((e.parent_id.clone(), e.is_event_scope, node.index())) {
                let group = (e.parent_id.clone(), node);
                if e.is_event_scope { fired.push(group) } else { waiting_joins.push(group) }
            }
        }
        if waiting_joins.is_empty() && fired.is_empty() {
            return Ok(false);
        }
        let mut scopes: HashMap<Option<String>, Vec<Execution>> = HashMap::new();
        for e in self.inst.executions.iter().filter(|e| !e.is_event_scope) {
            scopes.entry(e.parent_id.clone()).or_default().push(e.clone());
        }
        let none = Vec::new();
        for (parent, node) in fired {
            let tokens = scopes.get(&parent).unwrap_or(&none);
            let expected = self.arrivals_expected(node, tokens, &self.waiting_at(node, tokens), &[]);
            let markers = self.markers_at(parent.as_deref(), &self.node(node).id);
            if markers.len() > expected {
                self.inst.executions.retain(|e| !markers[expected..].contains(&e.id));
            }
        }
        let mut woke = false;
        for (parent, node) in waiting_joins {
            let tokens = scopes.get(&parent).unwrap_or(&none);
            let waiting = self.waiting_at(node, tokens);
            if let Some(first) = waiting.first()
                && self.arrivals_expected(node, tokens, &waiting, &[]) == 0
            {
                self.agenda.push_back(Op::EnterBody { exec: first.clone(), node });
                woke = true;
            }
        }
        Ok(woke)
    }
}

/// The variable an activation condition counts the waiting tokens by (BPMN's `activationCount`).
const ACTIVATION_COUNT: &str = "activationCount";
