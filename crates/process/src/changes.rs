//! What a command changed: the difference between the instance as loaded and as left.
//!
//! Diffing the whole instance (rather than logging each change as it happens) keeps the
//! runtime free of bookkeeping: a row created and removed within one command never reaches
//! the database, and a row touched twice is written once.

use std::collections::{HashMap, HashSet};

use crate::state::*;

/// Rows to insert, update and delete, per table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// True when the instance did not exist before the command (a start).
    pub new_instance: bool,
    pub executions_inserted: Vec<Execution>,
    /// Changed executions, with the REV_ they had when loaded.
    pub executions_updated: Vec<Execution>,
    /// Removed executions: (ID_, REV_ when loaded).
    pub executions_deleted: Vec<(String, i32)>,
    pub tasks_inserted: Vec<Task>,
    pub tasks_updated: Vec<Task>,
    pub tasks_deleted: Vec<(String, i32)>,
    pub variables_inserted: Vec<Variable>,
    pub variables_updated: Vec<Variable>,
    pub variables_deleted: Vec<(String, i32)>,
    pub subscriptions_inserted: Vec<Subscription>,
    pub subscriptions_deleted: Vec<String>,
    pub jobs_inserted: Vec<ProcessJob>,
    pub jobs_deleted: Vec<String>,
    /// History rows opened by this command (possibly already closed).
    pub activities_inserted: Vec<ActivityRecord>,
    /// History rows open before and closed now.
    pub activities_closed: Vec<ActivityRecord>,
}

/// The difference between `before` (as loaded; `None` for a start) and `after`.
pub fn changes(before: Option<&Instance>, after: &Instance) -> Changes {
    let empty = Instance { executions: vec![], ..after.clone() };
    let b = before.unwrap_or(&empty);
    let mut c = Changes { new_instance: before.is_none(), ..Default::default() };

    diff(&b.executions, &after.executions, |e| &e.id, &mut c.executions_inserted, &mut c.executions_updated);
    c.executions_deleted = gone(&b.executions, &after.executions, |e| &e.id).map(|e| (e.id.clone(), e.rev)).collect();
    let b_tasks = if before.is_some() { b.tasks.as_slice() } else { &[] };
    diff(b_tasks, &after.tasks, |t| &t.id, &mut c.tasks_inserted, &mut c.tasks_updated);
    c.tasks_deleted = gone(b_tasks, &after.tasks, |t| &t.id).map(|t| (t.id.clone(), t.rev)).collect();
    let b_vars = if before.is_some() { b.variables.as_slice() } else { &[] };
    diff(b_vars, &after.variables, |v| &v.id, &mut c.variables_inserted, &mut c.variables_updated);
    c.variables_deleted = gone(b_vars, &after.variables, |v| &v.id).map(|v| (v.id.clone(), v.rev)).collect();
    let b_subs = if before.is_some() { b.subscriptions.as_slice() } else { &[] };
    let mut unused = Vec::new();
    diff(b_subs, &after.subscriptions, |s| &s.id, &mut c.subscriptions_inserted, &mut unused);
    c.subscriptions_deleted = gone(b_subs, &after.subscriptions, |s| &s.id).map(|s| s.id.clone()).collect();
    let b_jobs = if before.is_some() { b.jobs.as_slice() } else { &[] };
    let mut unused = Vec::new();
    diff(b_jobs, &after.jobs, |j| &j.id, &mut c.jobs_inserted, &mut unused);
    c.jobs_deleted = gone(b_jobs, &after.jobs, |j| &j.id).map(|j| j.id.clone()).collect();
    let b_acts = if before.is_some() { b.activities.as_slice() } else { &[] };
    diff(b_acts, &after.activities, |a| &a.id, &mut c.activities_inserted, &mut c.activities_closed);
    c
}

/// Rows of `after` not in `before` go to `inserted`, rows that differ to `updated` (matched by
/// id through a map: a scan per row was quadratic in a big multi-instance body).
fn diff<T: Clone + PartialEq>(
    before: &[T],
    after: &[T],
    id: impl Fn(&T) -> &String,
    inserted: &mut Vec<T>,
    updated: &mut Vec<T>,
) {
    let before: HashMap<&String, &T> = before.iter().map(|b| (id(b), b)).collect();
    for a in after {
        match before.get(id(a)) {
            None => inserted.push(a.clone()),
            Some(&b) if b != a => updated.push(a.clone()),
            Some(_) => {}
        }
    }
}

fn gone<'a, T>(before: &'a [T], after: &'a [T], id: impl Fn(&T) -> &String + 'a) -> impl Iterator<Item = &'a T> + 'a {
    let after: HashSet<&String> = after.iter().map(&id).collect();
    before.iter().filter(move |b| !after.contains(id(b)))
}
