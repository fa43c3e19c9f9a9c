//! The crate's two error types.
//!
//! Parsing and evaluation fail at different moments for different people: a
//! [`ExprError`] is found when a process definition is deployed (the modeller
//! fixes the XML), an [`EvalError`] when a running instance reaches the
//! expression (an operator sees an incident). Keeping them apart lets the
//! deployer reject a definition without ever evaluating anything, and lets
//! the engine match on evaluation failures it wants to report differently
//! (an undefined variable versus a division by zero).

/// Why an expression's text was refused.
///
/// `position` is the 0-based character offset into the text handed to
/// [`Expression::parse`](crate::Expression::parse); `line` and `column` are the
/// same place, 1-based, for an expression written over several lines of a BPMN
/// file. The message names the offending token ("unexpected ')'").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at position {position} (line {line}, column {column})")]
pub struct ExprError {
    /// What is wrong, without the position (that is in the other fields).
    pub message: String,
    /// 0-based character offset of the problem.
    pub position: usize,
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based character column of the problem within its line.
    pub column: usize,
}

impl ExprError {
    /// Builds the error for character offset `position` of `chars` (the whole
    /// expression text), working out line and column.
    pub(crate) fn at(chars: &[char], position: usize, message: impl Into<String>) -> Self {
        let before = &chars[..position.min(chars.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let line_start = before.iter().rposition(|&c| c == '\n').map_or(0, |i| i + 1);
        ExprError { message: message.into(), position, line, column: position - line_start + 1 }
    }
}

/// Why evaluating a well-formed expression failed.
///
/// Every variant is an error the operator sees: kairos never turns a failed
/// evaluation into `null` or `false`, because a condition that silently reads
/// a misspelt variable as `false` sends a process down the wrong path without
/// anybody noticing. Positions are 0-based character offsets into the
/// expression's text, pointing at the sub-expression that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// An identifier that is neither a variable in the context nor one of the
    /// implicit objects (`execution`, `task`) the context provides.
    #[error("undefined variable '{name}' at position {position}")]
    UndefinedVariable { name: String, position: usize },
    /// `a.b` or `a['b']` where `a` has no property `b` (an object without the
    /// key, or a property the `execution`/`task` objects do not expose).
    #[error("no property '{property}' on {target} at position {position}")]
    NoSuchProperty { property: String, target: String, position: usize },
    /// `a[i]` outside the list.
    #[error("index {index} is out of bounds for a list of {len} at position {position}")]
    IndexOutOfBounds { index: i64, len: usize, position: usize },
    /// An operator, method or coercion applied to a value of the wrong type,
    /// such as `'abc' + 1`, `true < false` or `5.trim()`.
    #[error("{message} at position {position}")]
    Type { message: String, position: usize },
    /// Integer arithmetic (or a float result) left the representable range,
    /// or date-time arithmetic (`plusYears(100000)`) left years -9999 to
    /// 9999; `operator` is then the method's name.
    #[error("numeric overflow in '{operator}' at position {position}")]
    Overflow { operator: String, position: usize },
    /// `/`, `div`, `%` or `mod` by zero.
    #[error("division by zero at position {position}")]
    DivisionByZero { position: usize },
    /// [`eval_bool`](crate::Expression::eval_bool) or
    /// [`eval_string`](crate::Expression::eval_string) got a result of
    /// another type.
    #[error("the expression gave {found} where {expected} is needed")]
    ResultType { expected: &'static str, found: String },
    /// Evaluation visited more than [`MAX_STEPS`](crate::MAX_STEPS) nodes
    /// and list elements.
    #[error("evaluation took more than {limit} steps")]
    StepLimit { limit: usize },
    /// A string built by the expression grew past
    /// [`MAX_STRING_BYTES`](crate::MAX_STRING_BYTES).
    #[error("a string result is longer than {limit} bytes at position {position}")]
    StringTooLong { limit: usize, position: usize },
    /// `dateTime()` in a context that has no clock
    /// ([`Context::now`](crate::Context::now) returned `None`).
    #[error("dateTime() needs a clock, which this context does not provide, at position {position}")]
    NoClock { position: usize },
}

impl EvalError {
    pub(crate) fn type_error(position: usize, message: impl Into<String>) -> Self {
        EvalError::Type { message: message.into(), position }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn line_and_column_follow_newlines() {
        let e = ExprError::at(&chars("${a +\n  )}"), 8, "unexpected ')'");
        assert_eq!((e.position, e.line, e.column), (8, 2, 3));
        assert_eq!(e.to_string(), "unexpected ')' at position 8 (line 2, column 3)");
    }

    #[test]
    fn positions_past_the_end_do_not_panic() {
        let e = ExprError::at(&chars("ab"), 9, "x");
        assert_eq!((e.line, e.column), (1, 10));
    }
}
