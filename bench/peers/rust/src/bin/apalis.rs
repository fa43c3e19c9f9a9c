//! apalis + apalis-postgres (crates.io 1.0.0) on the drain, steady and timers workloads.
//! Settings (PEERS.md, from the crate's docs/examples: batch_size for throughput, concurrency
//! limit on the worker): one worker with `.concurrency(C)` (C = 100) and `.parallelize(tokio::spawn)`
//! (each task on its own tokio task), PostgresStorage Config `batch_size(C)` (batch =
//! concurrency), other Config defaults (lock_tasks, persist_results on), polling storage.
//! Schema: PostgresStorage::setup (the crate's own migrations).
//! drain: N unit tasks pushed with push_all in chunks of 10,000 before the worker starts. Timed
//! from worker start until every row of apalis.jobs is `Done` (results committed by the crate's
//! batched handle_result).
//! steady: every 10 ms, the tasks whose due time has come in one push_all (run_at = now).
//! timers: the pending timers by one INSERT … SELECT generate_series into apalis.jobs (checked
//! against a row pushed through push_all), its row triggers off (they do nothing for rows due a
//! day ahead, see insert_rows); the N timers by push_all (10,000 per call) with
//! TaskBuilder::run_at_timestamp, whose unit is the whole second: a timer due at t ms is given
//! run_at = ceil(t / 1000) s (never early), so its lateness includes up to 1 s of rounding.
use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use kairos_bench_rust_peers::{self as kb, args, emit, measured, wait_count, wait_until, Timer};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static CALLS: AtomicU64 = AtomicU64::new(0);
const CHUNK: usize = 10_000;

async fn noop(_n: u32) -> Result<(), BoxDynError> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn tick(t: Timer) -> Result<(), BoxDynError> {
    kb::job_started(t.i, t.due_ms);
    kb::job_done();
    Ok(())
}

fn settings(a: &kb::Args) -> serde_json::Value {
    serde_json::json!({"concurrency": a.concurrency, "batch_size": a.concurrency, "parallelize": "tokio::spawn",
        "lock_tasks": true, "persist_results": true, "pool": "PgPool::connect defaults (10)", "deadline_s": a.deadline})
}

async fn setup(a: &kb::Args) -> apalis_postgres::PgPool {
    let pool = apalis_postgres::PgPool::connect(&a.url).await.expect("connect");
    PostgresStorage::setup(&pool).await.expect("setup");
    pool
}

async fn drain(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    let config = Config::default().batch_size(a.concurrency);
    let mut backend = PostgresStorage::new(&pool).with_config(config);
    let te = Instant::now();
    let mut i = 0u64;
    while i < a.jobs {
        let n = (a.jobs - i).min(CHUNK as u64);
        let mut items = futures::stream::iter((0..n).map(|k| TaskBuilder::new(k as u32).build()));
        backend.push_all(&mut items).await.expect("push_all");
        i += n;
    }
    let enqueue_per_s = (a.jobs as f64 / te.elapsed().as_secs_f64()).round();
    let count_pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&a.url).await.expect("connect");
    let worker = WorkerBuilder::new("bench")
        .backend(backend)
        .concurrency(a.concurrency)
        .parallelize(tokio::spawn)
        .build(noop);
    // worker.run() is not Send (spawn refuses it): run it beside the watcher in this task.
    let t = Instant::now();
    let deadline = a.deadline_at(t);
    let watch = async {
        wait_until(|| CALLS.load(Ordering::Relaxed) >= a.jobs, deadline).await;
        wait_count(&count_pool, "SELECT count(*) FROM apalis.jobs WHERE status <> 'Done'", 0, deadline).await
    };
    let left = tokio::select! {
        r = worker.run() => panic!("worker stopped after {} tasks: {:?}", CALLS.load(Ordering::Relaxed), r),
        left = watch => left,
    };
    let secs = t.elapsed().as_secs_f64();
    kb::with(measured(a.jobs, a.jobs - left as u64, secs, settings(a)), serde_json::json!({"enqueue_per_s": enqueue_per_s}))
}

/// run_at of a timer due at `due_ms`: whole seconds, rounded up.
fn run_at_s(due_ms: i64) -> u64 {
    ((due_ms + 999) / 1000) as u64
}

async fn steady(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    let backend = PostgresStorage::<Timer>::new(&pool).with_config(Config::default().batch_size(a.concurrency));
    let mut sink = backend.clone();
    let worker = WorkerBuilder::new("bench").backend(backend).concurrency(a.concurrency).parallelize(tokio::spawn).build(tick);
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let t0 = kb::now_ms().ceil() as i64;
    let dues = kb::steady_dues(a.jobs, a.rate, t0);
    kb::track(dues.clone());
    kb::spawn_progress("steady");
    let feed = async {
        let mut pacer = kb::Pacer::new(dues, deadline);
        while let Some(r) = pacer.next().await {
            let mut items = futures::stream::iter(r.map(|i| TaskBuilder::new(Timer { i, due_ms: pacer.due(i) }).build()).collect::<Vec<_>>());
            sink.push_all(&mut items).await.expect("push_all");
        }
        wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    };
    tokio::select! {
        r = worker.run() => panic!("worker stopped: {r:?}"),
        _ = feed => {}
    }
    kb::assert_no_pending_ran();
    kb::lateness_result(t0 as f64, kb::instant_ms(deadline.expect("deadline")), kb::with(settings(a), serde_json::json!({
        "rate": a.rate, "enqueue": "push_all per 10 ms tick, run_at = now (whole seconds)"})))
}

/// Crockford base32 of a 48-bit millisecond time: the first 10 characters of a ULID.
fn ulid_time(ms: u64) -> String {
    const A: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    (0..10).rev().map(|k| A[((ms >> (5 * k)) & 31) as usize] as char).collect()
}

const PENDING_SQL: &str = r#"
    INSERT INTO apalis.jobs (id, job_type, job, status, attempts, max_attempts, run_at, priority, metadata, idempotency_key)
    SELECT $4 || lpad(j::text, 16, '0'), $5, convert_to(format('{"i":%s,"due_ms":%s}', j, due), 'UTF8'), 'Pending', 0, 25,
           to_timestamp((due + 999) / 1000), 0, ''::hstore, NULL
    FROM (SELECT j, $1::bigint + j AS due FROM generate_series($2::bigint, $3::bigint) j) s"#;

/// PENDING_SQL for the timers j in [from, to], in a transaction of its own with the table's
/// triggers off (kb::triggers_off_tx). apalis.jobs has two row triggers, and neither does
/// anything for these rows: notify_workers NOTIFYs only a row with run_at <= now() (these are due
/// a day ahead), and the foreign key fk_worker_lock_by checks lock_by, NULL here. Skipping them
/// took ~18 % off the 1,000,000 rows here (5 times side by side on a loaded machine: 10.3 s
/// against 12.6 s on average, the backend's CPU 8.4 s against 10.1 s). Returns whether they were
/// off.
async fn insert_rows(pool: &sqlx::PgPool, base: i64, from: i64, to: i64, prefix: &str, queue: &str) -> bool {
    let (mut tx, off) = kb::triggers_off_tx(pool).await;
    sqlx::query(PENDING_SQL).bind(base).bind(from).bind(to).bind(prefix).bind(queue)
        .execute(&mut *tx).await.expect("pending insert");
    tx.commit().await.expect("commit");
    off
}

/// The P pending timers (due `now + 24 h + j ms`) by one INSERT … SELECT, after checking on one
/// timer that this path writes the row push_all writes (all columns but the id). push_all of
/// 1,000,000 took 44 s here (random ULIDs into two unique text indexes), this 13 s with the
/// triggers on. Returns the seconds and whether the triggers were off.
async fn insert_pending(a: &kb::Args, sink: &mut PostgresStorage<Timer>, pool: &sqlx::PgPool) -> (f64, bool) {
    let base = kb::now_ms() as i64 + kb::DAY_MS;
    let probe = Timer { i: 0, due_ms: base };
    let mut one = futures::stream::iter(vec![TaskBuilder::new(probe).run_at_timestamp(run_at_s(base)).build()]);
    sink.push_all(&mut one).await.expect("push_all probe");
    let (api_id, queue): (String, String) = sqlx::query_as("SELECT id, job_type FROM apalis.jobs").fetch_one(pool).await.expect("probe");
    let prefix = ulid_time(kb::now_ms() as u64);
    insert_rows(pool, base, 0, 0, &prefix, &queue).await;
    kb::same_row(pool, "apalis.jobs", "id", &api_id, &format!("{prefix}{:016}", 0), &["id"]).await;
    sqlx::query("DELETE FROM apalis.jobs").execute(pool).await.expect("delete probes");
    let t = Instant::now();
    let mut off = false;
    if a.pending > 0 {
        off = insert_rows(pool, base, 0, a.pending as i64 - 1, &prefix, &queue).await;
    }
    (t.elapsed().as_secs_f64(), off)
}

async fn timers(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    let backend = PostgresStorage::<Timer>::new(&pool).with_config(Config::default().batch_size(a.concurrency));
    let mut sink = backend.clone();
    // apalis links sqlx 0.9: the driver's own sqlx (0.8) pool runs the bulk insert and counts.
    let count_pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&a.url).await.expect("connect");
    let (pending_s, triggers_off) = insert_pending(a, &mut sink, &count_pool).await;
    let worker = WorkerBuilder::new("bench").backend(backend).concurrency(a.concurrency).parallelize(tokio::spawn).build(tick);
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let ti = kb::now_ms();
    let t0 = (ti + a.lead * 1000.0).ceil() as i64;
    let dues = kb::timer_dues(a.jobs, a.spread, t0);
    kb::track(dues.clone());
    kb::spawn_progress("timers");
    let mut enqueue_s = 0.0;
    let feed = async {
        for chunk in (0..a.jobs).collect::<Vec<_>>().chunks(CHUNK) {
            let mut items = futures::stream::iter(chunk.iter().map(|i| {
                let due_ms = dues[*i as usize];
                TaskBuilder::new(Timer { i: *i, due_ms }).run_at_timestamp(run_at_s(due_ms)).build()
            }));
            sink.push_all(&mut items).await.expect("push_all");
        }
        enqueue_s = (kb::now_ms() - ti) / 1000.0;
        wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    };
    tokio::select! {
        r = worker.run() => panic!("worker stopped: {r:?}"),
        _ = feed => {}
    }
    let deadline_ms = kb::instant_ms(deadline.expect("deadline"));
    kb::assert_no_pending_ran();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM apalis.jobs WHERE run_at > now() + interval '1 hour' AND status = 'Pending'")
        .fetch_one(&count_pool).await.expect("pending left");
    assert_eq!(left as u64, a.pending, "pending timers missing");
    kb::with(
        kb::lateness_result(t0 as f64, deadline_ms, kb::with(settings(a), serde_json::json!({
            "spread_s": a.spread, "lead_s": a.lead, "pending": a.pending,
            "pending_path": format!("INSERT … SELECT generate_series into apalis.jobs (checked against push_all's row){}; \
                ids are monotonic ULIDs (time prefix + counter) where push_all draws random ones",
                if triggers_off { ", row triggers off (they do nothing for rows due a day ahead)" } else { "" }),
            "enqueue": "push_all with TaskBuilder::run_at_timestamp, 10,000 per call; run_at in whole seconds, rounded up"}))),
        kb::timers_side_figures(pending_s, enqueue_s, a.jobs, left),
    )
}

#[tokio::main]
async fn main() {
    let a = args(100);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await),
        "steady" => Some(steady(&a).await),
        "timers" => Some(timers(&a).await),
        _ => None,
    };
    emit("apalis", "1.0.0", &a.workload, r);
    std::process::exit(0);
}
