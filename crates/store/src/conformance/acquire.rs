//! Acquisition exactly per [`crate::JobAcquireParams`]: due order and limit, what is never
//! taken, lease takeover, exclusivity; and lease extension fenced by owner and attempt.

use super::*;
use crate::LeaseExtendParams;

pub async fn acquire_takes_due_jobs_in_due_order_up_to_the_limit(store: &dyn Store) {
    let t0 = ms(now(store).await);
    // Inserted out of due order, so insertion order cannot pass for due order.
    let mut by_offset = Vec::new();
    for offset in [3, 1, 5, 2, 4] {
        by_offset.push((offset, insert(store, due_at("work", t0 - secs(offset))).await.id));
    }
    by_offset.sort_by_key(|(o, _)| -o);
    let in_due_order: Vec<String> = by_offset.into_iter().map(|(_, id)| id).collect();

    let first = acquire(store, "n1", Some(t0), 3, LOCK).await;
    assert_eq!(first.db_now, t0, "Acquired.db_now is the instant the locks were taken (pinned here)");
    assert_eq!(ids(&first), in_due_order[..3].to_vec(), "the three earliest due, in due order");
    for a in &first.jobs {
        let j = &a.job;
        assert_eq!(j.lock_owner.as_deref(), Some("n1"));
        assert_eq!(j.lock_time, Some(t0), "LOCK_TIME_ = now");
        assert_eq!(j.lock_exp_time, Some(t0 + LOCK), "LOCK_EXP_TIME_ = now + lock time");
        assert_eq!((j.attempts, j.rev, j.retries), (1, 2, 3), "ATTEMPTS_ + 1, REV_ + 1, retries untouched");
        assert_eq!(a.abandoned_by, None);
        assert_eq!(get(store, &j.id).await.as_ref(), Some(j), "the returned row is the stored row");
    }
    let second = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(ids(&second), in_due_order[3..].to_vec());
    assert!(acquire(store, "n2", Some(t0), 10, LOCK).await.jobs.is_empty(), "everything is locked");

    let spare = insert(store, due_at("work", t0 - secs(9))).await;
    assert!(acquire(store, "n1", Some(t0), 0, LOCK).await.jobs.is_empty(), "limit 0 takes nothing");
    assert_eq!(must_get(store, &spare.id).await.lock_owner, None);
}

/// Jobs due at the same instant are taken by PRIORITY_, higher first (a trigger's priority:
/// Quartz fires simultaneous triggers in priority order), one at a time as by a node with one
/// free worker; a job due earlier still comes first whatever its priority.
pub async fn acquire_takes_jobs_due_together_by_priority(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let earlier = insert(store, due_at("work", t0 - secs(2))).await.id;
    let mut together = Vec::new();
    for priority in [3, 10, -2, 7] {
        let id = insert(store, due_at("work", t0 - secs(1))).await.id;
        let n = store
            .sql_execute("UPDATE ACT_RU_JOB SET PRIORITY_ = ? WHERE ID_ = ?", &[SqlValue::Int(priority), text(&id)])
            .await
            .expect("set PRIORITY_");
        assert_eq!(n, 1);
        together.push((priority, id));
    }
    together.sort_by_key(|(p, _)| -p);
    let mut want = vec![earlier];
    want.extend(together.into_iter().map(|(_, id)| id));
    let mut got = Vec::new();
    for _ in 0..want.len() {
        got.extend(ids(&acquire(store, "n1", Some(t0), 1, LOCK).await));
    }
    assert_eq!(got, want, "due order first, then priority, higher first");
    let late = insert(store, due_at("work", t0 - secs(1))).await.id;
    let also = insert(store, due_at("work", t0 - secs(1))).await.id;
    store
        .sql_execute("UPDATE ACT_RU_JOB SET PRIORITY_ = 1 WHERE ID_ = ?", &[text(&also)])
        .await
        .expect("set PRIORITY_");
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 2, LOCK).await), vec![also, late], "a batch is in that order too");
}

pub async fn acquire_leaves_future_jobs_alone(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let timer = insert(store, due_at("timer", t0 + secs(10))).await;
    assert!(acquire(store, "n1", Some(t0), 10, LOCK).await.jobs.is_empty(), "due in ten seconds");
    assert!(
        acquire(store, "n1", Some(t0 + secs(10) - millis(1)), 10, LOCK).await.jobs.is_empty(),
        "a millisecond early"
    );
    let at_due = acquire(store, "n1", Some(t0 + secs(10)), 10, LOCK).await;
    assert_eq!(ids(&at_due), vec![timer.id], "DUEDATE_ <= now: due exactly at now is taken");
}

/// The timer lane (issue 21): a timer due now is taken ahead of a backlog of async jobs that
/// became due before it, up to the limit; the async jobs follow in due order, and a timer not
/// yet due stays put.
pub async fn acquire_takes_due_timers_ahead_of_an_async_backlog(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let mut backlog = Vec::new();
    for i in 0..6 {
        backlog.push(insert(store, due_at("work", t0 - secs(60 - i))).await.id);
    }
    let mut timer = due_at("timer", t0 - millis(1));
    timer.job_type = JobType::Timer;
    let timer = insert(store, timer).await;
    let mut future = due_at("timer", t0 + secs(5));
    future.job_type = JobType::Timer;
    let future = insert(store, future).await;

    let first = acquire(store, "n1", Some(t0), 3, LOCK).await;
    let got = ids(&first);
    assert!(got.contains(&timer.id), "the due timer is in the first batch, ahead of 6 older async jobs: {got:?}");
    assert_eq!(got.len(), 3);
    assert_eq!(
        ids(&first).into_iter().filter(|id| *id != timer.id).collect::<Vec<_>>(),
        backlog[..2].to_vec(),
        "the rest of the batch: the async jobs in due order"
    );
    let rest = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(ids(&rest), backlog[2..].to_vec());
    assert_eq!(must_get(store, &future.id).await.lock_owner, None, "a timer not due yet is not taken");
}

/// With a lookahead, dated jobs due within it are taken too (the executor starts them at their
/// due date); later ones, and the lease clock, are unaffected.
pub async fn acquire_with_a_lookahead_takes_jobs_due_within_it(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let soon = insert(store, due_at("timer", t0 + millis(80))).await;
    let later = insert(store, due_at("timer", t0 + millis(300))).await;
    let params = |node: &str| JobAcquireParams {
        node: node.to_string(),
        limit: 10,
        lock_time: LOCK,
        now: Some(t0),
        lookahead: millis(100),
    };
    let got = store.job_acquire(&params("n1")).await.expect("job_acquire");
    assert_eq!(ids(&got), vec![soon.id.clone()], "due in 80 ms: taken; due in 300 ms: not");
    assert_eq!(got.db_now, t0, "the clock of the acquisition is now, not the horizon");
    let row = must_get(store, &soon.id).await;
    assert_eq!(row.lock_exp_time, Some(t0 + LOCK), "the lease runs from now");
    assert_eq!(row.duedate, Some(t0 + millis(80)), "the due date is kept: the executor waits for it");
    assert!(store.job_acquire(&params("n2")).await.expect("job_acquire").jobs.is_empty());
    assert_eq!(must_get(store, &later.id).await.lock_owner, None);
}

pub async fn acquire_leaves_jobs_of_suspended_instances_alone(store: &dyn Store) {
    let t0 = ms(now(store).await);
    execution(store, "pi-active", "pi-active", 1).await;
    execution(store, "pi-suspended", "pi-suspended", 2).await;
    // An active child execution of the suspended instance: the seed joins on the instance.
    execution(store, "ex-child", "pi-suspended", 1).await;
    let active = insert(store, of_instance("pi-active", "pi-active", t0 - secs(4))).await;
    let suspended = insert(store, of_instance("pi-suspended", "pi-suspended", t0 - secs(3))).await;
    let child = insert(store, of_instance("ex-child", "pi-suspended", t0 - secs(2))).await;
    let standalone = insert(store, due_at("standalone", t0 - secs(1))).await;
    let taken = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(
        ids(&taken),
        vec![active.id, standalone.id],
        "jobs of suspended instance ({}, {}) must stay",
        suspended.id,
        child.id
    );
}

pub async fn acquire_leaves_jobs_without_retries_alone(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let spent = insert(store, due_at("spent", t0 - secs(2))).await;
    let fresh = insert(store, due_at("fresh", t0 - secs(1))).await;
    fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE ID_ = ?", &[text(&spent.id)]).await;
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 10, LOCK).await), vec![fresh.id], "RETRIES_ 0 is never taken");
}

pub async fn acquire_leaves_external_worker_jobs_alone(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let external = insert(store, NewJob { job_type: JobType::ExternalWorker, ..due_at("topic", t0 - secs(2)) }).await;
    let internal = insert(store, due_at("internal", t0 - secs(1))).await;
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 10, LOCK).await), vec![internal.id]);
    assert_eq!(must_get(store, &external.id).await.lock_owner, None, "external workers fetch their own jobs");
}

pub async fn acquire_takes_over_an_expired_lease(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let job = insert(store, due_at("slow", t0 - secs(1))).await;
    let lock = SignedDuration::from_mins(1);
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 10, lock).await), vec![job.id.clone()]);
    assert!(
        acquire(store, "n2", Some(t0 + lock - millis(1)), 10, LOCK).await.jobs.is_empty(),
        "a live lease is never taken"
    );
    let at = t0 + lock;
    let taken = acquire(store, "n2", Some(at), 10, LOCK).await;
    assert_eq!(ids(&taken), vec![job.id.clone()], "LOCK_EXP_TIME_ <= now: the expired lease is taken over");
    let a = &taken.jobs[0];
    assert_eq!(a.abandoned_by.as_deref(), Some("n1"));
    let j = &a.job;
    assert_eq!(j.lock_owner.as_deref(), Some("n2"));
    assert_eq!((j.lock_time, j.lock_exp_time), (Some(at), Some(at + LOCK)));
    assert_eq!(j.retries, 2, "the abandoned attempt spends a retry (Camunda #2858)");
    assert_eq!(j.attempts, 2);
    assert_eq!(j.rev, 3);

    let log = log_of(store, &job.id).await;
    assert_eq!(log.len(), 1, "one log row for the abandoned attempt: {log:?}");
    let row = &log[0];
    assert_eq!(row.outcome, kairos_core::JobLogOutcome::Abandoned);
    assert_eq!((row.attempt, row.node.as_deref()), (1, Some("n1")), "the previous owner's attempt");
    assert_eq!(row.start, Some(t0), "the abandoned attempt started when n1 locked it");
    assert_eq!((row.handler_type.as_str(), row.job_type), ("slow", JobType::Message));
    assert!(acquire(store, "n1", Some(at + secs(1)), 10, LOCK).await.jobs.is_empty(), "n2 now holds it");
}

pub async fn acquire_dead_letters_an_expired_lease_on_its_last_retry(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let lock = SignedDuration::from_mins(1);
    // A job that failed once (its stack is stored) and then lost its node on its last retry.
    let job = insert(store, NewJob { retries: 2, ..due_at("poison", t0 - secs(1)) }).await;
    let first = acquire(store, "n1", Some(t0), 10, lock).await.jobs[0].job.clone();
    let retry =
        Completion::Retry { retries: 1, due: t0 + secs(1), message: "first".into(), stack: "first\nstack".into() };
    assert_eq!(complete(store, &[completion(&first, retry)]).await, vec![true]);
    let last = acquire(store, "n1", Some(t0 + secs(1)), 10, lock).await;
    assert_eq!((last.jobs[0].job.retries, last.jobs[0].job.attempts), (1, 2));
    let spare = insert(store, due_at("spare", t0 - secs(2))).await;

    let at = t0 + secs(1) + lock;
    let taken = acquire(store, "n2", Some(at), 10, LOCK).await;
    assert_eq!(
        ids(&taken),
        vec![spare.id.clone()],
        "the abandoned attempt spent the last retry: it does not run again"
    );
    assert_eq!(get(store, &job.id).await, None);
    let dead = store.job_get(JobTable::DeadLetter, &job.id).await.expect("job_get").expect("moved to the dead letters");
    assert_eq!((dead.retries, dead.attempts), (0, 2));
    assert_eq!((dead.lock_owner.as_deref(), dead.lock_time, dead.lock_exp_time), (None, None, None));
    let msg = dead.exception_msg.clone().expect("EXCEPTION_MSG_ says why");
    assert!(msg.contains("n1"), "the message names the node whose lease expired: {msg}");
    assert_eq!(
        store.job_stacktrace(JobTable::DeadLetter, &job.id).await.expect("job_stacktrace").as_deref(),
        Some("first\nstack"),
        "the earlier failure's stack stays with the job"
    );
    assert_eq!(bytearray_rows(store).await, 1);
    let log: Vec<_> = log_of(store, &job.id).await.iter().map(|l| (l.attempt, l.node.clone(), l.outcome)).collect();
    assert_eq!(
        log,
        vec![
            (1, Some("n1".into()), kairos_core::JobLogOutcome::Failed),
            (2, Some("n1".into()), kairos_core::JobLogOutcome::Abandoned),
        ]
    );
}

pub async fn acquire_takes_one_job_per_exclusive_key(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let k1 = insert(store, exclusive_at("K", t0 - millis(3000))).await;
    let shared = insert(store, NewJob { exclusive: false, ..exclusive_at("K", t0 - millis(2800)) }).await;
    let l1 = insert(store, exclusive_at("L", t0 - millis(2500))).await;
    let k2 = insert(store, exclusive_at("K", t0 - millis(2000))).await;
    let free = insert(store, due_at("free", t0 - millis(1500))).await;
    let k3 = insert(store, exclusive_at("K", t0 - millis(1000))).await;

    let first = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(
        ids(&first),
        vec![k1.id.clone(), shared.id.clone(), l1.id.clone(), free.id.clone()],
        "one exclusive job per key per batch (the earliest); a non-exclusive job ignores the key"
    );
    assert!(
        acquire(store, "n2", Some(t0), 10, LOCK).await.jobs.is_empty(),
        "K and L hold live exclusive leases, so {} and {} wait",
        k2.id,
        k3.id
    );
    let k1_locked = first.jobs[0].job.clone();
    assert_eq!(complete(store, &[completion(&k1_locked, success())]).await, vec![true]);
    assert_eq!(ids(&acquire(store, "n2", Some(t0), 10, LOCK).await), vec![k2.id], "the next job of K, once K is free");
}

pub async fn acquire_waits_for_a_live_exclusive_lease(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let e1 = insert(store, exclusive_at("K", t0 - secs(2))).await;
    let lock = SignedDuration::from_mins(1);
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 10, lock).await), vec![e1.id.clone()]);
    let e2 = insert(store, exclusive_at("K", t0 - secs(1))).await;
    assert!(
        acquire(store, "n2", Some(t0 + secs(30)), 10, LOCK).await.jobs.is_empty(),
        "{} must wait for {}",
        e2.id,
        e1.id
    );
    let after = acquire(store, "n2", Some(t0 + lock), 10, LOCK).await;
    assert_eq!(ids(&after), vec![e1.id], "once the lease expires, the earliest job of the key (taken over), alone");
    assert_eq!(after.jobs[0].abandoned_by.as_deref(), Some("n1"));
}

pub async fn lease_extension_is_fenced_by_owner_and_attempt(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let j1 = insert(store, due_at("long", t0 - secs(2))).await;
    let j2 = insert(store, due_at("long", t0 - secs(1))).await;
    let lock = SignedDuration::from_mins(1);
    acquire(store, "n1", Some(t0), 10, lock).await;
    let extend = |node: &str, jobs: Vec<(String, i32)>| LeaseExtendParams {
        node: node.into(),
        jobs,
        lock_time: SignedDuration::from_mins(10),
        start: false,
    };

    let before = now(store).await;
    let got = store
        .job_lease_extend(&extend("n1", vec![(j1.id.clone(), 1), (j2.id.clone(), 99)]))
        .await
        .expect("job_lease_extend");
    let after = now(store).await;
    assert_eq!(got, vec![j1.id.clone()], "only the lease whose attempt matches");
    let exp = must_get(store, &j1.id).await.lock_exp_time.expect("still locked");
    assert_between(
        "extended LOCK_EXP_TIME_",
        exp,
        before + SignedDuration::from_mins(10),
        after + SignedDuration::from_mins(10),
    );
    assert_eq!(must_get(store, &j2.id).await.lock_exp_time, Some(t0 + lock), "j2 untouched");

    let other = store.job_lease_extend(&extend("n2", vec![(j1.id.clone(), 1)])).await.expect("job_lease_extend");
    assert!(other.is_empty(), "another node cannot extend n1's lease");
    assert!(store.job_lease_extend(&extend("n1", vec![])).await.expect("empty").is_empty());

    // Once n2 took j2 over, n1's lease on it is gone for good.
    acquire(store, "n2", Some(t0 + lock), 10, LOCK).await;
    assert_eq!(must_get(store, &j2.id).await.lock_owner.as_deref(), Some("n2"));
    let lost = store.job_lease_extend(&extend("n1", vec![(j2.id.clone(), 1)])).await.expect("job_lease_extend");
    assert!(lost.is_empty(), "a lease taken over cannot be extended by its old owner");
}

/// A node whose extension arrives after its lease expired (paused, partitioned, or declared
/// dead, which expires its leases) must not revive it: by then the job, or its exclusive key,
/// may belong to another node.
pub async fn lease_extension_does_not_revive_an_expired_lease(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let j = insert(store, due_at("late", t0 - SignedDuration::from_mins(11))).await;
    acquire(store, "n1", Some(t0 - SignedDuration::from_mins(10)), 10, SignedDuration::from_mins(1)).await;
    let got = store
        .job_lease_extend(&LeaseExtendParams {
            node: "n1".into(),
            jobs: vec![(j.id.clone(), 1)],
            lock_time: SignedDuration::from_mins(10),
            start: false,
        })
        .await
        .expect("job_lease_extend");
    assert!(got.is_empty(), "an expired lease was extended: {got:?}");
    let row = must_get(store, &j.id).await;
    assert_eq!(row.lock_exp_time, Some(t0 - SignedDuration::from_mins(9)), "LOCK_EXP_TIME_ untouched");
}

/// A lease taken ahead of its job's due date (the lookahead) whose node dies before the handler
/// starts was no attempt: its take-over spends no retry and logs `not-started`, and a job on its
/// last retry runs again instead of going to the dead letters. Once the node marks the start (a
/// lease extension, which moves LOCK_TIME_ to the due date), a take-over counts the attempt.
pub async fn acquire_takes_over_an_unstarted_lookahead_lease_without_spending_a_retry(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let unstarted = insert(store, NewJob { retries: 1, ..due_at("timer", t0 + millis(80)) }).await;
    let started = insert(store, due_at("timer", t0 + millis(90))).await;
    let ahead =
        JobAcquireParams { node: "n1".into(), limit: 10, lock_time: LOCK, now: Some(t0), lookahead: millis(100) };
    assert_eq!(store.job_acquire(&ahead).await.expect("job_acquire").jobs.len(), 2);

    // n1 reaches the due date of one job and marks its start before running the handler.
    // The keeper renews both leases first: a renewal is no start.
    let renew = crate::LeaseExtendParams {
        node: "n1".into(),
        jobs: vec![(started.id.clone(), 1), (unstarted.id.clone(), 1)],
        lock_time: LOCK,
        start: false,
    };
    assert_eq!(store.job_lease_extend(&renew).await.expect("job_lease_extend").len(), 2);
    assert_eq!(must_get(store, &started.id).await.lock_time, Some(t0), "a renewal does not start the attempt");
    let mark = crate::LeaseExtendParams {
        node: "n1".into(),
        jobs: vec![(started.id.clone(), 1)],
        lock_time: LOCK,
        start: true,
    };
    assert_eq!(store.job_lease_extend(&mark).await.expect("job_lease_extend"), vec![started.id.clone()]);
    assert_eq!(
        must_get(store, &started.id).await.lock_time,
        Some(t0 + millis(90)),
        "the attempt starts at the due date"
    );
    assert_eq!(must_get(store, &unstarted.id).await.lock_time, Some(t0), "not started: still the acquisition");

    // n1 dies; n2 takes both over once the leases have expired.
    let got = acquire(store, "n2", Some(now(store).await + LOCK + LOCK), 10, LOCK).await;
    assert_eq!(got.jobs.len(), 2, "{got:?}");
    let u = must_get(store, &unstarted.id).await;
    assert_eq!(
        (u.retries, u.attempts, u.lock_owner.as_deref()),
        (1, 2, Some("n2")),
        "no retry spent, not dead-lettered"
    );
    let s = must_get(store, &started.id).await;
    assert_eq!((s.retries, s.attempts), (2, 2), "the started attempt counts");
    let outcome =
        |log: Vec<JobLogEntry>| log.iter().map(|l| (l.attempt, l.node.clone(), l.outcome)).collect::<Vec<_>>();
    assert_eq!(
        outcome(log_of(store, &unstarted.id).await),
        vec![(1, Some("n1".into()), kairos_core::JobLogOutcome::NotStarted)]
    );
    assert_eq!(
        outcome(log_of(store, &started.id).await),
        vec![(1, Some("n1".into()), kairos_core::JobLogOutcome::Abandoned)]
    );
    assert_eq!(store.job_get(JobTable::DeadLetter, &unstarted.id).await.expect("job_get"), None);
}
