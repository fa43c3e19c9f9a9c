//! Keeping the pure runtime's long steps off the async worker threads.
//!
//! A command is microseconds of CPU, except when it creates or walks thousands of rows: a
//! parallel multi-instance activity over a collection of up to 10,000 items, an instance of
//! thousands of executions or variables. Run inline, such a step holds one of the runtime's few
//! worker threads (two on a small machine) for as long as it takes, and the heartbeats, the
//! executor and `/health` wait behind it. So a step judged heavy runs under
//! [`tokio::task::block_in_place`], which hands the thread's other tasks to another thread first.
//! Light steps stay inline: the hand-off costs more than they do.

use kairos_process::{Command, Instance};
use serde_json::Value as Json;

/// Rows, items or variables from which a step counts as heavy.
const HEAVY: usize = 1_000;

/// Runs `f`, under `block_in_place` when `heavy` and the runtime is multi-threaded (a
/// current-thread runtime cannot hand its tasks over: there `f` runs inline).
pub(crate) fn run<T>(heavy: bool, f: impl FnOnce() -> T) -> T {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if heavy && multi { tokio::task::block_in_place(f) } else { f() }
}

/// Whether the instance is large enough that walking it is heavy, or holds a collection a
/// multi-instance activity could fan out over.
pub(crate) fn instance(inst: &Instance) -> bool {
    inst.executions.len() >= HEAVY
        || inst.variables.len() >= HEAVY
        || inst.variables.iter().any(|v| large_collection(&v.value))
}

/// [`instance`], or a command that brings such a collection.
pub(crate) fn command(inst: &Instance, command: &Command) -> bool {
    let locals = match command {
        Command::CompleteExternal { local_variables, .. } => local_variables.values().any(large_collection),
        _ => false,
    };
    instance(inst) || locals || command_variables(command).is_some_and(|vars| vars.values().any(large_collection))
}

/// The variables a command sets, for the commands that set any.
fn command_variables(command: &Command) -> Option<&serde_json::Map<String, Json>> {
    match command {
        Command::Start { variables, .. }
        | Command::CompleteTask { variables, .. }
        | Command::Message { variables, .. }
        | Command::Signal { variables, .. }
        | Command::CompleteExternal { variables, .. }
        | Command::ExternalBpmnError { variables, .. }
        | Command::SetVariables { variables, .. }
        | Command::SetTaskVariables { variables, .. } => Some(variables),
        _ => None,
    }
}

fn large_collection(v: &Json) -> bool {
    match v {
        Json::Array(items) => items.len() >= HEAVY,
        Json::Object(fields) => fields.values().any(|f| matches!(f, Json::Array(a) if a.len() >= HEAVY)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_collection_is_heavy_a_small_one_is_not() {
        assert!(large_collection(&Json::Array(vec![Json::Null; HEAVY])));
        assert!(!large_collection(&Json::Array(vec![Json::Null; HEAVY - 1])));
        assert!(large_collection(&serde_json::json!({ "items": vec![1; HEAVY] })));
        assert!(!large_collection(&serde_json::json!("text")));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_current_thread_runtime_runs_heavy_work_inline() {
        assert_eq!(run(true, || 7), 7);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_multi_thread_runtime_runs_heavy_work_off_its_workers() {
        assert_eq!(run(true, || 7), 7);
    }
}
