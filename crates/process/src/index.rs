//! Where an instance's executions and variables are, so that finding one does not scan them all.
//!
//! A 10,000-way parallel multi-instance body has 10,000 executions and 20,000 variables, and a
//! command looks rows up for every token it moves: with a scan per look-up, starting such an
//! instance took time growing with the square of the collection. The rows stay plain `Vec`s that
//! the runtime pushes to and retains from; this index follows them without being told. Rows
//! appended since the last look-up are indexed as found; any other change (a `retain`, which
//! shifts positions) shows in the row count or in the row at the last indexed position (ids are
//! never reused), and the index is rebuilt from the rows.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::state::{Execution, Variable};

/// The index of one [`crate::Instance`]. A clone starts empty (it rebuilds on first use), and
/// two indexes are always equal: it is a cache of the rows, not part of the instance.
#[derive(Default)]
pub struct RowIndex(Mutex<Positions>);

#[derive(Default)]
struct Positions {
    executions: Synced,
    /// Execution ID_ → its position.
    execution_at: HashMap<String, usize>,
    variables: Synced,
    /// Scope execution → positions of its variables (task-local ones excluded), in row order.
    scope_vars: HashMap<String, Vec<usize>>,
}

/// How many rows the index holds, and the id of the last of them.
#[derive(Default, PartialEq)]
struct Synced {
    len: usize,
    last: String,
}

impl Synced {
    /// The first row not yet indexed, or `None` when the rows changed otherwise than by appends.
    fn appended_from<T>(&self, rows: &[T], id: impl Fn(&T) -> &str) -> Option<usize> {
        match self.len.checked_sub(1) {
            None => Some(0),
            Some(last) => rows.get(last).filter(|r| id(r) == self.last).map(|_| self.len),
        }
    }

    fn at<T>(rows: &[T], id: impl Fn(&T) -> &str) -> Synced {
        Synced { len: rows.len(), last: rows.last().map(id).unwrap_or_default().to_string() }
    }
}

impl RowIndex {
    /// The position of the execution `id`.
    pub(crate) fn execution(&self, rows: &[Execution], id: &str) -> Option<usize> {
        let mut p = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let p = &mut *p;
        let from = p.executions.appended_from(rows, |e| &e.id).unwrap_or_else(|| {
            p.execution_at.clear();
            0
        });
        for (i, e) in rows.iter().enumerate().skip(from) {
            p.execution_at.entry(e.id.clone()).or_insert(i);
        }
        p.executions = Synced::at(rows, |e| &e.id);
        p.execution_at.get(id).copied()
    }

    /// The position of the variable `name` of `scope`'s own scope (not a task's local one).
    pub(crate) fn scope_variable(&self, rows: &[Variable], scope: &str, name: &str) -> Option<usize> {
        self.with_scope(rows, scope, |at| at.iter().copied().find(|&i| rows[i].name == name))
    }

    /// The positions of the variables of `scope`'s own scope, in row order.
    pub(crate) fn scope_variables(&self, rows: &[Variable], scope: &str) -> Vec<usize> {
        self.with_scope(rows, scope, <[usize]>::to_vec)
    }

    fn with_scope<R>(&self, rows: &[Variable], scope: &str, f: impl FnOnce(&[usize]) -> R) -> R {
        let mut p = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let p = &mut *p;
        let from = p.variables.appended_from(rows, |v| &v.id).unwrap_or_else(|| {
            p.scope_vars.clear();
            0
        });
        for (i, v) in rows.iter().enumerate().skip(from).filter(|(_, v)| v.task_id.is_none()) {
            p.scope_vars.entry(v.execution_id.clone()).or_default().push(i);
        }
        p.variables = Synced::at(rows, |v| &v.id);
        f(p.scope_vars.get(scope).map_or(&[], Vec::as_slice))
    }
}

impl Clone for RowIndex {
    fn clone(&self) -> RowIndex {
        RowIndex::default()
    }
}

impl PartialEq for RowIndex {
    fn eq(&self, _: &RowIndex) -> bool {
        true
    }
}

impl std::fmt::Debug for RowIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RowIndex")
    }
}
