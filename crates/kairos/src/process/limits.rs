//! How big an instance's variables may be (docs/limits.md).
//!
//! Every command loads, and every start or completion writes, an instance's variables; without
//! a bound one client could PUT megabytes per request until a node ran out of memory (20 PUTs
//! of 1.9 MB each were all accepted: 872 MB RSS). A value is measured as the JSON the store
//! keeps. Checked on the instance a command leaves, before anything is written, so whatever
//! set the value (a request, a handler's result, an output mapping) is refused alike.

use crate::Error;
use kairos_process::{ErrorKind, Instance, ProcessError};

/// Largest value of one variable, as JSON: 1 MiB (a job payload's limit too).
pub const MAX_VARIABLE_BYTES: usize = 1024 * 1024;

/// Largest total of one instance's variables, as JSON: 10 MiB.
pub const MAX_INSTANCE_VARIABLE_BYTES: usize = 10 * 1024 * 1024;

/// Refuses an instance whose variables are over either limit, naming the variable (for the
/// total: the largest).
pub(crate) fn check_variables(inst: &Instance) -> Result<(), Error> {
    let mut total = 0usize;
    let mut largest: Option<(&str, usize)> = None;
    for v in &inst.variables {
        let bytes = serde_json::to_vec(&v.value).map_or(0, |b| b.len());
        if bytes > MAX_VARIABLE_BYTES {
            return Err(refused(format!(
                "variable '{}' is {bytes} bytes as JSON; the limit is {MAX_VARIABLE_BYTES} bytes (1 MiB) per value: \
                 keep large data in your own tables and store its id",
                v.name
            )));
        }
        total += bytes;
        if largest.is_none_or(|(_, b)| bytes > b) {
            largest = Some((&v.name, bytes));
        }
    }
    match largest {
        Some((name, _)) if total > MAX_INSTANCE_VARIABLE_BYTES => Err(refused(format!(
            "the variables of process instance {} would be {total} bytes as JSON; the limit is \
             {MAX_INSTANCE_VARIABLE_BYTES} bytes (10 MiB) per instance (the largest is variable '{name}')",
            inst.id
        ))),
        _ => Ok(()),
    }
}

fn refused(message: String) -> Error {
    Error::Process(ProcessError::new(ErrorKind::Invalid, message))
}
