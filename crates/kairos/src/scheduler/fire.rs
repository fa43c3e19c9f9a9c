//! The scheduler's two job handlers: `quartz-trigger` fires a trigger whose time came and moves
//! it on; `quartz-job` does one firing's work. See docs/scheduler.md, "How a trigger fires".

use super::state::{TriggerEvent, edge, edge_to};
use super::{Scheduler, TRIGGER_HANDLER, TriggerState, WORK_HANDLER, why};
use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use kairos_executor::{Handler, HandlerError, JobContext};
use kairos_store::Write;
use kairos_store_engine::scheduler as rows;
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// Runs both scheduler job kinds (the executor finds handlers by HANDLER_TYPE_).
pub(crate) struct SchedulerJobHandler(pub(crate) Arc<Scheduler>);

#[async_trait]
impl Handler for SchedulerJobHandler {
    async fn run(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        match ctx.handler_type.as_str() {
            TRIGGER_HANDLER => self.0.fire(&ctx).await.map(Some).map_err(Into::into),
            WORK_HANDLER => self.0.work(ctx).await,
            other => Err(format!("the scheduler does not run '{other}' jobs").into()),
        }
    }
}

/// Unblocks trigger `group.name` (its job's busy firing ended): BLOCKED → WAITING with its
/// trigger job, PAUSED_BLOCKED → PAUSED (each only if the row is still in that state).
pub(crate) fn unblock_writes(
    sched: &str,
    group: &str,
    name: &str,
    next: Option<i64>,
    now: Timestamp,
    ahead: SignedDuration,
) -> Vec<Write> {
    let (from, to) = (TriggerState::Blocked, edge_to(TriggerState::Blocked, TriggerEvent::Unblock));
    let mut out = rows::trigger_wake(sched, group, name, next, now, ahead, from, to);
    debug_assert_eq!(edge(Some(TriggerState::PausedBlocked), TriggerEvent::Unblock), Some(TriggerState::Paused));
    out.push(rows::trigger_unblock_paused(sched, group, name));
    out
}

impl Scheduler {
    /// One firing's work: the job detail's handler with the merged data. Its success deletes
    /// the QRTZ_FIRED_TRIGGERS row and unblocks the job's triggers, in the completion's
    /// transaction; a failure follows the job engine's retry rules.
    async fn work(&self, ctx: JobContext) -> Result<Option<String>, HandlerError> {
        let p = &ctx.payload;
        let field = |k: &str| p.get(k).and_then(Json::as_str).unwrap_or_default().to_string();
        let sched = field("scheduler");
        let handler_name = field("handler");
        let (job_name, job_group) = (field("jobName"), field("jobGroup"));
        let nonconcurrent = p.get("nonconcurrent").and_then(Json::as_bool).unwrap_or(false);
        let Some(handler) = self.handlers.get(&handler_name) else {
            return Err(format!(
                "job {job_group}.{job_name} names handler '{handler_name}', which is not registered on node {}",
                ctx.node_id
            )
            .into());
        };
        let mut inner = ctx.clone();
        inner.handler_type = handler_name;
        inner.payload = p.get("data").cloned().unwrap_or(Json::Object(Default::default()));
        let out = handler.run(inner).await?;
        ctx.stage(rows::fired_delete(&sched, &ctx.job_id).commutes());
        if nonconcurrent {
            // The job's blocked triggers (read now; the check-in sweep catches any that block
            // between this read and the commit).
            for r in rows::triggers_blocked_of_job(self.store(), &sched, &job_group, &job_name).await? {
                for wr in unblock_writes(&sched, &r.group, &r.name, r.next_fire_time, ctx.started, self.ahead()) {
                    ctx.stage(wr.commutes());
                }
            }
        }
        Ok(out)
    }
}

/// EXCLUSIVE_KEY_ of a non-concurrent job's work (VARCHAR(255): a long key keeps its start and
/// a hash of the whole, so two jobs never share one by truncation).
fn exclusive_key(sched: &str, group: &str, name: &str) -> String {
    let full = format!("quartz:{sched}:{group}.{name}");
    if full.chars().count() <= 255 {
        return full;
    }
    // FNV-1a: stable across builds and platforms (std's hasher is not).
    let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let head: String = full.chars().take(230).collect();
    format!("{head}#{hash:016x}")
}

impl Scheduler {
    /// A trigger's time came (its trigger job runs at NEXT_FIRE_TIME): apply its misfire
    /// instruction if it is late, block it if its non-concurrent job is busy, otherwise fire
    /// it — the work job, the QRTZ_FIRED_TRIGGERS row, the trigger moved on and its next
    /// trigger job — all staged to commit with this job's completion.
    async fn fire(&self, ctx: &JobContext) -> Result<String, crate::Error> {
        let field = |k: &str| ctx.payload.get(k).and_then(Json::as_str).unwrap_or_default().to_string();
        let (sched, group, name) = (field("scheduler"), field("group"), field("name"));
        let now = ctx.started;
        // A firing's writes touch its own trigger (guarded by the fire-time check), its new
        // jobs and fired-trigger row: they commute with other jobs' (`Write::commutes`).
        let stage = |writes: Vec<Write>| writes.into_iter().for_each(|wr| ctx.stage(wr.commutes()));
        let (loaded, job) = match rows::trigger_with_job_get(self.store(), &sched, &group, &name).await? {
            None => return Ok(format!("trigger {group}.{name} is gone; nothing to fire")),
            Some(Err(u)) => {
                stage(vec![error_write(&sched, &group, &name)]);
                return Ok(format!("trigger {group}.{name} cannot be read, set to ERROR: {}", why(&u)));
            }
            Some(Ok(l)) => l,
        };
        let mut tr = loaded.trigger;
        let was = tr.next_fire_time;
        // The fire time this trigger job is for (jobs written before fire-ahead have none in
        // their configuration: their due date is it).
        let for_time = ctx.payload.get("fireTime").and_then(Json::as_i64).or(ctx.due_date.map(rows::ts_to_ms));
        let delete = || edge(Some(TriggerState::Waiting), TriggerEvent::Delete);
        if loaded.state != TriggerState::Waiting || was.map(rows::ts_to_ms) != for_time {
            return Ok(format!(
                "stale trigger job: {group}.{name} is {} with next fire time {was:?}; nothing to fire",
                loaded.state.as_str()
            ));
        }
        let calendar = match &tr.calendar_name {
            None => None,
            Some(c) => match self.calendar_model(&sched, c).await? {
                Some(cal) => Some(cal),
                None => {
                    stage(vec![error_write(&sched, &group, &name)]);
                    return Ok(format!(
                        "trigger {group}.{name} names calendar '{c}', which does not exist: set to ERROR"
                    ));
                }
            },
        };
        let Some(job) = job else {
            delete();
            stage(rows::trigger_delete(&sched, &group, &name, now));
            return Ok(format!("trigger {group}.{name} points at a job that is gone: trigger deleted"));
        };
        let cal = calendar.as_ref();
        let mut note = String::new();
        if tr.is_misfired(now, self.settings.misfire_threshold) {
            let late = now.duration_since(was.unwrap_or(now));
            match tr.update_after_misfire(now, cal) {
                kairos_schedule::MisfireOutcome::Ignored | kairos_schedule::MisfireOutcome::FireNow => {
                    note = format!(" (misfired by {late:#}: {})", tr.resolved_misfire_instruction().name());
                }
                kairos_schedule::MisfireOutcome::Rescheduled => {
                    let next = tr.next_fire_time.expect("rescheduled to a time");
                    let to = edge_to(TriggerState::Waiting, TriggerEvent::SkipMisfired);
                    let mut writes = rows::trigger_advance(&sched, &tr, was, to);
                    writes.push(rows::trigger_job_insert(&sched, &group, &name, tr.priority, next, now, self.ahead()));
                    stage(writes);
                    return Ok(format!(
                        "trigger {group}.{name} misfired by {late:#} ({}): not fired, next fire time {next}",
                        tr.resolved_misfire_instruction().name()
                    ));
                }
                kairos_schedule::MisfireOutcome::Complete => {
                    delete();
                    stage(rows::trigger_finish(&sched, &tr, was, job.durable));
                    return Ok(format!("trigger {group}.{name} misfired by {late:#} with no fire time left: deleted"));
                }
            }
        }
        if !job.concurrent && rows::job_busy(self.store(), &sched, &job.group, &job.name).await? {
            let to = edge_to(TriggerState::Waiting, TriggerEvent::Block);
            stage(rows::trigger_advance(&sched, &tr, was, to));
            return Ok(format!(
                "trigger {group}.{name} blocked: job {}.{} is non-concurrent and running",
                job.group, job.name
            ));
        }
        let scheduled = tr.next_fire_time.unwrap_or(now);
        tr.triggered_at(cal, now);
        let work_id = kairos_core::new_id();
        let mut data = job.data.clone();
        data.extend(loaded.data.clone());
        // The trigger moves on, or goes after its last fire; either statement is conditional on
        // the fire time loaded, so each fire time fires once.
        let mut writes = match tr.next_fire_time {
            Some(_) => rows::trigger_advance(&sched, &tr, was, edge_to(TriggerState::Waiting, TriggerEvent::Fire)),
            None => {
                delete();
                rows::trigger_finish(&sched, &tr, was, job.durable)
            }
        };
        let config = json!({
            "scheduler": sched, "handler": job.handler, "jobName": job.name, "jobGroup": job.group,
            "triggerName": name, "triggerGroup": group, "nonconcurrent": !job.concurrent, "data": data,
        })
        .to_string();
        let work = rows::WorkJob {
            id: &work_id,
            job: &job,
            exclusive_key: (!job.concurrent).then(|| exclusive_key(&sched, &job.group, &job.name)),
            trigger_group: &group,
            trigger_name: &name,
            scheduled,
            now,
            priority: tr.priority,
            config,
        };
        writes.push(rows::work_job_insert(&sched, &work));
        writes.push(rows::fired_insert(&sched, &work, &ctx.node_id));
        let next = tr.next_fire_time;
        if let Some(n) = next {
            writes.push(rows::trigger_job_insert(&sched, &group, &name, tr.priority, n, now, self.ahead()));
        }
        stage(writes);
        Ok(match next {
            Some(n) => format!("fired {group}.{name} for {scheduled}{note}; next fire time {n}"),
            None => format!("fired {group}.{name} for {scheduled}{note}; its last fire time: trigger deleted"),
        })
    }
}

/// Puts a WAITING trigger in ERROR (its row cannot be used); an operator resumes it.
fn error_write(sched: &str, group: &str, name: &str) -> Write {
    debug_assert_eq!(edge(Some(TriggerState::Waiting), TriggerEvent::Fail), Some(TriggerState::Error));
    rows::trigger_error(sched, group, name)
}
