//! The primitives the behaviours are built from: the execution tree, waits (jobs and event
//! subscriptions), variables and their input/output mapping, history records and expression
//! evaluation, plus look-ups in the model. They know no element's behaviour and call only
//! each other.

pub(crate) mod expressions;
pub(crate) mod history;
pub(crate) mod listeners;
pub(crate) mod scripts;
pub(crate) mod tokens;
pub(crate) mod tree;
pub(crate) mod variables;
pub(crate) mod waits;

use crate::error::{ErrorKind, ProcessError, Result};
use crate::runtime::Runtime;
use crate::state::*;
use kairos_bpmn::{EventTrigger, FlowIdx, FlowNode, NodeIdx};

impl Runtime<'_> {
    pub(crate) fn node(&self, idx: NodeIdx) -> &FlowNode {
        self.env.process.node(idx)
    }

    pub(crate) fn flow_target(&self, f: FlowIdx) -> NodeIdx {
        self.env.process.flow(f).target
    }

    pub(crate) fn node_idx(&self, id: &str) -> Result<NodeIdx> {
        self.env.process.node_idx(id).ok_or_else(|| {
            ProcessError::at(
                ErrorKind::Model,
                id,
                format!("element '{id}' is not in process definition {}", self.inst.definition_id),
            )
        })
    }

    pub(crate) fn node_of(&self, exec: &str) -> Result<NodeIdx> {
        let activity = self
            .inst
            .execution(exec)
            .and_then(|e| e.activity.clone())
            .ok_or_else(|| ProcessError::new(ErrorKind::NotFound, format!("execution {exec} is at no activity")))?;
        self.node_idx(&activity)
    }

    pub(crate) fn task(&self, id: &str) -> Result<&Task> {
        self.inst.task(id).ok_or_else(|| ProcessError::new(ErrorKind::NotFound, format!("task {id} does not exist")))
    }

    pub(crate) fn none_start(&self) -> Result<NodeIdx> {
        self.env
            .process
            .start_events
            .iter()
            .copied()
            .find(|&s| matches!(self.node(s).kind.trigger(), Some(EventTrigger::None)))
            .ok_or_else(|| {
                ProcessError::new(
                    ErrorKind::Conflict,
                    format!(
                        "process '{}' has no none start event: it starts by a timer, message, signal or condition",
                        self.env.process.id
                    ),
                )
            })
    }
}
