//! Expression evaluation at an execution: `${…}` over the variables visible there, with the
//! execution's own facts, and the readings of its result a model needs (a value, a string, a
//! condition, a list of people).

use std::cell::RefCell;

use jiff::Timestamp;
use kairos_expr::{Context, ExecutionInfo, Expression};
use serde_json::Value as Json;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    /// Evaluates `text` at `exec` with `how`; any failure is a model error naming the
    /// expression (`what`: "expression" or "condition") and the element.
    pub(crate) fn evaluate<T>(
        &self,
        exec: &str,
        element: &str,
        text: &str,
        what: &str,
        how: impl FnOnce(&Expression, &VarContext<'_>) -> std::result::Result<T, kairos_expr::EvalError>,
    ) -> Result<T> {
        let fail = |e: &dyn std::fmt::Display| {
            ProcessError::at(ErrorKind::Model, element, format!("{what} '{text}' of '{element}': {e}"))
        };
        let expr = Expression::parse(text).map_err(|e| fail(&e))?;
        how(&expr, &self.context(exec)).map_err(|e| fail(&e))
    }

    pub(crate) fn eval(&self, exec: &str, element: &str, text: &str) -> Result<Json> {
        self.evaluate(exec, element, text, "expression", |e, c| e.eval(c))
    }

    /// [`Runtime::eval`] for a listener's or a service task's expression, which may set
    /// variables (`${execution.setVariable('approved', true)}`): they are set once the
    /// expression is done, in the order it set them.
    pub(crate) fn eval_with_effects(&mut self, exec: &str, element: &str, text: &str) -> Result<Json> {
        let fail = |e: &dyn std::fmt::Display| {
            ProcessError::at(ErrorKind::Model, element, format!("expression '{text}' of '{element}': {e}"))
        };
        let expr = Expression::parse(text).map_err(|e| fail(&e))?;
        let (value, sets) = {
            let mut ctx = self.context(exec);
            ctx.effects = Some(RefCell::new(Vec::new()));
            let value = expr.eval(&ctx).map_err(|e| fail(&e))?;
            (value, ctx.effects.map(RefCell::into_inner).unwrap_or_default())
        };
        for (name, value, local) in sets {
            if local {
                self.set_local(exec, &name, value);
            } else {
                self.set_variables(exec, serde_json::Map::from_iter([(name, value)]))?;
            }
        }
        Ok(value)
    }

    pub(crate) fn eval_string(&self, exec: &str, element: &str, text: &str) -> Result<String> {
        if !is_expression(text) {
            return Ok(text.to_string());
        }
        self.evaluate(exec, element, text, "expression", |e, c| e.eval_string(c))
    }

    /// An assignee (`list` false: one id) or a candidate list (`list` true: a comma list, or an
    /// expression giving a comma list or a list of ids). Null is nobody, as Flowable and Camunda
    /// read it: `${initiator}` of an instance started by no known user leaves the task
    /// unassigned instead of failing; an undefined variable is still an error.
    pub(crate) fn eval_people(&self, exec: &str, element: &str, text: &str, list: bool) -> Result<Vec<String>> {
        let one = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty()).into_iter().collect();
        if !is_expression(text) {
            return Ok(if list { split_list(text) } else { one(text) });
        }
        let bad = |what: &str| {
            ProcessError::at(
                ErrorKind::Model,
                element,
                format!(
                    "expression '{text}' of '{element}' gave {what}; {} or null is needed",
                    if list { "ids (a comma list or a list of strings)" } else { "one user id" }
                ),
            )
        };
        match self.eval(exec, element, text)? {
            Json::Null => Ok(Vec::new()),
            Json::String(s) if list => Ok(split_list(&s)),
            Json::String(s) => Ok(one(&s)),
            n @ Json::Number(_) => Ok(vec![n.to_string()]),
            Json::Array(_) if !list => Err(bad("a list")),
            Json::Array(items) => items
                .into_iter()
                .filter(|i| !i.is_null())
                .map(|i| match i {
                    Json::String(s) => Ok(s.trim().to_string()),
                    n @ Json::Number(_) => Ok(n.to_string()),
                    _ => Err(bad("a list holding something other than ids")),
                })
                .filter(|r| !matches!(r, Ok(s) if s.is_empty()))
                .collect(),
            Json::Bool(_) => Err(bad("a boolean")),
            Json::Object(_) => Err(bad("an object")),
        }
    }

    /// A sequence flow's condition: an expression or a script.
    pub(crate) fn condition_holds(&self, exec: &str, element: &str, c: &kairos_bpmn::Condition) -> Result<bool> {
        match c {
            kairos_bpmn::Condition::Expression(text) => self.eval_bool(exec, element, text),
            kairos_bpmn::Condition::Script(s) => self.script_condition(exec, element, s),
            _ => Err(ProcessError::at(ErrorKind::Model, element, format!("the condition of '{element}' cannot run"))),
        }
    }

    pub(crate) fn eval_bool(&self, exec: &str, element: &str, text: &str) -> Result<bool> {
        self.evaluate(exec, element, text, "condition", |e, c| e.eval_bool(c))
    }

    /// A conditional event's condition, as Camunda reads it: one that names a variable that
    /// does not exist yet is false until the variable appears (an order process waits for
    /// `${paid}`). Every other failure is an error, and gateways and sequence flows stay
    /// strict: there an undefined variable is a mistake, not a wait.
    pub(crate) fn event_condition(&self, exec: &str, element: &str, text: &str) -> Result<bool> {
        self.evaluate(exec, element, text, "condition", |e, c| match e.eval_bool(c) {
            Err(kairos_expr::EvalError::UndefinedVariable { .. }) => Ok(false),
            other => other,
        })
    }

    pub(crate) fn context(&self, exec: &str) -> VarContext<'_> {
        let current = self.inst.execution(exec).and_then(|e| e.activity.clone());
        VarContext {
            inst: &self.inst,
            now: self.env.now,
            exec: exec.to_string(),
            effects: None,
            info: ExecutionInfo {
                id: exec.to_string(),
                process_instance_id: self.inst.id.clone(),
                process_business_key: self.inst.business_key.clone(),
                current_activity_id: current,
            },
        }
    }
}

/// The variables and `execution` an expression sees.
pub(crate) struct VarContext<'i> {
    inst: &'i Instance,
    /// The database's now, for `dateTime()`.
    now: Timestamp,
    exec: String,
    info: ExecutionInfo,
    /// The variables `execution.setVariable` set, when this evaluation may set any
    /// ([`Runtime::eval_with_effects`]): (name, value, local).
    effects: Option<RefCell<Vec<(String, Json, bool)>>>,
}

impl Context for VarContext<'_> {
    fn variable(&self, name: &str) -> Option<Json> {
        self.inst.visible_variable(&self.exec, name).cloned()
    }

    fn local_variable(&self, name: &str) -> Option<Json> {
        self.inst.variables.iter().find(|v| v.in_scope(&self.exec) && v.name == name).map(|v| v.value.clone())
    }

    fn execution(&self) -> Option<&ExecutionInfo> {
        Some(&self.info)
    }

    fn now(&self) -> Option<Timestamp> {
        Some(self.now)
    }

    fn set_variable(&self, name: &str, value: Json, local: bool) -> std::result::Result<(), String> {
        let Some(effects) = &self.effects else {
            return Err("execution.setVariable is allowed only in a listener's or a service task's expression".into());
        };
        crate::validate_variable_name(name).map_err(|e| e.message)?;
        effects.borrow_mut().push((name.to_string(), value, local));
        Ok(())
    }
}

/// True when `text` holds a `${…}` / `#{…}` expression; anything else is taken literally.
pub(crate) fn is_expression(text: &str) -> bool {
    text.contains("${") || text.contains("#{")
}

/// The ids of a comma list.
pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect()
}
