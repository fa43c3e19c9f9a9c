//! Linking and graph checks: resolves every reference between the nodes and
//! flows of one process and refuses graphs the engine could not walk.
//!
//! A token only ever moves inside one scope (a sequence flow never crosses a
//! sub-process border; boundary events sit next to their activity), so every
//! reference is checked for existence *and* for being in the same scope: a
//! flow that jumps into a sub-process would strand a token outside any
//! execution that could complete it.

use std::collections::HashMap;

use super::Ctx;
use super::process::{Pending, ProcessBuilder, ScopeKind};
use crate::error::quote;
use crate::model::{Condition, EventTrigger, FlowIdx, Link, NodeIdx, NodeKind, SequenceFlow, SubProcess};
use crate::xml::Element;

pub(crate) struct Linked<'e> {
    pub flows: Vec<SequenceFlow>,
    pub flow_ids: HashMap<String, FlowIdx>,
    /// The element of each flow, by index.
    els: Vec<&'e Element>,
}

pub(crate) fn link<'e>(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'e>) -> Linked<'e> {
    let mut linked = Linked { flows: Vec::new(), flow_ids: HashMap::new(), els: Vec::new() };
    for i in 0..b.flow_els.len() {
        let (el, scope) = b.flow_els[i];
        if let Some(flow) = read_flow(ctx, b, el, scope) {
            let idx = FlowIdx(linked.flows.len() as u32);
            b.nodes[flow.source.index()].outgoing.push(idx);
            b.nodes[flow.target.index()].incoming.push(idx);
            linked.flow_ids.entry(flow.id.clone()).or_insert(idx);
            linked.flows.push(flow);
            linked.els.push(el);
        }
    }
    check_flow_ends(ctx, b, &linked);
    link_defaults(ctx, b, &linked);
    link_boundary_events(ctx, b);
    super::compensation::link(ctx, b);
    link_link_events(ctx, b);
    check_start_events(ctx, b);
    check_event_gateways(ctx, b, &linked);
    linked
}

/// Reads one sequence flow. Flowable's and Activiti's own examples (the
/// holiday-request tutorial among them) leave sequence flows without an id;
/// nothing can refer to such a flow, so it gets one made from its ends
/// (`flow_<source>_<target>`) instead of the file being refused.
fn read_flow(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>, el: &Element, scope: Option<NodeIdx>) -> Option<SequenceFlow> {
    let id = match el.id() {
        Some(id) => id.to_owned(),
        None => {
            let end = |attr| el.attr(attr).unwrap_or("unknown");
            ctx.fresh_id(&format!("flow_{}_{}", end("sourceRef"), end("targetRef")))
        }
    };
    super::vendor::check_extensions(ctx, el);
    for child in el.bpmn_children() {
        if !matches!(child.local.as_str(), "conditionExpression" | "documentation" | "extensionElements") {
            ctx.unsupported_in(&child.local, child, el, "");
        }
    }
    let condition = condition(ctx, el);
    let listeners = super::listeners::listeners(ctx, el);
    let source = end_ref(ctx, b, el, scope, "sourceRef");
    let target = end_ref(ctx, b, el, scope, "targetRef");
    let pos = ctx.pos(el);
    Some(SequenceFlow {
        id,
        name: el.attr("name").map(str::to_owned),
        source: source?,
        target: target?,
        condition,
        listeners,
        scope,
        line: pos.line,
        column: pos.column,
    })
}

/// Resolves `sourceRef` / `targetRef` to a node of the flow's own scope.
fn end_ref(
    ctx: &mut Ctx<'_>,
    b: &ProcessBuilder<'_>,
    el: &Element,
    scope: Option<NodeIdx>,
    attr: &str,
) -> Option<NodeIdx> {
    let Some(reference) = el.attr(attr) else {
        ctx.problem(el, format!("has no {attr}"));
        return None;
    };
    let Some(&idx) = b.node_ids.get(reference) else {
        if !b.refused_ids.contains(reference) {
            ctx.problem(el, format!("{attr} '{}' does not exist", quote(reference)));
        }
        return None;
    };
    let node_scope = b.nodes[idx.index()].scope;
    if node_scope != scope {
        let (there, here) = (scope_name(b, node_scope), scope_name(b, scope));
        ctx.problem(
            el,
            format!(
                "{attr} '{}' is in {there}, but the flow is in {here}; flows cannot cross a sub-process border",
                quote(reference)
            ),
        );
        return None;
    }
    Some(idx)
}

fn scope_name(b: &ProcessBuilder<'_>, scope: Option<NodeIdx>) -> String {
    match scope {
        None => "the process".to_owned(),
        Some(s) => format!("subProcess '{}'", quote(&b.nodes[s.index()].id)),
    }
}

/// The `conditionExpression`: an expression of SPEC P6's language, or a script when its
/// `language` names a script format (the caller's script checker decides which run).
fn condition(ctx: &mut Ctx<'_>, el: &Element) -> Option<Condition> {
    let c = el.bpmn_child("conditionExpression")?;
    if let Some(lang) = c.attr("language").map(str::trim).filter(|l| !l.is_empty()) {
        let juel = ["juel", "http://www.omg.org/spec/BPMN/20100524/MODEL", "http://www.w3.org/1999/XPath"];
        if !juel.iter().any(|j| lang.eq_ignore_ascii_case(j)) {
            return ctx.script(c, el, "the condition's script", lang).map(Condition::Script);
        }
    }
    let text = c.text.trim();
    if text.is_empty() {
        return None;
    }
    // Text without `${…}` is a literal: never true, so the flow could never be taken (Camunda
    // fails when it evaluates it; SpiffWorkflow reads it as Python). Said at deploy instead.
    if !super::is_expression(text) && !text.eq_ignore_ascii_case("true") && !text.eq_ignore_ascii_case("false") {
        ctx.problem(
            el,
            format!("condition '{}' is plain text, not an expression: write it as ${{{}}}", quote(text), quote(text)),
        );
        return None;
    }
    ctx.note_expression(el, "condition", text);
    Some(Condition::Expression(text.to_owned()))
}

/// Start events have no incoming flows, end events no outgoing ones, boundary
/// events and event sub-processes neither kind of incoming, a catching link
/// event no incoming and a throwing one no outgoing (the link is their flow);
/// conditions only leave exclusive, inclusive and complex gateways and activities.
fn check_flow_ends(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>, linked: &Linked<'_>) {
    for (i, node) in b.nodes.iter().enumerate() {
        let el = b.node_els[i];
        let first = |flows: &[FlowIdx]| flows.first().map(|f| quote(&linked.flows[f.index()].id));
        let event_sub = matches!(node.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: true, .. }));
        let link_catch = matches!(node.kind.trigger(), Some(EventTrigger::Link(_)));
        let link_throw = matches!(b.pending[i], Some(Pending::Link(_)));
        if let Some(f) = first(&node.incoming) {
            match &node.kind {
                NodeKind::StartEvent(_) => {
                    ctx.problem(el, format!("a start event cannot have incoming flows (flow '{f}')"))
                }
                NodeKind::BoundaryEvent(_) => {
                    ctx.problem(el, format!("a boundary event cannot have incoming flows (flow '{f}')"))
                }
                _ if event_sub => {
                    ctx.problem(el, format!("an event sub-process cannot have incoming flows (flow '{f}')"))
                }
                _ if link_catch => ctx.problem(
                    el,
                    format!("a catching link event cannot have incoming flows (flow '{f}'); tokens arrive by its link"),
                ),
                _ => {}
            }
        }
        if let Some(f) = first(&node.outgoing) {
            // By tag: a message end event naming a handler runs as a service task.
            if node.element == "endEvent" {
                ctx.problem(el, format!("an end event cannot have outgoing flows (flow '{f}')"));
            } else if event_sub {
                ctx.problem(el, format!("an event sub-process cannot have outgoing flows (flow '{f}')"));
            } else if link_throw {
                ctx.problem(
                    el,
                    format!(
                        "a throwing link event cannot have outgoing flows (flow '{f}'); the token goes to its link"
                    ),
                );
            }
        }
    }
    for (i, flow) in linked.flows.iter().enumerate() {
        let source = &b.nodes[flow.source.index()];
        let conditional = matches!(
            source.kind,
            NodeKind::ExclusiveGateway | NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_)
        ) || source.kind.is_activity();
        if flow.condition.is_some() && !conditional {
            ctx.problem(linked.els[i], format!(
                "has a condition but leaves {} '{}'; only flows leaving exclusive, inclusive or complex gateways and activities have conditions",
                source.element,
                quote(&source.id)
            ));
        }
    }
}

/// Resolves `default` attributes: the flow must exist and leave this node.
fn link_defaults(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>, linked: &Linked<'_>) {
    for i in 0..b.nodes.len() {
        let el = b.node_els[i];
        let Some(reference) = el.attr("default") else { continue };
        let kind = &b.nodes[i].kind;
        let may_default =
            matches!(kind, NodeKind::ExclusiveGateway | NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_));
        if !(may_default || kind.is_activity()) {
            ctx.problem(el, "only exclusive, inclusive and complex gateways and activities have a default flow");
            continue;
        }
        match linked.flow_ids.get(reference) {
            None => ctx.problem(el, format!("default flow '{}' does not exist", quote(reference))),
            Some(&f) if linked.flows[f.index()].source.index() != i => {
                ctx.problem(el, format!("default flow '{}' does not leave this {}", quote(reference), el.local));
            }
            Some(&f) => b.nodes[i].default_flow = Some(f),
        }
    }
}

/// Resolves `attachedToRef`: an activity of the same scope (not an event
/// sub-process, which no token ever enters through a flow).
fn link_boundary_events(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>) {
    for i in 0..b.nodes.len() {
        let Some(Pending::AttachedTo(reference)) = &b.pending[i] else { continue };
        let reference = reference.clone();
        let el = b.node_els[i];
        let Some(&host) = b.node_ids.get(reference.as_str()) else {
            if !b.refused_ids.contains(&reference) {
                ctx.problem(el, format!("attachedToRef '{}' does not exist", quote(&reference)));
            }
            continue;
        };
        let host_node = &b.nodes[host.index()];
        let event_sub = matches!(host_node.kind, NodeKind::SubProcess(SubProcess { triggered_by_event: true, .. }));
        if !super::node::is_activity(host_node.element) || event_sub {
            let what = if event_sub { "an event sub-process" } else { host_node.element };
            ctx.problem(
                el,
                format!("attachedToRef '{}' is {what}; boundary events attach to activities", quote(&reference)),
            );
            continue;
        }
        let escalation = matches!(b.nodes[i].kind.trigger(), Some(EventTrigger::Escalation(_)));
        // Escalations come from inside a sub-process, out of a called instance, or from a
        // user task (Camunda's handleEscalation); nothing else throws one, so a boundary
        // anywhere else could never fire.
        if escalation && !["subProcess", "transaction", "callActivity", "userTask"].contains(&host_node.element) {
            ctx.problem(
                el,
                format!(
                    "attachedToRef '{}' is {}; an escalation boundary event attaches to a sub-process, a call activity or a user task (nothing else throws escalations)",
                    quote(&reference),
                    host_node.element
                ),
            );
            continue;
        }
        if host_node.scope != b.nodes[i].scope {
            ctx.problem(
                el,
                format!("attachedToRef '{}' is in another scope than the boundary event", quote(&reference)),
            );
            continue;
        }
        b.nodes[host.index()].boundary_events.push(NodeIdx(i as u32));
        if let NodeKind::BoundaryEvent(be) = &mut b.nodes[i].kind {
            be.attached_to = host;
        }
    }
}

/// Pairs each throwing link event with the catching link event of the same
/// name in its scope: exactly one must exist (two catches of one name in a
/// scope would make the throw ambiguous, so they are refused even unused).
fn link_link_events(ctx: &mut Ctx<'_>, b: &mut ProcessBuilder<'_>) {
    let mut catches: HashMap<(Option<NodeIdx>, &str), Vec<usize>> = HashMap::new();
    for (i, n) in b.nodes.iter().enumerate() {
        if let Some(EventTrigger::Link(name)) = n.kind.trigger() {
            catches.entry((n.scope, name.as_str())).or_default().push(i);
        }
    }
    let mut resolved = Vec::new();
    for (&(_, name), found) in &catches {
        if let [first, second, ..] = found.as_slice() {
            let el = b.node_els[*second];
            let first_id = quote(&b.nodes[*first].id);
            ctx.problem(el, format!("link '{}' is already caught by '{first_id}' in this scope", quote(name)));
        }
    }
    for i in 0..b.nodes.len() {
        let Some(Pending::Link(name)) = &b.pending[i] else { continue };
        match catches.get(&(b.nodes[i].scope, name.as_str())).map(Vec::as_slice) {
            Some([target]) => resolved.push((i, Link { name: name.clone(), target: NodeIdx(*target as u32) })),
            Some(_) => {} // reported above
            None => ctx.problem(
                b.node_els[i],
                format!(
                    "link '{}' has no catching link event (intermediateCatchEvent with linkEventDefinition name=\"{}\") in the same scope",
                    quote(name),
                    quote(name)
                ),
            ),
        }
    }
    for (i, link) in resolved {
        if let NodeKind::IntermediateThrowEvent(t) = &mut b.nodes[i].kind {
            t.link = Some(link);
        }
    }
}

/// Every scope needs a way in: the process at least one start event (at most
/// one of them plain), an embedded sub-process exactly one none start, an
/// event sub-process exactly one triggered start.
fn check_start_events(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>) {
    // (starts, plain starts) per scope, in one pass over the nodes.
    let mut counts: HashMap<Option<NodeIdx>, (usize, usize)> = HashMap::new();
    for n in &b.nodes {
        if let NodeKind::StartEvent(s) = &n.kind {
            let c = counts.entry(n.scope).or_default();
            c.0 += 1;
            c.1 += usize::from(s.trigger == EventTrigger::None);
        }
    }
    for &(scope, kind, el) in &b.scopes {
        let (starts, plain) = counts.get(&scope).copied().unwrap_or_default();
        match (kind, starts) {
            (ScopeKind::Process, 0) => ctx.problem(el, "has no start event (none, timer, message or signal)"),
            (ScopeKind::Process, _) if plain > 1 => {
                ctx.problem(el, format!("has {plain} none start events; a process may have only one"))
            }
            (ScopeKind::SubProcess, 0) => {
                ctx.problem(el, "has no start event; an embedded sub-process needs one none start event")
            }
            (ScopeKind::EventSubProcess, 0) => {
                ctx.problem(el, "has no start event; an event sub-process needs one triggered start event")
            }
            (ScopeKind::SubProcess | ScopeKind::EventSubProcess, n) if n > 1 => {
                ctx.problem(el, format!("has {n} start events; a sub-process has exactly one"))
            }
            _ => {}
        }
    }
}

/// An event-based gateway waits for whichever of its targets fires first, so
/// every target must be something that waits: a catch event or receive task.
fn check_event_gateways(ctx: &mut Ctx<'_>, b: &ProcessBuilder<'_>, linked: &Linked<'_>) {
    for (i, node) in b.nodes.iter().enumerate() {
        if !matches!(node.kind, NodeKind::EventBasedGateway) {
            continue;
        }
        for f in &node.outgoing {
            let flow = &linked.flows[f.index()];
            let target = &b.nodes[flow.target.index()];
            let waits = matches!(target.kind, NodeKind::IntermediateCatchEvent(_) | NodeKind::ReceiveTask(_));
            if !waits {
                ctx.problem(b.node_els[i], format!(
                    "flow '{}' leads to {} '{}'; an event-based gateway may only lead to intermediate catch events and receive tasks",
                    quote(&flow.id),
                    target.element,
                    quote(&target.id)
                ));
            }
        }
    }
}
