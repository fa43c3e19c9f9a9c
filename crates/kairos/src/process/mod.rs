//! The process engine (SPEC P): deployments, instances, tasks, and the two job handlers that
//! run async continuations and timers through the job executor.
//!
//! Each command is load → [`kairos_process::Runtime`] (pure) → one REV_-checked
//! [`Sql::write_all`]; a conflict (another command on the same instance committed first)
//! re-runs the command on fresh rows. Commands run by jobs stage their writes with the job's
//! completion instead ([`JobContext::stage`]): they commit only under the job's lease, and a
//! conflict hands the job back to run again.
//!
//! Every row is read and written through [`kairos_store_engine::process`] (imported here as
//! `tables`): this module decides what to do, that one how the tables hold it. No SQL is
//! written here.

mod bindings;
mod cache;
mod calls;
mod cleanup;
mod comments;
mod conditions;
mod decisions;
mod deploy;
mod events;
mod external;
mod handler_binding;
mod heavy;
mod history;
pub mod limits;
mod migrate;
mod repository;
mod requests;
mod scripts;
mod terminate;
mod views;

pub use bindings::{BindingRequest, MAX_BINDING_CHARS};
pub use comments::MAX_COMMENT_CHARS;
pub use decisions::DecisionWhich;
pub use deploy::{DefinitionInfo, DeploymentInfo};
pub use events::MESSAGE_INBOX;
pub use external::{
    ExternalOrder, ExternalQuery, ExternalRow, ExternalTask, FETCH_POLL_PERIOD, FetchTopic, Hold, MAX_FETCH_WAIT,
};
pub use handler_binding::{HandlerBinding, HttpEndpoint};
pub use history::{DetailQuery, DetailVariable, HistoricDetail, HistoricTask, HistoricVariable, VariableQuery};
pub use kairos_process::{TaskScope, TaskUpdate};
pub use kairos_store_engine::business::Binding;
pub use kairos_store_engine::process::Comment;
pub use kairos_store_engine::process::DecisionDefinition;
pub use kairos_store_engine::process::HistoryLevel;
pub use kairos_store_engine::process::{InstanceFilter, TaskFilter};
pub use migrate::{MigrateRequest, MigrationOutcome};
pub use repository::{DEPLOYMENT_DELETED, DefinitionFilter, DeploymentDeleted, DeploymentRow, ResourceRow};
pub use requests::{MAX_REQUEST_ID_CHARS, REQUEST_RETENTION, check_request_id};
pub use terminate::{TerminateRequest, TerminationKind, TerminationRecord};
pub use views::{ExecutionQuery, ExecutionView, HistoricActivity, InstanceView, TaskForm, TaskView};

use crate::Error;
use async_trait::async_trait;
use jiff::Timestamp;
use kairos_bpmn::Definitions;
use kairos_executor::{Handler, HandlerError, Handlers, JobContext};
use kairos_process::{Command, Env, ErrorKind, Instance, ProcessError, Runtime, ServiceResult, Step};
use kairos_store::{Sql, Store, Write};
use kairos_store_engine::business as tables_business;
use kairos_store_engine::process as tables;
pub use kairos_store_engine::tenants::Owned;
use requests::{Recorded, Request};
use serde_json::{Map, Value as Json};
use std::sync::{Arc, Mutex};

pub(crate) use kairos_store_engine::process::{SIGNAL_THROW, TIMER_START};

/// Whether `after` has an external task that `before` did not: fetches waiting on this node
/// are woken for it once it is committed.
fn created_external(before: Option<&Instance>, after: &Instance) -> bool {
    after.jobs.iter().any(|j| {
        j.kind == kairos_process::JobKind::External && !before.is_some_and(|b| b.jobs.iter().any(|o| o.id == j.id))
    })
}

/// How often a command is re-run after losing the optimistic lock before giving up with a 409.
/// (Ten concurrent completions of one instance's tasks need up to ten rounds.)
const CONFLICT_RETRIES: usize = 50;

/// The process side of an engine; shared by the engine and its two job handlers.
pub struct Processes {
    store: Arc<dyn Store>,
    history: HistoryLevel,
    /// Handlers service tasks may name (the engine's job handlers).
    handlers: Arc<Handlers>,
    /// Handler names bound to external-worker topics (`--bind-handler NAME=topic:TOPIC`): a
    /// service task naming one becomes an external task when its model is parsed.
    topics: Arc<std::collections::BTreeMap<String, String>>,
    node_id: String,
    /// The shortest timer cycle a deployment may have (EngineSettings::min_repeat_interval).
    min_repeat: jiff::SignedDuration,
    /// Runs the models' scripts; `None` when scripts are switched off (deploying refuses them).
    scripts: Option<scripts::Sandbox>,
    /// Parsed DMN models by decision definition id.
    decision_models: decisions::ModelCache,
    /// Parsed definitions by ACT_RE_PROCDEF.ID_ (immutable once deployed), bounded by bytes.
    cache: Mutex<cache::DefinitionCache>,
    /// Wakes fetches waiting for external tasks (`external_fetch_wait`) when a command on
    /// this node created one.
    external_wake: tokio::sync::Notify,
    /// Set when the node's API stops: waiting fetches answer at once instead of holding the
    /// shutdown up to their asyncResponseTimeout (`end_fetch_waits`).
    external_closing: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Processes").field("node_id", &self.node_id).finish()
    }
}

/// What starting an instance needs.
#[derive(Debug, Clone, Default)]
pub struct StartRequest {
    pub process_definition_key: Option<String>,
    pub process_definition_id: Option<String>,
    pub business_key: Option<String>,
    pub variables: Map<String, Json>,
    pub start_user: Option<String>,
    /// A message, signal or timer start event to start at (the none start event otherwise).
    pub start_event: Option<String>,
    /// Makes the start idempotent (SPEC C2): a retry with the same requestId and the same
    /// request gets the first start's instance instead of a second one.
    pub request_id: Option<String>,
    /// The business object the instance runs for (SPEC C3): at most one instance per
    /// lifecycle; see [`BindingRequest`].
    pub binding: Option<BindingRequest>,
    /// The tenant to start in: a key resolves among its definitions, and a definition id of
    /// another tenant is not found. `None`: a key resolves among the definitions of no tenant,
    /// an id is taken as it is. The instance is always its definition's tenant's.
    pub tenant_id: Option<String>,
}

impl StartRequest {
    /// The request as its requestId's fingerprint sees it.
    fn fingerprint(&self) -> Json {
        let mut f = serde_json::json!({
            "processDefinitionKey": self.process_definition_key,
            "processDefinitionId": self.process_definition_id,
            "businessKey": self.business_key,
            "variables": self.variables,
            "startUser": self.start_user,
            "startEvent": self.start_event,
            "binding": self.binding.as_ref().map(|b| serde_json::json!({
                "businessType": b.business_type, "businessId": b.business_id,
                "processType": b.process_type, "lifecycle": b.lifecycle,
            })),
        });
        // Only when given, so that the requests recorded before tenants keep their fingerprint.
        if let Some(t) = &self.tenant_id {
            f["tenantId"] = Json::String(t.clone());
        }
        f
    }
}

impl Processes {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        handlers: Arc<Handlers>,
        topics: std::collections::BTreeMap<String, String>,
        node_id: String,
        history: HistoryLevel,
        min_repeat: jiff::SignedDuration,
        scripts: Option<kairos_script::Limits>,
    ) -> Processes {
        let cache = Mutex::new(cache::DefinitionCache::new(cache::DEFAULT_CACHE_BYTES));
        Processes {
            store,
            history,
            handlers,
            topics: Arc::new(topics),
            node_id,
            min_repeat,
            scripts: scripts.map(|limits| scripts::Sandbox { limits }),
            decision_models: Default::default(),
            cache,
            external_wake: tokio::sync::Notify::new(),
            external_closing: Default::default(),
        }
    }

    /// The script runner a runtime of this engine uses.
    fn script_runner(&self) -> Option<&dyn kairos_process::ScriptRunner> {
        self.scripts.as_ref().map(|s| s as &dyn kairos_process::ScriptRunner)
    }

    /// The history level this engine writes.
    pub fn history_level(&self) -> HistoryLevel {
        self.history
    }

    /// The job handlers the executor needs for process jobs.
    pub(crate) fn job_handlers(self: &Arc<Self>) -> Vec<(&'static str, ProcessJobHandler)> {
        vec![
            (kairos_process::JobKind::ASYNC_CONTINUATION, ProcessJobHandler(self.clone())),
            (kairos_process::JobKind::TRIGGER_TIMER, ProcessJobHandler(self.clone())),
            (TIMER_START, ProcessJobHandler(self.clone())),
            (SIGNAL_THROW, ProcessJobHandler(self.clone())),
        ]
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The parsed model of definition `id`.
    pub(crate) async fn definitions(&self, id: &str) -> Result<Arc<Definitions>, Error> {
        if let Some(d) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(id) {
            return Ok(d);
        }
        let xml = deploy::resource_of(self.store.as_ref(), id).await?;
        let bytes = xml.len();
        // Parsing a large model takes a while: off the async threads (see `deploy::blocking`).
        let topics = self.topics.clone();
        let defs = deploy::blocking(move || deploy::parse(&topics, &xml)).await?.map_err(|e| {
            Error::Process(ProcessError::new(ErrorKind::Model, format!("definition {id} no longer parses: {e}")))
        })?;
        let defs = Arc::new(defs);
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).insert(id, defs.clone(), bytes);
        Ok(defs)
    }

    /// A timer start event fired: a new instance of the definition, committed with the job.
    async fn start_by_timer(&self, ctx: &JobContext) -> Result<String, Error> {
        let def_id = ctx.payload.get("processDefinitionId").and_then(Json::as_str).unwrap_or_default().to_string();
        let req = StartRequest {
            process_definition_id: Some(def_id),
            start_event: ctx.element_id.clone(),
            ..Default::default()
        };
        let (view, writes) = self.prepare_start(self.store.as_ref(), req).await?;
        for w in writes {
            ctx.stage(w);
        }
        Ok(view.id)
    }

    /// Starts an instance; returns it as it stands after the start (ended when it ran through).
    /// With a requestId already recorded for this request: the first start's answer.
    pub async fn start(&self, req: StartRequest) -> Result<InstanceView, Error> {
        self.start_on(self.store.as_ref(), req).await
    }

    /// [`Processes::start`] on session `db` (the engine's store, or a caller's transaction).
    pub(crate) async fn start_on(&self, db: &dyn Sql, mut req: StartRequest) -> Result<InstanceView, Error> {
        let request = match &req.request_id {
            None => None,
            Some(id) => Some(Request::new(id, "start", &req.fingerprint())?),
        };
        if let Some(r) = &request
            && let Recorded::Done(first) = r.recorded(db).await?
        {
            return stored_view(first);
        }
        let binding = match req.binding.take() {
            None => None,
            Some(b) => {
                let key = match (&req.process_definition_key, &req.process_definition_id) {
                    (Some(k), _) => k.clone(),
                    (None, Some(id)) => deploy::definition(db, id).await?.key,
                    (None, None) => String::new(),
                };
                let b = b.checked(&key)?;
                let existing =
                    tables_business::bindings_of(db, &b.business_type, &b.business_id, Some(&b.process_type)).await?;
                match b.resolve(&existing)? {
                    bindings::Resolved::Existing(pi) => {
                        // Bindings are one per business object across tenants: another
                        // tenant's instance is neither answered nor doubled.
                        if let Some(t) = &req.tenant_id
                            && kairos_store_engine::tenants::tenant_of(db, Owned::Instance, &pi).await?.as_ref()
                                != Some(t)
                        {
                            return Err(Error::Process(ProcessError::new(
                                ErrorKind::Conflict,
                                format!(
                                    "business object {} of type {} is bound to an instance of another tenant",
                                    b.business_id, b.business_type
                                ),
                            )));
                        }
                        return self.bound_answer(db, &pi).await;
                    }
                    bindings::Resolved::New(n) => {
                        req.business_key.get_or_insert_with(|| b.business_id.clone());
                        Some((b, n))
                    }
                }
            }
        };
        let (view, mut writes) = self.prepare_start(db, req).await?;
        if let Some((b, n)) = &binding {
            let created_at = view.start_time.unwrap_or_else(Timestamp::now);
            writes.insert(
                0,
                tables_business::binding_insert(&tables_business::NewBinding {
                    business_type: &b.business_type,
                    business_id: &b.business_id,
                    process_type: &b.process_type,
                    process_instance_id: &view.id,
                    process_definition_id: &view.process_definition_id,
                    lifecycle_no: *n,
                    created_at,
                    ended: view.end_time.map(|at| (at, view.delete_reason.is_some())),
                }),
            );
        }
        if let Some(r) = &request {
            let answer = serde_json::to_value(&view).map_err(|e| invalid("requestId", &e.to_string()))?;
            writes.push(r.record(Some(&answer)));
        }
        let Err(e) = db.write_all(&writes).await.map_err(limits::checked_write) else {
            // A start's external tasks: the fetches waiting on this node look at once.
            self.external_work_arrived();
            return Ok(view);
        };
        let e = match &binding {
            // A concurrent start took the lifecycle first: its instance is the answer.
            Some((b, n)) => match self.bound_after_conflict(db, b, *n, e.into()).await {
                Ok(winner) => return Ok(winner),
                Err(e) => e,
            },
            None => e.into(),
        };
        match &request {
            Some(r) => stored_view(r.settle(db, e).await?),
            None => Err(e),
        }
    }

    /// An instance started in memory, and the writes that store it.
    async fn prepare_start(&self, db: &dyn Sql, req: StartRequest) -> Result<(InstanceView, Vec<Write>), Error> {
        let which = match (&req.process_definition_id, &req.process_definition_key) {
            (Some(id), _) => deploy::Lookup::Id(id),
            (None, Some(key)) => deploy::Lookup::LatestOf(key, req.tenant_id.as_deref().unwrap_or("")),
            (None, None) => {
                return Err(invalid("processDefinitionKey", "give processDefinitionKey or processDefinitionId"));
            }
        };
        let (def, now) = deploy::lookup(db, which).await?;
        if let Some(t) = &req.tenant_id
            && def.tenant_id != *t
        {
            return Err(Error::Process(ProcessError::new(
                ErrorKind::NotFound,
                format!("process definition {} does not exist", def.id),
            )));
        }
        if def.suspended {
            return Err(Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!("process definition {} is suspended: it accepts no new instances", def.id),
            )));
        }
        let defs = self.definitions(&def.id).await?;
        let (mut instance, writes) = {
            let process = process_of(&defs, &def.key)?;
            let mut ids = kairos_core::new_id;
            let mut env = Env { definitions: &defs, process, now, ids: &mut ids };
            let mut inst = Runtime::new_instance(&mut env, &def.id, req.business_key.clone());
            inst.tenant_id = def.tenant_id.clone();
            let mut rt = Runtime::new(env, inst).with_scripts(self.script_runner());
            let command = Command::Start {
                variables: req.variables.clone(),
                start_user: req.start_user.clone(),
                start_event: req.start_event.clone(),
            };
            let heavy = heavy::command(rt.instance(), &command);
            let step = heavy::run(heavy, || rt.apply(command));
            let (after, staged) = self.drive(db, &mut rt, step).await?;
            let mut w = heavy::run(heavy::instance(&after), || tables::instance_writes(None, &after, self.history));
            w.extend(staged);
            (after, w)
        };
        instance.root_rev = 1;
        Ok((views::instance_view(&instance, &def.key), writes))
    }

    /// Suspends or activates an instance (SPEC P8): its tasks cannot be completed and its jobs
    /// move to ACT_RU_SUSPENDED_JOB (where no executor looks) until it is activated again.
    pub async fn set_instance_suspended(&self, id: &str, suspended: bool) -> Result<(), Error> {
        let moves = tables::instance_jobs_move(id, suspended);
        let command = if suspended { Command::Suspend } else { Command::Activate };
        self.command_with(self.store.as_ref(), id, command, &[], &moves).await
    }

    /// Runs `command` on instance `id` with the optimistic-lock retry loop.
    pub async fn command(&self, id: &str, command: Command) -> Result<(), Error> {
        self.command_with(self.store.as_ref(), id, command, &[], &[]).await
    }

    /// [`Processes::command`], with `first` and `extra` writes committed before and after the
    /// command's own, in the same transaction.
    async fn command_with(
        &self,
        db: &dyn Sql,
        id: &str,
        command: Command,
        first: &[Write],
        extra: &[Write],
    ) -> Result<(), Error> {
        let mut lost_race = false;
        for _ in 0..CONFLICT_RETRIES {
            let Some(before) = tables::instance_load(db, id).await? else {
                // A completion that found its task open, then the instance gone: a concurrent
                // completion of this very task ended it in between (it committed after our
                // lookup and before our load) — a conflict, as when the race is seen later.
                let completed_meanwhile = match &command {
                    Command::CompleteTask { task_id, .. } if !lost_race => {
                        matches!(tables::task_ended(db, task_id).await?, tables::TaskEnded::Completed)
                    }
                    _ => false,
                };
                let lost = lost_race || completed_meanwhile;
                let message = match (&command, lost) {
                    // The concurrent command that won ended the instance with this very task.
                    (Command::CompleteTask { task_id, .. }, true) => {
                        format!("task {task_id} was already completed (process instance {id} has ended)")
                    }
                    _ => format!("process instance {id} is not running"),
                };
                let what = if lost { ErrorKind::Conflict } else { ErrorKind::NotFound };
                return Err(Error::Process(ProcessError::new(what, message)));
            };
            let defs = self.definitions(&before.definition_id).await?;
            let process = process_of(&defs, &before.definition_key)?;
            let now = db.db_now().await?;
            let mut ids = kairos_core::new_id;
            let env = Env { definitions: &defs, process, now, ids: &mut ids };
            let mut rt = Runtime::new(env, before.clone()).with_scripts(self.script_runner());
            let step = heavy::run(heavy::command(&before, &command), || rt.apply(command.clone()));
            let result = match self.drive(db, &mut rt, step).await {
                Ok(r) => r,
                // A task or subscription that a concurrent command took first: a conflict.
                Err(Error::Process(p)) if lost_race && p.kind == ErrorKind::NotFound => {
                    return Err(Error::Process(ProcessError { kind: ErrorKind::Conflict, ..p }));
                }
                Err(e) => return Err(e),
            };
            let (after, staged) = result;
            let (after, settled) = self.settle(db, Some(&before), after, staged).await?;
            let mut writes = first.to_vec();
            writes.extend(settled);
            writes.extend(extra.iter().cloned());
            let wake = created_external(Some(&before), &after);
            match db.write_all(&writes).await.map_err(limits::checked_write) {
                Ok(_) => {
                    if wake {
                        self.external_work_arrived();
                    }
                    return Ok(());
                }
                Err(e) if e.kind == kairos_store::ErrorKind::Conflict => {
                    lost_race = true;
                    // A little jitter so that the losers of one round do not collide again.
                    let jitter = u64::from(kairos_core::new_id().as_bytes()[35] % 8);
                    tokio::time::sleep(std::time::Duration::from_millis(1 + jitter)).await;
                    tracing::debug!(instance = id, error = %e, "command lost the instance lock; running it again");
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Process(ProcessError::new(
            ErrorKind::Conflict,
            format!("process instance {id} kept changing under this command ({CONFLICT_RETRIES} tries); try again"),
        )))
    }

    /// Applies `command` to the loaded instance `before` at `now`: the instance after it and
    /// the writes that store the difference (with what its handlers staged). No retry loop:
    /// for commands whose conflicts are handled by their caller (a job's lease, the caller's
    /// own command).
    async fn run_command(
        &self,
        db: &dyn Sql,
        before: &Instance,
        command: Command,
        now: Timestamp,
    ) -> Result<(Instance, Vec<Write>), Error> {
        let (after, staged) = self.apply(db, before, command, now).await?;
        let heavy = heavy::instance(before) || heavy::instance(&after);
        let mut writes = heavy::run(heavy, || tables::instance_writes(Some(before), &after, self.history));
        writes.extend(staged);
        Ok((after, writes))
    }

    /// Applies `command` to `before` at `now`, running its handlers: the instance after it and
    /// what the handlers staged (the instance's own writes not yet computed).
    async fn apply(
        &self,
        db: &dyn Sql,
        before: &Instance,
        command: Command,
        now: Timestamp,
    ) -> Result<(Instance, Vec<Write>), Error> {
        let defs = self.definitions(&before.definition_id).await?;
        let process = process_of(&defs, &before.definition_key)?;
        let mut ids = kairos_core::new_id;
        let env = Env { definitions: &defs, process, now, ids: &mut ids };
        let mut rt = Runtime::new(env, before.clone()).with_scripts(self.script_runner());
        let step = heavy::run(heavy::command(before, &command), || rt.apply(command));
        self.drive(db, &mut rt, step).await
    }

    /// Runs service-task handlers until the runtime reaches wait states; returns the instance
    /// and the handlers' staged writes.
    async fn drive(
        &self,
        db: &dyn Sql,
        rt: &mut Runtime<'_>,
        mut step: kairos_process::Result<Step>,
    ) -> Result<(Instance, Vec<Write>), Error> {
        let mut staged = Vec::new();
        loop {
            match step.map_err(Error::Process)? {
                Step::Done => {
                    limits::check_variables(rt.instance())?;
                    limits::check_strings(rt.instance())?;
                    return Ok((rt.instance().clone(), staged));
                }
                Step::Call(call) if call.decision.is_some() => {
                    let definition = rt.instance().definition_id.clone();
                    let answer = self.decide(db, &definition, &call).await;
                    step = heavy::run(heavy::instance(rt.instance()), || rt.resume(answer));
                }
                Step::Call(call) => {
                    let answer = match self.handlers.get(&call.handler) {
                        None => ServiceResult::Failed(format!("no handler named '{}' is registered", call.handler)),
                        Some(h) => {
                            let inst = rt.instance();
                            let ctx = JobContext::for_service_task(
                                format!("{}:{}", call.execution_id, call.activity_id),
                                &call.handler,
                                call.payload.clone(),
                                &inst.id,
                                &call.execution_id,
                                &call.activity_id,
                                &self.node_id,
                                Timestamp::now(),
                            );
                            match h.run(ctx.clone()).await {
                                Ok(message) => {
                                    staged.extend(ctx.take_staged());
                                    match ctx.take_answer() {
                                        Some(a) => ServiceResult::Output { result: a.result, variables: a.variables },
                                        None => ServiceResult::Done(message.map(Json::String)),
                                    }
                                }
                                Err(e) => match e.downcast_ref::<BpmnError>() {
                                    Some(b) => ServiceResult::BpmnError(b.0.clone()),
                                    None => ServiceResult::Failed(e.to_string()),
                                },
                            }
                        }
                    };
                    step = heavy::run(heavy::instance(rt.instance()), || rt.resume(answer));
                }
                Step::StartCalled(call) => {
                    let caller = (rt.instance().id.clone(), rt.instance().tenant_id.clone());
                    let (called, called_staged) = Box::pin(self.start_called(db, &call, &caller)).await?;
                    let (next, writes) = Box::pin(self.called_started(db, rt, &call, called, called_staged)).await?;
                    staged.extend(writes);
                    step = next;
                }
            }
        }
    }

    /// Runs a process job (async continuation, timer) inside its attempt: the outcome is staged
    /// with the job's completion.
    async fn run_job(&self, ctx: &JobContext) -> Result<(), Error> {
        let id = ctx
            .process_instance_id
            .clone()
            .ok_or_else(|| invalid("processInstanceId", "process job without instance"))?;
        let before = tables::instance_load(self.store.as_ref(), &id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("process instance {id} is not running")))
        })?;
        let db = self.store.as_ref();
        let (after, staged) =
            self.apply(db, &before, Command::RunJob { job_id: ctx.job_id.clone() }, ctx.started).await?;
        let (_, writes) = self.settle(db, Some(&before), after, staged).await?;
        for w in writes {
            ctx.stage(w);
        }
        Ok(())
    }

    /// Completes a task (SPEC P5): exactly one of two concurrent completions succeeds.
    pub async fn complete_task(&self, task_id: &str, variables: Map<String, Json>) -> Result<(), Error> {
        self.complete_task_on(self.store.as_ref(), task_id, variables, None).await
    }

    /// [`Processes::complete_task`], idempotent by `request_id` (SPEC C2): a retry of this
    /// completion succeeds again (where a second completion gets 409); of concurrent duplicates
    /// one completes the task and all succeed.
    pub async fn complete_task_once(
        &self,
        task_id: &str,
        variables: Map<String, Json>,
        request_id: &str,
    ) -> Result<(), Error> {
        self.complete_task_on(self.store.as_ref(), task_id, variables, Some(request_id)).await
    }

    /// [`Processes::complete_task`] (with a requestId: [`Processes::complete_task_once`]) on
    /// session `db`.
    pub(crate) async fn complete_task_on(
        &self,
        db: &dyn Sql,
        task_id: &str,
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<(), Error> {
        let Some(request_id) = request_id else {
            let pi = self.instance_of_task(db, task_id).await?;
            let command = Command::CompleteTask { task_id: task_id.into(), variables };
            return self.command_with(db, &pi, command, &[], &[]).await;
        };
        let request =
            Request::new(request_id, "complete", &serde_json::json!({"taskId": task_id, "variables": variables}))?;
        if let Recorded::Done(_) = request.recorded(db).await? {
            return Ok(());
        }
        let done = async {
            let pi = self.instance_of_task(db, task_id).await?;
            let command = Command::CompleteTask { task_id: task_id.into(), variables };
            self.command_with(db, &pi, command, &[], &[request.record(None)]).await
        };
        match done.await {
            Ok(()) => Ok(()),
            Err(e) => request.settle(db, e).await.map(drop),
        }
    }

    pub async fn claim_task(&self, task_id: &str, assignee: &str) -> Result<(), Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        self.command(&pi, Command::ClaimTask { task_id: task_id.into(), assignee: assignee.into() }).await
    }

    /// Camunda's `handleBpmnError` on a user task: `variables` are set, then error `code` is
    /// thrown from the task, to its error boundary events and the scopes around it (out of a
    /// called instance, to its call activity). Nothing catching it is an error and changes
    /// nothing.
    pub async fn task_bpmn_error(
        &self,
        task_id: &str,
        code: &str,
        message: Option<&str>,
        variables: Map<String, Json>,
    ) -> Result<(), Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        let command = Command::TaskBpmnError {
            task_id: task_id.into(),
            code: code.into(),
            message: message.map(str::to_string),
            variables,
        };
        self.command(&pi, command).await
    }

    /// Camunda's `handleEscalation` on a user task: `variables` are set, then escalation
    /// `code` is thrown from the task. An interrupting catch cancels the task; a
    /// non-interrupting one starts its path beside it. Nothing catching it is an error and
    /// changes nothing.
    pub async fn task_escalation(&self, task_id: &str, code: &str, variables: Map<String, Json>) -> Result<(), Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        self.command(&pi, Command::TaskEscalation { task_id: task_id.into(), code: code.into(), variables }).await
    }

    /// Flowable's trigger: the execution waiting in a receive task goes on, with `variables`
    /// set on it first.
    pub async fn trigger(&self, execution_id: &str, variables: Map<String, Json>) -> Result<(), Error> {
        let pi = tables::execution_instance(self.store.as_ref(), execution_id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("execution {execution_id} does not exist")))
        })?;
        self.command(&pi, Command::Trigger { execution_id: execution_id.into(), variables }).await
    }

    /// Changes a task's properties and candidates ([`kairos_process::TaskUpdate`]): Flowable's
    /// `PUT /runtime/tasks/{id}` and identity links.
    pub async fn update_task(&self, task_id: &str, update: kairos_process::TaskUpdate) -> Result<(), Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        self.command(&pi, Command::UpdateTask { task_id: task_id.into(), update }).await
    }

    async fn instance_of_task(&self, db: &dyn Sql, task_id: &str) -> Result<String, Error> {
        if let Some(pi) = tables::task_instance(db, task_id).await? {
            return Ok(pi);
        }
        // A task that ended is a conflict (someone completed it first), not an unknown id.
        match tables::task_ended(db, task_id).await? {
            tables::TaskEnded::Cancelled(reason) => Err(Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!("task {task_id} was cancelled ({reason})"),
            ))),
            tables::TaskEnded::Completed => Err(Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!("task {task_id} was already completed"),
            ))),
            tables::TaskEnded::Unknown => {
                Err(Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {task_id} does not exist"))))
            }
        }
    }

    /// Changes an instance's business key (SPEC P9): every execution carries it (seed 003
    /// §4.2 finds tasks by it), and the history row follows.
    pub async fn set_business_key(&self, id: &str, business_key: Option<String>) -> Result<(), Error> {
        if let Some(bk) = &business_key
            && (bk.is_empty() || bk.chars().count() > 255)
        {
            return Err(invalid("businessKey", "a business key has 1 to 255 characters"));
        }
        let all = tables::instance_business_key(id, &business_key);
        self.command_with(self.store.as_ref(), id, Command::SetBusinessKey { business_key }, &[], &[all]).await
    }

    /// Deletes an instance with a reason (SPEC P10), its called instances first.
    pub async fn delete_instance(&self, id: &str, reason: &str) -> Result<(), Error> {
        self.delete_instance_on(self.store.as_ref(), id, reason).await
    }

    /// [`Processes::delete_instance`] on session `db`: a termination of kind DELETE, recorded
    /// with what the instance still had open (seed 002 §27).
    pub(crate) async fn delete_instance_on(&self, db: &dyn Sql, id: &str, reason: &str) -> Result<(), Error> {
        self.delete_instance_with(db, id, reason, false).await
    }

    /// [`Processes::delete_instance`] without running its tasks' delete listeners (Camunda's
    /// `skipCustomListeners=true`) when `skip_listeners`.
    pub async fn delete_instance_skipping_listeners(&self, id: &str, reason: &str) -> Result<(), Error> {
        self.delete_instance_with(self.store.as_ref(), id, reason, true).await
    }

    pub(crate) async fn delete_instance_with(
        &self,
        db: &dyn Sql,
        id: &str,
        reason: &str,
        skip_listeners: bool,
    ) -> Result<(), Error> {
        let req = TerminateRequest {
            kind: TerminationKind::Delete,
            reason: reason.to_owned(),
            skip_listeners,
            ..Default::default()
        };
        Box::pin(self.terminate_on(db, id, &req)).await
    }

    pub async fn set_variables(&self, id: &str, variables: Map<String, Json>) -> Result<(), Error> {
        self.set_variables_on(self.store.as_ref(), id, variables).await
    }

    /// [`Processes::set_variables`] on session `db`.
    pub(crate) async fn set_variables_on(
        &self,
        db: &dyn Sql,
        id: &str,
        variables: Map<String, Json>,
    ) -> Result<(), Error> {
        self.command_with(db, id, Command::SetVariables { variables }, &[], &[]).await
    }

    pub async fn variables(&self, id: &str) -> Result<Map<String, Json>, Error> {
        let inst = tables::instance_load(self.store.as_ref(), id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("process instance {id} is not running")))
        })?;
        Ok(inst.variables.iter().filter(|v| v.in_scope(&inst.id)).map(|v| (v.name.clone(), v.value.clone())).collect())
    }

    /// The variables a task sees (SPEC P6) in `scope`: its local ones, those visible from its
    /// execution, or both (local ones shadowing).
    pub async fn task_variables(&self, task_id: &str, scope: TaskScope) -> Result<Map<String, Json>, Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        let inst = tables::instance_load(self.store.as_ref(), &pi).await?;
        let task = inst.as_ref().and_then(|i| i.task(task_id)).ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {task_id} is not open")))
        })?;
        Ok(inst.as_ref().map(|i| i.task_variables(task, scope)).unwrap_or_default())
    }

    /// Sets variables through a task: `local` ones belong to it alone and go when it ends;
    /// the others land where its execution's `setVariable` puts them.
    pub async fn set_task_variables(
        &self,
        task_id: &str,
        variables: Map<String, Json>,
        local: bool,
    ) -> Result<(), Error> {
        let pi = self.instance_of_task(self.store.as_ref(), task_id).await?;
        self.command(&pi, Command::SetTaskVariables { task_id: task_id.into(), variables, local }).await
    }
}

/// A handler's way to throw a BPMN error (caught by an error boundary event): return
/// `Err(Box::new(BpmnError("CODE".into())))`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("BPMN error {0}")]
pub struct BpmnError(pub String);

/// The executor's handler for `async-continuation` and `trigger-timer` jobs.
#[derive(Clone)]
pub struct ProcessJobHandler(Arc<Processes>);

#[async_trait]
impl Handler for ProcessJobHandler {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        if ctx.handler_type == SIGNAL_THROW {
            let n = self.0.deliver_thrown_signal(&ctx).await.map_err(|e| Box::new(e) as HandlerError)?;
            return Ok(Some(format!("signal delivered to {n} instances and start events")));
        }
        if ctx.handler_type == TIMER_START {
            let started = self.0.start_by_timer(&ctx).await.map_err(|e| Box::new(e) as HandlerError)?;
            return Ok(Some(format!("started process instance {started}")));
        }
        self.0.run_job(&ctx).await.map_err(|e| Box::new(e) as HandlerError)?;
        Ok(None)
    }
}

fn process_of<'d>(defs: &'d Definitions, key: &str) -> Result<&'d kairos_bpmn::Process, Error> {
    defs.process(key).ok_or_else(|| {
        Error::Process(ProcessError::new(ErrorKind::Model, format!("process '{key}' is not in its deployed resource")))
    })
}

fn invalid(field: &str, message: &str) -> Error {
    Error::Process(ProcessError { kind: ErrorKind::Invalid, message: message.into(), element_id: Some(field.into()) })
}

/// The answer a requestId recorded for a start.
fn stored_view(first: Option<Json>) -> Result<InstanceView, Error> {
    let text = first.unwrap_or(Json::Null);
    serde_json::from_value(text).map_err(|e| {
        Error::Process(ProcessError::new(ErrorKind::Model, format!("the stored answer of a start does not parse: {e}")))
    })
}
