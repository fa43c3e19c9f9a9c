//! Scripts at an execution: a script task's, a script condition's, a `camunda:script`
//! parameter's. The runtime stays pure: it hands the script, the variables visible at the
//! token and where it runs to the engine's [`ScriptRunner`] (a sandbox with no host access and
//! bounded CPU and memory), and applies what comes back.

use kairos_bpmn::Script;
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;

/// Runs scripts for the runtime. Implementations must be deterministic over their inputs (no
/// clock, no I/O): a command may be applied again after a conflict.
pub trait ScriptRunner: Send + Sync {
    /// Runs `script` over `variables`; `Err` says why it failed (with the script's line where
    /// known).
    fn run(
        &self,
        script: &Script,
        variables: &Map<String, Json>,
        at: &ScriptSite<'_>,
    ) -> std::result::Result<ScriptOutcome, String>;
}

/// Where a script runs (`execution.getId()` and friends).
#[derive(Debug, Clone, Copy)]
pub struct ScriptSite<'a> {
    pub process_instance_id: &'a str,
    pub execution_id: &'a str,
    pub activity_id: &'a str,
}

/// What a script gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptOutcome {
    /// The value of its last expression statement.
    pub value: Json,
    /// The variables it set with `execution.setVariable`.
    pub set: Map<String, Json>,
}

impl Runtime<'_> {
    /// Runs `script` at `exec` for `element`; `what` names it in errors ("script", "condition
    /// script", "parameter script"). A failure is a model error: the command changes nothing.
    pub(crate) fn run_script(&self, exec: &str, element: &str, what: &str, script: &Script) -> Result<ScriptOutcome> {
        let Some(runner) = self.scripts else {
            return Err(ProcessError::at(
                ErrorKind::Model,
                element,
                format!("the {what} of '{element}' cannot run: scripts are switched off on this engine"),
            ));
        };
        let variables = self.inst.visible_variables(exec);
        let site = ScriptSite { process_instance_id: &self.inst.id, execution_id: exec, activity_id: element };
        runner
            .run(script, &variables, &site)
            .map_err(|e| ProcessError::at(ErrorKind::Model, element, format!("the {what} of '{element}' failed: {e}")))
    }

    /// A script condition's value, which must be a boolean. Variables it sets are not kept: a
    /// condition is asked, not run (it may be asked again on a retried command).
    pub(crate) fn script_condition(&self, exec: &str, element: &str, script: &Script) -> Result<bool> {
        match self.run_script(exec, element, "condition script", script)?.value {
            Json::Bool(b) => Ok(b),
            other => Err(ProcessError::at(
                ErrorKind::Model,
                element,
                format!("the condition script of '{element}' gave {}; a boolean is needed", kind_of(&other)),
            )),
        }
    }
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}
