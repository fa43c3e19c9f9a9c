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

mod checkin;
mod fire;
mod model;
mod rows;
pub mod state;

pub use model::{
    CalendarIntervalSpec, CalendarSpec, CronSpec, DailyTimeIntervalSpec, SimpleSpec, TriggerSpec, TriggerView,
};
pub(crate) use rows::FIRED_SELECT;
pub use rows::{FiredTriggerView, JobView, SchedulerNodeView};
pub use state::{TriggerEvent, TriggerState};

use kairos_executor::Handlers;
use kairos_store::{SqlValue, Store, Write};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// HANDLER_TYPE_ of a trigger's job: due at NEXT_FIRE_TIME, fires the trigger.
pub const TRIGGER_HANDLER: &str = "quartz-trigger";
/// HANDLER_TYPE_ of a firing's work: runs the job detail's handler.
pub const WORK_HANDLER: &str = "quartz-job";
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
        let exists = rows::job_exists(self.store(), self.name(), &spec.name, &group).await?;
        if exists && !spec.replace {
            return Err(SchedulerError::Conflict(format!(
                "job {group}.{} exists (set replace to overwrite it)",
                spec.name
            ))
            .into());
        }
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
        rows::job_list(self.store(), self.name(), group).await
    }

    /// Deletes a job detail and its triggers (Quartz's deleteJob), with their trigger jobs.
    /// Firings already under way finish.
    pub async fn delete_job(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        let mut writes = rows::triggers_of_job_delete(self.name(), group, name);
        writes.push(rows::job_delete(self.name(), group, name));
        let n = self.store.write_all(&writes).await?;
        if n.last().copied().unwrap_or(0) == 0 {
            return Err(SchedulerError::NotFound(format!("no job {group}.{name}")).into());
        }
        Ok(())
    }

    // ----- triggers ---------------------------------------------------------------------------

    /// Schedules a trigger for an existing job (Quartz's scheduleJob): validated, its first
    /// fire time computed with its calendar, stored with its trigger job — or PAUSED, without
    /// one, when its group is paused. A trigger that would never fire is refused.
    pub async fn schedule(&self, spec: &TriggerSpec) -> Result<TriggerView, crate::Error> {
        self.schedule_with(None, spec).await
    }

    /// Adds a job detail and schedules its trigger in one transaction (Quartz's
    /// scheduleJob(JobDetail, Trigger)): if either is refused, neither is written.
    pub async fn schedule_job(&self, job: &JobSpec, spec: &TriggerSpec) -> Result<TriggerView, crate::Error> {
        self.schedule_with(Some(job), spec).await
    }

    async fn schedule_with(&self, job: Option<&JobSpec>, spec: &TriggerSpec) -> Result<TriggerView, crate::Error> {
        let now = self.store.db_now().await?;
        let mut tr = model::trigger_of(spec, now)?;
        model::check_interval(&tr, self.min_repeat)?;
        let (group, name) = (tr.key.group.clone(), tr.key.name.clone());
        let mut writes = Vec::new();
        if let Some(j) = job {
            let (view, write) = self.job_write(j).await?;
            if (view.group.as_str(), view.name.as_str()) != (tr.job_key.group.as_str(), tr.job_key.name.as_str()) {
                return Err(SchedulerError::invalid(
                    "jobName",
                    format!(
                        "the trigger fires {}.{}, not the job given with it ({}.{})",
                        tr.job_key.group, tr.job_key.name, view.group, view.name
                    ),
                )
                .into());
            }
            writes.push(write);
        } else if rows::job_get(self.store(), self.name(), &tr.job_key.group, &tr.job_key.name).await?.is_none() {
            return Err(SchedulerError::invalid(
                "jobName",
                format!("no job {}.{}: add the job first", tr.job_key.group, tr.job_key.name),
            )
            .into());
        }
        let calendar = match &tr.calendar_name {
            None => None,
            Some(c) => Some(
                self.calendar_model(self.name(), c)
                    .await?
                    .ok_or_else(|| SchedulerError::invalid("calendarName", format!("no calendar '{c}'")))?,
            ),
        };
        if tr.compute_first_fire_time(calendar.as_ref()).is_none() {
            return Err(never_fires(&tr).into());
        }
        let exists = self.load(self.name(), &group, &name).await?.is_some();
        if exists && !spec.replace {
            return Err(SchedulerError::Conflict(format!(
                "trigger {group}.{name} exists (set replace to reschedule it)"
            ))
            .into());
        }
        let paused = rows::group_paused(self.store(), self.name(), &group).await?;
        let state = if paused { TriggerState::Paused } else { TriggerState::Waiting };
        let data = spec.data.clone().unwrap_or_default();
        if exists {
            writes.extend(rows::trigger_delete(self.name(), &group, &name, now));
        }
        writes.extend(model::trigger_insert(self.name(), &tr, state, &data));
        if state == TriggerState::Waiting
            && let Some(next) = tr.next_fire_time
        {
            writes.push(fire::trigger_job_insert(self.name(), &group, &name, tr.priority, next, now, self.ahead()));
        }
        self.store.write_all(&writes).await?;
        Ok(TriggerView::of(&tr, state, data))
    }

    /// Schedules many new triggers (each refused like [`Scheduler::schedule`] would; all are
    /// checked before anything is written), in transactions of up to 1,000. Calendars are not
    /// supported here; an existing key is a conflict. For bulk loads (the scheduler benchmark,
    /// migrations from Quartz).
    pub async fn schedule_many(&self, specs: &[TriggerSpec]) -> Result<u64, crate::Error> {
        let now = self.store.db_now().await?;
        let mut jobs = std::collections::HashSet::new();
        let mut groups = std::collections::HashMap::new();
        let mut batches: Vec<Vec<Write>> = Vec::new();
        for (k, spec) in specs.iter().enumerate() {
            let at = |e: SchedulerError| match e {
                SchedulerError::Invalid { field, message } => {
                    SchedulerError::Invalid { field: format!("[{k}].{field}"), message }
                }
                other => other,
            };
            let mut tr = model::trigger_of(spec, now).map_err(at)?;
            model::check_interval(&tr, self.min_repeat).map_err(at)?;
            if tr.calendar_name.is_some() || spec.replace {
                return Err(at(SchedulerError::invalid(
                    "calendarName",
                    "calendars and replace need schedule, one by one",
                ))
                .into());
            }
            let job = (tr.job_key.group.clone(), tr.job_key.name.clone());
            if !jobs.contains(&job) {
                if rows::job_get(self.store(), self.name(), &job.0, &job.1).await?.is_none() {
                    return Err(at(SchedulerError::invalid("jobName", format!("no job {}.{}", job.0, job.1))).into());
                }
                jobs.insert(job);
            }
            if tr.compute_first_fire_time(None).is_none() {
                return Err(at(never_fires(&tr)).into());
            }
            let group = tr.key.group.clone();
            let paused = match groups.get(&group) {
                Some(p) => *p,
                None => {
                    let p = rows::group_paused(self.store(), self.name(), &group).await?;
                    groups.insert(group.clone(), p);
                    p
                }
            };
            let state = if paused { TriggerState::Paused } else { TriggerState::Waiting };
            if k % 1000 == 0 {
                batches.push(Vec::new());
            }
            let batch = batches.last_mut().expect("a batch");
            batch.extend(model::trigger_insert(self.name(), &tr, state, &spec.data.clone().unwrap_or_default()));
            if let (TriggerState::Waiting, Some(next)) = (state, tr.next_fire_time) {
                batch.push(fire::trigger_job_insert(
                    self.name(),
                    &group,
                    &tr.key.name,
                    tr.priority,
                    next,
                    now,
                    self.ahead(),
                ));
            }
        }
        for batch in batches {
            // One multi-row INSERT per table (in the order each first appears, so parent rows
            // come before their children): one round trip per table, not one per row.
            self.store.write_all(&kairos_store::coalesce(batch)).await?;
        }
        Ok(specs.len() as u64)
    }

    pub async fn trigger(&self, group: &str, name: &str) -> Result<TriggerView, crate::Error> {
        match self.load(self.name(), group, name).await? {
            Some(Ok(l)) => Ok(TriggerView::of(&l.trigger, l.state, l.data)),
            Some(Err(why)) => {
                Err(SchedulerError::Conflict(format!("trigger {group}.{name} cannot be read: {why}")).into())
            }
            None => Err(rows::not_found(format!("no trigger {group}.{name}"))),
        }
    }

    /// Triggers, optionally of one group and/or in one state; unreadable rows are skipped.
    pub async fn triggers(
        &self,
        group: Option<&str>,
        state: Option<TriggerState>,
    ) -> Result<Vec<TriggerView>, crate::Error> {
        let mut sql = format!("{} WHERE tr.SCHED_NAME = ?", model::TRIGGER_SELECT);
        let mut binds = vec![t(self.name())];
        if let Some(g) = group {
            sql.push_str(" AND tr.TRIGGER_GROUP = ?");
            binds.push(t(g));
        }
        if let Some(s) = state {
            sql.push_str(" AND tr.TRIGGER_STATE = ?");
            binds.push(t(s.as_str()));
        }
        sql.push_str(" ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME");
        let rows = self.store.read(&sql, &binds).await?;
        Ok(rows
            .iter()
            .filter_map(|r| model::stored_of(r).ok())
            .map(|l| TriggerView::of(&l.trigger, l.state, l.data))
            .collect())
    }

    /// Triggers of this scheduler whose rows cannot be read, at most `limit`: each named by
    /// `group.name`, with the column and stored text its error names. Such a trigger is
    /// skipped by the lists and does not fire; the others do.
    pub async fn unreadable_triggers(&self, limit: usize) -> Result<Vec<kairos_store::Unreadable>, crate::Error> {
        let sql =
            format!("{} WHERE tr.SCHED_NAME = ? ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME", model::TRIGGER_SELECT);
        let rows = self.store.read(&sql, &[t(self.name())]).await?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let why = model::stored_of(r).err()?;
                let text = |v: &kairos_store::SqlValue| v.as_str().map(str::to_string).unwrap_or_default();
                let column = why.split_whitespace().next().unwrap_or_default().trim_end_matches(':').to_string();
                let raw = why.split('\'').nth(1).map(str::to_string);
                let id = format!("{}.{}", text(&r[1]), text(&r[0]));
                Some(kairos_store::Unreadable::new("QRTZ_TRIGGERS", id, column, raw, why))
            })
            .take(limit)
            .collect())
    }

    /// Removes a trigger (Quartz's unscheduleJob) and its trigger job; its job stays (a
    /// non-durable job left without triggers goes too, as in Quartz).
    pub async fn unschedule(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        let Some(Ok(l)) = self.load(self.name(), group, name).await? else {
            return Err(rows::not_found(format!("no trigger {group}.{name}")));
        };
        let now = self.store.db_now().await?;
        let mut writes = rows::trigger_delete(self.name(), group, name, now);
        writes.last_mut().expect("trigger_delete ends with the trigger row").expect = Some(1);
        writes.push(rows::orphan_job_delete(self.name(), &l.trigger.job_key.group, &l.trigger.job_key.name));
        self.store.write_all(&writes).await?;
        Ok(())
    }

    /// Pauses one trigger: WAITING → PAUSED (its trigger job goes), BLOCKED → PAUSED_BLOCKED.
    pub async fn pause_trigger(&self, group: &str, name: &str) -> Result<TriggerView, crate::Error> {
        self.trigger(group, name).await?;
        let now = self.store.db_now().await?;
        self.store.write_all(&pause_writes(self.name(), Some((group, name)), None, now)).await?;
        self.trigger(group, name).await
    }

    /// Resumes one trigger: PAUSED → WAITING with its trigger job at NEXT_FIRE_TIME (late ones
    /// then go through their misfire instruction, as in Quartz), PAUSED_BLOCKED → BLOCKED,
    /// ERROR → WAITING.
    pub async fn resume_trigger(&self, group: &str, name: &str) -> Result<TriggerView, crate::Error> {
        let v = self.trigger(group, name).await?;
        let now = self.store.db_now().await?;
        let mut writes = Vec::new();
        for from in [TriggerState::Paused, TriggerState::Error] {
            writes.extend(fire::wake_writes(
                self.name(),
                group,
                name,
                v.next_fire_time.map(rows::ts_to_ms),
                now,
                self.ahead(),
                from,
                TriggerState::Waiting,
            ));
        }
        writes.push(w(
            "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'BLOCKED' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
             AND TRIGGER_STATE = 'PAUSED_BLOCKED'",
            vec![t(self.name()), t(name), t(group)],
        ));
        self.store.write_all(&writes).await?;
        self.trigger(group, name).await
    }

    /// Pauses a trigger group (Quartz's pauseTriggers(GroupMatcher.groupEquals)): its triggers
    /// pause, and the group stays paused — triggers added to it later start PAUSED.
    pub async fn pause_group(&self, group: &str) -> Result<(), crate::Error> {
        check_name("group", group)?;
        let mut writes = vec![
            w(
                "DELETE FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? AND TRIGGER_GROUP = ?",
                vec![t(self.name()), t(group)],
            ),
            w(
                "INSERT INTO QRTZ_PAUSED_TRIGGER_GRPS (SCHED_NAME, TRIGGER_GROUP) VALUES (?, ?)",
                vec![t(self.name()), t(group)],
            ),
        ];
        writes.extend(pause_writes(self.name(), None, Some(group), self.store.db_now().await?));
        self.store.write_all(&writes).await?;
        Ok(())
    }

    /// Resumes a trigger group: it is no longer paused, and each of its paused triggers
    /// resumes.
    pub async fn resume_group(&self, group: &str) -> Result<(), crate::Error> {
        check_name("group", group)?;
        self.store
            .write_all(&[w(
                "DELETE FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? AND TRIGGER_GROUP = ?",
                vec![t(self.name()), t(group)],
            )])
            .await?;
        for v in self.triggers(Some(group), None).await? {
            if matches!(v.state, TriggerState::Paused | TriggerState::PausedBlocked) {
                self.resume_trigger(&v.group, &v.name).await?;
            }
        }
        Ok(())
    }

    /// Pauses every trigger of a job (Quartz's pauseJob).
    pub async fn pause_job(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        self.job(group, name).await?;
        for v in self.triggers(None, None).await?.into_iter().filter(|v| v.job_group == group && v.job_name == name) {
            self.pause_trigger(&v.group, &v.name).await?;
        }
        Ok(())
    }

    /// Resumes every trigger of a job (Quartz's resumeJob).
    pub async fn resume_job(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        self.job(group, name).await?;
        for v in self.triggers(None, None).await?.into_iter().filter(|v| v.job_group == group && v.job_name == name) {
            self.resume_trigger(&v.group, &v.name).await?;
        }
        Ok(())
    }

    /// The paused trigger groups (QRTZ_PAUSED_TRIGGER_GRPS).
    pub async fn paused_groups(&self) -> Result<Vec<String>, crate::Error> {
        let rows = self
            .store
            .read(
                "SELECT TRIGGER_GROUP FROM QRTZ_PAUSED_TRIGGER_GRPS WHERE SCHED_NAME = ? ORDER BY TRIGGER_GROUP",
                &[t(self.name())],
            )
            .await?;
        Ok(rows.iter().filter_map(|r| r[0].as_str().map(str::to_string)).collect())
    }

    // ----- calendars --------------------------------------------------------------------------

    /// Stores a calendar (Quartz's addCalendar with replace). `baseCalendar`, if given, names a
    /// stored calendar, which is copied in (as Quartz serializes the base with the calendar).
    /// Replacing a calendar moves the waiting triggers that use it to their next fire time
    /// under the new one (Quartz's updateTriggers = true).
    pub async fn put_calendar(
        &self,
        name: &str,
        spec: &CalendarSpec,
    ) -> Result<kairos_schedule::Calendar, crate::Error> {
        check_name("name", name)?;
        let mut json = spec.clone();
        let base_name = match json.as_object_mut().map(|o| o.remove("baseCalendar")) {
            None => return Err(SchedulerError::invalid("calendar", "must be a JSON object with a \"type\"").into()),
            Some(None | Some(Json::Null)) => None,
            Some(Some(Json::String(b))) => Some(b),
            Some(Some(other)) => {
                return Err(SchedulerError::invalid("baseCalendar", format!("{other} is not a calendar name")).into());
            }
        };
        let mut cal: kairos_schedule::Calendar =
            serde_json::from_value(json).map_err(|e| SchedulerError::invalid("calendar", e.to_string()))?;
        if let Some(b) = &base_name {
            if b == name {
                return Err(SchedulerError::invalid("baseCalendar", "a calendar cannot be its own base").into());
            }
            let base = self
                .calendar_model(self.name(), b)
                .await?
                .ok_or_else(|| SchedulerError::invalid("baseCalendar", format!("no calendar '{b}'")))?;
            cal = cal.with_base(base);
        }
        cal.validate().map_err(|e| SchedulerError::invalid(e.field().to_string(), e.to_string()))?;
        let text = serde_json::to_string(&cal).map_err(|e| SchedulerError::invalid("calendar", e.to_string()))?;
        let exists = self.calendar_model(self.name(), name).await?.is_some();
        let write = if exists {
            w(
                "UPDATE QRTZ_CALENDARS SET CALENDAR = ? WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
                vec![t(&text), t(self.name()), t(name)],
            )
        } else {
            w(
                "INSERT INTO QRTZ_CALENDARS (SCHED_NAME, CALENDAR_NAME, CALENDAR) VALUES (?, ?, ?)",
                vec![t(self.name()), t(name), t(&text)],
            )
        };
        let mut writes = vec![write.expect(1)];
        if exists {
            let now = self.store.db_now().await?;
            let rows = self
                .store
                .read(
                    &format!(
                        "{} WHERE tr.SCHED_NAME = ? AND tr.CALENDAR_NAME = ? AND tr.TRIGGER_STATE = 'WAITING'",
                        model::TRIGGER_SELECT
                    ),
                    &[t(self.name()), t(name)],
                )
                .await?;
            for l in rows.iter().filter_map(|r| model::stored_of(r).ok()) {
                let mut tr = l.trigger;
                let was = tr.next_fire_time;
                tr.update_with_new_calendar(Some(&cal), self.settings.misfire_threshold, now);
                let (g, n) = (tr.key.group.clone(), tr.key.name.clone());
                writes.extend(model::trigger_advance(self.name(), &tr, was, TriggerState::Waiting));
                writes.push(rows::trigger_job_delete(self.name(), &g, &n));
                match tr.next_fire_time {
                    Some(next) => {
                        writes.push(fire::trigger_job_insert(self.name(), &g, &n, tr.priority, next, now, self.ahead()))
                    }
                    None => writes.extend(rows::trigger_delete(self.name(), &g, &n, now)),
                }
            }
        }
        self.store.write_all(&writes).await?;
        Ok(cal)
    }

    pub async fn calendar(&self, name: &str) -> Result<kairos_schedule::Calendar, crate::Error> {
        self.calendar_model(self.name(), name).await?.ok_or_else(|| rows::not_found(format!("no calendar '{name}'")))
    }

    pub async fn calendars(&self) -> Result<Vec<String>, crate::Error> {
        let rows = self
            .store
            .read(
                "SELECT CALENDAR_NAME FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? ORDER BY CALENDAR_NAME",
                &[t(self.name())],
            )
            .await?;
        Ok(rows.iter().filter_map(|r| r[0].as_str().map(str::to_string)).collect())
    }

    /// Deletes a calendar no trigger uses (Quartz refuses the others too).
    pub async fn delete_calendar(&self, name: &str) -> Result<(), crate::Error> {
        let users = self
            .store
            .read(
                "SELECT TRIGGER_GROUP, TRIGGER_NAME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
                &[t(self.name()), t(name)],
            )
            .await?;
        if let Some(u) = users.first() {
            return Err(SchedulerError::Conflict(format!(
                "calendar '{name}' is used by trigger {}.{} (and {} more)",
                u[0].as_str().unwrap_or_default(),
                u[1].as_str().unwrap_or_default(),
                users.len() - 1
            ))
            .into());
        }
        let n = self
            .store
            .write_all(&[w(
                "DELETE FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
                vec![t(self.name()), t(name)],
            )])
            .await?;
        if n[0] == 0 {
            return Err(rows::not_found(format!("no calendar '{name}'")));
        }
        Ok(())
    }

    /// A stored calendar, or None.
    pub(crate) async fn calendar_model(
        &self,
        sched: &str,
        name: &str,
    ) -> Result<Option<kairos_schedule::Calendar>, crate::Error> {
        let rows = self
            .store
            .read(
                "SELECT CALENDAR FROM QRTZ_CALENDARS WHERE SCHED_NAME = ? AND CALENDAR_NAME = ?",
                &[t(sched), t(name)],
            )
            .await?;
        match rows.first().and_then(|r| r[0].as_str().map(str::to_string)) {
            None => Ok(None),
            Some(text) => model::calendar_of(&text)
                .map(Some)
                .map_err(|e| SchedulerError::Conflict(format!("calendar '{name}': {e}")).into()),
        }
    }

    /// A stored trigger with its job detail, in one read (the firing path's): None if the
    /// trigger is absent, Some(Err) if its row cannot be used; the job is None if it is gone.
    pub(crate) async fn load_with_job(
        &self,
        sched: &str,
        group: &str,
        name: &str,
    ) -> Result<Option<Result<(model::Stored, Option<JobView>), String>>, crate::Error> {
        let sql = format!(
            "{} LEFT JOIN QRTZ_JOB_DETAILS jd ON jd.SCHED_NAME = tr.SCHED_NAME AND jd.JOB_NAME = tr.JOB_NAME \
             AND jd.JOB_GROUP = tr.JOB_GROUP WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_NAME = ? AND tr.TRIGGER_GROUP = ?",
            model::TRIGGER_SELECT.replacen(
                " FROM QRTZ_TRIGGERS tr",
                &format!(", {} FROM QRTZ_TRIGGERS tr", rows::JD_COLS),
                1
            )
        );
        let rows = self.store.read(&sql, &[t(sched), t(name), t(group)]).await?;
        Ok(rows.first().map(|r| {
            let n = r.len() - 9;
            model::stored_of(&r[..n]).map(|st| (st, rows::job_at(&r[n..])))
        }))
    }

    /// A stored trigger: None if absent, Some(Err) if its row cannot be used.
    pub(crate) async fn load(
        &self,
        sched: &str,
        group: &str,
        name: &str,
    ) -> Result<Option<Result<model::Stored, String>>, crate::Error> {
        let rows = self
            .store
            .read(
                &format!(
                    "{} WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_NAME = ? AND tr.TRIGGER_GROUP = ?",
                    model::TRIGGER_SELECT
                ),
                &[t(sched), t(name), t(group)],
            )
            .await?;
        Ok(rows.first().map(|r| model::stored_of(r)))
    }

    // ----- cluster view -----------------------------------------------------------------------

    /// QRTZ_FIRED_TRIGGERS: firings whose work has not finished.
    pub async fn fired_triggers(&self) -> Result<Vec<FiredTriggerView>, crate::Error> {
        rows::fired_list(self.store(), self.name()).await
    }

    /// QRTZ_SCHEDULER_STATE: the nodes' check-ins.
    pub async fn nodes(&self) -> Result<Vec<SchedulerNodeView>, crate::Error> {
        rows::checkin_list(self.store(), self.name()).await
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

/// Pauses one trigger (`one`) or every trigger of a group: WAITING → PAUSED with the trigger
/// job deleted first (a job some node is running loses its lease: that firing is dropped), the
/// firings committed ahead of their time and not started cancelled, BLOCKED → PAUSED_BLOCKED.
fn pause_writes(sched: &str, one: Option<(&str, &str)>, group: Option<&str>, now: jiff::Timestamp) -> Vec<Write> {
    let (filter, binds): (&str, Vec<SqlValue>) = match (one, group) {
        (Some((g, n)), _) => ("TRIGGER_GROUP = ? AND TRIGGER_NAME = ?", vec![t(g), t(n)]),
        (None, Some(g)) => ("TRIGGER_GROUP = ?", vec![t(g)]),
        (None, None) => ("1 = 1", vec![]),
    };
    let job_filter = match (one, group) {
        (Some(_), _) => "SCOPE_DEFINITION_ID_ = ? AND SCOPE_ID_ = ?",
        (None, Some(_)) => "SCOPE_DEFINITION_ID_ = ?",
        (None, None) => "1 = 1",
    };
    let with = |head: Vec<SqlValue>| [head, binds.clone()].concat();
    let mut out = rows::early_firings_cancel(sched, filter, job_filter, &binds, now);
    out.extend([
        w(
            &format!(
                "DELETE FROM ACT_RU_JOB WHERE SCOPE_TYPE_ = ? AND HANDLER_TYPE_ = ? AND {job_filter} AND EXISTS \
                 (SELECT 1 FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_GROUP = ACT_RU_JOB.SCOPE_DEFINITION_ID_ \
                 AND tr.TRIGGER_NAME = ACT_RU_JOB.SCOPE_ID_ AND tr.TRIGGER_STATE = 'WAITING')"
            ),
            [vec![t(&rows::scope_type(sched)), t(TRIGGER_HANDLER)], binds.clone(), vec![t(sched)]].concat(),
        ),
        w(
            &format!(
                "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED' WHERE SCHED_NAME = ? AND {filter} AND TRIGGER_STATE = 'WAITING'"
            ),
            with(vec![t(sched)]),
        ),
        w(
            &format!(
                "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED_BLOCKED' WHERE SCHED_NAME = ? AND {filter} AND TRIGGER_STATE = 'BLOCKED'"
            ),
            with(vec![t(sched)]),
        ),
    ]);
    out
}

/// Binds for `?` placeholders.
pub(crate) fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
pub(crate) fn ot(s: &Option<String>) -> SqlValue {
    s.as_deref().map(t).unwrap_or(SqlValue::Null)
}
pub(crate) fn i(n: i64) -> SqlValue {
    SqlValue::Int(n)
}
pub(crate) fn oi(n: Option<i64>) -> SqlValue {
    n.map(SqlValue::Int).unwrap_or(SqlValue::Null)
}
pub(crate) fn b(v: bool) -> SqlValue {
    SqlValue::Bool(v)
}

/// A statement with its binds.
pub(crate) fn w(sql: &str, binds: Vec<SqlValue>) -> Write {
    Write::new(sql, binds)
}
