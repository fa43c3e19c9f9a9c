//! Throughput of the Store trait alone on SQLite: 20,000 no-op jobs enqueued in bulk, then
//! drained through job_acquire + job_complete_many (Delete, with ACT_HI_JOB_LOG rows).
//!
//! cargo test --release -p kairos-store-sqlite --test drain -- --ignored --nocapture
//!
//! Batch sizes default to 100, 250 and 500 (`KAIROS_DRAIN_BATCHES=100,500` to choose). Each line
//! also prints the process's CPU time per job, which stays meaningful on a busy machine.

mod common;

use common::TempStore;
use jiff::SignedDuration;
use kairos_core::{Completion, EnqueueRequest, NewJob};
use kairos_store::{JobAcquireParams, JobCompletion, Store};
use std::time::Instant;

const JOBS: usize = 20_000;

/// CPU time (user + system) this process has used, from /proc: on a shared, loaded machine
/// CPU per job is steadier than wall-clock throughput.
fn cpu_time() -> std::time::Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(") ").map(|(_, rest)| rest.split(' ').collect()).unwrap_or_default();
    let ticks: u64 = fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    std::time::Duration::from_millis(ticks * 10)
}

fn noop() -> NewJob {
    EnqueueRequest { handler: "noop".into(), ..Default::default() }.validate(|_| true).expect("valid")
}

/// Acquires `batch` at a time and completes each batch before acquiring the next; returns
/// jobs per second.
async fn drain_sequential(store: &dyn Store, batch: u32) -> f64 {
    let start = Instant::now();
    let mut done = 0;
    let (mut ta, mut tc) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    loop {
        let t = Instant::now();
        let params = acquire_params(batch);
        let acquired = store.job_acquire(&params).await.expect("acquire");
        ta += t.elapsed();
        if acquired.jobs.is_empty() {
            break;
        }
        let t = Instant::now();
        let cs: Vec<JobCompletion> = acquired
            .jobs
            .iter()
            .map(|a| JobCompletion {
                job_id: a.job.id.clone(),
                node: "bench".into(),
                attempt: a.job.attempts,
                started: acquired.db_now,
                finished: acquired.db_now,
                completion: Completion::Delete { log_message: None },
                effects: Vec::new(),
            })
            .collect();
        let applied = store.job_complete_many(&cs).await.expect("complete");
        tc += t.elapsed();
        done += applied.iter().filter(|a| **a).count();
    }
    println!("  sequential split: acquire {ta:.0?}, complete {tc:.0?}");
    assert_eq!(done, JOBS);
    done as f64 / start.elapsed().as_secs_f64()
}

/// Acquisition and completion overlap: a completer task finishes batch n while batch n+1 is
/// acquired, as the executor's producer and batch completer do.
async fn drain_pipelined(store: std::sync::Arc<TempStore>, batch: u32) -> f64 {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<JobCompletion>>(4);
    let completer = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut done = 0;
            while let Some(cs) = rx.recv().await {
                done += store.job_complete_many(&cs).await.expect("complete").iter().filter(|a| **a).count();
            }
            done
        })
    };
    let start = Instant::now();
    loop {
        let params = acquire_params(batch);
        let acquired = store.job_acquire(&params).await.expect("acquire");
        if acquired.jobs.is_empty() {
            break;
        }
        let cs = acquired
            .jobs
            .iter()
            .map(|a| JobCompletion {
                job_id: a.job.id.clone(),
                node: "bench".into(),
                attempt: a.job.attempts,
                started: acquired.db_now,
                finished: acquired.db_now,
                completion: Completion::Delete { log_message: None },
                effects: Vec::new(),
            })
            .collect();
        tx.send(cs).await.expect("completer alive");
    }
    drop(tx);
    let done = completer.await.expect("completer");
    assert_eq!(done, JOBS);
    done as f64 / start.elapsed().as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; run with --release --ignored --nocapture"]
async fn drain_20000_noop_jobs() {
    // KAIROS_DRAIN_BATCHES=100,500 picks the batch sizes.
    let batches: Vec<u32> = std::env::var("KAIROS_DRAIN_BATCHES")
        .ok()
        .map(|v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 250, 500]);
    for batch in batches {
        let store = std::sync::Arc::new(TempStore::new().await);
        let jobs: Vec<NewJob> = (0..JOBS).map(|_| noop()).collect();
        let t = Instant::now();
        assert_eq!(store.job_insert_many(&jobs).await.expect("insert"), JOBS as u64);
        let insert_rate = JOBS as f64 / t.elapsed().as_secs_f64();
        let cpu = cpu_time();
        let seq = drain_sequential(&*store, batch).await;
        let seq_cpu_us = (cpu_time() - cpu).as_secs_f64() * 1e6 / JOBS as f64;
        assert_eq!(store.job_counts().await.unwrap().executable, 0);

        store.job_insert_many(&(0..JOBS).map(|_| noop()).collect::<Vec<_>>()).await.expect("insert");
        let cpu = cpu_time();
        let piped = drain_pipelined(store.clone(), batch).await;
        let piped_cpu_us = (cpu_time() - cpu).as_secs_f64() * 1e6 / JOBS as f64;
        let logged = store.sql_query("SELECT COUNT(*) FROM ACT_HI_JOB_LOG", &[]).await.unwrap()[0][0].as_i64();
        assert_eq!(logged, Some(2 * JOBS as i64), "one log row per job");
        println!(
            "batch {batch:>3}: bulk insert {insert_rate:>7.0} jobs/s | drain sequential {seq:>6.0} jobs/s ({seq_cpu_us:.0} µs CPU/job) \
             | drain pipelined {piped:>6.0} jobs/s ({piped_cpu_us:.0} µs CPU/job)"
        );
    }
}

/// One acquisition of up to `batch` jobs by the bench node (5-minute leases, no lookahead).
fn acquire_params(batch: u32) -> JobAcquireParams {
    JobAcquireParams {
        node: "bench".into(),
        limit: batch,
        lock_time: SignedDuration::from_mins(5),
        now: None,
        lookahead: SignedDuration::ZERO,
    }
}
