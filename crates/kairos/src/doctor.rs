//! `kairos doctor` (SPEC J11): answers "why did this timer not fire" the way seed 000 §4.1
//! teaches an operator to, and lists what is wrong in the cluster as a whole.
//!
//! For a process instance (or every running instance with a business key) it walks the five
//! steps for each of its jobs, judged by the database's clock (the one the executor uses):
//!
//! 1. is there a job at all? (none: the job was never created — a definition problem, or the
//!    instance stopped before reaching the timer);
//! 2. is it due? (not yet: check clocks);
//! 3. is it locked? (by a live node: it runs now; by a dead one: wait for the lease to expire);
//! 4. did it fail? (retries left: it retries; none: a dead letter waits for an operator);
//! 5. is any job executor running at all? (Activiti's `asyncExecutorActivate`).
//!
//! Step 5 and the cluster-wide checks — nodes without a fresh heartbeat, orphan jobs, jobs of
//! ended instances, expired locks, dead letters — are always added. Every finding says what to
//! do. The report is plain data: the HTTP API serves [`DoctorReport::to_json`], the CLI prints
//! its [`std::fmt::Display`] form.

use crate::{Engine, Error};
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobTable, JobType, NodeInfo};
use kairos_store::{JobCounts, JobDiagnostics, JobFilter, SqlValue, Store};
use std::collections::HashSet;
use std::fmt;

/// Rows of each cluster-wide kind listed at most; the counts say how many there are in all.
const DIAGNOSTICS_LIMIT: u32 = 20;
/// Jobs of one instance examined at most.
const JOBS_PER_INSTANCE: u64 = 500;
/// A due job waiting longer than this for a worker is reported as overdue.
const OVERDUE_AFTER: SignedDuration = SignedDuration::from_secs(60);
/// A node clock this far from the database's is worth a warning.
const CLOCK_SKEW_WARN: SignedDuration = SignedDuration::from_secs(2);

/// What to diagnose: one process instance, the running instances with a business key, or
/// (both `None`) only the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DoctorQuery {
    pub business_key: Option<String>,
    pub process_instance_id: Option<String>,
}

/// How bad a finding is. Ordered: `Ok < Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Ok,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One thing the doctor found, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// Stable, for scripts: `no-instance`, `instance-ended`, `instance-suspended`, `no-jobs`,
    /// `not-due`, `due`, `overdue`, `locked`, `lock-expired`, `failing`, `no-retries`,
    /// `dead-letter`, `suspended`, `external-worker`, `executor-off`, `executor-not-running`,
    /// `no-live-node`, `nodes`, `stale-node`, `backlog`, `orphan-job`, `job-of-ended-instance`,
    /// `clock-skew`, `truncated`, `all-clear`.
    pub code: &'static str,
    pub title: String,
    pub detail: String,
    pub action: String,
    pub job_id: Option<String>,
    pub process_instance_id: Option<String>,
}

/// What [`diagnose`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorReport {
    /// The database's clock when the diagnosis ran; every "due"/"expired" is judged by it.
    pub checked_at: Timestamp,
    /// The node that ran the diagnosis.
    pub node: String,
    /// The process instances examined.
    pub instances: Vec<String>,
    pub findings: Vec<Finding>,
}

impl DoctorReport {
    /// The most severe finding (`Ok` for an empty report).
    pub fn worst(&self) -> Severity {
        self.findings.iter().map(|f| f.severity).max().unwrap_or(Severity::Ok)
    }

    /// The findings with one code.
    pub fn with_code<'a>(&'a self, code: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.code == code)
    }

    /// The report as the API's JSON (camelCase keys, RFC 3339 instants).
    pub fn to_json(&self) -> serde_json::Value {
        let findings: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "severity": f.severity.as_str(),
                    "code": f.code,
                    "title": f.title,
                    "detail": f.detail,
                    "action": f.action,
                    "jobId": f.job_id,
                    "processInstanceId": f.process_instance_id,
                })
            })
            .collect();
        serde_json::json!({
            "checkedAt": self.checked_at.to_string(),
            "node": self.node,
            "worst": self.worst().as_str(),
            "instances": self.instances,
            "findings": findings,
        })
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kairos doctor on node {} at {} (database clock)", self.node, self.checked_at)?;
        for x in &self.findings {
            writeln!(f, "\n[{}] {}: {}", x.severity.as_str(), x.code, x.title)?;
            if !x.detail.is_empty() {
                writeln!(f, "  {}", x.detail)?;
            }
            if !x.action.is_empty() {
                writeln!(f, "  what to do: {}", x.action)?;
            }
        }
        Ok(())
    }
}

/// Diagnoses an instance, a business key, or (with an empty query) only the cluster.
pub async fn diagnose(engine: &Engine, query: &DoctorQuery) -> Result<DoctorReport, Error> {
    let store = engine.store().as_ref();
    let now = store.db_now().await?;
    let nodes = store.node_list().await?;
    let ctx = Ctx { now, nodes, dead_after: engine.settings().executor.dead_after };
    let mut findings = Vec::new();
    let instances = match (non_empty(&query.business_key), non_empty(&query.process_instance_id)) {
        (Some(_), Some(_)) => {
            return Err(kairos_core::Error::invalid(
                "businessKey",
                "give either a business key or a process instance id, not both",
            )
            .into());
        }
        (Some(key), None) => instances_of_business_key(store, key, &mut findings).await?,
        (None, Some(id)) => {
            instance_state(store, id, &mut findings).await?;
            vec![id.to_string()]
        }
        (None, None) => Vec::new(),
    };
    for id in &instances {
        walk_instance(store, &ctx, id, &mut findings).await?;
    }
    cluster(engine, &ctx, &mut findings).await?;
    Ok(DoctorReport { checked_at: now, node: engine.node_id().to_string(), instances, findings })
}

/// What every check needs to judge time and liveness.
struct Ctx {
    now: Timestamp,
    nodes: Vec<NodeInfo>,
    dead_after: SignedDuration,
}

impl Ctx {
    fn node(&self, id: &str) -> Option<&NodeInfo> {
        self.nodes.iter().find(|n| n.id == id)
    }
    /// A node is alive when it says it runs and its heartbeat is fresh by the database clock.
    fn alive(&self, n: &NodeInfo) -> bool {
        n.state == "running" && self.now.duration_since(n.heartbeat) <= self.dead_after
    }
    fn since(&self, t: Timestamp) -> String {
        human(self.now.duration_since(t))
    }
    fn until(&self, t: Timestamp) -> String {
        human(t.duration_since(self.now))
    }
}

fn finding(severity: Severity, code: &'static str, title: String, detail: String, action: String) -> Finding {
    Finding { severity, code, title, detail, action, job_id: None, process_instance_id: None }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// A duration for people: whole seconds, "1h 2m 3s".
fn human(d: SignedDuration) -> String {
    let secs = d.as_secs().abs();
    if secs == 0 {
        return "less than a second".into();
    }
    format!("{:#}", SignedDuration::from_secs(secs))
}

fn text(v: Option<&SqlValue>) -> Option<String> {
    match v? {
        SqlValue::Null => None,
        SqlValue::Text(s) => Some(s.clone()),
        SqlValue::Timestamp(t) => Some(t.to_string()),
        SqlValue::Int(i) => Some(i.to_string()),
        SqlValue::Float(x) => Some(x.to_string()),
        SqlValue::Bool(b) => Some(b.to_string()),
        SqlValue::Bytes(_) => Some("<bytes>".into()),
    }
}

// ----- step 0: which instances -----------------------------------------------------------

async fn instances_of_business_key(store: &dyn Store, key: &str, out: &mut Vec<Finding>) -> Result<Vec<String>, Error> {
    let running = store
        .sql_query(
            "SELECT ID_, PROC_INST_ID_ FROM ACT_RU_EXECUTION WHERE BUSINESS_KEY_ = ? AND PARENT_ID_ IS NULL ORDER BY ID_",
            &[SqlValue::Text(key.into())],
        )
        .await?;
    let ids: Vec<String> = running.iter().filter_map(|r| text(r.get(1)).or_else(|| text(r.first()))).collect();
    let ended = store
        .sql_query(
            "SELECT PROC_INST_ID_, END_TIME_, DELETE_REASON_ FROM ACT_HI_PROCINST WHERE BUSINESS_KEY_ = ? AND END_TIME_ IS NOT NULL ORDER BY END_TIME_",
            &[SqlValue::Text(key.into())],
        )
        .await?;
    for row in &ended {
        let id = text(row.first()).unwrap_or_default();
        out.push(ended_finding(&id, text(row.get(1)), text(row.get(2)), Severity::Info));
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
async fn instance_state(store: &dyn Store, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
    let running = store
        .sql_query(
            "SELECT ID_, SUSPENSION_STATE_ FROM ACT_RU_EXECUTION WHERE ID_ = ? AND PARENT_ID_ IS NULL",
            &[SqlValue::Text(id.into())],
        )
        .await?;
    if let Some(row) = running.first() {
        if row.get(1).and_then(SqlValue::as_i64) == Some(2) {
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
    let ended = store
        .sql_query(
            "SELECT END_TIME_, DELETE_REASON_ FROM ACT_HI_PROCINST WHERE PROC_INST_ID_ = ?",
            &[SqlValue::Text(id.into())],
        )
        .await?;
    match ended.first() {
        Some(row) if text(row.first()).is_some() => {
            out.push(ended_finding(id, text(row.first()), text(row.get(1)), Severity::Warning));
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

fn ended_finding(id: &str, end: Option<String>, reason: Option<String>, severity: Severity) -> Finding {
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

async fn walk_instance(store: &dyn Store, ctx: &Ctx, id: &str, out: &mut Vec<Finding>) -> Result<(), Error> {
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
    if seen == 0 {
        let at = store
            .sql_query(
                "SELECT ACT_ID_ FROM ACT_RU_EXECUTION WHERE PROC_INST_ID_ = ? AND ACT_ID_ IS NOT NULL ORDER BY ID_",
                &[SqlValue::Text(id.into())],
            )
            .await?;
        let acts: Vec<String> = at.iter().filter_map(|r| text(r.first())).collect();
        let mut f = finding(
            Severity::Warning,
            "no-jobs",
            format!("Instance {id} has no job"),
            format!(
                "ACT_RU_JOB, ACT_RU_SUSPENDED_JOB and ACT_RU_DEADLETTER_JOB hold no row for it, so no timer or asynchronous step of it is waiting (step 1). {}",
                if acts.is_empty() { "No execution of it stands at an activity.".to_string() } else { format!("It stands at: {}.", acts.join(", ")) }
            ),
            "If it should be waiting at a timer, the job was never created: check the timer definition in the deployed BPMN (timeDate/timeDuration/timeCycle) and whether the instance failed before reaching it (GET /history/historic-activity-instances?processInstanceId=ID). If it stands at a user or receive task, it waits for a person or a message, not for a job.".into(),
        );
        f.process_instance_id = Some(id.into());
        out.push(f);
    }
    Ok(())
}

/// Steps 2–4 for one job (the caller sets its ids).
fn walk_job(ctx: &Ctx, job: &Job, table: JobTable) -> Finding {
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
                "RETRIES_ is {}; acquisition only takes jobs with RETRIES_ > 0, so it will never run (step 4).",
                job.retries
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
fn unlocked(ctx: &Ctx, job: &Job) -> Finding {
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

fn locked(ctx: &Ctx, job: &Job, owner: &str, exp: Timestamp) -> Finding {
    let what = describe(job);
    let node = ctx.node(owner);
    let alive = node.is_some_and(|n| ctx.alive(n));
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
            human(ctx.dead_after)
        ),
    )
}

fn dead_letter(job: &Job) -> Finding {
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

fn describe(job: &Job) -> String {
    let kind = if job.job_type == JobType::Timer { "Timer" } else { "Job" };
    match (&job.element_id, &job.element_name) {
        (Some(e), Some(n)) => format!("{kind} {} ({}) at {e} \"{n}\"", job.id, job.handler_type),
        (Some(e), None) => format!("{kind} {} ({}) at {e}", job.id, job.handler_type),
        _ => format!("{kind} {} ({})", job.id, job.handler_type),
    }
}

// ----- step 5 and the cluster ---------------------------------------------------------------

async fn cluster(engine: &Engine, ctx: &Ctx, out: &mut Vec<Finding>) -> Result<(), Error> {
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
fn listed_jobs(ctx: &Ctx, diag: &JobDiagnostics, out: &mut Vec<Finding>) {
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
fn clock_skew(ctx: &Ctx, out: &mut Vec<Finding>) {
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

fn more(out: &mut Vec<Finding>, code: &'static str, total: u64, listed: usize, what: &str, list: &str) {
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
fn executors(engine: &Engine, ctx: &Ctx, counts: &JobCounts, out: &mut Vec<Finding>) {
    let me = engine.node_id();
    let live: Vec<&NodeInfo> = ctx.nodes.iter().filter(|n| ctx.alive(n)).collect();
    let pending = counts.executable + counts.waiting + counts.expired_locks;
    if !engine.settings().executor_enabled {
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

fn backlog(ctx: &Ctx, counts: &JobCounts, out: &mut Vec<Finding>) {
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

fn orphan(job: &Job) -> Finding {
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

fn of_ended_instance(job: &Job) -> Finding {
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
