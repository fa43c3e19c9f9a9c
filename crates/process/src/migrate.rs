//! Moving a running instance to another definition (SPEC P13): the check of an activity
//! mapping against the instance and both models, before anything changes.
//!
//! What Flowable and Camunda users do when a model changes under running instances: each
//! place a token waits (an activity, a sub-process it is inside, a join it waits at) moves to
//! an activity of the target definition — the one the mapping names, else the one with the
//! same id. The move is refused, naming the activity, when the target has no such activity,
//! when it is another kind of element (a user task stays a user task), when it sits in another
//! scope than the mapped scope of the source (a token inside sub-process A must land inside
//! the sub-process A maps to), or when one side is multi-instance and the other is not.
//! [`crate::Runtime::migrate`] then moves the tokens and re-arms their waits.

use std::collections::{BTreeMap, BTreeSet};

use kairos_bpmn::{EventTrigger, FlowNode, Implementation, NodeKind, Process};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::state::{Instance, JobKind};

/// A checked migration: where every active activity goes, and what the source's timers and
/// waits were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// Source activity id → target activity id, for every activity of the source that a token
    /// of the instance is at (or inside, or a pending job continues at), and every mapping the
    /// caller gave.
    pub map: BTreeMap<String, String>,
    /// Source timer event id → its timer text, for every timer event of the source (a timer
    /// unchanged in the target keeps its due date).
    pub source_timers: BTreeMap<String, String>,
    /// The target ids of the source's events that wait (catch and boundary events, event
    /// sub-process starts, receive tasks): such an event whose wait was used up before the
    /// migration (a non-interrupting timer that fired) is not armed again; an event new in
    /// the target is.
    pub source_waits: BTreeSet<String>,
}

impl Migration {
    /// Where activity `source` goes: its mapping, else the same id.
    pub fn target_of<'a>(&'a self, source: &'a str) -> &'a str {
        self.map.get(source).map_or(source, String::as_str)
    }
}

/// Checks `mappings` (`fromActivityId`, `toActivityId`) for moving `inst` from `source` to
/// `target`; every problem names the activity.
pub fn plan(inst: &Instance, source: &Process, target: &Process, mappings: &[(String, String)]) -> Result<Migration> {
    let mut map = BTreeMap::new();
    for (from, to) in mappings {
        let Some(from_node) = source.node_by_id(from) else {
            return Err(invalid(
                from,
                format!("fromActivityId '{from}' is not an activity of the instance's definition"),
            ));
        };
        let Some(to_node) = target.node_by_id(to) else {
            return Err(invalid(to, format!("toActivityId '{to}' is not an activity of the target definition")));
        };
        compatible(from_node, to_node, source, target)?;
        if map.insert(from.clone(), to.clone()).is_some() {
            return Err(invalid(from, format!("fromActivityId '{from}' is mapped twice")));
        }
    }
    let mut migration = Migration { map, source_timers: BTreeMap::new(), source_waits: BTreeSet::new() };
    for n in &source.nodes {
        if let Some(EventTrigger::Timer(t)) = n.kind.trigger() {
            migration.source_timers.insert(n.id.clone(), t.text.clone());
        }
    }
    // A complex gateway that fired keeps markers for its late tokens (event-scope executions
    // at it); they are not moved, so a migration would let those tokens fire it again.
    if let Some(at) = inst.executions.iter().filter(|e| e.is_event_scope).find_map(|e| {
        let n = e.activity.as_deref().and_then(|a| source.node_by_id(a))?;
        matches!(n.kind, NodeKind::ComplexGateway(_)).then_some(n.id.as_str())
    }) {
        return Err(invalid(
            at,
            format!(
                "complex gateway '{at}' fired and still absorbs tokens on their way to it: migrate after they arrived"
            ),
        ));
    }
    // Boundary events' waits are re-armed from the target; the activities tokens are at (or
    // inside, or that a pending async or external job continues at) move.
    let mut active: Vec<&str> =
        inst.executions.iter().filter(|e| !e.is_event_scope).filter_map(|e| e.activity.as_deref()).collect();
    active.extend(inst.jobs.iter().filter(|j| j.kind != JobKind::Timer).map(|j| j.activity_id.as_str()));
    // Outer scopes first: a sub-process's own move is checked (and reported) before its inside.
    let depth = |a: &str| {
        let mut d = 0;
        let mut at = source.node_by_id(a).and_then(|n| n.scope);
        while let Some(s) = at {
            d += 1;
            at = source.node(s).scope;
        }
        d
    };
    active.sort_unstable_by_key(|a| (depth(a), *a));
    active.dedup();
    let mut joins: BTreeMap<String, &str> = BTreeMap::new();
    for a in active {
        let from = source.node_by_id(a).ok_or_else(|| {
            ProcessError::at(
                ErrorKind::Model,
                a,
                format!("activity '{a}' of the instance is not in its own definition"),
            )
        })?;
        let to_id = migration.target_of(a).to_string();
        let Some(to) = target.node_by_id(&to_id) else {
            return Err(invalid(
                a,
                format!(
                    "activity '{a}' is active but the target definition has no '{to_id}': map it in activityMappings"
                ),
            ));
        };
        compatible(from, to, source, target)?;
        // Tokens waiting at a join: the target join must wait for as many, and for no other
        // source join's tokens besides.
        let waiting_join = from.kind.is_gateway()
            && from.incoming.len() > 1
            && inst.executions.iter().any(|e| e.activity.as_deref() == Some(a) && !e.is_active);
        if waiting_join {
            if matches!(from.kind, NodeKind::InclusiveGateway | NodeKind::ComplexGateway(_)) {
                let kind = if matches!(from.kind, NodeKind::InclusiveGateway) { "inclusive" } else { "complex" };
                return Err(invalid(a, format!("tokens wait at {kind} join '{a}': migrate after it fired")));
            }
            if to.incoming.len() != from.incoming.len() {
                let (n, m) = (from.incoming.len(), to.incoming.len());
                return Err(invalid(
                    a,
                    format!(
                        "tokens wait at join '{a}' ({n} incoming flows) but '{to_id}' has {m}: it would never fire or fire early"
                    ),
                ));
            }
            if let Some(other) = joins.insert(to_id.clone(), a) {
                return Err(invalid(a, format!("joins '{other}' and '{a}' would both move to '{to_id}'")));
            }
        }
        let scope_of = |p: &Process, n: &FlowNode| n.scope.map(|s| p.node(s).id.clone());
        let want = scope_of(source, from).map(|s| migration.target_of(&s).to_string());
        if scope_of(target, to) != want {
            let there = want.map_or("the process level".to_string(), |s| format!("sub-process '{s}'"));
            return Err(invalid(
                a,
                format!(
                    "activity '{a}' would move to '{to_id}', which is not in {there}: a token cannot leave its scope"
                ),
            ));
        }
        migration.map.insert(a.to_string(), to_id);
    }
    for n in &source.nodes {
        let waits = match &n.kind {
            NodeKind::BoundaryEvent(_) | NodeKind::IntermediateCatchEvent(_) | NodeKind::ReceiveTask(_) => true,
            NodeKind::StartEvent(_) => n.scope.is_some(),
            _ => false,
        };
        if waits {
            let t = migration.target_of(&n.id).to_string();
            migration.source_waits.insert(t);
        }
    }
    Ok(migration)
}

/// A token at `from` can wait at `to`: the same kind of element; the same multi-instance loop
/// (sequential or parallel, over the same collection or cardinality: the running instances'
/// counters and items must mean the same); the same input/output mapping (the inputs it made
/// are local to the token); a waiting service task external on both sides; an event
/// sub-process interrupting on both sides or neither, started by the same kind of event; a
/// catch event waiting for something it can be armed with.
fn compatible(from: &FlowNode, to: &FlowNode, source: &Process, target: &Process) -> Result<()> {
    let refuse = |why: &str| {
        Err(invalid(
            &from.id,
            format!("activity '{}' ({}) cannot move to '{}' ({}): {why}", from.id, from.element, to.id, to.element),
        ))
    };
    if from.element != to.element {
        return refuse("another kind of element");
    }
    match (&from.multi_instance, &to.multi_instance) {
        (Some(x), Some(y)) => {
            let same = x.sequential == y.sequential
                && x.collection == y.collection
                && x.element_variable == y.element_variable
                && x.cardinality == y.cardinality;
            if !same {
                return refuse(
                    "their multi-instance loops differ (sequential, collection, element variable or cardinality)",
                );
            }
        }
        (None, None) => {}
        _ => return refuse("one is multi-instance, the other not"),
    }
    if from.io != to.io {
        return refuse("their input/output mappings differ");
    }
    let external = |n: &FlowNode| matches!(&n.kind, NodeKind::ServiceTask(s) if matches!(s.implementation, Implementation::External { .. }));
    if external(from) != external(to) {
        return refuse("one is done by external workers, the other not");
    }
    if std::mem::discriminant(&from.kind) != std::mem::discriminant(&to.kind) {
        return refuse("another kind of activity");
    }
    if let (NodeKind::SubProcess(x), NodeKind::SubProcess(y)) = (&from.kind, &to.kind) {
        if x != y {
            return refuse("an event sub-process and an embedded one");
        }
        let start = |p: &Process, n: &FlowNode| {
            let st = p.start_events_in(Some(p.node_idx(&n.id)?)).next()?;
            match &p.node(st).kind {
                NodeKind::StartEvent(s) => Some((s.interrupting, std::mem::discriminant(&s.trigger))),
                _ => None,
            }
        };
        if x.triggered_by_event && start(source, from) != start(target, to) {
            return refuse("their start events differ (interrupting or not, or the kind of event)");
        }
    }
    if let NodeKind::IntermediateCatchEvent(c) = &to.kind
        && !matches!(
            c.trigger,
            EventTrigger::Timer(_) | EventTrigger::Message(_) | EventTrigger::Signal(_) | EventTrigger::Conditional(_)
        )
    {
        return refuse("the target waits for nothing it can be armed with");
    }
    Ok(())
}

fn invalid(element: &str, message: String) -> ProcessError {
    ProcessError::at(ErrorKind::Invalid, element, message)
}
