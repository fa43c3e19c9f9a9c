//! Call activities: the token asks the engine to start the called process with the `in`
//! mappings' variables, and waits for it to end (`Command::CalledEnded`, or at once through
//! `Runtime::resume_called`), when its `out` mappings set the caller's variables. Errors and
//! escalations the called instance did not catch come back (`Command::CalledRaised`) and are
//! thrown again from the call activity.

use kairos_bpmn::{CallActivity, FlowNode, NodeIdx, NodeKind};
use serde_json::{Map, Value as Json};

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::{CalledStart, Runtime};
use crate::state::Raised;

impl Runtime<'_> {
    /// A call activity: what to start (the process key and business key evaluated here, the
    /// `in` mappings applied to the variables visible at the token). The agenda pauses for it.
    pub(crate) fn enter_call_activity(
        &mut self,
        exec: &str,
        node: NodeIdx,
        n: &FlowNode,
        ca: &CallActivity,
    ) -> Result<CalledStart> {
        let process_key = self.eval_string(exec, &n.id, &ca.called_element)?;
        let business_key = match (&ca.business_key, ca.inherit_business_key) {
            (Some(expr), _) => Some(self.eval_string(exec, &n.id, expr)?),
            (None, true) => self.inst.business_key.clone(),
            (None, false) => None,
        };
        let visible = self.inst.visible_variables(exec);
        let variables = self.map_variables(&ca.inputs, &visible, &n.id)?;
        self.waiting_call = Some((exec.to_string(), node));
        Ok(CalledStart {
            execution_id: exec.to_string(),
            activity_id: n.id.clone(),
            process_key,
            business_key,
            variables,
        })
    }

    /// The instance called from `exec`, waiting at call activity `node`, ended with `variables`:
    /// the `out` mappings set the caller's variables (the token then leaves).
    pub(crate) fn called_instance_ended(
        &mut self,
        exec: &str,
        node: NodeIdx,
        variables: &Map<String, Json>,
    ) -> Result<()> {
        let NodeKind::CallActivity(ca) = &self.node(node).kind else {
            return Err(ProcessError::new(ErrorKind::Conflict, format!("execution {exec} is not at a call activity")));
        };
        let outputs = ca.outputs.clone();
        let id = self.node(node).id.clone();
        let out = self.map_variables(&outputs, variables, &id)?;
        self.set_variables(exec, out)
    }

    /// What the instance called from `exec` (waiting at call activity `node`) gave back: each
    /// error or escalation it `raised` is thrown from the call activity, so that its boundary
    /// events and then the scopes around it catch it; then, when it `ended`, the `out`
    /// mappings apply. True when the token is to leave the call activity: the called instance
    /// ended and no interrupting catch took the call activity away meanwhile.
    pub(crate) fn called_returned(
        &mut self,
        exec: &str,
        node: NodeIdx,
        raised: Vec<Raised>,
        ended: Option<Map<String, Json>>,
    ) -> Result<bool> {
        let activity = self.node(node).id.clone();
        // Only a cancellation from here on counts: the same execution may have been
        // interrupted and called again earlier in this command.
        let mark = self.inst.interrupted_calls.len();
        let interrupted = |rt: &Self| rt.inst.interrupted_calls[mark..].iter().any(|(e, _)| e == exec);
        for r in raised {
            if interrupted(self) {
                break;
            }
            match r {
                Raised::Error(code) => self.throw_error(exec, &activity, &code)?,
                Raised::Escalation(code) => {
                    self.throw_escalation(exec, code.as_deref())?;
                }
            }
        }
        match ended {
            Some(variables) if !interrupted(self) => {
                self.called_instance_ended(exec, node, &variables)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
