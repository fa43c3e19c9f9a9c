//! Sandboxed JavaScript for BPMN scripts (script tasks, script conditions, `camunda:script`
//! parameters and listeners).
//!
//! Why QuickJS (`rquickjs`) and not Boa: QuickJS has a hard memory limit
//! (`Runtime::set_memory_limit`), a stack limit and an interrupt handler; Boa has no memory
//! limit, so a string-doubling script could take the process down.
//!
//! The sandbox: a fresh runtime and context per evaluation (nothing leaks between instances),
//! no module loader, no std/os modules, no timers, no console; the script sees only the
//! variables passed in and the `execution` object. Values cross as JSON text only.
//!
//! CPU: a step budget counted in the interrupt handler (QuickJS calls it every few thousand
//! bytecode operations), so a loop ends after the same amount of work on any machine, plus a
//! wall-time backstop for work that runs between interrupt checks (big native calls).

use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Function, Runtime, Value};
use serde_json::{Map, Value as Json};

/// Limits of one evaluation.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Bytes the JavaScript heap may take.
    pub memory_bytes: usize,
    /// Bytes of native stack (bounds recursion).
    pub stack_bytes: usize,
    /// Interrupt-handler calls before the script is stopped (deterministic CPU budget).
    pub steps: u64,
    /// Wall-time backstop.
    pub wall_time: Duration,
    /// Bytes of the JSON result and set variables together.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            stack_bytes: 512 << 10,
            // QuickJS asks the interrupt handler every 10,000 bytecode operations: 2,000 calls are
            // 20 million operations, about half a second of a tight loop in a release build on
            // this project's reference machine (2 cores); debug builds are 5× slower.
            steps: 2_000,
            wall_time: Duration::from_secs(2),
            output_bytes: 1 << 20,
        }
    }
}

/// What the engine tells the script about where it runs (`execution.getId()` and friends).
#[derive(Debug, Clone, Default)]
pub struct ExecutionInfo {
    pub process_instance_id: Option<String>,
    pub execution_id: Option<String>,
    pub current_activity_id: Option<String>,
}

/// The result of one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The value of the last expression statement (`null` for `undefined`).
    pub value: Json,
    /// Variables the script set with `execution.setVariable`, in order of last write.
    pub set: Map<String, Json>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ScriptError {
    #[error("script format '{0}' is not supported (only javascript, ecmascript, js)")]
    UnsupportedLanguage(String),
    #[error("script error{}: {message}", at(*line))]
    Script { message: String, line: Option<u32> },
    #[error("script stopped: it ran longer than its CPU limit")]
    CpuLimit,
    #[error("script stopped: it used more than its memory limit of {0} bytes")]
    MemoryLimit(usize),
    #[error("script result is not JSON: {0}")]
    NotJson(String),
    #[error("script output is larger than the limit of {0} bytes")]
    OutputTooLarge(usize),
    #[error("script engine failed: {0}")]
    Engine(String),
}

fn at(line: Option<u32>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

/// Whether `language` (a BPMN `scriptFormat`) is run by [`evaluate`].
pub fn is_javascript(language: &str) -> bool {
    matches!(
        language.trim().to_ascii_lowercase().as_str(),
        "javascript" | "ecmascript" | "js" | "application/javascript" | "text/javascript"
    )
}

/// The prelude: builds `execution` over closures so the script cannot reach the set map.
const PRELUDE: &str = r#"(function (vars, info) {
  var set = {};
  var own = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };
  var execution = {
    getVariable: function (n) { n = String(n); return own(set, n) ? set[n] : (own(vars, n) ? vars[n] : null); },
    setVariable: function (n, v) { n = String(n); set[n] = v === undefined ? null : v; vars[n] = set[n]; },
    hasVariable: function (n) { n = String(n); return own(vars, n); },
    getVariables: function () { var r = {}; for (var k in vars) if (own(vars, k)) r[k] = vars[k]; return r; },
    getProcessInstanceId: function () { return info.processInstanceId; },
    getId: function () { return info.id; },
    getCurrentActivityId: function () { return info.currentActivityId; }
  };
  for (var k in vars) if (own(vars, k) && k !== 'execution') globalThis[k] = vars[k];
  globalThis.execution = execution;
  return function () { return JSON.stringify(set); };
})"#;

/// Runs `source` in a fresh sandbox. See the crate docs for what the script can see.
pub fn evaluate(
    language: &str,
    source: &str,
    variables: &Map<String, Json>,
    execution: &ExecutionInfo,
    limits: &Limits,
) -> Result<Outcome, ScriptError> {
    if !is_javascript(language) {
        return Err(ScriptError::UnsupportedLanguage(language.to_owned()));
    }
    let engine = |e: rquickjs::Error| ScriptError::Engine(e.to_string());
    let rt = Runtime::new().map_err(engine)?;
    rt.set_memory_limit(limits.memory_bytes);
    rt.set_max_stack_size(limits.stack_bytes);
    let budget = limits.steps;
    let deadline = Instant::now() + limits.wall_time;
    let mut steps = 0u64;
    let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stopped.clone();
    rt.set_interrupt_handler(Some(Box::new(move || {
        steps += 1;
        let stop = steps > budget || Instant::now() > deadline;
        if stop {
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        stop
    })));
    let ctx = Context::full(&rt).map_err(engine)?;
    let vars_json = Json::Object(variables.clone()).to_string();
    let info_json = serde_json::json!({
        "processInstanceId": execution.process_instance_id,
        "id": execution.execution_id,
        "currentActivityId": execution.current_activity_id,
    })
    .to_string();
    let result = ctx.with(|ctx| -> Result<(String, String), ScriptError> {
        let fail = |ctx: &Ctx<'_>, e: rquickjs::Error| caught(ctx, e);
        let prelude: Function = ctx.eval(PRELUDE).map_err(|e| fail(&ctx, e))?;
        let vars = ctx.json_parse(vars_json).map_err(|e| fail(&ctx, e))?;
        let info = ctx.json_parse(info_json).map_err(|e| fail(&ctx, e))?;
        let take: Function = prelude.call((vars, info)).map_err(|e| fail(&ctx, e))?;
        let value: Value = ctx.eval(source.as_bytes().to_vec()).map_err(|e| fail(&ctx, e))?;
        if value.is_promise() {
            // `import()` and async functions: nothing runs them to their end (no event loop).
            return Err(ScriptError::NotJson("the last expression is a promise: scripts run synchronously".into()));
        }
        if value.is_function() || value.is_symbol() || value.as_big_int().is_some() {
            return Err(ScriptError::NotJson(format!("the last expression is a {}", value.type_name())));
        }
        let value = if value.is_undefined() {
            "null".to_owned()
        } else {
            match ctx.json_stringify(value).map_err(|e| fail(&ctx, e))? {
                Some(s) => s.to_string().map_err(engine)?,
                None => "null".to_owned(),
            }
        };
        let set: String = take.call(()).map_err(|e| fail(&ctx, e))?;
        Ok((value, set))
    });
    let (value, set) = match result {
        Err(_) if stopped.load(std::sync::atomic::Ordering::Relaxed) => {
            return Err(ScriptError::CpuLimit);
        }
        Err(ScriptError::MemoryLimit(_)) => return Err(ScriptError::MemoryLimit(limits.memory_bytes)),
        r => r?,
    };
    if value.len() + set.len() > limits.output_bytes {
        return Err(ScriptError::OutputTooLarge(limits.output_bytes));
    }
    let value: Json = serde_json::from_str(&value).map_err(|e| ScriptError::NotJson(e.to_string()))?;
    let set = match serde_json::from_str(&set) {
        Ok(Json::Object(m)) => m,
        _ => return Err(ScriptError::NotJson("set variables".into())),
    };
    Ok(Outcome { value, set })
}

/// Checks that `source` is a script [`evaluate`] can run: a JavaScript format and no syntax
/// error (with its line). Nothing of the script runs: it is compiled as a function body in a
/// fresh, limited sandbox (QuickJS compiles only modules without running them, and a module's
/// strict mode would refuse scripts that run as plain scripts).
pub fn check(language: &str, source: &str) -> Result<(), ScriptError> {
    if !is_javascript(language) {
        return Err(ScriptError::UnsupportedLanguage(language.to_owned()));
    }
    let engine = |e: rquickjs::Error| ScriptError::Engine(e.to_string());
    let limits = Limits::default();
    let rt = Runtime::new().map_err(engine)?;
    rt.set_memory_limit(limits.memory_bytes);
    rt.set_max_stack_size(limits.stack_bytes);
    let deadline = Instant::now() + limits.wall_time;
    rt.set_interrupt_handler(Some(Box::new(move || Instant::now() > deadline)));
    let ctx = Context::full(&rt).map_err(engine)?;
    ctx.with(|ctx| {
        let compile: Function = ctx.eval("(function (src) { new Function(src); })").map_err(|e| caught(&ctx, e))?;
        compile.call::<_, ()>((source,)).map_err(|e| match caught(&ctx, e) {
            // The constructor's wrapper puts the body two lines down.
            ScriptError::Script { message, line } => {
                ScriptError::Script { message, line: line.map(|l| l.saturating_sub(2).max(1)) }
            }
            other => other,
        })
    })
}

/// Turns a QuickJS error into a [`ScriptError`], taking the thrown value's message and line.
fn caught(ctx: &Ctx<'_>, e: rquickjs::Error) -> ScriptError {
    if !matches!(e, rquickjs::Error::Exception) {
        return match e {
            rquickjs::Error::Allocation => ScriptError::MemoryLimit(0),
            other => ScriptError::Engine(other.to_string()),
        };
    }
    let thrown = ctx.catch();
    if let Some(ex) = thrown.as_exception() {
        let message = ex.message().unwrap_or_default();
        if message.contains("out of memory") {
            return ScriptError::MemoryLimit(0);
        }
        let line = ex.stack().and_then(|s| stack_line(&s));
        return ScriptError::Script { message, line };
    }
    let message = ctx
        .json_stringify(thrown)
        .ok()
        .flatten()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "a non-JSON value was thrown".into());
    ScriptError::Script { message: format!("thrown: {message}"), line: None }
}

/// The first `(<file>:LINE...)` of a QuickJS stack trace.
fn stack_line(stack: &str) -> Option<u32> {
    let start = stack.find(":")? + 1;
    let digits: String = stack[start..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str) -> Result<Outcome, ScriptError> {
        let mut vars = Map::new();
        vars.insert("a".into(), Json::from(2));
        evaluate("JavaScript", src, &vars, &ExecutionInfo::default(), &Limits::default())
    }

    #[test]
    fn last_expression_and_set_variables() {
        let out = run("execution.setVariable('b', a * 3); a + 1").unwrap();
        assert_eq!(out.value, Json::from(3));
        assert_eq!(out.set.get("b"), Some(&Json::from(6)));
    }

    #[test]
    fn refuses_other_languages_and_non_json() {
        assert!(matches!(run_lang("groovy"), Err(ScriptError::UnsupportedLanguage(_))));
        assert!(matches!(run("(function(){})"), Err(ScriptError::NotJson(_))));
    }

    fn run_lang(l: &str) -> Result<Outcome, ScriptError> {
        evaluate(l, "1", &Map::new(), &ExecutionInfo::default(), &Limits::default())
    }

    #[test]
    fn check_compiles_without_running() {
        assert_eq!(check("javascript", "while (true) {}"), Ok(()));
        assert_eq!(check("javascript", "execution.setVariable('a', 1)"), Ok(()));
        match check("javascript", "var a = 1;\nvar b = ;") {
            Err(ScriptError::Script { line, .. }) => assert_eq!(line, Some(2)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(check("groovy", "1"), Err(ScriptError::UnsupportedLanguage(_))));
    }

    #[test]
    fn infinite_loop_stops() {
        assert_eq!(run("while(true){}"), Err(ScriptError::CpuLimit));
    }

    #[test]
    fn error_has_line() {
        match run("1;\nthrow new Error('boom')") {
            Err(ScriptError::Script { message, .. }) => assert_eq!(message, "boom"),
            other => panic!("{other:?}"),
        }
    }
}
