//! Counting tokens for the joins: which tokens of a scope wait at a node, which can still reach
//! it along the sequence flows, and merging those that waited into one. What a join does with
//! the counts is its behaviour's (`behaviour/gateways.rs`).

use std::collections::HashSet;

use kairos_bpmn::{NodeIdx, NodeKind, ThrowEvent};

use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    /// The tokens of scope `parent` that are not event scopes.
    pub(crate) fn tokens_of(&self, parent: Option<&str>) -> Vec<Execution> {
        self.inst.executions.iter().filter(|e| e.parent_id.as_deref() == parent && !e.is_event_scope).cloned().collect()
    }

    /// The tokens among `tokens` that wait at `node`: inactive there, and not waiting for the
    /// node's async-before job (such a token has not arrived yet; it is on its way).
    pub(crate) fn waiting_at(&self, node: NodeIdx, tokens: &[Execution]) -> Vec<String> {
        let id = &self.node(node).id;
        tokens
            .iter()
            .filter(|e| e.activity.as_deref() == Some(id) && !e.is_active && !self.awaits_async_before(&e.id))
            .map(|e| e.id.clone())
            .collect()
    }

    fn awaits_async_before(&self, exec: &str) -> bool {
        self.inst.jobs.iter().any(|j| j.execution_id == exec && j.kind == JobKind::AsyncBefore)
    }

    /// How many of `tokens` (a scope's) other than those `waiting` at `node`, or `moving` (the
    /// agenda's planned arrivals and departures), can still reach it — a token at `node` itself
    /// waiting for its async-before job included.
    pub(crate) fn arrivals_expected(
        &self,
        node: NodeIdx,
        tokens: &[Execution],
        waiting: &[String],
        moving: &[(String, NodeIdx)],
    ) -> usize {
        let mut coming: HashSet<&str> = tokens
            .iter()
            .filter(|e| !waiting.contains(&e.id))
            .filter(|e| {
                let at = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a));
                at.is_some_and(|a| a == node || self.reaches(a, node))
            })
            .map(|e| e.id.as_str())
            .collect();
        coming.extend(
            moving
                .iter()
                .filter(|(x, at)| {
                    !waiting.iter().any(|w| w == x) && tokens.iter().any(|s| &s.id == x) && self.reaches(*at, node)
                })
                .map(|(x, _)| x.as_str()),
        );
        coming.len()
    }

    /// The tokens `waiting` at a join become `exec` alone.
    pub(crate) fn merge_at(&mut self, exec: &str, waiting: &[String]) {
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
