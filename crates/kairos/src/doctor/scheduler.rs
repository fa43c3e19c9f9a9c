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

/// Seed 004 §5.2: a WAITING trigger this late means the scheduler is behind.
const LATE_AFTER_MS: i64 = 5_000;
/// Seed 004 §5.3: a firing ACQUIRED this long has no worker.
const ACQUIRED_TOO_LONG_MS: i64 = 30_000;

/// The (group, name) of a row whose first two columns are TRIGGER_NAME, TRIGGER_GROUP.
fn trigger_of(r: &[SqlValue]) -> (String, String) {
    (text(r.get(1)).unwrap_or_default(), text(r.first()).unwrap_or_default())
}

/// One finding per trigger row (at most [`DIAGNOSTICS_LIMIT`]), then a `truncated` note.
fn per_trigger(
    out: &mut Vec<Finding>,
    rows: &[Vec<SqlValue>],
    code: &'static str,
    what: &str,
    mut make: impl FnMut(&[SqlValue], &str, &str) -> Finding,
) {
    for r in rows.iter().take(DIAGNOSTICS_LIMIT as usize) {
        let (group, name) = trigger_of(r);
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

/// An integer column (epoch milliseconds, an interval, a count); 0 when null.
fn int(v: Option<&SqlValue>) -> i64 {
    v.and_then(SqlValue::as_i64).unwrap_or(0)
}

/// An epoch-millisecond QRTZ_* column in RFC 3339.
fn at(ms: i64) -> String {
    Timestamp::from_millisecond(ms).map_or_else(|_| format!("{ms} ms"), |t| t.to_string())
}

pub(super) async fn checks(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let store = engine.store().as_ref();
    let sched = engine.scheduler().settings().name.clone();
    let triggers = store.read("SELECT COUNT(*) FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ?", &[t(&sched)]).await?;
    let trigger_count = triggers.first().map_or(0, |r| int(r.first()));
    checkins(store, ctx, &sched, trigger_count, out).await?;
    // What each firing is really in (crate::scheduler's FIRED_SELECT: ENTRY_ID, TRIGGER_NAME,
    // TRIGGER_GROUP, JOB_NAME, JOB_GROUP, node, FIRED_TIME, SCHED_TIME, PRIORITY, state, …).
    let fired = store.read(&format!("{} ORDER BY f.FIRED_TIME", crate::scheduler::FIRED_SELECT), &[t(&sched)]).await?;
    if trigger_count > 0 {
        not_firing(store, ctx, &sched, &fired, out).await?;
    }
    firings(ctx, &fired, out);
    Ok(())
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
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
    let checkins = store
        .read(
            "SELECT INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ? ORDER BY INSTANCE_NAME",
            &[t(sched)],
        )
        .await?;
    let stale = |r: &Vec<SqlValue>| now_ms - int(r.get(1)) > 2 * int(r.get(2)).max(1000);
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
        let node = text(r.first()).unwrap_or_default();
        let last = int(r.get(1));
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
                int(r.get(2))
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
    fired: &[Vec<SqlValue>],
    out: &mut Vec<Finding>,
) -> Result<(), Error> {
    let now_ms = ctx.now.as_millisecond();
    let late = store
        .read(
            "SELECT TRIGGER_NAME, TRIGGER_GROUP, NEXT_FIRE_TIME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'WAITING' \
             AND NEXT_FIRE_TIME < ? ORDER BY NEXT_FIRE_TIME, TRIGGER_GROUP, TRIGGER_NAME",
            &[t(sched), SqlValue::Int(now_ms - LATE_AFTER_MS)],
        )
        .await?;
    per_trigger(out, &late, "trigger-late", "late WAITING triggers", |r, group, name| {
        let next = int(r.get(2));
        finding(
            Severity::Warning,
            "trigger-late",
            format!("Trigger {group}.{name} is {} past its fire time", human(SignedDuration::from_millis(now_ms - next))),
            format!("Seed 004 §5.2: it is WAITING with NEXT_FIRE_TIME {}, more than 5 s ago.", at(next)),
            "Check that executors run (`executor-off`, `no-live-node` above) and have free workers (the `backlog` finding); a trigger more than the misfire threshold late follows its misfire instruction when it is picked up.".into(),
        )
    });
    let errors = store
        .read(
            "SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'ERROR' ORDER BY TRIGGER_GROUP, TRIGGER_NAME",
            &[t(sched)],
        )
        .await?;
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
    let jobless = store
        .read(
            "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE = 'WAITING' \
             AND NOT EXISTS (SELECT 1 FROM ACT_RU_JOB j WHERE j.SCOPE_ID_ = tr.TRIGGER_NAME AND j.SCOPE_DEFINITION_ID_ = tr.TRIGGER_GROUP \
             AND j.SCOPE_TYPE_ = ? AND j.HANDLER_TYPE_ = 'quartz-trigger') ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME",
            &[t(sched), SqlValue::Text(format!("quartz:{sched}"))],
        )
        .await?;
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
    let rows = store
        .read(
            "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP, tr.TRIGGER_STATE, \
             (SELECT COUNT(*) FROM QRTZ_PAUSED_TRIGGER_GRPS p WHERE p.SCHED_NAME = tr.SCHED_NAME AND p.TRIGGER_GROUP = tr.TRIGGER_GROUP) \
             FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE IN ('PAUSED', 'PAUSED_BLOCKED') \
             ORDER BY tr.TRIGGER_GROUP, tr.TRIGGER_NAME",
            &[t(sched)],
        )
        .await?;
    let (by_group, own): (Vec<Vec<SqlValue>>, Vec<Vec<SqlValue>>) = rows.into_iter().partition(|r| int(r.get(3)) > 0);
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
async fn blocked(store: &dyn Store, sched: &str, fired: &[Vec<SqlValue>], out: &mut Vec<Finding>) -> Result<(), Error> {
    let rows = store
        .read(
            "SELECT TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'BLOCKED' \
             ORDER BY TRIGGER_GROUP, TRIGGER_NAME",
            &[t(sched)],
        )
        .await?;
    per_trigger(out, &rows, "trigger-blocked", "blocked triggers", |r, group, name| {
        let (job_name, job_group) = (text(r.get(2)).unwrap_or_default(), text(r.get(3)).unwrap_or_default());
        let running =
            fired.iter().any(|f| text(f.get(3)) == Some(job_name.clone()) && text(f.get(4)) == Some(job_group.clone()));
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
    let rows = store
        .read(
            "SELECT c.TRIGGER_NAME, c.TRIGGER_GROUP, c.TIME_ZONE_ID, c.CRON_EXPRESSION FROM QRTZ_CRON_TRIGGERS c \
             WHERE c.SCHED_NAME = ? AND c.TIME_ZONE_ID IS NOT NULL ORDER BY c.TRIGGER_GROUP, c.TRIGGER_NAME",
            &[t(sched)],
        )
        .await?;
    let other: Vec<Vec<SqlValue>> =
        rows.into_iter().filter(|r| text(r.get(2)).is_some_and(|z| !zones.contains(&z.as_str()))).collect();
    let nodes = zones.join(", ");
    per_trigger(out, &other, "trigger-time-zone", "cron triggers in another time zone", |r, group, name| {
        let zone = text(r.get(2)).unwrap_or_default();
        finding(
            Severity::Info,
            "trigger-time-zone",
            format!("Cron trigger {group}.{name} fires by time zone {zone}, not the nodes' {nodes}"),
            format!(
                "Its expression \"{}\" is read in {zone} (QRTZ_CRON_TRIGGERS.TIME_ZONE_ID), while the nodes run in {nodes}; a fire time then looks shifted by the difference (seed 004 §5.4: Asia/Shanghai vs GMT+8).",
                text(r.get(3)).unwrap_or_default()
            ),
            format!(
                "If {zone} is not what was meant, schedule the trigger again with the right timeZone (GET /scheduler/triggers/{group}/{name} shows its next fire time)."
            ),
        )
    });
    Ok(())
}

/// Seed 004 §5.3.
fn firings(ctx: &Ctx, fired: &[Vec<SqlValue>], out: &mut Vec<Finding>) {
    let now_ms = ctx.now.as_millisecond();
    let state = |r: &Vec<SqlValue>| text(r.get(9));
    let age = |r: &Vec<SqlValue>| now_ms - r.get(6).and_then(SqlValue::as_i64).unwrap_or(now_ms);
    let acquired: Vec<Vec<SqlValue>> = fired
        .iter()
        .filter(|r| state(r).as_deref() == Some("ACQUIRED") && age(r) > ACQUIRED_TOO_LONG_MS)
        .map(|r| r[1..].to_vec())
        .collect();
    per_trigger(out, &acquired, "fired-not-started", "firings waiting for a worker", |r, group, name| {
        finding(
            Severity::Warning,
            "fired-not-started",
            format!("A firing of trigger {group}.{name} has waited {} for a worker", human(SignedDuration::from_millis(age_of(r, now_ms)))),
            format!("Seed 004 §5.3: ACQUIRED since {}, not EXECUTING.", at(int(r.get(5)))),
            "Workers are all busy or no executor runs: add workers (`kairos serve --workers`) or nodes; a non-concurrent job's firings also wait for each other.".into(),
        )
    });
    let long: Vec<Vec<SqlValue>> = fired
        .iter()
        .filter(|r| {
            let node = text(r.get(5)).unwrap_or_default();
            let lock_ms = i64::try_from(ctx.lock_time_of(&node).as_millis()).unwrap_or(i64::MAX);
            state(r).as_deref() == Some("EXECUTING") && age(r) > lock_ms
        })
        .map(|r| r[1..].to_vec())
        .collect();
    per_trigger(out, &long, "fired-running-long", "firings running long", |r, group, name| {
        let node = text(r.get(4)).unwrap_or_default();
        finding(
            Severity::Warning,
            "fired-running-long",
            format!(
                "A firing of trigger {group}.{name} has run {} on node {node}, longer than its lock time {}",
                human(SignedDuration::from_millis(age_of(r, now_ms))),
                human(ctx.lock_time_of(&node))
            ),
            format!(
                "Seed 004 §5.3: EXECUTING since {}; its lease is extended while node {node} lives, so nothing else will run it while the handler hangs.",
                at(int(r.get(5)))
            ),
            format!(
                "Take a thread dump (or the log) of node {node} to see where the handler hangs (seed 004 §5.3); the job's handler timeout ends it. If node {node} is dead, its firing is taken over once a live node declares it dead."
            ),
        )
    });
}

/// The age of a firing row shifted by one column (TRIGGER_NAME first): FIRED_TIME at index 5.
fn age_of(r: &[SqlValue], now_ms: i64) -> i64 {
    now_ms - r.get(5).and_then(SqlValue::as_i64).unwrap_or(now_ms)
}
