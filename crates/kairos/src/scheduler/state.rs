//! The life of a trigger (QRTZ_TRIGGERS.TRIGGER_STATE) as an explicit transition table.
//!
//! Quartz's state names are kept, so seed 004's queries and Quartz runbooks read them. One
//! invariant ties the table to the job engine: a trigger has its trigger job (the
//! `quartz-trigger` row in ACT_RU_JOB) exactly when it is [`TriggerState::Waiting`] (the doctor
//! reports a WAITING trigger without one). The statements that change TRIGGER_STATE carry out
//! these transitions; unlike the job lifecycle, no conformance check compares them with the
//! table yet.

use serde::Serialize;

/// Where a trigger is in its life. A trigger that will never fire again is deleted (Quartz's
/// transient `COMPLETE`), so it has no state here.
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

impl TriggerState {
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
        [Self::Waiting, Self::Paused, Self::Blocked, Self::PausedBlocked, Self::Error]
            .into_iter()
            .find(|t| t.as_str() == s)
    }

    /// Whether a trigger in this state has its trigger job in ACT_RU_JOB.
    pub fn has_trigger_job(self) -> bool {
        self == TriggerState::Waiting
    }

    /// The state after `event`, or the transition the table does not allow.
    pub fn apply(from: Option<TriggerState>, event: TriggerEvent) -> Result<Option<TriggerState>, InvalidTransition> {
        TRANSITIONS
            .iter()
            .find(|(f, e, _)| *f == from && *e == event)
            .map(|(_, _, to)| *to)
            .ok_or(InvalidTransition { from, event })
    }
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
