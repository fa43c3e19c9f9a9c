//! The validated process model: what the engine walks.
//!
//! Each [`Process`] keeps its flow nodes and sequence flows in two arenas
//! (`Vec`s) and links them by index ([`NodeIdx`], [`FlowIdx`]): the engine
//! moves a token along `outgoing` → `target` without string look-ups or
//! reference counting, and the model can be shared read-only between threads.
//! Ids stay available for everything that talks to people or tables
//! (`ACT_ID_`, `ELEMENT_ID_`), with look-ups by id in both directions.
//!
//! A model only exists when the document had no problem at all, so every
//! index in it is valid and every reference (flow ends, `attachedToRef`,
//! `default`, `messageRef`, …) has been resolved and checked.

mod bind;
mod diagram;
mod kind;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

pub use diagram::{Bounds, Diagram, Point};
pub use kind::*;

/// Index of a flow node in [`Process::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct NodeIdx(pub(crate) u32);

/// Index of a sequence flow in [`Process::flows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct FlowIdx(pub(crate) u32);

impl NodeIdx {
    /// Position in [`Process::nodes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl FlowIdx {
    /// Position in [`Process::flows`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A parsed `<definitions>` document: its executable processes and the
/// messages, signals and errors they refer to.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Definitions {
    /// `id` of `<definitions>`.
    pub id: Option<String>,
    /// `targetNamespace` (Activiti stores it as the definition's category).
    pub target_namespace: Option<String>,
    /// `exporter` / `exporterVersion`, to tell which modeler wrote the file.
    pub exporter: Option<String>,
    /// See `exporter`.
    pub exporter_version: Option<String>,
    /// Executable processes, in document order. Never empty.
    pub processes: Vec<Process>,
    /// Ids of processes marked `isExecutable="false"`: kept out of the model
    /// (often a partner's pool drawn for context) and not validated.
    pub skipped_processes: Vec<String>,
    /// Declared `<message>`s by id.
    pub messages: BTreeMap<String, Message>,
    /// Declared `<signal>`s by id.
    pub signals: BTreeMap<String, Signal>,
    /// Declared `<error>`s by id.
    pub errors: BTreeMap<String, ErrorDefinition>,
    /// Shapes and edges of the diagram, for drawing; empty when absent.
    pub diagram: Diagram,
}

impl Definitions {
    /// The executable process with this id (the definition key).
    pub fn process(&self, id: &str) -> Option<&Process> {
        self.processes.iter().find(|p| p.id == id)
    }
}

/// A `<message>` declaration. Messages are correlated by `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Message {
    pub id: String,
    pub name: Option<String>,
}

/// A `<signal>` declaration. Signals are broadcast by `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Signal {
    pub id: String,
    pub name: Option<String>,
}

/// An `<error>` declaration; `code` is what error end events throw and error
/// boundary events catch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ErrorDefinition {
    pub id: String,
    pub name: Option<String>,
    /// `errorCode`; when absent the id is used as the code, as Activiti does.
    pub code: String,
}

/// One executable `<process>`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Process {
    /// The process id: the definition key (`ACT_RE_PROCDEF.KEY_`).
    pub id: String,
    pub name: Option<String>,
    /// `*:historyTimeToLive`: how long finished instances keep their history
    /// (SPEC P11), when the model says.
    pub history_time_to_live: Option<HistoryTimeToLive>,
    /// Every flow node of the process and its sub-processes.
    pub nodes: Vec<FlowNode>,
    /// Every sequence flow of the process and its sub-processes.
    pub flows: Vec<SequenceFlow>,
    /// Start events of the process scope itself (none, timer, message,
    /// signal), not those of sub-processes or event sub-processes.
    pub start_events: Vec<NodeIdx>,
    /// The process's own `*:executionListener`s (start, end).
    pub listeners: Vec<Listener>,
    /// Line of the `<process>` element.
    pub line: u32,
    #[serde(skip)]
    pub(crate) node_ids: HashMap<String, NodeIdx>,
    #[serde(skip)]
    pub(crate) flow_ids: HashMap<String, FlowIdx>,
    /// Nodes directly inside each scope, so that entering a scope does not
    /// scan the whole arena.
    #[serde(skip)]
    pub(crate) scope_children: HashMap<Option<NodeIdx>, Vec<NodeIdx>>,
}

impl Process {
    /// Every script of the process (script tasks, script conditions, parameter scripts), with
    /// the id of the element that holds it.
    pub fn scripts(&self) -> Vec<(&str, &Script)> {
        fn io_scripts<'a>(v: &'a IoValue, out: &mut Vec<&'a Script>) {
            match v {
                IoValue::Script(s) => out.push(s),
                IoValue::List(items) => items.iter().for_each(|i| io_scripts(i, out)),
                IoValue::Map(entries) => entries.iter().for_each(|(_, e)| io_scripts(e, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        for n in &self.nodes {
            let mut here = Vec::new();
            if let NodeKind::ScriptTask(t) = &n.kind {
                here.push(&t.script);
            }
            for p in n.io.iter().flat_map(|io| io.inputs.iter().chain(&io.outputs)) {
                io_scripts(&p.value, &mut here);
            }
            found.extend(here.into_iter().map(|s| (n.id.as_str(), s)));
        }
        for f in &self.flows {
            if let Some(Condition::Script(s)) = &f.condition {
                found.push((f.id.as_str(), s));
            }
        }
        found
    }

    /// The node at `idx`. Indices come from this process' own model, so this
    /// panics only when handed an index of another process.
    pub fn node(&self, idx: NodeIdx) -> &FlowNode {
        &self.nodes[idx.index()]
    }

    /// The flow at `idx` (same contract as [`node`](Self::node)).
    pub fn flow(&self, idx: FlowIdx) -> &SequenceFlow {
        &self.flows[idx.index()]
    }

    /// Index of the node with this id (`ACT_ID_` → node).
    pub fn node_idx(&self, id: &str) -> Option<NodeIdx> {
        self.node_ids.get(id).copied()
    }

    /// The node with this id.
    pub fn node_by_id(&self, id: &str) -> Option<&FlowNode> {
        self.node_idx(id).map(|i| self.node(i))
    }

    /// Index of the flow with this id.
    pub fn flow_idx(&self, id: &str) -> Option<FlowIdx> {
        self.flow_ids.get(id).copied()
    }

    /// The flow with this id.
    pub fn flow_by_id(&self, id: &str) -> Option<&SequenceFlow> {
        self.flow_idx(id).map(|i| self.flow(i))
    }

    /// All nodes with their indices.
    pub fn iter_nodes(&self) -> impl Iterator<Item = (NodeIdx, &FlowNode)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeIdx(i as u32), n))
    }

    /// The nodes directly inside `scope` (`None`: the process itself).
    pub fn children(&self, scope: Option<NodeIdx>) -> impl Iterator<Item = NodeIdx> + '_ {
        self.scope_children.get(&scope).into_iter().flatten().copied()
    }

    /// Start events directly inside `scope`: for the process those of
    /// [`start_events`](Self::start_events), for an embedded sub-process its
    /// none start, for an event sub-process its triggered start.
    pub fn start_events_in(&self, scope: Option<NodeIdx>) -> impl Iterator<Item = NodeIdx> + '_ {
        self.children(scope).filter(|&i| matches!(self.node(i).kind, NodeKind::StartEvent(_)))
    }

    /// Event sub-processes directly inside `scope`: their start events are
    /// subscribed while the scope is active.
    pub fn event_sub_processes_in(&self, scope: Option<NodeIdx>) -> impl Iterator<Item = NodeIdx> + '_ {
        self.children(scope)
            .filter(|&i| matches!(self.node(i).kind, NodeKind::SubProcess(SubProcess { triggered_by_event: true, .. })))
    }
}

impl Process {
    /// The compensation event sub-process directly inside the embedded sub-process `scope`
    /// (one whose start event has a `compensateEventDefinition`), if it has one.
    pub fn compensation_event_sub_process(&self, scope: NodeIdx) -> Option<NodeIdx> {
        self.event_sub_processes_in(Some(scope)).find(|&esp| {
            self.start_events_in(Some(esp))
                .any(|s| matches!(self.node(s).kind.trigger(), Some(EventTrigger::Compensate)))
        })
    }
}

/// How long history is kept: Camunda writes whole days (`180`) or an ISO 8601
/// duration (`P180D`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum HistoryTimeToLive {
    Days(u32),
    Duration(#[serde(serialize_with = "kind::display")] kairos_time::IsoDuration),
}

/// One flow node: an event, activity or gateway.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct FlowNode {
    /// The element id (`ACT_ID_`).
    pub id: String,
    pub name: Option<String>,
    /// The BPMN tag it was read from (`userTask`, `sendTask`, `task`…): the
    /// history's activity type, and what messages about it say.
    pub element: &'static str,
    pub kind: NodeKind,
    /// The sub-process this node sits in; `None` for the process itself.
    pub scope: Option<NodeIdx>,
    /// Sequence flows arriving here, in document order.
    pub incoming: Vec<FlowIdx>,
    /// Sequence flows leaving here, in document order (the order in which an
    /// exclusive gateway tries their conditions).
    pub outgoing: Vec<FlowIdx>,
    /// Boundary events attached to this activity.
    pub boundary_events: Vec<NodeIdx>,
    /// The `default` flow of an exclusive/inclusive gateway or an activity
    /// with conditional outgoing flows: taken when no condition holds.
    pub default_flow: Option<FlowIdx>,
    /// `*:async` / `*:asyncBefore`: commit and continue in a job before the node runs.
    pub async_before: bool,
    /// `*:asyncAfter`: commit and continue in a job after the node completes.
    pub async_after: bool,
    /// `*:exclusive` (default true): this node's jobs are exclusive per instance (SPEC J5).
    pub exclusive: bool,
    /// `failedJobRetryTimeCycle` for this node's jobs (`R5/PT10M`, `PT1M,PT5M`),
    /// already checked with `kairos_time::RetryCycle` unless it is an expression.
    pub retry_time_cycle: Option<String>,
    /// `multiInstanceLoopCharacteristics`, when the activity runs several times.
    pub multi_instance: Option<MultiInstance>,
    /// `standardLoopCharacteristics`, when the activity runs again while a condition holds.
    pub standard_loop: Option<StandardLoop>,
    /// `camunda:inputOutput` of an activity.
    pub io: Option<IoMapping>,
    /// `isForCompensation="true"`: a compensation handler, entered only by a compensation
    /// throw (it has no sequence flows).
    pub for_compensation: bool,
    /// The compensation handler of this activity: the `isForCompensation` activity the
    /// `association` of its compensation boundary event points to.
    pub compensation_handler: Option<NodeIdx>,
    /// `*:executionListener`s (start, end) and, on a user task, `*:taskListener`s, in
    /// document order.
    pub listeners: Vec<Listener>,
    /// 1-based line of the element.
    pub line: u32,
    /// 1-based column of the element.
    pub column: u32,
}

/// A sequence flow's condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Condition {
    /// An expression of the expression language (`${amount > 1000}`).
    Expression(String),
    /// A script (`<conditionExpression language="javascript">`) whose value must be a boolean.
    Script(Script),
}

/// A `<sequenceFlow>`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SequenceFlow {
    pub id: String,
    pub name: Option<String>,
    pub source: NodeIdx,
    pub target: NodeIdx,
    /// The `conditionExpression`: an expression (trimmed, e.g. `${amount > 1000}`) or a script.
    /// Only flows leaving exclusive, inclusive and complex gateways and activities have one.
    /// On a gateway's default flow it is ignored: the default is taken exactly
    /// when no other flow's condition holds.
    pub condition: Option<Condition>,
    /// `*:executionListener`s run when the flow is taken.
    pub listeners: Vec<Listener>,
    /// The sub-process the flow sits in; `None` for the process itself.
    pub scope: Option<NodeIdx>,
    pub line: u32,
    pub column: u32,
}
