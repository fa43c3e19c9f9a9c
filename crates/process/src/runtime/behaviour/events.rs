//! Event behaviour: throw events (signal, escalation, link), end events (none, terminate,
//! error, signal, escalation), catch events, and conditional events checked after each round
//! of the agenda.

use kairos_bpmn::{EndEvent, EventTrigger, FlowNode, NodeIdx, ThrowEvent};

use crate::error::Result;
use crate::runtime::Runtime;
use crate::runtime::agenda::Op;
use crate::state::*;

impl Runtime<'_> {
    /// An intermediate throw event: its signal reaches the instance's own waits at once (and
    /// every other instance's after the commit), its escalation whoever catches it; then the
    /// token goes on (a link's to its catching event, see `leave`).
    pub(crate) fn enter_throw_event(&mut self, exec: &str, node: NodeIdx, t: &ThrowEvent) -> Result<()> {
        if let Some(signal) = &t.signal {
            self.broadcast_in_instance(&signal.name.clone())?;
            self.inst.thrown_signals.push(signal.name.clone());
        }
        if let Some(escalation) = &t.escalation {
            self.throw_escalation(exec, escalation.code.as_deref())?;
        }
        // An interrupting catch of its escalation ended this token.
        if self.inst.execution(exec).is_some() {
            self.push_leave(exec, node);
        }
        Ok(())
    }

    /// An end event: the token ends, after what the event throws.
    pub(crate) fn enter_end_event(&mut self, exec: &str, n: &FlowNode, end: &EndEvent) -> Result<()> {
        self.close_record(exec, &n.id, None);
        match end {
            EndEvent::None => self.push_end(exec),
            EndEvent::Terminate => self.terminate_scope(exec, &n.id)?,
            EndEvent::Error(err) => {
                let code = err.code.clone().unwrap_or_default();
                self.throw_error(exec, &n.id, &code)?;
            }
            EndEvent::Signal(signal) => {
                self.broadcast_in_instance(&signal.name.clone())?;
                self.inst.thrown_signals.push(signal.name.clone());
                self.push_end(exec);
            }
            EndEvent::Escalation(escalation) => {
                self.throw_escalation(exec, escalation.code.as_deref())?;
                if self.inst.execution(exec).is_some() {
                    self.push_end(exec);
                }
            }
            _ => self.push_end(exec),
        }
        Ok(())
    }

    /// An intermediate catch event (not a link): the token waits for its trigger.
    pub(crate) fn enter_catch_event(&mut self, exec: &str, n: &FlowNode, trigger: &EventTrigger) -> Result<()> {
        self.arm_trigger(exec, n, trigger)?;
        self.wait(exec);
        Ok(())
    }

    /// The trigger a token waited for at its catch event or receive task came: a one-shot timer
    /// is used up (a cycle's job stays, the job engine moves it on), and the token goes on.
    pub(crate) fn catch_event_fired(&mut self, exec: &str, activity: &str) {
        self.inst.jobs.retain(|j| !(j.execution_id == exec && j.activity_id == activity && j.repeat.is_none()));
        if let Some(x) = self.inst.execution_mut(exec) {
            x.is_active = true;
        }
    }

    /// A signal thrown inside the instance reaches the instance's own signal waits.
    pub(crate) fn broadcast_in_instance(&mut self, name: &str) -> Result<()> {
        let subs: Vec<Subscription> = self
            .inst
            .subscriptions
            .iter()
            .filter(|s| s.event_type == EventType::Signal && s.event_name == name)
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
        self.remove_children_but_compensations(&scope, &reason);
        self.prune_agenda();
        if scope == self.inst.id {
            // After the delete listeners of the tasks it cancelled.
            self.agenda.push_front(Op::EndProcess { activity: Some(at.to_string()), reason: None });
        } else {
            let node = self.node_of(&scope)?;
            self.push_leave(&scope, node);
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
            self.inst.subscriptions.iter().filter(|s| s.event_type == EventType::Conditional).cloned().collect();
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
            let (was, now) = (
                s.event_name == "true",
                match &c.script {
                    Some(script) => self.script_condition(&s.execution_id, &s.activity_id, script)?,
                    None => self.event_condition(&s.execution_id, &s.activity_id, &c.condition)?,
                },
            );
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
