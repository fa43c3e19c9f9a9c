//! `kairos bench scheduler`: fires per second and firing lateness of Quartz-style triggers
//! (SPEC S; issue 5's target: ≥ 2,000 fires/s and lateness p99 ≤ 100 ms with 100,000 triggers on
//! PostgreSQL).
//!
//! `--triggers` one-shot simple triggers of one job are stored while the executor runs (in
//! fire-time order, 2,000 at a time), trigger i due at `t0 + --lead + i × --spread / N`; every
//! firing's work records its lateness: the work job's start minus its trigger's
//! scheduled fire time, both on the database clock. With `--spread PT0S` every trigger is due at
//! once: the figure is the scheduler's throughput.

use super::{Recorder, count};
use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::{output, parse};
use clap::Args;
use jiff::SignedDuration;
use kairos::scheduler::{JobSpec, TriggerSpec};
use kairos::{Engine, handler_fn};
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// `kairos bench scheduler`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  kairos bench scheduler --db \"$KAIROS_TEST_PG_URL\" --triggers 100000 --spread PT30S --reset
  kairos bench scheduler --db sqlite:///tmp/bench.db --triggers 20000 --spread PT0S --reset

Prints one JSON line: fires/s (triggers ÷ (last work start − first fire time)) and lateness
p50/p99/max in ms. --reset deletes every QRTZ_* row, job and job-log row first.")]
pub struct BenchSchedulerArgs {
    /// One-shot triggers to fire
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=5_000_000), value_name = "N")]
    pub triggers: u64,
    /// The fire times are spread evenly over this long (PT0S: all at once)
    #[arg(long, default_value = "PT30S", value_parser = parse::duration, value_name = "DUR")]
    pub spread: SignedDuration,
    /// The first fire time is this long after the triggers are stored
    #[arg(long, default_value = "PT3S", value_parser = parse::duration, value_name = "DUR")]
    pub lead: SignedDuration,
    /// Executor workers. A firing is two jobs (its trigger job, then its work), and a job taken
    /// ahead of its due date holds its worker until then: at 1,667 fires/s, 256 workers ran
    /// out and lateness p99 was 147 ms; with 512 it was 11 ms
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "W")]
    pub workers: u32,
    /// Give up this long after the last fire time
    #[arg(long, default_value = "PT60S", value_parser = parse::duration, value_name = "DUR")]
    pub timeout: SignedDuration,
    /// Delete every QRTZ_* row, job and job-log row first
    #[arg(long)]
    pub reset: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    triggers: u64,
    spread_s: f64,
    /// Seconds to store the triggers (before the first fire time).
    store_s: f64,
    workers: u32,
    /// Fires started, fires per second (from the first fire time to the last start), lateness
    /// p50/p99/max and its histogram, as `kairos bench jobs` reports a timers phase.
    fired: super::jobs::Lateness,
}

const JOB: &str = "kairos-bench-fire";

pub async fn run(global: &GlobalArgs, a: BenchSchedulerArgs) -> Result<u8, CliError> {
    let recorder = Arc::new(Recorder::default());
    let rec = recorder.clone();
    let engine = Engine::builder(global.db.clone())
        .node_id(format!("bench-{}", std::process::id()))
        .workers(a.workers as usize)
        .handler(
            "bench-fire",
            handler_fn(move |ctx| {
                let rec = rec.clone();
                async move {
                    rec.record(ctx.started, ctx.due_date);
                    Ok(None)
                }
            }),
        )
        .build()
        .await?;
    let store = engine.store().clone();
    super::prepare(store.as_ref(), a.reset).await?;
    if a.reset {
        for table in [
            "QRTZ_FIRED_TRIGGERS",
            "QRTZ_SIMPLE_TRIGGERS",
            "QRTZ_CRON_TRIGGERS",
            "QRTZ_SIMPROP_TRIGGERS",
            "QRTZ_BLOB_TRIGGERS",
            "QRTZ_TRIGGERS",
            "QRTZ_JOB_DETAILS",
            "QRTZ_PAUSED_TRIGGER_GRPS",
            "QRTZ_CALENDARS",
        ] {
            store.sql_execute(&format!("DELETE FROM {table}"), &[]).await?;
        }
    } else if count(store.as_ref(), "SELECT COUNT(*) FROM QRTZ_TRIGGERS", &[]).await? > 0 {
        return Err(CliError::bad_input("QRTZ_TRIGGERS is not empty: rerun with --reset, or use another --db"));
    }
    let s = engine.scheduler();
    let job: JobSpec = serde_json::from_value(json!({"name": JOB, "handler": "bench-fire", "durable": true}))
        .map_err(|e| CliError::failure(e.to_string()))?;
    s.add_job(&job).await?;

    let n = a.triggers;
    let stored_at = std::time::Instant::now();
    let t0 = store.db_now().await? + a.lead;
    let spread_us = a.spread.as_micros().max(0);
    let specs: Vec<TriggerSpec> = (0..n)
        .map(|i| {
            let at = t0 + SignedDuration::from_micros(i64::try_from(spread_us * i128::from(i) / i128::from(n)).unwrap_or(0));
            serde_json::from_value(json!({
                "name": format!("t{i:07}"), "jobName": JOB, "startTime": at.round(jiff::Unit::Millisecond).unwrap_or(at),
                "simple": {"repeatCount": 0}, "misfirePolicy": "fireNow",
            }))
            .expect("a valid trigger request")
        })
        .collect();
    // The executor runs while the triggers are stored, in fire-time order, 2,000 a transaction
    // batch: as a scheduler in production takes new triggers while it fires (Quartz's driver in
    // bench/ does the same). Storing slower than the fire times come shows as lateness.
    recorder.begin(n);
    engine.start().await?;
    for chunk in specs.chunks(2_000) {
        s.schedule_many(chunk).await?;
    }
    let store_s = stored_at.elapsed().as_secs_f64();
    eprintln!("bench scheduler: {n} triggers stored in {store_s:.1} s");
    let db_now = store.db_now().await?;
    let limit = (t0 + a.spread + a.timeout).duration_since(db_now).unsigned_abs();
    let reached = recorder.wait(limit, |_| {}).await;
    engine.shutdown(Duration::from_secs(10)).await;
    let last = recorder.last_start().unwrap_or(t0);
    let elapsed = last.duration_since(t0).unsigned_abs();
    // Fires that never started count at the wait's end (a lower bound, marked partial).
    let missing_at = i64::try_from(limit.as_micros()).unwrap_or(i64::MAX);
    let fired =
        super::jobs::Lateness::new(n, recorder.sorted_samples(), missing_at, elapsed.max(Duration::from_millis(1)));
    if !reached {
        eprintln!("bench scheduler: {} of {n} fires started before the timeout", recorder.calls());
    }
    output::json(&Report {
        store: store.backend().as_str(),
        triggers: n,
        spread_s: a.spread.as_secs_f64(),
        store_s: (store_s * 10.0).round() / 10.0,
        workers: a.workers,
        fired,
    })?;
    Ok(SUCCESS)
}
