//! What an expression can see: variables, the `execution` and `task`
//! objects when the engine is evaluating on behalf of one, and the clock
//! `dateTime()` reads.
//!
//! The context hands out plain data (JSON values, two small structs), never
//! engine objects, so an expression cannot reach anything the engine did not
//! decide to show it.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value as Json;

/// The variables and implicit objects an expression is evaluated against.
///
/// Only [`variable`](Context::variable) is required; a plain map of variables
/// is a context. The engine implements it over an execution's variable
/// scopes (task-local, execution-local, then parents).
pub trait Context {
    /// The variable `name` as visible from here (local scope first, then the
    /// enclosing scopes), or `None` when no scope defines it.
    fn variable(&self, name: &str) -> Option<Json>;

    /// The variable `name` in the local scope only, for
    /// `execution.getVariableLocal('x')`. Without scopes, the same as
    /// [`variable`](Context::variable).
    fn local_variable(&self, name: &str) -> Option<Json> {
        self.variable(name)
    }

    /// The execution behind the `execution` object, if any. When `None`,
    /// `execution` is an ordinary variable name.
    fn execution(&self) -> Option<&ExecutionInfo> {
        None
    }

    /// The task behind the `task` object (task listeners, assignment), if any.
    fn task(&self) -> Option<&TaskInfo> {
        None
    }

    /// "Now" for `dateTime()`: the engine passes its database clock, so that
    /// every node computing a due date agrees on the time. When `None` (the
    /// default, and the plain variable maps), `dateTime()` is an
    /// [`EvalError::NoClock`](crate::EvalError::NoClock): the crate never
    /// reads the system clock itself.
    fn now(&self) -> Option<jiff::Timestamp> {
        None
    }

    /// `execution.setVariable('x', v)` (`local`: `setVariableLocal`), Camunda's inline way to
    /// set a variable from a listener or an expression task. The context records it for its
    /// caller to apply once the expression is done (an expression itself changes nothing).
    /// `Err` says why it cannot here — by default everywhere: a condition, an assignee or a
    /// timer must not change the instance while it is read.
    fn set_variable(&self, name: &str, value: Json, local: bool) -> Result<(), String> {
        let _ = (name, value, local);
        Err("execution.setVariable is allowed only in a listener's or a service task's expression".into())
    }
}

/// The fields of `execution` an expression may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutionInfo {
    /// `execution.id`: the execution's `ID_`.
    pub id: String,
    /// `execution.processInstanceId`: `PROC_INST_ID_`.
    pub process_instance_id: String,
    /// `execution.processBusinessKey`: the instance's `BUSINESS_KEY_`.
    pub process_business_key: Option<String>,
    /// `execution.currentActivityId`: `ACT_ID_`.
    pub current_activity_id: Option<String>,
}

/// The fields of `task` an expression may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskInfo {
    /// `task.id`: the task's `ID_`.
    pub id: String,
    /// `task.name`: `NAME_`.
    pub name: Option<String>,
    /// `task.assignee`: `ASSIGNEE_`.
    pub assignee: Option<String>,
}

impl ExecutionInfo {
    /// The property `name` (as an expression spells it), `None` if there is
    /// no such property; `Some(None)` is a property that is not set.
    pub(crate) fn property(&self, name: &str) -> Option<Option<&str>> {
        match name {
            "id" => Some(Some(&self.id)),
            "processInstanceId" => Some(Some(&self.process_instance_id)),
            "processBusinessKey" => Some(self.process_business_key.as_deref()),
            "currentActivityId" => Some(self.current_activity_id.as_deref()),
            _ => None,
        }
    }
}

impl TaskInfo {
    /// As [`ExecutionInfo::property`].
    pub(crate) fn property(&self, name: &str) -> Option<Option<&str>> {
        match name {
            "id" => Some(Some(&self.id)),
            "name" => Some(self.name.as_deref()),
            "assignee" => Some(self.assignee.as_deref()),
            _ => None,
        }
    }
}

impl Context for serde_json::Map<String, Json> {
    fn variable(&self, name: &str) -> Option<Json> {
        self.get(name).cloned()
    }
}

impl<S: std::hash::BuildHasher> Context for HashMap<String, Json, S> {
    fn variable(&self, name: &str) -> Option<Json> {
        self.get(name).cloned()
    }
}

impl Context for BTreeMap<String, Json> {
    fn variable(&self, name: &str) -> Option<Json> {
        self.get(name).cloned()
    }
}
