//! The executor end to end on both backends: the "Done means" of the job engine that can be
//! shown in one process. (Real `kairos serve` processes killed with SIGKILL are in the CLI's
//! cluster tests.)

mod common;

use common::{Backend, Fixture, count_rows, log_of, runtime_jobs, wait_until};
use kairos::store::{JobFilter, SqlValue};
use kairos::{EnqueueRequest, JobLogOutcome, JobTable, SignedDuration, SkewedClock, SystemClock, handler_fn};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

fn req(handler: &str, payload: serde_json::Value) -> EnqueueRequest {
    EnqueueRequest { handler: handler.into(), payload: Some(payload), ..Default::default() }
}

async fn exhausted_retries_dead_letter_with_message_and_stack(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    engine.start().await.unwrap();
    let job = engine
        .enqueue(&EnqueueRequest { retries: Some(2), ..req("fail", json!({"message": "payment service said no"})) })
        .await
        .unwrap();
    let store = engine.store().clone();
    wait_until(LIMIT, "the job to be dead-lettered", || async {
        store.job_get(JobTable::DeadLetter, &job.id).await.unwrap().is_some()
    })
    .await;
    let dead = store.job_get(JobTable::DeadLetter, &job.id).await.unwrap().unwrap();
    assert_eq!(dead.retries, 0);
    assert_eq!(dead.exception_msg.as_deref(), Some("payment service said no"));
    assert!(dead.lock_owner.is_none());
    let stack = store.job_stacktrace(JobTable::DeadLetter, &job.id).await.unwrap().unwrap();
    assert!(
        stack.contains("payment service said no")
            && stack.contains("caused by: the fail handler was asked to fail attempt 2"),
        "{stack}"
    );
    let outcomes: Vec<_> = log_of(&store, &job.id).await.iter().map(|e| e.outcome).collect();
    assert_eq!(outcomes, [JobLogOutcome::Failed, JobLogOutcome::DeadLettered]);
    assert!(store.job_get(JobTable::Runtime, &job.id).await.unwrap().is_none());
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_dead_letter_moved_back_runs_again_and_leaves_no_orphan_bytes(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").build().await.unwrap();
    engine.start().await.unwrap();
    let store = engine.store().clone();
    let job = engine
        .enqueue(&EnqueueRequest { retries: Some(2), ..req("fail", json!({"message": "not yet", "times": 2})) })
        .await
        .unwrap();
    wait_until(LIMIT, "dead letter", || async {
        store.job_get(JobTable::DeadLetter, &job.id).await.unwrap().is_some()
    })
    .await;
    assert_eq!(count_rows(&store, "ACT_GE_BYTEARRAY").await, 1, "one stack trace is stored");
    store.deadletter_move(&job.id, 3).await.unwrap();
    engine.wake();
    wait_until(LIMIT, "the moved job to succeed", || async {
        log_of(&store, &job.id).await.iter().any(|e| e.outcome == JobLogOutcome::Succeeded)
    })
    .await;
    assert!(store.job_get(JobTable::Runtime, &job.id).await.unwrap().is_none());
    assert_eq!(count_rows(&store, "ACT_GE_BYTEARRAY").await, 0, "no orphan ACT_GE_BYTEARRAY row");
    let log = log_of(&store, &job.id).await;
    let attempts: Vec<_> = log.iter().map(|e| (e.attempt, e.outcome)).collect();
    assert_eq!(attempts, [(1, JobLogOutcome::Failed), (2, JobLogOutcome::DeadLettered), (3, JobLogOutcome::Succeeded)]);
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_repeating_timer_r3_pt1s_runs_exactly_three_times_on_one_row(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let engine = fx
        .engine("n1")
        .handler(
            "tick",
            handler_fn(move |_ctx| {
                let r = r.clone();
                async move {
                    r.fetch_add(1, Ordering::SeqCst);
                    Ok(None)
                }
            }),
        )
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    let job =
        engine.enqueue(&EnqueueRequest { repeat: Some("R3/PT1S".into()), ..req("tick", json!({})) }).await.unwrap();
    assert_eq!(job.job_type, kairos::JobType::Timer);
    assert_eq!(job.repeat.as_deref(), Some("R3/PT1S"));
    engine.start().await.unwrap();
    wait_until(LIMIT, "the timer to finish its cycle", || async { runtime_jobs(&store).await == 0 }).await;
    let log = log_of(&store, &job.id).await;
    let outcomes: Vec<_> = log.iter().map(|e| e.outcome).collect();
    assert_eq!(outcomes, [JobLogOutcome::Rescheduled, JobLogOutcome::Rescheduled, JobLogOutcome::Succeeded]);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    // Each fire started no earlier than its due date, about one second apart.
    for w in log.windows(2) {
        let gap = w[1].start.unwrap().duration_since(w[0].start.unwrap());
        assert!(gap >= SignedDuration::from_millis(900), "fires {gap:?} apart");
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_future_job_is_not_run_early_by_a_node_whose_clock_is_ahead(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let skewed = Arc::new(SkewedClock { inner: SystemClock, skew: SignedDuration::from_mins(5) });
    let engine = fx.engine("fast-clock").configure(|c| c.clock = skewed).build().await.unwrap();
    let store = engine.store().clone();
    let db_now = store.db_now().await.unwrap();
    let later = engine
        .enqueue(&EnqueueRequest {
            due_date: Some(db_now + SignedDuration::from_mins(2)),
            ..req("log", json!({"n": "later"}))
        })
        .await
        .unwrap();
    let soon = engine
        .enqueue(&EnqueueRequest { due_in: Some("PT1S".into()), ..req("log", json!({"n": "soon"})) })
        .await
        .unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "the job due in one second to run", || async { !log_of(&store, &soon.id).await.is_empty() })
        .await;
    let ran = &log_of(&store, &soon.id).await[0];
    assert!(ran.start.unwrap() >= soon.duedate.unwrap(), "ran at {:?}, due {:?}", ran.start, soon.duedate);
    // The node believes it is five minutes later; the job due in two minutes must still wait.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(log_of(&store, &later.id).await.is_empty(), "a job due in 2 minutes ran early");
    assert!(store.job_get(JobTable::Runtime, &later.id).await.unwrap().unwrap().lock_owner.is_none());
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn with_the_executor_switched_off_jobs_wait(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let off = fx.engine("off").executor_enabled(false).build().await.unwrap();
    off.start().await.unwrap();
    let job = off.enqueue(&req("log", json!({"x": 1}))).await.unwrap();
    let store = off.store().clone();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(store.job_get(JobTable::Runtime, &job.id).await.unwrap().is_some(), "the job waits");
    assert!(log_of(&store, &job.id).await.is_empty(), "nothing ran it");
    // Switch an executor on (another node on the same store): the job runs.
    let on = fx.engine("on").build().await.unwrap();
    on.start().await.unwrap();
    wait_until(LIMIT, "the job to run once an executor is on", || async { runtime_jobs(&store).await == 0 }).await;
    assert_eq!(log_of(&store, &job.id).await[0].node.as_deref(), Some("on"));
    on.shutdown(Duration::from_secs(5)).await;
    off.shutdown(Duration::from_secs(5)).await;
}

async fn a_panicking_or_hanging_handler_is_a_failed_attempt(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx
        .engine("n1")
        .handler("explode", handler_fn(|_ctx| async { panic!("the handler blew up") }))
        .handler(
            "hang",
            handler_fn(|_ctx| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(None)
            }),
        )
        // Long enough that a panic's unwinding (with a backtrace printed, on a loaded 2-core
        // machine) is never mistaken for a timeout; short enough to keep the test quick.
        .configure(|c| c.handler_timeout = Duration::from_millis(2500))
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    engine.start().await.unwrap();
    let a = engine.enqueue(&EnqueueRequest { retries: Some(1), ..req("explode", json!({})) }).await.unwrap();
    let b = engine.enqueue(&EnqueueRequest { retries: Some(1), ..req("hang", json!({})) }).await.unwrap();
    for (id, needle) in [(&a.id, "panicked: the handler blew up"), (&b.id, "timed out after 2500 ms")] {
        wait_until(LIMIT, "dead letter", || async { store.job_get(JobTable::DeadLetter, id).await.unwrap().is_some() })
            .await;
        let dead = store.job_get(JobTable::DeadLetter, id).await.unwrap().unwrap();
        assert!(dead.exception_msg.as_deref().unwrap_or("").contains(needle), "{:?}", dead.exception_msg);
    }
    // The node survived both: it still runs jobs.
    let c = engine.enqueue(&req("log", json!({}))).await.unwrap();
    wait_until(LIMIT, "a later job to run", || async { !log_of(&store, &c.id).await.is_empty() }).await;
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_slow_handler_keeps_its_lease_and_runs_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs = Arc::new(AtomicUsize::new(0));
    let build = |node: &str| {
        let r = runs.clone();
        fx.engine(node)
            .lock_time(SignedDuration::from_millis(600))
            .handler(
                "slow",
                handler_fn(move |_ctx| {
                    let r = r.clone();
                    async move {
                        r.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(2000)).await;
                        Ok(None)
                    }
                }),
            )
            .build()
    };
    let a = build("a").await.unwrap();
    let b = build("b").await.unwrap();
    let store = a.store().clone();
    let job = a.enqueue(&req("slow", json!({}))).await.unwrap();
    a.start().await.unwrap();
    b.start().await.unwrap();
    wait_until(LIMIT, "the slow job to finish", || async { runtime_jobs(&store).await == 0 }).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a handler slower than the lock time ran twice");
    let log = log_of(&store, &job.id).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, JobLogOutcome::Succeeded);
    a.shutdown(Duration::from_secs(5)).await;
    b.shutdown(Duration::from_secs(5)).await;
}

async fn a_crashed_nodes_job_is_taken_over_after_it_is_declared_dead(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let started = Arc::new(AtomicUsize::new(0));
    let build = |node: &str| {
        let s = started.clone();
        fx.engine(node)
            // The lease alone would keep the job for five minutes; recovery must come from the
            // dead-node check.
            .lock_time(SignedDuration::from_mins(5))
            .handler(
                "work",
                handler_fn(move |ctx| {
                    let s = s.clone();
                    async move {
                        s.fetch_add(1, Ordering::SeqCst);
                        if ctx.node_id == "doomed" {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                        }
                        Ok(None)
                    }
                }),
            )
            .build()
    };
    let doomed = build("doomed").await.unwrap();
    let store = doomed.store().clone();
    let job = doomed.enqueue(&req("work", json!({}))).await.unwrap();
    doomed.start().await.unwrap();
    wait_until(LIMIT, "the doomed node to start the job", || async { started.load(Ordering::SeqCst) == 1 }).await;
    doomed.crash();
    let survivor = build("survivor").await.unwrap();
    survivor.start().await.unwrap();
    wait_until(LIMIT, "the survivor to finish the job", || async { runtime_jobs(&store).await == 0 }).await;
    let log = log_of(&store, &job.id).await;
    let seen: Vec<_> = log.iter().map(|e| (e.attempt, e.node.clone().unwrap_or_default(), e.outcome)).collect();
    assert_eq!(
        seen,
        [(1, "doomed".to_string(), JobLogOutcome::Abandoned), (2, "survivor".to_string(), JobLogOutcome::Succeeded)]
    );
    let nodes = store.node_list().await.unwrap();
    assert_eq!(nodes.iter().find(|n| n.id == "doomed").unwrap().state, "dead");
    survivor.shutdown(Duration::from_secs(5)).await;
}

async fn a_node_restarted_under_the_same_id_takes_its_old_jobs_over_at_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let started = Arc::new(AtomicUsize::new(0));
    let build = || {
        let s = started.clone();
        fx.engine("fixed")
            // The lease alone would keep the job for five minutes, and the restarted node
            // heartbeats under the old id at once, so the reaper never declares the old one
            // dead: recovery must come from the registration.
            .lock_time(SignedDuration::from_mins(5))
            .handler(
                "work",
                handler_fn(move |_ctx| {
                    let s = s.clone();
                    async move {
                        if s.fetch_add(1, Ordering::SeqCst) == 0 {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                        }
                        Ok(None)
                    }
                }),
            )
            .build()
    };
    let old = build().await.unwrap();
    let store = old.store().clone();
    let job = old.enqueue(&req("work", json!({}))).await.unwrap();
    old.start().await.unwrap();
    wait_until(LIMIT, "the first incarnation to start the job", || async { started.load(Ordering::SeqCst) == 1 }).await;
    old.crash();
    let restarted = build().await.unwrap();
    restarted.start().await.unwrap();
    // Seconds, not the five minutes of the lease.
    wait_until(Duration::from_secs(5), "the restarted node to finish the job", || async {
        runtime_jobs(&store).await == 0
    })
    .await;
    assert_eq!(started.load(Ordering::SeqCst), 2);
    let log = log_of(&store, &job.id).await;
    let seen: Vec<_> = log.iter().map(|e| (e.attempt, e.node.clone().unwrap_or_default(), e.outcome)).collect();
    assert_eq!(
        seen,
        [(1, "fixed".to_string(), JobLogOutcome::Abandoned), (2, "fixed".to_string(), JobLogOutcome::Succeeded)]
    );
    let nodes = store.node_list().await.unwrap();
    assert_eq!(nodes.iter().map(|n| (n.id.as_str(), n.state.as_str())).collect::<Vec<_>>(), [("fixed", "running")]);
    restarted.shutdown(Duration::from_secs(5)).await;
}

async fn shutdown_hands_unfinished_jobs_back_without_spending_a_retry(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let build = |node: &str, ms: u64| {
        fx.engine(node)
            .handler(
                "long",
                handler_fn(move |_ctx| async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(None)
                }),
            )
            .build()
    };
    let first = build("first", 60_000).await.unwrap();
    let store = first.store().clone();
    let job = first.enqueue(&EnqueueRequest { retries: Some(3), ..req("long", json!({})) }).await.unwrap();
    first.start().await.unwrap();
    wait_until(LIMIT, "the job to start", || async { first.running() == 1 }).await;
    first.shutdown(Duration::from_millis(200)).await;
    let row = store.job_get(JobTable::Runtime, &job.id).await.unwrap().unwrap();
    assert!(row.lock_owner.is_none(), "the lease is released");
    assert_eq!(row.retries, 3, "handing back spends no retry");
    let log = log_of(&store, &job.id).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, JobLogOutcome::Abandoned);
    assert_eq!(store.node_list().await.unwrap().iter().find(|n| n.id == "first").unwrap().state, "stopped");
    let second = build("second", 10).await.unwrap();
    second.start().await.unwrap();
    wait_until(LIMIT, "the second node to finish it", || async { runtime_jobs(&store).await == 0 }).await;
    second.shutdown(Duration::from_secs(5)).await;
}

/// Leases held by `node`, running or queued.
async fn locked_by(store: &Arc<dyn kairos::store::Store>, node: &str) -> i64 {
    let rows = store
        .sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ = ?", &[SqlValue::Text(node.into())])
        .await
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

/// The local queue (issue 21): once its handlers are known to be short, a node takes more jobs
/// than it has workers — up to `prefetch` more, never beyond — and on shutdown hands the queued
/// ones back at once: none of them starts, no retry is spent, and another node runs them.
async fn a_node_queues_ahead_of_its_workers_and_hands_the_queue_back_on_shutdown(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let ran = Arc::new(AtomicUsize::new(0));
    let build = |node: &str| {
        let (gate, ran) = (gate.clone(), ran.clone());
        fx.engine(node)
            .workers(2)
            .configure(|c| c.prefetch = 6)
            .handler(
                "gated",
                handler_fn(move |ctx| {
                    let (gate, ran) = (gate.clone(), ran.clone());
                    async move {
                        ran.fetch_add(1, Ordering::SeqCst);
                        if ctx.payload["wait"] == json!(true) {
                            let _held = gate.acquire().await;
                        }
                        Ok(None)
                    }
                }),
            )
            .build()
    };
    let first = build("first").await.unwrap();
    let store = first.store().clone();
    // Short jobs first: until a handler has finished here, the node queues nothing.
    for _ in 0..4 {
        first.enqueue(&req("gated", json!({"wait": false}))).await.unwrap();
    }
    first.start().await.unwrap();
    wait_until(LIMIT, "the short jobs", || async { runtime_jobs(&store).await == 0 }).await;
    for _ in 0..20 {
        first.enqueue(&EnqueueRequest { retries: Some(3), ..req("gated", json!({"wait": true})) }).await.unwrap();
    }
    first.wake();
    wait_until(LIMIT, "2 running and 6 queued leases", || async { locked_by(&store, "first").await == 8 }).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(locked_by(&store, "first").await, 8, "never more than workers + prefetch");
    assert_eq!(ran.load(Ordering::SeqCst), 4 + 2, "only as many handlers run as there are workers");

    first.shutdown(Duration::from_millis(200)).await;
    assert_eq!(ran.load(Ordering::SeqCst), 6, "no queued job started during the shutdown");
    assert_eq!(locked_by(&store, "first").await, 0, "every lease, queued or running, is handed back");
    let rows = store.sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE RETRIES_ = 3", &[]).await.unwrap();
    assert_eq!(rows[0][0].as_i64(), Some(20), "handing back spends no retry");

    gate.add_permits(1_000);
    let second = build("second").await.unwrap();
    second.start().await.unwrap();
    wait_until(LIMIT, "the second node to run all 20", || async { runtime_jobs(&store).await == 0 }).await;
    second.shutdown(Duration::from_secs(5)).await;
}

async fn exclusive_jobs_of_one_key_never_overlap(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").workers(8).build().await.unwrap();
    let store = engine.store().clone();
    let reqs: Vec<_> = (0..20)
        .map(|i| EnqueueRequest { exclusive_key: Some("order-42".into()), ..req("sleep", json!({"ms": 20, "i": i})) })
        .collect();
    engine.enqueue_many(&reqs).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "all exclusive jobs to run", || async { runtime_jobs(&store).await == 0 }).await;
    let mut log =
        store.job_log_list(&kairos::store::JobLogFilter { size: 1000, ..Default::default() }).await.unwrap().data;
    assert_eq!(log.len(), 20);
    log.sort_by_key(|e| e.start);
    for w in log.windows(2) {
        assert!(w[1].start.unwrap() >= w[0].end.unwrap(), "overlap: {:?} and {:?}", w[0], w[1]);
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn enqueue_inside_the_callers_transaction_commits_or_rolls_back_with_it(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let store = engine.store().clone();
    let create = "CREATE TABLE biz_order (order_no VARCHAR(64) PRIMARY KEY)";
    store.sql_execute(create, &[]).await.unwrap();
    let r = req("log", json!({"order": "o-1"}));
    match backend {
        Backend::Sqlite => {
            use sqlx::Connection;
            let mut conn = sqlx::SqliteConnection::connect(&fx.url).await.unwrap();
            let mut tx = conn.begin().await.unwrap();
            sqlx::query("INSERT INTO biz_order VALUES ('o-1')").execute(&mut *tx).await.unwrap();
            engine.enqueue_in(&mut *tx, &r).await.unwrap();
            tx.rollback().await.unwrap();
            assert_eq!((count_rows(&store, "biz_order").await, runtime_jobs(&store).await), (0, 0));
            let mut tx = conn.begin().await.unwrap();
            sqlx::query("INSERT INTO biz_order VALUES ('o-1')").execute(&mut *tx).await.unwrap();
            engine.enqueue_in(&mut *tx, &r).await.unwrap();
            tx.commit().await.unwrap();
        }
        Backend::Postgres => {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&fx.url).await.unwrap();
            let mut tx = conn.begin().await.unwrap();
            sqlx::query("INSERT INTO biz_order VALUES ('o-1')").execute(&mut *tx).await.unwrap();
            engine.enqueue_in(&mut *tx, &r).await.unwrap();
            tx.rollback().await.unwrap();
            assert_eq!((count_rows(&store, "biz_order").await, runtime_jobs(&store).await), (0, 0));
            let mut tx = conn.begin().await.unwrap();
            sqlx::query("INSERT INTO biz_order VALUES ('o-1')").execute(&mut *tx).await.unwrap();
            engine.enqueue_in(&mut *tx, &r).await.unwrap();
            tx.commit().await.unwrap();
        }
    }
    assert_eq!((count_rows(&store, "biz_order").await, runtime_jobs(&store).await), (1, 1));
    // A bad request inside the caller's transaction is refused before anything is written.
    let bad = EnqueueRequest { retries: Some(-1), ..req("log", json!({})) };
    assert!(matches!(engine.prepare(&bad), Err(kairos::Error::Invalid(_))));
    let list = store.job_list(&JobFilter::default()).await.unwrap();
    assert_eq!(list.total, 1);
}

async fn a_handlers_staged_writes_commit_with_its_success_only(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx
        .engine("n1")
        .handler(
            "effect",
            handler_fn(|ctx| async move {
                ctx.write_on_success(
                    "INSERT INTO biz_effect (job_id, attempt) VALUES (?, ?)",
                    vec![SqlValue::Text(ctx.job_id.clone()), SqlValue::Int(i64::from(ctx.attempt))],
                );
                if ctx.payload.get("fail_first").is_some() && ctx.attempt == 1 {
                    return Err("first attempt fails after staging its write".into());
                }
                Ok(None)
            }),
        )
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    store.sql_execute("CREATE TABLE biz_effect (job_id VARCHAR(64), attempt INTEGER)", &[]).await.unwrap();
    let reqs: Vec<_> = (0..20).map(|i| req("effect", json!({ "i": i }))).collect();
    engine.enqueue_many(&reqs).await.unwrap();
    let flaky = engine.enqueue(&req("effect", json!({ "fail_first": true }))).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "all jobs to finish", || async { runtime_jobs(&store).await == 0 }).await;
    assert_eq!(count_rows(&store, "biz_effect").await, 21, "one effect row per job");
    let rows = store
        .sql_query("SELECT attempt FROM biz_effect WHERE job_id = ?", &[SqlValue::Text(flaky.id.clone())])
        .await
        .unwrap();
    assert_eq!(rows, vec![vec![SqlValue::Int(2)]], "the failed attempt's staged write was dropped");
    engine.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    exhausted_retries_dead_letter_with_message_and_stack,
    a_dead_letter_moved_back_runs_again_and_leaves_no_orphan_bytes,
    a_repeating_timer_r3_pt1s_runs_exactly_three_times_on_one_row,
    a_future_job_is_not_run_early_by_a_node_whose_clock_is_ahead,
    with_the_executor_switched_off_jobs_wait,
    a_panicking_or_hanging_handler_is_a_failed_attempt,
    a_slow_handler_keeps_its_lease_and_runs_once,
    a_crashed_nodes_job_is_taken_over_after_it_is_declared_dead,
    a_node_restarted_under_the_same_id_takes_its_old_jobs_over_at_once,
    shutdown_hands_unfinished_jobs_back_without_spending_a_retry,
    a_node_queues_ahead_of_its_workers_and_hands_the_queue_back_on_shutdown,
    exclusive_jobs_of_one_key_never_overlap,
    enqueue_inside_the_callers_transaction_commits_or_rolls_back_with_it,
    a_handlers_staged_writes_commit_with_its_success_only,
);
