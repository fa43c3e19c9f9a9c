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
//! ended instances, expired locks, dead letters, the backlog by TYPE_, instances ended in
//! history with runtime rows left, a lock time shorter than the handlers take — are always
//! added, and so are the scheduler's (seed 004 §5) and seed 002 §32–§37's business runbooks
//! (from reconciliation's incidents, the bindings and the outbox). Every finding says what to do.
//!
//! Leases and liveness are judged by the settings each node recorded in KAIROS_NODE (its lock
//! time and dead-after), not by the diagnosing engine's: `kairos doctor` runs as a tool whose
//! own settings are defaults. The report is plain data: the HTTP API serves
//! [`DoctorReport::to_json`], the CLI prints its [`std::fmt::Display`] form; every instant in
//! both is RFC 3339.

use crate::{Engine, Error};
use jiff::{SignedDuration, Timestamp};
use kairos_core::{Job, JobTable, JobType, NodeInfo};
use kairos_store::{JobCounts, JobDiagnostics, JobFilter, Store};
use std::collections::HashSet;
use std::fmt;

mod business;
mod cluster;
mod instance;
mod scheduler;
mod two_phase;
mod unreadable;

use cluster::cluster;
use instance::{instance_state, instances_of_business_key, walk_instance};

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
    /// The caller is a tool (the `kairos doctor` CLI), not a node: its own engine never runs
    /// jobs, so findings about "this node's executor" would only mislead.
    pub from_tool: bool,
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
    /// `clock-skew`, `truncated`, `no-scheduler-checkin`, `stale-checkin`, `trigger-late`,
    /// `trigger-error`, `trigger-without-job`, `fired-not-started`, `fired-running-long`,
    /// `locked-no-retries`, `waiting`, `event-wait`, `ended-with-runtime-rows`,
    /// `lock-time-short`, `trigger-paused`, `trigger-group-paused`, `trigger-blocked`,
    /// `trigger-time-zone`, `two-phase-in-doubt`, the business runbooks of seed 002 §32–§37
    /// (`runbook-started-still-draft`, `runbook-approving-without-process`,
    /// `runbook-task-done-business-unchanged`, `runbook-published-target-missing`,
    /// `runbook-two-active-instances`, `runbook-outbox-backlog`), `reconcile-incidents`, `all-clear`.
    pub code: &'static str,
    pub title: String,
    pub detail: String,
    pub action: String,
    pub job_id: Option<String>,
    pub process_instance_id: Option<String>,
    /// The trigger a scheduler finding is about (QRTZ_TRIGGERS' TRIGGER_GROUP, TRIGGER_NAME).
    pub trigger_group: Option<String>,
    pub trigger_name: Option<String>,
}

impl Finding {
    /// The finding about one trigger.
    fn of_trigger(mut self, group: String, name: String) -> Finding {
        self.trigger_group = Some(group);
        self.trigger_name = Some(name);
        self
    }
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
                    "triggerGroup": f.trigger_group,
                    "triggerName": f.trigger_name,
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
            if let (Some(group), Some(name)) = (&x.trigger_group, &x.trigger_name) {
                writeln!(f, "  trigger: group {group}, name {name}")?;
            }
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
    let own = &engine.settings().executor;
    let ctx = Ctx { now, nodes, dead_after: own.dead_after, lock_time: own.lock_time, from_tool: query.from_tool };
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
    unreadable::check(engine, &mut findings).await?;
    two_phase::check(engine, &mut findings).await?;
    Ok(DoctorReport { checked_at: now, node: engine.node_id().to_string(), instances, findings })
}

/// What every check needs to judge time and liveness.
struct Ctx {
    now: Timestamp,
    nodes: Vec<NodeInfo>,
    /// The diagnosing engine's own settings: used only for a node that recorded none.
    dead_after: SignedDuration,
    lock_time: SignedDuration,
    from_tool: bool,
}

impl Ctx {
    fn node(&self, id: &str) -> Option<&NodeInfo> {
        self.nodes.iter().find(|n| n.id == id)
    }
    /// A node is alive when it says it runs and its heartbeat is fresh by the database clock,
    /// judged by the dead-after the node itself runs with (the one its peers reap it by).
    fn alive(&self, n: &NodeInfo) -> bool {
        n.state == "running" && self.now.duration_since(n.heartbeat) <= self.dead_after_of(n)
    }
    fn dead_after_of(&self, n: &NodeInfo) -> SignedDuration {
        n.settings.as_ref().map_or(self.dead_after, |s| s.dead_after)
    }
    /// The lock time node `id` takes jobs with (the diagnosing engine's for an unknown node).
    fn lock_time_of(&self, id: &str) -> SignedDuration {
        self.node(id).and_then(|n| n.settings.as_ref()).map_or(self.lock_time, |s| s.lock_time)
    }
    /// The shortest lock time of the running nodes: the one a slow handler must stay under.
    fn shortest_lock_time(&self) -> Option<(&str, SignedDuration)> {
        self.nodes
            .iter()
            .filter(|n| n.state == "running")
            .map(|n| (n.id.as_str(), self.lock_time_of(&n.id)))
            .min_by_key(|(_, t)| *t)
    }
    fn since(&self, t: Timestamp) -> String {
        human(self.now.duration_since(t))
    }
    fn until(&self, t: Timestamp) -> String {
        human(t.duration_since(self.now))
    }
}

fn finding(severity: Severity, code: &'static str, title: String, detail: String, action: String) -> Finding {
    Finding {
        severity,
        code,
        title,
        detail,
        action,
        job_id: None,
        process_instance_id: None,
        trigger_group: None,
        trigger_name: None,
    }
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
