//! The executor under database faults, on both backends: completions that fail or are refused,
//! keeper calls that hang, a late lease extension, a blocked exclusive key, shutdown while the
//! database is down. Faults are injected by `common::faulty::Faulty`, a pass-through `Store`
//! with switches; handlers record when each attempt ran (monotonic time, one process) so that
//! "never at the same time" is checked on what really ran, not only on ACT_HI_JOB_LOG.

mod common;

use common::faulty::Faulty;
use common::{Backend, Fixture, log_of, runtime_jobs, wait_until};
use kairos::{
    EnqueueRequest, Handler, Job, JobContext, JobLogEntry, JobLogOutcome, JobTable, SignedDuration, Store, Timestamp,
    handler_fn,
};
use serde_json::json;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest any single wait of these tests may take.
const LIMIT: Duration = Duration::from_secs(10);

fn req(handler: &str, payload: serde_json::Value) -> EnqueueRequest {
    EnqueueRequest { handler: handler.into(), payload: Some(payload), ..Default::default() }
}

fn exclusive(key: &str, payload: serde_json::Value) -> EnqueueRequest {
    EnqueueRequest { exclusive_key: Some(key.into()), ..req("work", payload) }
}

/// One attempt's handler as it really ran.
#[derive(Debug, Clone)]
struct Run {
    job: String,
    attempt: i32,
    node: String,
    start: Instant,
    end: Option<Instant>,
    /// The handler was dropped before it returned (the executor aborted it).
    aborted: bool,
}

#[derive(Debug, Default)]
struct Runs(Mutex<Vec<Run>>);

impl Runs {
    fn new() -> Arc<Runs> {
        Arc::new(Runs::default())
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Run>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn all(&self) -> Vec<Run> {
        self.lock().clone()
    }
    fn started(&self, job: &str) -> usize {
        self.lock().iter().filter(|r| r.job == job).count()
    }
    fn attempt(&self, job: &str, attempt: i32) -> Option<Run> {
        self.lock().iter().find(|r| r.job == job && r.attempt == attempt).cloned()
    }
}

/// Records the end of a run when the handler's future goes away: by returning, or dropped by
/// an abort.
struct EndOnDrop {
    runs: Arc<Runs>,
    index: usize,
    returned: bool,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        let mut runs = self.runs.lock();
        let run = &mut runs[self.index];
        run.end = Some(Instant::now());
        run.aborted = !self.returned;
    }
}

/// A handler that records its run in `runs` and does `body` (then succeeds).
fn recorded<F, Fut>(runs: &Arc<Runs>, body: F) -> impl Handler
where
    F: Fn(JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let runs = runs.clone();
    let body = Arc::new(body);
    handler_fn(move |ctx: JobContext| {
        let runs = runs.clone();
        let body = body.clone();
        async move {
            let index = {
                let mut all = runs.lock();
                all.push(Run {
                    job: ctx.job_id.clone(),
                    attempt: ctx.attempt,
                    node: ctx.node_id.clone(),
                    start: Instant::now(),
                    end: None,
                    aborted: false,
                });
                all.len() - 1
            };
            let mut end = EndOnDrop { runs, index, returned: false };
            body(ctx).await;
            end.returned = true;
            Ok(None)
        }
    })
}

/// Handlers wait on it until the test opens it.
#[derive(Debug)]
struct Gate(tokio::sync::Semaphore);

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate(tokio::sync::Semaphore::new(0)))
    }
    async fn wait(&self) {
        let _ = self.0.acquire().await;
    }
    fn open(&self) {
        self.0.close();
    }
}

/// Like `wait_until`, but says whether `cond` came true instead of failing the test.
async fn eventually<F, Fut>(limit: Duration, mut cond: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if cond().await {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn outcomes(store: &Arc<dyn Store>, job: &str) -> Vec<(i32, JobLogOutcome)> {
    log_of(store, job).await.iter().map(|e| (e.attempt, e.outcome)).collect()
}

async fn node_state(store: &Arc<dyn Store>, node: &str) -> String {
    store.node_list().await.unwrap().into_iter().find(|n| n.id == node).map(|n| n.state).unwrap_or_default()
}

/// Log rows of attempts that must not overlap, checked on the database's clock.
fn assert_log_disjoint(mut log: Vec<JobLogEntry>) {
    log.sort_by_key(|e| e.start);
    for w in log.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            b.start.unwrap() >= a.end.unwrap(),
            "ACT_HI_JOB_LOG: attempt {} of {} ({:?}, {:?}..{:?}) overlaps attempt {} of {} ({:?}, {:?}..{:?})",
            a.attempt,
            a.job_id,
            a.outcome,
            a.start,
            a.end,
            b.attempt,
            b.job_id,
            b.outcome,
            b.start,
            b.end
        );
    }
}

/// Handler runs that must not overlap, checked on the test process's monotonic clock.
fn assert_runs_disjoint(mut runs: Vec<Run>) {
    runs.sort_by_key(|r| r.start);
    for w in runs.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let a_end = a.end.expect("every run has ended");
        assert!(
            b.start >= a_end,
            "handlers ran at the same time for {:?}: attempt {} of {} on {} (aborted: {}) and attempt {} of {} on {}",
            a_end - b.start,
            a.attempt,
            a.job,
            a.node,
            a.aborted,
            b.attempt,
            b.job,
            b.node
        );
    }
}

// ----- 1. shutdown and a success still on its way to the database --------------------------

/// A handler succeeded; its completion cannot be written yet (the database is down for a
/// moment) when the node shuts down with a short grace. Shutdown must neither hand the job back
/// nor leave it to run again: once the database answers, the success is written, once.
async fn shutdown_never_hands_back_a_job_whose_success_is_queued(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let engine =
        fx.engine("n1").store(db.clone()).handler("work", recorded(&runs, |_| async {})).build().await.unwrap();
    let store = engine.store().clone();
    db.fail_completions(true);
    let job = engine.enqueue(&req("work", json!({}))).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "the handler to succeed and its completion to be tried", || async {
        runs.attempt(&job.id, 1).is_some_and(|r| r.end.is_some()) && db.completion_calls() >= 1
    })
    .await;
    let shutdown = tokio::spawn(async move {
        engine.shutdown(Duration::from_millis(100)).await;
    });
    // The outage outlasts the grace period, so hand-back runs while the success is unwritten.
    tokio::time::sleep(Duration::from_millis(600)).await;
    db.fail_completions(false);
    tokio::time::timeout(LIMIT, shutdown).await.expect("shutdown returns once the database answers").unwrap();

    assert_eq!(runs.started(&job.id), 1);
    assert_eq!(
        outcomes(&store, &job.id).await,
        [(1, JobLogOutcome::Succeeded)],
        "logged succeeded, once, and nothing else"
    );
    assert!(
        store.job_get(JobTable::Runtime, &job.id).await.unwrap().is_none(),
        "the succeeded job is still in ACT_RU_JOB"
    );
    assert_eq!(node_state(&store, "n1").await, "stopped");
    // Nothing is left for another node to run.
    let other = fx.engine("n2").handler("work", recorded(&runs, |_| async {})).build().await.unwrap();
    other.start().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    other.shutdown(Duration::from_secs(1)).await;
    assert_eq!(runs.started(&job.id), 1, "the job ran again");
}

// ----- 2. shutdown while the database is down ----------------------------------------------

/// Completions fail as Unavailable for the whole shutdown: shutdown still returns in bounded
/// time and marks the node stopped; the job is not lost (its lease expires and another node
/// runs it once the database is back).
async fn shutdown_returns_in_bounded_time_while_completions_fail(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let build = |node: &str| {
        fx.engine(node).lock_time(SignedDuration::from_secs(1)).handler("work", recorded(&runs, |_| async {}))
    };
    let engine = build("n1").store(db.clone()).build().await.unwrap();
    let store = engine.store().clone();
    db.fail_completions(true);
    let job = engine.enqueue(&req("work", json!({}))).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "a completion to be tried", || async { db.completion_calls() >= 1 }).await;
    let t = Instant::now();
    let done = tokio::time::timeout(LIMIT, engine.shutdown(Duration::from_millis(500))).await;
    assert!(
        done.is_ok(),
        "shutdown did not return within {LIMIT:?} while completions failed ({} tries)",
        db.completion_calls()
    );
    eprintln!("shutdown took {:?} with the database down", t.elapsed());
    assert_eq!(node_state(&store, "n1").await, "stopped");
    assert!(
        store.job_get(JobTable::Runtime, &job.id).await.unwrap().is_some(),
        "the unwritten job is still in ACT_RU_JOB"
    );

    db.fail_completions(false);
    let other = build("n2").build().await.unwrap();
    other.start().await.unwrap();
    wait_until(LIMIT, "another node to run the job", || async { runtime_jobs(&store).await == 0 }).await;
    other.shutdown(Duration::from_secs(1)).await;
    assert_eq!(outcomes(&store, &job.id).await, [(1, JobLogOutcome::Abandoned), (2, JobLogOutcome::Succeeded)]);
}

// ----- 3. a blocked exclusive key ----------------------------------------------------------

/// One exclusive job runs for a long time and another of its key waits: the producer looks
/// again at its poll interval (or when a completion frees the key), not as fast as the
/// database answers.
async fn a_blocked_exclusive_key_does_not_make_the_producer_poll_hot(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let gate = Gate::new();
    let g = gate.clone();
    let poll = Duration::from_millis(250);
    let engine = fx
        .engine("n1")
        .store(db.clone())
        .configure(|c| c.poll_interval = poll)
        .handler(
            "work",
            recorded(&runs, move |_| {
                let g = g.clone();
                async move { g.wait().await }
            }),
        )
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    engine.enqueue_many(&[exclusive("k", json!({"n": 1})), exclusive("k", json!({"n": 2}))]).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "one job of the key to run", || async { runs.all().len() == 1 }).await;

    let window = Duration::from_secs(2);
    let before = db.acquisitions();
    tokio::time::sleep(window).await;
    let polls = db.acquisitions() - before;
    let bound = (window.as_millis() / poll.as_millis()) as u64 * 2 + 4;
    eprintln!("{polls} acquisitions in {window:?} with a blocked key (poll interval {poll:?}, bound {bound})");
    assert!(
        polls <= bound,
        "{polls} acquisitions in {window:?} with a {poll:?} poll interval (at most {bound} expected)"
    );
    assert!(polls >= 2, "the producer stopped looking for work ({polls} acquisitions in {window:?})");
    assert_eq!(runs.all().len(), 1, "the second job of the key ran while the first held it");

    gate.open();
    wait_until(LIMIT, "both jobs to finish", || async { runtime_jobs(&store).await == 0 }).await;
    engine.shutdown(Duration::from_secs(1)).await;
    assert_runs_disjoint(runs.all());
}

// ----- 4. a late lease extension -----------------------------------------------------------

/// What happened when n1's lease extension of job A hung past A's lease, n2 started job B of
/// A's exclusive key, and then the hung extension went through.
struct LateExtension {
    a: String,
    b: String,
    runs: Vec<Run>,
    /// A's handler was stopped within 2 s of the late extension going through.
    a_stopped: bool,
    /// A's row right after that, and the database clock then.
    a_row: Option<Job>,
    db_now: Timestamp,
    log: Vec<JobLogEntry>,
}

async fn late_extension(backend: Backend) -> Option<LateExtension> {
    let fx = Fixture::new(backend).await?;
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let build = |node: &str| {
        fx.engine(node)
            .lock_time(SignedDuration::from_secs(1))
            // Nobody fences itself, gives up on a call or declares a node dead during the test:
            // the hung extension is answered late instead of being abandoned.
            .configure(|c| c.dead_after = SignedDuration::from_secs(20))
            .handler(
                "work",
                recorded(&runs, |ctx| async move {
                    let first_of_a = ctx.attempt == 1 && ctx.payload["name"] == "A";
                    tokio::time::sleep(Duration::from_millis(if first_of_a { 6000 } else { 800 })).await;
                }),
            )
    };
    // One worker: n1 takes nothing else while A runs.
    let n1 = build("n1").store(db.clone()).workers(1).build().await.unwrap();
    let n2 = build("n2").build().await.unwrap();
    let store = n2.store().clone();
    let a = n1.enqueue(&exclusive("k", json!({"name": "A"}))).await.unwrap();
    n1.start().await.unwrap();
    wait_until(LIMIT, "A to start on n1", || async { runs.started(&a.id) == 1 }).await;

    db.hang_keeper(true);
    // B is due before A, so once A's lease has expired an acquisition picks B, not A.
    let now = store.db_now().await.unwrap();
    let b = n1
        .enqueue(&EnqueueRequest {
            due_date: Some(now - SignedDuration::from_hours(1)),
            ..exclusive("k", json!({"name": "B"}))
        })
        .await
        .unwrap();
    n2.start().await.unwrap();
    wait_until(LIMIT, "n2 to start B once A's lease expired", || async { runs.started(&b.id) == 1 }).await;

    // The outage lasts a little longer while B runs, then the hung keeper call goes through and
    // the extension reaches the database after A's lease expired.
    tokio::time::sleep(Duration::from_millis(300)).await;
    db.hang_keeper(false);
    let a_stopped =
        eventually(Duration::from_secs(2), || async { runs.attempt(&a.id, 1).is_some_and(|r| r.end.is_some()) }).await;
    let a_row = store.job_get(JobTable::Runtime, &a.id).await.unwrap();
    let db_now = store.db_now().await.unwrap();

    wait_until(LIMIT, "A and B to finish", || async { runtime_jobs(&store).await == 0 }).await;
    n1.shutdown(Duration::from_secs(1)).await;
    n2.shutdown(Duration::from_secs(1)).await;
    let mut log = log_of(&store, &a.id).await;
    log.extend(log_of(&store, &b.id).await);
    Some(LateExtension { a: a.id, b: b.id, runs: runs.all(), a_stopped, a_row, db_now, log })
}

/// The database must refuse an extension of a lease that has already expired: by then another
/// node may hold the job's exclusive key. So A's attempt ends (aborted, logged abandoned),
/// its lease stays expired, and A runs again only after B.
async fn a_late_lease_extension_does_not_revive_an_expired_lease(backend: Backend) {
    let Some(s) = late_extension(backend).await else { return };
    let revived = s.a_row.as_ref().is_some_and(|j| {
        j.lock_owner.as_deref() == Some("n1") && j.attempts == 1 && j.lock_exp_time.is_some_and(|t| t > s.db_now)
    });
    assert!(
        !revived,
        "the late extension revived A's expired lease while B held the key: {:?}",
        s.a_row.map(|j| j.lock_exp_time)
    );
    assert!(s.a_stopped, "A's handler kept running after its late extension: the expired lease was revived");
    let of = |id: &str| s.log.iter().filter(|e| e.job_id == id).map(|e| (e.attempt, e.outcome)).collect::<Vec<_>>();
    assert_eq!(
        of(&s.a),
        [(1, JobLogOutcome::Abandoned), (2, JobLogOutcome::Succeeded)],
        "A's first attempt must not be accepted"
    );
    assert_eq!(of(&s.b), [(1, JobLogOutcome::Succeeded)]);
    assert_log_disjoint(s.log);
}

/// While its lease extension hangs, a handler is stopped when its lease runs out by the node's
/// own clock (keeper.rs: "aborted even if the database never said so"), so it never runs
/// alongside the job another node starts on the same exclusive key.
async fn a_handler_whose_extension_hangs_stops_before_another_node_runs_its_key(backend: Backend) {
    let Some(s) = late_extension(backend).await else { return };
    let a1 = s.runs.iter().find(|r| r.job == s.a && r.attempt == 1).unwrap();
    assert!(a1.aborted, "A's first attempt ran to its end");
    assert_runs_disjoint(s.runs);
}

// ----- 5. hung keeper calls ----------------------------------------------------------------

/// Heartbeats and lease extensions hang (a black-holed connection). The node fences itself:
/// its running handler is aborted before the cluster would declare it dead (dead_after), and it
/// takes no new work. Once calls go through again it releases the lease, and the job runs again
/// and succeeds.
async fn hung_database_calls_fence_the_node_and_release_its_lease_afterwards(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let engine = fx
        .engine("n1")
        .store(db.clone())
        // A long lease: what stops the handler is fencing, not the lease running out.
        .lock_time(SignedDuration::from_secs(30))
        .handler(
            "work",
            recorded(&runs, |ctx| async move {
                if ctx.attempt == 1 && ctx.payload["name"] == "A" {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
            }),
        )
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    let dead_after = engine.settings().executor.dead_after.unsigned_abs();
    let a = engine.enqueue(&req("work", json!({"name": "A"}))).await.unwrap();
    engine.start().await.unwrap();
    wait_until(LIMIT, "A to start", || async { runs.started(&a.id) == 1 }).await;

    db.hang_keeper(true);
    let hung = Instant::now();
    wait_until(dead_after + Duration::from_secs(1), "the fenced node to stop A's handler", || async {
        runs.attempt(&a.id, 1).is_some_and(|r| r.end.is_some())
    })
    .await;
    let a1 = runs.attempt(&a.id, 1).unwrap();
    assert!(a1.aborted, "A's handler returned instead of being stopped");
    let took = a1.end.unwrap() - hung;
    eprintln!("the fenced node stopped A's handler {took:?} after its database calls began to hang");
    assert!(
        took < dead_after,
        "A's handler was stopped {took:?} after the database went silent; the cluster declares a node dead after {dead_after:?}"
    );

    // Fenced: no new work while the database is silent.
    let c = engine.enqueue(&req("work", json!({"name": "C"}))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(runs.started(&c.id), 0, "a fenced node started new work");
    assert_eq!(runs.started(&a.id), 1, "a fenced node ran A again");

    db.hang_keeper(false);
    wait_until(LIMIT, "A and C to run once the database answers", || async { runtime_jobs(&store).await == 0 }).await;
    engine.shutdown(Duration::from_secs(1)).await;
    let log = log_of(&store, &a.id).await;
    let seen: Vec<_> = log.iter().map(|e| (e.attempt, e.outcome)).collect();
    assert_eq!(seen, [(1, JobLogOutcome::Abandoned), (2, JobLogOutcome::Succeeded)]);
    let why = log[0].message.as_deref().unwrap_or("");
    assert!(why.contains("lost the database"), "abandoned attempt's message: {why:?}");
    assert_eq!(outcomes(&store, &c.id).await, [(1, JobLogOutcome::Succeeded)]);
    assert_eq!(runs.started(&a.id), 2);
}

// ----- 6. completions the database refuses -------------------------------------------------

/// The database refuses (ErrorKind::Other) every completion batch holding one job's outcome.
/// The other jobs of that batch complete; the refused job is dead-lettered with a message that
/// says its outcome could not be recorded; later jobs still complete.
async fn a_completion_the_database_refuses_dead_letters_that_job_and_not_the_others(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let engine = fx
        .engine("n1")
        .store(db.clone())
        // Completions gather for 200 ms: the refused one shares its batch with the others.
        .configure(|c| c.completion_delay = Duration::from_millis(200))
        .handler("work", recorded(&runs, |_| async {}))
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    let mut jobs = Vec::new();
    for i in 0..6 {
        jobs.push(engine.enqueue(&req("work", json!({"i": i}))).await.unwrap().id);
    }
    let bad = jobs[2].clone();
    db.refuse_completions_of(Some(&bad));
    engine.start().await.unwrap();
    wait_until(LIMIT, "the other jobs to complete and the refused one to be dead-lettered", || async {
        runtime_jobs(&store).await == 0 && store.job_get(JobTable::DeadLetter, &bad).await.unwrap().is_some()
    })
    .await;
    assert!(db.refused_calls() >= 1, "the fault was never hit");
    for id in jobs.iter().filter(|id| **id != bad) {
        assert_eq!(outcomes(&store, id).await, [(1, JobLogOutcome::Succeeded)], "job {id}");
    }
    let dead = store.job_get(JobTable::DeadLetter, &bad).await.unwrap().unwrap();
    let msg = dead.exception_msg.clone().unwrap_or_default();
    assert!(msg.contains("could not be recorded") && msg.contains("succeeded"), "dead letter message: {msg:?}");
    assert!(dead.lock_owner.is_none());
    let stack = store.job_stacktrace(JobTable::DeadLetter, &bad).await.unwrap().unwrap_or_default();
    assert!(stack.contains("could not be recorded"), "stack: {stack:?}");
    assert_eq!(outcomes(&store, &bad).await, [(1, JobLogOutcome::DeadLettered)]);
    assert_eq!(runs.started(&bad), 1);

    let later = engine.enqueue(&req("work", json!({"later": true}))).await.unwrap();
    wait_until(LIMIT, "a later job to complete", || async { runtime_jobs(&store).await == 0 }).await;
    assert_eq!(outcomes(&store, &later.id).await, [(1, JobLogOutcome::Succeeded)]);
    engine.shutdown(Duration::from_secs(1)).await;
}

// ----- 7. a completion whose answer was lost ----------------------------------------------

/// The COMMIT of a completion applies but its answer is lost (the connection breaks first), so
/// the completer sends it again. The store must tell "already applied" from "lease lost": the
/// attempt counts as succeeded, once, and no lease is reported lost.
async fn a_completion_sent_again_after_a_lost_commit_answer_counts_as_applied(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let db = Faulty::open(&fx).await;
    let runs = Runs::new();
    let engine =
        fx.engine("n1").store(db.clone()).handler("work", recorded(&runs, |_| async {})).build().await.unwrap();
    let store = engine.store().clone();
    let job = engine.enqueue(&req("work", json!({}))).await.unwrap().id;
    db.lose_answer_of(&job);
    engine.start().await.unwrap();
    wait_until(LIMIT, "the job's success to be written and its answer lost once", || async {
        runtime_jobs(&store).await == 0 && db.lost_answers() == 1
    })
    .await;
    // Shutdown waits for the completer, so its answer to the resent completion is recorded.
    engine.shutdown(Duration::from_secs(5)).await;
    assert!(db.completion_calls() >= 2, "the completion was sent again");
    assert_eq!(engine.metrics().lease_lost.get(), 0, "an applied completion is not a lost lease");
    assert_eq!(outcomes(&store, &job).await, [(1, JobLogOutcome::Succeeded)]);
    assert_eq!(runs.started(&job), 1);
}

/// No wrapper: a NUL in a handler's error or success message is stored as U+FFFD on both
/// backends (PostgreSQL refuses NUL in text), and the completer is not wedged by it.
async fn a_nul_byte_in_a_handler_message_is_stored_as_a_replacement_character(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx
        .engine("n1")
        .handler("nul-fail", handler_fn(|_ctx| async { Err("upstream said: a\0b".into()) }))
        .handler("nul-ok", handler_fn(|_ctx| async { Ok(Some("done\0".to_string())) }))
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    engine.start().await.unwrap();
    let failing = engine.enqueue(&EnqueueRequest { retries: Some(2), ..req("nul-fail", json!({})) }).await.unwrap();
    let ok = engine.enqueue(&req("nul-ok", json!({}))).await.unwrap();
    let plain = engine.enqueue(&req("noop", json!({}))).await.unwrap();
    wait_until(LIMIT, "the failing job to be dead-lettered and the others to complete", || async {
        runtime_jobs(&store).await == 0 && store.job_get(JobTable::DeadLetter, &failing.id).await.unwrap().is_some()
    })
    .await;
    engine.shutdown(Duration::from_secs(1)).await;

    let dead = store.job_get(JobTable::DeadLetter, &failing.id).await.unwrap().unwrap();
    assert_eq!(dead.exception_msg.as_deref(), Some("upstream said: a\u{FFFD}b"));
    let stack = store.job_stacktrace(JobTable::DeadLetter, &failing.id).await.unwrap().unwrap();
    assert!(stack.contains("a\u{FFFD}b") && !stack.contains('\0'), "stack: {stack:?}");
    let log = log_of(&store, &failing.id).await;
    let seen: Vec<_> = log.iter().map(|e| (e.outcome, e.message.as_deref())).collect();
    assert_eq!(
        seen,
        [
            (JobLogOutcome::Failed, Some("upstream said: a\u{FFFD}b")),
            (JobLogOutcome::DeadLettered, Some("upstream said: a\u{FFFD}b"))
        ]
    );
    let log = log_of(&store, &ok.id).await;
    assert_eq!(
        log.iter().map(|e| (e.outcome, e.message.as_deref())).collect::<Vec<_>>(),
        [(JobLogOutcome::Succeeded, Some("done\u{FFFD}"))]
    );
    assert_eq!(outcomes(&store, &plain.id).await, [(1, JobLogOutcome::Succeeded)]);
}

on_both_backends!(
    a_completion_sent_again_after_a_lost_commit_answer_counts_as_applied,
    shutdown_never_hands_back_a_job_whose_success_is_queued,
    a_blocked_exclusive_key_does_not_make_the_producer_poll_hot,
    a_late_lease_extension_does_not_revive_an_expired_lease,
    hung_database_calls_fence_the_node_and_release_its_lease_afterwards,
    a_completion_the_database_refuses_dead_letters_that_job_and_not_the_others,
    a_nul_byte_in_a_handler_message_is_stored_as_a_replacement_character,
    shutdown_returns_in_bounded_time_while_completions_fail,
    a_handler_whose_extension_hangs_stops_before_another_node_runs_its_key,
);
