//! `kairos serve`: the engine, its executor and the HTTP API in one process.
//!
//! Shutdown order on SIGTERM or Ctrl-C: the server stops accepting, the executor stops
//! acquiring, running jobs get the grace period, the rest are handed back (their leases
//! released without spending a retry), and the process exits 0. A second signal exits at once.

use crate::cli::{GlobalArgs, ServeArgs};
use crate::exit::{CliError, FAILURE, SUCCESS};
use crate::output;
use kairos::Engine;
use std::sync::Arc;
use std::time::Duration;

pub async fn run(global: &GlobalArgs, args: ServeArgs) -> Result<u8, CliError> {
    // Installed first: a SIGTERM that arrives right after the start line must be handled, not
    // kill the process with the default action.
    let mut signals = Signals::install()?;
    // Before the pool and the listener open theirs: a shell's soft limit of 1,024 descriptors
    // should not bound a node whose hard limit allows more (the HTTP connection limit is fitted
    // to what is in force).
    kairos_server::raise_descriptor_limit();
    // Deny by default: an open API on a network is a choice made out loud, before anything
    // starts or touches the store.
    refuse_open_network_api(&args).await?;
    // Read before anything starts: a bad configuration is a bad start, naming the field.
    let reconcile = match &args.reconcile {
        Some(path) => Some(super::reconcile::load(path)?),
        None => None,
    };
    let reconciler = Arc::new(std::sync::OnceLock::<kairos::reconcile::Reconciler>::new());
    let engine = Arc::new(build_engine(global, &args, reconcile.is_some().then(|| reconciler.clone())).await?);
    if args.users
        && args.api_token.is_none()
        && engine.identity().users(Some(kairos::identity::ADMIN_GROUP)).await?.is_empty()
    {
        tracing::warn!(
            "--users without an API token and no user is in {}: nobody can deploy or manage users; \
             add one with: kairos users add ID --admin --password-stdin",
            kairos::identity::ADMIN_GROUP
        );
    }
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| CliError::failure(format!("cannot listen on {}: {e}", args.listen)))?;
    let addr =
        listener.local_addr().map_err(|e| CliError::failure(format!("cannot read the listening address: {e}")))?;
    engine.start().await?;
    // The command worker (SPEC C6), only with a business database; it ends with the process.
    if let Some(url) = &args.business_db {
        let business = kairos::business::connect(url).await?;
        let _ = engine.set_business_db(business.clone());
        let mut config = kairos::commands::WorkerConfig::new(engine.node_id());
        if let Some(lease) = args.command_lease {
            config.lease = lease;
        }
        tokio::spawn(kairos::commands::Worker::new(business, engine.clone(), config).run());
    }
    if let Some(config) = reconcile {
        let r = engine.reconciler_for(config)?;
        let _ = engine.set_reconciler(r.clone());
        let _ = reconciler.set(r);
        schedule_reconcile(&engine, args.reconcile_every).await?;
    }
    print_ready(global, &engine, &args, addr)?;

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (access, limits) = http_settings(&args);
    let mut server = tokio::spawn({
        let engine = engine.clone();
        async move {
            let stopped = async move {
                let _ = stop_rx.await;
            };
            kairos_server::serve_with(engine, listener, stopped, &access, limits).await
        }
    });
    let grace = args.shutdown_grace.unsigned_abs();
    let code = tokio::select! {
        signal = signals.recv() => {
            tracing::info!(signal, grace_ms = grace.as_millis() as u64, "shutting down");
            SUCCESS
        }
        ended = &mut server => {
            let why = match ended {
                Ok(Ok(())) => "the HTTP server stopped".to_string(),
                Ok(Err(e)) => format!("the HTTP server failed: {e}"),
                Err(e) => format!("the HTTP server task failed: {e}"),
            };
            engine.shutdown(grace).await;
            return Err(CliError::failure(why));
        }
    };
    let _ = stop_tx.send(());
    tokio::spawn(async move {
        let signal = signals.recv().await;
        eprintln!("error: second {signal}; exiting without waiting for running jobs");
        std::process::exit(i32::from(FAILURE));
    });
    // Open HTTP connections get the same grace as jobs, plus a moment; then they are dropped.
    let (_, served) =
        tokio::join!(engine.shutdown(grace), tokio::time::timeout(grace + Duration::from_secs(2), server));
    match served {
        Ok(Ok(Err(e))) => tracing::warn!(error = %e, "the HTTP server ended with an error"),
        Err(_) => tracing::warn!("HTTP connections still open after the grace period were dropped"),
        _ => {}
    }
    tracing::info!("stopped");
    Ok(code)
}

/// Refuses a node that would serve its API beyond loopback with no auth (no token, no
/// `--users`), unless `--allow-no-auth` says so: every address `--listen` resolves to must be
/// loopback.
async fn refuse_open_network_api(args: &ServeArgs) -> Result<(), CliError> {
    if args.api_token.is_some() || args.users || args.allow_no_auth {
        return Ok(());
    }
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(&args.listen)
        .await
        .map_err(|e| CliError::failure(format!("cannot resolve --listen {}: {e}", args.listen)))?
        .collect();
    if addrs.iter().all(|a| a.ip().to_canonical().is_loopback()) && !addrs.is_empty() {
        return Ok(());
    }
    Err(CliError::bad_input(format!(
        "--listen {} is reachable beyond this machine and the API has no auth: anyone who reaches it \
         could deploy models, run their scripts and delete work. Set KAIROS_API_TOKEN (or --api-token, \
         at least 16 printable characters), let users in with --users (kairos users add ID --admin), \
         listen on 127.0.0.1, or pass --allow-no-auth to serve it open on purpose",
        args.listen
    )))
}

/// Who the HTTP API answers and what one connection may hold, from the flags. The --listen
/// host, when it is a name, is one of the allowed hosts.
fn http_settings(args: &ServeArgs) -> (kairos_server::Access, kairos_server::ConnLimits) {
    let mut allowed_hosts = args.allowed_hosts.clone();
    if let Some((host, _)) = args.listen.rsplit_once(':') {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.parse::<std::net::IpAddr>().is_err() {
            allowed_hosts.push(host.to_ascii_lowercase());
        }
    }
    let site = kairos_server::SitePolicy { allowed_hosts, allowed_origins: args.allowed_origins.clone() };
    let limits = kairos_server::ConnLimits {
        header_read_timeout: args.header_read_timeout.unsigned_abs(),
        body_read_timeout: args.body_read_timeout.unsigned_abs(),
        max_connections: args.max_connections as usize,
    };
    let access = kairos_server::Access {
        token: args.api_token.clone(),
        users: args.users,
        secure_cookies: args.secure_cookies,
        site,
    };
    (access, limits)
}

/// The scheduler's job and trigger of reconciliation passes (group `kairos`), replaced at each
/// start so the interval follows the flag; PT0S removes the trigger.
async fn schedule_reconcile(engine: &Engine, every: kairos::SignedDuration) -> Result<(), CliError> {
    let s = engine.scheduler();
    match s.unschedule(RECONCILE_GROUP, RECONCILE_JOB).await {
        Ok(()) | Err(kairos::Error::Scheduler(kairos::scheduler::SchedulerError::NotFound(_))) => {}
        Err(e) => return Err(e.into()),
    }
    if !every.is_positive() {
        return Ok(());
    }
    let job: kairos::scheduler::JobSpec = serde_json::from_value(serde_json::json!({
        "name": RECONCILE_JOB, "group": RECONCILE_GROUP, "handler": RECONCILE_HANDLER, "durable": true,
        "concurrent": false, "replace": true,
        "description": "a reconciliation pass (kairos serve --reconcile)",
    }))
    .map_err(|e| CliError::failure(e.to_string()))?;
    let trigger: kairos::scheduler::TriggerSpec = serde_json::from_value(serde_json::json!({
        "name": RECONCILE_JOB, "group": RECONCILE_GROUP, "jobName": RECONCILE_JOB, "jobGroup": RECONCILE_GROUP,
        "simple": {"interval": every.to_string(), "repeatCount": -1},
        "misfirePolicy": "fireNow",
    }))
    .map_err(|e| CliError::failure(e.to_string()))?;
    match s.schedule_job(&job, &trigger).await {
        // Another node starting at the same time scheduled it first.
        Ok(_) | Err(kairos::Error::Scheduler(kairos::scheduler::SchedulerError::Conflict(_))) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

const RECONCILE_HANDLER: &str = "kairos-reconcile";
const RECONCILE_GROUP: &str = "kairos";
const RECONCILE_JOB: &str = "reconcile";

async fn build_engine(
    global: &GlobalArgs,
    args: &ServeArgs,
    reconciler: Option<Arc<std::sync::OnceLock<kairos::reconcile::Reconciler>>>,
) -> Result<Engine, CliError> {
    let positive = |d: kairos::SignedDuration| d.is_positive().then_some(d);
    let mut builder = Engine::builder(&global.db)
        .executor_enabled(!args.no_executor)
        .history_level(args.history_level)
        .history_cleanup_every(positive(args.history_cleanup_every).map(|d| d.unsigned_abs()))
        .job_log_retention(positive(args.job_log_retention))
        .min_repeat_interval(args.min_repeat_interval)
        .scripts(args.scripts);
    if args.chaos {
        // The chaos handler writes its side-effect rows through the engine's own store.
        let store = kairos::open_store(&global.db).await?;
        builder = builder.store(store.clone()).handler("chaos", super::chaos::handler(store));
    }
    if args.outbox_base_url.is_some() || !args.outbox_allow_hosts.is_empty() || args.outbox_allow_private {
        let sink = kairos::outbox::http::HttpSink::new(kairos::outbox::http::HttpSinkSettings {
            base_url: args.outbox_base_url.clone(),
            allow_hosts: args.outbox_allow_hosts.clone(),
            allow_private: args.outbox_allow_private,
            ..Default::default()
        })
        .map_err(|e| CliError::bad_input(format!("invalid outbox settings: {e}")))?;
        builder = builder.sink("http", sink);
    }
    if let Some(lease) = args.outbox_lease {
        if !lease.is_positive() {
            return Err(CliError::bad_input("invalid --outbox-lease: must be positive"));
        }
        builder = builder.outbox(kairos::outbox::OutboxSettings { lease, ..Default::default() });
    }
    if let Some(slot) = reconciler {
        // A firing before the reconciler is set (the node still starting) does nothing.
        builder = builder.handler(
            RECONCILE_HANDLER,
            kairos::handler_fn(move |_ctx| {
                let slot = slot.clone();
                async move {
                    let Some(r) = slot.get() else { return Ok(None) };
                    let report = r.pass(false).await?;
                    tracing::info!(
                        records = report.records,
                        repaired = report.repaired,
                        incidents = report.incidents_opened,
                        refused = report.repairs_refused,
                        "reconcile: pass done"
                    );
                    Ok(Some(format!(
                        "{} records, {} repaired, {} incidents opened",
                        report.records, report.repaired, report.incidents_opened
                    )))
                }
            }),
        );
    }
    for (name, binding) in handler_bindings(args)? {
        builder = builder.bind_handler(name, binding);
    }
    if let Some(id) = &args.node_id {
        if id.trim().is_empty() {
            return Err(CliError::bad_input("invalid --node-id: must not be empty"));
        }
        builder = builder.node_id(id.clone());
    }
    if let Some(n) = args.workers {
        builder = builder.workers(n as usize);
    }
    if let Some(url) = &args.two_phase_recovery {
        // Refused here when --db is SQLite or the URL is not PostgreSQL, before anything starts.
        let business = kairos::two_phase::connect_business(url).await?;
        builder = builder.two_phase_recovery(business, Default::default());
    }
    if let Some(d) = args.lock_time {
        builder = builder.lock_time(d);
    }
    let (poll, batch, prefetch, heartbeat, dead_after, skew, lookahead) = (
        args.poll_interval,
        args.acquire_batch,
        args.prefetch,
        args.heartbeat_interval,
        args.dead_after,
        args.clock_skew,
        args.lookahead,
    );
    builder = builder.configure(|c| {
        if let Some(skew) = skew {
            c.clock = Arc::new(kairos::SkewedClock { inner: kairos::SystemClock, skew });
        }
        if let Some(d) = poll {
            c.poll_interval = d.unsigned_abs();
        }
        if let Some(b) = batch {
            c.acquire_batch = b as usize;
        }
        if let Some(q) = prefetch {
            c.prefetch = q as usize;
        }
        if let Some(d) = heartbeat {
            c.heartbeat_interval = d.unsigned_abs();
        }
        if let Some(d) = dead_after {
            c.dead_after = d;
        }
        if let Some(d) = lookahead {
            c.lookahead = d;
        }
    });
    Ok(builder.build().await?)
}

/// The handler bindings of `--handler-bindings FILE` and then `--bind-handler` (a flag wins
/// over the file for the same name), each checked before anything starts.
fn handler_bindings(args: &ServeArgs) -> Result<Vec<(String, kairos::process::HandlerBinding)>, CliError> {
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    if let Some(path) = &args.handler_bindings {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::bad_input(format!("invalid --handler-bindings: cannot read {shown}: {e}")))?;
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
            CliError::bad_input(format!("invalid --handler-bindings {shown}: not a JSON object of NAME: TARGET: {e}"))
        })?;
        for (name, target) in map {
            let Some(target) = target.as_str() else {
                return Err(CliError::bad_input(format!(
                    "invalid --handler-bindings {shown}: '{name}' must be a string TARGET (topic:T, http:URL, handler:H)"
                )));
            };
            pairs.push((format!("--handler-bindings {shown}"), name, target.to_owned()));
        }
    }
    for flag in &args.bind_handlers {
        let Some((name, target)) = flag.split_once('=') else {
            return Err(CliError::bad_input(format!("invalid --bind-handler '{flag}': write NAME=TARGET")));
        };
        pairs.push(("--bind-handler".into(), name.trim().to_owned(), target.to_owned()));
    }
    let mut out: Vec<(String, kairos::process::HandlerBinding)> = Vec::new();
    for (flag, name, target) in pairs {
        if name.is_empty() {
            return Err(CliError::bad_input(format!("invalid {flag}: a binding names no handler")));
        }
        let mut binding: kairos::process::HandlerBinding =
            target.parse().map_err(|e| CliError::bad_input(format!("invalid {flag} '{name}': {e}")))?;
        if let kairos::process::HandlerBinding::Http { allow_private, .. } = &mut binding {
            *allow_private = args.bind_allow_private;
        }
        out.retain(|(n, _)| *n != name);
        out.push((name, binding));
    }
    Ok(out)
}

fn print_ready(
    global: &GlobalArgs,
    engine: &Engine,
    args: &ServeArgs,
    addr: std::net::SocketAddr,
) -> Result<(), CliError> {
    let store = engine.store().backend().as_str();
    let workers = engine.settings().executor.workers;
    if global.json {
        output::json(&serde_json::json!({
            "listen": addr.to_string(),
            "node": engine.node_id(),
            "store": store,
            "executor": !args.no_executor,
            "workers": workers,
            "scripts": args.scripts,
            "apiToken": args.api_token.is_some(),
            "users": args.users,
        }))
    } else {
        let executor =
            if args.no_executor { "executor off".to_string() } else { format!("executor on, {workers} workers") };
        let access = match (args.api_token.is_some(), args.users) {
            (true, true) => ", API token or a user's credentials required",
            (true, false) => ", API token required",
            (false, true) => ", a user's credentials required",
            (false, false) => "",
        };
        output::line(&format!(
            "kairos listening on http://{addr} (node {}, store {store}, {executor}{access})",
            engine.node_id()
        ))
    }
}

/// SIGTERM and SIGINT (Ctrl-C), registered up front.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn install() -> Result<Self, CliError> {
        use tokio::signal::unix::{SignalKind, signal};
        let err = |e: std::io::Error| CliError::failure(format!("cannot install signal handlers: {e}"));
        Ok(Signals {
            term: signal(SignalKind::terminate()).map_err(err)?,
            int: signal(SignalKind::interrupt()).map_err(err)?,
        })
    }

    #[cfg(not(unix))]
    fn install() -> Result<Self, CliError> {
        Ok(Signals {})
    }

    /// Waits for the next signal and names it.
    #[cfg(unix)]
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }

    #[cfg(not(unix))]
    async fn recv(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    async fn engine_for(flags: &[&str]) -> (Engine, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/k.db", dir.path().display());
        let mut argv = vec!["kairos", "--db", &db, "serve", "--no-executor"];
        argv.extend_from_slice(flags);
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        let crate::cli::Command::Serve(args) = cli.command else { unreachable!("a serve command line") };
        (build_engine(&cli.global, &args, None).await.unwrap(), dir)
    }

    /// `--help` says PT0S switches the cleanup off and keeps every job log row.
    #[tokio::test]
    async fn zero_switches_the_cleanup_off_and_keeps_the_job_log() {
        let (engine, _dir) = engine_for(&["--history-cleanup-every", "PT0S", "--job-log-retention", "PT0S"]).await;
        let s = engine.settings();
        assert_eq!((s.history_cleanup_every, s.job_log_retention), (None, None));
        let (engine, _dir) = engine_for(&["--history-cleanup-every", "PT10M", "--job-log-retention", "P7D"]).await;
        let s = engine.settings();
        assert_eq!(s.history_cleanup_every, Some(Duration::from_secs(600)));
        assert_eq!(s.job_log_retention, Some(kairos::SignedDuration::from_hours(7 * 24)));
    }
}
