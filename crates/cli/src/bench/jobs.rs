//! `kairos bench jobs`: drain throughput and timer lateness of the job executor.
//!
//! Phase 1 enqueues N no-op jobs with the executor off (in chunks, one transaction each), then
//! starts an executor with W workers and measures how fast it drains them: from `start()` until
//! the last completion is committed. The `noop` handler is replaced by one that records each
//! job's lateness (attempt start minus due date, both on the database clock), and the job log
//! must end up with exactly one `succeeded` row per job.
//!
//! Phase `steady` enqueues R jobs per second while the executor runs (job i is due at the
//! start plus i/R, enqueued at that instant in one small batch per 10 ms tick) and measures
//! how late each starts: what a service enqueueing work all day sees.
//!
//! Phase `timers` puts P timers due in a day into the table (the "cost flat as pending timers
//! grow" case), then T timers due evenly over the spread, starting `--lead` later, and measures
//! how late each fires.
//!
//! Phase `backlog` enqueues N async jobs due now with the executor stopped, then T timers due
//! evenly over the spread from `--lead` on, starts the executor and measures how late the
//! timers fire while the backlog drains (a timer must not wait behind async work).
//!
//! Lateness is always attempt start minus due date on the database clock. A steady or timers
//! phase that has not seen every job start `--slack` after the last due date reports what it
//! has, as `partial`, counting each job not started at the lower bound (now − last due date).

use super::{BENCH_TENANT, Recorder, count, percentile_ms, prepare, recorder::micros_to_ms};
use crate::cli::{BenchJobsArgs, BenchPhase, GlobalArgs};
use crate::exit::{CliError, SUCCESS};
use crate::output;
use indicatif::{ProgressBar, ProgressStyle};
use kairos::{Engine, EnqueueRequest, JobContext, handler_fn};
use kairos_store::{SqlValue, Store};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The steady phase enqueues what has become due every this often.
const STEADY_TICK: Duration = Duration::from_millis(10);
const SUCCEEDED_SQL: &str = "SELECT COUNT(*) FROM ACT_HI_JOB_LOG WHERE OUTCOME_ = 'succeeded'";

/// The one JSON line the benchmark prints.
#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    jobs: u64,
    workers: u32,
    enqueue_per_s: Option<u64>,
    drain_per_s: Option<u64>,
    drain_lateness_p50_ms: Option<f64>,
    drain_lateness_p99_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steady: Option<Lateness>,
    timers_pending: u64,
    timers: u64,
    timer_lateness_p50_ms: Option<f64>,
    timer_lateness_p99_ms: Option<f64>,
    timer_lateness_max_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timer: Option<Lateness>,
    #[serde(skip_serializing_if = "Option::is_none")]
    backlog: Option<Backlog>,
}

/// The backlog phase's figures: the async drain, and the timers that fired during it.
#[derive(Debug, Serialize)]
struct Backlog {
    jobs: u64,
    /// Async jobs per second, from the executor's start to the last one's start.
    drain_per_s: u64,
    timers: Lateness,
}

/// A lateness phase's figures (steady, timers).
#[derive(Debug, Serialize)]
pub(crate) struct Lateness {
    jobs: u64,
    /// Jobs that started before the phase stopped waiting.
    completed: u64,
    partial: bool,
    /// Started jobs per second, from the first due date to the last start.
    per_s: u64,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    max_ms: Option<f64>,
    /// `[upper bound in ms, count]`, the last bound `null` (unbounded): bench/README.md's buckets.
    hist: Vec<(Option<f64>, u64)>,
}

/// bench/README.md's histogram bounds, in milliseconds.
const HIST_MS: [f64; 15] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 10e3, 20e3, 50e3];

impl Lateness {
    pub(crate) fn p99_ms(&self) -> Option<f64> {
        self.p99_ms
    }

    /// From sorted samples (µs), `missing` jobs counted at `missing_at` µs (a lower bound).
    pub(crate) fn new(jobs: u64, mut sorted: Vec<i64>, missing_at: i64, elapsed: Duration) -> Lateness {
        let completed = sorted.len() as u64;
        let missing = jobs.saturating_sub(completed);
        sorted.extend(std::iter::repeat_n(missing_at, usize::try_from(missing).unwrap_or(0)));
        sorted.sort_unstable();
        let mut hist: Vec<(Option<f64>, u64)> = HIST_MS.iter().map(|&b| (Some(b), 0)).collect();
        hist.push((None, 0));
        for &v in &sorted {
            let ms = v as f64 / 1000.0;
            let i = HIST_MS.iter().position(|&b| ms <= b).unwrap_or(HIST_MS.len());
            hist[i].1 += 1;
        }
        Lateness {
            jobs,
            completed,
            partial: missing > 0,
            per_s: rate(completed, elapsed),
            p50_ms: percentile_ms(&sorted, 50.0),
            p99_ms: percentile_ms(&sorted, 99.0),
            max_ms: sorted.last().copied().map(micros_to_ms),
            hist,
        }
    }
}

pub async fn run(global: &GlobalArgs, a: BenchJobsArgs) -> Result<u8, CliError> {
    let recorders = Recorders::default();
    let engine = build_engine(&global.db, &a, &recorders).await?;
    let store = engine.store().clone();
    prepare(store.as_ref(), a.reset).await?;
    let result = measure(&engine, &a, &recorders).await;
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

/// What the handlers record: `noop` (every phase's jobs) and `tick` (the backlog phase's timers).
#[derive(Debug, Default)]
struct Recorders {
    jobs: Arc<Recorder>,
    ticks: Arc<Recorder>,
}

fn recording(recorder: &Arc<Recorder>) -> impl kairos::Handler + use<> {
    let recorder = recorder.clone();
    handler_fn(move |ctx: JobContext| {
        let recorder = recorder.clone();
        async move {
            recorder.record(ctx.started, ctx.due_date);
            Ok(None)
        }
    })
}

async fn build_engine(db: &str, a: &BenchJobsArgs, recorders: &Recorders) -> Result<Engine, CliError> {
    let (batch, completion_batch, prefetch, writers) = (a.batch, a.completion_batch, a.prefetch, a.completion_writers);
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
            if let Some(q) = prefetch {
                c.prefetch = q as usize;
            }
            if let Some(w) = writers {
                c.completion_writers = w as usize;
            }
        })
        .handler("noop", recording(&recorders.jobs))
        .handler("tick", recording(&recorders.ticks))
        .build()
        .await?;
    Ok(engine)
}

async fn measure(engine: &Engine, a: &BenchJobsArgs, recorders: &Recorders) -> Result<Report, CliError> {
    let store = engine.store().as_ref();
    let recorder = recorders.jobs.as_ref();
    let mut report = Report {
        store: store.backend().as_str(),
        jobs: a.jobs,
        workers: a.workers,
        enqueue_per_s: None,
        drain_per_s: None,
        drain_lateness_p50_ms: None,
        drain_lateness_p99_ms: None,
        steady: None,
        timers_pending: 0,
        timers: 0,
        timer_lateness_p50_ms: None,
        timer_lateness_p99_ms: None,
        timer_lateness_max_ms: None,
        timer: None,
        backlog: None,
    };
    for phase in &a.phases {
        match phase {
            BenchPhase::Drain => drain(engine, a, recorder, &mut report).await?,
            BenchPhase::Steady => {
                engine.start().await?;
                report.steady = Some(steady(engine, a, recorder).await?);
            }
            BenchPhase::Timers if a.timers > 0 => {
                engine.start().await?;
                let t = timers(engine, a, recorder).await?;
                (report.timers_pending, report.timers) = (a.timers_pending, a.timers);
                (report.timer_lateness_p50_ms, report.timer_lateness_p99_ms, report.timer_lateness_max_ms) =
                    (t.p50_ms, t.p99_ms, t.max_ms);
                report.timer = Some(t);
            }
            BenchPhase::Timers => {}
            BenchPhase::Backlog => report.backlog = Some(backlog(engine, a, recorders).await?),
        }
    }
    Ok(report)
}

/// N jobs enqueued with the executor stopped, then drained.
async fn drain(engine: &Engine, a: &BenchJobsArgs, recorder: &Recorder, report: &mut Report) -> Result<(), CliError> {
    let store = engine.store().as_ref();
    let log_before = count(store, SUCCEEDED_SQL, &[]).await?;
    let t = Instant::now();
    enqueue(engine, a.jobs, a.chunk, "enqueue", |_| request(None)).await?;
    report.enqueue_per_s = Some(rate(a.jobs, t.elapsed()));

    recorder.begin(a.jobs);
    let t = Instant::now();
    engine.start().await?;
    wait_calls(recorder, a.jobs, a.timeout.unsigned_abs(), "drain").await?;
    wait_committed(store, a.timeout.unsigned_abs()).await?;
    report.drain_per_s = Some(rate(a.jobs, t.elapsed()));
    let drain = recorder.sorted_samples();
    verify_drain(store, a.jobs, recorder.calls(), log_before).await?;
    report.drain_lateness_p50_ms = percentile_ms(&drain, 50.0);
    report.drain_lateness_p99_ms = percentile_ms(&drain, 99.0);
    Ok(())
}

/// Jobs enqueued at a fixed rate while the executor runs; job i is due at `t0 + i/R`.
async fn steady(engine: &Engine, a: &BenchJobsArgs, recorder: &Recorder) -> Result<Lateness, CliError> {
    let n = a.steady_jobs;
    recorder.begin(n);
    let t0 = engine.store().db_now().await?;
    let started = Instant::now();
    let due = |i: u64| t0 + Duration::from_secs_f64(i as f64 / f64::from(a.rate));
    let bar = progress(n, "steady enqueue");
    let mut sent = 0;
    let mut tick = tokio::time::interval(STEADY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while sent < n {
        tick.tick().await;
        let due_now = ((started.elapsed().as_secs_f64() * f64::from(a.rate)) as u64 + 1).min(n);
        if due_now > sent {
            let reqs: Vec<EnqueueRequest> = (sent..due_now).map(|i| request_at(due(i))).collect();
            engine.enqueue_many(&reqs).await?;
            bar.inc(due_now - sent);
            sent = due_now;
        }
    }
    bar.finish();
    let last_due = due(n - 1);
    phase_lateness(engine, recorder, n, (t0, last_due), a.slack.unsigned_abs(), "steady").await
}

/// P timers due in a day, then T timers due evenly over the spread from `lead` on.
async fn timers(engine: &Engine, a: &BenchJobsArgs, recorder: &Recorder) -> Result<Lateness, CliError> {
    enqueue(engine, a.timers_pending, a.chunk, "pending timers", |_| request(Some("P1D".into()))).await?;
    recorder.begin(a.timers);
    let t0 = engine.store().db_now().await? + a.lead.unsigned_abs();
    let spread = a.spread.unsigned_abs();
    let due = |i: u64| t0 + Duration::from_secs_f64(spread.as_secs_f64() * i as f64 / a.timers as f64);
    // Small transactions, in due order: the first timers are in the table well before they are due.
    enqueue(engine, a.timers, a.chunk.min(1_000), "timers", |i| request_at(due(i))).await?;
    let last_due = due(a.timers - 1);
    phase_lateness(engine, recorder, a.timers, (t0, last_due), a.slack.unsigned_abs(), "timers").await
}

/// N async jobs due now, then T timers due over the spread from `lead` on; the executor starts
/// after both are stored, and the timers' lateness is measured while the backlog drains.
async fn backlog(engine: &Engine, a: &BenchJobsArgs, recorders: &Recorders) -> Result<Backlog, CliError> {
    let store = engine.store().as_ref();
    let timers = a.timers.max(1);
    enqueue(engine, a.jobs, a.chunk, "backlog", |_| request(None)).await?;
    recorders.jobs.begin(a.jobs);
    recorders.ticks.begin(timers);
    let t0 = store.db_now().await? + a.lead.unsigned_abs();
    let spread = a.spread.unsigned_abs();
    let due = |i: u64| t0 + Duration::from_secs_f64(spread.as_secs_f64() * i as f64 / timers as f64);
    let tick = |i: u64| EnqueueRequest { handler: "tick".into(), ..request_at(due(i)) };
    enqueue(engine, timers, a.chunk.min(1_000), "timers", tick).await?;
    let started = store.db_now().await?;
    engine.start().await?;
    let fired =
        phase_lateness(engine, &recorders.ticks, timers, (t0, due(timers - 1)), a.slack.unsigned_abs(), "timers")
            .await?;
    wait_calls(&recorders.jobs, a.jobs, a.timeout.unsigned_abs(), "backlog").await?;
    let last = recorders.jobs.last_start().unwrap_or(started);
    Ok(Backlog { jobs: a.jobs, drain_per_s: rate(a.jobs, last.duration_since(started).unsigned_abs()), timers: fired })
}

/// Waits until `n` jobs started or `slack` after the last due date, then sums up their lateness.
pub(crate) async fn phase_lateness(
    engine: &Engine,
    recorder: &Recorder,
    n: u64,
    (first_due, last_due): (jiff::Timestamp, jiff::Timestamp),
    slack: Duration,
    what: &str,
) -> Result<Lateness, CliError> {
    let store = engine.store().as_ref();
    let now = store.db_now().await?;
    let wait = last_due.duration_since(now).unsigned_abs() + slack;
    let bar = progress(n, what);
    let reached = recorder.wait(wait, |c| bar.set_position(c)).await;
    bar.finish();
    let end = store.db_now().await?;
    let missing_at = i64::try_from(end.duration_since(last_due).as_micros()).unwrap_or(i64::MAX).max(0);
    let last = if reached { recorder.last_start().unwrap_or(end) } else { end };
    let elapsed = last.duration_since(first_due).unsigned_abs();
    Ok(Lateness::new(n, recorder.sorted_samples(), missing_at, elapsed))
}

/// A no-op job of the benchmark's tenant, due now or after `due_in`.
fn request(due_in: Option<String>) -> EnqueueRequest {
    EnqueueRequest { handler: "noop".into(), due_in, tenant_id: Some(BENCH_TENANT.into()), ..Default::default() }
}

/// A no-op job of the benchmark's tenant due at `at`.
pub(crate) fn request_at(at: jiff::Timestamp) -> EnqueueRequest {
    EnqueueRequest { due_date: Some(at), ..request(None) }
}

/// Enqueues `n` jobs in transactions of `chunk`, with a progress bar.
pub(crate) async fn enqueue(
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
