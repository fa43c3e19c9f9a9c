//! The execution tree (seed 003): making tokens, removing an execution with all it holds,
//! cancelling what an execution does at its activity, ending the instance, and the
//! IS_CONCURRENT_ / IS_ACTIVE_ flags of scope executions.

use std::collections::{HashMap, HashSet};

use kairos_bpmn::{ListenerEvent, NodeIdx, NodeKind};

use crate::runtime::{LOOP_COUNTER, Runtime};
use crate::state::*;

impl Runtime<'_> {
    pub(crate) fn new_token(&mut self, parent: &str, at: NodeIdx) -> String {
        let id = (self.env.ids)();
        self.new_token_with_id(parent, at, id)
    }

    /// [`Runtime::new_token`] with an id chosen by the caller (unique in the instance's tree).
    pub(crate) fn new_token_with_id(&mut self, parent: &str, at: NodeIdx, id: String) -> String {
        let activity = Some(self.node(at).id.clone());
        self.inst.executions.push(Execution {
            id: id.clone(),
            rev: 0,
            parent_id: Some(parent.to_string()),
            super_exec: None,
            activity,
            is_active: true,
            is_concurrent: false,
            is_scope: false,
            is_event_scope: false,
            is_mi_root: false,
            start_time: self.env.now,
            suspension_state: self.inst.suspension_state,
        });
        id
    }

    /// Removes every child of `parent` with everything under it (see `remove_execution_tree`).
    pub(crate) fn remove_children(&mut self, parent: &str, reason: Option<&str>) {
        let children: Vec<String> = self
            .inst
            .executions
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(parent))
            .map(|e| e.id.clone())
            .collect();
        for c in children {
            self.remove_execution_tree(&c, reason);
        }
    }

    /// Removes every child of `parent` but its compensation snapshots: the scope goes on (a
    /// terminate end completes it, an interrupting event sub-process runs in it), and what it
    /// completed stays compensable.
    pub(crate) fn remove_children_but_compensations(&mut self, parent: &str, reason: &str) {
        let doomed: Vec<String> = self
            .inst
            .children(parent)
            .into_iter()
            .filter(|e| !self.is_compensation_snapshot(e))
            .map(|e| e.id.clone())
            .collect();
        for e in doomed {
            self.remove_execution_tree(&e, Some(reason));
        }
    }

    /// Notes `exec` in [`Instance::interrupted_calls`] when it waits at a call activity: it is
    /// being cancelled, and so must what it called. (A multi-instance body only holds the
    /// executions that call.)
    pub(crate) fn note_interrupted_call(&mut self, exec: &str) {
        let Some(e) = self.inst.execution(exec).filter(|e| !e.is_mi_root) else { return };
        let Some(activity) = e.activity.clone() else { return };
        if matches!(self.env.process.node_by_id(&activity).map(|n| &n.kind), Some(NodeKind::CallActivity(_))) {
            self.inst.interrupted_calls.push((exec.to_string(), activity));
        }
    }

    /// Removes an execution and everything under it: children, tasks, jobs, subscriptions,
    /// variables; open history rows close with `reason` (a cancellation; `None`: it completed).
    pub(crate) fn remove_execution_tree(&mut self, exec: &str, reason: Option<&str>) {
        let mut doomed = vec![exec.to_string()];
        let mut i = 0;
        while i < doomed.len() {
            let id = doomed[i].clone();
            doomed.extend(
                self.inst.executions.iter().filter(|e| e.parent_id.as_deref() == Some(&id)).map(|e| e.id.clone()),
            );
            i += 1;
        }
        if reason.is_some() {
            for id in &doomed {
                self.note_interrupted_call(id);
            }
        }
        for id in &doomed {
            let tasks: Vec<String> =
                self.inst.tasks.iter().filter(|t| &t.execution_id == id).map(|t| t.id.clone()).collect();
            for t in tasks {
                self.end_task(&t, reason.or(Some("deleted")));
            }
            if let Some(r) = reason {
                let open: Vec<String> = self
                    .inst
                    .activities
                    .iter()
                    .filter(|a| &a.execution_id == id && a.end.is_none())
                    .map(|a| a.activity_id.clone())
                    .collect();
                for a in open {
                    self.close_record(id, &a, Some(r));
                }
            }
        }
        self.inst.executions.retain(|e| !doomed.contains(&e.id));
        self.inst.jobs.retain(|j| !doomed.contains(&j.execution_id));
        self.inst.subscriptions.retain(|s| !doomed.contains(&s.execution_id));
        self.inst.variables.retain(|v| !doomed.contains(&v.execution_id));
    }

    /// The instance ends: everything goes; history keeps the end (and the reason).
    pub(crate) fn end_instance(&mut self, end_activity: Option<String>, reason: Option<String>) {
        let root = self.inst.id.clone();
        let why = reason.clone().unwrap_or_else(|| "ended".into());
        self.remove_children(&root, Some(&why));
        let open: Vec<String> = self
            .inst
            .activities
            .iter()
            .filter(|a| a.execution_id == root && a.end.is_none())
            .map(|a| a.activity_id.clone())
            .collect();
        for a in open {
            self.close_record(&root, &a, reason.as_deref());
        }
        self.inst.executions.clear();
        self.inst.tasks.clear();
        self.inst.jobs.clear();
        self.inst.subscriptions.clear();
        let root = self.inst.id.clone();
        self.inst.final_variables = self.inst.visible_variables(&root);
        self.inst.variables.clear();
        self.inst.ended = Some((self.env.now, end_activity));
        self.inst.delete_reason = reason;
    }

    /// IS_CONCURRENT_ and IS_ACTIVE_ of scope executions, as seed 003 §5.3 tabulates them:
    /// tokens of a scope are concurrent when there is more than one; a scope execution
    /// holding tokens is a container, not active itself.
    pub(crate) fn normalize(&mut self) {
        // Tokens per scope, counted in one pass (a scan per scope was quadratic in a big
        // multi-instance body).
        let mut tokens: HashMap<String, usize> = HashMap::new();
        for e in self.inst.executions.iter().filter(|e| !e.is_event_scope) {
            if let Some(p) = &e.parent_id {
                *tokens.entry(p.clone()).or_default() += 1;
            }
        }
        let mi_roots: HashSet<String> =
            self.inst.executions.iter().filter(|e| e.is_mi_root).map(|e| e.id.clone()).collect();
        // A throw compensating a sub-process holds its handler's token through the snapshot
        // (or nested snapshots): it is a container too, not a wait.
        let mut holders = Vec::new();
        for e in self.inst.executions.iter().filter(|e| tokens.contains_key(&e.id) && self.is_compensation_snapshot(e))
        {
            let mut at = e;
            while let Some(parent) = at.parent_id.as_deref().and_then(|p| self.inst.execution(p)) {
                holders.push(parent.id.clone());
                if !self.is_compensation_snapshot(parent) {
                    break;
                }
                at = parent;
            }
        }
        for h in holders {
            tokens.entry(h).or_default();
        }
        for e in &mut self.inst.executions {
            if let Some(p) = e.parent_id.as_deref().filter(|_| !e.is_event_scope && !e.is_mi_root) {
                // Instances of a multi-instance body are concurrent even when one is left.
                e.is_concurrent = tokens.get(p).copied().unwrap_or(0) > 1 || mi_roots.contains(p);
            }
            if tokens.contains_key(&e.id) {
                e.is_active = false;
            }
        }
    }

    pub(crate) fn wait(&mut self, exec: &str) {
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_active = true;
        }
    }

    /// Cancels what `exec` is doing at its activity (an interrupting boundary event): its
    /// task, its waits, its inner tokens; `exec` itself stays, to leave by the boundary event.
    pub(crate) fn cancel_activity(&mut self, exec: &str, reason: &str) {
        self.note_interrupted_call(exec);
        self.remove_children(exec, Some(reason));
        let tasks: Vec<String> =
            self.inst.tasks.iter().filter(|t| t.execution_id == exec).map(|t| t.id.clone()).collect();
        for t in tasks {
            self.end_task(&t, Some(reason));
        }
        self.inst.jobs.retain(|j| j.execution_id != exec);
        self.inst.subscriptions.retain(|s| s.execution_id != exec);
        if let Some(activity) = self.inst.execution(exec).and_then(|e| e.activity.clone()) {
            self.close_record(exec, &activity, Some(reason));
            let node = self.env.process.node_by_id(&activity);
            // A standard loop broken off counts from 0 again when the token comes back.
            if node.is_some_and(|n| n.standard_loop.is_some()) {
                self.drop_local(exec, LOOP_COUNTER);
            }
            if let Some(io) = node.and_then(|n| n.io.clone()) {
                self.drop_inputs(exec, &io);
            }
        }
        if let Some(e) = self.inst.execution_mut(exec) {
            e.is_scope = false;
            e.is_active = true;
        }
    }

    /// Removes a task (completed, or cancelled with `reason`: then its delete listeners are
    /// planned once the step that cancelled it is done, see `plan_delete_listeners`).
    pub(crate) fn end_task(&mut self, task_id: &str, reason: Option<&str>) {
        if let Some(t) = self.inst.task(task_id).filter(|_| reason.is_some()) {
            let node = self.env.process.node_idx(&t.task_def_key);
            let listens = node
                .is_some_and(|n| self.env.process.node(n).listeners.iter().any(|l| l.event == ListenerEvent::Delete));
            if let (Some(node), true) = (node, listens) {
                let mut chain = vec![t.execution_id.clone()];
                while let Some(parent) =
                    chain.last().and_then(|e| self.inst.execution(e)).and_then(|e| e.parent_id.clone())
                {
                    chain.push(parent);
                }
                self.deleted_tasks.push((t.id.clone(), node, chain));
            }
        }
        if let Some(t) = self.inst.task(task_id) {
            let ended = EndedTask {
                id: t.id.clone(),
                start: t.create_time,
                end: self.env.now,
                reason: reason.map(str::to_string),
            };
            self.inst.ended_tasks.push(ended);
        }
        self.inst.tasks.retain(|t| t.id != task_id);
        self.inst.variables.retain(|v| v.task_id.as_deref() != Some(task_id));
    }

    /// A completed embedded sub-process kept for its compensation (an event-scope execution at
    /// the sub-process, see `behaviour/compensation.rs`), not a boundary event's wait.
    pub(crate) fn is_compensation_snapshot(&self, e: &Execution) -> bool {
        e.is_event_scope
            && e.activity
                .as_deref()
                .and_then(|a| self.env.process.node_by_id(a))
                .is_some_and(|n| matches!(n.kind, NodeKind::SubProcess(_)))
    }

    pub(crate) fn is_mi_child(&self, exec: &str, activity: &str) -> bool {
        let parent = self.inst.execution(exec).and_then(|e| e.parent_id.clone());
        parent
            .and_then(|p| self.inst.execution(&p))
            .is_some_and(|p| p.is_mi_root && p.activity.as_deref() == Some(activity))
    }

    /// Where a wait held by `exec` belongs: a boundary event's event-scope execution waits for
    /// the activity's execution; any other execution for itself.
    pub(crate) fn wait_anchor(&self, exec: &str) -> String {
        match self.inst.execution(exec) {
            Some(e) if e.is_event_scope => e.parent_id.clone().unwrap_or_default(),
            _ => exec.to_string(),
        }
    }
}
