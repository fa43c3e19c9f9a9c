//! Walks a parsed expression against a [`Context`].
//!
//! Every node visited and every list element a method scans costs one step;
//! past the budget evaluation stops with [`EvalError::StepLimit`]. EL has no
//! loops, so the text limit already bounds the nodes; the budget is what
//! bounds work over *data* (`bigList.contains(x)`, comparing two large
//! lists), which the expression's text says nothing about.

use crate::ast::{BinaryOp, Kind, Node, UnaryOp};
use crate::context::Context;
use crate::datetime;
use crate::error::EvalError;
use crate::ops;
use crate::value::Value;

pub(crate) struct Evaluator<'a> {
    pub ctx: &'a dyn Context,
    steps: usize,
    max_steps: usize,
}

impl<'a> Evaluator<'a> {
    pub fn new(ctx: &'a dyn Context, max_steps: usize) -> Self {
        Evaluator { ctx, steps: 0, max_steps }
    }

    /// Spends `n` steps of the budget.
    pub fn tick(&mut self, n: usize) -> Result<(), EvalError> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.max_steps {
            return Err(EvalError::StepLimit { limit: self.max_steps });
        }
        Ok(())
    }

    pub fn eval(&mut self, node: &Node) -> Result<Value, EvalError> {
        self.tick(1)?;
        let pos = node.pos;
        match &node.kind {
            Kind::Null => Ok(Value::Null),
            Kind::Bool(b) => Ok(Value::Bool(*b)),
            Kind::Int(i) => Ok(Value::Int(*i)),
            Kind::Float(f) => Ok(Value::Float(*f)),
            Kind::Str(s) => Ok(Value::Str(s.clone())),
            Kind::Ident(name) => self.identifier(name, pos),
            Kind::Now => match self.ctx.now() {
                Some(now) => Ok(Value::DateTime(datetime::whole_millis(now))),
                None => Err(EvalError::NoClock { position: pos }),
            },
            Kind::Property { target, name } => {
                let target = self.eval(target)?;
                self.property(target, name, pos)
            }
            Kind::Index { target, index } => {
                let target = self.eval(target)?;
                let index = self.eval(index)?;
                self.index(target, index, pos)
            }
            Kind::Call { target, method, name, args } => {
                let target = self.eval(target)?;
                let args = args.iter().map(|a| self.eval(a)).collect::<Result<Vec<_>, _>>()?;
                self.call(*method, name, target, args, pos)
            }
            Kind::Unary { op, operand } => {
                let v = self.eval(operand)?;
                match op {
                    UnaryOp::Neg => ops::negate(&v, pos),
                    UnaryOp::Not => Ok(Value::Bool(!v.to_bool(pos)?)),
                    UnaryOp::Empty => Ok(Value::Bool(is_empty(&v))),
                }
            }
            Kind::Chain { first, rest } => self.chain(first, rest),
            Kind::Choice { cond, then, otherwise } => {
                if self.eval(cond)?.to_bool(cond.pos)? {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
        }
    }

    /// `execution` and `task` name the implicit objects when the context
    /// has them (as in Activiti, they win over variables of the same name);
    /// anything else must be a variable, or evaluation fails.
    fn identifier(&self, name: &str, position: usize) -> Result<Value, EvalError> {
        match name {
            "execution" if self.ctx.execution().is_some() => return Ok(Value::Execution),
            "task" if self.ctx.task().is_some() => return Ok(Value::Task),
            _ => {}
        }
        match self.ctx.variable(name) {
            Some(json) => Ok(Value::from_json(json)),
            None => Err(EvalError::UndefinedVariable { name: name.to_owned(), position }),
        }
    }

    /// `target.name`. A key an object lacks is an error, not EL's null: a
    /// misspelt property must not read as "not set".
    pub(crate) fn property(&self, target: Value, name: &str, position: usize) -> Result<Value, EvalError> {
        let missing = |target: String| EvalError::NoSuchProperty { property: name.to_owned(), target, position };
        let field = |found: Option<Option<&str>>, target: &str| match found {
            Some(v) => Ok(v.map_or(Value::Null, |s| Value::Str(s.to_owned()))),
            None => Err(missing(target.to_owned())),
        };
        match target {
            Value::Object(mut o) => o.remove(name).map(Value::from_json).ok_or_else(|| missing("object".into())),
            Value::Execution => field(self.ctx.execution().and_then(|e| e.property(name)), "execution"),
            Value::Task => field(self.ctx.task().and_then(|t| t.property(name)), "task"),
            Value::Null => Err(EvalError::type_error(position, format!("cannot read property '{name}' of null"))),
            other => Err(missing(other.describe())),
        }
    }

    /// `target[index]`: a list takes an integer index, an object (or the
    /// implicit objects) a key, coerced to text as EL does.
    fn index(&self, target: Value, index: Value, position: usize) -> Result<Value, EvalError> {
        match target {
            Value::List(mut items) => {
                let i = list_index(&index, position)?;
                match usize::try_from(i).ok().filter(|&i| i < items.len()) {
                    Some(i) => Ok(Value::from_json(items.swap_remove(i))),
                    None => Err(EvalError::IndexOutOfBounds { index: i, len: items.len(), position }),
                }
            }
            Value::Object(_) | Value::Execution | Value::Task => {
                let key = match &index {
                    Value::Str(s) => s.clone(),
                    Value::Int(_) | Value::Float(_) | Value::Bool(_) => index.to_text(position)?,
                    _ => {
                        let message = format!("cannot use {} as a property name", index.describe());
                        return Err(EvalError::type_error(position, message));
                    }
                };
                self.property(target, &key, position)
            }
            other => Err(EvalError::type_error(position, format!("cannot index {}", other.describe()))),
        }
    }

    /// A run of same-precedence operators, left to right. `&&` and `||`
    /// short-circuit, so `${x != null && x.done}` never reads `x.done`.
    fn chain(&mut self, first: &Node, rest: &[(BinaryOp, usize, Node)]) -> Result<Value, EvalError> {
        let mut acc = self.eval(first)?;
        for (op, pos, rhs) in rest {
            let pos = *pos;
            acc = match op {
                BinaryOp::And | BinaryOp::Or => {
                    let decided = *op == BinaryOp::Or;
                    if acc.to_bool(pos)? == decided {
                        return Ok(Value::Bool(decided));
                    }
                    Value::Bool(self.eval(rhs)?.to_bool(pos)?)
                }
                BinaryOp::Eq | BinaryOp::Ne => {
                    let b = self.eval(rhs)?;
                    self.tick(weight(&acc).min(weight(&b)))?;
                    Value::Bool(ops::equals(&acc, &b, pos)? == (*op == BinaryOp::Eq))
                }
                BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge => {
                    Value::Bool(ops::compare(*op, &acc, &self.eval(rhs)?, pos)?)
                }
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                    ops::arithmetic(*op, &acc, &self.eval(rhs)?, pos)?
                }
            };
        }
        Ok(acc)
    }
}

/// EL's `empty`: null, `""`, an empty list or an empty object.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// How many steps comparing this value costs: its element count.
fn weight(v: &Value) -> usize {
    match v {
        Value::List(l) => l.len(),
        Value::Object(o) => o.len(),
        _ => 0,
    }
}

/// A list index: an integer, an integral float or a string holding one.
fn list_index(index: &Value, position: usize) -> Result<i64, EvalError> {
    match index {
        Value::Int(i) => Ok(*i),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
        Value::Str(s) => s.parse().map_err(|_| bad_index(index, position)),
        _ => Err(bad_index(index, position)),
    }
}

fn bad_index(index: &Value, position: usize) -> EvalError {
    EvalError::type_error(position, format!("a list index must be an integer, not {}", index.describe()))
}
