//! The engine: one store, one set of handlers, optionally one running executor.
//!
//! Lifecycle: `builder(url)` → `build()` (connects and migrates) → `start()` (the executor
//! begins acquiring, unless switched off) → `shutdown(grace)`.

use crate::{CallerTransaction, Error};
use kairos_core::{EnqueueRequest, Job, NewJob};
use kairos_executor::{Executor, ExecutorConfig, Handler, Handlers, Metrics, Waker};
use kairos_store::Store;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What an engine was built with; shown by `/management/engine`.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    pub executor: ExecutorConfig,
    /// SPEC J10 / Activiti's asyncExecutorActivate: when false, jobs are stored but never run
    /// by this node.
    pub executor_enabled: bool,
    /// How much process history is written.
    pub history: crate::process::HistoryLevel,
    /// The scheduler's name, misfire threshold and check-in interval (SPEC S).
    pub scheduler: crate::scheduler::SchedulerSettings,
    /// How often a running engine deletes history past its definition's `historyTimeToLive`
    /// (SPEC P11); `None`: never.
    pub history_cleanup_every: Option<Duration>,
    /// How long the job log keeps a row after its attempt ended (deleted by the history
    /// cleanup); `None`: forever.
    pub job_log_retention: Option<jiff::SignedDuration>,
    /// The shortest interval between two fires of a repeating job, a simple trigger or a BPMN
    /// timer cycle (default 1 s); a shorter one is refused naming the field.
    pub min_repeat_interval: jiff::SignedDuration,
    /// The limits of the sandbox that runs models' JavaScript (script tasks, script
    /// conditions, `camunda:script` parameters); `None` switches scripts off: deploying a
    /// model with a script is then refused, naming the element and its line.
    pub scripts: Option<kairos_script::Limits>,
}

/// Builds an [`Engine`].
pub struct EngineBuilder {
    url: String,
    store: Option<Arc<dyn Store>>,
    handlers: Handlers,
    settings: EngineSettings,
    migrate: bool,
    outbox: crate::outbox::OutboxSettings,
    sinks: std::collections::HashMap<String, Arc<dyn crate::outbox::Sink>>,
    two_phase: Option<(sqlx::PgPool, crate::two_phase::RecoverySettings)>,
    /// Handler names bound to topics, endpoints or other handlers, in the order given.
    bindings: Vec<(String, crate::process::HandlerBinding)>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder").field("handlers", &self.handlers).field("settings", &self.settings).finish()
    }
}

impl EngineBuilder {
    /// The node id (LOCK_OWNER_ of this node's leases). Default: `<host>-<pid>`.
    pub fn node_id(mut self, id: impl Into<String>) -> Self {
        self.settings.executor.node_id = id.into();
        self
    }
    pub fn workers(mut self, n: usize) -> Self {
        self.settings.executor.workers = n.max(1);
        self
    }
    pub fn lock_time(mut self, d: jiff::SignedDuration) -> Self {
        self.settings.executor.lock_time = d;
        self
    }
    /// How much process history to write (default: audit — instances, activities, tasks,
    /// variables).
    pub fn history_level(mut self, level: crate::process::HistoryLevel) -> Self {
        self.settings.history = level;
        self
    }
    /// The scheduler's settings (SCHED_NAME, misfire threshold, check-in interval).
    /// How often the running engine deletes history past its definition's time to live
    /// (default hourly; `None` switches it off).
    pub fn history_cleanup_every(mut self, every: Option<Duration>) -> Self {
        self.settings.history_cleanup_every = every;
        self
    }

    /// The shortest interval between two fires of a repeating job, a simple trigger or a BPMN
    /// timer cycle (default 1 s, [`kairos_core::DEFAULT_MIN_REPEAT_INTERVAL`]).
    pub fn min_repeat_interval(mut self, min: jiff::SignedDuration) -> Self {
        self.settings.min_repeat_interval = min;
        self
    }

    /// Runs models' JavaScript in the sandbox (the default) or switches scripts off: a model
    /// with a script is then refused at deployment.
    pub fn scripts(mut self, on: bool) -> Self {
        self.settings.scripts = on.then(|| self.settings.scripts.take().unwrap_or_default());
        self
    }

    /// The sandbox's limits (memory, CPU steps, wall time, output size), switching scripts on.
    pub fn script_limits(mut self, limits: kairos_script::Limits) -> Self {
        self.settings.scripts = Some(limits);
        self
    }

    /// How long the job log keeps a row after its attempt ended (default 30 days; `None`
    /// keeps every row).
    pub fn job_log_retention(mut self, keep: Option<jiff::SignedDuration>) -> Self {
        self.settings.job_log_retention = keep;
        self
    }

    pub fn scheduler(mut self, settings: crate::scheduler::SchedulerSettings) -> Self {
        self.settings.scheduler = settings;
        self
    }
    /// Switches the executor off (jobs wait) or on.
    pub fn executor_enabled(mut self, on: bool) -> Self {
        self.settings.executor_enabled = on;
        self
    }
    /// Any other executor setting.
    pub fn configure(mut self, f: impl FnOnce(&mut ExecutorConfig)) -> Self {
        f(&mut self.settings.executor);
        self
    }
    /// Binds a handler name models use (a Java class, a delegate expression, a bean method
    /// `svc.post`, a Flowable task type) to an external-worker topic, an HTTP endpoint or
    /// another handler (see [`crate::process::HandlerBinding`]). A binding wins over a handler
    /// of the same name; binding a name twice keeps the last.
    pub fn bind_handler(mut self, name: impl Into<String>, binding: crate::process::HandlerBinding) -> Self {
        let name = name.into();
        self.bindings.retain(|(n, _)| *n != name);
        self.bindings.push((name, binding));
        self
    }
    /// Registers a handler under `name` (replacing a built-in of that name).
    pub fn handler(mut self, name: impl Into<String>, handler: impl Handler) -> Self {
        self.handlers.register(name, handler);
        self
    }
    /// Uses an already opened store instead of the URL.
    pub fn store(mut self, store: Arc<dyn Store>) -> Self {
        self.store = Some(store);
        self
    }
    /// Skips migrations on build (they run by default).
    /// The outbox publisher's settings (SPEC C4).
    pub fn outbox(mut self, settings: crate::outbox::OutboxSettings) -> Self {
        self.outbox = settings;
        self
    }

    /// Registers an outbox sink by name: events whose `target` is `name` go to it.
    pub fn sink(mut self, name: impl Into<String>, sink: impl crate::outbox::Sink) -> Self {
        self.sinks.insert(name.into(), Arc::new(sink));
        self
    }

    /// Recovers the two-phase transactions (SPEC C11) between `business` and this engine's
    /// database: a round when the engine starts, then one every `settings.every`. Refused at
    /// build on a SQLite store.
    pub fn two_phase_recovery(mut self, business: sqlx::PgPool, settings: crate::two_phase::RecoverySettings) -> Self {
        self.two_phase = Some((business, settings));
        self
    }

    pub fn skip_migrations(mut self) -> Self {
        self.migrate = false;
        self
    }

    /// Connects to the store and brings its schema up to date.
    pub async fn build(mut self) -> Result<Engine, Error> {
        let (store, postgres_pool) = match self.store {
            Some(s) => (s, None),
            None => crate::store_url::open_store_with_pool(&self.url).await?,
        };
        if self.two_phase.is_some() && postgres_pool.is_none() {
            return Err(crate::two_phase::needs_postgres());
        }
        if self.migrate {
            store.migrate().await?;
        }
        let outbox = Arc::new(crate::outbox::Outbox::new(
            store.clone(),
            self.sinks,
            self.outbox,
            self.settings.executor.node_id.clone(),
        ));
        let mut own = self.handlers;
        // The outbox's built-in handlers (a user's handler of the same name wins).
        if !own.contains("outbox") {
            own.register("outbox", crate::outbox::handlers::OutboxHandler(outbox.clone()));
        }
        if !own.contains("http") {
            own.register("http", crate::outbox::handlers::HttpHandler(outbox.clone()));
        }
        let topics = bind_handlers(&mut own, self.bindings)?;
        self.handlers = own;
        // Service tasks call the handlers registered so far; the executor additionally runs
        // the process engine's own jobs (async continuations, timers) through it.
        let service_handlers = Arc::new(self.handlers.clone());
        let processes = Arc::new(crate::process::Processes::new(
            store.clone(),
            service_handlers.clone(),
            topics,
            self.settings.executor.node_id.clone(),
            self.settings.history,
            self.settings.min_repeat_interval,
            self.settings.scripts.clone(),
        ));
        let scheduler = Arc::new(crate::scheduler::Scheduler::new(
            store.clone(),
            service_handlers.clone(),
            self.settings.executor.node_id.clone(),
            self.settings.scheduler.clone(),
            self.settings.min_repeat_interval,
        ));
        let mut handlers = self.handlers;
        for (name, h) in processes.job_handlers() {
            handlers.register(name, h);
        }
        for (name, h) in scheduler.job_handlers() {
            handlers.register(name, h);
        }
        Ok(Engine {
            outbox,
            identity: crate::identity::Identity::new(store.clone()),
            store,
            processes,
            scheduler,
            checkin: Mutex::new(None),
            handlers: Arc::new(handlers),
            metrics: Arc::new(Metrics::default()),
            settings: self.settings,
            executor: Mutex::new(None),
            waker: Mutex::new(None),
            business: std::sync::OnceLock::new(),
            reconciler: std::sync::OnceLock::new(),
            postgres_pool,
            two_phase: self.two_phase,
            two_phase_prefix: tokio::sync::OnceCell::new(),
        })
    }
}

/// Registers the handlers that bindings to endpoints and to other handlers make; returns the
/// names bound to topics (which change models, not handlers). A binding to a handler that does
/// not exist, or to a bad URL, is refused before the engine starts.
fn bind_handlers(
    handlers: &mut Handlers,
    bindings: Vec<(String, crate::process::HandlerBinding)>,
) -> Result<std::collections::BTreeMap<String, String>, Error> {
    use crate::process::{HandlerBinding, HttpEndpoint};
    let mut topics = std::collections::BTreeMap::new();
    let refused = |name: &str, why: String| Error::Config(format!("invalid handler binding '{name}': {why}"));
    for (name, binding) in bindings {
        if name.trim().is_empty() {
            return Err(refused(&name, "the handler name is empty".into()));
        }
        match binding {
            HandlerBinding::Topic(topic) => {
                topics.insert(name, topic);
            }
            HandlerBinding::Http { url, allow_private } => {
                let endpoint = HttpEndpoint::new(&url, allow_private).map_err(|e| refused(&name, e))?;
                handlers.register(name, endpoint);
            }
            HandlerBinding::Handler(target) => {
                let h = handlers
                    .get(&target)
                    .ok_or_else(|| refused(&name, format!("no handler '{target}' is registered")))?;
                handlers.register_shared(name, h);
            }
        }
    }
    Ok(topics)
}

/// The built-in `http` sink with its defaults (an empty allow-list: no event URL passes until
/// the builder registers one configured with [`EngineBuilder::sink`]).
fn default_sinks() -> std::collections::HashMap<String, Arc<dyn crate::outbox::Sink>> {
    let mut sinks: std::collections::HashMap<String, Arc<dyn crate::outbox::Sink>> = Default::default();
    if let Ok(http) = crate::outbox::http::HttpSink::new(Default::default()) {
        sinks.insert("http".into(), Arc::new(http));
    }
    sinks
}

/// The stop switch of the loops beside the executor, and their tasks.
type SideLoops = (tokio::sync::watch::Sender<bool>, Vec<tokio::task::JoinHandle<()>>);

/// A kairos engine.
#[derive(Debug)]
pub struct Engine {
    store: Arc<dyn Store>,
    /// Users and groups, with the node's memory of passwords it verified lately.
    identity: crate::identity::Identity,
    processes: Arc<crate::process::Processes>,
    scheduler: Arc<crate::scheduler::Scheduler>,
    /// The loops that run beside the executor (the scheduler's check-in, the history
    /// cleanup): their stop switch and tasks.
    checkin: Mutex<Option<SideLoops>>,
    handlers: Arc<Handlers>,
    metrics: Arc<Metrics>,
    settings: EngineSettings,
    executor: Mutex<Option<Executor>>,
    waker: Mutex<Option<Waker>>,
    /// The business database of the command worker (SPEC C6), when this node has one: the REST
    /// routes of `/commands` write and read its `workflow_command` rows.
    business: std::sync::OnceLock<Arc<dyn kairos_store::Sql>>,
    /// Reconciliation's configuration on this node (SPEC C7), set once.
    reconciler: std::sync::OnceLock<crate::reconcile::Reconciler>,
    outbox: Arc<crate::outbox::Outbox>,
    /// The kairos database's pool when the store is PostgreSQL opened from its URL: the
    /// two-phase commit prepares and commits on its connections.
    postgres_pool: Option<sqlx::PgPool>,
    /// The business database whose two-phase transactions this engine recovers, and how.
    two_phase: Option<(sqlx::PgPool, crate::two_phase::RecoverySettings)>,
    /// This kairos database's gid prefix, found (with its max_prepared_transactions checked) by
    /// the first two-phase transaction: neither changes while the engine runs.
    two_phase_prefix: tokio::sync::OnceCell<String>,
}

impl Engine {
    /// Starts building an engine on a store URL (`sqlite://PATH` or `postgres://…`).
    pub fn builder(url: impl Into<String>) -> EngineBuilder {
        EngineBuilder {
            url: url.into(),
            store: None,
            handlers: Handlers::with_builtins(),
            settings: EngineSettings {
                executor: ExecutorConfig::new(default_node_id()),
                executor_enabled: true,
                history: Default::default(),
                scheduler: Default::default(),
                history_cleanup_every: Some(Duration::from_secs(3600)),
                job_log_retention: Some(jiff::SignedDuration::from_hours(30 * 24)),
                min_repeat_interval: kairos_core::DEFAULT_MIN_REPEAT_INTERVAL,
                scripts: Some(kairos_script::Limits::default()),
            },
            migrate: true,
            outbox: Default::default(),
            sinks: default_sinks(),
            two_phase: None,
            bindings: Vec::new(),
        }
    }

    /// Every stored row the engine cannot read, at most `limit`: the three job tables,
    /// process variables and executions, this scheduler's triggers. Each names its table, id,
    /// column and stored text; none stops the rows beside it (docs/jobs.md, "Rows kairos cannot
    /// read").
    pub async fn unreadable_rows(&self, limit: usize) -> Result<Vec<kairos_store::Unreadable>, Error> {
        let mut rows = self.store.job_unreadable(u32::try_from(limit).unwrap_or(u32::MAX)).await?;
        rows.extend(kairos_store_engine::process::instance_unreadable(self.store.as_ref(), limit).await?);
        rows.extend(self.scheduler().unreadable_triggers(limit).await?);
        rows.truncate(limit);
        Ok(rows)
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The cache of [`crate::two_phase`]'s gid prefix.
    pub(crate) fn two_phase_prefix(&self) -> &tokio::sync::OnceCell<String> {
        &self.two_phase_prefix
    }

    /// The kairos database's pool, when the store is PostgreSQL opened from its URL.
    pub fn postgres_pool(&self) -> Option<&sqlx::PgPool> {
        self.postgres_pool.as_ref()
    }
    /// The process engine: deployments, instances, tasks (SPEC P).
    /// Names the business database this node's command worker reads (SPEC C6; once: a second
    /// call is refused with the database it names).
    pub fn set_business_db(&self, db: Arc<dyn kairos_store::Sql>) -> Result<(), Arc<dyn kairos_store::Sql>> {
        self.business.set(db)
    }

    /// The business database, when this node has one.
    pub fn business_db(&self) -> Option<&Arc<dyn kairos_store::Sql>> {
        self.business.get()
    }

    /// Gives this node a reconciler (SPEC C7): its passes, and incidents' write-backs. Set once.
    pub fn set_reconciler(&self, r: crate::reconcile::Reconciler) -> Result<(), crate::reconcile::Reconciler> {
        self.reconciler.set(r)
    }

    pub fn reconciler(&self) -> Option<&crate::reconcile::Reconciler> {
        self.reconciler.get()
    }

    /// A reconciler for `config` on this engine's store, reading business rows on the
    /// business database when this node has one, else on the engine's own.
    pub fn reconciler_for(&self, config: crate::reconcile::Config) -> Result<crate::reconcile::Reconciler, Error> {
        let business: Arc<dyn kairos_store::Sql> = match self.business_db() {
            Some(b) => b.clone(),
            None => self.store.clone(),
        };
        crate::reconcile::Reconciler::new(config, self.store.clone(), business)
    }

    /// Reconciliation's incidents (SPEC C7, seed 002 §31).
    pub fn incidents(&self) -> crate::reconcile::incidents::Incidents<'_> {
        crate::reconcile::incidents::Incidents { engine: self }
    }

    /// Users, groups and memberships (SPEC I7).
    pub fn identity(&self) -> &crate::identity::Identity {
        &self.identity
    }

    pub fn processes(&self) -> &crate::process::Processes {
        &self.processes
    }
    /// The scheduler: Quartz's jobs, triggers and calendars (SPEC S).
    pub fn scheduler(&self) -> &crate::scheduler::Scheduler {
        &self.scheduler
    }
    pub fn handlers(&self) -> &Handlers {
        &self.handlers
    }
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }
    pub fn settings(&self) -> &EngineSettings {
        &self.settings
    }
    /// The transactional outbox (SPEC C4): its sinks, publisher and events.
    pub fn outbox(&self) -> &Arc<crate::outbox::Outbox> {
        &self.outbox
    }

    /// Writes an outbox event in a transaction of its own (checked first; nothing is written
    /// when a check fails) and wakes this node's publisher.
    pub async fn outbox_write(&self, e: &crate::outbox::NewEvent) -> Result<(), Error> {
        self.outbox.write(e).await
    }

    /// Writes an outbox event on `db`, a caller's transaction: it is delivered only if that
    /// commits. Call [`crate::outbox::Outbox::wake`] after the commit to skip the poll interval.
    pub async fn outbox_write_in(&self, db: &dyn kairos_store::Sql, e: &crate::outbox::NewEvent) -> Result<(), Error> {
        self.outbox.write_in(db, e).await
    }

    pub fn node_id(&self) -> &str {
        &self.settings.executor.node_id
    }

    /// Starts the executor (a no-op when it is switched off or already running).
    /// With the executor switched off only the two-phase recovery loop starts (when configured):
    /// an application that coordinates two-phase transactions without running jobs still needs
    /// its in-doubt ones finished.
    pub async fn start(&self) -> Result<(), Error> {
        if !self.settings.executor_enabled {
            let mut side = self.checkin.lock().unwrap_or_else(|e| e.into_inner());
            if side.is_none() {
                let (stop, stopped) = tokio::sync::watch::channel(false);
                *side = Some((stop, self.spawn_two_phase_recovery(&stopped).into_iter().collect()));
            }
            return Ok(());
        }
        if self.lock_executor().is_some() {
            return Ok(());
        }
        let ex = Executor::start(
            self.store.clone(),
            self.handlers.clone(),
            self.settings.executor.clone(),
            self.metrics.clone(),
        )
        .await?;
        *self.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(ex.waker());
        *self.lock_executor() = Some(ex);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let mut tasks = vec![self.scheduler.spawn_checkin(stopped.clone())];
        if self.outbox.settings().enabled {
            tasks.push(self.outbox.spawn(stopped.clone()));
        }
        tasks.extend(self.spawn_two_phase_recovery(&stopped));
        if let Some(every) = self.settings.history_cleanup_every {
            tasks.push(self.processes.spawn_history_cleanup(every, self.settings.job_log_retention, stopped));
        }
        *self.checkin.lock().unwrap_or_else(|e| e.into_inner()) = Some((stop, tasks));
        Ok(())
    }

    /// The two-phase recovery loop, when the builder configured one (SPEC C11).
    fn spawn_two_phase_recovery(
        &self,
        stopped: &tokio::sync::watch::Receiver<bool>,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let ((business, settings), kairos) = (self.two_phase.as_ref()?, self.postgres_pool.as_ref()?);
        let run = crate::two_phase::recovery_loop(kairos.clone(), business.clone(), *settings, stopped.clone());
        Some(tokio::spawn(run))
    }

    /// Stops the executor gracefully: no new acquisitions, running jobs get `grace` to finish,
    /// the rest are handed back.
    pub async fn shutdown(&self, grace: Duration) {
        let ex = self.lock_executor().take();
        self.waker.lock().unwrap_or_else(|e| e.into_inner()).take();
        let checkin = self.checkin.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((stop, tasks)) = checkin {
            let _ = stop.send(true);
            for task in tasks {
                let _ = task.await;
            }
        }
        if let Some(ex) = ex {
            ex.shutdown(grace).await;
        }
    }

    /// Stops every loop at once without handing anything back: a crash, for tests.
    pub fn crash(&self) {
        if let Some(ex) = self.lock_executor().take() {
            ex.abort();
        }
        if let Some((_, tasks)) = self.checkin.lock().unwrap_or_else(|e| e.into_inner()).take() {
            tasks.iter().for_each(tokio::task::JoinHandle::abort);
        }
    }

    /// Attempts running on this node now.
    pub fn running(&self) -> usize {
        self.lock_executor().as_ref().map_or(0, |e| e.running())
    }

    /// Asks the executor to look for work now.
    pub fn wake(&self) {
        if let Some(w) = self.waker.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            w.wake();
        }
    }

    /// Validates a request against this engine's handlers; nothing is written.
    pub fn prepare(&self, req: &EnqueueRequest) -> Result<NewJob, Error> {
        let job = req.validate(|h| self.handlers.contains(h))?;
        if let Some(r) = job.repeat.as_deref().and_then(|r| kairos_core::Repeat::parse(r).ok()) {
            kairos_core::repeat::check_interval(&r, self.settings.min_repeat_interval)
                .map_err(|m| kairos_core::Error::invalid("repeat", m))?;
        }
        Ok(job)
    }

    /// Enqueues a standalone job (SPEC J13) in a transaction of its own.
    pub async fn enqueue(&self, req: &EnqueueRequest) -> Result<Job, Error> {
        let job = self.prepare(req)?;
        let stored = self.store.job_insert(&job).await?;
        self.wake();
        Ok(stored)
    }

    /// Enqueues many jobs in one transaction; all are validated first, so one bad request
    /// writes nothing.
    pub async fn enqueue_many(&self, reqs: &[EnqueueRequest]) -> Result<u64, Error> {
        let jobs = reqs.iter().map(|r| self.prepare(r)).collect::<Result<Vec<_>, _>>()?;
        let n = self.store.job_insert_many(&jobs).await?;
        self.wake();
        Ok(n)
    }

    /// Enqueues inside the caller's transaction (SPEC C1): the job commits or rolls back with
    /// the caller's own rows. Call [`Engine::wake`] after commit to skip the poll interval.
    /// The process commands run inside a transaction the caller holds on this engine's
    /// database (SPEC C1; see [`crate::transaction`]): `engine.within(&mut *tx).start(…)`.
    pub fn within<'t, C: CallerTransaction + ?Sized>(&'t self, conn: &'t mut C) -> crate::transaction::Within<'t> {
        crate::transaction::Within::new(self, conn.session())
    }

    pub async fn enqueue_in<C: CallerTransaction + ?Sized>(
        &self,
        conn: &mut C,
        req: &EnqueueRequest,
    ) -> Result<Job, Error> {
        let job = self.prepare(req)?;
        Ok(conn.insert_job(&job).await?)
    }

    fn lock_executor(&self) -> std::sync::MutexGuard<'_, Option<Executor>> {
        self.executor.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn default_node_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "node".into());
    format!("{host}-{}", std::process::id())
}
