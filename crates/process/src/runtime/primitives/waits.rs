//! Waits: the timer jobs and event subscriptions an execution holds while it waits for a
//! timer, a message, a signal or a condition, and the jobs of async continuations and
//! external workers.

use jiff::Timestamp;
use kairos_bpmn::{EventTrigger, FlowNode, NodeKind, TimerKind, TimerValue};
use serde_json::Value as Json;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    /// A timer job or a subscription for `target`'s trigger, held by `exec`.
    pub(crate) fn arm_trigger(&mut self, exec: &str, target: &FlowNode, trigger: &EventTrigger) -> Result<()> {
        match trigger {
            EventTrigger::Timer(t) => {
                let (due, repeat) = self.timer_due(exec, target, t)?;
                self.add_job(exec, target, JobKind::Timer, Some(due), repeat);
            }
            EventTrigger::Message(m) => self.subscribe(exec, EventType::Message, &m.name, &target.id),
            EventTrigger::Signal(s) => self.subscribe(exec, EventType::Signal, &s.name, &target.id),
            EventTrigger::Conditional(_) => {
                // EVENT_NAME_ holds the condition's value at the last check: "false" until true.
                self.subscribe(exec, EventType::Conditional, "false", &target.id);
                if let Some(s) = self.inst.subscriptions.last() {
                    self.fresh_conditions.push(s.id.clone());
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// When a timer is first due, and its REPEAT_ for cycles.
    pub(crate) fn timer_due(
        &mut self,
        exec: &str,
        n: &FlowNode,
        t: &kairos_bpmn::Timer,
    ) -> Result<(Timestamp, Option<String>)> {
        let now = self.env.now;
        let bad =
            |e: &dyn std::fmt::Display| ProcessError::at(ErrorKind::Model, &n.id, format!("timer of '{}': {e}", n.id));
        let value = match &t.value {
            TimerValue::Expression(text) => {
                let v = self.eval(exec, &n.id, text)?;
                let s = match v {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                match t.kind {
                    TimerKind::Date => TimerValue::Date(kairos_time::parse_instant(&s).map_err(|e| bad(&e))?),
                    TimerKind::Duration => {
                        TimerValue::Duration(kairos_time::IsoDuration::parse_delay(&s).map_err(|e| bad(&e))?)
                    }
                    TimerKind::Cycle if kairos_cron::looks_like_cron(&s) => TimerValue::Cron(
                        kairos_cron::CronExpr::parse(&s).map_err(|e| bad(&format!("cron {e}")))?.to_string(),
                    ),
                    TimerKind::Cycle => TimerValue::Cycle(kairos_time::RepeatCycle::parse(&s).map_err(|e| bad(&e))?),
                }
            }
            other => other.clone(),
        };
        match value {
            TimerValue::Date(at) => Ok((at, None)),
            TimerValue::Duration(d) => Ok((d.add_to(now).map_err(|e| bad(&e))?, None)),
            TimerValue::Cycle(c) => {
                let due = c.first_due(now).map_err(|e| bad(&e))?.ok_or_else(|| bad(&"the cycle has no fire left"))?;
                Ok((due, Some(c.to_string())))
            }
            // Evaluated in UTC; REPEAT_ keeps the expression, and the job engine moves the timer
            // to its next fire time after each one (kairos_core::Repeat).
            TimerValue::Cron(expr) => {
                let cron = kairos_cron::CronExpr::parse(&expr).map_err(|e| bad(&format!("cron {e}")))?;
                let due = cron
                    .next_after(now, &jiff::tz::TimeZone::UTC)
                    .ok_or_else(|| bad(&format!("cron '{expr}' never fires after {now}")))?;
                Ok((due, Some(cron.to_string())))
            }
            _ => Err(bad(&"unsupported timer value")),
        }
    }

    pub(crate) fn subscribe(&mut self, exec: &str, event_type: EventType, name: &str, activity: &str) {
        let id = (self.env.ids)();
        self.inst.subscriptions.push(Subscription {
            id,
            event_type,
            event_name: name.into(),
            execution_id: exec.into(),
            activity_id: activity.into(),
            created: self.env.now,
        });
    }

    pub(crate) fn add_job(
        &mut self,
        exec: &str,
        n: &FlowNode,
        kind: JobKind,
        due: Option<Timestamp>,
        repeat: Option<String>,
    ) {
        let id = (self.env.ids)();
        self.inst.jobs.push(ProcessJob {
            id,
            kind,
            execution_id: exec.into(),
            activity_id: n.id.clone(),
            due,
            repeat,
            exclusive: n.exclusive,
            retry_cycle: n.retry_time_cycle.clone(),
            topic: None,
        });
    }

    /// Arms what a token at an event-based gateway waits for: the timers and subscriptions of
    /// the catch events and receive tasks its flows lead to (the first to fire wins).
    pub(crate) fn arm_waits(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        match &n.kind {
            NodeKind::EventBasedGateway => {
                for &f in &n.outgoing {
                    let target = self.node(self.flow_target(f)).clone();
                    let trigger = match &target.kind {
                        NodeKind::IntermediateCatchEvent(c) => c.trigger.clone(),
                        NodeKind::ReceiveTask(r) => match &r.message {
                            Some(m) => EventTrigger::Message(m.clone()),
                            None => continue,
                        },
                        _ => continue,
                    };
                    self.arm_trigger(exec, &target, &trigger)?;
                }
            }
            NodeKind::IntermediateCatchEvent(c) => self.arm_trigger(exec, n, &c.trigger.clone())?,
            NodeKind::ReceiveTask(r) => {
                if let Some(m) = &r.message {
                    self.subscribe(exec, EventType::Message, &m.name.clone(), &n.id);
                }
            }
            _ => {}
        }
        Ok(())
    }
}
