//! The scheduler (SPEC §S): Quartz's jobs, triggers and calendars in the QRTZ_* tables, fired
//! through the job engine (see docs/scheduler.md).
//!
//! The model is pure and lives elsewhere: `kairos_cron` (the cron dialect) and `kairos_schedule`
//! (what a trigger does when it fires, misfires or meets a calendar). This module stores that
//! model and runs it:
//! - [`Scheduler`]'s methods are the operator's commands (add a job, schedule a trigger, pause a
//!   group …), each one validated and written in one transaction;
//! - two job handlers do the firing: `quartz-trigger` (a trigger's due time came: fire it and
//!   move it on) and `quartz-job` (the work of one firing: the job detail's handler);
//! - a check-in loop writes QRTZ_SCHEDULER_STATE and sweeps finished firings.
//!
//! Every statement is `kairos_store_engine::scheduler`'s, behind a typed function; this module
//! decides which to run. Every change of a trigger's state names its transition in the table of
//! [`state`].

mod calendars;
mod checkin;
mod fire;
mod model;
pub mod state;
mod triggers;

pub use kairos_store_engine::scheduler::{
    FiredTrigger as FiredTriggerView, JobDetail as JobView, SchedulerNode as SchedulerNodeView, TRIGGER_HANDLER,
    WORK_HANDLER,
};
pub use model::{
    CalendarIntervalSpec, CalendarSpec, CronSpec, DailyTimeIntervalSpec, SimpleSpec, TriggerSpec, TriggerView,
};
pub use state::{TriggerEvent, TriggerLifecycle, TriggerState};

use kairos_executor::Handlers;
use kairos_store::{Store, Unreadable, Write};
use kairos_store_engine::scheduler as rows;
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// Quartz's default group.
pub const DEFAULT_GROUP: &str = "DEFAULT";
/// Quartz's name and group limits (VARCHAR(200)); the scheduler name is VARCHAR(120).
const MAX_NAME: usize = 200;

/// What a scheduler command can get wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    /// The request was invalid; nothing was written. `field` names what was wrong.
    #[error("invalid {field}: {message}")]
    Invalid { field: String, message: String },
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with what exists (a name taken, a calendar in use).
    #[error("{0}")]
    Conflict(String),
}

impl SchedulerError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        SchedulerError::Invalid { field: field.into(), message: message.into() }
    }
}

/// Quartz's "Based on configured schedule, the given trigger will never fire", naming the
/// trigger and the field to change: the calendar when it is what excludes every fire time
/// (the trigger alone would fire), the start time otherwise.
fn never_fires(tr: &kairos_schedule::Trigger) -> SchedulerError {
    let key = format!("{}.{}", tr.key.group, tr.key.name);
    match &tr.calendar_name {
        Some(c) if tr.clone().compute_first_fire_time(None).is_some() => SchedulerError::invalid(
            "calendarName",
            format!("trigger {key} will never fire: calendar '{c}' excludes every fire time of its schedule"),
        ),
        _ => SchedulerError::invalid(
            "startTime",
            format!("trigger {key} will never fire: its schedule has no fire time between its start and end time"),
        ),
    }
}

/// Settings of the scheduler (Quartz's `org.quartz.*` names in the docs).
#[derive(Debug, Clone)]
pub struct SchedulerSettings {
    /// SCHED_NAME (`org.quartz.scheduler.instanceName`); every node sharing the database should
    /// use the same one. Default `kairos`.
    pub name: String,
    /// `org.quartz.jobStore.misfireThreshold`: how late a trigger may fire before its misfire
    /// instruction applies. Default 60 s.
    pub misfire_threshold: jiff::SignedDuration,
    /// `org.quartz.jobStore.clusterCheckinInterval`. Default 7.5 s (Quartz's).
    pub checkin_interval: std::time::Duration,
    /// How long before its fire time a trigger fires: its trigger job is due this much early
    /// and commits the firing — the work job due at the fire time itself — so the work starts
    /// on time, as a timer does, instead of one acquisition and one commit late (Quartz
    /// acquires triggers ahead for the same reason: `org.quartz.scheduler.idleWaitTime`,
    /// `batchTriggerAcquisitionFireAheadTimeWindow`). Pausing or unscheduling a trigger cancels
    /// a firing so committed that has not started. Default 500 ms; zero fires at the fire time.
    pub fire_ahead: jiff::SignedDuration,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        SchedulerSettings {
            name: "kairos".into(),
            misfire_threshold: jiff::SignedDuration::from_secs(60),
            checkin_interval: std::time::Duration::from_millis(7500),
            fire_ahead: jiff::SignedDuration::from_millis(500),
        }
    }
}

/// A job detail to add (`POST /scheduler/jobs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobSpec {
    pub name: String,
    #[serde(default)]
    pub group: Option<String>,
    /// The registered handler that does the work (Quartz's job class).
    pub handler: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Kept when no trigger points at it any more (Quartz's storeDurably). Default false.
    #[serde(default)]
    pub durable: bool,
    /// Re-run a firing whose node died while running it. Default false: at most one run.
    #[serde(default)]
    pub requests_recovery: bool,
    /// Whether firings may overlap (false = Quartz's @DisallowConcurrentExecution). Default true.
    #[serde(default = "yes")]
    pub concurrent: bool,
    /// The job's data (Quartz's JobDataMap), given to the handler merged with the trigger's.
    #[serde(default)]
    pub data: Option<Map<String, Json>>,
    /// Attempts one firing's work gets, an attempt abandoned by a dead node included (kairos;
    /// default 1 — Quartz never retries — or 3 with `requestsRecovery`, whose re-run on another
    /// node is such an attempt). More than one needs `requestsRecovery`: a retried firing also
    /// runs again after its node dies.
    #[serde(default)]
    pub retries: Option<i32>,
    /// Replace a job detail of the same key instead of refusing it.
    #[serde(default)]
    pub replace: bool,
    /// The tenant whose job it is (kairos's; `''` or absent: none). Its triggers and firings
    /// are its tenant's; a job of another tenant is never replaced.
    #[serde(default)]
    pub tenant_id: Option<String>,
}

fn yes() -> bool {
    true
}

/// Checks a name or a group: non-empty, at most Quartz's 200 characters, no control characters.
pub(crate) fn check_name(field: &str, value: &str) -> Result<(), SchedulerError> {
    if value.trim().is_empty() {
        return Err(SchedulerError::invalid(field, "must not be empty"));
    }
    if value.chars().count() > MAX_NAME {
        return Err(SchedulerError::invalid(field, format!("is longer than {MAX_NAME} characters")));
    }
    if value.chars().any(char::is_control) {
        return Err(SchedulerError::invalid(field, "must not contain control characters"));
    }
    Ok(())
}

/// The scheduler side of an engine, shared by the engine and its two job handlers.
pub struct Scheduler {
    store: Arc<dyn Store>,
    settings: SchedulerSettings,
    /// The handlers a job detail may name (and the work handler runs).
    handlers: Arc<Handlers>,
    node_id: String,
    /// The shortest interval of a repeating simple trigger (EngineSettings::min_repeat_interval).
    min_repeat: jiff::SignedDuration,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("settings", &self.settings).field("node", &self.node_id).finish()
    }
}

impl Scheduler {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        handlers: Arc<Handlers>,
        node_id: String,
        settings: SchedulerSettings,
        min_repeat: jiff::SignedDuration,
    ) -> Scheduler {
        Scheduler { store, settings, handlers, node_id, min_repeat }
    }

    /// [`SchedulerSettings::fire_ahead`], never negative.
    pub(crate) fn ahead(&self) -> jiff::SignedDuration {
        self.settings.fire_ahead.max(jiff::SignedDuration::ZERO)
    }

    pub fn settings(&self) -> &SchedulerSettings {
        &self.settings
    }

    pub(crate) fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    pub(crate) fn name(&self) -> &str {
        &self.settings.name
    }

    /// The engine's job handlers for the scheduler's two job kinds.
    pub(crate) fn job_handlers(self: &Arc<Self>) -> Vec<(&'static str, fire::SchedulerJobHandler)> {
        vec![
            (TRIGGER_HANDLER, fire::SchedulerJobHandler(self.clone())),
            (WORK_HANDLER, fire::SchedulerJobHandler(self.clone())),
        ]
    }

    // ----- job details ------------------------------------------------------------------------

    /// Adds a job detail (Quartz's addJob). Refused, with nothing written, when the handler is
    /// not registered, a name is bad, or the key exists and `replace` is false.
    pub async fn add_job(&self, spec: &JobSpec) -> Result<JobView, crate::Error> {
        let (view, write) = self.job_write(spec).await?;
        self.store.write_all(&[write]).await?;
        Ok(view)
    }

    /// The validated job detail and the statement storing it.
    async fn job_write(&self, spec: &JobSpec) -> Result<(JobView, Write), crate::Error> {
        let group = spec.group.clone().unwrap_or_else(|| DEFAULT_GROUP.into());
        check_name("name", &spec.name)?;
        check_name("group", &group)?;
        if !self.handlers.contains(&spec.handler) || spec.handler == TRIGGER_HANDLER || spec.handler == WORK_HANDLER {
            return Err(SchedulerError::invalid(
                "handler",
                format!("'{}' is not a handler registered with this engine", spec.handler),
            )
            .into());
        }
        if let Some(d) = &spec.description
            && d.chars().count() > 250
        {
            return Err(SchedulerError::invalid("description", "is longer than 250 characters").into());
        }
        // Recovery is running a firing again on another node, which the job engine does by
        // spending an attempt: a job that requests recovery gets attempts for it.
        let retries = spec.retries.unwrap_or(if spec.requests_recovery { 3 } else { 1 });
        if !(1..=100).contains(&retries) {
            return Err(SchedulerError::invalid("retries", format!("{retries} is not between 1 and 100")).into());
        }
        if retries > 1 && !spec.requests_recovery {
            return Err(SchedulerError::invalid(
                "retries",
                "more than one attempt needs requestsRecovery: a retried firing also runs again after its node dies",
            )
            .into());
        }
        let data = spec.data.as_ref().map(|m| Json::Object(m.clone()).to_string());
        let tenant = spec.tenant_id.clone().unwrap_or_default();
        if tenant.chars().count() > 255 || tenant.chars().any(char::is_control) {
            return Err(
                SchedulerError::invalid("tenantId", "is longer than 255 characters or has control characters").into()
            );
        }
        let existing = rows::job_get(self.store(), self.name(), &group, &spec.name).await?;
        match &existing {
            // Another tenant's job is not replaced (and the answer does not say whose it is).
            Some(j) if j.tenant_id != tenant => {
                return Err(SchedulerError::Conflict(format!("job {group}.{} exists", spec.name)).into());
            }
            Some(_) if !spec.replace => {
                return Err(SchedulerError::Conflict(format!(
                    "job {group}.{} exists (set replace to overwrite it)",
                    spec.name
                ))
                .into());
            }
            _ => {}
        }
        let exists = existing.is_some();
        let view = JobView {
            name: spec.name.clone(),
            group,
            handler: spec.handler.clone(),
            description: spec.description.clone(),
            durable: spec.durable,
            requests_recovery: spec.requests_recovery,
            concurrent: spec.concurrent,
            data: spec.data.clone().unwrap_or_default(),
            retries,
            tenant_id: tenant,
        };
        let write = rows::job_upsert(self.name(), &view, data, exists).expect(1);
        Ok((view, write))
    }

    pub async fn job(&self, group: &str, name: &str) -> Result<JobView, crate::Error> {
        rows::job_get(self.store(), self.name(), group, name)
            .await?
            .ok_or_else(|| SchedulerError::NotFound(format!("no job {group}.{name}")).into())
    }

    pub async fn jobs(&self, group: Option<&str>) -> Result<Vec<JobView>, crate::Error> {
        Ok(rows::job_list(self.store(), self.name(), group).await?)
    }

    /// Deletes a job detail and its triggers (Quartz's deleteJob), with their trigger jobs.
    /// Firings already under way finish.
    pub async fn delete_job(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        // Its triggers go whatever their state (every state has a Delete edge).
        let mut writes = rows::triggers_of_job_delete(self.name(), group, name);
        writes.push(rows::job_delete(self.name(), group, name));
        let n = self.store.write_all(&writes).await?;
        if n.last().copied().unwrap_or(0) == 0 {
            return Err(SchedulerError::NotFound(format!("no job {group}.{name}")).into());
        }
        Ok(())
    }

    // ----- cluster view -----------------------------------------------------------------------

    /// QRTZ_FIRED_TRIGGERS: firings whose work has not finished.
    pub async fn fired_triggers(&self) -> Result<Vec<FiredTriggerView>, crate::Error> {
        Ok(rows::fired_list(self.store(), self.name()).await?)
    }

    /// QRTZ_SCHEDULER_STATE: the nodes' check-ins.
    pub async fn nodes(&self) -> Result<Vec<SchedulerNodeView>, crate::Error> {
        Ok(rows::checkin_list(self.store(), self.name()).await?)
    }

    /// One check-in and one sweep now (the loop's body; also for tests).
    pub async fn check_in(&self) -> Result<(), crate::Error> {
        checkin::once(self).await
    }

    /// Runs check-ins until `stop` turns true.
    pub(crate) fn spawn_checkin(
        self: &Arc<Self>,
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        checkin::spawn(self.clone(), stop)
    }
}

pub(crate) fn not_found(what: String) -> crate::Error {
    SchedulerError::NotFound(what).into()
}

/// Why a trigger row cannot be used, in a sentence: "NEXT_FIRE_TIME \"soon\" is not …".
pub(crate) fn why(u: &Unreadable) -> String {
    let raw = u.raw.as_deref().map_or_else(|| "NULL".to_string(), |r| format!("{r:?}"));
    let at = if u.table == "QRTZ_TRIGGERS" { String::new() } else { format!(" of {} row {}", u.table, u.id) };
    format!("{}{at} {raw} {}", u.column, u.problem)
}
