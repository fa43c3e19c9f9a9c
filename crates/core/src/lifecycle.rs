//! The life of a job as an explicit transition table (drawn in `docs/job-lifecycle.md`).
//!
//! The store carries transitions out in SQL; this table is the contract those statements must
//! honour. The conformance suite reads a job's state before and after every store operation with
//! [`JobState::of`] and checks the pair against [`JobState::apply`], so an undefined transition
//! in either backend fails a test instead of surprising an operator.

use crate::job::{Job, JobTable};
use jiff::Timestamp;
use serde::Serialize;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobState {
    /// In ACT_RU_JOB, due in the future (a timer, or a failed job waiting for its retry).
    Waiting,
    /// In ACT_RU_JOB, due and unlocked (or its lease expired): acquisition may take it.
    Executable,
    /// In ACT_RU_JOB, locked by a node whose lease has not expired.
    Running,
    /// In ACT_RU_DEADLETTER_JOB: no retries left.
    DeadLetter,
    /// In ACT_RU_SUSPENDED_JOB: its process instance is suspended.
    Suspended,
    /// The row is gone; only ACT_HI_JOB_LOG remembers it.
    Done,
}

/// What happens to a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobEvent {
    /// Created with a due date in the future.
    EnqueueLater,
    /// Created due now.
    EnqueueNow,
    /// The database clock passed DUEDATE_.
    BecomeDue,
    /// An operator asked for it to run now.
    ExecuteNow,
    /// A node's conditional update locked it.
    Acquire,
    /// The handler succeeded and the job was not repeating.
    Succeed,
    /// A repeating timer fired and moved to its next due date.
    Reschedule,
    /// The handler failed and retries remain.
    FailWithRetriesLeft,
    /// The handler failed on its last retry.
    FailLastRetry,
    /// The lease expired (or its node was declared dead); the attempt counts as abandoned.
    LeaseExpire,
    /// The node stopped gracefully before finishing and released the lease.
    HandBack,
    /// Acquisition found an expired lease on a job whose last retry that abandoned attempt
    /// spent: the job goes to the dead letters without running again.
    AbandonLastRetry,
    /// An operator moved a dead letter back with fresh retries.
    MoveBack,
    /// An operator (or the engine ending an instance) deleted it.
    Delete,
    /// Its process instance was suspended.
    Suspend,
    /// Its process instance was activated again.
    Activate,
}

/// A transition the table does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a job that is {from:?} cannot undergo {event:?}")]
pub struct InvalidTransition {
    pub from: JobState,
    pub event: JobEvent,
}

/// Every transition of the table, as (from, event, to). `None` as `from` means "no row yet".
pub const TRANSITIONS: &[(Option<JobState>, JobEvent, JobState)] = {
    use JobEvent::*;
    use JobState::*;
    &[
        (None, EnqueueLater, Waiting),
        (None, EnqueueNow, Executable),
        (Some(Waiting), BecomeDue, Executable),
        (Some(Waiting), ExecuteNow, Executable),
        (Some(Executable), Acquire, Running),
        (Some(Running), Succeed, Done),
        (Some(Running), Reschedule, Waiting),
        (Some(Running), FailWithRetriesLeft, Waiting),
        (Some(Running), FailLastRetry, DeadLetter),
        (Some(Running), LeaseExpire, Executable),
        (Some(Running), HandBack, Executable),
        (Some(Executable), AbandonLastRetry, DeadLetter),
        (Some(DeadLetter), MoveBack, Executable),
        (Some(Waiting), Delete, Done),
        (Some(Executable), Delete, Done),
        (Some(DeadLetter), Delete, Done),
        (Some(Suspended), Delete, Done),
        (Some(Waiting), Suspend, Suspended),
        (Some(Executable), Suspend, Suspended),
        (Some(Suspended), Activate, Waiting),
        (Some(Suspended), Activate, Executable),
    ]
};

impl JobState {
    /// The state of a stored row, judged by the database's clock `db_now`.
    pub fn of(job: Option<(&Job, JobTable)>, db_now: Timestamp) -> JobState {
        let Some((job, table)) = job else { return JobState::Done };
        match table {
            JobTable::DeadLetter => JobState::DeadLetter,
            JobTable::Suspended => JobState::Suspended,
            JobTable::Runtime => match (&job.lock_owner, job.lock_exp_time) {
                (Some(_), Some(exp)) if exp > db_now => JobState::Running,
                _ if job.duedate.is_some_and(|d| d > db_now) => JobState::Waiting,
                _ => JobState::Executable,
            },
        }
    }

    /// The states `event` can lead to from `self`; an error when the table has no such edge.
    pub fn apply(from: Option<JobState>, event: JobEvent) -> Result<Vec<JobState>, InvalidTransition> {
        let to: Vec<JobState> =
            TRANSITIONS.iter().filter(|(f, e, _)| *f == from && *e == event).map(|(_, _, t)| *t).collect();
        if to.is_empty() { Err(InvalidTransition { from: from.unwrap_or(JobState::Done), event }) } else { Ok(to) }
    }

    /// Whether `from --event--> to` is in the table.
    pub fn allows(from: Option<JobState>, event: JobEvent, to: JobState) -> bool {
        TRANSITIONS.iter().any(|(f, e, t)| *f == from && *e == event && *t == to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_transitions_are_errors() {
        assert!(JobState::apply(Some(JobState::DeadLetter), JobEvent::Acquire).is_err());
        assert!(JobState::apply(Some(JobState::Done), JobEvent::Succeed).is_err());
        assert!(
            JobState::apply(Some(JobState::Running), JobEvent::Delete).is_err(),
            "a running job is not deleted under its node; it is completed or its lease expires"
        );
    }

    #[test]
    fn every_state_but_done_has_a_way_out() {
        for s in [JobState::Waiting, JobState::Executable, JobState::Running, JobState::DeadLetter, JobState::Suspended]
        {
            assert!(TRANSITIONS.iter().any(|(f, _, _)| *f == Some(s)), "{s:?} is a dead end");
        }
    }
}
