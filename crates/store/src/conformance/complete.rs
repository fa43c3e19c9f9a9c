//! Finishing attempts: each [`Completion`] variant, its log row, its ACT_GE_BYTEARRAY rows, and
//! the lease fence that makes a lost lease write nothing.

use super::*;
use kairos_core::JobLogOutcome;

/// Inserts a job due a second before `t0` and locks it for `node` at `t0`.
async fn running(store: &dyn Store, job: NewJob, node: &str, t0: Timestamp) -> Job {
    let id = job.id.clone();
    insert(store, job).await;
    let taken = acquire(store, node, Some(t0), 100, LOCK).await;
    taken
        .jobs
        .into_iter()
        .map(|a| a.job)
        .find(|j| j.id == id)
        .unwrap_or_else(|| panic!("job {id} should have been acquired"))
}

pub async fn complete_delete_removes_the_row_and_logs_success(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let new = NewJob {
        process_instance_id: Some("pi-7".into()),
        element_id: Some("sendMail".into()),
        exclusive: true,
        exclusive_key: Some("pi-7".into()),
        tenant_id: Some("acme".into()),
        ..due_at("mail", t0 - secs(1))
    };
    let job = running(store, new, "n1", t0).await;
    let mut c = completion(&job, Completion::Delete { log_message: Some("sent 3 mails".into()) });
    c.finished = t0 + millis(1500);
    assert_eq!(complete(store, std::slice::from_ref(&c)).await, vec![true]);
    assert_eq!(get(store, &job.id).await, None, "a successful one-shot job is deleted");

    let log = log_of(store, &job.id).await;
    assert_eq!(log.len(), 1, "{log:?}");
    let row = &log[0];
    assert_eq!(row.outcome, JobLogOutcome::Succeeded);
    assert_eq!((row.attempt, row.node.as_deref()), (1, Some("n1")));
    assert_eq!((row.start, row.end), (Some(t0), Some(t0 + millis(1500))));
    assert_eq!(row.message.as_deref(), Some("sent 3 mails"));
    assert_eq!((row.handler_type.as_str(), row.job_type), ("mail", JobType::Message));
    assert_eq!(row.process_instance_id.as_deref(), Some("pi-7"));
    assert_eq!(row.element_id.as_deref(), Some("sendMail"));
    assert_eq!(row.exclusive_key.as_deref(), Some("pi-7"));
    assert_eq!(row.duedate, Some(t0 - secs(1)));
    assert_eq!(row.tenant_id.as_deref(), Some("acme"));
    assert_eq!(complete(store, &[c]).await, vec![true], "the same completion again: already applied, not twice");
    assert_eq!(log_rows(store).await, 1);
}

pub async fn complete_reschedule_keeps_one_row_with_the_next_due_date(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let timer = NewJob { job_type: JobType::Timer, repeat: Some("R3/PT10S".into()), ..due_at("tick", t0 - secs(1)) };
    let job = running(store, timer, "n1", t0).await;
    let next = t0 + secs(9);
    let c = completion(&job, Completion::Reschedule { repeat: "R2/PT10S".into(), due: next, log_message: None });
    assert_eq!(complete(store, &[c]).await, vec![true]);
    let row = must_get(store, &job.id).await;
    assert_eq!((row.duedate, row.repeat.as_deref()), (Some(next), Some("R2/PT10S")));
    assert_eq!((row.lock_owner, row.lock_time, row.lock_exp_time), (None, None, None), "unlocked for the next fire");
    assert_eq!((row.retries, row.attempts), (3, 1));
    assert_eq!(
        scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = ?", &[text("tick")]).await,
        1,
        "a repeating timer keeps one row (seed 000 §3.3)"
    );
    let log = log_of(store, &job.id).await;
    assert_eq!(log.iter().map(|l| l.outcome).collect::<Vec<_>>(), vec![JobLogOutcome::Rescheduled]);
    assert_eq!(
        ids(&acquire(store, "n1", Some(next), 10, LOCK).await),
        vec![job.id],
        "it fires again at its next due date"
    );
}

/// A repeating timer's retries are per fire, as in Flowable (where each fire is a new job with
/// the retries its definition gives): a failure spends a retry of that fire, and the next fire
/// starts with the retries the job was created with, whether it came from `job_insert` or
/// `job_insert_many`, and after a trip to the dead letters and back. A daily timer with two
/// retries that fails once on each of three days is no dead letter.
pub async fn complete_reschedule_gives_every_fire_the_retries_the_job_was_created_with(store: &dyn Store) {
    use kairos_core::{AttemptResult, RetryPolicy, plan_completion};
    let t0 = ms(now(store).await);
    let timer = |handler: &str| NewJob {
        job_type: JobType::Timer,
        retries: 2,
        repeat: Some("R/P1D".into()),
        ..due_at(handler, t0 - secs(1))
    };
    let (daily, nightly) = (timer("daily"), timer("nightly"));
    let ids = [daily.id.clone(), nightly.id.clone()];
    insert(store, daily).await;
    assert_eq!(store.job_insert_many(&[nightly]).await.expect("job_insert_many"), 1);
    let failed = || AttemptResult::Failed { message: "flaky".into(), chain: "flaky".into() };
    let succeeded = || AttemptResult::Succeeded { message: None };
    let policy = RetryPolicy::default();
    // Runs every due job once at `at` with `result`, as the executor would plan it.
    let attempt = |at: Timestamp, result: fn() -> AttemptResult| async move {
        let taken = acquire(store, "n1", Some(at), 10, LOCK).await;
        assert_eq!(taken.jobs.len(), 2, "both timers are due at {at}");
        let cs: Vec<_> =
            taken.jobs.iter().map(|a| completion(&a.job, plan_completion(&a.job, result(), at, &policy))).collect();
        assert_eq!(complete(store, &cs).await, vec![true, true]);
    };
    let mut fire = t0;
    for day in 1..=3 {
        attempt(fire, failed).await;
        for id in &ids {
            assert_eq!(must_get(store, id).await.retries, 1, "day {day}: the failure spent a retry of this fire");
        }
        attempt(fire + secs(10), succeeded).await;
        for id in &ids {
            let row = must_get(store, id).await;
            assert_eq!(
                (row.retries, row.exception_msg.as_deref()),
                (2, None),
                "day {day}: the next fire starts with the retries the job was created with"
            );
            fire = row.duedate.expect("rescheduled");
        }
    }
    // Dead-lettered on some day, moved back with more retries by an operator: that fire has
    // them, the next fires the job's own again.
    for _ in 0..2 {
        attempt(fire, failed).await;
        fire += secs(10);
    }
    for id in &ids {
        assert!(get(store, id).await.is_none(), "two failures in one fire dead-letter it");
        store.deadletter_move(id, 5).await.expect("deadletter_move");
    }
    let moved = now(store).await;
    attempt(moved.max(fire), succeeded).await;
    for id in &ids {
        assert_eq!(must_get(store, id).await.retries, 2, "the created-with retries survive the dead letters");
    }
}

pub async fn complete_retry_stores_the_failure_and_replaces_its_stack(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let job = running(store, due_at("flaky", t0 - secs(1)), "n1", t0).await;
    let retry = |retries, due, msg: &str| Completion::Retry {
        retries,
        due,
        message: msg.to_string(),
        stack: format!("{msg}\ncaused by: connection refused\n  at flaky.rs:10"),
    };

    assert_eq!(complete(store, &[completion(&job, retry(2, t0 + secs(10), "boom"))]).await, vec![true]);
    let row = must_get(store, &job.id).await;
    assert_eq!((row.retries, row.duedate, row.attempts), (2, Some(t0 + secs(10)), 1));
    assert_eq!((row.lock_owner.as_deref(), row.lock_time, row.lock_exp_time), (None, None, None), "lock cleared");
    assert_eq!(row.exception_msg.as_deref(), Some("boom"));
    let first_stack = row.exception_stack_id.clone().expect("EXCEPTION_STACK_ID_ set");
    assert_eq!(
        store.job_stacktrace(JobTable::Runtime, &job.id).await.expect("job_stacktrace").as_deref(),
        Some("boom\ncaused by: connection refused\n  at flaky.rs:10")
    );
    assert_eq!(bytearray_rows(store).await, 1);

    let again = acquire(store, "n1", Some(t0 + secs(10)), 10, LOCK).await;
    let job2 = again.jobs[0].job.clone();
    assert_eq!(
        (job2.attempts, job2.retries),
        (2, 2),
        "a failed attempt's retry is spent by the completion, not by acquisition"
    );
    assert_eq!(complete(store, &[completion(&job2, retry(1, t0 + secs(20), "bang"))]).await, vec![true]);
    let row = must_get(store, &job.id).await;
    let second_stack = row.exception_stack_id.clone().expect("EXCEPTION_STACK_ID_ set");
    assert_ne!(first_stack, second_stack);
    assert_eq!(row.exception_msg.as_deref(), Some("bang"));
    assert_eq!(bytearray_rows(store).await, 1, "the previous stack row is replaced, not orphaned");
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM ACT_GE_BYTEARRAY WHERE ID_ = ?", &[text(&first_stack)]).await, 0);
    assert!(
        store.job_stacktrace(JobTable::Runtime, &job.id).await.expect("job_stacktrace").unwrap().starts_with("bang")
    );

    let third = acquire(store, "n1", Some(t0 + secs(20)), 10, LOCK).await.jobs[0].job.clone();
    assert_eq!(complete(store, &[completion(&third, success())]).await, vec![true]);
    assert_eq!(bytearray_rows(store).await, 0, "deleting the job deletes its stack row");
    let outcomes: Vec<_> =
        log_of(store, &job.id).await.iter().map(|l| (l.attempt, l.outcome, l.message.clone())).collect();
    assert_eq!(
        outcomes,
        vec![
            (1, JobLogOutcome::Failed, Some("boom".to_string())),
            (2, JobLogOutcome::Failed, Some("bang".to_string())),
            (3, JobLogOutcome::Succeeded, None),
        ]
    );
}

pub async fn complete_dead_letter_moves_the_row_with_its_stack(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let job = running(store, NewJob { retries: 2, ..due_at("doomed", t0 - secs(1)) }, "n1", t0).await;
    // A first failure leaves a stack row that the dead-lettering must replace.
    let retry = Completion::Retry { retries: 1, due: t0 + secs(1), message: "first".into(), stack: "first\n".into() };
    assert_eq!(complete(store, &[completion(&job, retry)]).await, vec![true]);
    let job = acquire(store, "n1", Some(t0 + secs(1)), 10, LOCK).await.jobs[0].job.clone();

    let dl = Completion::DeadLetter { message: "fatal".into(), stack: "fatal\ncaused by: disk full".into() };
    assert_eq!(complete(store, &[completion(&job, dl)]).await, vec![true]);
    assert_eq!(get(store, &job.id).await, None, "gone from ACT_RU_JOB");
    let dead = store.job_get(JobTable::DeadLetter, &job.id).await.expect("job_get").expect("in ACT_RU_DEADLETTER_JOB");
    assert_eq!(dead.retries, 0, "RETRIES_ 0 in the dead-letter table");
    assert_eq!((dead.lock_owner, dead.lock_time, dead.lock_exp_time), (None, None, None));
    assert_eq!(dead.exception_msg.as_deref(), Some("fatal"));
    assert_eq!((dead.attempts, dead.handler_type.as_str()), (2, "doomed"));
    assert_eq!(dead.create_time, job.create_time);
    assert_eq!(
        store.job_stacktrace(JobTable::DeadLetter, &job.id).await.expect("job_stacktrace").as_deref(),
        Some("fatal\ncaused by: disk full")
    );
    assert_eq!(bytearray_rows(store).await, 1, "only the last stack survives");
    let last = log_of(store, &job.id).await.pop().expect("log rows");
    assert_eq!((last.attempt, last.outcome, last.message.as_deref()), (2, JobLogOutcome::DeadLettered, Some("fatal")));
}

pub async fn complete_after_losing_the_lease_writes_nothing(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let job = running(store, due_at("contested", t0 - secs(1)), "n1", t0).await;
    let variants = || {
        vec![
            success(),
            Completion::Reschedule { repeat: "R1/PT1S".into(), due: t0 + secs(1), log_message: None },
            Completion::Retry { retries: 2, due: t0 + secs(1), message: "x".into(), stack: "x".into() },
            Completion::DeadLetter { message: "x".into(), stack: "x".into() },
        ]
    };
    let snapshot = must_get(store, &job.id).await;
    for v in variants() {
        let mut wrong_attempt = completion(&job, v.clone());
        wrong_attempt.attempt = 2;
        let mut wrong_owner = completion(&job, v.clone());
        wrong_owner.node = "n2".into();
        let mut unknown = completion(&job, v.clone());
        unknown.job_id = "no-such-job".into();
        // One call each: within a batch a job's second listing is refused as a duplicate anyway.
        for lost in [wrong_attempt, wrong_owner, unknown] {
            assert_eq!(complete(store, std::slice::from_ref(&lost)).await, vec![false], "{lost:?}");
        }
        assert_eq!(must_get(store, &job.id).await, snapshot, "{v:?} changed a row whose lease it does not hold");
    }
    assert_eq!((log_rows(store).await, bytearray_rows(store).await), (0, 0), "nothing written");

    // n2 takes the expired lease over; n1's late completions are refused, n2's applies.
    let taken = acquire(store, "n2", Some(t0 + LOCK), 10, LOCK).await.jobs[0].job.clone();
    for v in variants() {
        assert_eq!(complete(store, &[completion(&job, v.clone())]).await, vec![false], "n1's late {v:?}");
    }
    assert_eq!(store.job_get(JobTable::DeadLetter, &job.id).await.expect("job_get"), None);
    assert_eq!(must_get(store, &job.id).await, taken);
    assert_eq!(complete(store, &[completion(&taken, success())]).await, vec![true]);
    let outcomes: Vec<_> =
        log_of(store, &job.id).await.iter().map(|l| (l.attempt, l.node.clone(), l.outcome)).collect();
    assert_eq!(
        outcomes,
        vec![(1, Some("n1".into()), JobLogOutcome::Abandoned), (2, Some("n2".into()), JobLogOutcome::Succeeded)]
    );
}

pub async fn complete_many_applies_a_mixed_batch_in_input_order(store: &dyn Store) {
    assert!(complete(store, &[]).await.is_empty());
    let t0 = ms(now(store).await);
    let mut jobs = Vec::new();
    for (i, h) in ["d1", "lost", "resched", "retry", "d2", "dead", "d3"].into_iter().enumerate() {
        let mut j = due_at(h, t0 - secs(10 - i as i64));
        if h == "resched" {
            j.job_type = JobType::Timer;
            j.repeat = Some("R2/PT1M".into());
        }
        jobs.push(insert(store, j).await.id);
    }
    let locked: Vec<Job> = acquire(store, "n1", Some(t0), 100, LOCK).await.jobs.into_iter().map(|a| a.job).collect();
    assert_eq!(locked.iter().map(|j| j.id.clone()).collect::<Vec<_>>(), jobs);
    let mut lost = completion(&locked[1], success());
    lost.attempt = 7;
    let batch = vec![
        completion(&locked[0], success()),
        lost,
        completion(
            &locked[2],
            Completion::Reschedule { repeat: "R1/PT1M".into(), due: t0 + secs(60), log_message: None },
        ),
        completion(
            &locked[3],
            Completion::Retry { retries: 2, due: t0 + secs(10), message: "m".into(), stack: "s".into() },
        ),
        completion(&locked[4], success()),
        completion(&locked[5], Completion::DeadLetter { message: "d".into(), stack: "s".into() }),
        completion(&locked[6], success()),
        completion(&locked[0], success()),
    ];
    assert_eq!(
        complete(store, &batch).await,
        vec![true, false, true, true, true, true, true, false],
        "one flag per completion, in input order; a job listed twice is completed once"
    );
    for i in [0, 4, 6] {
        assert_eq!(get(store, &jobs[i]).await, None);
    }
    assert_eq!(
        must_get(store, &jobs[1]).await.lock_owner.as_deref(),
        Some("n1"),
        "the lost completion left its job alone"
    );
    assert_eq!(must_get(store, &jobs[2]).await.duedate, Some(t0 + secs(60)));
    assert_eq!(must_get(store, &jobs[3]).await.retries, 2);
    assert!(store.job_get(JobTable::DeadLetter, &jobs[5]).await.expect("job_get").is_some());
    assert_eq!(log_rows(store).await, 6, "one log row per applied completion");
    assert_eq!(bytearray_rows(store).await, 2, "the retry's and the dead letter's stacks");
}

/// The executor's completer writes up to `completion_writers` batches at once on a store that
/// says it takes concurrent writers ([`Store::write_concurrency`]). Whatever a store answers,
/// batches written side by side must each commit whole: none fails, none waits out another's
/// lock into an error, and every completion is applied once.
pub async fn completion_batches_written_side_by_side_all_apply(store: &dyn Store) {
    let writers = match store.write_concurrency() {
        crate::WriteConcurrency::One => 2,
        crate::WriteConcurrency::Many => 8,
    };
    let t0 = ms(now(store).await);
    for i in 0..writers * 4 {
        let mut j = due_at("side-by-side", t0 - secs(10));
        if i % 2 == 1 {
            j.job_type = JobType::Timer;
            j.repeat = Some("R2/PT1M".into());
        }
        insert(store, j).await;
    }
    let locked: Vec<Job> = acquire(store, "n1", Some(t0), 1000, LOCK).await.jobs.into_iter().map(|a| a.job).collect();
    assert_eq!(locked.len(), writers * 4, "every job is due");
    let batches: Vec<Vec<JobCompletion>> = locked
        .chunks(4)
        .map(|chunk| {
            chunk
                .iter()
                .map(|j| match j.job_type {
                    JobType::Timer => completion(
                        j,
                        Completion::Reschedule { repeat: "R1/PT1M".into(), due: t0 + secs(60), log_message: None },
                    ),
                    _ => completion(j, success()),
                })
                .collect()
        })
        .collect();
    let results = futures::future::join_all(batches.iter().map(|b| store.job_complete_many(b))).await;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(applied) => assert_eq!(applied, vec![true; 4], "batch {i}: every completion applied"),
            Err(e) => panic!("batch {i} of {writers} written side by side failed: {e:?}"),
        }
    }
    for j in &locked {
        match j.job_type {
            JobType::Timer => assert_eq!(must_get(store, &j.id).await.duedate, Some(t0 + secs(60)), "rescheduled once"),
            _ => assert_eq!(get(store, &j.id).await, None, "deleted"),
        }
    }
    assert_eq!(log_rows(store).await, (writers * 4) as i64, "one log row per completion");
}

pub async fn exception_messages_are_cut_at_4000_characters(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let job = running(store, due_at("verbose", t0 - secs(1)), "n1", t0).await;
    let long = "é".repeat(5000);
    let c = Completion::Retry { retries: 2, due: t0 + secs(1), message: long.clone(), stack: long.clone() };
    assert_eq!(complete(store, &[completion(&job, c)]).await, vec![true]);
    let row = must_get(store, &job.id).await;
    assert_eq!(row.exception_msg.expect("EXCEPTION_MSG_").chars().count(), 4000, "EXCEPTION_MSG_ is varchar(4000)");
    assert_eq!(log_of(store, &job.id).await[0].message.as_ref().expect("MESSAGE_").chars().count(), 4000);
    let stack = store.job_stacktrace(JobTable::Runtime, &job.id).await.expect("job_stacktrace").expect("stack");
    assert_eq!(stack, long, "the full chain is kept in ACT_GE_BYTEARRAY");
}

/// A handler's staged writes (`JobEffect`) commit with its completion and only when the lease
/// holds; a write the database refuses fails the completion as a whole and writes nothing.
pub async fn complete_applies_staged_effects_only_under_the_lease(store: &dyn Store) {
    fixture(store, "CREATE TABLE effect_row (k VARCHAR(64) PRIMARY KEY, v INTEGER)", &[]).await;
    let effect =
        |k: &str| JobEffect::new("INSERT INTO effect_row (k, v) VALUES (?, ?)", vec![text(k), SqlValue::Int(1)]);
    let t0 = ms(now(store).await);
    let a = running(store, due_at("fx", t0 - secs(2)), "n1", t0).await;
    let b = running(store, due_at("fx", t0 - secs(1)), "n1", t0).await;
    let mut ca = completion(&a, success());
    ca.effects = vec![effect("a")];
    let mut cb = completion(&b, success());
    cb.attempt += 1; // a lease this node no longer holds
    cb.effects = vec![effect("b")];
    assert_eq!(complete(store, &[ca, cb]).await, vec![true, false]);
    let keys = store.sql_query("SELECT k FROM effect_row ORDER BY k", &[]).await.expect("read effects");
    assert_eq!(keys, vec![vec![text("a")]], "only the completion whose lease held wrote its effect");

    // A refused write (duplicate key) fails the whole completion: the job stays locked, no log row.
    let c = running(store, due_at("fx", t0 - secs(1)), "n1", t0 + secs(1)).await;
    let mut cc = completion(&c, success());
    cc.effects = vec![effect("c"), effect("a")];
    assert!(store.job_complete_many(&[cc]).await.is_err(), "a refused effect must fail the completion");
    let row = must_get(store, &c.id).await;
    assert_eq!(row.lock_owner.as_deref(), Some("n1"), "the job is untouched");
    assert!(log_of(store, &c.id).await.is_empty(), "no log row for a completion that failed");
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM effect_row", &[]).await, 1, "the first effect rolled back too");
}

/// The effects of a batch's completions, when all of them commute (`Write::commutes`), may be
/// merged into set-wise statements (`kairos_store::coalesce`): every effect still applies,
/// each job's in its order, and a checked keyed delete that misses its row fails the whole
/// batch — as the same statements one by one would.
pub async fn complete_merges_the_effects_of_a_batch_without_changing_them(store: &dyn Store) {
    fixture(store, "CREATE TABLE merged_row (k VARCHAR(64) PRIMARY KEY, v INTEGER NOT NULL)", &[]).await;
    let insert = |k: &str, v: i64| {
        JobEffect::new("INSERT INTO merged_row (k, v) VALUES (?, ?)", vec![text(k), SqlValue::Int(v)]).commutes()
    };
    let delete = |k: &str| JobEffect::new("DELETE FROM merged_row WHERE k = ?", vec![text(k)]).commutes();
    let cas = |k: &str, v: i64| {
        JobEffect::new("DELETE FROM merged_row WHERE k = ? AND v = ?", vec![text(k), SqlValue::Int(v)])
            .expect(1)
            .keyed()
            .commutes()
    };
    let t0 = ms(now(store).await);
    let mut completions = Vec::new();
    for i in 0..6 {
        let job = running(store, due_at("merge", t0 - secs(1)), "n1", t0).await;
        let mut c = completion(&job, success());
        // Each job: two rows in, then its first row out by a checked delete, its second row
        // replaced (delete, insert) — order within a job matters.
        c.effects = vec![
            insert(&format!("a{i}"), i),
            insert(&format!("b{i}"), i),
            cas(&format!("a{i}"), i),
            delete(&format!("b{i}")),
            insert(&format!("b{i}"), 100 + i),
        ];
        completions.push(c);
    }
    assert_eq!(complete(store, &completions).await, vec![true; 6]);
    let rows = store.sql_query("SELECT k, v FROM merged_row ORDER BY k", &[]).await.expect("read rows");
    let want: Vec<Vec<SqlValue>> = (0..6).map(|i| vec![text(&format!("b{i}")), SqlValue::Int(100 + i)]).collect();
    assert_eq!(rows, want);

    // Updates by key, some parameters NULL in some jobs (PostgreSQL must still type every
    // column of the merged VALUES list), then a checked one that reads the row it changes.
    fixture(
        store,
        "CREATE TABLE merged_upd (k VARCHAR(64) PRIMARY KEY, v INTEGER NOT NULL, n BIGINT NULL, note VARCHAR(64) NULL)",
        &[],
    )
    .await;
    let mut completions = Vec::new();
    for i in 0..6i64 {
        let k = format!("u{i}");
        fixture(store, "INSERT INTO merged_upd (k, v, n, note) VALUES (?, 0, 5, 'old')", &[text(&k)]).await;
        let job = running(store, due_at("merge", t0 - secs(1)), "n1", t0).await;
        let mut c = completion(&job, success());
        let n = if i % 2 == 0 { SqlValue::Null } else { SqlValue::Int(i) };
        let note = if i < 3 { SqlValue::Null } else { text(&format!("note{i}")) };
        c.effects = vec![
            JobEffect::new(
                "UPDATE merged_upd SET v = ?, n = ?, note = ? WHERE k = ?",
                vec![SqlValue::Int(i), n, note, text(&k)],
            )
            .commutes(),
            JobEffect::new("UPDATE merged_upd SET v = v + 10 WHERE k = ? AND v = ?", vec![text(&k), SqlValue::Int(i)])
                .expect(1)
                .keyed()
                .commutes(),
        ];
        completions.push(c);
    }
    assert_eq!(complete(store, &completions).await, vec![true; 6]);
    let rows = store.sql_query("SELECT k, v, n, note FROM merged_upd ORDER BY k", &[]).await.expect("read rows");
    let want: Vec<Vec<SqlValue>> = (0..6i64)
        .map(|i| {
            vec![
                text(&format!("u{i}")),
                SqlValue::Int(10 + i),
                if i % 2 == 0 { SqlValue::Null } else { SqlValue::Int(i) },
                if i < 3 { SqlValue::Null } else { text(&format!("note{i}")) },
            ]
        })
        .collect();
    assert_eq!(rows, want);

    // Two jobs whose checked deletes name the same row: one misses it, so the batch as a
    // whole is refused and writes nothing (the executor then completes the jobs one by one).
    let mut twins = Vec::new();
    for _ in 0..2 {
        let job = running(store, due_at("merge", t0 - secs(1)), "n1", t0 + secs(1)).await;
        let mut c = completion(&job, success());
        c.effects = vec![insert(&kairos_core::new_id(), 7), cas("b0", 100)];
        twins.push(c);
    }
    let err = store.job_complete_many(&twins).await.expect_err("one of two deletes of one row misses it");
    assert_eq!(err.kind, crate::ErrorKind::Conflict, "{err}");
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM merged_row", &[]).await, 6, "nothing of the batch was written");
    for c in &twins {
        assert_eq!(must_get(store, &c.job_id).await.lock_owner.as_deref(), Some("n1"), "the jobs are untouched");
    }
    assert_eq!(complete(store, &twins[..1]).await, vec![true], "alone, the first completion applies");
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM merged_row", &[]).await, 6, "one row in, b0 out");
}

/// A completion sent again after its answer was lost (the COMMIT applied, the connection broke
/// before saying so) answers "applied", not "lease lost", and writes nothing twice; a
/// completion whose lease was really lost still answers `false`.
pub async fn complete_sent_again_after_a_lost_answer_answers_applied(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let done = running(store, due_at("once", t0 - secs(1)), "n1", t0).await;
    let failing = running(store, due_at("twice", t0 - secs(1)), "n1", t0).await;
    let retry = Completion::Retry { retries: 2, due: t0 + secs(60), message: "boom".into(), stack: "boom".into() };
    let first = [completion(&done, success()), completion(&failing, retry.clone())];
    assert_eq!(complete(store, &first).await, vec![true, true]);
    let (logs, after) = (log_rows(store).await, must_get(store, &failing.id).await);

    assert_eq!(complete(store, &first).await, vec![true, true], "sent again: already applied");
    assert_eq!(complete(store, &first[1..]).await, vec![true], "alone too");
    assert_eq!(log_rows(store).await, logs, "no second log row");
    assert_eq!(must_get(store, &failing.id).await, after, "the retry is not applied twice");
    assert_eq!(get(store, &done.id).await, None);

    // The retried job runs again (attempt 2) and n1 loses that lease to n2: n1's late
    // completion of attempt 2 is refused, while its resend of attempt 1 is still "applied".
    let again = acquire(store, "n1", Some(t0 + secs(61)), 10, LOCK).await.jobs[0].job.clone();
    assert_eq!(again.attempts, 2);
    let taken = acquire(store, "n2", Some(t0 + secs(61) + LOCK), 10, LOCK).await.jobs[0].job.clone();
    assert_eq!(taken.attempts, 3);
    assert_eq!(complete(store, &[completion(&again, success())]).await, vec![false], "lease lost");
    assert_eq!(complete(store, &first[1..]).await, vec![true]);
    // Listed twice in one call: applied once, the repeat refused.
    assert_eq!(
        complete(store, &[completion(&taken, success()), completion(&taken, success())]).await,
        vec![true, false]
    );
}
