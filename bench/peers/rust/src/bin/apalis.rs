//! apalis + apalis-postgres (crates.io 1.0.0) on the drain workload.
//! Settings (PEERS.md, from the crate's docs/examples: batch_size for throughput, concurrency
//! limit on the worker): one worker with `.concurrency(C)` (C = 100) and `.parallelize(tokio::spawn)`
//! (each task on its own tokio task), PostgresStorage Config `batch_size(C)` (batch =
//! concurrency), other Config defaults (lock_tasks, persist_results on), polling storage.
//! Schema: PostgresStorage::setup (the crate's own migrations). N unit tasks pushed with
//! push_all in chunks of 10,000 before the worker starts. Timed from worker start until every
//! row of apalis.jobs is `Done` (results committed by the crate's batched handle_result).
use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use kairos_bench_rust_peers::{args, emit, measured, wait_count};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static CALLS: AtomicU64 = AtomicU64::new(0);

async fn noop(_n: u32) -> Result<(), BoxDynError> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn drain(a: &kairos_bench_rust_peers::Args) -> serde_json::Value {
    let pool = apalis_postgres::PgPool::connect(&a.url).await.expect("connect");
    PostgresStorage::setup(&pool).await.expect("setup");
    let config = Config::default().batch_size(a.concurrency);
    let mut backend = PostgresStorage::new(&pool).with_config(config);
    let mut i = 0u64;
    while i < a.jobs {
        let n = (a.jobs - i).min(10_000);
        let mut items = futures::stream::iter((0..n).map(|k| TaskBuilder::new(k as u32).build()));
        backend.push_all(&mut items).await.expect("push_all");
        i += n;
    }
    let count_pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&a.url).await.expect("connect");
    let worker = WorkerBuilder::new("bench")
        .backend(backend)
        .concurrency(a.concurrency)
        .parallelize(tokio::spawn)
        .build(noop);
    // worker.run() is not Send (spawn refuses it): run it beside the watcher in this task.
    let t = Instant::now();
    let watch = async {
        while CALLS.load(Ordering::Relaxed) < a.jobs {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        wait_count(&count_pool, "SELECT count(*) FROM apalis.jobs WHERE status <> 'Done'", 0).await;
    };
    tokio::select! {
        r = worker.run() => panic!("worker stopped after {} tasks: {:?}", CALLS.load(Ordering::Relaxed), r),
        _ = watch => {}
    }
    let secs = t.elapsed().as_secs_f64();
    measured(
        CALLS.load(Ordering::Relaxed),
        secs,
        serde_json::json!({"concurrency": a.concurrency, "batch_size": a.concurrency, "parallelize": "tokio::spawn",
            "lock_tasks": true, "persist_results": true, "pool": "PgPool::connect defaults (10)"}),
    )
}

#[tokio::main]
async fn main() {
    let a = args(100);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await), // a new workload is a new arm here
        _ => None,
    };
    emit("apalis", "1.0.0", &a.workload, r);
    std::process::exit(0);
}
