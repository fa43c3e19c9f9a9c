//! Tasks: user tasks (a row of ACT_RU_TASK with assignee, candidates, priority and due date),
//! service tasks (a handler the engine runs, an expression, or an external worker's job) and
//! receive tasks.

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::*;
use kairos_bpmn::{FlowNode, NodeKind};

impl Runtime<'_> {
    pub(crate) fn create_task(&mut self, exec: &str, n: &FlowNode) -> Result<()> {
        let NodeKind::UserTask(ut) = &n.kind else { return Ok(()) };
        let assignee = match &ut.assignee {
            Some(a) => self.eval_people(exec, &n.id, a, false)?.into_iter().next(),
            None => None,
        };
        let mut candidate_users = Vec::new();
        for c in &ut.candidate_users {
            candidate_users.extend(self.eval_people(exec, &n.id, c, true)?);
        }
        let mut candidate_groups = Vec::new();
        for c in &ut.candidate_groups {
            candidate_groups.extend(self.eval_people(exec, &n.id, c, true)?);
        }
        let priority = match &ut.priority {
            Some(p) => self.eval_string(exec, &n.id, p)?.trim().parse::<i32>().map_err(|_| {
                ProcessError::at(ErrorKind::Model, &n.id, format!("priority of '{}' is not an integer", n.id))
            })?,
            None => 50,
        };
        let due_date = match &ut.due_date {
            Some(d) => {
                let text = self.eval_string(exec, &n.id, d)?;
                let bad = || {
                    ProcessError::at(
                        ErrorKind::Model,
                        &n.id,
                        format!("dueDate of '{}': '{text}' is neither an instant nor an ISO 8601 duration", n.id),
                    )
                };
                Some(match kairos_time::parse_instant(&text) {
                    Ok(t) => t,
                    Err(_) => kairos_time::IsoDuration::parse(&text)
                        .map_err(|_| bad())?
                        .add_to(self.env.now)
                        .map_err(|_| bad())?,
                })
            }
            None => None,
        };
        let id = (self.env.ids)();
        self.inst.tasks.push(Task {
            id: id.clone(),
            rev: 0,
            execution_id: exec.into(),
            name: n.name.clone(),
            task_def_key: n.id.clone(),
            assignee: assignee.clone(),
            priority,
            create_time: self.env.now,
            due_date,
            form_key: ut.form_key.clone(),
            claim_time: None,
            suspension_state: self.inst.suspension_state,
            candidate_users,
            candidate_groups,
        });
        if let Some(r) = self.open_record_mut(exec, &n.id) {
            r.task_id = Some(id);
            r.assignee = assignee;
        }
        self.wait(exec);
        Ok(())
    }
}
