//! The scheduler's two job handlers: `quartz-trigger` fires a trigger whose time came and moves
//! it on; `quartz-job` does one firing's work. See docs/scheduler.md, "How a trigger fires".

use super::{Scheduler, TRIGGER_HANDLER, TriggerState, WORK_HANDLER, b, i, model, rows, t, w};
use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use kairos_executor::{Handler, HandlerError, JobContext};
use kairos_store::{SqlValue, Write};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// Attempts a trigger job gets: its work is a few statements, so a failure is the database
/// being away; it is tried again, and its last failure leaves a dead letter naming the trigger.
const TRIGGER_JOB_RETRIES: i64 = 5;

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

/// The columns and values of trigger `group.name`'s trigger job for fire time `fire` (its
/// NEXT_FIRE_TIME): due `ahead` of it (`SchedulerSettings::fire_ahead`), the fire time in its
/// configuration.
fn trigger_job_values(
    sched: &str,
    group: &str,
    name: &str,
    fire: Timestamp,
    now: Timestamp,
    ahead: SignedDuration,
) -> (&'static str, Vec<SqlValue>) {
    (
        "ID_, REV_, TYPE_, EXCLUSIVE_, RETRIES_, ATTEMPTS_, DUEDATE_, HANDLER_TYPE_, HANDLER_CFG_, SCOPE_ID_, SCOPE_TYPE_, \
         SCOPE_DEFINITION_ID_, CREATE_TIME_, TENANT_ID_",
        vec![
            t(&kairos_core::new_id()),
            i(1),
            t("timer"),
            b(false),
            i(TRIGGER_JOB_RETRIES),
            i(0),
            SqlValue::Timestamp(fire.checked_sub(ahead).unwrap_or(fire)),
            t(TRIGGER_HANDLER),
            t(&json!({"scheduler": sched, "group": group, "name": name, "fireTime": rows::ts_to_ms(fire)}).to_string()),
            t(name),
            t(&rows::scope_type(sched)),
            t(group),
            SqlValue::Timestamp(now),
            t(""),
        ],
    )
}

/// Inserts trigger `group.name`'s trigger job for fire time `fire`, due `ahead` of it, with the
/// trigger's priority: trigger jobs due at the same instant are acquired higher priority first,
/// so simultaneous firings happen (and their work jobs run) in Quartz's order.
pub(crate) fn trigger_job_insert(
    sched: &str,
    group: &str,
    name: &str,
    priority: i32,
    fire: Timestamp,
    now: Timestamp,
    ahead: SignedDuration,
) -> Write {
    let (cols, mut values) = trigger_job_values(sched, group, name, fire, now, ahead);
    values.push(i(priority.into()));
    Write::new(format!("INSERT INTO ACT_RU_JOB ({cols}, PRIORITY_) VALUES ({})", placeholders(values.len())), values)
}

/// Gives trigger `group.name` its trigger job back if it is still `from` (with NEXT_FIRE_TIME
/// `next`): the job for `next` (or now, if it has none, with the trigger's PRIORITY), then the
/// state `to`. Safe to run twice
/// or concurrently: the job is inserted only while the row is still `from`, before the state
/// moves, in one transaction.
#[allow(clippy::too_many_arguments)]
pub(crate) fn wake_writes(
    sched: &str,
    group: &str,
    name: &str,
    next: Option<i64>,
    now: Timestamp,
    ahead: SignedDuration,
    from: TriggerState,
    to: TriggerState,
) -> Vec<Write> {
    let fire = next.map(rows::ms_to_ts).unwrap_or(now);
    let key = || vec![t(sched), t(name), t(group), t(from.as_str())];
    let (cols, values) = trigger_job_values(sched, group, name, fire, now, ahead);
    vec![
        Write::new(
            format!(
                "INSERT INTO ACT_RU_JOB ({cols}, PRIORITY_) SELECT {}, COALESCE(PRIORITY, {}) FROM QRTZ_TRIGGERS \
                 WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? AND TRIGGER_STATE = ?",
                placeholders(values.len()),
                kairos_schedule::DEFAULT_PRIORITY
            ),
            values.into_iter().chain(key()).collect(),
        ),
        w(
            "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = ? WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
             AND TRIGGER_STATE = ?",
            [vec![t(to.as_str())], key()].concat(),
        ),
    ]
}

/// Unblocks trigger `group.name`: BLOCKED → WAITING with its trigger job, PAUSED_BLOCKED →
/// PAUSED (each only if the row is still in that state).
pub(crate) fn unblock_writes(
    sched: &str,
    group: &str,
    name: &str,
    next: Option<i64>,
    now: Timestamp,
    ahead: SignedDuration,
) -> Vec<Write> {
    let mut out = wake_writes(sched, group, name, next, now, ahead, TriggerState::Blocked, TriggerState::Waiting);
    out.push(w(
        "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'PAUSED' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
         AND TRIGGER_STATE = 'PAUSED_BLOCKED'",
        vec![t(sched), t(name), t(group)],
    ));
    out
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
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
        ctx.stage(
            w("DELETE FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND ENTRY_ID = ?", vec![t(&sched), t(&ctx.job_id)])
                .commutes(),
        );
        if nonconcurrent {
            // The job's blocked triggers (read now; the check-in sweep catches any that block
            // between this read and the commit).
            let blocked = self
                .store()
                .read(
                    "SELECT TRIGGER_NAME, TRIGGER_GROUP, NEXT_FIRE_TIME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? \
                     AND JOB_GROUP = ? AND TRIGGER_STATE IN ('BLOCKED', 'PAUSED_BLOCKED')",
                    &[t(&sched), t(&job_name), t(&job_group)],
                )
                .await?;
            for r in blocked {
                let (name, group) = (r[0].as_str().unwrap_or_default(), r[1].as_str().unwrap_or_default());
                for wr in unblock_writes(&sched, group, name, r[2].as_i64(), ctx.started, self.ahead()) {
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
        let (loaded, job) = match self.load_with_job(&sched, &group, &name).await? {
            None => return Ok(format!("trigger {group}.{name} is gone; nothing to fire")),
            Some(Err(why)) => {
                stage(vec![error_write(&sched, &group, &name)]);
                return Ok(format!("trigger {group}.{name} cannot be read, set to ERROR: {why}"));
            }
            Some(Ok(l)) => l,
        };
        let mut tr = loaded.trigger;
        let was = tr.next_fire_time;
        // The fire time this trigger job is for (jobs written before fire-ahead have none in
        // their configuration: their due date is it).
        let for_time = ctx.payload.get("fireTime").and_then(Json::as_i64).or(ctx.due_date.map(rows::ts_to_ms));
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
                    let mut writes = model::trigger_advance(&sched, &tr, was, TriggerState::Waiting);
                    writes.push(trigger_job_insert(&sched, &group, &name, tr.priority, next, now, self.ahead()));
                    stage(writes);
                    return Ok(format!(
                        "trigger {group}.{name} misfired by {late:#} ({}): not fired, next fire time {next}",
                        tr.resolved_misfire_instruction().name()
                    ));
                }
                kairos_schedule::MisfireOutcome::Complete => {
                    stage(finish_writes(&sched, &tr, was, job.durable));
                    return Ok(format!("trigger {group}.{name} misfired by {late:#} with no fire time left: deleted"));
                }
            }
        }
        if !job.concurrent && self.job_busy(&sched, &job.group, &job.name).await? {
            stage(model::trigger_advance(&sched, &tr, was, TriggerState::Blocked));
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
            Some(_) => model::trigger_advance(&sched, &tr, was, TriggerState::Waiting),
            None => finish_writes(&sched, &tr, was, job.durable),
        };
        // The work job, due at the fire time with the trigger's priority: firings due at the
        // same instant run higher priority first (Quartz: NEXT_FIRE_TIME, then PRIORITY DESC).
        writes.push(w(
            "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, EXCLUSIVE_KEY_, ELEMENT_ID_, ELEMENT_NAME_, RETRIES_, ATTEMPTS_, \
             DUEDATE_, HANDLER_TYPE_, HANDLER_CFG_, SCOPE_ID_, SCOPE_TYPE_, SCOPE_DEFINITION_ID_, CREATE_TIME_, TENANT_ID_, \
             PRIORITY_) VALUES (?, 1, 'message', ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, '', ?)",
            vec![
                t(&work_id),
                b(!job.concurrent),
                if job.concurrent { SqlValue::Null } else { t(&exclusive_key(&sched, &job.group, &job.name)) },
                t(&job.name),
                t(&job.group),
                i(job.retries.into()),
                SqlValue::Timestamp(scheduled),
                t(WORK_HANDLER),
                t(&json!({
                    "scheduler": sched, "handler": job.handler, "jobName": job.name, "jobGroup": job.group,
                    "triggerName": name, "triggerGroup": group, "nonconcurrent": !job.concurrent, "data": data,
                })
                .to_string()),
                t(&name),
                t(&rows::scope_type(&sched)),
                t(&group),
                SqlValue::Timestamp(now),
                i(tr.priority.into()),
            ],
        ));
        writes.push(w(
            "INSERT INTO QRTZ_FIRED_TRIGGERS (SCHED_NAME, ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_TIME, \
             SCHED_TIME, PRIORITY, STATE, JOB_NAME, JOB_GROUP, IS_NONCONCURRENT, REQUESTS_RECOVERY) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'ACQUIRED', ?, ?, ?, ?)",
            vec![
                t(&sched),
                t(&work_id),
                t(&name),
                t(&group),
                t(&ctx.node_id),
                i(rows::ts_to_ms(now)),
                i(rows::ts_to_ms(scheduled)),
                i(tr.priority.into()),
                t(&job.name),
                t(&job.group),
                b(!job.concurrent),
                b(job.requests_recovery),
            ],
        ));
        let next = tr.next_fire_time;
        if let Some(n) = next {
            writes.push(trigger_job_insert(&sched, &group, &name, tr.priority, n, now, self.ahead()));
        }
        stage(writes);
        Ok(match next {
            Some(n) => format!("fired {group}.{name} for {scheduled}{note}; next fire time {n}"),
            None => format!("fired {group}.{name} for {scheduled}{note}; its last fire time: trigger deleted"),
        })
    }

    /// Whether a firing of the job has not finished (its QRTZ_FIRED_TRIGGERS row is there).
    async fn job_busy(&self, sched: &str, group: &str, name: &str) -> Result<bool, crate::Error> {
        let rows = self
            .store()
            .read(
                "SELECT 1 FROM QRTZ_FIRED_TRIGGERS WHERE SCHED_NAME = ? AND JOB_NAME = ? AND JOB_GROUP = ?",
                &[t(sched), t(name), t(group)],
            )
            .await?;
        Ok(!rows.is_empty())
    }
}

/// Inside a trigger's own trigger job, after its last fire: its type row, then its row —
/// conditional on the fire time loaded (the once-per-fire-time check) — and its job when that
/// is not durable and no other trigger points at it (Quartz deletes both). The trigger job
/// itself is deleted by its completion.
fn finish_writes(sched: &str, tr: &kairos_schedule::Trigger, was: Option<Timestamp>, durable: bool) -> Vec<Write> {
    let (key, job) = (&tr.key, &tr.job_key);
    let k = || vec![t(sched), t(&key.name), t(&key.group)];
    let table = match tr.kind() {
        kairos_schedule::TriggerKind::Simple => "QRTZ_SIMPLE_TRIGGERS",
        kairos_schedule::TriggerKind::Cron => "QRTZ_CRON_TRIGGERS",
        _ => "QRTZ_SIMPROP_TRIGGERS",
    };
    let mut out = vec![
        w(&format!("DELETE FROM {table} WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ?"), k()),
        w(
            "DELETE FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
             AND TRIGGER_STATE = ? AND NEXT_FIRE_TIME = ?",
            [k(), vec![t(TriggerState::Waiting.as_str()), SqlValue::Int(was.map(rows::ts_to_ms).unwrap_or(-1))]]
                .concat(),
        )
        .expect(1)
        .keyed(),
    ];
    if !durable {
        out.push(rows::orphan_job_delete(sched, &job.group, &job.name));
    }
    out
}

/// Puts a WAITING trigger in ERROR (its row cannot be used); an operator resumes it.
fn error_write(sched: &str, group: &str, name: &str) -> Write {
    w(
        "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'ERROR' WHERE SCHED_NAME = ? AND TRIGGER_NAME = ? AND TRIGGER_GROUP = ? \
         AND TRIGGER_STATE = 'WAITING'",
        vec![t(sched), t(name), t(group)],
    )
}
