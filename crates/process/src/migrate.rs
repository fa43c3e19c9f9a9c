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

use std::collections::BTreeMap;

use kairos_bpmn::{EventTrigger, FlowNode, Implementation, NodeKind, Process};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::state::Instance;

/// A checked migration: where every active activity goes, and what the source's timers were
/// (a timer unchanged in the target keeps its due date).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// Source activity id → target activity id, for every activity of the source that a token
    /// of the instance is at (or inside), and every mapping the caller gave.
    pub map: BTreeMap<String, String>,
    /// Source timer event id → its timer text, for every timer event of the source.
    pub source_timers: BTreeMap<String, String>,
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
        if source.node_by_id(from).is_none() {
            return Err(invalid(
                from,
                format!("fromActivityId '{from}' is not an activity of the instance's definition"),
            ));
        }
        if target.node_by_id(to).is_none() {
            return Err(invalid(to, format!("toActivityId '{to}' is not an activity of the target definition")));
        }
        if map.insert(from.clone(), to.clone()).is_some() {
            return Err(invalid(from, format!("fromActivityId '{from}' is mapped twice")));
        }
    }
    let mut migration = Migration { map, source_timers: BTreeMap::new() };
    for n in &source.nodes {
        if let Some(EventTrigger::Timer(t)) = n.kind.trigger() {
            migration.source_timers.insert(n.id.clone(), t.text.clone());
        }
    }
    // Boundary events' waits are re-armed from the target; the activities tokens are at move.
    let active: Vec<&str> =
        inst.executions.iter().filter(|e| !e.is_event_scope).filter_map(|e| e.activity.as_deref()).collect();
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
        compatible(from, to)?;
        let scope_of = |p: &Process, n: &FlowNode| n.scope.map(|s| p.node(s).id.clone());
        let want = scope_of(source, from).map(|s| migration.target_of(&s).to_string());
        if scope_of(target, to) != want {
            let there = want.map_or("the process".to_string(), |s| format!("sub-process '{s}'"));
            return Err(invalid(
                a,
                format!(
                    "activity '{a}' would move to '{to_id}', which is not in {there}: a token cannot leave its scope"
                ),
            ));
        }
        migration.map.insert(a.to_string(), to_id);
    }
    Ok(migration)
}

/// A token at `from` can wait at `to`: the same kind of element, both multi-instance or
/// neither; a waiting service task is an external one on both sides.
fn compatible(from: &FlowNode, to: &FlowNode) -> Result<()> {
    let refuse = |why: &str| {
        Err(invalid(
            &from.id,
            format!("activity '{}' ({}) cannot move to '{}' ({}): {why}", from.id, from.element, to.id, to.element),
        ))
    };
    if from.element != to.element {
        return refuse("another kind of element");
    }
    if from.multi_instance.is_some() != to.multi_instance.is_some() {
        return refuse("one is multi-instance, the other not");
    }
    let external = |n: &FlowNode| matches!(&n.kind, NodeKind::ServiceTask(s) if matches!(s.implementation, Implementation::External { .. }));
    if external(from) != external(to) {
        return refuse("one is done by external workers, the other not");
    }
    if std::mem::discriminant(&from.kind) != std::mem::discriminant(&to.kind) {
        return refuse("another kind of activity");
    }
    if let (NodeKind::SubProcess(x), NodeKind::SubProcess(y)) = (&from.kind, &to.kind)
        && x != y
    {
        return refuse("an event sub-process and an embedded one");
    }
    Ok(())
}

fn invalid(element: &str, message: String) -> ProcessError {
    ProcessError::at(ErrorKind::Invalid, element, message)
}
