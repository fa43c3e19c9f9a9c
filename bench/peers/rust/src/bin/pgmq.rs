//! pgmq (crates.io 0.33, feature install-sql-embedded: the extension's SQL installed by the
//! client, no server extension needed) on the drain, steady and timers workloads. A message
//! queue, not a job queue: no retries policy, dead letters or workers of its own, so the driver
//! is the consumer.
//! Settings (pgmq docs: read a batch, delete by id array): C consumers (4), each read_batch 100
//! with a 30 s visibility timeout then delete_batch of the ids, sleeping 10 ms after an empty
//! read; pool of C + 2 connections. "Handler start" = the message returned by read_batch.
//! drain: messages pre-enqueued with send_batch in chunks of 10,000.
//! steady: every 10 ms, the messages whose due time has come in one send_batch.
//! timers: the pending timers by one INSERT … SELECT generate_series into the queue's table
//! pgmq.q_noop with the columns send writes (checked against a message sent with send_delay); the
//! N timers by send_batch_with_delay, whose delay is whole seconds after the insert instant
//! (clock_timestamp() + delay s; the Rust client has no instant form): one call per whole second
//! of due times, delay rounded up, so none is early and each can be up to 1 s late by rounding.
use kairos_bench_rust_peers::{self as kb, args, emit, measured, wait_until, Timer};
use pgmq::PGMQueueExt;
use serde::de::DeserializeOwned;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const Q: &str = "noop";
const BATCH: i32 = 100;
const CHUNK: usize = 10_000;

async fn setup(a: &kb::Args) -> (sqlx::PgPool, PGMQueueExt) {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(a.concurrency as u32 + 2)
        .connect(&a.url)
        .await
        .expect("connect");
    let q = PGMQueueExt::new_with_pool(pool.clone()).await;
    q.install_sql_from_embedded().await.expect("install_sql_from_embedded");
    q.create(Q).await.expect("create");
    (pool, q)
}

fn settings(a: &kb::Args) -> serde_json::Value {
    serde_json::json!({"consumers": a.concurrency, "read_batch": BATCH, "visibility_timeout_s": 30,
        "delete": "delete_batch(ids)", "idle_sleep_ms": 10, "pool_max": a.concurrency + 2, "deadline_s": a.deadline})
}

/// C consumers until `stop`: read_batch, `on_read` for each message, delete_batch, then
/// `on_deleted(count)`.
fn consume<T: DeserializeOwned + Send + 'static>(
    a: &kb::Args,
    q: &PGMQueueExt,
    stop: &Arc<AtomicBool>,
    on_read: fn(&T),
    on_deleted: fn(usize),
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..a.concurrency)
        .map(|_| {
            let (q, stop) = (q.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let msgs = q.read_batch::<T>(Q, 30, BATCH).await.expect("read_batch");
                    if msgs.is_empty() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                    msgs.iter().for_each(|m| on_read(&m.message));
                    let ids: Vec<i64> = msgs.iter().map(|m| m.msg_id).collect();
                    q.delete_batch(Q, &ids).await.expect("delete_batch");
                    on_deleted(ids.len());
                }
            })
        })
        .collect()
}

static DONE: AtomicU64 = AtomicU64::new(0);

async fn drain(a: &kb::Args) -> serde_json::Value {
    let (_pool, q) = setup(a).await;
    let body = vec![serde_json::json!({}); CHUNK];
    let te = Instant::now();
    let mut i = 0;
    while i < a.jobs {
        let n = (a.jobs - i).min(CHUNK as u64) as usize;
        q.send_batch(Q, &body[..n]).await.expect("send_batch");
        i += n as u64;
    }
    let enqueue_per_s = (a.jobs as f64 / te.elapsed().as_secs_f64()).round();
    let stop = Arc::new(AtomicBool::new(false));
    let t = Instant::now();
    let deadline = a.deadline_at(t);
    let tasks = consume::<serde_json::Value>(a, &q, &stop, |_| {}, |n| {
        DONE.fetch_add(n as u64, Ordering::Relaxed);
    });
    wait_until(|| DONE.load(Ordering::Relaxed) >= a.jobs, deadline).await;
    stop.store(true, Ordering::Relaxed);
    let secs = t.elapsed().as_secs_f64();
    if DONE.load(Ordering::Relaxed) >= a.jobs {
        for t in tasks {
            t.await.expect("consumer");
        }
    }
    let done = DONE.load(Ordering::Relaxed).min(a.jobs);
    kb::with(measured(a.jobs, done, secs, settings(a)), serde_json::json!({"enqueue_per_s": enqueue_per_s}))
}

fn started(t: &Timer) {
    kb::job_started(t.i, t.due_ms);
}

fn deleted(n: usize) {
    for _ in 0..n {
        kb::job_done();
    }
}

async fn steady(a: &kb::Args) -> serde_json::Value {
    let (_pool, q) = setup(a).await;
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _tasks = consume::<Timer>(a, &q, &stop, started, deleted);
    let t0 = kb::now_ms().ceil() as i64;
    let dues = kb::steady_dues(a.jobs, a.rate, t0);
    kb::track(dues.clone());
    kb::spawn_progress("steady");
    let mut pacer = kb::Pacer::new(dues, deadline);
    while let Some(r) = pacer.next().await {
        let batch: Vec<Timer> = r.map(|i| Timer { i, due_ms: pacer.due(i) }).collect();
        q.send_batch(Q, &batch).await.expect("send_batch");
    }
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    stop.store(true, Ordering::Relaxed);
    kb::assert_no_pending_ran();
    kb::lateness_result(t0 as f64, kb::instant_ms(deadline.expect("deadline")), kb::with(settings(a), serde_json::json!({
        "rate": a.rate, "enqueue": "send_batch per 10 ms tick"})))
}

const PENDING_SQL: &str = r#"
    INSERT INTO pgmq.q_noop (vt, message, headers)
    SELECT timestamptz 'epoch' + due * interval '1 millisecond', format('{"i":%s,"due_ms":%s}', j, due)::jsonb, 'null'::jsonb
    FROM (SELECT j, $1::bigint + j AS due FROM generate_series($2::bigint, $3::bigint) j) s
    RETURNING msg_id"#;

/// The P pending timers (due `now + 24 h + j ms`) by one INSERT … SELECT, after checking on one
/// timer that it writes the row send_delay writes (but msg_id, enqueued_at and vt: send_delay
/// can only say "in 86,400 s").
async fn insert_pending(a: &kb::Args, q: &PGMQueueExt, pool: &sqlx::PgPool) -> f64 {
    let base = kb::now_ms() as i64 + kb::DAY_MS;
    let api = q.send_delay(Q, &Timer { i: 0, due_ms: base }, 86_400).await.expect("send_delay probe");
    let sql: i64 = sqlx::query_scalar(PENDING_SQL).bind(base).bind(0i64).bind(0i64).fetch_one(pool).await.expect("probe");
    kb::same_row(pool, "pgmq.q_noop", "msg_id", &api.to_string(), &sql.to_string(), &["msg_id", "enqueued_at", "vt"]).await;
    sqlx::query("DELETE FROM pgmq.q_noop").execute(pool).await.expect("delete probes");
    let t = Instant::now();
    if a.pending > 0 {
        sqlx::query(&PENDING_SQL.replace("RETURNING msg_id", ""))
            .bind(base).bind(0i64).bind(a.pending as i64 - 1).execute(pool).await.expect("pending insert");
    }
    t.elapsed().as_secs_f64()
}

async fn timers(a: &kb::Args) -> serde_json::Value {
    let (pool, q) = setup(a).await;
    let pending_s = insert_pending(a, &q, &pool).await;
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _tasks = consume::<Timer>(a, &q, &stop, started, deleted);
    let ti = kb::now_ms();
    let t0 = (ti + a.lead * 1000.0).ceil() as i64;
    let dues = kb::timer_dues(a.jobs, a.spread, t0);
    kb::track(dues.clone());
    kb::spawn_progress("timers");
    let all: Vec<Timer> = dues.iter().enumerate().map(|(i, d)| Timer { i: i as u64, due_ms: *d }).collect();
    // Timers grouped by their whole-second delay from the enqueue start r, g = ceil((due − r)/1 s);
    // a group sent e whole seconds after r gets delay g − e, so vt = clock_timestamp() + (g − e) s
    // ≥ r + g s ≥ every due of the group: never early, late by < 1 s + the sub-second part of
    // the time since r.
    let r = kb::now_ms();
    let group = |t: &Timer| ((t.due_ms as f64 - r) / 1000.0).ceil().max(0.0) as i64;
    let (mut k, mut calls) = (0, 0);
    while k < all.len() {
        let g = group(&all[k]);
        let mut e = k + 1;
        while e < all.len() && e - k < CHUNK && group(&all[e]) == g {
            e += 1;
        }
        let elapsed = ((kb::now_ms() - r) / 1000.0).floor() as i64;
        q.send_batch_with_delay(Q, &all[k..e], (g - elapsed).max(0) as i32).await.expect("send_batch_with_delay");
        k = e;
        calls += 1;
    }
    let enqueue_s = (kb::now_ms() - ti) / 1000.0;
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    stop.store(true, Ordering::Relaxed);
    let deadline_ms = kb::instant_ms(deadline.expect("deadline"));
    kb::assert_no_pending_ran();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pgmq.q_noop WHERE vt > now() + interval '1 hour' AND read_ct = 0")
        .fetch_one(&pool).await.expect("pending left");
    assert_eq!(left as u64, a.pending, "pending timers missing");
    kb::with(
        kb::lateness_result(t0 as f64, deadline_ms, kb::with(settings(a), serde_json::json!({
            "spread_s": a.spread, "lead_s": a.lead, "pending": a.pending,
            "pending_path": "INSERT … SELECT generate_series into pgmq.q_noop (checked against send_delay's row)",
            "enqueue": format!("send_batch_with_delay per whole-second group of due times ({calls} calls): \
                delay = whole seconds after the insert instant, rounded up (never early, < 1 s + the enqueue's \
                sub-second elapsed time late)")}))),
        kb::timers_side_figures(pending_s, enqueue_s, a.jobs, left),
    )
}

#[tokio::main]
async fn main() {
    let a = args(4);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await),
        "steady" => Some(steady(&a).await),
        "timers" => Some(timers(&a).await),
        _ => None,
    };
    emit("pgmq", "0.33.7", &a.workload, r);
    std::process::exit(0);
}
