//! pgmq (crates.io 0.33, feature install-sql-embedded: the extension's SQL installed by the
//! client, no server extension needed) on the drain workload. A message queue, not a job
//! queue: no retries policy, dead letters or timers of its own.
//! Settings (pgmq docs: read a batch, delete by id array): C consumers (4), each read_batch 100
//! with a 30 s visibility timeout then delete_batch of the ids; pool of C + 2 connections.
//! Messages pre-enqueued with send_batch in chunks of 10,000.
use kairos_bench_rust_peers::{args, emit, measured};
use pgmq::PGMQueueExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const Q: &str = "noop";
const BATCH: i32 = 100;

async fn drain(a: &kairos_bench_rust_peers::Args) -> serde_json::Value {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(a.concurrency as u32 + 2)
        .connect(&a.url)
        .await
        .expect("connect");
    let q = PGMQueueExt::new_with_pool(pool.clone()).await;
    q.install_sql_from_embedded().await.expect("install_sql_from_embedded");
    q.create(Q).await.expect("create");
    let mut i = 0;
    let body = vec![serde_json::json!({}); 10_000];
    while i < a.jobs {
        let n = (a.jobs - i).min(10_000) as usize;
        q.send_batch(Q, &body[..n]).await.expect("send_batch");
        i += n as u64;
    }
    let done = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..a.concurrency {
        let (q, done, target) = (q.clone(), done.clone(), a.jobs);
        tasks.push(tokio::spawn(async move {
            while done.load(Ordering::Relaxed) < target {
                let msgs = q.read_batch::<serde_json::Value>(Q, 30, BATCH).await.expect("read_batch");
                if msgs.is_empty() {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
                let ids: Vec<i64> = msgs.iter().map(|m| m.msg_id).collect();
                q.delete_batch(Q, &ids).await.expect("delete_batch");
                done.fetch_add(ids.len() as u64, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.expect("consumer");
    }
    let secs = t.elapsed().as_secs_f64();
    measured(
        done.load(Ordering::Relaxed),
        secs,
        serde_json::json!({"consumers": a.concurrency, "read_batch": BATCH, "visibility_timeout_s": 30,
            "delete": "delete_batch(ids)", "pool_max": a.concurrency + 2}),
    )
}

#[tokio::main]
async fn main() {
    let a = args(4);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await), // a new workload is a new arm here
        _ => None,
    };
    emit("pgmq", "0.33.7", &a.workload, r);
}
