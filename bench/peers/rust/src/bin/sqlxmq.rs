//! sqlxmq (crates.io 0.6.0) on the drain workload.
//! Settings (the crate's README: JobRunnerOptions::set_concurrency(min, max); the runner fetches
//! more jobs when fewer than `min` run, up to `max`): concurrency min C/2, max C (C = 32), keep
//! alive on, each job completes itself (current_job.complete()), pool of C + 4 connections.
//! Schema: the crate's own migrations/*.up.sql, applied in order from the crate's source as cargo
//! unpacked it (~/.cargo/registry/src/*/sqlxmq-0.6.0/migrations). Jobs are pre-enqueued with the
//! crate's mq_insert() in chunks of 10,000, with JobBuilder's defaults (retries 4, backoff 1 s).
use kairos_bench_rust_peers::{args, emit, measured, wait_count};
use sqlxmq::{job, CurrentJob, JobRegistry};
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static CALLS: AtomicU64 = AtomicU64::new(0);

#[job]
async fn noop(mut current_job: CurrentJob) -> Result<(), Box<dyn Error + Send + Sync + 'static>> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    current_job.complete().await?;
    Ok(())
}

fn migrations() -> Vec<std::path::PathBuf> {
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let src = std::path::Path::new(&home).join("registry").join("src");
    for reg in std::fs::read_dir(&src).expect("cargo registry src") {
        let dir = reg.expect("entry").path().join("sqlxmq-0.6.0").join("migrations");
        if dir.is_dir() {
            let mut ups: Vec<_> = std::fs::read_dir(&dir)
                .expect("migrations")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.to_string_lossy().ends_with(".up.sql"))
                .collect();
            ups.sort();
            return ups;
        }
    }
    panic!("sqlxmq-0.6.0/migrations not found under {}", src.display());
}

async fn drain(a: &kairos_bench_rust_peers::Args) -> serde_json::Value {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(a.concurrency as u32 + 4)
        .connect(&a.url)
        .await
        .expect("connect");
    for m in migrations() {
        let sql = std::fs::read_to_string(&m).expect("read migration");
        sqlx::raw_sql(&sql).execute(&pool).await.unwrap_or_else(|e| panic!("{}: {e}", m.display()));
    }
    let name = noop.name();
    let mut i = 0;
    while i < a.jobs {
        let n = (a.jobs - i).min(10_000) as i32;
        sqlx::query(
            "SELECT mq_insert(ARRAY(SELECT ROW(gen_random_uuid(), interval '0', 4, interval '1 second', '', '', \
             NULL::interval, false, $2::text, NULL::text, NULL::bytea)::mq_new_t FROM generate_series(1, $1)))",
        )
        .bind(n)
        .bind(name)
        .execute(&pool)
        .await
        .expect("mq_insert");
        i += n as u64;
    }
    let registry = JobRegistry::new(&[noop]);
    let t = Instant::now();
    let runner = registry
        .runner(&pool)
        .set_concurrency((a.concurrency / 2).max(1), a.concurrency)
        .set_keep_alive(true)
        .run()
        .await
        .expect("runner");
    while CALLS.load(Ordering::Relaxed) < a.jobs {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Completed jobs are deleted; the nil-id row is sqlxmq's own sentinel.
    wait_count(&pool, "SELECT count(*) FROM mq_msgs WHERE id <> '00000000-0000-0000-0000-000000000000'", 0).await;
    let secs = t.elapsed().as_secs_f64();
    drop(runner);
    measured(
        CALLS.load(Ordering::Relaxed),
        secs,
        serde_json::json!({"min_concurrency": (a.concurrency / 2).max(1), "max_concurrency": a.concurrency,
            "keep_alive": true, "pool_max": a.concurrency + 4}),
    )
}

#[tokio::main]
async fn main() {
    let a = args(32);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await), // a new workload is a new arm here
        _ => None,
    };
    emit("sqlxmq", "0.6.0", &a.workload, r);
    std::process::exit(0);
}
