//! The life of a trigger (QRTZ_TRIGGERS.TRIGGER_STATE) as an explicit transition table.
//!
//! Quartz's state names are kept, so seed 004's queries and Quartz runbooks read them. One
//! invariant ties the table to the job engine: a trigger has its trigger job (the
//! `quartz-trigger` row in ACT_RU_JOB) exactly when it is [`TriggerState::Waiting`] (the doctor
//! reports a WAITING trigger without one).
//!
//! The table is checked against the code two ways, as the job lifecycle is: every state change
//! the scheduler writes names its event through [`edge`], which finds it in the table (a change
//! the table does not define panics where it is made, in debug builds and tests); and
//! `crates/kairos/tests/trigger_lifecycle.rs` drives triggers through fire, pause, resume,
//! block, error and their last fire on both backends, reading the state before and after each
//! step, and asserts every pair is an edge of the table ([`TriggerLifecycle::allows`]). Drawn in
//! docs/scheduler-model.md.

use serde::Serialize;

pub use kairos_store_engine::scheduler::TriggerState;

/// What happens to a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TriggerEvent {
    /// Created (scheduleJob) in a group that is not paused.
    Schedule,
    /// Created in a paused group: it starts paused (Quartz's QRTZ_PAUSED_TRIGGER_GRPS).
    ScheduleInPausedGroup,
    /// Its trigger job fired it and it will fire again.
    Fire,
    /// A misfire instruction moved it on without firing.
    SkipMisfired,
    /// Its job is non-concurrent and busy.
    Block,
    /// The busy firing of its job finished (or was swept away).
    Unblock,
    Pause,
    Resume,
    /// Its row could not be read or its calendar is gone.
    Fail,
    /// Its calendar was replaced: it moves to its next fire time under the new one (Quartz's
    /// updateTriggers).
    Reschedule,
    /// Fired for the last time, misfired past its end, unscheduled, or its job deleted: the row
    /// goes.
    Delete,
}

/// A transition the table does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a trigger that is {from:?} cannot undergo {event:?}")]
pub struct InvalidTransition {
    pub from: Option<TriggerState>,
    pub event: TriggerEvent,
}

/// Every transition, as (from, event, to); `None` is "no row".
pub const TRANSITIONS: &[(Option<TriggerState>, TriggerEvent, Option<TriggerState>)] = {
    use TriggerEvent::*;
    use TriggerState::*;
    &[
        (None, Schedule, Some(Waiting)),
        (None, ScheduleInPausedGroup, Some(Paused)),
        (Some(Waiting), Fire, Some(Waiting)),
        (Some(Waiting), SkipMisfired, Some(Waiting)),
        (Some(Waiting), Reschedule, Some(Waiting)),
        (Some(Waiting), Block, Some(Blocked)),
        (Some(Blocked), Unblock, Some(Waiting)),
        (Some(PausedBlocked), Unblock, Some(Paused)),
        (Some(Waiting), Pause, Some(Paused)),
        (Some(Blocked), Pause, Some(PausedBlocked)),
        (Some(Paused), Pause, Some(Paused)),
        (Some(PausedBlocked), Pause, Some(PausedBlocked)),
        (Some(Paused), Resume, Some(Waiting)),
        (Some(PausedBlocked), Resume, Some(Blocked)),
        (Some(Error), Resume, Some(Waiting)),
        (Some(Waiting), Resume, Some(Waiting)),
        (Some(Blocked), Resume, Some(Blocked)),
        (Some(Waiting), Fail, Some(Error)),
        (Some(Waiting), Delete, None),
        (Some(Paused), Delete, None),
        (Some(Blocked), Delete, None),
        (Some(PausedBlocked), Delete, None),
        (Some(Error), Delete, None),
    ]
};

/// The table's answers about [`TriggerState`] (a trait: the state type is the store layer's,
/// whose rows carry it; its lifecycle is the scheduler's).
pub trait TriggerLifecycle: Sized {
    /// The state after `event`, or the transition the table does not allow.
    fn apply(from: Option<Self>, event: TriggerEvent) -> Result<Option<Self>, InvalidTransition>;

    /// Whether `event` takes a trigger from `from` to `to` by the table.
    fn allows(from: Option<Self>, event: TriggerEvent, to: Option<Self>) -> bool;
}

impl TriggerLifecycle for TriggerState {
    fn apply(from: Option<TriggerState>, event: TriggerEvent) -> Result<Option<TriggerState>, InvalidTransition> {
        TRANSITIONS
            .iter()
            .find(|(f, e, _)| *f == from && *e == event)
            .map(|(_, _, to)| *to)
            .ok_or(InvalidTransition { from, event })
    }

    fn allows(from: Option<TriggerState>, event: TriggerEvent, to: Option<TriggerState>) -> bool {
        TriggerState::apply(from, event) == Ok(to)
    }
}

/// The state a change the scheduler writes leads to: every statement that sets TRIGGER_STATE
/// (or deletes the row) is built from this, so each names its transition, and one the table
/// does not define is a bug of the scheduler, caught where it is made (a panic in debug builds
/// and tests; a release build writes `from` unchanged rather than a state nobody designed).
pub(crate) fn edge(from: Option<TriggerState>, event: TriggerEvent) -> Option<TriggerState> {
    match TriggerState::apply(from, event) {
        Ok(to) => to,
        Err(e) => {
            debug_assert!(false, "{e}: the trigger lifecycle table (scheduler/state.rs) does not define it");
            from
        }
    }
}

/// [`edge`] for a change that keeps the row, into the state the table gives.
pub(crate) fn edge_to(from: TriggerState, event: TriggerEvent) -> TriggerState {
    edge(Some(from), event).unwrap_or(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_a_function() {
        for (i, (f, e, _)) in TRANSITIONS.iter().enumerate() {
            assert!(
                !TRANSITIONS[i + 1..].iter().any(|(f2, e2, _)| f2 == f && e2 == e),
                "{f:?} --{e:?}--> appears twice"
            );
        }
    }

    #[test]
    fn names_round_trip_and_only_waiting_triggers_have_a_job() {
        for s in [
            TriggerState::Waiting,
            TriggerState::Paused,
            TriggerState::Blocked,
            TriggerState::PausedBlocked,
            TriggerState::Error,
        ] {
            assert_eq!(TriggerState::parse(s.as_str()), Some(s));
            assert_eq!(s.has_trigger_job(), s == TriggerState::Waiting);
        }
        assert_eq!(TriggerState::parse("ACQUIRED"), None);
    }

    #[test]
    fn pausing_a_blocked_trigger_remembers_the_block() {
        let s = TriggerState::apply(Some(TriggerState::Blocked), TriggerEvent::Pause).unwrap();
        assert_eq!(s, Some(TriggerState::PausedBlocked));
        assert_eq!(TriggerState::apply(s, TriggerEvent::Unblock).unwrap(), Some(TriggerState::Paused));
        assert!(TriggerState::apply(Some(TriggerState::Paused), TriggerEvent::Fire).is_err());
    }
}
