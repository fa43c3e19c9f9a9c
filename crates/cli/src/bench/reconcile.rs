//! `kairos bench reconcile`: one reconciliation pass over `--bindings` business records
//! (SPEC C7; issue 17's target on PostgreSQL: 1,000,000 bindings within 60 s, without
//! blocking the executor: timer lateness p99 during the pass ≤ 2× without it).
//!
//! The fixture is written by SQL (a recursive series, one statement per table): a business
//! table `kairos_bench_record`, each record with its binding and its history row of an ended
//! instance. All are APPROVED and ended at the approved end (consistent: the pass reads them
//! and does nothing), except every `--repair-every`-th, which is still APPROVING (the pass
//! writes it back APPROVED and records the repair). Then two timer phases of `--timers` no-op
//! timers due over `--spread`: the first alone, the second with the pass running from its
//! start; the report has both lateness figures and the pass's time.

use super::jobs::{Lateness, enqueue, phase_lateness, request_at};
use super::{Recorder, count};
use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::{output, parse};
use clap::Args;
use jiff::SignedDuration;
use kairos::reconcile::Config;
use kairos::store::SqlValue;
use kairos::{Engine, handler_fn};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `kairos bench reconcile`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  kairos bench reconcile --db \"$KAIROS_TEST_PG_URL\" --bindings 1000000 --reset
  kairos bench reconcile --db sqlite:///tmp/bench.db --bindings 100000 --timers 5000 --reset

Seeds --bindings records (business row, binding, history of an ended instance) by SQL, then
measures timer lateness without and with a reconciliation pass running. Prints one JSON line.
--reset deletes the fixture, every job and the job log first.")]
pub struct BenchReconcileArgs {
    /// Business records with a binding each
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=20_000_000), value_name = "N")]
    pub bindings: u64,
    /// Every N-th record needs a write-back (0: none)
    #[arg(long, default_value_t = 1_000, value_name = "N")]
    pub repair_every: u64,
    /// Timers per lateness phase
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000), value_name = "T")]
    pub timers: u64,
    /// The timers of a phase are due over this long
    #[arg(long, default_value = "PT30S", value_parser = parse::duration, value_name = "DUR")]
    pub spread: SignedDuration,
    /// Executor workers
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "W")]
    pub workers: u32,
    /// Delete the fixture, every job and the job log first
    #[arg(long)]
    pub reset: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    bindings: u64,
    seed_s: f64,
    pass_s: f64,
    records_per_s: f64,
    records: u64,
    consistent: u64,
    repaired: u64,
    incidents_opened: u64,
    /// Timer lateness p99 with the pass running ÷ without.
    lateness_ratio: Option<f64>,
    without_pass: Lateness,
    with_pass: Lateness,
}

const TYPE: &str = "KAIROS_BENCH";
const DEFINITION: &str = "kairosBench:1:bench";

fn config() -> Config {
    Config::parse(
        &serde_json::json!({"sources": [{
            "businessType": TYPE, "table": "kairos_bench_record", "processType": "kairosBench",
            "approvedEnds": ["end"], "states": {"APPROVING": ["APPROVING"], "APPROVED": ["APPROVED"]}
        }]})
        .to_string(),
    )
    .expect("the bench's configuration is valid")
}

pub async fn run(global: &GlobalArgs, a: BenchReconcileArgs) -> Result<u8, CliError> {
    let recorder = Arc::new(Recorder::default());
    let rec = recorder.clone();
    let engine = Arc::new(
        Engine::builder(global.db.clone())
            .node_id(format!("bench-{}", std::process::id()))
            .workers(a.workers as usize)
            .handler(
                "noop",
                handler_fn(move |ctx| {
                    let rec = rec.clone();
                    async move {
                        rec.record(ctx.started, ctx.due_date);
                        Ok(None)
                    }
                }),
            )
            .build()
            .await?,
    );
    let store = engine.store().clone();
    super::prepare(store.as_ref(), a.reset).await?;
    if a.reset {
        reset(&engine).await?;
    } else if count(
        store.as_ref(),
        "SELECT COUNT(*) FROM business_process_binding WHERE business_type = ?",
        &[SqlValue::Text(TYPE.into())],
    )
    .await?
        > 0
    {
        return Err(CliError::bad_input("the bench's fixture exists: rerun with --reset, or use another --db"));
    }
    let t = Instant::now();
    seed(&engine, a.bindings, a.repair_every).await?;
    let seed_s = t.elapsed().as_secs_f64();
    eprintln!("bench reconcile: {} records seeded in {seed_s:.1} s", a.bindings);
    engine.start().await?;
    let without_pass = timers(&engine, &a, &recorder).await?;
    let reconciler = engine.reconciler_for(config())?;
    let pass = tokio::spawn(async move {
        let t = Instant::now();
        let report = reconciler.pass(false).await;
        (report, t.elapsed())
    });
    let with_pass = timers(&engine, &a, &recorder).await?;
    let (report, took) = pass.await.map_err(|e| CliError::failure(format!("the pass failed: {e}")))?;
    let report = report?;
    engine.shutdown(Duration::from_secs(10)).await;
    let ratio = match (with_pass.p99_ms(), without_pass.p99_ms()) {
        (Some(w), Some(wo)) if wo > 0.0 => Some((w / wo * 100.0).round() / 100.0),
        _ => None,
    };
    output::json(&Report {
        store: store.backend().as_str(),
        bindings: a.bindings,
        seed_s: round3(seed_s),
        pass_s: round3(took.as_secs_f64()),
        records_per_s: (report.records as f64 / took.as_secs_f64()).round(),
        records: report.records,
        consistent: report.consistent,
        repaired: report.repaired,
        incidents_opened: report.incidents_opened,
        lateness_ratio: ratio,
        without_pass,
        with_pass,
    })?;
    Ok(SUCCESS)
}

/// A phase of `--timers` no-op timers due over `--spread` from 2 s from now.
async fn timers(engine: &Engine, a: &BenchReconcileArgs, recorder: &Recorder) -> Result<Lateness, CliError> {
    recorder.begin(a.timers);
    let t0 = engine.store().db_now().await? + SignedDuration::from_secs(2);
    let spread = a.spread.unsigned_abs();
    let due = |i: u64| t0 + Duration::from_secs_f64(spread.as_secs_f64() * i as f64 / a.timers as f64);
    enqueue(engine, a.timers, 1_000, "timers", |i| request_at(due(i))).await?;
    phase_lateness(engine, recorder, a.timers, (t0, due(a.timers - 1)), Duration::from_secs(30), "timers").await
}

/// The fixture, one statement per table over a recursive series (one text for both backends).
async fn seed(engine: &Engine, n: u64, repair_every: u64) -> Result<(), CliError> {
    let store = engine.store();
    store
        .sql_execute(
            "CREATE TABLE IF NOT EXISTS kairos_bench_record (id BIGINT PRIMARY KEY, status VARCHAR(32) NOT NULL)",
            &[],
        )
        .await?;
    let now = store.db_now().await?;
    let series = "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?)";
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    let every = i64::try_from(repair_every).unwrap_or(0);
    let status = if every > 0 {
        format!("CASE WHEN x % {every} = 0 THEN 'APPROVING' ELSE 'APPROVED' END")
    } else {
        "'APPROVED'".into()
    };
    let at = SqlValue::Timestamp(now);
    for (sql, binds) in [
        (
            format!("{series} INSERT INTO kairos_bench_record (id, status) SELECT x, {status} FROM s"),
            vec![SqlValue::Int(n)],
        ),
        (
            format!(
                "{series} INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, BUSINESS_KEY_, PROC_DEF_ID_, START_TIME_, END_TIME_, \
                 START_ACT_ID_, END_ACT_ID_) SELECT 'kb-' || CAST(x AS VARCHAR(20)), 'kb-' || CAST(x AS VARCHAR(20)), \
                 CAST(x AS VARCHAR(20)), '{DEFINITION}', ?, ?, 'start', 'end' FROM s"
            ),
            vec![SqlValue::Int(n), at.clone(), at.clone()],
        ),
        (
            format!(
                "{series} INSERT INTO business_process_binding (business_type, business_id, process_type, process_instance_id, \
                 process_definition_id, lifecycle_no, binding_status, created_at, ended_at) SELECT '{TYPE}', \
                 CAST(x AS VARCHAR(20)), 'kairosBench', 'kb-' || CAST(x AS VARCHAR(20)), '{DEFINITION}', 1, 'ENDED', ?, ? FROM s"
            ),
            vec![SqlValue::Int(n), at.clone(), at],
        ),
    ] {
        store.sql_execute(&sql, &binds).await?;
    }
    Ok(())
}

async fn reset(engine: &Engine) -> Result<(), CliError> {
    let store = engine.store();
    super::reset_jobs(store.as_ref()).await?;
    store.sql_execute("DROP TABLE IF EXISTS kairos_bench_record", &[]).await?;
    let t = SqlValue::Text(TYPE.into());
    store.sql_execute("DELETE FROM business_process_binding WHERE business_type = ?", std::slice::from_ref(&t)).await?;
    store.sql_execute("DELETE FROM kairos_incident WHERE business_type = ?", &[t]).await?;
    store
        .sql_execute("DELETE FROM ACT_HI_PROCINST WHERE PROC_DEF_ID_ = ?", &[SqlValue::Text(DEFINITION.into())])
        .await?;
    Ok(())
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
