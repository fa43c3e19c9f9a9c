//! How big an instance's variables and strings may be (docs/limits.md).
//!
//! Every command loads, and every start or completion writes, an instance's variables; without
//! a bound one client could PUT megabytes per request until a node ran out of memory (20 PUTs
//! of 1.9 MB each were all accepted: 872 MB RSS). A value is measured as the JSON the store
//! keeps. Checked on the instance a command leaves, before anything is written, so whatever
//! set the value (a request, a handler's result, an output mapping) is refused alike.

use crate::Error;
use kairos_process::{ErrorKind, Instance, ProcessError};
use std::collections::HashSet;

/// Largest value of one variable, as JSON: 1 MiB (a job payload's limit too).
pub const MAX_VARIABLE_BYTES: usize = 1024 * 1024;

/// Largest total of one instance's variables, as JSON: 10 MiB.
pub const MAX_INSTANCE_VARIABLE_BYTES: usize = 10 * 1024 * 1024;

/// Refuses an instance whose variables are over either limit, naming the variable (for the
/// total: the largest). Every value is measured as JSON is written out, without building it:
/// the total must be exact, and a cache of sizes shared by every command would put a lock on
/// the hot path. (Storing each row's size beside it would make this O(change).)
pub(crate) fn check_variables(inst: &Instance) -> Result<(), Error> {
    let mut total = 0usize;
    let mut largest: Option<(&str, usize)> = None;
    for v in &inst.variables {
        let bytes = json_len(&v.value);
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

/// The length of `value` as JSON, counted as it is written out rather than built in memory.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

fn refused(message: String) -> Error {
    Error::Process(ProcessError::new(ErrorKind::Invalid, message))
}

/// Widths of the columns strings go to (VARCHAR(n) on PostgreSQL counts characters; SQLite
/// holds any length, so kairos checks them itself and both stores accept the same things).
pub const MAX_NAME_CHARS: usize = 255;
/// DELETE_REASON_, RESOURCE_NAME_, DESCRIPTION_.
pub const MAX_LONG_TEXT_CHARS: usize = 4000;

/// Refuses a string the instance's rows could not hold on every store: longer than its column,
/// or with a NUL character (PostgreSQL's text cannot hold one), naming the field. Checked on
/// the instance a command leaves, before anything is written, whatever put the string there
/// (a request, an assignee expression, a service task's result).
pub(crate) fn check_strings(inst: &Instance) -> Result<(), Error> {
    let short = |field: &str, what: String, value: Option<&str>| check(field, &what, value, MAX_NAME_CHARS);
    short("businessKey", "the business key".into(), inst.business_key.as_deref())?;
    short("startUser", "the start user".into(), inst.start_user.as_deref())?;
    check("deleteReason", "the delete reason", inst.delete_reason.as_deref(), MAX_LONG_TEXT_CHARS)?;
    for t in &inst.tasks {
        let of = |what: &str| format!("{what} of task '{}'", t.task_def_key);
        short("name", of("the name"), t.name.as_deref())?;
        short("assignee", of("the assignee"), t.assignee.as_deref())?;
        short("formKey", of("the form key"), t.form_key.as_deref())?;
        for c in &t.candidate_users {
            short("candidateUser", of("a candidate user"), Some(c))?;
        }
        for c in &t.candidate_groups {
            short("candidateGroup", of("a candidate group"), Some(c))?;
        }
    }
    // Variables this command set only (the others were checked when they were written).
    let set: HashSet<&str> = inst.variable_log.iter().map(|c| c.variable_id.as_str()).collect();
    for v in inst.variables.iter().filter(|v| set.contains(v.id.as_str())) {
        short(&v.name, format!("the name of variable '{}'", v.name), Some(&v.name))?;
        if let serde_json::Value::String(s) = &v.value {
            // A string value is stored as text as it is (other values as JSON, which escapes NUL).
            check(&v.name, &format!("variable '{}'", v.name), Some(s), usize::MAX)?;
        }
    }
    for s in &inst.subscriptions {
        short("eventName", format!("the {} name", s.event_type), Some(&s.event_name))?;
    }
    Ok(())
}

fn check(field: &str, what: &str, value: Option<&str>, width: usize) -> Result<(), Error> {
    let Some(value) = value else { return Ok(()) };
    let problem = if value.contains('\0') {
        "contains a NUL character, which the store cannot hold".to_string()
    } else {
        let n = value.chars().count();
        if n <= width {
            return Ok(());
        }
        format!("is {n} characters long; at most {width} fit")
    };
    Err(Error::Process(ProcessError {
        kind: ErrorKind::Invalid,
        message: format!("{what} {problem}"),
        element_id: Some(field.to_string()),
    }))
}

/// A store's "cannot hold this value" for a write the engine checked beforehand is the
/// engine's fault, not the caller's: it must not answer 400 (a raw "database error 22001"
/// did), so it becomes an internal error for the operator to see.
pub(crate) fn checked_write(mut e: kairos_store::Error) -> kairos_store::Error {
    if e.kind == kairos_store::ErrorKind::Invalid {
        e.kind = kairos_store::ErrorKind::Other;
        e.message = format!("the database refused a write kairos had checked: {}", e.message);
    }
    e
}
