//! graphile_worker (crates.io 0.14.1) on the drain workload.
//! Settings (the crate's docs, "local queue" / batching; the fastest peer seen on this machine):
//! concurrency 32, LocalQueueConfig size 500 (the pool locks and fetches 500 jobs per query),
//! complete_job_batch_delay 5 ms (completions within 5 ms share one query), pool of
//! concurrency + 4 connections. Jobs pre-enqueued with add_jobs in chunks of 10,000.
use graphile_worker::{IntoTaskHandlerResult, JobSpec, LocalQueueConfig, TaskHandler, WorkerContext, WorkerOptions};
use kairos_bench_rust_peers::{args, emit, measured, wait_count};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static CALLS: AtomicU64 = AtomicU64::new(0);
const LOCAL_QUEUE: usize = 500;

#[derive(Clone, Deserialize, Serialize)]
struct Noop {}

impl TaskHandler for Noop {
    const IDENTIFIER: &'static str = "noop";
    async fn run(self, _ctx: WorkerContext) -> impl IntoTaskHandlerResult {
        CALLS.fetch_add(1, Ordering::Relaxed);
        Ok::<(), String>(())
    }
}

async fn drain(a: &kairos_bench_rust_peers::Args) -> serde_json::Value {
    // graphile_worker 0.14 links its own sqlx version: it opens its own pool from the URL, and
    // this one-connection pool (the driver's sqlx) only counts the remaining rows.
    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&a.url).await.expect("connect");
    let worker = WorkerOptions::default()
        .concurrency(a.concurrency)
        .schema("graphile_worker")
        .define_job::<Noop>()
        .database_url(&a.url)
        .max_pg_conn(a.concurrency as u32 + 4)
        .local_queue(LocalQueueConfig::default().with_size(LOCAL_QUEUE))
        .complete_job_batch_delay(Duration::from_millis(5))
        .init()
        .await
        .expect("init");
    let utils = worker.create_utils();
    let spec = JobSpec::default();
    let mut i = 0;
    while i < a.jobs {
        let n = (a.jobs - i).min(10_000);
        let batch: Vec<(Noop, &JobSpec)> = (0..n).map(|_| (Noop {}, &spec)).collect();
        utils.add_jobs(&batch).await.expect("add_jobs");
        i += n;
    }
    let worker = Arc::new(worker);
    let t = Instant::now();
    let w = worker.clone();
    let handle = tokio::spawn(async move { w.run().await });
    while CALLS.load(Ordering::Relaxed) < a.jobs {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    wait_count(&pool, "SELECT count(*) FROM graphile_worker._private_jobs", 0).await;
    let secs = t.elapsed().as_secs_f64();
    worker.request_shutdown();
    let _ = tokio::time::timeout(Duration::from_secs(10), handle).await;
    measured(
        CALLS.load(Ordering::Relaxed),
        secs,
        serde_json::json!({"concurrency": a.concurrency, "local_queue_size": LOCAL_QUEUE,
            "complete_job_batch_delay_ms": 5, "pool_max": a.concurrency + 4}),
    )
}

#[tokio::main]
async fn main() {
    let a = args(32);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await), // a new workload is a new arm here
        _ => None,
    };
    emit("graphile_worker-rs", "0.14.1", &a.workload, r);
    std::process::exit(0);
}
