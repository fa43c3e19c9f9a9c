//! A context for tests: variables, an optional local scope and optional
//! `execution`/`task` objects, built from JSON.

#![allow(dead_code)]

use kairos_expr::{Context, EvalError, ExecutionInfo, Expression, TaskInfo};
use serde_json::{Map, Value, json};

#[derive(Default)]
pub struct TestContext {
    pub vars: Map<String, Value>,
    pub locals: Map<String, Value>,
    pub execution: Option<ExecutionInfo>,
    pub task: Option<TaskInfo>,
    pub now: Option<jiff::Timestamp>,
}

impl Context for TestContext {
    fn variable(&self, name: &str) -> Option<Value> {
        self.locals.get(name).or_else(|| self.vars.get(name)).cloned()
    }
    fn local_variable(&self, name: &str) -> Option<Value> {
        self.locals.get(name).cloned()
    }
    fn execution(&self) -> Option<&ExecutionInfo> {
        self.execution.as_ref()
    }
    fn task(&self) -> Option<&TaskInfo> {
        self.task.as_ref()
    }
    fn now(&self) -> Option<jiff::Timestamp> {
        self.now
    }
}

/// The variables most tables evaluate against.
pub fn standard() -> TestContext {
    let vars = json!({
        "n": 5, "m": 2, "f": 2.5, "s": "abc", "num": "42", "dec": "1.5",
        "t": true, "no": false, "nil": null, "strtrue": "TRUE",
        "list": [1, "two", 3.0, null], "emptyList": [], "emptyObj": {},
        "obj": { "a": 1, "b": { "c": "deep" }, "blank": "" },
        "big": i64::MAX, "small": i64::MIN, "amount": 1500, "name": "  Ada Lovelace ",
        "deadline": "2026-01-31T17:00:00+01:00",
    });
    let Value::Object(vars) = vars else { unreachable!() };
    TestContext { vars, ..TestContext::default() }
}

/// Parses and evaluates, panicking with the text on a parse error.
pub fn eval(text: &str, ctx: &TestContext) -> Result<Value, EvalError> {
    Expression::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).eval(ctx)
}
