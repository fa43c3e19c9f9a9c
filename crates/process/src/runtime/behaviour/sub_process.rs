//! Scopes: embedded sub-processes (a scope execution holding the inner tokens) and event
//! sub-processes (start events armed while their scope is active; an interrupting one ends
//! what the scope does first).

use kairos_bpmn::{EventTrigger, FlowNode, NodeIdx, NodeKind};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::EventType;

impl Runtime<'_> {
    /// An embedded sub-process: its token becomes a scope execution, its event sub-processes
    /// listen, and an inner token starts at its none start event.
    pub(crate) fn enter_sub_process(&mut self, exec: &str, node: NodeIdx, n: &FlowNode) -> Result<()> {
        let start = self
            .env
            .process
            .start_events_in(Some(node))
            .find(|&s| matches!(self.node(s).kind.trigger(), Some(EventTrigger::None)))
            .ok_or_else(|| {
                ProcessError::at(ErrorKind::Model, &n.id, format!("sub-process '{}' has no none start event", n.id))
            })?;
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_scope = true;
        }
        self.arm_event_sub_processes(exec, Some(node))?;
        let inner = self.new_token(exec, start);
        self.push_enter(inner, start, false);
        Ok(())
    }

    /// The sub-process scope `exec` ends: its event sub-processes stop listening.
    pub(crate) fn end_sub_process_scope(&mut self, exec: &str) {
        self.inst.jobs.retain(|j| j.execution_id != exec);
        self.inst.subscriptions.retain(|s| s.execution_id != exec);
    }

    /// Arms the start events of the event sub-processes directly in `scope_node` (the process
    /// when `None`), held by the scope execution `scope`: they listen while the scope is active.
    pub(crate) fn arm_event_sub_processes(&mut self, scope: &str, scope_node: Option<NodeIdx>) -> Result<()> {
        let esps: Vec<NodeIdx> = self.env.process.event_sub_processes_in(scope_node).collect();
        for esp in esps {
            let starts: Vec<NodeIdx> = self.env.process.start_events_in(Some(esp)).collect();
            for st in starts {
                let sn = self.node(st).clone();
                let thrown = |t: &EventTrigger| matches!(t, EventTrigger::Error(_) | EventTrigger::Escalation(_));
                if let Some(trigger) = sn.kind.trigger().cloned().filter(|t| !thrown(t)) {
                    self.arm_trigger(scope, &sn, &trigger)?;
                }
            }
        }
        Ok(())
    }

    /// An event sub-process of scope execution `scope` starts at `start`: interrupting ones end
    /// everything else the scope does first (and its other event sub-processes stop listening).
    pub(crate) fn start_event_sub_process(
        &mut self,
        scope: &str,
        esp: NodeIdx,
        start: NodeIdx,
        interrupting: bool,
    ) -> Result<()> {
        let esp_id = self.node(esp).id.clone();
        if interrupting {
            let reason = format!("interrupted by event sub-process {esp_id}");
            // What the scope completed stays compensable: an error event sub-process that
            // compensates is the usual way to undo a failed sub-process.
            self.remove_children_but_compensations(scope, &reason);
            self.inst.jobs.retain(|j| j.execution_id != scope);
            self.inst.subscriptions.retain(|s| s.execution_id != scope || s.event_type == EventType::Compensate);
            self.prune_agenda();
        }
        // The event sub-process runs as a scope token of `scope` (not in history itself: its
        // start event and activities are).
        let token = self.new_token(scope, esp);
        if let Some(e) = self.inst.execution_mut(&token) {
            e.is_scope = true;
        }
        let inner = self.new_token(&token, start);
        self.push_enter(inner, start, true);
        Ok(())
    }

    /// True when an interrupting event sub-process runs in `scope`: the scope's event
    /// sub-processes stopped listening when it started.
    pub(crate) fn interrupted_by_event_sub_process(&self, scope: &str) -> bool {
        self.inst.children(scope).iter().any(|c| {
            let Some(esp) = c.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { return false };
            matches!(&self.node(esp).kind, NodeKind::SubProcess(sp) if sp.triggered_by_event)
                && self
                    .env
                    .process
                    .start_events_in(Some(esp))
                    .any(|st| matches!(&self.node(st).kind, NodeKind::StartEvent(s) if s.interrupting))
        })
    }
}
