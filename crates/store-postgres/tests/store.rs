//! Behaviours of the PostgreSQL store that the backend-neutral conformance suite does not reach:
//! its SQL against a real server, end to end. Runs on a fresh schema per test
//! (`KAIROS_TEST_PG_URL`; skipped without it unless `KAIROS_REQUIRE_PG=1`).

use jiff::{SignedDuration, Timestamp};
use kairos_core::enqueue::Due;
use kairos_core::{Completion, EnqueueRequest, JobLogOutcome, JobTable, NewJob};
use kairos_store::Sql;
use kairos_store::{
    ErrorKind, JobAcquireParams, JobCompletion, JobFilter, JobLogFilter, JobReleaseParams, LeaseExtendParams,
    NodeRegistration, SqlValue, Store,
};
use kairos_store_postgres::test_support::test_store;

fn job(handler: &str) -> NewJob {
    EnqueueRequest { handler: handler.into(), ..Default::default() }.validate(|_| true).unwrap()
}

fn acquire(node: &str, limit: u32, now: Option<Timestamp>) -> JobAcquireParams {
    JobAcquireParams {
        node: node.into(),
        limit,
        lock_time: SignedDuration::from_mins(5),
        now,
        lookahead: SignedDuration::ZERO,
    }
}

fn done(job_id: &str, node: &str, attempt: i32, at: Timestamp, completion: Completion) -> JobCompletion {
    JobCompletion {
        job_id: job_id.into(),
        node: node.into(),
        attempt,
        started: at,
        finished: at,
        completion,
        effects: Vec::new(),
    }
}

#[tokio::test]
async fn a_job_is_inserted_acquired_and_completed_with_a_log_row() {
    let Some(store) = test_store().await else { return };
    let inserted = store.job_insert(&job("log")).await.unwrap();
    assert_eq!(inserted.attempts, 0);
    assert_eq!(inserted.duedate, Some(inserted.create_time), "due now means the insert's own clock");

    let got = store.job_acquire(&acquire("n1", 10, None)).await.unwrap();
    assert_eq!(got.jobs.len(), 1);
    let taken = &got.jobs[0].job;
    assert_eq!(taken.lock_owner.as_deref(), Some("n1"));
    assert_eq!(taken.lock_time, Some(got.db_now));
    assert_eq!(taken.lock_exp_time, Some(got.db_now + SignedDuration::from_mins(5)));
    assert_eq!(taken.attempts, 1);
    assert!(got.jobs[0].abandoned_by.is_none());
    assert!(store.job_acquire(&acquire("n2", 10, None)).await.unwrap().jobs.is_empty(), "leased");

    let applied = store
        .job_complete_many(&[
            done(&taken.id, "n2", 1, got.db_now, Completion::Delete { log_message: None }),
            done(&taken.id, "n1", 1, got.db_now, Completion::Delete { log_message: Some("ok".into()) }),
        ])
        .await
        .unwrap();
    assert_eq!(applied, vec![false, true], "one flag per entry: the wrong owner applies nothing");
    assert!(store.job_get(JobTable::Runtime, &taken.id).await.unwrap().is_none());
    let log = store.job_log_list(&JobLogFilter { job_id: Some(taken.id.clone()), ..Default::default() }).await.unwrap();
    assert_eq!(log.total, 1);
    assert_eq!(log.data[0].outcome, JobLogOutcome::Succeeded);
    assert_eq!(log.data[0].message.as_deref(), Some("ok"));
    assert_eq!(log.data[0].node.as_deref(), Some("n1"));
}

#[tokio::test]
async fn a_completion_from_a_lost_lease_changes_nothing() {
    let Some(store) = test_store().await else { return };
    let j = store.job_insert(&job("log")).await.unwrap();
    let t0 = store.db_now().await.unwrap();
    let first = store.job_acquire(&acquire("n1", 1, Some(t0))).await.unwrap();
    assert_eq!(first.jobs.len(), 1);
    // Ten minutes later (pinned clock) the five-minute lease has expired: n2 takes over.
    let t1 = t0 + SignedDuration::from_mins(10);
    let second = store.job_acquire(&acquire("n2", 1, Some(t1))).await.unwrap();
    assert_eq!(second.db_now, t1);
    let over = &second.jobs[0];
    assert_eq!(over.abandoned_by.as_deref(), Some("n1"));
    assert_eq!(over.job.attempts, 2);
    assert_eq!(over.job.retries, j.retries - 1, "the abandoned attempt spent a retry");

    let applied =
        store.job_complete_many(&[done(&j.id, "n1", 1, t0, Completion::Delete { log_message: None })]).await.unwrap();
    assert_eq!(applied, vec![false]);
    assert!(store.job_get(JobTable::Runtime, &j.id).await.unwrap().is_some());
    let log = store.job_log_list(&JobLogFilter { job_id: Some(j.id.clone()), ..Default::default() }).await.unwrap();
    assert_eq!(log.data.len(), 1);
    assert_eq!(log.data[0].outcome, JobLogOutcome::Abandoned);
    assert_eq!((log.data[0].attempt, log.data[0].node.as_deref()), (1, Some("n1")));
    assert_eq!(log.data[0].start, Some(t0));
    assert_eq!(log.data[0].end, Some(t0 + SignedDuration::from_mins(5)), "it ended when its lease did");
}

#[tokio::test]
async fn failures_retry_then_dead_letter_and_move_back_without_orphan_bytes() {
    let Some(store) = test_store().await else { return };
    let j = store.job_insert(&NewJob { retries: 2, ..job("fail") }).await.unwrap();
    let got = store.job_acquire(&acquire("n1", 1, None)).await.unwrap();
    let due = got.db_now + SignedDuration::from_secs(10);
    let retry = Completion::Retry { retries: 1, due, message: "boom".into(), stack: "boom\ncaused by: io".into() };
    assert_eq!(store.job_complete_many(&[done(&j.id, "n1", 1, got.db_now, retry)]).await.unwrap(), vec![true]);
    let failed = store.job_get(JobTable::Runtime, &j.id).await.unwrap().unwrap();
    assert_eq!((failed.retries, failed.duedate, failed.lock_owner.clone()), (1, Some(due), None));
    assert_eq!(failed.exception_msg.as_deref(), Some("boom"));
    assert_eq!(store.job_stacktrace(JobTable::Runtime, &j.id).await.unwrap().as_deref(), Some("boom\ncaused by: io"));

    let got = store.job_acquire(&acquire("n1", 1, Some(due))).await.unwrap();
    assert_eq!(got.jobs.len(), 1);
    let dead = Completion::DeadLetter { message: "boom again".into(), stack: "second stack".into() };
    assert_eq!(store.job_complete_many(&[done(&j.id, "n1", 2, due, dead)]).await.unwrap(), vec![true]);
    assert!(store.job_get(JobTable::Runtime, &j.id).await.unwrap().is_none());
    let letter = store.job_get(JobTable::DeadLetter, &j.id).await.unwrap().unwrap();
    assert_eq!((letter.retries, letter.exception_msg.as_deref()), (0, Some("boom again")));
    assert_eq!(store.job_stacktrace(JobTable::DeadLetter, &j.id).await.unwrap().as_deref(), Some("second stack"));
    let bytes = store.sql_query("SELECT count(*) FROM ACT_GE_BYTEARRAY", &[]).await.unwrap();
    assert_eq!(bytes, vec![vec![SqlValue::Int(1)]], "the first stack was replaced, not orphaned");

    let back = store.deadletter_move(&j.id, 3).await.unwrap();
    assert_eq!((back.retries, back.exception_msg.clone(), back.attempts), (3, None, 2));
    let bytes = store.sql_query("SELECT count(*) FROM ACT_GE_BYTEARRAY", &[]).await.unwrap();
    assert_eq!(bytes, vec![vec![SqlValue::Int(0)]]);
    assert_eq!(store.deadletter_move(&j.id, 3).await.unwrap_err().kind, ErrorKind::NotFound);

    let outcomes: Vec<_> = store
        .job_log_list(&JobLogFilter { job_id: Some(j.id.clone()), ..Default::default() })
        .await
        .unwrap()
        .data
        .into_iter()
        .map(|e| (e.attempt, e.outcome))
        .collect();
    assert_eq!(outcomes, vec![(1, JobLogOutcome::Failed), (2, JobLogOutcome::DeadLettered)]);
}

#[tokio::test]
async fn a_mixed_batch_applies_every_kind_in_one_transaction() {
    let Some(store) = test_store().await else { return };
    let ids: Vec<String> = (0..4).map(|_| kairos_core::new_id()).collect();
    let jobs: Vec<NewJob> = ids.iter().map(|id| NewJob { id: id.clone(), ..job("log") }).collect();
    assert_eq!(store.job_insert_many(&jobs).await.unwrap(), 4);
    let got = store.job_acquire(&acquire("n1", 10, None)).await.unwrap();
    assert_eq!(got.jobs.len(), 4);
    let at = got.db_now;
    let later = at + SignedDuration::from_mins(1);
    let batch = vec![
        done(&ids[0], "n1", 1, at, Completion::Delete { log_message: None }),
        done(&ids[1], "n1", 1, at, Completion::Reschedule { repeat: "R2/PT1M".into(), due: later, log_message: None }),
        done(
            &ids[2],
            "n1",
            1,
            at,
            Completion::Retry { retries: 2, due: later, message: "m".into(), stack: "s".into() },
        ),
        done(&ids[3], "n1", 1, at, Completion::DeadLetter { message: "m".into(), stack: "s".into() }),
        done("no-such-job", "n1", 1, at, Completion::Delete { log_message: None }),
    ];
    assert_eq!(store.job_complete_many(&batch).await.unwrap(), vec![true, true, true, true, false]);
    let rescheduled = store.job_get(JobTable::Runtime, &ids[1]).await.unwrap().unwrap();
    assert_eq!((rescheduled.repeat.as_deref(), rescheduled.duedate), (Some("R2/PT1M"), Some(later)));
    assert!(store.job_get(JobTable::DeadLetter, &ids[3]).await.unwrap().is_some());
    let log = store.job_log_list(&JobLogFilter::default()).await.unwrap();
    assert_eq!(log.total, 4);
}

#[tokio::test]
async fn leases_are_extended_only_for_their_owner_and_attempt_and_released_on_shutdown() {
    let Some(store) = test_store().await else { return };
    let a = store.job_insert(&job("log")).await.unwrap();
    let b = store.job_insert(&job("log")).await.unwrap();
    let got = store.job_acquire(&acquire("n1", 10, None)).await.unwrap();
    assert_eq!(got.jobs.len(), 2);
    let extended = store
        .job_lease_extend(&LeaseExtendParams {
            node: "n1".into(),
            jobs: vec![(a.id.clone(), 1), (b.id.clone(), 7)],
            lock_time: SignedDuration::from_mins(30),
            start: false,
        })
        .await
        .unwrap();
    assert_eq!(extended, vec![a.id.clone()]);
    let released = store
        .job_release(&JobReleaseParams {
            node: "n1".into(),
            jobs: vec![(a.id.clone(), 1), (b.id.clone(), 1)],
            reason: "shutdown".into(),
        })
        .await
        .unwrap();
    assert_eq!(released, 2);
    let again = store.job_get(JobTable::Runtime, &a.id).await.unwrap().unwrap();
    assert_eq!((again.lock_owner, again.retries), (None, a.retries), "no retry spent");
    let log = store.job_log_list(&JobLogFilter { job_id: Some(a.id.clone()), ..Default::default() }).await.unwrap();
    assert_eq!((log.data[0].outcome, log.data[0].message.as_deref()), (JobLogOutcome::Abandoned, Some("shutdown")));
}

#[tokio::test]
async fn acquisition_respects_due_dates_suspension_types_and_order() {
    let Some(store) = test_store().await else { return };
    let now = store.db_now().await.unwrap();
    let later =
        store.job_insert(&NewJob { due: Due::At(now + SignedDuration::from_hours(1)), ..job("log") }).await.unwrap();
    let early =
        store.job_insert(&NewJob { due: Due::At(now - SignedDuration::from_mins(1)), ..job("log") }).await.unwrap();
    let soon = store.job_insert(&NewJob { due: Due::In("PT1M".parse().unwrap()), ..job("log") }).await.unwrap();
    assert!(soon.duedate.unwrap() >= now + SignedDuration::from_mins(1));
    let external =
        store.job_insert(&NewJob { job_type: kairos_core::JobType::ExternalWorker, ..job("ext") }).await.unwrap();
    store
        .sql_execute(
            "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, SUSPENSION_STATE_) VALUES ('pi1', 'pi1', 2)",
            &[],
        )
        .await
        .unwrap();
    let suspended = store
        .job_insert(&NewJob { execution_id: Some("pi1".into()), process_instance_id: Some("pi1".into()), ..job("log") })
        .await
        .unwrap();
    let plain = store.job_insert(&job("log")).await.unwrap();
    store
        .sql_execute("UPDATE ACT_RU_JOB SET DUEDATE_ = NULL WHERE ID_ = ?", &[SqlValue::Text(plain.id.clone())])
        .await
        .unwrap();

    let got = store.job_acquire(&acquire("n1", 10, Some(now + SignedDuration::from_mins(2)))).await.unwrap();
    let ids: Vec<_> = got.jobs.iter().map(|j| j.job.id.clone()).collect();
    assert_eq!(ids, vec![plain.id, early.id, soon.id], "nulls first, then due order");
    for left in [later.id.clone(), external.id, suspended.id.clone()] {
        assert!(store.job_get(JobTable::Runtime, &left).await.unwrap().unwrap().lock_owner.is_none());
    }
    // The next due date counts every unlocked job with retries left, the suspended one included
    // (jobs of suspended instances normally live in ACT_RU_SUSPENDED_JOB, SPEC P8).
    let next = store.job_next_due().await.unwrap();
    assert_eq!(next.next, suspended.duedate);
    store.sql_execute("DELETE FROM ACT_RU_JOB WHERE ID_ = ?", &[SqlValue::Text(suspended.id.clone())]).await.unwrap();
    assert_eq!(store.job_next_due().await.unwrap().next, later.duedate);
}

#[tokio::test]
async fn delete_refuses_a_live_lease_unless_forced() {
    let Some(store) = test_store().await else { return };
    let j = store.job_insert(&job("log")).await.unwrap();
    store.job_acquire(&acquire("n1", 1, None)).await.unwrap();
    assert_eq!(store.job_delete(JobTable::Runtime, &j.id, false).await.unwrap_err().kind, ErrorKind::Conflict);
    store.job_delete(JobTable::Runtime, &j.id, true).await.unwrap();
    assert_eq!(store.job_delete(JobTable::Runtime, &j.id, true).await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(store.job_execute_now("nope").await.unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn lists_counts_and_diagnostics_read_the_tables() {
    let Some(store) = test_store().await else { return };
    for _ in 0..3 {
        store.job_insert(&job("log")).await.unwrap();
    }
    store.job_insert(&NewJob { execution_id: Some("gone".into()), ..job("orphan") }).await.unwrap();
    let page =
        store.job_list(&JobFilter { handler_type: Some("log".into()), size: 2, ..Default::default() }).await.unwrap();
    assert_eq!((page.total, page.data.len(), page.size), (3, 2, 2));
    let t0 = store.db_now().await.unwrap();
    store.job_acquire(&acquire("n1", 1, Some(t0))).await.unwrap();
    let counts = store.job_counts().await.unwrap();
    assert_eq!((counts.running, counts.executable, counts.dead_letters), (1, 3, 0));
    let diagnostics = store.job_diagnostics(10).await.unwrap();
    assert_eq!(diagnostics.orphan_jobs.len(), 1);
    assert_eq!(diagnostics.orphan_jobs[0].handler_type, "orphan");
}

#[tokio::test]
async fn nodes_heartbeat_and_dead_nodes_lose_their_leases() {
    let Some(store) = test_store().await else { return };
    let node = NodeRegistration { id: "n1".into(), host: "h".into(), pid: 1, workers: 4, settings: None };
    let beat = store.node_heartbeat(&node).await.unwrap();
    store.node_heartbeat(&NodeRegistration { id: "n2".into(), ..node.clone() }).await.unwrap();
    let j = store.job_insert(&job("log")).await.unwrap();
    store.job_acquire(&acquire("n1", 1, None)).await.unwrap();
    store
        .sql_execute(
            "UPDATE KAIROS_NODE SET HEARTBEAT_ = HEARTBEAT_ - interval '1 minute' WHERE ID_ = ?",
            &[SqlValue::Text("n1".into())],
        )
        .await
        .unwrap();
    assert_eq!(store.node_reap_dead(SignedDuration::from_secs(30)).await.unwrap(), vec!["n1".to_string()]);
    let taken = store.job_acquire(&acquire("n2", 1, None)).await.unwrap();
    assert_eq!(taken.jobs[0].job.id, j.id);
    assert_eq!(taken.jobs[0].abandoned_by.as_deref(), Some("n1"));
    store.node_stop("n2").await.unwrap();
    let nodes = store.node_list().await.unwrap();
    let states: Vec<_> = nodes.iter().map(|n| (n.id.as_str(), n.state.as_str())).collect();
    assert!(states.contains(&("n1", "dead")) && states.contains(&("n2", "stopped")), "{states:?}");
    assert!(nodes.iter().any(|n| n.started == beat));
}

#[tokio::test]
async fn operator_sql_binds_question_marks_and_decodes_by_type() {
    let Some(store) = test_store().await else { return };
    let j = store.job_insert(&job("log")).await.unwrap();
    let rows = store
        .sql_query(
            "SELECT ID_, RETRIES_, EXCLUSIVE_, DUEDATE_, 1.5::numeric, '?' AS q, gen_random_uuid() IS NOT NULL, now()::date \
             FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = ? AND (DUEDATE_ IS NULL OR DUEDATE_ <= ?) AND TENANT_ID_ IS DISTINCT FROM ?",
            &[SqlValue::Text("log".into()), SqlValue::Timestamp(Timestamp::now()), SqlValue::Null],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r[0], SqlValue::Text(j.id.clone()));
    assert_eq!(r[1], SqlValue::Int(3));
    assert_eq!(r[2], SqlValue::Bool(false));
    assert_eq!(r[3], SqlValue::Timestamp(j.duedate.unwrap()));
    assert_eq!(r[4], SqlValue::Float(1.5));
    assert_eq!(r[5], SqlValue::Text("?".into()));
    assert!(matches!(r[7], SqlValue::Text(_)), "a date is read as text");
    let n = store
        .sql_execute("UPDATE ACT_RU_JOB SET RETRIES_ = ? WHERE ID_ = ?", &[SqlValue::Int(5), SqlValue::Text(j.id)])
        .await
        .unwrap();
    assert_eq!(n, 1);
    // A NULL takes the type of where it is used, even a timestamp column.
    let n = store
        .sql_execute(
            "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_, END_TIME_) VALUES (?, ?, ?, ?)",
            &[
                SqlValue::Text("p".into()),
                SqlValue::Text("p".into()),
                SqlValue::Timestamp(Timestamp::now()),
                SqlValue::Null,
            ],
        )
        .await
        .unwrap();
    assert_eq!(n, 1);
    let e = store.sql_query("SELECT ?", &[]).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
    // Seed 000 §4.5, verbatim.
    let by_type = store
        .sql_query("SELECT TYPE_, COUNT(*), MAX(DUEDATE_), MIN(DUEDATE_) FROM ACT_RU_JOB GROUP BY TYPE_;", &[])
        .await
        .unwrap();
    assert_eq!(by_type[0][0], SqlValue::Text("message".into()));
}

#[tokio::test]
async fn duplicate_ids_are_conflicts_and_oversized_values_are_invalid() {
    let Some(store) = test_store().await else { return };
    let j = store.job_insert(&job("log")).await.unwrap();
    let again = store.job_insert(&NewJob { id: j.id.clone(), ..job("log") }).await.unwrap_err();
    assert_eq!(again.kind, ErrorKind::Conflict);
    let long = store.job_insert(&NewJob { handler_type: "h".repeat(300), ..job("log") }).await.unwrap_err();
    assert_eq!(long.kind, ErrorKind::Invalid);
}

#[tokio::test]
async fn every_session_carries_the_engine_timeouts() {
    let Some(store) = test_store().await else { return };
    let rows = store
        .sql_query(
            "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), \
             current_setting('idle_in_transaction_session_timeout'), current_setting('transaction_isolation'), \
             current_setting('application_name')",
            &[],
        )
        .await
        .unwrap();
    let text: Vec<_> = rows[0].iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(text, vec!["30s", "10s", "1min", "read committed", "kairos"]);
}

#[tokio::test]
async fn an_unreachable_database_is_unavailable() {
    let e = kairos_store_postgres::PgStore::connect("postgres://kairos:kairos@127.0.0.1:1/kairos").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unavailable, "{e}");
}

/// Waits (bounded) until a statement is blocked by the session `blocker`, or `task` ends.
async fn blocked_by<T>(
    store: &kairos_store_postgres::PgStore,
    blocker: i32,
    task: &tokio::task::JoinHandle<T>,
) -> bool {
    for _ in 0..500 {
        let waiting: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))")
                .bind(blocker)
                .fetch_one(store.pool())
                .await
                .unwrap();
        if waiting > 0 {
            return true;
        }
        if task.is_finished() {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}

/// A lease that is still this node's is not reported lost because another transaction holds its
/// row locked (an operator's UPDATE, a completion batch): the extension waits for the lock and
/// extends it. Skipping the row made `mark_started` drop a job it still held.
#[tokio::test]
async fn a_lease_extension_waits_for_a_row_another_transaction_holds() {
    let Some(store) = test_store().await else { return };
    let inserted = store.job_insert(&job("log")).await.unwrap();
    let got = store.job_acquire(&acquire("n1", 10, None)).await.unwrap();
    let taken = got.jobs[0].job.clone();
    let extend = |store: kairos_store_postgres::PgStore| {
        let params = LeaseExtendParams {
            node: "n1".into(),
            jobs: vec![(taken.id.clone(), taken.attempts)],
            lock_time: SignedDuration::from_mins(10),
            start: false,
        };
        tokio::spawn(async move { store.job_lease_extend(&params).await })
    };
    for (change, kept) in [
        // An operator's statement that leaves the lease alone: extended once the lock is gone.
        ("UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = NULL WHERE ID_ = $1", true),
        // Taken over meanwhile: lost, as before.
        ("UPDATE ACT_RU_JOB SET LOCK_OWNER_ = 'n2', ATTEMPTS_ = ATTEMPTS_ + 1 WHERE ID_ = $1", false),
    ] {
        let mut other = store.pool().begin().await.unwrap();
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *other).await.unwrap();
        sqlx::query(change).bind(&inserted.id).execute(&mut *other).await.unwrap();
        let task = extend(store.clone());
        let waited = blocked_by(&store, pid, &task).await;
        other.commit().await.unwrap();
        let result = task.await.unwrap().unwrap();
        assert!(waited, "the extension waits for the row lock instead of skipping the row: {result:?} ({change})");
        assert_eq!(result.contains(&taken.id), kept, "{change}: {result:?}");
    }
}
