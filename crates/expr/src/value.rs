//! The evaluator's values and the EL coercions between them (EL 2.2 §1.18).
//!
//! Variables arrive and results leave as `serde_json::Value`; inside, numbers
//! are split into integers and floats because EL's arithmetic depends on the
//! difference (`7 + 2` is the integer 9, `7 + 2.0` the float 9.0), the
//! `execution`/`task` objects are values of their own that only the context
//! can look into, and a date-time (from `dateTime()`) is an instant until it
//! leaves as an RFC 3339 string.

use jiff::Timestamp;
use serde_json::Value as Json;

use crate::datetime;
use crate::error::EvalError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Json>),
    Object(serde_json::Map<String, Json>),
    /// The implicit `execution` object; its fields come from the context.
    Execution,
    /// The implicit `task` object; its fields come from the context.
    Task,
    /// A date-time from `dateTime()`, whole milliseconds. Variables never
    /// hold one: it becomes an RFC 3339 string at the JSON boundary.
    DateTime(Timestamp),
}

/// A number after coercion: EL decides per operation whether to compute in
/// `Long` or `Double`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl Value {
    /// JSON integers that fit an i64 stay integers; anything else (a float,
    /// or an unsigned integer above i64::MAX) becomes a float.
    pub fn from_json(json: Json) -> Value {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::Str(s),
            Json::Array(a) => Value::List(a),
            Json::Object(o) => Value::Object(o),
        }
    }

    pub fn into_json(self) -> Result<Json, EvalError> {
        Ok(match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Int(i) => Json::from(i),
            Value::Float(f) => match serde_json::Number::from_f64(f) {
                Some(n) => Json::Number(n),
                None => return Err(EvalError::Overflow { operator: "result".into(), position: 0 }),
            },
            Value::Str(s) => Json::String(s),
            Value::List(a) => Json::Array(a),
            Value::Object(o) => Json::Object(o),
            Value::DateTime(t) => Json::String(datetime::format(t)),
            Value::Execution | Value::Task => {
                let found = self.describe();
                return Err(EvalError::ResultType { expected: "a value", found });
            }
        })
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Object(_) => "object",
            Value::Execution => "the execution object",
            Value::Task => "the task object",
            Value::DateTime(_) => "date-time",
        }
    }

    /// The type and, for scalars, the value: `string 'abc'`, `integer 5`.
    /// Strings are cut to 40 characters so messages stay one short line.
    pub fn describe(&self) -> String {
        match self {
            Value::Bool(b) => format!("boolean {b}"),
            Value::Int(i) => format!("integer {i}"),
            Value::Float(f) => format!("float {f:?}"),
            Value::Str(s) if s.chars().count() > 40 => {
                format!("string '{}…'", s.chars().take(40).collect::<String>())
            }
            Value::Str(s) => format!("string '{s}'"),
            Value::DateTime(t) => format!("date-time {}", datetime::format(*t)),
            other => other.type_name().to_owned(),
        }
    }

    /// EL's coercion to a number: null and `""` are 0, a string must parse
    /// completely (as a float when it contains `.`/`e`/`E`, else as an
    /// integer). Booleans are not numbers, as in EL.
    pub fn to_num(&self, position: usize) -> Result<Num, EvalError> {
        match self {
            Value::Null => Ok(Num::Int(0)),
            Value::Int(i) => Ok(Num::Int(*i)),
            Value::Float(f) => Ok(Num::Float(*f)),
            Value::Str(s) if s.is_empty() => Ok(Num::Int(0)),
            Value::Str(s) => parse_number(s)
                .ok_or_else(|| EvalError::type_error(position, format!("cannot use {} as a number", self.describe()))),
            other => Err(EvalError::type_error(position, format!("cannot use {} as a number", other.describe()))),
        }
    }

    /// EL's coercion to a boolean, made stricter: null and `""` are false,
    /// `"true"`/`"false"` (any case) are themselves, and any other string is
    /// an error instead of EL's silent `false`, because `'yes'` read as false
    /// is exactly the kind of quiet wrong turn conditions must not take.
    pub fn to_bool(&self, position: usize) -> Result<bool, EvalError> {
        match self {
            Value::Null => Ok(false),
            Value::Bool(b) => Ok(*b),
            Value::Str(s) if s.is_empty() || s.eq_ignore_ascii_case("false") => Ok(false),
            Value::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            other => Err(EvalError::type_error(position, format!("cannot use {} as a boolean", other.describe()))),
        }
    }

    /// EL's coercion to a string: null is `""`, numbers and booleans print as
    /// Java would (`2.0` for a float), lists and objects as JSON, a date-time
    /// as RFC 3339 in UTC with milliseconds.
    pub fn to_text(&self, position: usize) -> Result<String, EvalError> {
        match self {
            Value::Null => Ok(String::new()),
            Value::Bool(b) => Ok(b.to_string()),
            Value::Int(i) => Ok(i.to_string()),
            Value::Float(f) => Ok(format!("{f:?}")),
            Value::Str(s) => Ok(s.clone()),
            Value::List(_) | Value::Object(_) => Ok(self.clone().into_json()?.to_string()),
            Value::DateTime(t) => Ok(datetime::format(*t)),
            Value::Execution | Value::Task => {
                Err(EvalError::type_error(position, format!("cannot use {} as a string", self.describe())))
            }
        }
    }
}

/// Parses a whole string as an EL number. Only digits, one sign, `.` and an
/// exponent are accepted, so Rust's `"inf"`/`"NaN"` spellings are refused.
fn parse_number(s: &str) -> Option<Num> {
    let allowed = |c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E');
    if !s.chars().all(allowed) {
        return None;
    }
    if s.contains(['.', 'e', 'E']) {
        s.parse::<f64>().ok().filter(|f| f.is_finite()).map(Num::Float)
    } else {
        s.parse::<i64>().ok().map(Num::Int)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_numbers_keep_integer_or_float() {
        assert_eq!(Value::from_json(json!(3)), Value::Int(3));
        assert_eq!(Value::from_json(json!(3.0)), Value::Float(3.0));
        assert_eq!(Value::from_json(json!(u64::MAX)), Value::Float(u64::MAX as f64));
        assert_eq!(Value::Float(2.0).into_json().unwrap(), json!(2.0));
    }

    #[test]
    fn string_to_number() {
        let n = |s: &str| Value::Str(s.into()).to_num(0);
        assert_eq!(n("42").unwrap(), Num::Int(42));
        assert_eq!(n("-4.5").unwrap(), Num::Float(-4.5));
        assert_eq!(n("1e2").unwrap(), Num::Float(100.0));
        assert_eq!(n("").unwrap(), Num::Int(0));
        for bad in ["abc", "inf", "NaN", " 1", "1e999", "99999999999999999999"] {
            assert!(n(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn texts() {
        assert_eq!(Value::Float(2.0).to_text(0).unwrap(), "2.0");
        assert_eq!(Value::Null.to_text(0).unwrap(), "");
        assert_eq!(Value::List(vec![json!(1), json!("a")]).to_text(0).unwrap(), r#"[1,"a"]"#);
        assert!(Value::Execution.to_text(0).is_err());
        let at = Value::DateTime("2026-01-05T09:00:00Z".parse().unwrap());
        assert_eq!(at.to_text(0).unwrap(), "2026-01-05T09:00:00.000Z");
        assert_eq!(at.describe(), "date-time 2026-01-05T09:00:00.000Z");
        assert_eq!(at.into_json().unwrap(), json!("2026-01-05T09:00:00.000Z"));
    }

    #[test]
    fn describe_clips_long_strings() {
        let d = Value::Str("x".repeat(100)).describe();
        assert!(d.len() < 60 && d.ends_with("…'"));
    }
}
