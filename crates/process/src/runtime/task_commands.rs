//! The commands on an open user task that leave it open: claiming it and changing its
//! properties or candidates, with the `update` and `assignment` task listeners they run
//! (`update` first, as in Camunda 7). Completing a task is in `commands.rs`, with the others.

use kairos_bpmn::ListenerEvent;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::primitives::listeners::ListenerSite;
use crate::runtime::{Runtime, TaskUpdate};

impl Runtime<'_> {
    /// `Command::ClaimTask`: `assignee` takes the task, unless someone else has it.
    pub(crate) fn claim_task(&mut self, task_id: &str, assignee: String) -> Result<()> {
        let now = self.env.now;
        let task = self.task(task_id)?;
        if let Some(current) = task.assignee.as_ref().filter(|a| **a != assignee) {
            return Err(ProcessError::new(
                ErrorKind::Conflict,
                format!("task {task_id} is already claimed by {current}"),
            ));
        }
        let changed = task.assignee.as_ref() != Some(&assignee);
        if let Some(t) = self.inst.tasks.iter_mut().find(|t| t.id == task_id) {
            t.assignee = Some(assignee.clone());
            t.claim_time = Some(now);
        }
        if let Some(a) = self.inst.activities.iter_mut().find(|a| a.task_id.as_deref() == Some(task_id)) {
            a.assignee = Some(assignee);
        }
        let events: &[ListenerEvent] =
            if changed { &[ListenerEvent::Update, ListenerEvent::Assignment] } else { &[ListenerEvent::Assignment] };
        self.task_listeners(task_id, events)
    }

    /// `Command::UpdateTask`: each property `update` names is set; `update` listeners run when
    /// one changed, `assignment` listeners when an assignee was set.
    pub(crate) fn update_task(&mut self, task_id: &str, update: TaskUpdate) -> Result<()> {
        let now = self.env.now;
        self.task(task_id)?;
        let Some(t) = self.inst.tasks.iter_mut().find(|t| t.id == task_id) else { unreachable!() };
        let before = t.clone();
        if let Some(name) = update.name {
            t.name = name;
        }
        if let Some(description) = update.description {
            t.description = description;
        }
        if let Some(owner) = update.owner {
            t.owner = owner;
        }
        if let Some(priority) = update.priority {
            t.priority = priority;
        }
        if let Some(due) = update.due_date {
            t.due_date = due;
        }
        let assignee = update.assignee.clone();
        if let Some(a) = &assignee {
            t.claim_time = a.as_ref().map(|_| now);
            t.assignee = a.clone();
        }
        for u in update.add_candidate_users {
            if !t.candidate_users.contains(&u) {
                t.candidate_users.push(u);
            }
        }
        for g in update.add_candidate_groups {
            if !t.candidate_groups.contains(&g) {
                t.candidate_groups.push(g);
            }
        }
        t.candidate_users.retain(|u| !update.remove_candidate_users.contains(u));
        t.candidate_groups.retain(|g| !update.remove_candidate_groups.contains(g));
        let changed = *t != before;
        let assigned = assignee.as_ref().is_some_and(|a| a.is_some());
        if let Some(a) = assignee
            && let Some(r) = self.inst.activities.iter_mut().find(|r| r.task_id.as_deref() == Some(task_id))
        {
            r.assignee = a;
        }
        let mut events = Vec::new();
        if changed {
            events.push(ListenerEvent::Update);
        }
        if assigned {
            events.push(ListenerEvent::Assignment);
        }
        self.task_listeners(task_id, &events)
    }

    /// Plans the listeners of `events` of task `task_id`, in that order.
    pub(crate) fn task_listeners(&mut self, task_id: &str, events: &[ListenerEvent]) -> Result<()> {
        let exec = self.task(task_id)?.execution_id.clone();
        let node = self.node_of(&exec)?;
        for &event in events {
            let listen = self.listen_ops(&exec, ListenerSite::Node(node), event, Some(task_id));
            self.agenda.extend(listen);
        }
        Ok(())
    }
}
