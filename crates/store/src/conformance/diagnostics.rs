//! What the executor, metrics and the doctor read: next due date, counts, SPEC J11's findings,
//! and the job log.

use super::*;
use kairos_core::JobLogOutcome;

pub async fn next_due_reports_the_earliest_job_acquisition_could_take(store: &dyn Store) {
    let before = now(store).await;
    let empty = store.job_next_due().await.expect("job_next_due");
    assert_eq!(empty.next, None, "no jobs, no next due date");
    assert!(empty.db_now >= before - millis(1), "db_now is the database's now");

    let t0 = ms(now(store).await);
    let hour = SignedDuration::from_hours(1);
    insert(store, due_at("w2", t0 + hour * 2)).await;
    insert(store, due_at("w1", t0 + hour)).await;
    // Earlier jobs that acquisition would not take do not count:
    insert(store, due_at("locked", t0 - SignedDuration::from_mins(1))).await;
    acquire(store, "n1", Some(t0), 10, LOCK).await;
    insert(store, NewJob { job_type: JobType::ExternalWorker, ..due_at("topic", t0 - SignedDuration::from_mins(2)) })
        .await;
    let spent = insert(store, due_at("spent", t0 - SignedDuration::from_mins(3))).await;
    fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE ID_ = ?", &[text(&spent.id)]).await;
    let next = store.job_next_due().await.expect("job_next_due");
    assert_eq!(next.next, Some(t0 + hour), "locked, external-worker and RETRIES_ 0 jobs are skipped");

    insert(store, due_at("overdue", t0 - secs(10))).await;
    assert_eq!(store.job_next_due().await.expect("job_next_due").next, Some(t0 - secs(10)), "an overdue job: look now");
}

pub async fn counts_classify_jobs_by_the_database_clock(store: &dyn Store) {
    assert_eq!(store.job_counts().await.expect("job_counts"), crate::JobCounts::default());
    let t0 = ms(now(store).await);
    let min = SignedDuration::from_mins(1);
    let hour = SignedDuration::from_hours(1);
    insert(store, due_at("exec", t0 - min)).await;
    insert(store, due_at("exec", t0 - min * 2)).await;
    insert(store, due_at("wait", t0 + hour)).await;
    let running = insert(store, due_at("run", t0 - min)).await;
    lock_by_hand(store, &running.id, "n1", t0, t0 + hour).await;
    let expired = insert(store, due_at("expired", t0 - hour * 3)).await;
    lock_by_hand(store, &expired.id, "gone", t0 - hour * 2, t0 - hour).await;
    let failing = insert(store, due_at("failing", t0 + SignedDuration::from_mins(10))).await;
    fixture(
        store,
        "UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = ?, RETRIES_ = 2 WHERE ID_ = ?",
        &[text("boom"), text(&failing.id)],
    )
    .await;
    insert(store, NewJob { job_type: JobType::ExternalWorker, ..due_at("topic", t0 - min) }).await;
    suspended_row(store, "suspended-1", t0).await;
    fixture(
        store,
        "INSERT INTO ACT_RU_DEADLETTER_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, RETRIES_, ATTEMPTS_, HANDLER_TYPE_, CREATE_TIME_, TENANT_ID_) \
         VALUES (?, 1, 'message', FALSE, 0, 3, 'dead', ?, '')",
        &[text("dead-1"), SqlValue::Timestamp(t0)],
    )
    .await;

    let c = store.job_counts().await.expect("job_counts");
    assert_eq!(c.executable, 3, "two due jobs and one with an expired lease: {c:?}");
    assert_eq!(c.waiting, 2, "due in the future: {c:?}");
    assert_eq!(c.running, 1, "{c:?}");
    assert_eq!(c.expired_locks, 1, "{c:?}");
    assert_eq!(c.failing, 1, "{c:?}");
    assert_eq!(c.dead_letters, 1, "{c:?}");
    assert_eq!(c.suspended, 1, "{c:?}");
    assert_eq!(c.oldest_executable_due, Some(t0 - hour * 3), "the expired lease's job is the oldest executable");
}

/// Issue 14 item 10: an async continuation has no DUEDATE_ (it is due when created), so the
/// backlog's age counts from its CREATE_TIME_, not from now (seed 000 §4.5's backlog).
pub async fn counts_age_a_job_without_due_date_from_its_creation(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let hour = SignedDuration::from_hours(1);
    let job = insert(store, due_at("async", t0 - SignedDuration::from_mins(1))).await;
    fixture(
        store,
        "UPDATE ACT_RU_JOB SET DUEDATE_ = NULL, CREATE_TIME_ = ? WHERE ID_ = ?",
        &[SqlValue::Timestamp(t0 - hour * 2), text(&job.id)],
    )
    .await;
    insert(store, due_at("later", t0 - SignedDuration::from_mins(5))).await;
    let c = store.job_counts().await.expect("job_counts");
    assert_eq!(c.executable, 2, "{c:?}");
    assert_eq!(c.oldest_executable_due, Some(t0 - hour * 2), "waiting since it was created: {c:?}");
}

/// "Executable" is acquisition's rule on both backends (unlocked or lease expired, RETRIES_ > 0,
/// due, not of a suspended instance): a job of a suspended instance waits for its activation,
/// so it is neither counted nor the oldest; an orphan is counted (the backlog shows it).
pub async fn counts_leave_out_the_jobs_acquisition_would_not_take(store: &dyn Store) {
    let t0 = ms(now(store).await);
    execution(store, "pi-active", "pi-active", 1).await;
    execution(store, "pi-held", "pi-held", 2).await;
    let active = insert(store, of_instance("pi-active", "pi-active", t0 - secs(60))).await;
    let held = insert(store, of_instance("pi-held", "pi-held", t0 - secs(120))).await;
    let expired_held = insert(store, of_instance("pi-held", "pi-held", t0 - secs(180))).await;
    lock_by_hand(store, &expired_held.id, "gone", t0 - secs(170), t0 - secs(10)).await;
    let spent = insert(store, due_at("spent", t0 - secs(240))).await;
    fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE ID_ = ?", &[text(&spent.id)]).await;
    let c = store.job_counts().await.expect("job_counts");
    assert_eq!(
        c.executable, 1,
        "only {}'s job; {} and {} belong to a suspended instance: {c:?}",
        active.id, held.id, expired_held.id
    );
    assert_eq!(c.oldest_executable_due, Some(t0 - secs(60)), "{c:?}");
    assert_eq!(ids(&acquire(store, "n1", Some(t0), 10, LOCK).await), vec![active.id], "acquisition agrees");
    // An orphan (its instance gone) is in the backlog on both backends, though never taken: the
    // doctor names it apart (diagnostics' orphan_jobs).
    insert(store, of_instance("ex-gone", "pi-gone", t0 - secs(30))).await;
    assert_eq!(store.job_counts().await.unwrap().executable, 1, "the orphan; the active job is leased now");
}

pub async fn diagnostics_find_orphans_ended_instances_expired_locks_and_dead_letters(store: &dyn Store) {
    let t0 = ms(now(store).await);
    execution(store, "pi-live", "pi-live", 1).await;
    execution(store, "pi-ended", "pi-ended", 1).await;
    let live = insert(store, of_instance("pi-live", "pi-live", t0 + secs(60))).await;
    let orphan1 = insert(store, of_instance("ex-gone-1", "pi-gone", t0 + secs(61))).await;
    let orphan2 = insert(store, of_instance("ex-gone-2", "pi-gone", t0 + secs(62))).await;
    let ended = insert(store, of_instance("pi-ended", "pi-ended", t0 + secs(63))).await;
    // (A NULL is not bound into a timestamp column: PostgreSQL would type the parameter as text.)
    let started = "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_) VALUES (?, ?, ?)";
    fixture(store, started, &[text("pi-live"), text("pi-live"), SqlValue::Timestamp(t0 - secs(60))]).await;
    let finished = "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_, END_TIME_) VALUES (?, ?, ?, ?)";
    fixture(
        store,
        finished,
        &[text("pi-ended"), text("pi-ended"), SqlValue::Timestamp(t0 - secs(60)), SqlValue::Timestamp(t0 - secs(1))],
    )
    .await;
    let dead = insert(store, due_at("dead", t0 - secs(1))).await;
    let locked = acquire(store, "n1", Some(t0), 10, LOCK)
        .await
        .jobs
        .into_iter()
        .find(|a| a.job.id == dead.id)
        .expect("acquired")
        .job;
    let dl = Completion::DeadLetter { message: "fatal".into(), stack: "fatal".into() };
    assert_eq!(complete(store, &[completion(&locked, dl)]).await, vec![true]);
    let stale = insert(store, due_at("stale", t0 - secs(600))).await;
    lock_by_hand(store, &stale.id, "gone", t0 - secs(400), t0 - secs(100)).await;
    let fresh = insert(store, due_at("fresh", t0 - secs(600))).await;
    lock_by_hand(store, &fresh.id, "n1", t0, t0 + SignedDuration::from_hours(1)).await;

    let d = store.job_diagnostics(10).await.expect("job_diagnostics");
    let idset = |v: &[Job]| sorted(v.iter().map(|j| j.id.clone()).collect());
    assert_eq!(
        idset(&d.orphan_jobs),
        sorted(vec![orphan1.id.clone(), orphan2.id.clone()]),
        "EXECUTION_ID_ naming no execution"
    );
    assert_eq!(
        idset(&d.jobs_of_ended_instances),
        vec![ended.id.clone()],
        "ACT_HI_PROCINST.END_TIME_ set; not {}",
        live.id
    );
    assert_eq!(idset(&d.expired_locks), vec![stale.id.clone()], "only the expired lease, not {}", fresh.id);
    assert_eq!(idset(&d.dead_letters), vec![dead.id.clone()]);
    assert_eq!((d.counts.dead_letters, d.counts.expired_locks), (1, 1), "{:?}", d.counts);
    assert_eq!(d.counts, store.job_counts().await.expect("job_counts"));

    let one = store.job_diagnostics(1).await.expect("job_diagnostics");
    assert_eq!(one.orphan_jobs.len(), 1, "at most `limit` rows of each finding");
}

pub async fn job_log_lists_attempts_by_job_and_instance_with_paging(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let a = insert(store, NewJob { tenant_id: Some("acme".into()), ..due_at("a", t0 - secs(2)) }).await;
    let b = insert(store, NewJob { process_instance_id: Some("p9".into()), ..due_at("b", t0 - secs(1)) }).await;
    let first = acquire(store, "n1", Some(t0), 10, LOCK).await;
    let (a1, b1) = (first.jobs[0].job.clone(), first.jobs[1].job.clone());
    let retry = Completion::Retry { retries: 2, due: t0 + secs(10), message: "boom".into(), stack: "s".into() };
    assert_eq!(complete(store, &[completion(&a1, retry), completion(&b1, success())]).await, vec![true, true]);
    let a2 = acquire(store, "n2", Some(t0 + secs(10)), 10, LOCK).await.jobs[0].job.clone();
    assert_eq!(complete(store, &[completion(&a2, success())]).await, vec![true]);

    let of_a = store
        .job_log_list(&JobLogFilter { job_id: Some(a.id.clone()), ..Default::default() })
        .await
        .expect("job_log_list");
    assert_eq!(of_a.total, 2);
    let summary: Vec<_> = of_a.data.iter().map(|l| (l.attempt, l.node.clone(), l.outcome)).collect();
    assert_eq!(
        summary,
        vec![(1, Some("n1".into()), JobLogOutcome::Failed), (2, Some("n2".into()), JobLogOutcome::Succeeded)],
        "oldest attempt first"
    );
    let l = &of_a.data[1];
    assert_eq!((l.job_id.as_str(), l.handler_type.as_str(), l.job_type), (a.id.as_str(), "a", JobType::Message));
    assert_eq!((l.start, l.end), (Some(t0 + secs(10)), Some(t0 + secs(10) + millis(25))));
    assert_eq!(
        (l.tenant_id.as_deref(), l.duedate),
        (Some("acme"), Some(t0 + secs(10))),
        "the due date of that attempt"
    );
    assert_ne!(of_a.data[0].id, of_a.data[1].id);

    let of_p9 = store
        .job_log_list(&JobLogFilter { process_instance_id: Some("p9".into()), ..Default::default() })
        .await
        .expect("job_log_list");
    assert_eq!((of_p9.total, of_p9.data.len(), of_p9.data[0].job_id.as_str()), (1, 1, b.id.as_str()));

    let page =
        store.job_log_list(&JobLogFilter { start: 1, size: 1, ..Default::default() }).await.expect("job_log_list");
    assert_eq!((page.total, page.start, page.size, page.data.len()), (3, 1, 1, 1));
    let none = store
        .job_log_list(&JobLogFilter { job_id: Some("no-such-job".into()), ..Default::default() })
        .await
        .expect("job_log_list");
    assert_eq!((none.total, none.data.len()), (0, 0));
}
