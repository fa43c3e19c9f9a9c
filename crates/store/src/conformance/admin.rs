//! The operator's and the shutting-down node's actions on single jobs: hand back, execute now,
//! delete, move a dead letter back, read a stack trace.

use super::*;
use crate::{ErrorKind, JobReleaseParams};
use kairos_core::JobLogOutcome;

/// A dead letter with a stored stack, made the way the executor makes them.
async fn dead_letter(store: &dyn Store, handler: &str) -> Job {
    let t0 = ms(now(store).await);
    let job = insert(store, due_at(handler, t0 - secs(1))).await;
    let locked = acquire(store, "n1", Some(t0), 100, LOCK)
        .await
        .jobs
        .into_iter()
        .find(|a| a.job.id == job.id)
        .expect("acquired")
        .job;
    let dl = Completion::DeadLetter { message: "fatal".into(), stack: "fatal\nbacktrace".into() };
    assert_eq!(complete(store, &[completion(&locked, dl)]).await, vec![true]);
    store.job_get(JobTable::DeadLetter, &job.id).await.expect("job_get").expect("dead letter")
}

pub async fn release_hands_jobs_back_without_spending_a_retry(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let a = insert(store, due_at("a", t0 - secs(2))).await;
    let b = insert(store, due_at("b", t0 - secs(1))).await;
    acquire(store, "n1", Some(t0), 10, LOCK).await;
    let params = JobReleaseParams {
        node: "n1".into(),
        jobs: vec![(a.id.clone(), 1), (b.id.clone(), 5)],
        reason: "node n1 is shutting down".into(),
    };
    let before = now(store).await;
    assert_eq!(store.job_release(&params).await.expect("job_release"), 1, "only the lease that matches");
    let row = must_get(store, &a.id).await;
    assert_eq!((row.lock_owner, row.lock_time, row.lock_exp_time), (None, None, None));
    assert_eq!((row.retries, row.attempts), (3, 1), "handing back spends no retry");
    assert_eq!(must_get(store, &b.id).await.lock_owner.as_deref(), Some("n1"), "wrong attempt: still locked");
    let log = log_of(store, &a.id).await;
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].outcome, log[0].attempt, log[0].node.as_deref()), (JobLogOutcome::Abandoned, 1, Some("n1")));
    assert_eq!(log[0].message.as_deref(), Some("node n1 is shutting down"));
    assert_eq!(log[0].start, Some(t0));
    assert!(log[0].end.expect("END_TIME_") >= before - millis(1));

    let other = JobReleaseParams { node: "n2".into(), jobs: vec![(b.id.clone(), 1)], reason: "x".into() };
    assert_eq!(store.job_release(&other).await.expect("job_release"), 0, "a node releases only its own leases");
    let again = acquire(store, "n2", Some(t0 + secs(1)), 10, LOCK).await;
    assert_eq!(ids(&again), vec![a.id.clone()], "a handed-back job is executable at once");
    assert_eq!(
        (again.jobs[0].abandoned_by.as_deref(), again.jobs[0].job.retries, again.jobs[0].job.attempts),
        (None, 3, 2)
    );
}

pub async fn execute_now_makes_a_waiting_job_due(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let later = insert(store, due_at("later", t0 + SignedDuration::from_hours(1))).await;
    let before = now(store).await;
    let job = store.job_execute_now(&later.id).await.expect("job_execute_now");
    let after = now(store).await;
    assert_between("DUEDATE_ after execute", job.duedate.expect("DUEDATE_"), before, after);
    assert_eq!(must_get(store, &later.id).await, job);
    let due = job.duedate.unwrap();
    settle(store, due).await;
    assert_eq!(ids(&acquire(store, "n1", Some(due), 10, LOCK).await), vec![later.id.clone()]);

    let e = store.job_execute_now("no-such-job").await.expect_err("unknown job");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
    let dead = dead_letter(store, "dead").await;
    let e = store.job_execute_now(&dead.id).await.expect_err("a dead letter is not in ACT_RU_JOB");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
}

pub async fn delete_refuses_a_live_lease_unless_forced(store: &dyn Store) {
    let e = store.job_delete(JobTable::Runtime, "no-such-job", false).await.expect_err("unknown job");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");

    let t0 = ms(now(store).await);
    let waiting = insert(store, due_at("waiting", t0 + SignedDuration::from_hours(1))).await;
    store.job_delete(JobTable::Runtime, &waiting.id, false).await.expect("deleting an unlocked job");
    assert_eq!(get(store, &waiting.id).await, None);

    // A running job with a stored stack from an earlier failure.
    let job = insert(store, due_at("busy", t0 - secs(1))).await;
    let first = acquire(store, "n1", None, 10, LOCK).await.jobs[0].job.clone();
    let retry = Completion::Retry { retries: 2, due: t0 - secs(1), message: "m".into(), stack: "s".into() };
    assert_eq!(complete(store, &[completion(&first, retry)]).await, vec![true]);
    acquire(store, "n1", None, 10, LOCK).await;
    assert_eq!(bytearray_rows(store).await, 1);
    let e = store.job_delete(JobTable::Runtime, &job.id, false).await.expect_err("a live lease");
    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");
    assert!(get(store, &job.id).await.is_some(), "refused: nothing deleted");
    store.job_delete(JobTable::Runtime, &job.id, true).await.expect("a forced delete");
    assert_eq!(get(store, &job.id).await, None);
    assert_eq!(bytearray_rows(store).await, 0, "the job's ACT_GE_BYTEARRAY rows go with it");

    // An expired lease does not protect the job.
    let stale = insert(store, due_at("stale", t0 - secs(1))).await;
    let db = now(store).await;
    lock_by_hand(store, &stale.id, "gone", db - SignedDuration::from_mins(10), db - SignedDuration::from_mins(5)).await;
    store.job_delete(JobTable::Runtime, &stale.id, false).await.expect("deleting a job whose lease expired");

    let dead = dead_letter(store, "dead").await;
    let e = store.job_delete(JobTable::Runtime, &dead.id, false).await.expect_err("not in ACT_RU_JOB");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
    assert_eq!(bytearray_rows(store).await, 1);
    store.job_delete(JobTable::DeadLetter, &dead.id, false).await.expect("deleting a dead letter");
    assert_eq!(store.job_get(JobTable::DeadLetter, &dead.id).await.expect("job_get"), None);
    assert_eq!(bytearray_rows(store).await, 0);

    suspended_row(store, "suspended-1", t0).await;
    store.job_delete(JobTable::Suspended, "suspended-1", false).await.expect("deleting a suspended job");
    assert_eq!(store.job_get(JobTable::Suspended, "suspended-1").await.expect("job_get"), None);
}

pub async fn deadletter_move_resets_the_job_and_leaves_no_orphan_stack(store: &dyn Store) {
    let dead = dead_letter(store, "revive").await;
    assert_eq!(bytearray_rows(store).await, 1);
    let before = now(store).await;
    let moved = store.deadletter_move(&dead.id, 5).await.expect("deadletter_move");
    let after = now(store).await;
    assert_eq!(moved.retries, 5);
    assert_between("DUEDATE_ after the move", moved.duedate.expect("DUEDATE_"), before, after);
    assert_eq!((moved.lock_owner.as_deref(), moved.lock_time, moved.lock_exp_time), (None, None, None));
    assert_eq!((moved.exception_msg.as_deref(), moved.exception_stack_id.as_deref()), (None, None));
    assert_eq!(moved.attempts, dead.attempts, "ATTEMPTS_ is a fencing token and never goes back");
    assert_eq!((moved.handler_type.as_str(), moved.create_time), ("revive", dead.create_time));
    assert_eq!(must_get(store, &dead.id).await, moved);
    assert_eq!(store.job_get(JobTable::DeadLetter, &dead.id).await.expect("job_get"), None);
    assert_eq!(bytearray_rows(store).await, 0, "the old stack bytes are deleted, not orphaned (seed 000 §4.2)");
    assert_eq!(store.job_stacktrace(JobTable::Runtime, &dead.id).await.expect("job_stacktrace"), None);

    let due = settle(store, moved.duedate.unwrap()).await;
    let again = acquire(store, "n1", Some(due), 10, LOCK).await;
    assert_eq!(ids(&again), vec![dead.id.clone()], "moved back jobs are executable");

    let e = store.deadletter_move("no-such-job", 3).await.expect_err("unknown dead letter");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
    let e = store.deadletter_move(&dead.id, 3).await.expect_err("a runtime job is no dead letter");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
}

pub async fn stacktrace_reads_the_stored_error_chain(store: &dyn Store) {
    let e = store.job_stacktrace(JobTable::Runtime, "no-such-job").await.expect_err("unknown job");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
    let clean = insert(store, message("clean")).await;
    assert_eq!(store.job_stacktrace(JobTable::Runtime, &clean.id).await.expect("job_stacktrace"), None);
    let dead = dead_letter(store, "dead").await;
    assert_eq!(
        store.job_stacktrace(JobTable::DeadLetter, &dead.id).await.expect("job_stacktrace").as_deref(),
        Some("fatal\nbacktrace")
    );
    let e = store.job_stacktrace(JobTable::Runtime, &dead.id).await.expect_err("not in ACT_RU_JOB");
    assert_eq!(e.kind, ErrorKind::NotFound, "{e}");
}
