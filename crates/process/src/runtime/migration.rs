//! Migration of a running instance to another definition version (SPEC P13), an entry point
//! beside the commands: it moves tokens and history along a checked mapping and re-arms every
//! wait from the target model.

use std::collections::{BTreeMap, BTreeSet};

use kairos_bpmn::{EventTrigger, Implementation, NodeKind};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::migrate::Migration;
use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    /// Moves the instance to the definition this runtime was made with (SPEC P13), along a
    /// checked [`Migration`]: every token and open history record moves to its target
    /// activity, tasks take the target's key and name, async and external jobs follow their
    /// activity. Waits are re-armed from the target model — boundary events, event
    /// sub-processes, catch events, event-based gateways — so a message or signal renamed in
    /// the new version is listened for under its new name; a timer that is the same in both
    /// (same id after mapping, same text) keeps its due date instead of starting over.
    pub fn migrate(&mut self, migration: &Migration, definition_id: &str, definition_key: &str) -> Result<()> {
        if !self.inst.is_running() {
            return Err(ProcessError::new(ErrorKind::NotFound, format!("process instance {} has ended", self.inst.id)));
        }
        self.inst.definition_id = definition_id.to_string();
        self.inst.definition_key = definition_key.to_string();
        // The due dates (and cycles) of timers that stay the same, by (the execution holding the
        // wait, or for a boundary event the activity's execution; the target event's id).
        let mut dues = BTreeMap::new();
        // Which waits were live, by the same key (a used-up one is not armed again), and when
        // each subscription was made (same-named waits are served in that order).
        let mut live = BTreeSet::new();
        let mut created = BTreeMap::new();
        for s in &self.inst.subscriptions {
            let key = (self.wait_anchor(&s.execution_id), migration.target_of(&s.activity_id).to_string());
            created.insert((key.0.clone(), key.1.clone(), s.event_type), (s.created, s.event_name.clone()));
            live.insert(key);
        }
        for j in self.inst.jobs.iter().filter(|j| j.kind == JobKind::Timer) {
            let anchor = self.wait_anchor(&j.execution_id);
            live.insert((anchor.clone(), migration.target_of(&j.activity_id).to_string()));
            let to = migration.target_of(&j.activity_id);
            let same = match (migration.source_timers.get(&j.activity_id), self.env.process.node_by_id(to)) {
                (Some(text), Some(n)) => matches!(n.kind.trigger(), Some(EventTrigger::Timer(t)) if &t.text == text),
                _ => false,
            };
            if let (true, Some(due)) = (same, j.due) {
                dues.insert((anchor, to.to_string()), (due, j.repeat.clone()));
            }
        }
        // Every wait goes; async continuations and external tasks follow their activity.
        // Compensations stay (with their activities mapped): they are what completed, not waits.
        let event_scopes: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.is_event_scope && !self.is_compensation_snapshot(e))
            .map(|e| e.id.clone())
            .collect();
        for es in event_scopes {
            self.remove_execution_tree(&es, None);
        }
        self.inst.jobs.retain(|j| j.kind != JobKind::Timer);
        self.inst.subscriptions.retain(|s| s.event_type == EventType::Compensate);
        for s in &mut self.inst.subscriptions {
            s.activity_id = migration.target_of(&s.activity_id).to_string();
        }
        for j in &mut self.inst.jobs {
            j.activity_id = migration.target_of(&j.activity_id).to_string();
        }
        for j in self.inst.jobs.iter_mut().filter(|j| j.kind == JobKind::External) {
            if let Some(NodeKind::ServiceTask(s)) = self.env.process.node_by_id(&j.activity_id).map(|n| &n.kind)
                && let Implementation::External { topic } = &s.implementation
            {
                j.topic = Some(topic.clone());
            }
        }
        for e in &mut self.inst.executions {
            if let Some(a) = &e.activity {
                e.activity = Some(migration.target_of(a).to_string());
            }
        }
        for t in &mut self.inst.tasks {
            t.task_def_key = migration.target_of(&t.task_def_key).to_string();
            if let Some(n) = self.env.process.node_by_id(&t.task_def_key) {
                t.name = n.name.clone();
                if let NodeKind::UserTask(ut) = &n.kind {
                    t.form_key.clone_from(&ut.form_key);
                }
            }
        }
        for r in self.inst.activities.iter_mut().filter(|r| r.end.is_none()) {
            r.activity_id = migration.target_of(&r.activity_id).to_string();
            if let Some(n) = self.env.process.node_by_id(&r.activity_id) {
                r.activity_name = n.name.clone();
            }
        }
        // Re-arm from the target: event sub-processes of each scope, boundary events of each
        // activity a token is in, and what waiting tokens wait for.
        let root = self.inst.id.clone();
        if !self.interrupted_by_event_sub_process(&root) {
            self.arm_event_sub_processes(&root, None)?;
        }
        let executions = self.inst.executions.clone();
        for e in executions.iter().filter(|e| e.id != root) {
            let Some(idx) = e.activity.as_deref().and_then(|a| self.env.process.node_idx(a)) else { continue };
            let n = self.node(idx).clone();
            let pending = self
                .inst
                .jobs
                .iter()
                .any(|j| j.execution_id == e.id && matches!(j.kind, JobKind::AsyncBefore | JobKind::AsyncAfter));
            if pending {
                continue; // not inside the activity (yet, or any more): nothing is armed there
            }
            if let NodeKind::SubProcess(sp) = &n.kind
                && !sp.triggered_by_event
                && e.is_scope
                && !e.is_mi_root
                && !self.interrupted_by_event_sub_process(&e.id)
            {
                self.arm_event_sub_processes(&e.id, Some(idx))?;
            }
            if !n.boundary_events.is_empty() && !self.is_mi_child(&e.id, &n.id) && (e.is_active || e.is_scope) {
                self.arm_boundary_events(&e.id, &n)?;
            }
            if e.is_active && !e.is_scope {
                self.arm_waits(&e.id, &n)?;
            }
        }
        // A wait of the source that was used up stays used up; new events of the target wait.
        let anchors: BTreeMap<String, String> =
            self.inst.executions.iter().map(|e| (e.id.clone(), self.wait_anchor(&e.id))).collect();
        let stale = |exec: &str, activity: &str| {
            let anchor = anchors.get(exec).cloned().unwrap_or_default();
            migration.source_waits.contains(activity) && !live.contains(&(anchor, activity.to_string()))
        };
        self.inst.jobs.retain(|j| j.kind != JobKind::Timer || !stale(&j.execution_id, &j.activity_id));
        self.inst.subscriptions.retain(|s| !stale(&s.execution_id, &s.activity_id));
        let idle: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.is_event_scope && !self.is_compensation_snapshot(e))
            .filter(|e| !self.inst.jobs.iter().any(|j| j.execution_id == e.id))
            .filter(|e| !self.inst.subscriptions.iter().any(|s| s.execution_id == e.id))
            .map(|e| e.id.clone())
            .collect();
        for es in idle {
            self.remove_execution_tree(&es, None);
        }
        for s in &mut self.inst.subscriptions {
            let anchor = anchors.get(&s.execution_id).cloned().unwrap_or_default();
            if let Some((at, name)) = created.get(&(anchor, s.activity_id.clone(), s.event_type)) {
                s.created = *at;
                if s.event_type == EventType::Conditional {
                    s.event_name.clone_from(name); // the condition's last value: true stays true
                }
            }
        }
        for j in self.inst.jobs.iter_mut().filter(|j| j.kind == JobKind::Timer) {
            let anchor = anchors.get(&j.execution_id).cloned().unwrap_or_default();
            // The due date, and for a cycle what is left of it (REPEAT_ as the job engine keeps it).
            if let Some((due, repeat)) = dues.get(&(anchor, j.activity_id.clone())) {
                j.due = Some(*due);
                j.repeat.clone_from(repeat);
            }
        }
        self.normalize();
        Ok(())
    }
}
