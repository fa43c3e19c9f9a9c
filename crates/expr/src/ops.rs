//! The binary and unary operators, following EL 2.2 §1.7–§1.10.
//!
//! Two deliberate departures from EL, both towards "fail loudly":
//! * integer overflow is an error (Java `long` arithmetic would wrap), and a
//!   float result that is infinite is an error too;
//! * division by zero is an error, where EL gives `Infinity` for `/`. A
//!   business condition such as `${done / total > 0.5}` with `total = 0`
//!   would otherwise compare `Infinity` and quietly take a branch.
//!
//! EL has no string concatenation with `+`: `'a' + 'b'` coerces both sides
//! to numbers and fails. Text is joined with a composite expression instead:
//! `"${first} ${last}"`.

use jiff::Timestamp;
use serde_json::Value as Json;

use crate::ast::BinaryOp;
use crate::datetime;
use crate::error::EvalError;
use crate::value::{Num, Value};

/// `+ - * / %` (EL §1.7). Both operands null gives the integer 0; a float (or
/// a string that reads as one) makes the operation a float operation, except
/// `/`, which EL always computes in floats (`7 / 2` is 3.5).
pub(crate) fn arithmetic(op: BinaryOp, a: &Value, b: &Value, pos: usize) -> Result<Value, EvalError> {
    if matches!((a, b), (Value::Null, Value::Null)) {
        return Ok(Value::Int(0));
    }
    let (x, y) = (a.to_num(pos).map_err(|e| concat_hint(op, e))?, b.to_num(pos).map_err(|e| concat_hint(op, e))?);
    let overflow = || EvalError::Overflow { operator: op.symbol().to_owned(), position: pos };
    match (x, y) {
        (Num::Int(x), Num::Int(y)) if op != BinaryOp::Div => {
            let r = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                _ if y == 0 => return Err(EvalError::DivisionByZero { position: pos }),
                // i64::MIN % -1 overflows in the CPU but is 0 in mathematics and Java.
                _ => Some(x.wrapping_rem(y)),
            };
            r.map(Value::Int).ok_or_else(overflow)
        }
        (x, y) => {
            let (x, y) = (x.as_f64(), y.as_f64());
            if matches!(op, BinaryOp::Div | BinaryOp::Mod) && y == 0.0 {
                return Err(EvalError::DivisionByZero { position: pos });
            }
            let r = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                _ => x % y,
            };
            if r.is_finite() { Ok(Value::Float(r)) } else { Err(overflow()) }
        }
    }
}

/// Points people who expected Java-style `+` concatenation at templates.
fn concat_hint(op: BinaryOp, e: EvalError) -> EvalError {
    match (op, e) {
        (BinaryOp::Add, EvalError::Type { message, position }) => EvalError::Type {
            message: format!("{message} ('+' only adds numbers; join text with \"${{a}}${{b}}\")"),
            position,
        },
        (_, e) => e,
    }
}

/// Unary minus: null is 0, strings coerce as in arithmetic.
pub(crate) fn negate(v: &Value, pos: usize) -> Result<Value, EvalError> {
    match v.to_num(pos)? {
        Num::Float(f) => Ok(Value::Float(-f)),
        Num::Int(i) => {
            i.checked_neg().map(Value::Int).ok_or(EvalError::Overflow { operator: "-".to_owned(), position: pos })
        }
    }
}

/// `< > <= >=` (EL §1.8.1). Null on either side is false (but `null <= null`
/// is true); a date-time on either side compares instants, reading a string
/// on the other as RFC 3339; a number on either side compares numerically,
/// coercing a string on the other; two strings compare lexically. Booleans,
/// lists and objects have no order here: comparing them is an error.
pub(crate) fn compare(op: BinaryOp, a: &Value, b: &Value, pos: usize) -> Result<bool, EvalError> {
    use std::cmp::Ordering;
    let ordering = match (a, b) {
        (Value::Null, Value::Null) => return Ok(matches!(op, BinaryOp::Le | BinaryOp::Ge)),
        (Value::Null, _) | (_, Value::Null) => return Ok(false),
        (Value::DateTime(_), _) | (_, Value::DateTime(_)) => {
            let (x, y) = instants(a, b, op.symbol(), pos)?;
            x.cmp(&y)
        }
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Int(_) | Value::Float(_) | Value::Str(_), Value::Int(_) | Value::Float(_) | Value::Str(_)) => {
            match numeric_pair(a, b, pos)? {
                (Num::Int(x), Num::Int(y)) => x.cmp(&y),
                (x, y) => x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal),
            }
        }
        _ => {
            let message = format!("cannot compare {} with {} using '{}'", a.describe(), b.describe(), op.symbol());
            return Err(EvalError::type_error(pos, message));
        }
    };
    Ok(match op {
        BinaryOp::Lt => ordering.is_lt(),
        BinaryOp::Gt => ordering.is_gt(),
        BinaryOp::Le => ordering.is_le(),
        _ => ordering.is_ge(),
    })
}

/// Both operands as instants, for an operator with a date-time on one side:
/// the other side must be a date-time too or an RFC 3339 string.
fn instants(a: &Value, b: &Value, symbol: &str, pos: usize) -> Result<(Timestamp, Timestamp), EvalError> {
    let instant = |v: &Value| match v {
        Value::DateTime(t) => Some(*t),
        Value::Str(s) => datetime::parse(s),
        _ => None,
    };
    match (instant(a), instant(b)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => {
            let message = format!("cannot compare {} with {} using '{symbol}'", a.describe(), b.describe());
            Err(EvalError::type_error(pos, message))
        }
    }
}

/// Both operands as numbers. A float on either side (or a string that reads
/// as one) makes the callers compare as floats, as EL coerces both to Double.
fn numeric_pair(a: &Value, b: &Value, pos: usize) -> Result<(Num, Num), EvalError> {
    Ok((a.to_num(pos)?, b.to_num(pos)?))
}

/// `== !=` (EL §1.8.2). Null equals only null; a date-time on either side
/// compares instants (the other side a date-time or an RFC 3339 string, else
/// an error); a number on either side compares numerically (so `'5' == 5`,
/// and `'abc' == 5` is an error as in EL); then a boolean on either side
/// compares as booleans; then strings.
/// Lists and objects are equal when their JSON is; a list or object is never
/// equal to a scalar.
pub(crate) fn equals(a: &Value, b: &Value, pos: usize) -> Result<bool, EvalError> {
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::DateTime(_), _) | (_, Value::DateTime(_)) => {
            let (x, y) = instants(a, b, "==", pos)?;
            x == y
        }
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_) | Value::Str(_))
        | (Value::Str(_), Value::Int(_) | Value::Float(_)) => match numeric_pair(a, b, pos)? {
            (Num::Int(x), Num::Int(y)) => x == y,
            (x, y) => x.as_f64() == y.as_f64(),
        },
        (Value::Bool(_), Value::Bool(_) | Value::Str(_)) | (Value::Str(_), Value::Bool(_)) => {
            a.to_bool(pos)? == b.to_bool(pos)?
        }
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => x == y,
        (Value::Object(x), Value::Object(y)) => x == y,
        (Value::Execution, Value::Execution) | (Value::Task, Value::Task) => true,
        (Value::Bool(_), Value::Int(_) | Value::Float(_)) | (Value::Int(_) | Value::Float(_), Value::Bool(_)) => {
            let message = format!("cannot compare {} with {}", a.describe(), b.describe());
            return Err(EvalError::type_error(pos, message));
        }
        _ => false,
    })
}

/// Java's `equals` as the whitelisted methods (`equals`, `contains` on a list)
/// use it: same type and value, no coercion; integers and floats compare by
/// value because JSON does not keep the difference reliably.
pub(crate) fn same(a: &Value, b: &Json) -> bool {
    match (a, b) {
        (Value::Null, Json::Null) => true,
        (Value::Bool(x), Json::Bool(y)) => x == y,
        (Value::Int(x), Json::Number(y)) => match y.as_i64() {
            Some(y) => *x == y,
            None => y.as_f64() == Some(*x as f64),
        },
        (Value::Float(x), Json::Number(y)) => y.as_f64() == Some(*x),
        (Value::Str(x), Json::String(y)) => x == y,
        (Value::List(x), Json::Array(y)) => x == y,
        (Value::Object(x), Json::Object(y)) => x == y,
        _ => false,
    }
}
