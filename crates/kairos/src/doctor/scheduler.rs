//! The scheduler's findings: seed 004 §5's walk ("is the scheduler running, can the trigger
//! fire, what is blocked"), judged by the database clock, plus the one invariant of kairos's
//! design an operator can check: a WAITING trigger has its trigger job.
//!
//! 1. §5.1 check-ins: nodes whose QRTZ_SCHEDULER_STATE row is older than twice its interval;
//! 2. §5.2 triggers: WAITING ones late by more than 5 s (a backlog), ERROR ones, WAITING ones
//!    without a trigger job (they would never fire);
//! 3. §5.3 firings: ACQUIRED for more than 30 s (no free worker), EXECUTING for long (a stuck
//!    handler).

use super::*;

/// Seed 004 §5.2: a WAITING trigger this late means the scheduler is behind.
const LATE_AFTER_MS: i64 = 5_000;
/// Seed 004 §5.3: a firing ACQUIRED this long has no worker.
const ACQUIRED_TOO_LONG_MS: i64 = 30_000;

fn names(rows: &[Vec<SqlValue>]) -> String {
    let shown: Vec<String> = rows
        .iter()
        .take(5)
        .map(|r| format!("{}.{}", text(r.get(1)).unwrap_or_default(), text(r.first()).unwrap_or_default()))
        .collect();
    let more = rows.len().saturating_sub(shown.len());
    if more > 0 { format!("{} and {more} more", shown.join(", ")) } else { shown.join(", ") }
}

pub(super) async fn checks(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let store = engine.store().as_ref();
    let sched = engine.scheduler().settings().name.clone();
    let now_ms = ctx.now.as_millisecond();
    let q = |sql: &'static str, binds: Vec<SqlValue>| async move { store.read(sql, &binds).await };
    let s = || SqlValue::Text(sched.clone());
    let triggers = q("SELECT COUNT(*) FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ?", vec![s()]).await?;
    let trigger_count = triggers.first().and_then(|r| r[0].as_i64()).unwrap_or(0);
    if trigger_count == 0 {
        return Ok(());
    }

    // 1. check-ins
    let checkins = q(
        "SELECT INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL FROM QRTZ_SCHEDULER_STATE WHERE SCHED_NAME = ?",
        vec![s()],
    )
    .await?;
    let fresh = checkins.iter().filter(|r| {
        let (last, every) = (r[1].as_i64().unwrap_or(0), r[2].as_i64().unwrap_or(0));
        now_ms - last <= 2 * every.max(1000)
    });
    if fresh.count() == 0 && !ctx.from_tool {
        out.push(finding(
            Severity::Warning,
            "no-scheduler-checkin",
            format!("No node of scheduler '{sched}' checked in recently, and it has {trigger_count} trigger(s)"),
            "Seed 004 §5.1: QRTZ_SCHEDULER_STATE has no fresh row; a node runs the scheduler's check-ins while its executor runs.".into(),
            "Start `kairos serve` (with its executor) on at least one node; triggers fire only through an executor.".into(),
        ));
    }
    for r in &checkins {
        let (last, every) = (r[1].as_i64().unwrap_or(0), r[2].as_i64().unwrap_or(0));
        if now_ms - last > 2 * every.max(1000) {
            out.push(finding(
                Severity::Info,
                "stale-checkin",
                format!("Node {} last checked in {} ago", text(r.first()).unwrap_or_default(), human(SignedDuration::from_millis(now_ms - last))),
                format!("Its check-in interval is {} ms; a row older than twice that is a node that stopped or died.", every),
                "Nothing, if the node was stopped: its firings were taken over by the job engine. Its row goes after an hour.".into(),
            ));
        }
    }

    // 2. triggers
    let late = q(
        "SELECT TRIGGER_NAME, TRIGGER_GROUP, NEXT_FIRE_TIME FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'WAITING' \
         AND NEXT_FIRE_TIME < ? ORDER BY NEXT_FIRE_TIME",
        vec![s(), SqlValue::Int(now_ms - LATE_AFTER_MS)],
    )
    .await?;
    if !late.is_empty() {
        let worst = late[0][2].as_i64().unwrap_or(now_ms);
        out.push(finding(
            Severity::Warning,
            "trigger-late",
            format!("{} WAITING trigger(s) are more than 5 s past their fire time (the oldest by {})", late.len(), human(SignedDuration::from_millis(now_ms - worst))),
            format!("Seed 004 §5.2: {}.", names(&late)),
            "Check that executors run (`executor-off`, `no-live-node` above) and have free workers (the `backlog` finding); a trigger more than the misfire threshold late follows its misfire instruction when it is picked up.".into(),
        ));
    }
    let errors = q(
        "SELECT TRIGGER_NAME, TRIGGER_GROUP FROM QRTZ_TRIGGERS WHERE SCHED_NAME = ? AND TRIGGER_STATE = 'ERROR'",
        vec![s()],
    )
    .await?;
    if !errors.is_empty() {
        out.push(finding(
            Severity::Error,
            "trigger-error",
            format!("{} trigger(s) are in ERROR and will not fire", errors.len()),
            format!("{}: their row could not be used (e.g. their calendar was deleted); the job log of their last trigger job says why.", names(&errors)),
            "Fix the cause, then PUT /scheduler/triggers/{group}/{name} {\"action\": \"resume\"}.".into(),
        ));
    }
    let jobless = q(
        "SELECT tr.TRIGGER_NAME, tr.TRIGGER_GROUP FROM QRTZ_TRIGGERS tr WHERE tr.SCHED_NAME = ? AND tr.TRIGGER_STATE = 'WAITING' \
         AND NOT EXISTS (SELECT 1 FROM ACT_RU_JOB j WHERE j.SCOPE_ID_ = tr.TRIGGER_NAME AND j.SCOPE_DEFINITION_ID_ = tr.TRIGGER_GROUP \
         AND j.SCOPE_TYPE_ = ? AND j.HANDLER_TYPE_ = 'quartz-trigger')",
        vec![s(), SqlValue::Text(format!("quartz:{sched}"))],
    )
    .await?;
    if !jobless.is_empty() {
        out.push(finding(
            Severity::Error,
            "trigger-without-job",
            format!("{} WAITING trigger(s) have no trigger job and would never fire", jobless.len()),
            format!("{}: a WAITING trigger fires through its `quartz-trigger` row in ACT_RU_JOB; it was deleted by hand or dead-lettered (ACT_RU_DEADLETTER_JOB).", names(&jobless)),
            "Pause and resume the trigger: resuming gives it its trigger job back.".into(),
        ));
    }

    // 3. firings
    // The state each firing is really in (crate::scheduler's FIRED_SELECT: ENTRY_ID, TRIGGER_NAME,
    // TRIGGER_GROUP, JOB_NAME, JOB_GROUP, node, FIRED_TIME, SCHED_TIME, PRIORITY, state, …),
    // reordered to (name, group, state, fired time, node) for the checks below.
    let fired: Vec<Vec<SqlValue>> = store
        .read(&format!("{} ORDER BY f.FIRED_TIME", crate::scheduler::FIRED_SELECT), &[s()])
        .await?
        .into_iter()
        .map(|r| vec![r[1].clone(), r[2].clone(), r[9].clone(), r[6].clone(), r[5].clone()])
        .collect();
    let acquired: Vec<Vec<SqlValue>> = fired
        .iter()
        .filter(|r| {
            text(r.get(2)).as_deref() == Some("ACQUIRED")
                && now_ms - r[3].as_i64().unwrap_or(now_ms) > ACQUIRED_TOO_LONG_MS
        })
        .cloned()
        .collect();
    if !acquired.is_empty() {
        out.push(finding(
            Severity::Warning,
            "fired-not-started",
            format!("{} firing(s) have waited more than 30 s for a worker", acquired.len()),
            format!("Seed 004 §5.3: {} are ACQUIRED, not EXECUTING.", names(&acquired)),
            "Workers are all busy or no executor runs: add workers (`kairos serve --workers`) or nodes; a non-concurrent job's firings also wait for each other.".into(),
        ));
    }
    let lock_ms = i64::try_from(engine.settings().executor.lock_time.as_millis()).unwrap_or(i64::MAX);
    let long: Vec<Vec<SqlValue>> = fired
        .iter()
        .filter(|r| {
            text(r.get(2)).as_deref() == Some("EXECUTING") && now_ms - r[3].as_i64().unwrap_or(now_ms) > lock_ms
        })
        .cloned()
        .collect();
    if !long.is_empty() {
        out.push(finding(
            Severity::Info,
            "fired-running-long",
            format!("{} firing(s) have run longer than the lock time", long.len()),
            format!("Seed 004 §5.3: {} are EXECUTING; their leases are extended while their node lives.", names(&long)),
            "If a handler hangs, its node's thread dump shows where; a killed node's firings are taken over (re-run when the job requests recovery).".into(),
        ));
    }
    Ok(())
}
