//! graphile_worker (crates.io 0.14.1) on the drain, steady and timers workloads.
//! Settings (the crate's docs, "local queue" / batching; the fastest peer seen on this machine):
//! concurrency 32, LocalQueueConfig size 500 (the pool locks and fetches 500 jobs per query),
//! complete_job_batch_delay 5 ms (completions within 5 ms share one query), pool of
//! concurrency + 4 connections, poll_interval left at its default (1 s: future run_at jobs are
//! found by that poll, add_jobs' NOTIFY wakes the worker for jobs due now).
//! drain: jobs pre-enqueued with add_jobs in chunks of 10,000.
//! steady: every 10 ms, the jobs whose due time has come in one add_jobs call (run_at = now).
//! timers: the pending timers by one INSERT … SELECT generate_series into _private_jobs with
//! the columns add_jobs writes (checked against a row added through add_jobs), then ANALYZE as
//! add_jobs does after a batch of ≥ 10,000; the N timers by add_jobs with JobSpec.run_at, 10,000
//! per call.
use graphile_worker::{IntoTaskHandlerResult, JobSpec, LocalQueueConfig, TaskHandler, Worker, WorkerContext, WorkerOptions};
use kairos_bench_rust_peers::{self as kb, args, emit, measured, wait_count, wait_until, Timer};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static CALLS: AtomicU64 = AtomicU64::new(0);
const LOCAL_QUEUE: usize = 500;
const CHUNK: usize = 10_000;

#[derive(Clone, Deserialize, Serialize)]
struct Noop {}

impl TaskHandler for Noop {
    const IDENTIFIER: &'static str = "noop";
    async fn run(self, _ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        CALLS.fetch_add(1, Ordering::Relaxed);
        Ok::<(), String>(())
    }
}

/// A steady/timers job: the shared Timer payload ({"i", "due_ms"}).
#[derive(Clone, Deserialize, Serialize)]
struct Tick(Timer);

impl TaskHandler for Tick {
    const IDENTIFIER: &'static str = "tick";
    async fn run(self, _ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        kb::job_started(self.0.i, self.0.due_ms);
        kb::job_done();
        Ok::<(), String>(())
    }
}

async fn worker(a: &kb::Args) -> Worker {
    WorkerOptions::default()
        .concurrency(a.concurrency)
        .schema("graphile_worker")
        .define_job::<Noop>()
        .define_job::<Tick>()
        .database_url(&a.url)
        .max_pg_conn(a.concurrency as u32 + 4)
        .local_queue(LocalQueueConfig::default().with_size(LOCAL_QUEUE))
        .complete_job_batch_delay(Duration::from_millis(5))
        .init()
        .await
        .expect("init")
}

fn settings(a: &kb::Args) -> serde_json::Value {
    serde_json::json!({"concurrency": a.concurrency, "local_queue_size": LOCAL_QUEUE,
        "complete_job_batch_delay_ms": 5, "pool_max": a.concurrency + 4, "poll_interval_ms": 1000,
        "deadline_s": a.deadline})
}

/// Starts the worker; the join handle is dropped at exit (main calls process::exit).
fn run(worker: Worker) -> Arc<Worker> {
    let worker = Arc::new(worker);
    let w = worker.clone();
    tokio::spawn(async move { w.run().await });
    worker
}

async fn drain(a: &kb::Args) -> serde_json::Value {
    // graphile_worker 0.14 links its own sqlx version: it opens its own pool from the URL, and
    // this one-connection pool (the driver's sqlx) only counts the remaining rows.
    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&a.url).await.expect("connect");
    let worker = worker(a).await;
    let utils = worker.create_utils();
    let spec = JobSpec::default();
    let te = Instant::now();
    let mut i = 0;
    while i < a.jobs {
        let n = (a.jobs - i).min(CHUNK as u64);
        let batch: Vec<(Noop, &JobSpec)> = (0..n).map(|_| (Noop {}, &spec)).collect();
        utils.add_jobs(&batch).await.expect("add_jobs");
        i += n;
    }
    let enqueue_per_s = (a.jobs as f64 / te.elapsed().as_secs_f64()).round();
    let t = Instant::now();
    let deadline = a.deadline_at(t);
    let worker = run(worker);
    wait_until(|| CALLS.load(Ordering::Relaxed) >= a.jobs, deadline).await;
    let left = wait_count(&pool, "SELECT count(*) FROM graphile_worker._private_jobs", 0, deadline).await;
    let secs = t.elapsed().as_secs_f64();
    worker.request_shutdown();
    kb::with(measured(a.jobs, a.jobs - left as u64, secs, settings(a)), serde_json::json!({"enqueue_per_s": enqueue_per_s}))
}

async fn steady(a: &kb::Args) -> serde_json::Value {
    let worker = worker(a).await;
    let utils = worker.create_utils();
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _worker = run(worker);
    let t0 = kb::now_ms().ceil() as i64;
    let dues = kb::steady_dues(a.jobs, a.rate, t0);
    kb::track(dues.clone());
    let mut pacer = kb::Pacer::new(dues, deadline);
    let spec = JobSpec::default();
    kb::spawn_progress("steady");
    while let Some(r) = pacer.next().await {
        let batch: Vec<(Tick, &JobSpec)> = r.map(|i| (Tick(Timer { i, due_ms: pacer.due(i) }), &spec)).collect();
        utils.add_jobs(&batch).await.expect("add_jobs");
    }
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    let deadline_ms = kb::instant_ms(deadline.expect("deadline"));
    kb::assert_no_pending_ran();
    kb::lateness_result(t0 as f64, deadline_ms, kb::with(settings(a), serde_json::json!({
        "rate": a.rate, "enqueue": "add_jobs per 10 ms tick, run_at = now (database default)"})))
}

fn run_at(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).expect("run_at")
}

const PENDING_SQL: &str = r#"
    INSERT INTO graphile_worker._private_jobs (job_queue_id, task_id, payload, run_at, max_attempts, key, priority, flags)
    SELECT NULL, (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'tick'),
           format('{"i": %s, "due_ms": %s}', j, due)::json,
           timestamptz 'epoch' + due * interval '1 millisecond', 25, NULL, 0, NULL
    FROM (SELECT j, $1::bigint + j AS due FROM generate_series($2::bigint, $3::bigint) j) s
    RETURNING id"#;

/// The P pending timers (due `now + 24 h + j ms`) by one INSERT … SELECT, after checking on one
/// timer that this SQL writes the row add_jobs writes.
async fn insert_pending(a: &kb::Args, utils: &graphile_worker::WorkerUtils, pool: &sqlx::PgPool) -> (f64, &'static str) {
    let base = kb::now_ms() as i64 + kb::DAY_MS;
    let spec = JobSpec { run_at: Some(run_at(base)), ..Default::default() };
    let api = utils.add_jobs(&[(Tick(Timer { i: 0, due_ms: base }), &spec)]).await.expect("add_jobs probe");
    let api_id = api[0].id().to_string();
    let sql_id: i64 = sqlx::query_scalar(PENDING_SQL).bind(base).bind(0i64).bind(0i64).fetch_one(pool).await.expect("probe");
    kb::same_row(pool, "graphile_worker._private_jobs", "id", &api_id, &sql_id.to_string(), &["id", "created_at", "updated_at"]).await;
    let texts: Vec<String> = sqlx::query_scalar("SELECT payload::text FROM graphile_worker._private_jobs ORDER BY id")
        .fetch_all(pool).await.expect("payloads");
    assert!(texts.len() == 2 && texts[0] == texts[1], "payload text differs: {texts:?}");
    sqlx::query("DELETE FROM graphile_worker._private_jobs").execute(pool).await.expect("delete probes");
    let t = Instant::now();
    if a.pending > 0 {
        sqlx::query(&PENDING_SQL.replace("RETURNING id", ""))
            .bind(base).bind(0i64).bind(a.pending as i64 - 1).execute(pool).await.expect("pending insert");
        sqlx::query("ANALYZE graphile_worker._private_jobs").execute(pool).await.expect("analyze");
    }
    (t.elapsed().as_secs_f64(), "INSERT … SELECT generate_series into _private_jobs (checked against add_jobs' row) + ANALYZE")
}

async fn timers(a: &kb::Args) -> serde_json::Value {
    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&a.url).await.expect("connect");
    let worker = worker(a).await;
    let utils = worker.create_utils();
    let (pending_s, path) = insert_pending(a, &utils, &pool).await;
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _worker = run(worker);
    let ti = kb::now_ms();
    let t0 = (ti + a.lead * 1000.0).ceil() as i64;
    let dues = kb::timer_dues(a.jobs, a.spread, t0);
    kb::track(dues.clone());
    kb::spawn_progress("timers");
    let mut specs: Vec<JobSpec> = Vec::with_capacity(CHUNK);
    for chunk in (0..a.jobs).collect::<Vec<_>>().chunks(CHUNK) {
        specs.clear();
        specs.extend(chunk.iter().map(|i| JobSpec { run_at: Some(run_at(dues[*i as usize])), ..Default::default() }));
        let batch: Vec<(Tick, &JobSpec)> =
            chunk.iter().zip(&specs).map(|(i, s)| (Tick(Timer { i: *i, due_ms: dues[*i as usize] }), s)).collect();
        utils.add_jobs(&batch).await.expect("add_jobs");
    }
    let enqueue_s = (kb::now_ms() - ti) / 1000.0;
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    let deadline_ms = kb::instant_ms(deadline.expect("deadline"));
    kb::assert_no_pending_ran();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM graphile_worker._private_jobs WHERE run_at > now() + interval '1 hour'")
        .fetch_one(&pool).await.expect("pending left");
    assert_eq!(left as u64, a.pending, "pending timers missing");
    kb::with(
        kb::lateness_result(t0 as f64, deadline_ms, kb::with(settings(a), serde_json::json!({
            "spread_s": a.spread, "lead_s": a.lead, "pending": a.pending, "pending_path": path,
            "enqueue": "add_jobs with JobSpec.run_at, 10,000 per call"}))),
        kb::timers_side_figures(pending_s, enqueue_s, a.jobs, left),
    )
}

#[tokio::main]
async fn main() {
    let a = args(32);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await),
        "steady" => Some(steady(&a).await),
        "timers" => Some(timers(&a).await),
        _ => None,
    };
    emit("graphile_worker-rs", "0.14.1", &a.workload, r);
    std::process::exit(0);
}
