//! Compensation (BPMN 2.0 §10.7): links each compensation boundary event to its handler
//! through the `association` modelers draw between them, resolves the `activityRef` of
//! compensation throws, and refuses what could never run as drawn — a handler with sequence
//! flows or without a boundary event pointing at it, a compensation boundary without its
//! association, an `activityRef` outside the throw's scope, a compensation event
//! sub-process outside an embedded sub-process — and the transactions undone by it: a cancel
//! end event directly inside a transaction that has a cancel boundary event to leave by, a
//! cancel boundary event only on a transaction.

use std::collections::HashMap;

use super::Ctx;
use super::process::{Pending, ProcessBuilder};
use crate::error::quote;
use crate::model::{EndEvent, EventTrigger, NodeIdx, NodeKind, SubProcess};

pub(crate) fn link(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>) {
    link_handlers(ctx, b);
    check_handlers(ctx, b);
    resolve_activity_refs(ctx, b);
    check_event_sub_processes(ctx, b);
    check_transactions(ctx, b);
}

fn is_transaction(kind: &NodeKind) -> bool {
    matches!(kind, NodeKind::SubProcess(SubProcess { transaction: true, .. }))
}

/// Cancel events belong to transactions: the end event directly inside one (whose cancel
/// boundary event it leaves by), the boundary event on one.
fn check_transactions(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>) {
    for (i, n) in b.nodes.iter().enumerate() {
        let el = b.node_els[i];
        match &n.kind {
            NodeKind::EndEvent(EndEvent::Cancel) => {
                let Some(t) = n.scope.filter(|t| is_transaction(&b.nodes[t.index()].kind)) else {
                    ctx.problem(el, "a cancel end event belongs directly inside a transaction");
                    continue;
                };
                let tx = &b.nodes[t.index()];
                let leaves = tx
                    .boundary_events
                    .iter()
                    .any(|be| b.nodes[be.index()].kind.trigger() == Some(&EventTrigger::Cancel));
                if !leaves {
                    ctx.problem(
                        el,
                        format!("its transaction '{}' has no cancel boundary event to leave by", quote(&tx.id)),
                    );
                }
            }
            NodeKind::BoundaryEvent(be) if be.trigger == EventTrigger::Cancel => {
                let host = b.nodes.get(be.attached_to.index());
                if host.is_some_and(|h| !is_transaction(&h.kind)) {
                    ctx.problem(el, "a cancel boundary event attaches to a transaction");
                }
            }
            _ => {}
        }
    }
}

fn is_compensation_boundary(kind: &NodeKind) -> bool {
    matches!(kind, NodeKind::BoundaryEvent(be) if be.trigger == EventTrigger::Compensate)
}

/// Each compensation boundary event has exactly one association, from it to an
/// `isForCompensation` activity of its scope; an activity has at most one such event.
fn link_handlers(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>) {
    let mut targets: HashMap<usize, Vec<(String, usize)>> = HashMap::new();
    for &a in &b.associations {
        let end = |attr| a.attr(attr).and_then(|r| b.node_ids.get(r)).map(|i| i.index());
        let Some(source) = end("sourceRef") else { continue };
        if !is_compensation_boundary(&b.nodes[source].kind) {
            continue; // an annotation's or a data object's association
        }
        let Some(target) = end("targetRef") else {
            let target = a.attr("targetRef").unwrap_or_default();
            ctx.problem(a, format!("targetRef '{}' is not a flow node of this process", quote(target)));
            continue;
        };
        targets.entry(source).or_default().push((a.id().unwrap_or_default().to_owned(), target));
    }
    let mut handled: HashMap<NodeIdx, usize> = HashMap::new();
    for i in 0..b.nodes.len() {
        if !is_compensation_boundary(&b.nodes[i].kind) {
            continue;
        }
        let el = b.node_els[i];
        let found = targets.remove(&i).unwrap_or_default();
        let [(_, target)] = found.as_slice() else {
            let detail = if found.is_empty() {
                "a compensation boundary event needs an association to its compensation handler (an activity with isForCompensation=\"true\")".to_owned()
            } else {
                format!("has {} associations; a compensation boundary event names one handler", found.len())
            };
            ctx.problem(el, detail);
            continue;
        };
        let (target, handler) = (*target, &b.nodes[*target]);
        if !handler.for_compensation {
            let what = format!("{} '{}'", handler.element, quote(&handler.id));
            ctx.problem(el, format!("its association leads to {what}, which is not isForCompensation=\"true\""));
            continue;
        }
        if handler.scope != b.nodes[i].scope {
            ctx.problem(el, format!("its handler '{}' is in another scope", quote(&handler.id)));
            continue;
        }
        let NodeKind::BoundaryEvent(be) = &b.nodes[i].kind else { continue };
        let host = be.attached_to;
        if host.index() >= b.nodes.len() {
            continue; // its attachedToRef was reported
        }
        if let Some(first) = handled.insert(host, i) {
            let first = quote(&b.nodes[first].id);
            let host_id = quote(&b.nodes[host.index()].id);
            ctx.problem(el, format!("'{host_id}' already has the compensation boundary event '{first}'"));
            continue;
        }
        b.nodes[host.index()].compensation_handler = Some(NodeIdx(target as u32));
    }
}

/// A handler is entered by a compensation only: no sequence flows in or out, and at least
/// one compensation boundary event naming it. A compensation boundary event has no
/// outgoing flows (its association is its way to the handler).
fn check_handlers(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>) {
    let named: Vec<NodeIdx> = b.nodes.iter().filter_map(|n| n.compensation_handler).collect();
    for (i, n) in b.nodes.iter().enumerate() {
        let el = b.node_els[i];
        if is_compensation_boundary(&n.kind) && !n.outgoing.is_empty() {
            ctx.problem(
                el,
                "a compensation boundary event has no outgoing sequence flows; its association leads to the handler",
            );
        }
        if !n.for_compensation {
            continue;
        }
        if !n.incoming.is_empty() || !n.outgoing.is_empty() {
            ctx.problem(el, "a compensation handler (isForCompensation=\"true\") has no incoming or outgoing sequence flows; a compensation throw starts it");
        } else if !named.contains(&NodeIdx(i as u32)) {
            ctx.problem(
                el,
                "no compensation boundary event's association leads to this compensation handler, so it can never run",
            );
        }
    }
}

/// The scope whose completed activities a throw in `scope` compensates: its own, or for a
/// throw in an event sub-process the scope that event sub-process sits in.
fn compensation_scope(b: &ProcessBuilder<'_>, mut scope: Option<NodeIdx>) -> Option<NodeIdx> {
    while let Some(s) = scope {
        let n = &b.nodes[s.index()];
        if !matches!(n.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: true, .. })) {
            break;
        }
        scope = n.scope;
    }
    scope
}

/// `activityRef` names an activity of the throw's compensation scope that can be
/// compensated: one with a handler, or an embedded sub-process (whose inner handlers or
/// compensation event sub-process do it).
fn resolve_activity_refs(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>) {
    for i in 0..b.nodes.len() {
        let Some(Pending::ActivityRef(reference)) = &b.pending[i] else { continue };
        let el = b.node_els[i];
        let scope = compensation_scope(b, b.nodes[i].scope);
        let target = b.node_ids.get(reference.as_str()).copied();
        let Some(target) = target.filter(|t| b.nodes[t.index()].scope == scope) else {
            let here = match scope {
                None => "the process".to_owned(),
                Some(s) => format!("subProcess '{}'", quote(&b.nodes[s.index()].id)),
            };
            ctx.problem(el, format!("activityRef '{}' names no activity of {here}", quote(reference)));
            continue;
        };
        let t = &b.nodes[target.index()];
        let sub = matches!(t.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: false, .. }));
        if t.compensation_handler.is_none() && !sub {
            let what = format!("{} '{}'", t.element, quote(&t.id));
            ctx.problem(el, format!("activityRef '{}' is {what}, which has no compensation handler", quote(reference)));
            continue;
        }
        match &mut b.nodes[i].kind {
            NodeKind::IntermediateThrowEvent(t) => {
                if let Some(c) = t.compensate.as_mut() {
                    c.activity = Some(target);
                }
            }
            NodeKind::EndEvent(EndEvent::Compensate(c)) => c.activity = Some(target),
            _ => {}
        }
    }
}

/// A compensation event sub-process sits in an embedded sub-process (what it compensates),
/// one per sub-process.
fn check_event_sub_processes(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>) {
    let mut seen: HashMap<Option<NodeIdx>, usize> = HashMap::new();
    for (i, n) in b.nodes.iter().enumerate() {
        if !matches!(n.kind.trigger(), Some(EventTrigger::Compensate)) || !matches!(n.kind, NodeKind::StartEvent(_)) {
            continue;
        }
        let el = b.node_els[i];
        let esp = n.scope.map(|s| &b.nodes[s.index()]);
        let outer = esp.and_then(|e| e.scope).map(|s| &b.nodes[s.index()]);
        let embedded =
            outer.is_some_and(|o| matches!(o.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: false, .. })));
        if !embedded {
            ctx.problem(
                el,
                "a compensation start event belongs to an event sub-process inside an embedded sub-process",
            );
            continue;
        }
        if let Some(first) = seen.insert(esp.and_then(|e| e.scope), i) {
            let first = quote(&b.nodes[first].id);
            ctx.problem(el, format!("the sub-process already has the compensation event sub-process of '{first}'"));
        }
    }
}
