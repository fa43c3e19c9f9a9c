//! `kairos bench jobs`: drain throughput and timer lateness of the job executor.
//!
//! Phase 1 enqueues N no-op jobs with the executor off (in chunks, one transaction each), then
//! starts an executor with W workers and measures how fast it drains them: from `start()` until
//! the last completion is committed. The `noop` handler is replaced by one that records each
//! job's lateness (attempt start minus due date, both on the database clock), and the job log
//! must end up with exactly one `succeeded` row per job.
//!
//! Phase 2 puts P timers due in a day into the table (the "cost flat as pending timers grow"
//! case), then T timers due evenly over the spread, starting 2 s later, and measures how late
//! each fires.

use super::{BENCH_TENANT, Recorder, count, percentile_ms, prepare, recorder::micros_to_ms};
use crate::cli::{BenchJobsArgs, GlobalArgs};
use crate::exit::{CliError, SUCCESS};
use crate::output;
use indicatif::{ProgressBar, ProgressStyle};
use kairos::{Engine, EnqueueRequest, JobContext, handler_fn};
use kairos_store::{SqlValue, Store};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The measured timers are first due this long after they are enqueued.
const TIMER_LEAD: Duration = Duration::from_secs(2);
/// How long past the last due date the timer phase waits before giving up.
const TIMER_SLACK: Duration = Duration::from_secs(60);
const SUCCEEDED_SQL: &str = "SELECT COUNT(*) FROM ACT_HI_JOB_LOG WHERE OUTCOME_ = 'succeeded'";

/// The one JSON line the benchmark prints.
#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    jobs: u64,
    workers: u32,
    enqueue_per_s: u64,
    drain_per_s: u64,
    drain_lateness_p50_ms: Option<f64>,
    drain_lateness_p99_ms: Option<f64>,
    timers_pending: u64,
    timers: u64,
    timer_lateness_p50_ms: Option<f64>,
    timer_lateness_p99_ms: Option<f64>,
    timer_lateness_max_ms: Option<f64>,
}

pub async fn run(global: &GlobalArgs, a: BenchJobsArgs) -> Result<u8, CliError> {
    let recorder = Arc::new(Recorder::default());
    let engine = build_engine(&global.db, &a, recorder.clone()).await?;
    let store = engine.store().clone();
    prepare(store.as_ref(), a.reset).await?;
    let result = measure(&engine, &a, &recorder).await;
    engine.shutdown(Duration::from_secs(5)).await;
    if !a.keep {
        // The pending timers (and whatever a failed run left) go; the job log stays.
        let tenant = [SqlValue::Text(BENCH_TENANT.into())];
        if let Err(e) = store.sql_execute("DELETE FROM ACT_RU_JOB WHERE TENANT_ID_ = ?", &tenant).await {
            tracing::warn!(error = %e, "could not delete the benchmark's jobs");
        }
    }
    output::json(&result?)?;
    Ok(SUCCESS)
}

async fn build_engine(db: &str, a: &BenchJobsArgs, recorder: Arc<Recorder>) -> Result<Engine, CliError> {
    let (batch, completion_batch) = (a.batch, a.completion_batch);
    let handler = handler_fn(move |ctx: JobContext| {
        let recorder = recorder.clone();
        async move {
            recorder.record(ctx.started, ctx.due_date);
            Ok(None)
        }
    });
    // The executor is enabled but not started: phase 1 enqueues with no executor running.
    let engine = Engine::builder(db)
        .node_id(format!("bench-{}", std::process::id()))
        .workers(a.workers as usize)
        .configure(|c| {
            if let Some(b) = batch {
                c.acquire_batch = b as usize;
            }
            if let Some(b) = completion_batch {
                c.completion_batch = b as usize;
            }
        })
        .handler("noop", handler)
        .build()
        .await?;
    Ok(engine)
}

async fn measure(engine: &Engine, a: &BenchJobsArgs, recorder: &Recorder) -> Result<Report, CliError> {
    let store = engine.store().as_ref();
    let log_before = count(store, SUCCEEDED_SQL, &[]).await?;

    let t = Instant::now();
    enqueue(engine, a.jobs, a.chunk, "enqueue", |_| request(None)).await?;
    let enqueue_per_s = rate(a.jobs, t.elapsed());

    recorder.begin(a.jobs);
    let t = Instant::now();
    engine.start().await?;
    wait_calls(recorder, a.jobs, a.timeout.unsigned_abs(), "drain").await?;
    wait_committed(store, a.timeout.unsigned_abs()).await?;
    let drain_per_s = rate(a.jobs, t.elapsed());
    let drain = recorder.sorted_samples();
    verify_drain(store, a.jobs, recorder.calls(), log_before).await?;

    let (mut p50, mut p99, mut max) = (None, None, None);
    if a.timers > 0 {
        enqueue(engine, a.timers_pending, a.chunk, "pending timers", |_| request(Some("P1D".into()))).await?;
        recorder.begin(a.timers);
        let spread = a.spread.unsigned_abs();
        let due_in = |i: u64| {
            let offset = spread.as_secs_f64() * i as f64 / a.timers as f64;
            let d = TIMER_LEAD + Duration::from_secs_f64(offset);
            format!("PT{}.{:06}S", d.as_secs(), d.subsec_micros())
        };
        enqueue(engine, a.timers, a.chunk, "timers", |i| request(Some(due_in(i)))).await?;
        wait_calls(recorder, a.timers, TIMER_LEAD + spread + TIMER_SLACK, "timers").await?;
        let timers = recorder.sorted_samples();
        (p50, p99, max) =
            (percentile_ms(&timers, 50.0), percentile_ms(&timers, 99.0), timers.last().copied().map(micros_to_ms));
    }
    Ok(Report {
        store: store.backend().as_str(),
        jobs: a.jobs,
        workers: a.workers,
        enqueue_per_s,
        drain_per_s,
        drain_lateness_p50_ms: percentile_ms(&drain, 50.0),
        drain_lateness_p99_ms: percentile_ms(&drain, 99.0),
        timers_pending: if a.timers > 0 { a.timers_pending } else { 0 },
        timers: a.timers,
        timer_lateness_p50_ms: p50,
        timer_lateness_p99_ms: p99,
        timer_lateness_max_ms: max,
    })
}

/// A no-op job of the benchmark's tenant, due now or after `due_in`.
fn request(due_in: Option<String>) -> EnqueueRequest {
    EnqueueRequest { handler: "noop".into(), due_in, tenant_id: Some(BENCH_TENANT.into()), ..Default::default() }
}

/// Enqueues `n` jobs in transactions of `chunk`, with a progress bar.
async fn enqueue(
    engine: &Engine,
    n: u64,
    chunk: u32,
    what: &str,
    make: impl Fn(u64) -> EnqueueRequest,
) -> Result<(), CliError> {
    let bar = progress(n, what);
    let mut i = 0;
    while i < n {
        let end = (i + u64::from(chunk)).min(n);
        let reqs: Vec<EnqueueRequest> = (i..end).map(&make).collect();
        engine.enqueue_many(&reqs).await?;
        bar.inc(end - i);
        i = end;
    }
    bar.finish();
    Ok(())
}

/// Waits until the handler ran `target` times.
async fn wait_calls(recorder: &Recorder, target: u64, timeout: Duration, what: &str) -> Result<(), CliError> {
    let bar = progress(target, what);
    let reached = recorder.wait(timeout, |n| bar.set_position(n)).await;
    bar.finish();
    if reached {
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{what}: only {} of {target} jobs ran within {:.0} s",
            recorder.calls(),
            timeout.as_secs_f64()
        )))
    }
}

/// Waits until the completions of the drained jobs are committed (their rows are gone).
async fn wait_committed(store: &dyn Store, timeout: Duration) -> Result<(), CliError> {
    let deadline = Instant::now() + timeout;
    let tenant = [SqlValue::Text(BENCH_TENANT.into())];
    loop {
        let left = count(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE TENANT_ID_ = ?", &tenant).await?;
        if left == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(CliError::failure(format!(
                "drain: every handler ran, but {left} jobs are still in ACT_RU_JOB"
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every job ran once, and the job log says so.
async fn verify_drain(store: &dyn Store, jobs: u64, calls: u64, log_before: u64) -> Result<(), CliError> {
    if calls != jobs {
        return Err(CliError::failure(format!("drain: the handler ran {calls} times for {jobs} jobs")));
    }
    let logged = count(store, SUCCEEDED_SQL, &[]).await?.saturating_sub(log_before);
    if logged != jobs {
        return Err(CliError::failure(format!(
            "drain: ACT_HI_JOB_LOG has {logged} new `succeeded` rows for {jobs} jobs"
        )));
    }
    Ok(())
}

fn rate(n: u64, elapsed: Duration) -> u64 {
    (n as f64 / elapsed.as_secs_f64().max(1e-9)).round() as u64
}

/// A progress bar on stderr (drawn only when stderr is a terminal).
fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:>15} [{bar:40}] {pos}/{len} {per_sec} {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}
