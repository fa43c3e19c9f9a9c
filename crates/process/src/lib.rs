//! The pure process runtime of kairos: BPMN models executed over one instance in memory.
//!
//! No I/O and no clock: a command gets the instance as loaded, the model, the database's now
//! and an id generator, and leaves the instance as it should be after the command. The engine
//! (crate `kairos`) loads, calls [`Runtime::apply`], runs service-task handlers when asked
//! ([`Step::Call`]), and writes the difference ([`changes`]) in one REV_-checked transaction.

pub mod changes;
pub mod error;
mod index;
pub mod migrate;
pub mod runtime;
pub mod state;

pub use changes::{Changes, changes};
pub use error::{ErrorKind, ProcessError, Result};
pub use runtime::{
    CalledStart, Command, DECISION_HANDLER, DecisionCall, Env, MAX_MULTI_INSTANCE, Runtime, ScriptOutcome,
    ScriptRunner, ScriptSite, ServiceCall, ServiceResult, Step, TaskUpdate, validate_variable_name,
};
pub use state::*;
