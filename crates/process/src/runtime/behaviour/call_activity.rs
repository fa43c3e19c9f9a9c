//! Call activities: the token asks the engine to start the called process with the `in`
//! mappings' variables, and waits for it to end (`Command::CalledEnded`, or at once through
//! `Runtime::resume_called`), whose `out` mappings the command entry points apply.

use kairos_bpmn::{CallActivity, FlowNode, NodeIdx};

use crate::error::Result;
use crate::runtime::{CalledStart, Runtime};

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
}
