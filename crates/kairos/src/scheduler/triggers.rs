//! The operator's commands on triggers: schedule (one or many), read, list, unschedule, pause
//! and resume (one trigger, a group, a job's triggers). Each state change names its transition
//! of [`super::state`]'s table.

use super::check_name;
use super::state::{TriggerEvent, edge, edge_to};
use super::{
    JobSpec, Scheduler, SchedulerError, TriggerSpec, TriggerState, TriggerView, model, never_fires, not_found, why,
};
use kairos_store::Write;
use kairos_store_engine::scheduler::{self as rows, PauseScope};

/// The state a new trigger starts in: PAUSED in a paused group, WAITING otherwise.
fn created(paused: bool) -> TriggerState {
    let event = if paused { TriggerEvent::ScheduleInPausedGroup } else { TriggerEvent::Schedule };
    edge(None, event).unwrap_or(TriggerState::Paused)
}

/// Pauses one trigger or every trigger of a group: WAITING → PAUSED (its trigger job goes),
/// BLOCKED → PAUSED_BLOCKED; PAUSED and PAUSED_BLOCKED ones stay.
fn pause_writes(sched: &str, scope: PauseScope<'_>, now: jiff::Timestamp) -> Vec<Write> {
    debug_assert_eq!(edge(Some(TriggerState::Waiting), TriggerEvent::Pause), Some(TriggerState::Paused));
    debug_assert_eq!(edge(Some(TriggerState::Blocked), TriggerEvent::Pause), Some(TriggerState::PausedBlocked));
    rows::trigger_pause(sched, scope, now)
}

impl Scheduler {
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
        let existing = rows::trigger_get(self.store(), self.name(), &group, &name).await?;
        let exists = existing.is_some();
        if exists && !spec.replace {
            return Err(SchedulerError::Conflict(format!(
                "trigger {group}.{name} exists (set replace to reschedule it)"
            ))
            .into());
        }
        let paused = rows::group_paused(self.store(), self.name(), &group).await?;
        let state = created(paused);
        let data = spec.data.clone().unwrap_or_default();
        if let Some(old) = existing {
            // Rescheduled: the old row goes (from its state, or unreadable), the new one comes.
            edge(old.ok().map(|o| o.state), TriggerEvent::Delete);
            writes.extend(rows::trigger_delete(self.name(), &group, &name, now));
        }
        writes.extend(rows::trigger_insert(self.name(), &tr, state, &data));
        if state == TriggerState::Waiting
            && let Some(next) = tr.next_fire_time
        {
            writes.push(rows::trigger_job_insert(self.name(), &group, &name, tr.priority, next, now, self.ahead()));
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
            let state = created(paused);
            if k % 1000 == 0 {
                batches.push(Vec::new());
            }
            let batch = batches.last_mut().expect("a batch");
            batch.extend(rows::trigger_insert(self.name(), &tr, state, &spec.data.clone().unwrap_or_default()));
            if let (TriggerState::Waiting, Some(next)) = (state, tr.next_fire_time) {
                batch.push(rows::trigger_job_insert(
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
        match rows::trigger_get(self.store(), self.name(), group, name).await? {
            Some(Ok(l)) => Ok(TriggerView::of(&l.trigger, l.state, l.data)),
            Some(Err(u)) => {
                Err(SchedulerError::Conflict(format!("trigger {group}.{name} cannot be read: {}", why(&u))).into())
            }
            None => Err(not_found(format!("no trigger {group}.{name}"))),
        }
    }

    /// Triggers, optionally of one group and/or in one state; unreadable rows are skipped.
    pub async fn triggers(
        &self,
        group: Option<&str>,
        state: Option<TriggerState>,
    ) -> Result<Vec<TriggerView>, crate::Error> {
        Ok(rows::trigger_list(self.store(), self.name(), group, state)
            .await?
            .into_iter()
            .filter_map(Result::ok)
            .map(|l| TriggerView::of(&l.trigger, l.state, l.data))
            .collect())
    }

    /// Triggers of this scheduler whose rows cannot be read, at most `limit`: each named by
    /// `group.name`, with the column and stored text its error names. Such a trigger is
    /// skipped by the lists and does not fire; the others do.
    pub async fn unreadable_triggers(&self, limit: usize) -> Result<Vec<kairos_store::Unreadable>, crate::Error> {
        Ok(rows::trigger_list(self.store(), self.name(), None, None)
            .await?
            .into_iter()
            .filter_map(Result::err)
            .take(limit)
            .collect())
    }

    /// Removes a trigger (Quartz's unscheduleJob) and its trigger job; its job stays (a
    /// non-durable job left without triggers goes too, as in Quartz).
    pub async fn unschedule(&self, group: &str, name: &str) -> Result<(), crate::Error> {
        let Some(Ok(l)) = rows::trigger_get(self.store(), self.name(), group, name).await? else {
            return Err(not_found(format!("no trigger {group}.{name}")));
        };
        edge(Some(l.state), TriggerEvent::Delete);
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
        self.store.write_all(&pause_writes(self.name(), PauseScope::Trigger(group, name), now)).await?;
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
            writes.extend(rows::trigger_wake(
                self.name(),
                group,
                name,
                v.next_fire_time.map(rows::ts_to_ms),
                now,
                self.ahead(),
                from,
                edge_to(from, TriggerEvent::Resume),
            ));
        }
        debug_assert_eq!(edge(Some(TriggerState::PausedBlocked), TriggerEvent::Resume), Some(TriggerState::Blocked));
        writes.push(rows::trigger_resume_blocked(self.name(), group, name));
        self.store.write_all(&writes).await?;
        self.trigger(group, name).await
    }

    /// Pauses a trigger group (Quartz's pauseTriggers(GroupMatcher.groupEquals)): its triggers
    /// pause, and the group stays paused — triggers added to it later start PAUSED.
    pub async fn pause_group(&self, group: &str) -> Result<(), crate::Error> {
        check_name("group", group)?;
        let mut writes = rows::paused_group_insert(self.name(), group);
        writes.extend(pause_writes(self.name(), PauseScope::Group(group), self.store.db_now().await?));
        self.store.write_all(&writes).await?;
        Ok(())
    }

    /// Resumes a trigger group: it is no longer paused, and each of its paused triggers
    /// resumes.
    pub async fn resume_group(&self, group: &str) -> Result<(), crate::Error> {
        check_name("group", group)?;
        self.store.write_all(&[rows::paused_group_delete(self.name(), group)]).await?;
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
        Ok(rows::paused_groups(self.store(), self.name()).await?)
    }
}
