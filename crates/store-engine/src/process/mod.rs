//! The process runtime's and history's tables: ACT_RE_*, ACT_GE_BYTEARRAY, ACT_RU_EXECUTION,
//! ACT_RU_TASK, ACT_RU_IDENTITYLINK, ACT_RU_VARIABLE, ACT_RU_EVENT_SUBSCR, the process jobs of
//! ACT_RU_JOB, ACT_HI_* and KAIROS_REQUEST.
//!
//! These functions are what the process engine (`kairos::process`) knows of its tables: it
//! loads an instance ([`instance_load`]), runs the pure runtime on it, and commits the
//! difference ([`instance_writes`]) with [`kairos_store::Sql::write_all`]; its queries
//! (definitions, tasks, history, external tasks, requestIds, cleanup, migration, calls and
//! event subscriptions) are typed functions here too. Each takes domain values and answers
//! domain values or the typed rows of this module; each is pinned on both backends by
//! `tests/process_*.rs`.
//!
//! Writes are returned as [`Write`]s rather than run, so that a command commits all of them in
//! one transaction, or stages them with a job's completion. Their texts do not vary with the
//! values (every value is bound): the completer merges identical texts of many jobs into one
//! statement (`kairos_store::coalesce`).
//!
//! Rows are decoded by column name ([`crate::Row`]); a value that cannot be read is an
//! [`kairos_store::ErrorKind::Unreadable`] error naming the table, the row and the column.
//! [`instance_unreadable`] lists such rows beside the good ones for an operator.
//!
//! [`Write`]: kairos_store::Write

mod calls;
mod cleanup;
mod comments;
mod decisions;
mod definitions;
mod deployments;
mod external;
mod history;
mod history_views;
mod job_retries;
mod load;
mod migrate;
mod requests;
mod statistics;
mod termination;
mod unreadable;
mod values;
mod views;
mod writes;

pub use calls::*;
pub use cleanup::*;
pub use comments::*;
pub use decisions::*;
pub use definitions::*;
pub use deployments::*;
pub use external::*;
pub use history::variable_writes;
pub use history_views::*;
pub use job_retries::*;
pub use load::instance_load;
pub use migrate::*;
pub use requests::*;
pub use statistics::*;
pub use termination::*;
pub use unreadable::instance_unreadable;
pub use values::{decode_value, encode_value};
pub use views::*;
pub use writes::instance_writes;

use jiff::Timestamp;
use kairos_store::SqlValue;

/// How much history the engine writes: Flowable's history levels (its `DefaultHistoryManager`
/// decides the same way). ACT_HI_PROCINST is always written: instance queries and the doctor
/// read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum HistoryLevel {
    /// Instances only.
    None,
    /// Also activities and variables with their last values (ACT_HI_ACTINST, ACT_HI_VARINST).
    Activity,
    /// Also tasks (ACT_HI_TASKINST): the default.
    #[default]
    Audit,
    /// Also every variable change, one ACT_HI_DETAIL row each (TYPE_ 'VariableUpdate').
    Full,
}

impl std::str::FromStr for HistoryLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(HistoryLevel::None),
            "activity" => Ok(HistoryLevel::Activity),
            "audit" => Ok(HistoryLevel::Audit),
            "full" => Ok(HistoryLevel::Full),
            other => Err(format!("history level '{other}' is not one of none, activity, audit, full")),
        }
    }
}

/// HANDLER_TYPE_ of a timer start event's job: starts an instance when due.
pub const TIMER_START: &str = "timer-start-event";

/// HANDLER_TYPE_ of the job that delivers a signal thrown in one instance to every other
/// instance waiting for it (and to signal start events). HANDLER_CFG_: `{"signal", "from"}`.
pub const SIGNAL_THROW: &str = "signal-throw";

/// ACT_RU_JOB's columns (ACT_RU_SUSPENDED_JOB and ACT_RU_DEADLETTER_JOB have the same), for
/// moving rows between them.
pub(crate) const JOB_COLUMNS: &str = "ID_, REV_, TYPE_, LOCK_EXP_TIME_, LOCK_OWNER_, LOCK_TIME_, EXCLUSIVE_, EXCLUSIVE_KEY_, \
    EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_, SCOPE_TYPE_, \
    SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_, EXCEPTION_MSG_, DUEDATE_, REPEAT_, RETRY_CYCLE_, \
    HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_, PRIORITY_";
/// The same, with the lease cleared.
pub(crate) const JOB_COLUMNS_UNLOCKED: &str = "ID_, REV_, TYPE_, NULL, NULL, NULL, EXCLUSIVE_, EXCLUSIVE_KEY_, \
    EXECUTION_ID_, PROCESS_INSTANCE_ID_, PROC_DEF_ID_, ELEMENT_ID_, ELEMENT_NAME_, SCOPE_ID_, SCOPE_TYPE_, \
    SCOPE_DEFINITION_ID_, RETRIES_, ATTEMPTS_, EXCEPTION_STACK_ID_, EXCEPTION_MSG_, DUEDATE_, REPEAT_, RETRY_CYCLE_, \
    HANDLER_TYPE_, HANDLER_CFG_, CUSTOMVALUES_ID_, CREATE_TIME_, TENANT_ID_, INITIAL_RETRIES_, PRIORITY_";

/// SUSPENSION_STATE_ of a suspended row.
const SUSPENDED: i64 = 2;

pub(crate) fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
pub(crate) fn ot(s: &Option<String>) -> SqlValue {
    s.as_ref().map_or(SqlValue::Null, |s| SqlValue::Text(s.clone()))
}
pub(crate) fn opt(v: Option<&str>) -> SqlValue {
    v.map_or(SqlValue::Null, |s| SqlValue::Text(s.into()))
}
fn ts(t: Timestamp) -> SqlValue {
    SqlValue::Timestamp(t)
}
fn ots(t: Option<Timestamp>) -> SqlValue {
    t.map_or(SqlValue::Null, SqlValue::Timestamp)
}
fn b(v: bool) -> SqlValue {
    SqlValue::Bool(v)
}
fn i(v: i64) -> SqlValue {
    SqlValue::Int(v)
}
/// A page bound (LIMIT, OFFSET).
fn bound(n: u64) -> SqlValue {
    SqlValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
}
/// A tri-state filter (all, only ended, only running) as the statements bind it.
fn finished_code(finished: Option<bool>) -> SqlValue {
    SqlValue::Int(match finished {
        None => 0,
        Some(true) => 1,
        Some(false) => 2,
    })
}
