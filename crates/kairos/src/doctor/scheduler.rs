//! The scheduler's findings: seed 004 §5's walk ("is the scheduler running, can the trigger
//! fire, what is blocked"), judged by the database clock, plus the one invariant of kairos's
//! design an operator can check: a WAITING trigger has its trigger job.
//!
//! 1. §5.1 check-ins: nodes whose QRTZ_SCHEDULER_STATE row is older than twice its interval
//!    (a node that was not stopped cleanly is a warning: it was killed or lost the database);
//! 2. §5.2 triggers that will not fire: WAITING ones late by more than 5 s (a backlog), ERROR
//!    ones, WAITING ones without a trigger job, PAUSED ones (by themselves or their group, from
//!    QRTZ_PAUSED_TRIGGER_GRPS), BLOCKED ones, and §5.4's cron triggers in another time zone
//!    than the nodes;
//! 3. §5.3 firings: ACQUIRED for more than 30 s (no free worker), EXECUTING for longer than the
//!    lock time of the node running them (a stuck handler). These are checked even when
//!    QRTZ_TRIGGERS is empty: a firing outlives its trigger.
//!
//! Each finding names one trigger in its own fields (group, name), at most
//! [`DIAGNOSTICS_LIMIT`] of a kind; a `truncated` finding says how many there are in all.

use super::*;
use kairos_store_engine::doctor::scheduler::{self as q, TriggerFinding};
use kairos_store_engine::scheduler::{FiredTrigger, SchedulerNode, checkins_by_node, fired_by_time};

/// Seed 004 §5.2: a WAITING trigger this late means the scheduler is behind.
const LATE_AFTER_MS: i64 = 5_000;
/// Seed 004 §5.3: a firing ACQUIRED this long has no worker.
const ACQUIRED_TOO_LONG_MS: i64 = 30_000;

/// One finding per trigger row (at most [`DIAGNOSTICS_LIMIT`]), then a `truncated` note.
fn per_trigger<R: Keyed>(
    out: &mut Vec<Finding>,
    rows: &[R],
    code: &'static str,
    what: &str,
    mut make: impl FnMut(&R, &str, &str) -> Finding,
) {
    for r in rows.iter().take(DIAGNOSTICS_LIMIT as usize) {
        let (group, name) = r.key();
        let f = make(r, &group, &name);
        out.push(f.of_trigger(group, name));
    }
    super::cluster::more(
        out,
        code,
        rows.len() as u64,
        rows.len().min(DIAGNOSTICS_LIMIT as usize),
        what,
        "GET /scheduler/triggers",
    );
}

/// The rows a check reads, or none when one of them cannot be read: that row is then a finding
/// of its own (`unreadable-row`, naming its table, row and column) and the other checks go on,
/// so a bad QRTZ_* value never hides the rest of the diagnosis.
fn readable<T>(read: Result<Vec<T>, kairos_store::Error>, out: &mut Vec<Finding>) -> Result<Vec<T>, Error> {
    match read {
        Ok(rows) => Ok(rows),
        Err(e) => match e.unreadable.as_deref() {
            Some(u) => {
                out.push(super::unreadable::finding_of(u));
                Ok(Vec::new())
            }
            None => Err(e.into()),
        },
    }
}

/// A row about one trigger: its (group, name).
trait Keyed {
    fn key(&self) -> (String, String);
}

impl Keyed for TriggerFinding {
    fn key(&self) -> (String, String) {
        (self.group.clone(), self.name.clone())
    }
}

impl Keyed for &FiredTrigger {
    fn key(&self) -> (String, String) {
        (self.trigger_group.clone(), self.trigger_name.clone())
    }
}

/// An epoch-millisecond QRTZ_* column in RFC 3339.
fn at(ms: i64) -> String {
    Timestamp::from_millisecond(ms).map_or_else(|_| format!("{ms} ms"), |t| t.to_string())
}

pub(super) async fn checks(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let store = engine.store().as_ref();
    let sched = engine.scheduler().settings().name.clone();
    let trigger_count = q::trigger_count(store, &sched).await?;
    checkins(store, ctx, &sched, trigger_count, out).await?;
    // What each firing is really in (EXECUTING when its work job is locked).
    let fired = readable(fired_by_time(store, &sched).await, out)?;
    if trigger_count > 0 {
        not_firing(store, ctx, &sched, &fired, out).await?;
    }
    firings(ctx, &fired, out);
    Ok(())
}

/// Seed 004 §5.1.
async fn checkins(
    store: &dyn Store,
    ctx: &Ctx,
    sched: &str,
    trigger_count: i64,
    out: &mut Vec<Finding>,
) -> Result<(), Error> {
    let now_ms = ctx.now.as_millisecond();
    let checkins = readable(checkins_by_node(store, sched).await, out)?;
    let stale = |r: &SchedulerNode| now_ms - r.last_checkin_time.as_millisecond() > 2 * r.checkin_interval_ms.max(1000);
    if trigger_count > 0 && !checkins.iter().any(|r| !stale(r)) && !ctx.from_tool {
        out.push(finding(
            Severity::Warning,
            "no-scheduler-checkin",
            format!("No node of scheduler '{sched}' checked in recently, and it has {trigger_count} trigger(s)"),
            "Seed 004 §5.1: QRTZ_SCHEDULER_STATE has no fresh row; a node runs the scheduler's check-ins while its executor runs.".into(),
            "Start `kairos serve` (with its executor) on at least one node; triggers fire only through an executor.".into(),
        ));
    }
    for r in checkins.iter().filter(|r| stale(r)) {
        let node = r.instance_name.clone();
        let last = r.last_checkin_time.as_millisecond();
        let stopped = ctx.node(&node).is_some_and(|n| n.state == "stopped");
        let (severity, why, action) = if stopped {
            (
                Severity::Info,
                "KAIROS_NODE says it stopped cleanly.",
                "Nothing: its firings were handed back. Its row goes after an hour.".to_string(),
            )
        } else {
            (
                Severity::Warning,
                "It did not stop cleanly: it was killed, hangs, or lost the database (seed 004 §5.1: a check-in older than 60 s is a node that is down).",
                format!(
                    "Check node {node} on its host and start it again. Its firings are taken over once a live node declares it dead (a job that requests recovery runs again; others are not re-run). If no node is alive, nothing fires: start one."
                ),
            )
        };
        out.push(finding(
            severity,
            "stale-checkin",
            format!(
                "Node {node} last checked in {} ago, at {}",
                human(SignedDuration::from_millis(now_ms - last)),
                at(last)
            ),
            format!(
                "Its check-in interval is {} ms; a row older than twice that is a node that is gone. {why}",
                r.checkin_interval_ms
            ),
            action,
        ));
    }
    Ok(())
}

/// Seed 004 §5.2 and §5.4: triggers that will not fire, and why.
async fn not_firing(
    store: &dyn Store,
    ctx: &Ctx,
    sched: &str,
    fired: &[FiredTrigger],
    out: &mut Vec<Finding>,
) -> Result<(), Error> {
    let now_ms = ctx.now.as_millisecond();
    let late = readable(q::triggers_late(store, sched, now_ms - LATE_AFTER_MS).await, out)?;
    per_trigger(out, &late, "trigger-late", "late WAITING triggers", |r, group, name| {
        let next = r.next_fire_time.unwrap_or(now_ms);
        finding(
            Severity::Warning,
            "trigger-late",
            format!("Trigger {group}.{name} is {} past its fire time", human(SignedDuration::from_millis(now_ms - next))),
            format!("Seed 004 §5.2: it is WAITING with NEXT_FIRE_TIME {}, more than 5 s ago.", at(next)),
            "Check that executors run (`executor-off`, `no-live-node` above) and have free workers (the `backlog` finding); a trigger more than the misfire threshold late follows its misfire instruction when it is picked up.".into(),
        )
    });
    let errors = readable(q::triggers_in_error(store, sched).await, out)?;
    per_trigger(out, &errors, "trigger-error", "triggers in ERROR", |_, group, name| {
        finding(
            Severity::Error,
            "trigger-error",
            format!("Trigger {group}.{name} is in ERROR and will not fire"),
            "Its row could not be used (e.g. its calendar was deleted); the job log of its last trigger job says why."
                .into(),
            format!("Fix the cause, then PUT /scheduler/triggers/{group}/{name} {{\"action\": \"resume\"}}."),
        )
    });
    let jobless = readable(q::triggers_without_trigger_job(store, sched).await, out)?;
    per_trigger(out, &jobless, "trigger-without-job", "WAITING triggers without a trigger job", |_, group, name| {
        finding(
            Severity::Error,
            "trigger-without-job",
            format!("Trigger {group}.{name} is WAITING but has no trigger job and would never fire"),
            "A WAITING trigger fires through its `quartz-trigger` row in ACT_RU_JOB; it was deleted by hand or dead-lettered (ACT_RU_DEADLETTER_JOB).".into(),
            format!("Pause and resume the trigger (PUT /scheduler/triggers/{group}/{name} {{\"action\": \"pause\"}}, then \"resume\"): resuming gives it its trigger job back."),
        )
    });
    paused(store, sched, out).await?;
    blocked(store, sched, fired, out).await?;
    time_zones(store, ctx, sched, out).await
}

/// Seed 004 §5.2: `TRIGGER_STATE != WAITING (PAUSED …): look at qrtz_paused_trigger_grps`.
async fn paused(store: &dyn Store, sched: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    let rows = readable(q::triggers_paused(store, sched).await, out)?;
    let (by_group, own): (Vec<TriggerFinding>, Vec<TriggerFinding>) = rows.into_iter().partition(|r| r.group_paused);
    per_trigger(out, &by_group, "trigger-group-paused", "triggers of paused groups", |_, group, name| {
        finding(
            Severity::Info,
            "trigger-group-paused",
            format!("Trigger {group}.{name} does not fire: its group {group} is paused"),
            format!(
                "Group {group} is in QRTZ_PAUSED_TRIGGER_GRPS (seed 004 §5.2), so its triggers are PAUSED, and new triggers in it start paused."
            ),
            format!(
                "If that is not wanted: PUT /scheduler/trigger-groups/{group} {{\"action\": \"resume\"}} (or `kairos triggers resume --group {group}`)."
            ),
        )
    });
    per_trigger(out, &own, "trigger-paused", "paused triggers", |_, group, name| {
        finding(
            Severity::Info,
            "trigger-paused",
            format!("Trigger {group}.{name} is paused and does not fire"),
            "Its TRIGGER_STATE is PAUSED (it, or all the triggers of its job, were paused); a paused trigger has no trigger job (seed 004 §5.2).".into(),
            format!("If that is not wanted: PUT /scheduler/triggers/{group}/{name} {{\"action\": \"resume\"}}; fire times missed meanwhile follow its misfire instruction."),
        )
    });
    Ok(())
}

/// BLOCKED: the trigger's job is non-concurrent and a firing of it is under way. With no firing
/// of that job left, nothing will unblock it.
async fn blocked(store: &dyn Store, sched: &str, fired: &[FiredTrigger], out: &mut Vec<Finding>) -> Result<(), Error> {
    let rows = readable(q::triggers_blocked(store, sched).await, out)?;
    per_trigger(out, &rows, "trigger-blocked", "blocked triggers", |r, group, name| {
        let (job_name, job_group) = (r.job_name.clone().unwrap_or_default(), r.job_group.clone().unwrap_or_default());
        let running = fired.iter().any(|f| f.job_name == r.job_name && f.job_group == r.job_group);
        if running {
            finding(
                Severity::Info,
                "trigger-blocked",
                format!("Trigger {group}.{name} is BLOCKED while job {job_group}.{job_name} runs"),
                "Its job is non-concurrent (@DisallowConcurrentExecution) and a firing of it is under way (QRTZ_FIRED_TRIGGERS); the trigger fires again when that firing ends.".into(),
                "Nothing, unless that firing hangs (see fired-running-long).".into(),
            )
        } else {
            finding(
                Severity::Warning,
                "trigger-blocked",
                format!("Trigger {group}.{name} is BLOCKED, but no firing of job {job_group}.{job_name} is under way"),
                "A blocked trigger waits for its non-concurrent job's firing to end; QRTZ_FIRED_TRIGGERS holds none, so unless a node's check-in releases it, it stays blocked (seed 004 §5.3).".into(),
                format!("A check-in of a live node releases triggers whose job has no firing left: make sure a node runs. If it stays, delete and schedule it again (DELETE /scheduler/triggers/{group}/{name}, then POST /scheduler/triggers)."),
            )
        }
    });
    Ok(())
}

/// Seed 004 §5.4: a cron trigger whose TIME_ZONE_ID is not the zone the nodes run in fires at
/// the hours of its zone, which looks like "it fired at the wrong time" or "it did not fire".
async fn time_zones(store: &dyn Store, ctx: &Ctx, sched: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    let mut zones: Vec<&str> = ctx
        .nodes
        .iter()
        .filter(|n| n.state == "running")
        .filter_map(|n| n.settings.as_ref().map(|s| s.time_zone.as_str()))
        .filter(|z| !z.is_empty())
        .collect();
    zones.sort_unstable();
    zones.dedup();
    if zones.is_empty() {
        return Ok(());
    }
    let rows = readable(q::cron_triggers_with_zone(store, sched).await, out)?;
    let other: Vec<TriggerFinding> =
        rows.into_iter().filter(|r| r.time_zone.as_deref().is_some_and(|z| !zones.contains(&z))).collect();
    let nodes = zones.join(", ");
    per_trigger(out, &other, "trigger-time-zone", "cron triggers in another time zone", |r, group, name| {
        let zone = r.time_zone.clone().unwrap_or_default();
        finding(
            Severity::Info,
            "trigger-time-zone",
            format!("Cron trigger {group}.{name} fires by time zone {zone}, not the nodes' {nodes}"),
            format!(
                "Its expression \"{}\" is read in {zone} (QRTZ_CRON_TRIGGERS.TIME_ZONE_ID), while the nodes run in {nodes}; a fire time then looks shifted by the difference (seed 004 §5.4: Asia/Shanghai vs GMT+8).",
                r.cron_expression.as_deref().unwrap_or_default()
            ),
            format!(
                "If {zone} is not what was meant, schedule the trigger again with the right timeZone (GET /scheduler/triggers/{group}/{name} shows its next fire time)."
            ),
        )
    });
    Ok(())
}

/// Seed 004 §5.3.
fn firings(ctx: &Ctx, fired: &[FiredTrigger], out: &mut Vec<Finding>) {
    let now_ms = ctx.now.as_millisecond();
    let age = |r: &FiredTrigger| now_ms - r.fired_time.as_millisecond();
    let acquired: Vec<&FiredTrigger> =
        fired.iter().filter(|r| r.state == "ACQUIRED" && age(r) > ACQUIRED_TOO_LONG_MS).collect();
    per_trigger(out, &acquired, "fired-not-started", "firings waiting for a worker", |r, group, name| {
        finding(
            Severity::Warning,
            "fired-not-started",
            format!("A firing of trigger {group}.{name} has waited {} for a worker", human(SignedDuration::from_millis(age(r)))),
            format!("Seed 004 §5.3: ACQUIRED since {}, not EXECUTING.", at(r.fired_time.as_millisecond())),
            "Workers are all busy or no executor runs: add workers (`kairos serve --workers`) or nodes; a non-concurrent job's firings also wait for each other.".into(),
        )
    });
    let long: Vec<&FiredTrigger> = fired
        .iter()
        .filter(|r| {
            let lock_ms = i64::try_from(ctx.lock_time_of(&r.instance_name).as_millis()).unwrap_or(i64::MAX);
            r.state == "EXECUTING" && age(r) > lock_ms
        })
        .collect();
    per_trigger(out, &long, "fired-running-long", "firings running long", |r, group, name| {
        let node = &r.instance_name;
        finding(
            Severity::Warning,
            "fired-running-long",
            format!(
                "A firing of trigger {group}.{name} has run {} on node {node}, longer than its lock time {}",
                human(SignedDuration::from_millis(age(r))),
                human(ctx.lock_time_of(node))
            ),
            format!(
                "Seed 004 §5.3: EXECUTING since {}; its lease is extended while node {node} lives, so nothing else will run it while the handler hangs.",
                at(r.fired_time.as_millisecond())
            ),
            format!(
                "Take a thread dump (or the log) of node {node} to see where the handler hangs (seed 004 §5.3); the job's handler timeout ends it. If node {node} is dead, its firing is taken over once a live node declares it dead."
            ),
        )
    });
}
