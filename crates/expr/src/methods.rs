//! The only methods an expression may call.
//!
//! JUEL resolves `a.b(…)` by reflection on whatever Java object `a` is, which
//! is how `${''.getClass().forName('java.lang.Runtime')…}` became remote code
//! execution in Activiti and Flowable (see LESSONS.md, Security). kairos has
//! no reflection to restrict: a method exists here when it is in [`METHODS`],
//! which lists what real BPMN files call. Any other name is refused when the
//! expression is parsed, so a definition carrying one never deploys.
//!
//! The date-time methods (Joda-Time names, on `dateTime()`) are checked
//! further at parse time: they parse only on an expression that is known to
//! give a date-time, and no other method parses on one.

use jiff::Timestamp;

use crate::MAX_STRING_BYTES;
use crate::datetime::{self, Unit};
use crate::error::EvalError;
use crate::eval::Evaluator;
use crate::ops;
use crate::value::{Num, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `execution.setVariable(name, value)`; `local`: `setVariableLocal`.
    SetVariable {
        local: bool,
    },
    GetVariable,
    GetVariableLocal,
    HasVariable,
    /// A Java bean getter, read as the property it names
    /// (`execution.getProcessBusinessKey()` is `execution.processBusinessKey`).
    Getter(&'static str),
    Contains,
    StartsWith,
    EndsWith,
    Length,
    IsEmpty,
    ToUpperCase,
    ToLowerCase,
    Trim,
    Equals,
    EqualsIgnoreCase,
    ContainsKey,
    /// `plusDays(n)` and the other `plus…` methods of a date-time.
    Plus(Unit),
    /// `minusDays(n)` and the other `minus…` methods of a date-time.
    Minus(Unit),
    /// Joda's `toDate()`: a `java.util.Date` of the same instant, which here
    /// is the date-time itself.
    ToDate,
    /// A date-time's `toString()`: RFC 3339 in UTC with milliseconds.
    ToString,
    IsBefore,
    IsAfter,
    /// Milliseconds since 1970-01-01T00:00:00Z.
    GetMillis,
    /// Camunda Spin's JSON navigation on a JSON variable (`customer.prop("age").numberValue()`):
    /// a member of an object (a missing one is an error, as in Spin).
    Prop,
    /// Spin's `hasProp(name)`: whether an object has the member.
    HasProp,
    /// Spin's `elements()`: the items of an array.
    Elements,
    /// Spin's typed reads, each an error on a value of another type.
    StringValue,
    NumberValue,
    BoolValue,
    /// Spin's type tests.
    IsType(JsonType),
}

/// The JSON types Spin's `isString()` and its kin test for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonType {
    String,
    Number,
    Boolean,
    Null,
    Object,
    Array,
}

impl Method {
    /// Whether this is a date-time method: callable on a date-time and on
    /// nothing else.
    pub(crate) fn on_date_time(self) -> bool {
        matches!(
            self,
            Method::Plus(_)
                | Method::Minus(_)
                | Method::ToDate
                | Method::ToString
                | Method::IsBefore
                | Method::IsAfter
                | Method::GetMillis
        )
    }

    /// Whether the method gives a date-time.
    pub(crate) fn returns_date_time(self) -> bool {
        matches!(self, Method::Plus(_) | Method::Minus(_) | Method::ToDate)
    }
}

/// Every callable method: its name, what it does and how many arguments it
/// takes. `size()` is `length()` under its Java collection name.
const METHODS: &[(&str, Method, usize)] = &[
    ("setVariable", Method::SetVariable { local: false }, 2),
    ("setVariableLocal", Method::SetVariable { local: true }, 2),
    ("getVariable", Method::GetVariable, 1),
    ("getVariableLocal", Method::GetVariableLocal, 1),
    ("hasVariable", Method::HasVariable, 1),
    ("getId", Method::Getter("id"), 0),
    ("getProcessInstanceId", Method::Getter("processInstanceId"), 0),
    ("getProcessBusinessKey", Method::Getter("processBusinessKey"), 0),
    ("getCurrentActivityId", Method::Getter("currentActivityId"), 0),
    ("getName", Method::Getter("name"), 0),
    ("getAssignee", Method::Getter("assignee"), 0),
    ("contains", Method::Contains, 1),
    ("startsWith", Method::StartsWith, 1),
    ("endsWith", Method::EndsWith, 1),
    ("length", Method::Length, 0),
    ("size", Method::Length, 0),
    ("isEmpty", Method::IsEmpty, 0),
    ("toUpperCase", Method::ToUpperCase, 0),
    ("toLowerCase", Method::ToLowerCase, 0),
    ("trim", Method::Trim, 0),
    ("equals", Method::Equals, 1),
    ("equalsIgnoreCase", Method::EqualsIgnoreCase, 1),
    ("containsKey", Method::ContainsKey, 1),
    ("plusYears", Method::Plus(Unit::Years), 1),
    ("plusMonths", Method::Plus(Unit::Months), 1),
    ("plusWeeks", Method::Plus(Unit::Weeks), 1),
    ("plusDays", Method::Plus(Unit::Days), 1),
    ("plusHours", Method::Plus(Unit::Hours), 1),
    ("plusMinutes", Method::Plus(Unit::Minutes), 1),
    ("plusSeconds", Method::Plus(Unit::Seconds), 1),
    ("plusMillis", Method::Plus(Unit::Millis), 1),
    ("minusYears", Method::Minus(Unit::Years), 1),
    ("minusMonths", Method::Minus(Unit::Months), 1),
    ("minusWeeks", Method::Minus(Unit::Weeks), 1),
    ("minusDays", Method::Minus(Unit::Days), 1),
    ("minusHours", Method::Minus(Unit::Hours), 1),
    ("minusMinutes", Method::Minus(Unit::Minutes), 1),
    ("minusSeconds", Method::Minus(Unit::Seconds), 1),
    ("minusMillis", Method::Minus(Unit::Millis), 1),
    ("toDate", Method::ToDate, 0),
    ("toString", Method::ToString, 0),
    ("isBefore", Method::IsBefore, 1),
    ("isAfter", Method::IsAfter, 1),
    ("getMillis", Method::GetMillis, 0),
    ("prop", Method::Prop, 1),
    ("hasProp", Method::HasProp, 1),
    ("elements", Method::Elements, 0),
    ("stringValue", Method::StringValue, 0),
    ("numberValue", Method::NumberValue, 0),
    ("boolValue", Method::BoolValue, 0),
    ("isString", Method::IsType(JsonType::String), 0),
    ("isNumber", Method::IsType(JsonType::Number), 0),
    ("isBoolean", Method::IsType(JsonType::Boolean), 0),
    ("isNull", Method::IsType(JsonType::Null), 0),
    ("isObject", Method::IsType(JsonType::Object), 0),
    ("isArray", Method::IsType(JsonType::Array), 0),
];

/// Looks a method up by name: `Some((method, arity))` when it is allowed.
pub(crate) fn lookup(name: &str) -> Option<(Method, usize)> {
    METHODS.iter().find(|(n, ..)| *n == name).map(|&(_, m, arity)| (m, arity))
}

impl Evaluator<'_> {
    /// Calls `method` on `target`; `name` is the method as written, for errors.
    pub(crate) fn call(
        &mut self,
        method: Method,
        name: &str,
        target: Value,
        args: Vec<Value>,
        pos: usize,
    ) -> Result<Value, EvalError> {
        let wrong =
            |target: &Value| EvalError::type_error(pos, format!("cannot call '{name}' on {}", target.describe()));
        if let Method::SetVariable { local } = method {
            if !matches!(target, Value::Execution | Value::Task) {
                return Err(wrong(&target));
            }
            let mut args = args.into_iter();
            let var = string_arg(name, &args.next().unwrap_or(Value::Null), pos)?;
            let value = args.next().unwrap_or(Value::Null).into_json()?;
            self.ctx.set_variable(&var, value, local).map_err(|why| EvalError::type_error(pos, why))?;
            return Ok(Value::Null);
        }
        let arg = args.into_iter().next().unwrap_or(Value::Null);
        if let Value::DateTime(at) = target {
            return date_time_call(method, name, at, &arg, pos);
        }
        Ok(match (method, &target) {
            (Method::GetVariable | Method::GetVariableLocal | Method::HasVariable, Value::Execution | Value::Task) => {
                let var = string_arg(name, &arg, pos)?;
                let found = match method {
                    Method::GetVariableLocal => self.ctx.local_variable(&var),
                    _ => self.ctx.variable(&var),
                };
                match method {
                    Method::HasVariable => Value::Bool(found.is_some()),
                    // A missing variable is null here: this is how models test
                    // for absence (`${execution.getVariable('x') == null}`).
                    _ => found.map_or(Value::Null, Value::from_json),
                }
            }
            (Method::Getter(property), Value::Execution | Value::Task) => self.property(target, property, pos)?,
            (Method::Length, Value::Str(s)) => Value::Int(count(s.chars().count())),
            (Method::Length, Value::List(l)) => Value::Int(count(l.len())),
            (Method::Length, Value::Object(o)) => Value::Int(count(o.len())),
            (Method::IsEmpty, Value::Str(s)) => Value::Bool(s.is_empty()),
            (Method::IsEmpty, Value::List(l)) => Value::Bool(l.is_empty()),
            (Method::IsEmpty, Value::Object(o)) => Value::Bool(o.is_empty()),
            (Method::Contains, Value::Str(s)) => Value::Bool(s.contains(string_arg(name, &arg, pos)?.as_str())),
            (Method::Contains, Value::List(l)) => {
                self.tick(l.len())?;
                Value::Bool(l.iter().any(|item| ops::same(&arg, item)))
            }
            (Method::StartsWith, Value::Str(s)) => Value::Bool(s.starts_with(string_arg(name, &arg, pos)?.as_str())),
            (Method::EndsWith, Value::Str(s)) => Value::Bool(s.ends_with(string_arg(name, &arg, pos)?.as_str())),
            (Method::ToUpperCase, Value::Str(s)) => Value::Str(bounded(s.to_uppercase(), pos)?),
            (Method::ToLowerCase, Value::Str(s)) => Value::Str(bounded(s.to_lowercase(), pos)?),
            // Java's trim: strips control characters and spaces (<= U+0020).
            (Method::Trim, Value::Str(s)) => Value::Str(s.trim_matches(|c: char| c <= ' ').to_owned()),
            (Method::Equals, Value::Null) => return Err(wrong(&target)),
            (Method::Equals, Value::Execution | Value::Task) => Value::Bool(target == arg),
            (Method::Equals, _) => match arg.into_json() {
                Ok(arg) => Value::Bool(ops::same(&target, &arg)),
                Err(_) => Value::Bool(false),
            },
            (Method::EqualsIgnoreCase, Value::Str(s)) => match arg {
                Value::Null => Value::Bool(false),
                _ => Value::Bool(s.to_lowercase() == string_arg(name, &arg, pos)?.to_lowercase()),
            },
            (Method::ContainsKey | Method::HasProp, Value::Object(o)) => {
                Value::Bool(o.contains_key(&string_arg(name, &arg, pos)?))
            }
            (Method::Prop, Value::Object(o)) => {
                let key = string_arg(name, &arg, pos)?;
                match o.get(&key) {
                    Some(v) => Value::from_json(v.clone()),
                    None => return Err(EvalError::type_error(pos, format!("the JSON object has no property '{key}'"))),
                }
            }
            (Method::Elements, Value::List(_)) => target,
            (Method::StringValue, Value::Str(_))
            | (Method::NumberValue, Value::Int(_) | Value::Float(_))
            | (Method::BoolValue, Value::Bool(_)) => target,
            (Method::IsType(t), _) => Value::Bool(matches!(
                (t, &target),
                (JsonType::String, Value::Str(_))
                    | (JsonType::Number, Value::Int(_) | Value::Float(_))
                    | (JsonType::Boolean, Value::Bool(_))
                    | (JsonType::Null, Value::Null)
                    | (JsonType::Object, Value::Object(_))
                    | (JsonType::Array, Value::List(_))
            )),
            _ => return Err(wrong(&target)),
        })
    }
}

/// A date-time method on `at`. Any other method is an error naming it; the
/// parser already refuses those, except on a choice such as
/// `(c ? dateTime() : 'x').trim()`.
fn date_time_call(method: Method, name: &str, at: Timestamp, arg: &Value, pos: usize) -> Result<Value, EvalError> {
    match method {
        Method::Plus(unit) | Method::Minus(unit) => {
            let n = int_arg(name, arg, pos)?;
            let n = if matches!(method, Method::Minus(_)) { n.checked_neg() } else { Some(n) };
            let shifted = n.and_then(|n| datetime::shift(at, unit, n));
            shifted.map(Value::DateTime).ok_or_else(|| EvalError::Overflow { operator: name.to_owned(), position: pos })
        }
        Method::ToDate => Ok(Value::DateTime(at)),
        Method::ToString => Ok(Value::Str(datetime::format(at))),
        Method::IsBefore => Ok(Value::Bool(at < instant_arg(name, arg, pos)?)),
        Method::IsAfter => Ok(Value::Bool(at > instant_arg(name, arg, pos)?)),
        Method::GetMillis => Ok(Value::Int(at.as_millisecond())),
        _ => Err(EvalError::type_error(pos, format!("cannot call '{name}' on a date-time"))),
    }
}

/// An integer argument (Joda's `int`): an integer, an integral float or a
/// string holding one, as EL coerces; null and fractions are refused.
fn int_arg(name: &str, arg: &Value, pos: usize) -> Result<i64, EvalError> {
    let refuse = || EvalError::type_error(pos, format!("'{name}' needs an integer argument, not {}", arg.describe()));
    match arg {
        Value::Int(_) | Value::Float(_) | Value::Str(_) => match arg.to_num(pos).map_err(|_| refuse())? {
            Num::Int(i) => Ok(i),
            Num::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            Num::Float(_) => Err(refuse()),
        },
        _ => Err(refuse()),
    }
}

/// The argument of `isBefore`/`isAfter`: a date-time, or an RFC 3339 string.
fn instant_arg(name: &str, arg: &Value, pos: usize) -> Result<Timestamp, EvalError> {
    let at = match arg {
        Value::DateTime(at) => Some(*at),
        Value::Str(s) => datetime::parse(s),
        _ => None,
    };
    at.ok_or_else(|| {
        let message = format!("'{name}' needs a date-time or an RFC 3339 string, not {}", arg.describe());
        EvalError::type_error(pos, message)
    })
}

/// A string argument, coerced as EL coerces arguments of a `String`
/// parameter, except that null is refused rather than read as `""`.
fn string_arg(name: &str, arg: &Value, pos: usize) -> Result<String, EvalError> {
    match arg {
        Value::Str(s) => Ok(s.clone()),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => arg.to_text(pos),
        _ => Err(EvalError::type_error(pos, format!("'{name}' needs a string argument, not {}", arg.describe()))),
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) fn bounded(s: String, position: usize) -> Result<String, EvalError> {
    if s.len() > MAX_STRING_BYTES {
        return Err(EvalError::StringTooLong { limit: MAX_STRING_BYTES, position });
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whitelisted_names_resolve() {
        assert_eq!(lookup("getVariable"), Some((Method::GetVariable, 1)));
        assert_eq!(lookup("size"), Some((Method::Length, 0)));
        assert_eq!(lookup("plusDays"), Some((Method::Plus(Unit::Days), 1)));
        assert_eq!(lookup("toString"), Some((Method::ToString, 0)));
        for refused in ["getClass", "forName", "invoke", "exec", "wait", "notify", "hashCode", "withZone", "toDateTime"]
        {
            assert_eq!(lookup(refused), None, "{refused}");
        }
    }

    #[test]
    fn date_time_methods_are_their_own_set() {
        for (name, method, _) in METHODS {
            if method.returns_date_time() {
                assert!(method.on_date_time(), "{name}");
            }
            let joda = ["plus", "minus", "toDate", "toString", "isBefore", "isAfter", "getMillis"];
            assert_eq!(method.on_date_time(), joda.iter().any(|p| name.starts_with(p)), "{name}");
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, (name, ..)) in METHODS.iter().enumerate() {
            assert!(METHODS[i + 1..].iter().all(|(other, ..)| other != name), "{name}");
        }
    }
}
