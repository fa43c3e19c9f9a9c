//! The job lifecycle table (`kairos_core::lifecycle`) checked against what the store does: the
//! state of a job is read before and after each operation with [`JobState::of`] at the
//! database's now, and the pair must be an edge of the table.

use super::*;
use crate::{JobReleaseParams, NodeRegistration};
use kairos_core::{JobEvent, JobState};
use kairos_time::IsoDuration;

/// The state of job `id` by the database clock, wherever its row is.
async fn state(store: &dyn Store, id: &str) -> JobState {
    let db_now = now(store).await;
    for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        if let Some(job) = store.job_get(table, id).await.expect("job_get") {
            return JobState::of(Some((&job, table)), db_now);
        }
    }
    JobState::of(None, db_now)
}

fn edge(from: Option<JobState>, event: JobEvent, to: JobState) {
    assert!(
        JobState::allows(from, event, to),
        "the store took a job {from:?} --{event:?}--> {to:?}, which the lifecycle table does not define"
    );
}

/// The state after an insert, once the database clock has reached the due date.
async fn enqueued(store: &dyn Store, job: NewJob) -> (Job, JobState) {
    let stored = insert(store, job).await;
    if let Some(due) = stored.duedate
        && due <= now(store).await + millis(1)
    {
        settle(store, due).await;
    }
    let s = state(store, &stored.id).await;
    (stored, s)
}

async fn take(store: &dyn Store, node: &str, expect: &[&str]) -> Vec<Job> {
    let got = acquire(store, node, None, 100, LOCK).await;
    let want: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
    assert_eq!(sorted(ids(&got)), sorted(want), "acquisition by {node}");
    got.jobs.into_iter().map(|a| a.job).collect()
}

pub async fn lifecycle_transitions_follow_the_table(store: &dyn Store) {
    use JobEvent::*;
    let hour = SignedDuration::from_hours(1);

    // Enqueue now / later.
    let (a, s) = enqueued(store, message("a")).await;
    edge(None, EnqueueNow, s);
    let (b, s) = enqueued(store, NewJob { due: Due::In(IsoDuration::parse("PT1H").unwrap()), ..message("b") }).await;
    edge(None, EnqueueLater, s);

    // Execute now: waiting → executable.
    let before = state(store, &b.id).await;
    let moved = store.job_execute_now(&b.id).await.expect("job_execute_now");
    settle(store, moved.duedate.unwrap()).await;
    edge(Some(before), ExecuteNow, state(store, &b.id).await);

    // Acquire: executable → running.
    let (sa, sb) = (state(store, &a.id).await, state(store, &b.id).await);
    let locked = take(store, "n1", &[&a.id, &b.id]).await;
    edge(Some(sa), Acquire, state(store, &a.id).await);
    edge(Some(sb), Acquire, state(store, &b.id).await);
    let la = locked.iter().find(|j| j.id == a.id).unwrap().clone();
    let lb = locked.iter().find(|j| j.id == b.id).unwrap().clone();

    // Succeed: running → done.
    let before = state(store, &a.id).await;
    assert_eq!(complete(store, &[completion(&la, success())]).await, vec![true]);
    edge(Some(before), Succeed, state(store, &a.id).await);

    // Fail with retries left: running → waiting.
    let before = state(store, &b.id).await;
    let due = now(store).await + hour;
    let retry = Completion::Retry { retries: 2, due, message: "m".into(), stack: "s".into() };
    assert_eq!(complete(store, &[completion(&lb, retry)]).await, vec![true]);
    edge(Some(before), FailWithRetriesLeft, state(store, &b.id).await);

    // Reschedule: running → waiting.
    let (c, _) =
        enqueued(store, NewJob { job_type: JobType::Timer, repeat: Some("R2/PT1H".into()), ..message("c") }).await;
    let lc = take(store, "n1", &[&c.id]).await.remove(0);
    let before = state(store, &c.id).await;
    let next = now(store).await + hour;
    let resched = Completion::Reschedule { repeat: "R1/PT1H".into(), due: next, log_message: None };
    assert_eq!(complete(store, &[completion(&lc, resched)]).await, vec![true]);
    edge(Some(before), Reschedule, state(store, &c.id).await);

    // Fail the last retry: running → dead letter.
    let (d, _) = enqueued(store, NewJob { retries: 1, ..message("d") }).await;
    let ld = take(store, "n1", &[&d.id]).await.remove(0);
    let before = state(store, &d.id).await;
    let dl = Completion::DeadLetter { message: "m".into(), stack: "s".into() };
    assert_eq!(complete(store, &[completion(&ld, dl)]).await, vec![true]);
    edge(Some(before), FailLastRetry, state(store, &d.id).await);

    // Move back: dead letter → executable.
    let before = state(store, &d.id).await;
    let moved = store.deadletter_move(&d.id, 3).await.expect("deadletter_move");
    settle(store, moved.duedate.unwrap()).await;
    edge(Some(before), MoveBack, state(store, &d.id).await);

    // Lease expiry through a dead node: running → executable.
    let reg = NodeRegistration { id: "n9".into(), host: "h".into(), pid: 9, workers: 1, settings: None };
    store.node_heartbeat(&reg).await.expect("node_heartbeat");
    take(store, "n9", &[&d.id]).await;
    let before = state(store, &d.id).await;
    let old = now(store).await - SignedDuration::from_mins(10);
    fixture(store, "UPDATE KAIROS_NODE SET HEARTBEAT_ = ? WHERE ID_ = ?", &[SqlValue::Timestamp(old), text("n9")])
        .await;
    assert_eq!(
        store.node_reap_dead(SignedDuration::from_mins(1)).await.expect("node_reap_dead"),
        vec!["n9".to_string()]
    );
    edge(Some(before), LeaseExpire, state(store, &d.id).await);

    // Hand back: running → executable.
    let ld = take(store, "n1", &[&d.id]).await.remove(0);
    let before = state(store, &d.id).await;
    let release =
        JobReleaseParams { node: "n1".into(), jobs: vec![(d.id.clone(), ld.attempts)], reason: "stop".into() };
    assert_eq!(store.job_release(&release).await.expect("job_release"), 1);
    edge(Some(before), HandBack, state(store, &d.id).await);

    // Delete from every deletable state.
    let mut seen = vec![deleted(store, &b.id, JobTable::Runtime).await, deleted(store, &d.id, JobTable::Runtime).await];
    let (e, _) = enqueued(store, NewJob { retries: 1, ..message("e") }).await;
    let le = take(store, "n1", &[&e.id]).await.remove(0);
    let dl = Completion::DeadLetter { message: "m".into(), stack: "s".into() };
    assert_eq!(complete(store, &[completion(&le, dl)]).await, vec![true]);
    seen.push(deleted(store, &e.id, JobTable::DeadLetter).await);
    suspended_row(store, "suspended-1", now(store).await).await;
    seen.push(deleted(store, "suspended-1", JobTable::Suspended).await);
    assert_eq!(
        seen,
        vec![JobState::Waiting, JobState::Executable, JobState::DeadLetter, JobState::Suspended],
        "deletion was exercised from each deletable state"
    );
}

/// Deletes a job, checks the edge, and returns the state it was deleted from.
async fn deleted(store: &dyn Store, id: &str, table: JobTable) -> JobState {
    let before = state(store, id).await;
    store.job_delete(table, id, false).await.expect("job_delete");
    edge(Some(before), JobEvent::Delete, state(store, id).await);
    before
}
