//! `kairos bench outbox`: the transactional outbox's publisher (SPEC C4; issue 16's target on
//! PostgreSQL: ≥ 5,000 events/s drained to a local HTTP sink, and at a steady 1,000 events/s a
//! commit-to-delivery p99 ≤ 50 ms).
//!
//! The sink is an HTTP server in this process on 127.0.0.1 (the real `http` sink posts to it
//! with its Idempotency-Key, through the address guard with loopback allowed): it notes when
//! each key first arrived and answers 204.
//!
//! - `drain`: `--events` events are committed with the publisher off (1,000 per transaction),
//!   then the publisher starts; the figure is events ÷ the time until the last is PUBLISHED.
//! - `steady`: `--writers` tasks commit one event per transaction (each its own commit, as a
//!   business command would) on a schedule of `--rate` per second for `--duration`, while the
//!   publisher runs; each event's latency is its first arrival at the sink minus the instant
//!   its writer's commit returned (an arrival before that counts as 0).

use super::{count, percentile_ms};
use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::{output, parse};
use clap::Args;
use jiff::SignedDuration;
use kairos::Engine;
use kairos::outbox::http::{HttpSink, HttpSinkSettings};
use kairos::outbox::{NewEvent, OutboxSettings};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `kairos bench outbox`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  kairos bench outbox --db \"$KAIROS_TEST_PG_URL\" --events 50000 --rate 1000 --duration PT20S --reset
  kairos bench outbox --db sqlite:///tmp/bench.db --phases drain --events 20000 --reset

drain commits --events events with the publisher off, then starts it and measures events/s
until the last one is PUBLISHED. steady commits one event per transaction at --rate for
--duration while the publisher runs, and measures commit-to-delivery latency p50/p99/max.
The sink is a local HTTP server in this process. --reset deletes every outbox event first.
Prints one JSON line on stdout; progress goes to stderr.")]
pub struct BenchOutboxArgs {
    /// Phases to run, in this order
    #[arg(long, value_delimiter = ',', default_value = "drain,steady", value_name = "PHASES")]
    pub phases: Vec<OutboxPhase>,
    /// Events of the drain phase
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000), value_name = "N")]
    pub events: u64,
    /// Events per second of the steady phase
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=100_000), value_name = "R")]
    pub rate: u64,
    /// How long the steady phase writes
    #[arg(long, default_value = "PT20S", value_parser = parse::duration, value_name = "DUR")]
    pub duration: SignedDuration,
    /// Writer tasks of the steady phase (each commits one event at a time)
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1_000), value_name = "W")]
    pub writers: u32,
    /// Events per claim [default: the engine's]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "B")]
    pub batch: Option<u32>,
    /// Deliveries in flight per publisher loop [default: the engine's]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "C")]
    pub concurrency: Option<u32>,
    /// Publisher loops [default: the engine's]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64), value_name = "P")]
    pub publishers: Option<u32>,
    /// Give up on a phase after this long
    #[arg(long, default_value = "PT5M", value_parser = parse::duration, value_name = "DUR")]
    pub timeout: SignedDuration,
    /// Delete every outbox event first
    #[arg(long)]
    pub reset: bool,
}

/// `kairos bench outbox --phases`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutboxPhase {
    Drain,
    Steady,
}

#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    batch: u32,
    concurrency: usize,
    publishers: usize,
    /// Requests the sink took beyond one per event (a redelivery; 0 in a run without faults).
    duplicate_deliveries: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    drain: Option<Drain>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steady: Option<Steady>,
}

#[derive(Debug, Serialize)]
struct Drain {
    events: u64,
    /// Seconds to commit them (publisher off).
    write_s: f64,
    published: u64,
    partial: bool,
    seconds: f64,
    events_per_s: f64,
}

#[derive(Debug, Serialize)]
struct Steady {
    rate: u64,
    duration_s: f64,
    writers: u32,
    events: u64,
    /// Commits per second the writers reached (below `rate`: they could not keep the schedule).
    written_per_s: f64,
    delivered: u64,
    partial: bool,
    latency_p50_ms: Option<f64>,
    latency_p99_ms: Option<f64>,
    latency_max_ms: Option<f64>,
}

/// The local target: the first arrival of each Idempotency-Key.
#[derive(Debug, Default)]
struct Arrivals {
    first: Mutex<HashMap<String, Instant>>,
    requests: AtomicU64,
}

impl Arrivals {
    fn distinct(&self) -> u64 {
        u64::try_from(self.first.lock().unwrap_or_else(|e| e.into_inner()).len()).unwrap_or(u64::MAX)
    }
}

async fn sink_server(arrivals: Arc<Arrivals>) -> Result<String, CliError> {
    let app = axum::Router::new().route(
        "/events",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let arrivals = arrivals.clone();
            async move {
                let at = Instant::now();
                arrivals.requests.fetch_add(1, Ordering::Relaxed);
                if let Some(key) = headers.get("idempotency-key").and_then(|v| v.to_str().ok()) {
                    arrivals.first.lock().unwrap_or_else(|e| e.into_inner()).entry(key.to_owned()).or_insert(at);
                }
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| CliError::failure(format!("the local sink cannot listen: {e}")))?;
    let addr = listener.local_addr().map_err(|e| CliError::failure(e.to_string()))?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}/events"))
}

fn event(id: String) -> NewEvent {
    NewEvent {
        aggregate_id: id.clone(),
        event_id: id,
        aggregate_type: "KAIROS_BENCH".into(),
        event_type: "BENCH_EVENT".into(),
        payload_json: r#"{"bench":true}"#.into(),
        target: "http".into(),
        target_url: None,
        ordered: false,
        max_attempts: 10,
    }
}

pub async fn run(global: &GlobalArgs, a: BenchOutboxArgs) -> Result<u8, CliError> {
    let arrivals = Arc::new(Arrivals::default());
    let url = sink_server(arrivals.clone()).await?;
    let sink = HttpSink::new(HttpSinkSettings {
        base_url: Some(url),
        allow_hosts: vec!["127.0.0.1".into()],
        allow_private: true,
        ..Default::default()
    })
    .map_err(CliError::failure)?;
    let mut settings = OutboxSettings::default();
    if let Some(b) = a.batch {
        settings.batch = b;
    }
    if let Some(c) = a.concurrency {
        settings.concurrency = c as usize;
    }
    if let Some(p) = a.publishers {
        settings.publishers = p as usize;
    }
    let engine = Arc::new(
        Engine::builder(global.db.clone())
            .node_id(format!("bench-{}", std::process::id()))
            .sink("http", sink)
            .outbox(settings.clone())
            .build()
            .await?,
    );
    let store = engine.store().clone();
    super::prepare(store.as_ref(), a.reset).await?;
    if a.reset {
        super::empty_tables(store.as_ref(), &["outbox_event"]).await?;
    } else if count(store.as_ref(), "SELECT COUNT(*) FROM outbox_event", &[]).await? > 0 {
        return Err(CliError::bad_input("outbox_event is not empty: rerun with --reset, or use another --db"));
    }
    let timeout = a.timeout.unsigned_abs();
    let mut report = Report {
        store: store.backend().as_str(),
        batch: settings.batch,
        concurrency: settings.concurrency,
        publishers: settings.publishers,
        duplicate_deliveries: 0,
        drain: None,
        steady: None,
    };
    let mut started = false;
    for phase in &a.phases {
        match phase {
            OutboxPhase::Drain => {
                if started {
                    engine.shutdown(Duration::from_secs(10)).await;
                    started = false;
                }
                report.drain = Some(drain(&engine, a.events, timeout).await?);
            }
            OutboxPhase::Steady => {
                if !started {
                    engine.start().await?;
                    started = true;
                }
                report.steady = Some(steady(&engine, &arrivals, &a, timeout).await?);
            }
        }
    }
    engine.shutdown(Duration::from_secs(10)).await;
    report.duplicate_deliveries = arrivals.requests.load(Ordering::Relaxed).saturating_sub(arrivals.distinct());
    output::json(&report)?;
    Ok(SUCCESS)
}

async fn published(engine: &Engine) -> Result<u64, CliError> {
    count(engine.store().as_ref(), "SELECT COUNT(*) FROM outbox_event WHERE event_status = 'PUBLISHED'", &[]).await
}

async fn drain(engine: &Engine, n: u64, timeout: Duration) -> Result<Drain, CliError> {
    let before = published(engine).await?;
    let t = Instant::now();
    let mut chunk = Vec::with_capacity(1_000);
    for i in 0..n {
        chunk.push(engine.outbox().insert(engine.store().dialect(), &event(format!("drain-{i:08}")))?);
        if chunk.len() == 1_000 || i + 1 == n {
            engine.store().write_all(&chunk).await?;
            chunk.clear();
        }
    }
    let write_s = t.elapsed().as_secs_f64();
    eprintln!("bench outbox: {n} events committed in {write_s:.1} s; publishing");
    let t = Instant::now();
    engine.start().await?;
    let done = loop {
        let done = published(engine).await?.saturating_sub(before);
        if done >= n || t.elapsed() > timeout {
            break done;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let seconds = t.elapsed().as_secs_f64();
    Ok(Drain {
        events: n,
        write_s: round3(write_s),
        published: done,
        partial: done < n,
        seconds: round3(seconds),
        events_per_s: (done as f64 / seconds).round(),
    })
}

async fn steady(
    engine: &Arc<Engine>,
    arrivals: &Arc<Arrivals>,
    a: &BenchOutboxArgs,
    timeout: Duration,
) -> Result<Steady, CliError> {
    let duration = a.duration.unsigned_abs();
    let n = u64::try_from((duration.as_secs_f64() * a.rate as f64) as u128).unwrap_or(u64::MAX).max(1);
    let committed: Arc<Mutex<Vec<(String, Instant)>>> = Arc::new(Mutex::new(Vec::with_capacity(n as usize)));
    let next = Arc::new(AtomicU64::new(0));
    let t0 = tokio::time::Instant::now() + Duration::from_millis(100);
    let interval = Duration::from_secs_f64(1.0 / a.rate as f64);
    let mut writers = tokio::task::JoinSet::new();
    for _ in 0..a.writers {
        let (engine, next, committed) = (engine.clone(), next.clone(), committed.clone());
        writers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return Ok::<(), kairos::Error>(());
                }
                tokio::time::sleep_until(t0 + interval.mul_f64(i as f64)).await;
                let id = format!("steady-{i:08}");
                engine.outbox_write(&event(id.clone())).await?;
                committed.lock().unwrap_or_else(|e| e.into_inner()).push((id, Instant::now()));
            }
        });
    }
    while let Some(done) = writers.join_next().await {
        done.map_err(|e| CliError::failure(format!("a writer task failed: {e}")))??;
    }
    let written_s = (tokio::time::Instant::now() - t0).as_secs_f64();
    eprintln!("bench outbox: {n} events committed one by one in {written_s:.1} s; waiting for the last deliveries");
    let t = Instant::now();
    let delivered = |c: &[(String, Instant)]| {
        let first = arrivals.first.lock().unwrap_or_else(|e| e.into_inner());
        c.iter().filter(|(id, _)| first.contains_key(id)).count() as u64
    };
    let committed = committed.lock().unwrap_or_else(|e| e.into_inner()).clone();
    while delivered(&committed) < n && t.elapsed() < timeout {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut latencies: Vec<i64> = {
        let first = arrivals.first.lock().unwrap_or_else(|e| e.into_inner());
        committed
            .iter()
            .filter_map(|(id, at)| {
                first
                    .get(id)
                    .map(|got| i64::try_from(got.saturating_duration_since(*at).as_micros()).unwrap_or(i64::MAX))
            })
            .collect()
    };
    latencies.sort_unstable();
    let got = latencies.len() as u64;
    Ok(Steady {
        rate: a.rate,
        duration_s: duration.as_secs_f64(),
        writers: a.writers,
        events: n,
        written_per_s: (n as f64 / written_s).round(),
        delivered: got,
        partial: got < n,
        latency_p50_ms: percentile_ms(&latencies, 50.0),
        latency_p99_ms: percentile_ms(&latencies, 99.0),
        latency_max_ms: percentile_ms(&latencies, 100.0),
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
