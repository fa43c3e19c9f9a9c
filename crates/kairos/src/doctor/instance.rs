//! The five-step walk of seed 000 §4.1 for one process instance and its jobs.

use super::*;
use kairos_store_engine::doctor::instance as q;

pub(super) async fn instances_of_business_key(
    store: &dyn Store,
    key: &str,
    out: &mut Vec<Finding>,
) -> Result<Vec<String>, Error> {
    let ids = q::running_of_business_key(store, key).await?;
    let ended = q::ended_of_business_key(store, key).await?;
    for e in &ended {
        let end = e.end_time.as_ref().map(|t| t.to_string());
        out.push(ended_finding(&e.process_instance_id, end, e.delete_reason.clone(), Severity::Info));
    }
    if ids.is_empty() {
        let mut f = finding(
            if ended.is_empty() { Severity::Error } else { Severity::Warning },
            "no-instance",
            format!("No running process instance has business key \"{key}\""),
            format!(
                "ACT_RU_EXECUTION has no root execution (PARENT_ID_ null) with BUSINESS_KEY_ = \"{key}\"{}, so no timer of it can be waiting.",
                if ended.is_empty() { " and ACT_HI_PROCINST has no finished one" } else { "; the finished ones are listed above" }
            ),
            "Check the key (business keys are case-sensitive): GET /runtime/process-instances?businessKey=KEY lists running instances, GET /history/historic-process-instances?businessKey=KEY finished ones. If the instance was never started, the caller's start request failed or was not sent.".into(),
        );
        if ended.is_empty() {
            f.detail.push_str(" Standalone jobs (POST /management/jobs) have no business key; look them up by id.");
        }
        out.push(f);
    }
    Ok(ids)
}

/// Reports whether the instance runs, ended, or never existed.
pub(super) async fn instance_state(store: &dyn Store, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    if let Some(suspended) = q::running_suspended(store, id).await? {
        if suspended {
            let mut f = finding(
                Severity::Warning,
                "instance-suspended",
                format!("Process instance {id} is suspended"),
                "A suspended instance's jobs wait in ACT_RU_SUSPENDED_JOB and are never acquired.".into(),
                format!(
                    "Activate it if it should go on: PUT /runtime/process-instances/{id} {{\"action\": \"activate\"}}."
                ),
            );
            f.process_instance_id = Some(id.into());
            out.push(f);
        }
        return Ok(());
    }
    match q::history_of(store, id).await? {
        Some(h) if h.end_time.is_some() => {
            out.push(ended_finding(id, h.end_time.map(|t| t.to_string()), h.delete_reason, Severity::Warning));
        }
        _ => {
            let mut f = finding(
                Severity::Error,
                "no-instance",
                format!("No process instance {id}"),
                format!("Neither ACT_RU_EXECUTION (running) nor ACT_HI_PROCINST (finished) knows the id {id}. Any job still naming it is an orphan (listed below)."),
                "Check the id: GET /runtime/process-instances lists running instances. If you meant a business key, ask with ?businessKey=.".into(),
            );
            f.process_instance_id = Some(id.into());
            out.push(f);
        }
    }
    Ok(())
}

pub(super) fn ended_finding(id: &str, end: Option<String>, reason: Option<String>, severity: Severity) -> Finding {
    let mut f = finding(
        severity,
        "instance-ended",
        format!("Process instance {id} has ended"),
        format!(
            "It ended at {}{}; an ended instance fires no more timers.",
            end.as_deref().unwrap_or("an unknown time"),
            reason.map(|r| format!(" (reason: {r})")).unwrap_or_default()
        ),
        format!(
            "Nothing to wait for. GET /history/historic-activity-instances?processInstanceId={id} shows the path it took."
        ),
    );
    f.process_instance_id = Some(id.into());
    f
}

// ----- steps 1–4: the jobs of one instance -------------------------------------------------

pub(super) async fn walk_instance(store: &dyn Store, ctx: &Ctx, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    let mut seen = 0usize;
    for table in [JobTable::Runtime, JobTable::Suspended, JobTable::DeadLetter] {
        let filter =
            JobFilter { table, process_instance_id: Some(id.into()), size: JOBS_PER_INSTANCE, ..Default::default() };
        let page = store.job_list(&filter).await?;
        if page.total > page.data.len() as u64 {
            let mut f = finding(
                Severity::Info,
                "truncated",
                format!(
                    "Only {} of the {} jobs of instance {id} in {} were examined",
                    page.data.len(),
                    page.total,
                    table.table_name()
                ),
                String::new(),
                format!("List them all: GET /management/jobs?processInstanceId={id}."),
            );
            f.process_instance_id = Some(id.into());
            out.push(f);
        }
        seen += page.data.len();
        for job in &page.data {
            let mut f = walk_job(ctx, job, table);
            f.job_id = Some(job.id.clone());
            f.process_instance_id = Some(id.into());
            out.push(f);
        }
    }
    event_waits(store, id, out).await?;
    if seen == 0 {
        no_jobs(store, id, out).await?;
    }
    Ok(())
}

/// Step 1 found no job: an instance waiting for a person (a user task) or an event (a message,
/// signal or conditional subscription) needs none, so that is no finding worth a warning; one
/// waiting for neither is.
async fn no_jobs(store: &dyn Store, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    let tasks = q::open_tasks(store, id).await?;
    // A 'compensate' row is what an activity completed (kept for its compensation), not a wait.
    let subscriptions: Vec<_> =
        q::subscriptions(store, id).await?.into_iter().filter(|r| r.event_type != "compensate").collect();
    let mut waits: Vec<String> = tasks
        .iter()
        .map(|r| {
            let at = r.task_def_key.clone().unwrap_or_default();
            let name = r.name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
            let who = r.assignee.as_ref().map_or_else(|| "unassigned".to_string(), |a| format!("assigned to {a}"));
            format!("user task {at}{name} ({who})")
        })
        .collect();
    waits.extend(subscriptions.iter().map(|r| {
        let kind = &r.event_type;
        let name = r.event_name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        let at = r.activity_id.as_ref().map(|a| format!(" at {a}")).unwrap_or_default();
        format!("{kind} event{name}{at}")
    }));
    let mut f = if waits.is_empty() {
        let acts = q::activities(store, id).await?;
        finding(
            Severity::Warning,
            "no-jobs",
            format!("Instance {id} has no job"),
            format!(
                "ACT_RU_JOB, ACT_RU_SUSPENDED_JOB and ACT_RU_DEADLETTER_JOB hold no row for it, so no timer or asynchronous step of it is waiting (step 1), and it has no open user task or event subscription either. {}",
                if acts.is_empty() { "No execution of it stands at an activity.".to_string() } else { format!("It stands at: {}.", acts.join(", ")) }
            ),
            "If it should be waiting at a timer, the job was never created: check the timer definition in the deployed BPMN (timeDate/timeDuration/timeCycle) and whether the instance failed before reaching it (GET /history/historic-activity-instances?processInstanceId=ID).".into(),
        )
    } else {
        finding(
            Severity::Info,
            "waiting",
            format!("Instance {id} waits for {}", if tasks.is_empty() { "an event" } else { "a person" }),
            format!(
                "It has no job, which is right for what it waits at: {} (seed 003 §4.2: an execution at a wait state has a task or an event subscription, not a job).",
                waits.join(", ")
            ),
            format!(
                "Nothing is stuck. Complete the task (GET /runtime/tasks?processInstanceId={id}) or send the message or signal it waits for; if a timer should be waiting as well, check the timer in the deployed BPMN."
            ),
        )
    };
    f.process_instance_id = Some(id.into());
    out.push(f);
    Ok(())
}

/// Seed 003 §5.2: an execution whose ACT_ID_ is null is no lost data when it waits on an event
/// subscription (an event sub-process's start, an event scope); say so, and name the event.
async fn event_waits(store: &dyn Store, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    for r in q::event_waits_without_activity(store, id).await? {
        let exec = r.execution_id.clone().unwrap_or_default();
        let kind = &r.event_type;
        let name = r.event_name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        let at = r.activity_id.as_ref().map(|a| format!(" for {a}")).unwrap_or_default();
        let mut f = finding(
            Severity::Info,
            "event-wait",
            format!("Execution {exec} has no ACT_ID_: it waits for the {kind} event{name}{at}"),
            "A null ACT_ID_ is not a broken row here (seed 003 §5.2): the execution stands at no activity yet because it waits on the ACT_RU_EVENT_SUBSCR row named above (an event sub-process start or an event scope).".into(),
            "If it should have fired, check that the event is really sent with that name (a message or signal name differs, or nobody sends it); GET /runtime/executions?processInstanceId=ID shows the tree.".into(),
        );
        f.process_instance_id = Some(id.into());
        out.push(f);
    }
    Ok(())
}

/// Steps 2–4 for one job (the caller sets its ids).
pub(super) fn walk_job(ctx: &Ctx, job: &Job, table: JobTable) -> Finding {
    let id = &job.id;
    let what = describe(job);
    match table {
        JobTable::DeadLetter => return dead_letter(job),
        JobTable::Suspended => {
            return finding(
                Severity::Warning,
                "suspended",
                format!("{what} is suspended"),
                "Its process instance is suspended; the job waits in ACT_RU_SUSPENDED_JOB and is never acquired.".into(),
                "Activate the process instance (PUT /runtime/process-instances/ID {\"action\": \"activate\"}); the job then becomes due again.".into(),
            )
        }
        JobTable::Runtime => {}
    }
    if let (Some(owner), Some(exp)) = (&job.lock_owner, job.lock_exp_time) {
        return locked(ctx, job, owner, exp);
    }
    if job.retries <= 0 {
        return finding(
            Severity::Error,
            "no-retries",
            format!("{what} has no retries left but is still in ACT_RU_JOB"),
            format!(
                "RETRIES_ is {}; acquisition only takes jobs with RETRIES_ > 0, so it will never run (step 4). Last error: {}",
                job.retries,
                job.exception_msg.as_deref().unwrap_or("(none recorded)")
            ),
            format!(
                "Delete it (DELETE /management/jobs/{id}) and enqueue it again; kairos itself moves exhausted jobs to the dead-letter table, so report how this row came about."
            ),
        );
    }
    if let Some(msg) = &job.exception_msg {
        let next = match job.duedate {
            Some(d) if d > ctx.now => format!("the next attempt is due at {d} (in {})", ctx.until(d)),
            _ => "the next attempt is due now".into(),
        };
        return finding(
            Severity::Warning,
            "failing",
            format!("{what} is failing"),
            format!(
                "{} attempt(s) so far, {} retries left; {next} (step 4). Last error: {msg}",
                job.attempts, job.retries
            ),
            format!(
                "Read the stack trace (GET /management/jobs/{id}/exception-stacktrace, or `kairos jobs stacktrace {id}`) and fix the cause; it retries by itself. POST /management/jobs/{id} {{\"action\": \"execute\"}} retries it now."
            ),
        );
    }
    unlocked(ctx, job)
}

/// Steps 2 and 5 for a healthy, unlocked job: not due yet, or due and waiting for a worker.
pub(super) fn unlocked(ctx: &Ctx, job: &Job) -> Finding {
    let (id, what) = (&job.id, describe(job));
    match job.duedate {
        Some(due) if due > ctx.now => finding(
            Severity::Info,
            "not-due",
            format!("{what} is not due yet"),
            format!("DUEDATE_ is {due}, in {} by the database clock (now {}) (step 2).", ctx.until(due), ctx.now),
            format!(
                "Nothing to do if that time is right. If it should have fired already, the due date was computed wrongly: kairos compares due dates with the database clock only, so check the timer expression and the clock of whoever computed an absolute dueDate. POST /management/jobs/{id} {{\"action\": \"execute\"}} runs it now."
            ),
        ),
        _ if job.job_type == JobType::ExternalWorker => finding(
            Severity::Info,
            "external-worker",
            format!("{what} waits for an external worker"),
            format!(
                "External-worker jobs are not run by the executor; a worker fetches them by topic \"{}\".",
                job.handler_type
            ),
            format!(
                "Check that a worker polls POST /external-job-api/acquire/jobs with topic \"{}\".",
                job.handler_type
            ),
        ),
        due => {
            let since = due.unwrap_or(job.create_time);
            let late = ctx.now.duration_since(since);
            let (severity, code) =
                if late > OVERDUE_AFTER { (Severity::Warning, "overdue") } else { (Severity::Info, "due") };
            finding(
                severity,
                code,
                format!("{what} is due and waits for a worker"),
                format!("Due since {since} ({} ago), unlocked, {} retries left: any node with its executor on may take it (step 5).", ctx.since(since), job.retries),
                "If it stays here, look at the cluster findings below: is an executor switched on and alive, and is the backlog larger than the workers? More workers (--workers) or nodes drain it faster.".into(),
            )
        }
    }
}

pub(super) fn locked(ctx: &Ctx, job: &Job, owner: &str, exp: Timestamp) -> Finding {
    let what = describe(job);
    let node = ctx.node(owner);
    let alive = node.is_some_and(|n| ctx.alive(n));
    if !alive && job.retries <= 0 {
        return locked_without_retries(ctx, job, owner, exp);
    }
    if exp <= ctx.now {
        return finding(
            Severity::Warning,
            "lock-expired",
            format!("{what}: the lease of node {owner} expired"),
            format!("LOCK_EXP_TIME_ was {exp} ({} ago) and no node has taken the job over yet (step 3).", ctx.since(exp)),
            "A live node with its executor on takes it over at its next acquisition (the abandoned attempt counts as one retry). If it stays, see the executor-off and no-live-node findings.".into(),
        );
    }
    if alive {
        return finding(
            Severity::Info,
            "locked",
            format!("{what} is running on node {owner}"),
            format!(
                "Locked until {exp} (in {}); the lease is extended while the handler runs (step 3).",
                ctx.until(exp)
            ),
            format!(
                "Wait for it to finish; GET /history/job-log?jobId={} shows each attempt. Do not clear the lock: the job would run twice.",
                job.id
            ),
        );
    }
    let state = match node {
        None => "is not a known node".to_string(),
        Some(n) => format!("is {} and last heartbeat {} ago", n.state, ctx.since(n.heartbeat)),
    };
    finding(
        Severity::Warning,
        "locked",
        format!("{what} is locked by node {owner}, which is not alive"),
        format!("Node {owner} {state}; the lease runs until {exp} (in {}) (step 3).", ctx.until(exp)),
        format!(
            "Wait: a live node declares {owner} dead after {} without heartbeats and expires its leases, then runs the job again. Never clear the lock by hand unless {owner} is certainly dead (seed 000 §4.2).",
            human(node.map_or(ctx.dead_after, |n| ctx.dead_after_of(n)))
        ),
    )
}

/// Seed 000 §4.2's trap: a lock of a node that is gone, on a job with no retries left. The lock
/// will expire, but acquisition only takes RETRIES_ > 0, so nothing runs it again, ever.
fn locked_without_retries(ctx: &Ctx, job: &Job, owner: &str, exp: Timestamp) -> Finding {
    let id = &job.id;
    let lease =
        if exp <= ctx.now { format!("its lease expired at {exp}") } else { format!("its lease runs until {exp}") };
    finding(
        Severity::Error,
        "locked-no-retries",
        format!("{} is locked by node {owner}, which is not alive, and has no retries left", describe(job)),
        format!(
            "RETRIES_ is {} and {lease}: acquisition only takes jobs with RETRIES_ > 0, so no node will ever run it again, even once the lock is gone (step 3 and 4). Last error: {}",
            job.retries,
            job.exception_msg.as_deref().unwrap_or("(none recorded)")
        ),
        format!(
            "Make sure node {owner} is really dead (a live one would run the job twice), then delete the job through kairos: DELETE /management/jobs/{id}?force=true (or `kairos jobs delete {id} --force`), and enqueue the work again if it is still wanted. Never reset RETRIES_ with SQL without clearing the lock (seed 000 §4.2)."
        ),
    )
}

pub(super) fn dead_letter(job: &Job) -> Finding {
    let id = &job.id;
    finding(
        Severity::Error,
        "dead-letter",
        format!("{} is a dead letter", describe(job)),
        format!(
            "Its retries ran out after {} attempt(s); it waits in ACT_RU_DEADLETTER_JOB for an operator (step 4). Last error: {}",
            job.attempts,
            job.exception_msg.as_deref().unwrap_or("(none recorded)")
        ),
        format!(
            "Read the stack trace (GET /management/deadletter-jobs/{id}/exception-stacktrace), fix the cause, then move it back: POST /management/deadletter-jobs/{id} {{\"action\": \"move\", \"retries\": 3}} (or `kairos jobs retry {id}`). Delete it only if the work is no longer wanted."
        ),
    )
}

pub(super) fn describe(job: &Job) -> String {
    let kind = if job.job_type == JobType::Timer { "Timer" } else { "Job" };
    match (&job.element_id, &job.element_name) {
        (Some(e), Some(n)) => format!("{kind} {} ({}) at {e} \"{n}\"", job.id, job.handler_type),
        (Some(e), None) => format!("{kind} {} ({}) at {e}", job.id, job.handler_type),
        _ => format!("{kind} {} ({})", job.id, job.handler_type),
    }
}

// ----- step 5 and the cluster ---------------------------------------------------------------
