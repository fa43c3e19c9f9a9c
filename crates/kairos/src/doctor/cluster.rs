//! The cluster-wide findings of SPEC J11: executors and nodes, backlog, orphan jobs, jobs of
//! ended instances, expired locks, dead letters, clock skew.

use super::instance::{dead_letter, describe, walk_job};
use super::*;

pub(super) async fn cluster(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let diag = engine.store().job_diagnostics(DIAGNOSTICS_LIMIT).await?;
    let before = out.iter().filter(|f| f.severity >= Severity::Warning).count();
    executors(engine, ctx, &diag.counts, out);
    backlog(ctx, &diag.counts, out);
    listed_jobs(ctx, &diag, out);
    if diag.counts.failing > 0 {
        out.push(finding(
            Severity::Warning,
            "failing",
            format!("{} job(s) in ACT_RU_JOB failed at least once and are retrying", diag.counts.failing),
            "They carry an EXCEPTION_MSG_ and retries left (seed 000 §5.2's failed-job count).".into(),
            "GET /management/jobs?withException=true lists them; read each stack trace and fix the cause before they become dead letters.".into(),
        ));
    }
    clock_skew(ctx, out);
    super::scheduler::checks(engine, ctx, out).await?;
    if out.iter().filter(|f| f.severity >= Severity::Warning).count() == before {
        let c = &diag.counts;
        out.push(finding(
            Severity::Ok,
            "all-clear",
            "Nothing is wrong in the cluster".into(),
            format!(
                "{} executable, {} waiting, {} running, no expired lease, no dead letter.",
                c.executable, c.waiting, c.running
            ),
            String::new(),
        ));
    }
    Ok(())
}

/// The jobs SPEC J11 lists cluster-wide; a job the instance walk already reported under the
/// same code is not repeated.
pub(super) fn listed_jobs(ctx: &Ctx, diag: &JobDiagnostics, out: &mut Vec<Finding>) {
    let seen: HashSet<(&'static str, String)> =
        out.iter().filter_map(|f| f.job_id.clone().map(|j| (f.code, j))).collect();
    let with_ids = |mut f: Finding, job: &Job| {
        f.job_id = Some(job.id.clone());
        f.process_instance_id = job.process_instance_id.clone();
        f
    };
    let found = diag
        .orphan_jobs
        .iter()
        .map(|j| with_ids(orphan(j), j))
        .chain(diag.jobs_of_ended_instances.iter().map(|j| with_ids(of_ended_instance(j), j)))
        .chain(diag.expired_locks.iter().map(|j| with_ids(walk_job(ctx, j, JobTable::Runtime), j)))
        .chain(diag.dead_letters.iter().map(|j| with_ids(dead_letter(j), j)));
    for f in found {
        if !f.job_id.as_ref().is_some_and(|j| seen.contains(&(f.code, j.clone()))) {
            out.push(f);
        }
    }
    let c = &diag.counts;
    more(
        out,
        "lock-expired",
        c.expired_locks,
        diag.expired_locks.len(),
        "jobs with an expired lease",
        "GET /management/jobs",
    );
    more(
        out,
        "dead-letter",
        c.dead_letters,
        diag.dead_letters.len(),
        "dead letters",
        "GET /management/deadletter-jobs",
    );
}

/// The node's clock against the database's: harmless to kairos, not to callers (seed 000 §4.4).
pub(super) fn clock_skew(ctx: &Ctx, out: &mut Vec<Finding>) {
    let skew = Timestamp::now().duration_since(ctx.now);
    if skew.abs() > CLOCK_SKEW_WARN {
        out.push(finding(
            Severity::Warning,
            "clock-skew",
            format!("This node's clock is {} {} the database's", human(skew), if skew.is_positive() { "ahead of" } else { "behind" }),
            "kairos judges due dates and leases by the database clock only, so jobs fire on time anyway; but callers that compute an absolute dueDate from this clock get it shifted (seed 000 §4.4).".into(),
            "Synchronise the clocks with NTP.".into(),
        ));
    }
}

pub(super) fn more(out: &mut Vec<Finding>, code: &'static str, total: u64, listed: usize, what: &str, list: &str) {
    if total > listed as u64 {
        out.push(finding(
            Severity::Info,
            "truncated",
            format!("{total} {what} in all; {listed} are listed as {code}"),
            String::new(),
            format!("{list} lists them all."),
        ));
    }
}

/// Step 5: is any job executor running at all?
pub(super) fn executors(engine: &Engine, ctx: &Ctx, counts: &JobCounts, out: &mut Vec<Finding>) {
    let me = engine.node_id();
    let live: Vec<&NodeInfo> = ctx.nodes.iter().filter(|n| ctx.alive(n)).collect();
    let pending = counts.executable + counts.waiting + counts.expired_locks;
    if ctx.from_tool {
        // A tool's engine is not a node; only the cluster's nodes matter below.
    } else if !engine.settings().executor_enabled {
        out.push(finding(
            if live.is_empty() { Severity::Error } else { Severity::Info },
            "executor-off",
            format!("The job executor is switched off on this node ({me})"),
            "This node stores jobs but never runs them (Activiti's asyncExecutorActivate = false).".into(),
            "Jobs run only on nodes whose executor is on: start one with `kairos serve` (without --no-executor), or make sure one is alive.".into(),
        ));
    } else if !live.iter().any(|n| n.id == me) {
        out.push(finding(
            Severity::Error,
            "executor-not-running",
            format!("The executor is switched on here ({me}) but this node has no fresh heartbeat"),
            "It was not started (Engine::start), it stopped, or it cannot reach the database and has fenced itself."
                .into(),
            "Check this node's log for heartbeat errors; start the engine if it was never started.".into(),
        ));
    }
    if live.is_empty() {
        out.push(finding(
            if pending > 0 { Severity::Error } else { Severity::Warning },
            "no-live-node",
            "No node has a fresh heartbeat: nothing runs jobs".into(),
            format!(
                "No node in KAIROS_NODE is running with a heartbeat newer than {}; {pending} job(s) wait.",
                human(ctx.dead_after)
            ),
            "Start a node with its executor on (`kairos serve`); jobs are kept and run once one is alive.".into(),
        ));
    } else {
        let names: Vec<&str> = live.iter().map(|n| n.id.as_str()).collect();
        out.push(finding(
            Severity::Ok,
            "nodes",
            format!("{} node(s) alive: {}", live.len(), names.join(", ")),
            "Their heartbeats are fresh by the database clock.".into(),
            String::new(),
        ));
    }
    for n in ctx.nodes.iter().filter(|n| n.state == "running" && !ctx.alive(n)) {
        out.push(finding(
            Severity::Warning,
            "stale-node",
            format!("Node {} has not sent a heartbeat for {}", n.id, ctx.since(n.heartbeat)),
            format!("It says it is running (host {}, pid {}) but is silent; it has died or lost the database.", n.host, n.pid),
            "A live node declares it dead and takes over its jobs; if none is alive, start one. Check that process on its host.".into(),
        ));
    }
}

pub(super) fn backlog(ctx: &Ctx, counts: &JobCounts, out: &mut Vec<Finding>) {
    let Some(oldest) = counts.oldest_executable_due else { return };
    let late = ctx.now.duration_since(oldest);
    if counts.executable > 0 && late > OVERDUE_AFTER {
        out.push(finding(
            Severity::Warning,
            "backlog",
            format!("{} job(s) are due and waiting; the oldest for {}", counts.executable, human(late)),
            format!("The oldest executable job was due at {oldest}; the executors do not keep up, or none is running."),
            "Add workers (--workers) or nodes, look for slow handlers (kairos_job_handler_seconds), and check the executor findings above.".into(),
        ));
    }
}

pub(super) fn orphan(job: &Job) -> Finding {
    let id = &job.id;
    Finding {
        severity: Severity::Warning,
        code: "orphan-job",
        title: format!("{} is an orphan", describe(job)),
        detail: format!(
            "Its EXECUTION_ID_ {} names no row of ACT_RU_EXECUTION (seed 000 §4.3): its process instance was removed without it, usually by a hand-written DELETE.",
            job.execution_id.as_deref().unwrap_or("?")
        ),
        action: format!(
            "Confirm the instance is really gone, then delete the job through kairos: DELETE /management/jobs/{id} (never with SQL: its stack trace bytes would stay behind)."
        ),
        job_id: Some(id.clone()),
        process_instance_id: job.process_instance_id.clone(),
    }
}

pub(super) fn of_ended_instance(job: &Job) -> Finding {
    let id = &job.id;
    Finding {
        severity: Severity::Warning,
        code: "job-of-ended-instance",
        title: format!("{} belongs to an ended process instance", describe(job)),
        detail: format!(
            "Process instance {} has an END_TIME_ in ACT_HI_PROCINST, yet this job remains; running it would act on a finished instance.",
            job.process_instance_id.as_deref().unwrap_or("?")
        ),
        action: format!(
            "Delete it: DELETE /management/jobs/{id} (or DELETE /management/deadletter-jobs/{id} for a dead letter)."
        ),
        job_id: Some(id.clone()),
        process_instance_id: job.process_instance_id.clone(),
    }
}
