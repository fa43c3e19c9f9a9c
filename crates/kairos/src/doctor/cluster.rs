//! The cluster-wide findings of SPEC J11: executors and nodes, backlog (by TYPE_, aged from
//! CREATE_TIME_ when a job has no DUEDATE_), orphan jobs, jobs of ended instances, expired
//! locks, jobs without retries, dead letters, instances ended in history whose runtime rows
//! remain, a lock time shorter than observed handler durations, clock skew.

use super::instance::{dead_letter, describe, walk_job};
use super::*;
use kairos_store_engine::doctor::cluster as q;

pub(super) async fn cluster(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let store = engine.store().as_ref();
    let diag = store.job_diagnostics(DIAGNOSTICS_LIMIT).await?;
    let before = out.iter().filter(|f| f.severity >= Severity::Warning).count();
    executors(engine, ctx, &diag.counts, out);
    backlog(store, ctx, &diag.counts, out).await?;
    listed_jobs(ctx, &diag, out);
    without_retries(store, ctx, out).await?;
    ended_with_runtime_rows(store, out).await?;
    lock_time_vs_handlers(store, ctx, out).await?;
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
    super::business::runbooks(engine, ctx, out).await?;
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
                "No node in KAIROS_NODE is running with a heartbeat fresher than its dead-after (default {}); {pending} job(s) wait.",
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
            format!(
                "It says it is running (host {}, pid {}) but has been silent for longer than its dead-after of {}; it has died or lost the database.",
                n.host,
                n.pid,
                human(ctx.dead_after_of(n))
            ),
            "A live node declares it dead and takes over its jobs; if none is alive, start one. Check that process on its host.".into(),
        ));
    }
}

/// Seed 000 §4.5: a backlog is judged by how long its oldest job has waited — an async
/// continuation has no DUEDATE_ and waits since its CREATE_TIME_ — and told apart by TYPE_
/// (a pile of async continuations means too few workers).
pub(super) async fn backlog(
    store: &dyn Store,
    ctx: &Ctx,
    counts: &JobCounts,
    out: &mut Vec<Finding>,
) -> Result<(), Error> {
    let Some(oldest) = counts.oldest_executable_due else { return Ok(()) };
    let late = ctx.now.duration_since(oldest);
    if counts.executable == 0 || late <= OVERDUE_AFTER {
        return Ok(());
    }
    // Seed 000 §4.5's count of jobs by TYPE_, on the due, unlocked ones.
    let by_type = q::backlog_by_type(store, ctx.now).await?;
    let types: Vec<String> = by_type
        .iter()
        .map(|r| {
            let since = r.oldest.as_ref().map(|t| format!(", oldest waiting since {t}")).unwrap_or_default();
            format!("{} {}{since}", r.job_type, r.count)
        })
        .collect();
    out.push(finding(
        Severity::Warning,
        "backlog",
        format!("{} job(s) are due and waiting; the oldest for {}", counts.executable, human(late)),
        format!(
            "The oldest executable job has been due since {oldest} (its DUEDATE_, or its CREATE_TIME_ when it has none); the executors do not keep up, or none is running. By TYPE_ (seed 000 §4.5): {}.",
            types.join("; ")
        ),
        "Add workers (--workers) or nodes, look for slow handlers (kairos_job_handler_seconds), and check the executor findings above; a pile of `message` jobs (async continuations) means the workers do not keep up.".into(),
    ));
    Ok(())
}

/// Jobs in ACT_RU_JOB with RETRIES_ <= 0 that the walk or the lists above did not name: standalone
/// jobs, and jobs still locked by a node that is gone (whose lease has not expired yet).
async fn without_retries(store: &dyn Store, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    for id in q::jobs_without_retries(store, DIAGNOSTICS_LIMIT).await? {
        if out.iter().any(|f| f.job_id.as_deref() == Some(id.as_str())) {
            continue;
        }
        if let Some(job) = store.job_get(JobTable::Runtime, &id).await? {
            let mut f = walk_job(ctx, &job, JobTable::Runtime);
            f.job_id = Some(job.id.clone());
            f.process_instance_id = job.process_instance_id.clone();
            out.push(f);
        }
    }
    Ok(())
}

/// Seed 003 §5.1: ACT_HI_PROCINST says the instance ended, yet its root execution is still in
/// ACT_RU_EXECUTION, so it shows as running everywhere.
async fn ended_with_runtime_rows(store: &dyn Store, out: &mut Vec<Finding>) -> Result<(), Error> {
    for r in q::ended_with_runtime_rows(store, DIAGNOSTICS_LIMIT).await? {
        let id = r.process_instance_id;
        let mut f = finding(
            Severity::Warning,
            "ended-with-runtime-rows",
            format!("Process instance {id} has ended in history but is still in the runtime tables"),
            format!(
                "ACT_HI_PROCINST gives it an END_TIME_ ({}), yet its root execution remains in ACT_RU_EXECUTION, so it is listed as running (seed 003 §5.1). kairos ends an instance and deletes its runtime rows in one transaction, so this comes from a hand-made change or a restore that mixed two moments.",
                r.end_time.map(|t| t.to_string()).unwrap_or_default()
            ),
            format!(
                "If any job of it still waits (listed here), let it finish; otherwise remove the leftovers through kairos, never with a bare DELETE: DELETE /runtime/process-instances/{id}?deleteReason=leftover (it also removes its tasks, variables, subscriptions and jobs)."
            ),
        );
        f.process_instance_id = Some(id);
        out.push(f);
    }
    Ok(())
}

/// Attempts of the job log examined for their handler durations.
const JOB_LOG_SAMPLE: u32 = 1000;

/// Seed 000 §4.4: a lock time shorter than what handlers take. kairos extends a lease while its
/// handler runs, so this alone runs nothing twice; but a node that stalls (a pause, a lost
/// connection) for longer than the lock time loses the lease while its handler goes on, and the
/// job then runs twice.
async fn lock_time_vs_handlers(store: &dyn Store, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
    let Some((node, lock_time)) = ctx.shortest_lock_time() else { return Ok(()) };
    let mut longest: Vec<(String, SignedDuration, String)> = Vec::new();
    for r in q::recent_attempt_times(store, JOB_LOG_SAMPLE).await? {
        let (Some(start), Some(end)) = (r.start.and_then(|t| t.at()), r.end.and_then(|t| t.at())) else { continue };
        let took = end.duration_since(start);
        if took <= lock_time {
            continue;
        }
        match longest.iter_mut().find(|(h, _, _)| *h == r.handler) {
            Some(e) if e.1 < took => *e = (r.handler, took, r.job_id),
            Some(_) => {}
            None => longest.push((r.handler, took, r.job_id)),
        }
    }
    if longest.is_empty() {
        return Ok(());
    }
    longest.sort_by_key(|e| std::cmp::Reverse(e.1));
    let list: Vec<String> =
        longest.iter().map(|(h, took, job)| format!("{h} took up to {} (job {job})", human(*took))).collect();
    out.push(finding(
        Severity::Warning,
        "lock-time-short",
        format!("Handlers ran longer than the lock time {} of node {node}", human(lock_time)),
        format!(
            "In the last {JOB_LOG_SAMPLE} attempts of ACT_HI_JOB_LOG: {}. The lease is extended while the handler runs, but if the node stalls for longer than the lock time another node takes the job over and runs it a second time (seed 000 §4.4: a 5 s lock, an 8 s call, the call made twice).",
            list.join(", ")
        ),
        "Give the nodes a lock time above what the handlers take (`kairos serve --lock-time`), or make the slow handlers idempotent.".into(),
    ));
    Ok(())
}

pub(super) fn orphan(job: &Job) -> Finding {
    let id = &job.id;
    let mut f = finding(
        Severity::Warning,
        "orphan-job",
        format!("{} is an orphan", describe(job)),
        format!(
            "Its EXECUTION_ID_ {} names no row of ACT_RU_EXECUTION (seed 000 §4.3): its process instance was removed without it, usually by a hand-written DELETE.",
            job.execution_id.as_deref().unwrap_or("?")
        ),
        format!(
            "Confirm the instance is really gone, then delete the job through kairos: DELETE /management/jobs/{id} (never with SQL: its stack trace bytes would stay behind)."
        ),
    );
    f.job_id = Some(id.clone());
    f.process_instance_id = job.process_instance_id.clone();
    f
}

pub(super) fn of_ended_instance(job: &Job) -> Finding {
    let id = &job.id;
    let mut f = finding(
        Severity::Warning,
        "job-of-ended-instance",
        format!("{} belongs to an ended process instance", describe(job)),
        format!(
            "Process instance {} has an END_TIME_ in ACT_HI_PROCINST, yet this job remains; running it would act on a finished instance.",
            job.process_instance_id.as_deref().unwrap_or("?")
        ),
        format!(
            "Delete it: DELETE /management/jobs/{id} (or DELETE /management/deadletter-jobs/{id} for a dead letter)."
        ),
    );
    f.job_id = Some(id.clone());
    f.process_instance_id = job.process_instance_id.clone();
    f
}
