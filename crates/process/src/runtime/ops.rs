//! The agenda's operations ([`Op`]) and why a run of it pauses ([`Pause`]); the agenda that
//! runs them is `agenda.rs`.

use kairos_bpmn::NodeIdx;

use crate::runtime::primitives::listeners::ListenerSite;
use crate::runtime::{CalledStart, ServiceCall};

#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// A token arrives at a node (async-before is honoured unless `skip_async`).
    Enter { exec: String, node: NodeIdx, skip_async: bool },
    /// A token leaves a node along its outgoing flows (async-after unless `skip_async`).
    Leave { exec: String, node: NodeIdx, skip_async: bool },
    /// A token has nowhere to go: it ends, and its scope may complete.
    End { exec: String },
    /// Runs listener `index` of `site` at `exec` (see `primitives/listeners.rs`).
    Listen { exec: String, site: ListenerSite, index: usize, task: Option<String> },
    /// What a node does once its start listeners ran.
    EnterBody { exec: String, node: NodeIdx },
    /// The rest of leaving a node once its end listeners ran.
    LeaveBody { exec: String, node: NodeIdx, skip_async: bool },
    /// The instance ends (at `activity`, or deleted with `reason`) once the process's end
    /// listeners, or its tasks' delete listeners, ran.
    EndProcess { activity: Option<String>, reason: Option<String> },
}

impl Op {
    /// The execution the operation is about (none for the instance's end).
    pub(crate) fn execution(&self) -> Option<&str> {
        match self {
            Op::Enter { exec, .. }
            | Op::Leave { exec, .. }
            | Op::End { exec }
            | Op::Listen { exec, .. }
            | Op::EnterBody { exec, .. }
            | Op::LeaveBody { exec, .. } => Some(exec),
            Op::EndProcess { .. } => None,
        }
    }
}

/// Why [`Runtime::enter`] stopped the agenda.
pub(crate) enum Pause {
    Service(ServiceCall),
    Called(CalledStart),
}
