//! `kairos bench process`: process instances per second for start → service task (`log`) →
//! end, with the default history (`audit`), synchronous (the whole instance runs in the start request) or with
//! `asyncBefore` on the service task (the start commits a job; the executor finishes it).
//!
//! Synchronous starts come from `--concurrency` tasks at once, as requests to a server would;
//! asynchronous runs start every instance and measure until the last one has ended
//! (ACT_HI_PROCINST.END_TIME_ set), the executor running with `--workers`.

use super::count;
use crate::cli::{BenchProcessArgs, GlobalArgs, ProcessMode};
use crate::exit::{CliError, SUCCESS};
use crate::output;
use kairos::Engine;
use kairos::process::StartRequest;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The benchmark's models: the same files the side-by-side run (bench/run) gives every peer.
const SYNC_BPMN: &str = include_str!("../../../../bench/peers/process/service-sync.bpmn");
const ASYNC_BPMN: &str = include_str!("../../../../bench/peers/process/service-async.bpmn");
const KEY: &str = "kairosBenchService";

#[derive(Debug, Serialize)]
struct Report {
    store: &'static str,
    mode: &'static str,
    instances: u64,
    /// Instances ended by the deadline (`--timeout`, counted from the first start).
    completed: u64,
    partial: bool,
    seconds: f64,
    instances_per_s: f64,
    concurrency: u32,
    workers: u32,
    history: &'static str,
}

pub async fn run(global: &GlobalArgs, a: BenchProcessArgs) -> Result<u8, CliError> {
    let engine = Arc::new(
        Engine::builder(global.db.clone())
            .node_id(format!("bench-{}", std::process::id()))
            .workers(a.workers as usize)
            .build()
            .await?,
    );
    if a.reset {
        reset(&engine).await?;
    }
    let xml = match a.mode {
        ProcessMode::Sync => SYNC_BPMN,
        ProcessMode::Async => ASYNC_BPMN,
    };
    engine.processes().deploy("kairos-bench-service.bpmn", xml).await?;
    let ended_before = ended(&engine).await?;
    if a.mode == ProcessMode::Async {
        engine.start().await?;
    }
    let t = Instant::now();
    let deadline = t + a.timeout.unsigned_abs();
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..a.concurrency {
        let (engine, next, n) = (engine.clone(), next.clone(), a.instances);
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < n && Instant::now() < deadline {
                let req = StartRequest { process_definition_key: Some(KEY.into()), ..Default::default() };
                engine.processes().start(req).await?;
            }
            Ok::<(), kairos::Error>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| CliError::failure(format!("a starter task failed: {e}")))??;
    }
    // Until every instance ended, or the deadline: then the figure is what ended by then.
    let completed = loop {
        let done = ended(&engine).await?.saturating_sub(ended_before);
        if done >= a.instances || Instant::now() > deadline {
            break done.min(a.instances);
        }
        tokio::time::sleep(Duration::from_millis(if a.mode == ProcessMode::Sync { 1 } else { 10 })).await;
    };
    let seconds = t.elapsed().as_secs_f64();
    let partial = completed < a.instances;
    engine.shutdown(Duration::from_secs(10)).await;
    output::json(&Report {
        store: engine.store().backend().as_str(),
        mode: match a.mode {
            ProcessMode::Sync => "sync",
            ProcessMode::Async => "async",
        },
        instances: a.instances,
        completed,
        partial,
        seconds: (seconds * 1000.0).round() / 1000.0,
        instances_per_s: (completed as f64 / seconds).round(),
        concurrency: a.concurrency,
        workers: a.workers,
        history: "audit",
    })?;
    Ok(SUCCESS)
}

async fn ended(engine: &Engine) -> Result<u64, CliError> {
    count(engine.store().as_ref(), "SELECT COUNT(*) FROM ACT_HI_PROCINST WHERE END_TIME_ IS NOT NULL", &[]).await
}

/// Deletes every job (and the job log), then every process row (runtime, history, definitions).
async fn reset(engine: &Engine) -> Result<(), CliError> {
    let store = engine.store();
    super::reset_jobs(store.as_ref()).await?;
    let tables = [
        "ACT_RU_TASK",
        "ACT_RU_IDENTITYLINK",
        "ACT_RU_VARIABLE",
        "ACT_RU_EVENT_SUBSCR",
        "ACT_RU_EXECUTION",
        "ACT_HI_ACTINST",
        "ACT_HI_TASKINST",
        "ACT_HI_VARINST",
        "ACT_HI_DETAIL",
        "ACT_HI_PROCINST",
        "ACT_RE_PROCDEF",
        "ACT_RE_DEPLOYMENT",
        "ACT_GE_BYTEARRAY",
    ];
    super::empty_tables(store.as_ref(), &tables).await
}
