//! kairos's expression language: the `${…}` of BPMN conditions, assignees,
//! candidate users and business keys, in the JUEL (Java Unified Expression
//! Language, EL 2.2) dialect that Activiti, Flowable and Camunda models use.
//!
//! Written by hand for two reasons. No Rust crate evaluates JUEL. And JUEL
//! itself must not be copied: it resolves `a.b()` by reflection on live Java
//! objects, which made an expression in a task name remote code execution
//! (Flowable #2291, Activiti #3249). Here an expression can only read the
//! JSON variables, the two small records ([`ExecutionInfo`], [`TaskInfo`])
//! and the clock ([`Context::now`]) its [`Context`] hands it, and call the
//! handful of string, list, variable and date-time methods kairos whitelists
//! (any other name fails to parse). It has no I/O (not even the system
//! clock), no reflection, no class access, and its cost is bounded: see
//! [`MAX_TEXT_BYTES`], [`MAX_DEPTH`], [`MAX_STEPS`] and [`MAX_STRING_BYTES`].
//!
//! ```
//! use kairos_expr::Expression;
//! use serde_json::{Map, json};
//!
//! let mut vars = Map::new();
//! vars.insert("amount".into(), json!(1500));
//! vars.insert("customer".into(), json!({ "name": "Ada", "tier": "gold" }));
//!
//! let condition = Expression::parse("${amount > 1000 && customer.tier == 'gold'}").unwrap();
//! assert!(condition.eval_bool(&vars).unwrap());
//!
//! let greeting = Expression::parse("Hello ${customer.name}").unwrap();
//! assert_eq!(greeting.eval_string(&vars).unwrap(), "Hello Ada");
//!
//! // An undefined variable is an error, never a silent null or false.
//! let typo = Expression::parse("${amuont > 1000}").unwrap();
//! assert!(typo.eval_bool(&vars).is_err());
//! ```
//!
//! # Grammar (a subset of EL 2.2)
//!
//! * **Text**: literal text, `${expr}` and `#{expr}` parts (not both kinds in
//!   one text), `\${` for a literal `${`.
//! * **Literals**: `42`, `4.2`, `.5`, `1e3`, `'text'` or `"text"` (escapes
//!   `\\`, `\'`, `\"` only), `true`, `false`, `null`.
//! * **Access**: variables by name, `a.b`, `a['b']`, `list[0]`.
//! * **Operators**, loosest first: `?:`; `||` `or`; `&&` `and`; `==` `eq`
//!   `!=` `ne`; `<` `lt` `>` `gt` `<=` `le` `>=` `ge`; `+` `-`; `*` `/` `div`
//!   `%` `mod`; unary `-` `!` `not` `empty`; parentheses.
//! * **Implicit objects** (when the [`Context`] provides them):
//!   `execution.id`, `.processInstanceId`, `.processBusinessKey`,
//!   `.currentActivityId`; `task.id`, `.name`, `.assignee`; and their Java
//!   getters (`execution.getProcessBusinessKey()`).
//! * **Function**: `dateTime()`, Camunda's built-in, and no other: "now" as
//!   a date-time, read from [`Context::now`] (the engine's database clock;
//!   without one it is [`EvalError::NoClock`]), cut to the millisecond.
//! * **Methods**: `execution`/`task` `.getVariable('x')` (null when absent),
//!   `.setVariable('x', v)` / `.setVariableLocal('x', v)` where the context allows effects
//!   ([`Context::set_variable`]: a listener's or a service task's expression),
//!   `.getVariableLocal('x')`, `.hasVariable('x')`; on strings `contains`,
//!   `startsWith`, `endsWith`, `length()`/`size()`, `isEmpty()`,
//!   `toUpperCase()`, `toLowerCase()`, `trim()`, `equals`,
//!   `equalsIgnoreCase`; on lists `size()`, `isEmpty()`, `contains(x)`; on
//!   objects `size()`, `isEmpty()`, `containsKey('k')`; on date-times, with
//!   Joda-Time's names, `plusYears(n)`, `plusMonths`, `plusWeeks`,
//!   `plusDays`, `plusHours`, `plusMinutes`, `plusSeconds`, `plusMillis` and
//!   the same `minus…`, `toDate()` (the date-time itself), `toString()`
//!   (RFC 3339), `isBefore(x)`, `isAfter(x)` (`x` a date-time or an RFC 3339
//!   string) and `getMillis()` (milliseconds since the epoch). Date-time
//!   methods parse only on an expression that gives a date-time
//!   (`dateTime()`, a date-time method's result, `c ? dateTime() :
//!   dateTime().plusDays(1)`), and no other method or property parses on
//!   one. Nothing else: no other functions (`fn:x()`), lambdas, assignment
//!   or EL 3.0 collection syntax.
//! * **Date-times** compare with `<`, `>`, `==`… against another date-time
//!   or an RFC 3339 string, as instants. They leave the expression (through
//!   [`Expression::eval`], [`Expression::eval_string`], a composite text or
//!   `toString()`) as an RFC 3339 string in UTC with milliseconds,
//!   `"2026-01-05T09:00:00.000Z"`, which is how Joda prints a UTC date-time.
//!   Calendar units (years, months, weeks, days) are added in UTC, where
//!   Camunda uses the JVM's default time zone: a day is always 24 hours
//!   here, even across a daylight-saving change. A result outside years
//!   -9999 to 9999 is an [`EvalError::Overflow`].
//!
//! ```
//! use kairos_expr::{Context, Expression};
//! use serde_json::{Value, json};
//!
//! struct AtNine;
//! impl Context for AtNine {
//!     fn variable(&self, _: &str) -> Option<Value> {
//!         None
//!     }
//!     fn now(&self) -> Option<jiff::Timestamp> {
//!         "2026-01-05T09:00:00Z".parse().ok()
//!     }
//! }
//!
//! let due = Expression::parse("${dateTime().plusDays(2).toDate()}").unwrap();
//! assert_eq!(due.eval(&AtNine).unwrap(), json!("2026-01-07T09:00:00.000Z"));
//! ```
//!
//! Values follow EL's coercions (EL 2.2 §1.7–§1.8, §1.18) where they are
//! sane, and fail loudly where EL would guess: see [`Expression::eval`].

mod ast;
mod context;
mod datetime;
mod error;
mod eval;
mod lexer;
mod methods;
mod ops;
mod parser;
mod value;

use std::fmt;

use serde_json::Value as Json;

pub use context::{Context, ExecutionInfo, TaskInfo};
pub use error::{EvalError, ExprError};

use ast::{Node, Part};
use eval::Evaluator;
use value::Value;

/// Longest expression text, in bytes. BPMN attributes are short; the limit
/// bounds parse time and the size of every tree the engine caches.
pub const MAX_TEXT_BYTES: usize = 4 * 1024;
/// Deepest nesting of an expression (parentheses, operators, property
/// chains), so neither the parser nor the evaluator can exhaust the stack.
pub const MAX_DEPTH: usize = 64;
/// Most steps one evaluation may take: nodes visited plus list elements
/// scanned or compared. Bounds the work an expression can make the engine do
/// over large variables.
pub const MAX_STEPS: usize = 10_000;
/// Longest string an evaluation may build (composite text, `toUpperCase`…),
/// in bytes, so an expression cannot turn variables into unbounded memory.
pub const MAX_STRING_BYTES: usize = 1024 * 1024;

/// A parsed expression: literal text, one `${…}`, or a composite of both.
///
/// Parse once (when a definition is deployed), evaluate many times. A single
/// `${…}` with no text around it evaluates to its value of whatever type; a
/// composite (`"Order ${id} for ${customer}"`) always gives a string. `#{…}`
/// is accepted as a synonym of `${…}`, and `\${` is the literal text `${`.
#[derive(Debug, Clone)]
pub struct Expression {
    source: String,
    parts: Vec<Part>,
}

impl Expression {
    /// Parses `text`, refusing anything outside the grammar (see the crate
    /// docs) with the position of the problem.
    ///
    /// Text is taken as is: callers reading an expression out of XML trim it
    /// first, or `"\n  ${ok}\n"` is a composite string rather than a boolean.
    pub fn parse(text: &str) -> Result<Expression, ExprError> {
        let chars: Vec<char> = text.chars().collect();
        if text.len() > MAX_TEXT_BYTES {
            let position = text.char_indices().take_while(|(i, _)| *i < MAX_TEXT_BYTES).count();
            return Err(ExprError::at(&chars, position, format!("expression is longer than {MAX_TEXT_BYTES} bytes")));
        }
        let parts = parser::parse_template(&chars)?;
        Ok(Expression { source: text.to_owned(), parts })
    }

    /// The text the expression was parsed from.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// `true` when the text has no `${…}` at all, so evaluation would just
    /// return it (the engine can skip the context for such an assignee).
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// The variables the expression reads by name, each once, in order of
    /// first appearance: the names whose absence makes evaluation fail if it
    /// reaches them. The implicit `execution` and `task` objects are not
    /// listed, nor are names passed to `execution.getVariable('…')`, which
    /// tolerates absence.
    pub fn variables(&self) -> Vec<&str> {
        let mut names = Vec::new();
        for part in &self.parts {
            if let Part::Eval(node) = part {
                collect_identifiers(node, &mut names);
            }
        }
        names
    }

    /// Evaluates the expression to a JSON value; a date-time becomes an
    /// RFC 3339 string (`"2026-01-05T09:00:00.000Z"`).
    ///
    /// Coercions follow EL: arithmetic reads null as 0 and numeric strings as
    /// numbers (`'5' + 1` is 6; `+` never concatenates), `/` always gives a
    /// float, `==` compares a number with a numeric string numerically,
    /// `null == null` holds, `empty null` is true. Unlike EL, integer
    /// overflow, division by zero, an undefined variable, a missing property
    /// and an index out of bounds are errors.
    pub fn eval(&self, ctx: &dyn Context) -> Result<Json, EvalError> {
        self.eval_value(ctx, MAX_STEPS)?.into_json()
    }

    /// Evaluates a condition. The result must be a boolean, or a string
    /// `"true"`/`"false"` (any case) as EL coerces it; null, a number or any
    /// other string is an error naming what was found, because a condition
    /// that is not clearly true or false must not pick a sequence flow.
    pub fn eval_bool(&self, ctx: &dyn Context) -> Result<bool, EvalError> {
        match self.eval_value(ctx, MAX_STEPS)? {
            Value::Bool(b) => Ok(b),
            Value::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Value::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(EvalError::ResultType { expected: "a boolean", found: other.describe() }),
        }
    }

    /// Evaluates an assignee, candidate or business-key expression (or a due
    /// date) to text. Numbers and booleans are printed as EL prints them, a
    /// date-time as RFC 3339 (`2026-01-05T09:00:00.000Z`); null, a list or an
    /// object is an error, since "nobody" or `[…]` is never a user id.
    pub fn eval_string(&self, ctx: &dyn Context) -> Result<String, EvalError> {
        match self.eval_value(ctx, MAX_STEPS)? {
            v @ (Value::Str(_) | Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::DateTime(_)) => v.to_text(0),
            other => Err(EvalError::ResultType { expected: "a string", found: other.describe() }),
        }
    }

    /// Evaluates with a step budget: a lone `${…}` gives its value, anything
    /// else the concatenation of its parts as text.
    fn eval_value(&self, ctx: &dyn Context, max_steps: usize) -> Result<Value, EvalError> {
        let mut evaluator = Evaluator::new(ctx, max_steps);
        if let [Part::Eval(node)] = self.parts.as_slice() {
            return evaluator.eval(node);
        }
        let mut text = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => text.push_str(t),
                Part::Eval(node) => {
                    text.push_str(&evaluator.eval(node)?.to_text(node.pos)?);
                    if text.len() > MAX_STRING_BYTES {
                        return Err(EvalError::StringTooLong { limit: MAX_STRING_BYTES, position: node.pos });
                    }
                }
            }
        }
        Ok(Value::Str(text))
    }
}

fn collect_identifiers<'a>(node: &'a Node, names: &mut Vec<&'a str>) {
    if let ast::Kind::Ident(name) = &node.kind
        && name != "execution"
        && name != "task"
        && !names.contains(&name.as_str())
    {
        names.push(name);
    }
    node.kind.for_each_child(|child| collect_identifiers(child, names));
}

/// Shows the source text, so logs and errors quote the expression as the
/// modeller wrote it.
impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Two expressions are equal when their source text is.
impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Expression {}

impl std::str::FromStr for Expression {
    type Err = ExprError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expression::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    /// EL has no loops, so 4 KiB of text cannot spend 10,000 steps on its
    /// own; a smaller budget shows the counter stops a long sum.
    #[test]
    fn step_budget_stops_a_long_sum() {
        let mut vars = Map::new();
        vars.insert("a".into(), json!(1));
        let sum = format!("${{{}}}", vec!["a"; 500].join("+"));
        let e = Expression::parse(&sum).unwrap();
        assert_eq!(e.eval(&vars).unwrap(), json!(500));
        let err = e.eval_value(&vars, 100).unwrap_err();
        assert_eq!(err, EvalError::StepLimit { limit: 100 });
    }

    #[test]
    fn long_sums_stay_shallow() {
        let sum = format!("${{{}}}", vec!["1"; 2000].join("+"));
        let e = Expression::parse(&sum).unwrap();
        let [Part::Eval(node)] = e.parts.as_slice() else { panic!("one part") };
        assert_eq!(node.depth, 2);
    }
}
