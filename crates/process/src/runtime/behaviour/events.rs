//! Event behaviour: throw events (signal, escalation, link), end events (none, terminate,
//! error, signal, escalation), catch events, and conditional events checked after each round
//! of the agenda.

use crate::error::Result;
use crate::runtime::Runtime;
use crate::runtime::agenda::Op;
use crate::state::*;
use kairos_bpmn::EventTrigger;

impl Runtime<'_> {
    /// A signal thrown inside the instance reaches the instance's own signal waits.
    pub(crate) fn broadcast_in_instance(&mut self, name: &str) -> Result<()> {
        let subs: Vec<Subscription> = self
            .inst
            .subscriptions
            .iter()
            .filter(|s| s.event_type == "signal" && s.event_name == name)
            .cloned()
            .collect();
        for s in subs {
            if self.inst.subscriptions.iter().any(|x| x.id == s.id) {
                self.fire(&s.execution_id, &s.activity_id, Some(&s.id))?;
            }
        }
        Ok(())
    }

    /// Terminate end event: every token of the scope ends, then the scope completes.
    pub(crate) fn terminate_scope(&mut self, exec: &str, at: &str) -> Result<()> {
        let scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_default();
        let reason = format!("terminated by {at}");
        self.remove_children(&scope, Some(&reason));
        self.agenda.retain(|op| match op {
            Op::Enter { exec, .. } | Op::Leave { exec, .. } | Op::End { exec } => {
                self.inst.executions.iter().any(|e| &e.id == exec)
            }
        });
        if scope == self.inst.id {
            self.end_instance(Some(at.to_string()), None);
        } else {
            let node = self.node_of(&scope)?;
            self.agenda.push_back(Op::Leave { exec: scope, node, skip_async: false });
        }
        Ok(())
    }

    /// Checks the conditional events (SPEC-wise BPMN 2.0 §10.5.2): those armed since the last
    /// check, and — when variables changed — every other one (but one naming a
    /// `camunda:variableName` only when that variable changed). A true condition fires its
    /// event. True when something fired (the agenda has work again).
    pub(crate) fn check_conditions(&mut self) -> Result<bool> {
        let changed = std::mem::take(&mut self.changed);
        let fresh = std::mem::take(&mut self.fresh_conditions);
        if changed.is_empty() && fresh.is_empty() {
            return Ok(false);
        }
        let subs: Vec<Subscription> =
            self.inst.subscriptions.iter().filter(|s| s.event_type == "conditional").cloned().collect();
        let mut fired = false;
        for s in subs {
            if !self.inst.subscriptions.iter().any(|x| x.id == s.id) {
                continue; // gone with an event that fired before it
            }
            let Some(EventTrigger::Conditional(c)) =
                self.env.process.node_by_id(&s.activity_id).and_then(|n| n.kind.trigger()).cloned()
            else {
                continue;
            };
            let relevant = fresh.contains(&s.id)
                || (!changed.is_empty() && c.variable_name.as_ref().is_none_or(|v| changed.contains(v)));
            if !relevant {
                continue;
            }
            // Edge-triggered (BPMN 2.0 §10.5.2: "when the condition becomes true"): a
            // non-interrupting event that stays true does not fire again on every change.
            let (was, now) =
                (s.event_name == "true", self.event_condition(&s.execution_id, &s.activity_id, &c.condition)?);
            if now && !was {
                self.fire(&s.execution_id, &s.activity_id, Some(&s.id))?;
                fired = true;
            }
            if now != was {
                let new_id = (self.env.ids)();
                if let Some(kept) = self.inst.subscriptions.iter_mut().find(|x| x.id == s.id) {
                    // Subscriptions are written as inserts and deletes: a new row for the new value.
                    kept.id = new_id;
                    kept.event_name = now.to_string();
                }
            }
        }
        Ok(fired || !self.agenda.is_empty())
    }
}
