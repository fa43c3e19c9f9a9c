//! One `<process>`: walks its scopes (the process and each sub-process),
//! collecting flow nodes and sequence flows into the arenas, then hands them
//! to [`validate`](super::validate) to link and check.

use std::collections::{HashMap, HashSet};

use super::{Ctx, node, validate, vendor};
use crate::model::{FlowNode, NodeIdx, NodeKind, Process};
use crate::ns::Ns;
use crate::xml::Element;

/// What kind of scope a node sits in: decides which start events it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    Process,
    SubProcess,
    EventSubProcess,
}

/// Elements inside a scope that describe but do not execute.
const IGNORED_IN_SCOPE: &[&str] = &[
    "documentation",
    "extensionElements",
    "laneSet",
    "textAnnotation",
    "dataObject",
    "dataObjectReference",
    "dataStoreReference",
    "group",
    "category",
    "ioSpecification",
    "property",
    "auditing",
    "monitoring",
    "resourceRole",
    "performer",
    "potentialOwner",
    "humanPerformer",
    "supports",
    "correlationSubscription",
];

/// A reference a node makes by text, resolved once every node of its scope
/// is known.
pub(crate) enum Pending {
    /// A boundary event's `attachedToRef`.
    AttachedTo(String),
    /// A throwing link event's name.
    Link(String),
    /// A compensation throw's `activityRef`.
    ActivityRef(String),
}

/// The arenas being filled, plus what each node still has to resolve.
pub(crate) struct ProcessBuilder<'e> {
    pub nodes: Vec<FlowNode>,
    /// The element of each node, by index (for references and messages).
    pub node_els: Vec<&'e Element>,
    /// What each node still names by text (boundary events, link throws, compensation throws).
    pub pending: Vec<Option<Pending>>,
    /// Each `<sequenceFlow>` element with the scope it sits in.
    pub flow_els: Vec<(&'e Element, Option<NodeIdx>)>,
    /// Scopes that are sub-processes, with their kind.
    pub scopes: Vec<(Option<NodeIdx>, ScopeKind, &'e Element)>,
    pub node_ids: HashMap<String, NodeIdx>,
    /// Ids of refused elements: flows to them are not reported a second time.
    pub refused_ids: HashSet<String>,
    /// Every `<association>` of the process and its sub-processes (a compensation boundary
    /// event names its handler by one; the others only connect annotations).
    pub associations: Vec<&'e Element>,
}

pub(crate) fn build_process(ctx: &mut Ctx<'_>, el: &Element) -> Option<Process> {
    let Some(id) = el.id() else {
        ctx.problem(el, "has no id (the process id is the definition key)");
        return None;
    };
    vendor::check_extensions(ctx, el);
    let listeners = super::listeners::listeners(ctx, el);
    let history_time_to_live = vendor::history_time_to_live(ctx, el);
    let mut b = ProcessBuilder {
        nodes: Vec::new(),
        node_els: Vec::new(),
        pending: Vec::new(),
        flow_els: Vec::new(),
        scopes: vec![(None, ScopeKind::Process, el)],
        node_ids: HashMap::new(),
        refused_ids: HashSet::new(),
        associations: Vec::new(),
    };
    walk_scope(ctx, &mut b, el, None, ScopeKind::Process);
    let linked = validate::link(ctx, &mut b);
    let mut scope_children: HashMap<Option<NodeIdx>, Vec<NodeIdx>> = HashMap::new();
    for (i, n) in b.nodes.iter().enumerate() {
        scope_children.entry(n.scope).or_default().push(NodeIdx(i as u32));
    }
    let start_events = scope_children
        .get(&None)
        .into_iter()
        .flatten()
        .copied()
        .filter(|i| matches!(b.nodes[i.index()].kind, NodeKind::StartEvent(_)))
        .collect();
    Some(Process {
        id: id.to_owned(),
        name: el.attr("name").map(str::to_owned),
        history_time_to_live,
        nodes: b.nodes,
        flows: linked.flows,
        start_events,
        listeners,
        line: ctx.pos(el).line,
        node_ids: b.node_ids,
        flow_ids: linked.flow_ids,
        scope_children,
    })
}

/// Collects the flow elements directly inside `container`.
fn walk_scope<'e>(
    ctx: &mut Ctx<'_>,
    b: &mut ProcessBuilder<'e>,
    container: &'e Element,
    scope: Option<NodeIdx>,
    kind: ScopeKind,
) {
    for child in &container.children {
        if child.ns != Ns::Bpmn {
            continue; // other namespaces may only extend, never change behaviour
        }
        let name = child.local.as_str();
        if name == "sequenceFlow" {
            b.flow_els.push((child, scope));
        } else if name == "association" {
            b.associations.push(child);
        } else if let Some(tag) = node::flow_node_tag(name) {
            let Some(idx) = add_node(ctx, b, child, tag, scope, kind) else { continue };
            if let NodeKind::SubProcess(sub) = &b.nodes[idx.index()].kind {
                let inner = if sub.triggered_by_event { ScopeKind::EventSubProcess } else { ScopeKind::SubProcess };
                b.scopes.push((Some(idx), inner, child));
                walk_scope(ctx, b, child, Some(idx), inner);
            }
        } else if IGNORED_IN_SCOPE.contains(&name) || (scope.is_some() && node::is_activity_child(name)) {
            continue;
        } else {
            ctx.unsupported(child, node::unsupported_reason(name));
            b.refused_ids.extend(child.id().map(str::to_owned));
        }
    }
}

fn add_node<'e>(
    ctx: &mut Ctx<'_>,
    b: &mut ProcessBuilder<'e>,
    el: &'e Element,
    tag: &'static str,
    scope: Option<NodeIdx>,
    kind: ScopeKind,
) -> Option<NodeIdx> {
    let Some(id) = el.id() else {
        ctx.problem(el, "has no id");
        return None;
    };
    let (node_kind, pending) = node::read_kind(ctx, el, tag, kind);
    let common = vendor::common(ctx, el);
    let multi_instance = if node::is_activity(tag) { vendor::multi_instance(ctx, el) } else { None };
    let standard_loop = if node::is_activity(tag) { vendor::standard_loop(ctx, el) } else { None };
    if multi_instance.is_some() && standard_loop.is_some() {
        ctx.problem(el, "has both multiInstanceLoopCharacteristics and standardLoopCharacteristics: keep one");
    }
    let event_sub_process = tag == "subProcess" && el.attr("triggeredByEvent").is_some_and(|v| v.trim() == "true");
    if event_sub_process && (multi_instance.is_some() || standard_loop.is_some()) {
        ctx.problem(el, "an event sub-process runs once per event: it cannot have loop characteristics");
    }
    let io = vendor::io_mapping(ctx, el);
    let listeners = super::listeners::listeners(ctx, el);
    let for_compensation =
        node::is_activity(tag) && ctx.boolean(el, "isForCompensation", el.attr("isForCompensation"), false);
    let pos = ctx.pos(el);
    let idx = NodeIdx(b.nodes.len() as u32);
    b.nodes.push(FlowNode {
        id: id.to_owned(),
        name: el.attr("name").map(str::to_owned),
        element: tag,
        kind: node_kind,
        scope,
        incoming: Vec::new(),
        outgoing: Vec::new(),
        boundary_events: Vec::new(),
        default_flow: None,
        async_before: common.async_before,
        async_after: common.async_after,
        exclusive: common.exclusive,
        retry_time_cycle: common.retry_time_cycle,
        multi_instance,
        standard_loop,
        io,
        for_compensation,
        compensation_handler: None,
        listeners,
        line: pos.line,
        column: pos.column,
    });
    b.node_els.push(el);
    b.pending.push(pending);
    // Ids are unique document-wide (checked separately); keep the first.
    b.node_ids.entry(id.to_owned()).or_insert(idx);
    Some(idx)
}
