//! Variables: setting them where Activiti sets them (the scope that has one of that name, else
//! the instance), task-local ones, the history log of every change, `camunda:inputOutput`
//! mappings and call-activity `in` / `out` mappings.

use kairos_bpmn::{IoMapping, IoValue};
use kairos_expr::Expression;
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::runtime::primitives::expressions::is_expression;
use crate::state::*;

impl Runtime<'_> {
    /// Sets a variable in `exec`'s own scope.
    pub(crate) fn set_local(&mut self, exec: &str, name: &str, value: Json) {
        self.changed.insert(name.to_string());
        let at = self.put_variable(exec, None, name, value);
        self.log_variable(at, exec);
    }

    /// The value of `exec`'s own variable `name` (not one of a scope above it).
    pub(crate) fn local(&self, exec: &str, name: &str) -> Option<&Json> {
        let at = self.inst.index.scope_variable(&self.inst.variables, exec, name)?;
        Some(&self.inst.variables[at].value)
    }

    /// Removes `exec`'s own variable `name`, if it has one.
    pub(crate) fn drop_local(&mut self, exec: &str, name: &str) {
        self.inst.variables.retain(|v| !(v.execution_id == exec && v.task_id.is_none() && v.name == name));
    }

    /// Sets `name` in `execution`'s scope (or on `task`, for a task-local variable), creating
    /// the row when there is none; returns its index in the instance's variables. Scope
    /// variables are found through the instance's index (a large multi-instance body has
    /// thousands); a task's few locals by a scan.
    pub(crate) fn put_variable(&mut self, execution: &str, task: Option<&str>, name: &str, value: Json) -> usize {
        let found = match task {
            None => self.inst.index.scope_variable(&self.inst.variables, execution, name),
            Some(t) => self.inst.variables.iter().position(|v| v.name == name && v.task_id.as_deref() == Some(t)),
        };
        if let Some(at) = found {
            self.inst.variables[at].value = value;
            return at;
        }
        let id = (self.env.ids)();
        self.inst.variables.push(Variable {
            id,
            rev: 0,
            name: name.to_string(),
            execution_id: execution.to_string(),
            value,
            task_id: task.map(str::to_string),
        });
        self.inst.variables.len() - 1
    }

    /// Records the change of variable `at`, set from execution `source`, for history.
    pub(crate) fn log_variable(&mut self, at: usize, source: &str) {
        let v = &self.inst.variables[at];
        let activity_instance_id = self.open_records.get(source).cloned();
        let change = VariableChange {
            variable_id: v.id.clone(),
            name: v.name.clone(),
            execution_id: v.execution_id.clone(),
            task_id: v.task_id.clone(),
            value: v.value.clone(),
            time: self.env.now,
            activity_instance_id,
        };
        self.inst.variable_log.push(change);
    }

    /// Sets variables as Activiti's `execution.setVariable` does: where a visible variable of
    /// that name lives, else on the instance.
    pub(crate) fn set_variables(&mut self, exec: &str, variables: Map<String, Json>) -> Result<()> {
        for (name, value) in variables {
            validate_variable_name(&name)?;
            self.changed.insert(name.clone());
            let mut at = Some(exec.to_string());
            let mut owner = None;
            while let Some(id) = at {
                if self.inst.variables.iter().any(|v| v.name == name && v.in_scope(&id)) {
                    owner = Some(id);
                    break;
                }
                at = self.inst.execution(&id).and_then(|e| e.parent_id.clone());
            }
            let owner = owner.unwrap_or_else(|| self.inst.id.clone());
            let at = self.put_variable(&owner, None, &name, value);
            self.log_variable(at, exec);
        }
        Ok(())
    }

    /// Task-local variables (SPEC P6), kept on the task's execution row with TASK_ID_ set.
    pub(crate) fn set_task_locals(&mut self, task_id: &str, variables: Map<String, Json>) -> Result<()> {
        let execution_id = self.task(task_id)?.execution_id.clone();
        for (name, value) in variables {
            validate_variable_name(&name)?;
            let at = self.put_variable(&execution_id, Some(task_id), &name, value);
            self.log_variable(at, &execution_id);
        }
        Ok(())
    }

    /// `camunda:inputOutput` inputs: evaluated in order at the activity's token (so a later
    /// one sees an earlier one) and kept local to it.
    pub(crate) fn map_inputs(&mut self, exec: &str, element: &str, io: &IoMapping) -> Result<()> {
        for p in &io.inputs {
            let value = self.io_value(exec, element, &p.value)?;
            self.set_local(exec, &p.name, value);
        }
        Ok(())
    }

    /// `camunda:inputOutput` outputs: evaluated at the token (seeing the inputs), then the
    /// inputs go and the outputs are set from the enclosing scope (where a variable of that
    /// name lives, else the instance), as a completing Camunda activity does.
    pub(crate) fn map_outputs(&mut self, exec: &str, element: &str, io: &IoMapping) -> Result<()> {
        let mut values = Map::new();
        for p in &io.outputs {
            values.insert(p.name.clone(), self.io_value(exec, element, &p.value)?);
        }
        self.drop_inputs(exec, io);
        let scope = self.inst.execution(exec).and_then(|e| e.parent_id.clone()).unwrap_or_else(|| exec.to_string());
        self.set_variables(&scope, values)
    }

    pub(crate) fn drop_inputs(&mut self, exec: &str, io: &IoMapping) {
        self.inst.variables.retain(|v| !v.in_scope(exec) || !io.inputs.iter().any(|p| p.name == v.name));
    }

    pub(crate) fn io_value(&self, exec: &str, element: &str, value: &IoValue) -> Result<Json> {
        Ok(match value {
            IoValue::Null => Json::Null,
            IoValue::Text(t) if is_expression(t) => self.eval(exec, element, t)?,
            IoValue::Text(t) => Json::String(t.clone()),
            IoValue::List(items) => {
                Json::Array(items.iter().map(|i| self.io_value(exec, element, i)).collect::<Result<_>>()?)
            }
            IoValue::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.io_value(exec, element, v)?)))
                    .collect::<Result<_>>()?,
            ),
            IoValue::Script(s) => self.run_script(exec, element, "parameter script", s)?.value,
            _ => Json::Null,
        })
    }

    /// Applies call-activity mappings to `from` (the caller's visible variables for `in`, the
    /// called instance's final ones for `out`).
    pub(crate) fn map_variables(
        &self,
        mappings: &[kairos_bpmn::VariableMapping],
        from: &Map<String, Json>,
        element: &str,
    ) -> Result<Map<String, Json>> {
        let mut out = Map::new();
        for m in mappings {
            match m {
                kairos_bpmn::VariableMapping::All { .. } => out.extend(from.clone()),
                kairos_bpmn::VariableMapping::Variable { source, target, .. } => {
                    out.insert(target.clone(), from.get(source).cloned().unwrap_or(Json::Null));
                }
                kairos_bpmn::VariableMapping::Expression { expression, target, .. } => {
                    let expr = Expression::parse(expression).map_err(|e| {
                        ProcessError::at(
                            ErrorKind::Model,
                            element,
                            format!("mapping '{expression}' of '{element}': {e}"),
                        )
                    })?;
                    let v = expr.eval(from).map_err(|e| {
                        ProcessError::at(
                            ErrorKind::Model,
                            element,
                            format!("mapping '{expression}' of '{element}': {e}"),
                        )
                    })?;
                    out.insert(target.clone(), v);
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// A variable name: 1 to 255 characters, no control characters.
pub fn validate_variable_name(name: &str) -> Result<()> {
    if name.is_empty() || name.chars().count() > 255 || name.chars().any(char::is_control) {
        return Err(ProcessError::new(
            ErrorKind::Invalid,
            format!("variable name '{}' must be 1 to 255 characters without control characters", name.escape_debug()),
        ));
    }
    Ok(())
}
