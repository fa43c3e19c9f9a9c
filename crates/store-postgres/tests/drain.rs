//! Throughput benchmark (ignored by default): enqueue 100,000 no-op jobs, then drain them with
//! four concurrent consumers, each its own node with its own pool, through the `Store` trait:
//! acquire a batch, complete it with one `job_complete_many` (delete + job log rows).
//!
//! ```text
//! eval "$(scripts/pg.sh start)"
//! cargo test --release -p kairos-store-postgres --test drain -- --ignored --nocapture
//! ```
//! `KAIROS_DRAIN_JOBS`, `KAIROS_DRAIN_CONSUMERS` and `KAIROS_DRAIN_BATCH` override the defaults;
//! `KAIROS_DRAIN_KEYS=N` makes every job exclusive, spread over N keys (the process-engine shape:
//! each acquisition then takes the advisory-lock path).

use jiff::SignedDuration;
use kairos_core::{Completion, EnqueueRequest, NewJob};
use kairos_store::{JobAcquireParams, JobCompletion, Store};
use kairos_store_postgres::PgStore;
use kairos_store_postgres::test_support::fresh_schema_url;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn drain_100k_jobs_with_four_consumers() {
    let Some(url) = fresh_schema_url().await else { return };
    let jobs = env_or("KAIROS_DRAIN_JOBS", 100_000);
    let consumers = env_or("KAIROS_DRAIN_CONSUMERS", 4);
    let batch = env_or("KAIROS_DRAIN_BATCH", 256) as u32;
    let keys = env_or("KAIROS_DRAIN_KEYS", 0);

    let setup = PgStore::connect(&url).await.unwrap();
    setup.migrate().await.unwrap();
    let new: Vec<NewJob> = (0..jobs)
        .map(|i| EnqueueRequest {
            handler: "noop".into(),
            payload: Some(serde_json_number(i)),
            exclusive_key: (keys > 0).then(|| format!("key-{}", i % keys)),
            ..Default::default()
        })
        .map(|r| r.validate(|_| true).unwrap())
        .collect();
    let started = Instant::now();
    assert_eq!(setup.job_insert_many(&new).await.unwrap(), jobs as u64);
    let insert_secs = started.elapsed().as_secs_f64();
    println!("enqueue: {jobs} jobs in {insert_secs:.2} s ({:.0} jobs/s, job_insert_many)", jobs as f64 / insert_secs);
    setup.sql_execute("ANALYZE ACT_RU_JOB", &[]).await.unwrap();

    let done = Arc::new(AtomicUsize::new(0));
    let acquisitions = Arc::new(AtomicUsize::new(0));
    // Microseconds spent in each call, summed over consumers: where the time goes.
    let acquire_us = Arc::new(AtomicUsize::new(0));
    let complete_us = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for n in 0..consumers {
        let store = PgStore::connect_with(url.parse().unwrap(), 2).await.unwrap();
        let (done, acquisitions) = (done.clone(), acquisitions.clone());
        let (acquire_us, complete_us) = (acquire_us.clone(), complete_us.clone());
        tasks.push(tokio::spawn(async move {
            let node = format!("bench-{n}");
            let params = JobAcquireParams {
                node: node.clone(),
                limit: batch,
                lock_time: SignedDuration::from_mins(5),
                now: None,
                lookahead: SignedDuration::ZERO,
            };
            while done.load(Ordering::Relaxed) < jobs {
                let t = Instant::now();
                let got = store.job_acquire(&params).await.unwrap();
                acquire_us.fetch_add(t.elapsed().as_micros() as usize, Ordering::Relaxed);
                acquisitions.fetch_add(1, Ordering::Relaxed);
                if got.jobs.is_empty() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                }
                let completions: Vec<JobCompletion> = got
                    .jobs
                    .iter()
                    .map(|a| JobCompletion {
                        job_id: a.job.id.clone(),
                        node: node.clone(),
                        attempt: a.job.attempts,
                        started: got.db_now,
                        finished: got.db_now,
                        completion: Completion::Delete { log_message: None },
                        effects: Vec::new(),
                    })
                    .collect();
                let t = Instant::now();
                let applied = store.job_complete_many(&completions).await.unwrap();
                complete_us.fetch_add(t.elapsed().as_micros() as usize, Ordering::Relaxed);
                done.fetch_add(applied.iter().filter(|a| **a).count(), Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let log_rows = setup.sql_query("SELECT count(*) FROM ACT_HI_JOB_LOG", &[]).await.unwrap();
    assert_eq!(log_rows[0][0].as_i64(), Some(jobs as i64), "one log row per job");
    let acquisitions = acquisitions.load(Ordering::Relaxed);
    println!(
        "drain: {jobs} jobs in {secs:.2} s = {:.0} jobs/s ({consumers} consumers, batch {batch}, {} exclusive keys, {acquisitions} acquisitions; \
         mean acquire {:.1} ms, mean complete {:.1} ms)",
        jobs as f64 / secs,
        if keys > 0 { keys.to_string() } else { "no".to_string() },
        acquire_us.load(Ordering::Relaxed) as f64 / 1000.0 / acquisitions.max(1) as f64,
        complete_us.load(Ordering::Relaxed) as f64 / 1000.0 / acquisitions.max(1) as f64,
    );
}

fn serde_json_number(i: usize) -> serde_json::Value {
    serde_json::json!({ "n": i })
}
