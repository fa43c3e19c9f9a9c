//! Boundary events: each is an event-scope execution under the activity's execution holding
//! its timer job or subscription while the activity runs; interrupting ones cancel the
//! activity when they fire, others start a token beside it.

use kairos_bpmn::{EventTrigger, FlowNode, NodeIdx};

use crate::error::Result;
use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    /// Creates the event-scope executions of `n`'s boundary events under `exec`.
    pub(crate) fn arm_boundary_events(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        for &b in &n.boundary_events {
            let bn = self.node(b).clone();
            let Some(trigger) = bn.kind.trigger().cloned() else { continue };
            if matches!(
                trigger,
                EventTrigger::Error(_) | EventTrigger::Escalation(_) | EventTrigger::Compensate | EventTrigger::Cancel
            ) {
                continue; // errors and escalations are looked up when thrown; a compensation's
                // handler is kept when the activity completes
            }
            let es = (self.env.ids)();
            self.inst.executions.push(Execution {
                id: es.clone(),
                rev: 0,
                parent_id: Some(exec.to_string()),
                super_exec: None,
                activity: Some(bn.id.clone()),
                is_active: false,
                is_concurrent: false,
                is_scope: false,
                is_event_scope: true,
                is_mi_root: false,
                start_time: self.env.now,
                suspension_state: self.inst.suspension_state,
            });
            self.arm_trigger(&es, &bn, &trigger)?;
        }
        Ok(())
    }

    /// Removes the boundary waits of `exec` (it left its activity).
    pub(crate) fn disarm_boundary_events(&mut self, exec: &str) {
        let scopes: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(exec) && e.is_event_scope)
            .map(|e| e.id.clone())
            .collect();
        for es in scopes {
            self.remove_execution_tree(&es, None);
        }
    }

    /// Boundary event `n` of the activity `event_scope` hangs under fired: an interrupting one
    /// cancels the activity, which leaves by the event; another starts a token beside it.
    pub(crate) fn boundary_event_fired(
        &mut self,
        event_scope: &Execution,
        node: NodeIdx,
        n: &FlowNode,
        interrupting: bool,
        subscription: Option<&str>,
    ) {
        let activity_exec = event_scope.parent_id.clone().unwrap_or_default();
        if interrupting {
            self.cancel_activity(&activity_exec, &format!("boundary event {}", n.id));
            self.open_record(&activity_exec, n, None);
            self.push_leave(&activity_exec, node);
        } else {
            let scope = self.inst.execution(&activity_exec).and_then(|a| a.parent_id.clone()).unwrap_or_default();
            let token = self.new_token(&scope, node);
            self.open_record(&token, n, None);
            self.push_leave(&token, node);
            // A one-shot trigger of a non-interrupting boundary is used up; cycles re-arm.
            if let Some(sub) = subscription {
                // Signals and conditions can come again; a message or a timer is used up.
                let keep = n
                    .kind
                    .trigger()
                    .is_some_and(|t| matches!(t, EventTrigger::Signal(_) | EventTrigger::Conditional(_)));
                if !keep {
                    self.inst.subscriptions.retain(|s| s.id != sub);
                }
            }
        }
    }
}
