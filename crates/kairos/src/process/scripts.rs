//! The engine's script sandbox: runs a model's JavaScript (script tasks, script conditions,
//! `camunda:script` parameters) with [`kairos_script`], under the engine's limits.
//!
//! Each evaluation gets a fresh QuickJS runtime with no host access, a memory cap, a step
//! budget and a wall-time backstop; it runs off the async worker threads
//! ([`super::heavy::run`]), so a script at its CPU limit does not stall heartbeats or `/health`.

use kairos_bpmn::Script;
use kairos_process::{ScriptOutcome, ScriptRunner, ScriptSite};
use serde_json::{Map, Value as Json};

/// Runs scripts in [`kairos_script`]'s sandbox.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    pub(crate) limits: kairos_script::Limits,
}

impl ScriptRunner for Sandbox {
    fn run(
        &self,
        script: &Script,
        variables: &Map<String, Json>,
        at: &ScriptSite<'_>,
    ) -> Result<ScriptOutcome, String> {
        let info = kairos_script::ExecutionInfo {
            process_instance_id: Some(at.process_instance_id.to_owned()),
            execution_id: Some(at.execution_id.to_owned()),
            current_activity_id: Some(at.activity_id.to_owned()),
        };
        let out = super::heavy::run(true, || {
            kairos_script::evaluate(&script.format, &script.source, variables, &info, &self.limits)
        })
        .map_err(|e| e.to_string())?;
        Ok(ScriptOutcome { value: out.value, set: out.set })
    }
}

/// Checks a model's script at deploy time: a JavaScript format and no syntax error.
pub(crate) fn check(script: &Script) -> Result<(), String> {
    kairos_script::check(&script.format, &script.source).map_err(|e| e.to_string())
}
