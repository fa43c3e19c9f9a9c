//! The scheduler's tables: QRTZ_* (seed 004, `0004_scheduler.sql`), and the scheduler's rows of
//! ACT_RU_JOB (trigger jobs and work jobs, `SCOPE_TYPE_ = 'quartz:<SCHED_NAME>'`).
//!
//! The logic — misfire handling, fire decisions, the operator's commands and the trigger
//! lifecycle — is `kairos::scheduler`'s; here are its statements, each behind a typed function:
//! reads return typed rows decoded by column name, writes are built as [`Write`]s the caller
//! commits (often staged with a trigger job's completion). One statement text serves both
//! backends: `?` placeholders, instants as BIGINT epoch milliseconds, booleans bound as such.
//!
//! - [`jobs`] — QRTZ_JOB_DETAILS;
//! - [`triggers`] — reading QRTZ_TRIGGERS with its type tables into a [`kairos_schedule::Trigger`]
//!   (a row that cannot be read is set aside as an [`kairos_store::Unreadable`]), and
//!   QRTZ_PAUSED_TRIGGER_GRPS;
//! - [`trigger_writes`] — inserting, moving on, pausing and deleting triggers;
//! - [`calendars`] — QRTZ_CALENDARS;
//! - [`fire`] — trigger jobs, work jobs and QRTZ_FIRED_TRIGGERS;
//! - [`checkin`] — QRTZ_SCHEDULER_STATE and the check-in's sweep.

pub mod calendars;
pub mod checkin;
pub mod fire;
pub mod jobs;
pub mod trigger_writes;
pub mod triggers;

pub use calendars::*;
pub use checkin::*;
pub use fire::*;
pub use jobs::*;
pub use trigger_writes::*;
pub use triggers::*;

use crate::Row;
use jiff::Timestamp;
use kairos_store::{Result, SqlValue, Write};
use serde::Serialize;

/// Where a trigger is in its life (QRTZ_TRIGGERS.TRIGGER_STATE, Quartz's names). A trigger
/// that will never fire again is deleted (Quartz's transient `COMPLETE`), so it has no state
/// here. The transitions between them are `kairos::scheduler::state`'s table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TriggerState {
    /// Its trigger job waits for NEXT_FIRE_TIME.
    Waiting,
    /// Paused (itself, its group or its job); no trigger job.
    Paused,
    /// Its job is non-concurrent and another firing of it has not finished; no trigger job.
    Blocked,
    /// Both paused and blocked.
    PausedBlocked,
    /// Its row could not be used (e.g. its calendar is gone); no trigger job until an operator
    /// resumes it. The reason is in the trigger job's dead letter.
    Error,
}

impl TriggerState {
    pub const ALL: [TriggerState; 5] = [
        TriggerState::Waiting,
        TriggerState::Paused,
        TriggerState::Blocked,
        TriggerState::PausedBlocked,
        TriggerState::Error,
    ];

    /// Quartz's name, as stored in TRIGGER_STATE.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerState::Waiting => "WAITING",
            TriggerState::Paused => "PAUSED",
            TriggerState::Blocked => "BLOCKED",
            TriggerState::PausedBlocked => "PAUSED_BLOCKED",
            TriggerState::Error => "ERROR",
        }
    }

    pub fn parse(s: &str) -> Option<TriggerState> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether a trigger in this state has its trigger job in ACT_RU_JOB.
    pub fn has_trigger_job(self) -> bool {
        self == TriggerState::Waiting
    }
}

/// HANDLER_TYPE_ of a trigger's job: due at NEXT_FIRE_TIME, fires the trigger.
pub const TRIGGER_HANDLER: &str = "quartz-trigger";
/// HANDLER_TYPE_ of a firing's work: runs the job detail's handler.
pub const WORK_HANDLER: &str = "quartz-job";

/// SCOPE_TYPE_ of a scheduler's jobs in ACT_RU_JOB: which scheduler they belong to
/// (SCOPE_ID_ = trigger name, SCOPE_DEFINITION_ID_ = trigger group).
pub fn scope_type(sched: &str) -> String {
    format!("quartz:{sched}")
}

/// An instant as the QRTZ_* tables keep it: epoch milliseconds.
pub fn ts_to_ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}

/// An epoch-millisecond column; a number out of jiff's range is unreadable, not 1970.
pub(crate) fn epoch_ms(row: &Row<'_>, column: &str) -> Result<Timestamp> {
    let ms = row.int(column)?;
    Timestamp::from_millisecond(ms).map_err(|_| row.unreadable(column, "is not an instant in epoch milliseconds"))
}

/// Binds for `?` placeholders.
pub(crate) fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
pub(crate) fn ot(s: &Option<String>) -> SqlValue {
    s.as_deref().map(t).unwrap_or(SqlValue::Null)
}
pub(crate) fn i(n: i64) -> SqlValue {
    SqlValue::Int(n)
}
pub(crate) fn oi(n: Option<i64>) -> SqlValue {
    n.map(SqlValue::Int).unwrap_or(SqlValue::Null)
}
pub(crate) fn b(v: bool) -> SqlValue {
    SqlValue::Bool(v)
}

/// A statement with its binds.
pub(crate) fn w(sql: &str, binds: Vec<SqlValue>) -> Write {
    Write::new(sql, binds)
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}
