//! What happens to a job after an attempt (SPEC J3, J6; seed 001's failure branch).
//!
//! The executor runs a handler, then asks [`plan_completion`] what to write; the store writes it
//! in one transaction, fenced by the lease (owner + attempt number) so that a node which lost its
//! lease — paused, partitioned, declared dead — cannot complete work another node took over.

use crate::job::{Job, JobLogOutcome, JobType};
use crate::lifecycle::JobEvent;
use crate::repeat::Repeat;
use jiff::{SignedDuration, Timestamp};
use kairos_time::RetryCycle;

/// EXCEPTION_MSG_ is varchar(4000) in Activiti; the full chain goes to ACT_GE_BYTEARRAY.
pub const EXCEPTION_MSG_MAX_CHARS: usize = 4000;

/// How one attempt ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    /// The handler returned normally; `message` goes to the job log.
    Succeeded { message: Option<String> },
    /// The handler returned an error, panicked or timed out. `message` is the top-level error,
    /// `chain` every cause (or the panic and its location).
    Failed { message: String, chain: String },
}

/// Waits after a failure when the job names no failedJobRetryTimeCycle (seed 001:
/// asyncFailedJobWaitTime and defaultFailedJobWaitTime, both 10 s in Activiti).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub async_failed_wait: SignedDuration,
    pub default_failed_wait: SignedDuration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            async_failed_wait: SignedDuration::from_secs(10),
            default_failed_wait: SignedDuration::from_secs(10),
        }
    }
}

/// The write that finishes an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Success of a one-shot job: delete the row.
    Delete { log_message: Option<String> },
    /// Success of a repeating timer with fires left: keep the row, move DUEDATE_ and REPEAT_.
    /// The store also sets RETRIES_ back to INITIAL_RETRIES_, the retries the job was created
    /// with: each fire has its own (Flowable creates a new job per fire), so failures spread
    /// over a timer's life never add up to a dead letter.
    Reschedule { repeat: String, due: Timestamp, log_message: Option<String> },
    /// Failure with attempts left: RETRIES_ set, lock cleared, exception stored, due later.
    Retry { retries: i32, due: Timestamp, message: String, stack: String },
    /// Failure of the last attempt: move the row to ACT_RU_DEADLETTER_JOB.
    DeadLetter { message: String, stack: String },
}

impl Completion {
    pub fn log_outcome(&self) -> JobLogOutcome {
        match self {
            Completion::Delete { .. } => JobLogOutcome::Succeeded,
            Completion::Reschedule { .. } => JobLogOutcome::Rescheduled,
            Completion::Retry { .. } => JobLogOutcome::Failed,
            Completion::DeadLetter { .. } => JobLogOutcome::DeadLettered,
        }
    }
    pub fn event(&self) -> JobEvent {
        match self {
            Completion::Delete { .. } => JobEvent::Succeed,
            Completion::Reschedule { .. } => JobEvent::Reschedule,
            Completion::Retry { .. } => JobEvent::FailWithRetriesLeft,
            Completion::DeadLetter { .. } => JobEvent::FailLastRetry,
        }
    }
    /// The text for ACT_HI_JOB_LOG.MESSAGE_.
    pub fn log_message(&self) -> Option<&str> {
        match self {
            Completion::Delete { log_message } | Completion::Reschedule { log_message, .. } => log_message.as_deref(),
            Completion::Retry { message, .. } | Completion::DeadLetter { message, .. } => Some(message),
        }
    }
}

/// Decides the write that ends an attempt of `job` (the row as it was acquired, with
/// `attempts` already counting this attempt), at `now` on the database's clock.
pub fn plan_completion(job: &Job, result: AttemptResult, now: Timestamp, policy: &RetryPolicy) -> Completion {
    match result {
        AttemptResult::Succeeded { message } => plan_success(job, message.map(|m| storable(&m)), now),
        AttemptResult::Failed { message, chain } => {
            plan_failure(job, storable(&message), storable(&chain), now, policy)
        }
    }
}

/// Text a handler produced, made storable in any database: NUL characters (which PostgreSQL
/// refuses in text, failing the whole completion batch) become U+FFFD.
pub fn storable(s: &str) -> String {
    if s.contains('\0') { s.replace('\0', "\u{FFFD}") } else { s.to_string() }
}

fn plan_success(job: &Job, log_message: Option<String>, now: Timestamp) -> Completion {
    let Some(repeat) = &job.repeat else { return Completion::Delete { log_message } };
    let cycle = match Repeat::parse(repeat) {
        Ok(c) => c,
        Err(e) => {
            let message = format!("REPEAT_ \"{repeat}\" cannot be read, so the timer cannot be rescheduled: {e}");
            return Completion::DeadLetter { stack: message.clone(), message };
        }
    };
    let fired_due = job.duedate.unwrap_or(now);
    match cycle.next_after_fire(fired_due, now) {
        Ok(Some((repeat, due))) => Completion::Reschedule { repeat, due, log_message },
        Ok(None) => Completion::Delete { log_message },
        Err(e) => {
            let message = format!("the next fire of \"{repeat}\" cannot be computed: {e}");
            Completion::DeadLetter { stack: message.clone(), message }
        }
    }
}

fn plan_failure(job: &Job, message: String, chain: String, now: Timestamp, policy: &RetryPolicy) -> Completion {
    let message = truncate_chars(&message, EXCEPTION_MSG_MAX_CHARS);
    let retries = job.retries.saturating_sub(1);
    if retries <= 0 {
        return Completion::DeadLetter { message, stack: chain };
    }
    let cycle = job.retry_cycle.as_deref().and_then(|c| RetryCycle::parse(c).ok());
    let failure_number = u32::try_from(job.attempts.max(1)).unwrap_or(1);
    let due = match &cycle {
        Some(c) => c.wait_before_retry(failure_number).add_to(now).ok(),
        None => None,
    };
    let due = due.unwrap_or_else(|| {
        let wait = match job.job_type {
            JobType::Message | JobType::ExternalWorker => policy.async_failed_wait,
            JobType::Timer => policy.default_failed_wait,
        };
        now.saturating_add(wait).unwrap_or(now)
    });
    Completion::Retry { retries, due, message, stack: chain }
}

/// The first `max` characters of `s`, never splitting a character.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn job() -> Job {
        Job {
            id: "j1".into(),
            rev: 1,
            job_type: JobType::Message,
            lock_owner: Some("n1".into()),
            lock_exp_time: Some(ts("2026-01-01T00:05:00Z")),
            lock_time: Some(ts("2026-01-01T00:00:00Z")),
            exclusive: false,
            exclusive_key: None,
            execution_id: None,
            process_instance_id: None,
            proc_def_id: None,
            element_id: None,
            element_name: None,
            scope_id: None,
            scope_type: None,
            scope_definition_id: None,
            retries: 3,
            attempts: 1,
            exception_stack_id: None,
            exception_msg: None,
            duedate: Some(ts("2026-01-01T00:00:00Z")),
            repeat: None,
            retry_cycle: None,
            handler_type: "log".into(),
            handler_cfg: None,
            customvalues_id: None,
            create_time: ts("2026-01-01T00:00:00Z"),
            tenant_id: None,
        }
    }

    fn failed() -> AttemptResult {
        AttemptResult::Failed { message: "boom".into(), chain: "boom\ncaused by: io".into() }
    }

    #[test]
    fn success_deletes_a_one_shot_job() {
        let c = plan_completion(
            &job(),
            AttemptResult::Succeeded { message: None },
            ts("2026-01-01T00:00:01Z"),
            &RetryPolicy::default(),
        );
        assert_eq!(c, Completion::Delete { log_message: None });
    }

    #[test]
    fn failure_of_an_async_job_waits_ten_seconds() {
        let now = ts("2026-01-01T00:00:01Z");
        let c = plan_completion(&job(), failed(), now, &RetryPolicy::default());
        assert_eq!(
            c,
            Completion::Retry {
                retries: 2,
                due: ts("2026-01-01T00:00:11Z"),
                message: "boom".into(),
                stack: "boom\ncaused by: io".into()
            }
        );
    }

    #[test]
    fn the_last_failure_dead_letters() {
        let j = Job { retries: 1, attempts: 3, ..job() };
        let c = plan_completion(&j, failed(), ts("2026-01-01T00:00:01Z"), &RetryPolicy::default());
        assert!(matches!(c, Completion::DeadLetter { .. }));
        assert_eq!(c.log_outcome(), JobLogOutcome::DeadLettered);
    }

    #[test]
    fn a_retry_cycle_list_gives_the_wait_per_failure() {
        let now = ts("2026-01-01T00:00:00Z");
        let mut j = Job { retry_cycle: Some("PT1M,PT5M".into()), retries: 3, ..job() };
        let Completion::Retry { due, .. } = plan_completion(&j, failed(), now, &RetryPolicy::default()) else {
            panic!()
        };
        assert_eq!(due, ts("2026-01-01T00:01:00Z"));
        j.attempts = 2;
        let Completion::Retry { due, .. } = plan_completion(&j, failed(), now, &RetryPolicy::default()) else {
            panic!()
        };
        assert_eq!(due, ts("2026-01-01T00:05:00Z"));
    }

    #[test]
    fn a_repeating_timer_keeps_its_row_until_its_count_is_spent() {
        let now = ts("2026-01-01T00:00:01.010Z");
        let j = Job {
            job_type: JobType::Timer,
            repeat: Some("R3/PT1S".into()),
            duedate: Some(ts("2026-01-01T00:00:01Z")),
            ..job()
        };
        let c = plan_completion(&j, AttemptResult::Succeeded { message: None }, now, &RetryPolicy::default());
        assert_eq!(
            c,
            Completion::Reschedule { repeat: "R2/PT1S".into(), due: ts("2026-01-01T00:00:02Z"), log_message: None }
        );
        let j = Job { repeat: Some("R1/PT1S".into()), ..j };
        let c = plan_completion(&j, AttemptResult::Succeeded { message: None }, now, &RetryPolicy::default());
        assert_eq!(c, Completion::Delete { log_message: None });
    }

    #[test]
    fn nul_characters_never_reach_the_database() {
        let c = plan_completion(
            &job(),
            AttemptResult::Failed { message: "a\0b".into(), chain: "x\0".into() },
            ts("2026-01-01T00:00:00Z"),
            &RetryPolicy::default(),
        );
        let Completion::Retry { message, stack, .. } = c else { panic!() };
        assert_eq!((message.as_str(), stack.as_str()), ("a\u{FFFD}b", "x\u{FFFD}"));
    }

    #[test]
    fn exception_messages_are_cut_at_4000_characters_on_a_char_boundary() {
        let long = "é".repeat(5000);
        let c = plan_completion(
            &job(),
            AttemptResult::Failed { message: long.clone(), chain: long },
            ts("2026-01-01T00:00:00Z"),
            &RetryPolicy::default(),
        );
        let Completion::Retry { message, stack, .. } = c else { panic!() };
        assert_eq!(message.chars().count(), 4000);
        assert_eq!(stack.chars().count(), 5000);
    }
}
