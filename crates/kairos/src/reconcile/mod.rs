//! Reconciliation (SPEC C7, seed 002 §28–§31): a formal, scheduled pass that compares every
//! open business record with what the engine knows about it, and repairs, waits or hands the
//! difference to a person — never silently overwriting a fact to make the count zero.
//!
//! A pass reads each declared source's business rows a page at a time (keyset by id), then for
//! the page all the engine's evidence in a few statements (`kairos_store_engine::reconcile`):
//! bindings, running roots and history with their waits, workflow commands (when the business
//! database has them), outbox events, open incidents. Each record is classified by the rule
//! table ([`rules`]); the action is taken at once, each in a short statement of its own, so the
//! pass holds no lock across pages and the executor goes on meanwhile.
//!
//! Auto-repairs stay inside §30's bounds whatever the table says ([`rules::guard`]): a refused
//! repair opens an incident instead, and every repair is recorded with its before and after
//! (`kairos_incident`, kind `repair`). An open incident freezes its record: no later pass acts
//! on it until a person closes it ([`incidents`]).

pub mod incidents;
pub mod rules;

use crate::Error;
use jiff::Timestamp;
use kairos_store::{ErrorKind, Sql, SqlValue, Store};
use kairos_store_engine::reconcile as ev;
use rules::{Action, Evidence, Repair, Rule, State};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Business rows read per page.
pub const PAGE: u32 = 1_000;
/// Findings a report lists at most (the counts cover all).
pub const FINDINGS_LIMIT: usize = 1_000;

fn invalid(message: impl Into<String>) -> Error {
    Error::Store(kairos_store::Error::new(ErrorKind::Invalid, message))
}

/// One business type's records, declared: where they are and what their statuses mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Source {
    /// The bindings' business_type.
    pub business_type: String,
    pub table: String,
    #[serde(default = "default_id")]
    pub id_column: String,
    #[serde(default = "default_status")]
    pub status_column: String,
    /// The process definition key its instances run (bindings' process type).
    pub process_type: String,
    /// For each of §29's states, the raw status values that mean it; the first is the one a
    /// write-back writes.
    pub states: BTreeMap<State, Vec<String>>,
    /// End event ids that mean "approved"; none: no end is certain, so no write-back to APPROVED.
    #[serde(default)]
    pub approved_ends: Vec<String>,
    /// The outbox aggregate type of its events (the business id is the aggregate id); none: the
    /// outbox is not consulted.
    #[serde(default)]
    pub outbox_aggregate_type: Option<String>,
}

fn default_id() -> String {
    "id".into()
}

fn default_status() -> String {
    "status".into()
}

impl Source {
    fn table(&self) -> (Vec<String>, HashMap<String, State>) {
        let mut raw = HashMap::new();
        let mut all = Vec::new();
        for (state, values) in &self.states {
            for v in values {
                raw.insert(v.clone(), *state);
                all.push(v.clone());
            }
        }
        (all, raw)
    }

    fn business_table<'a>(&'a self, statuses: &'a [String]) -> ev::BusinessTable<'a> {
        ev::BusinessTable {
            table: &self.table,
            id_column: &self.id_column,
            status_column: &self.status_column,
            statuses,
        }
    }

    fn written(&self, state: State) -> Option<&str> {
        self.states.get(&state).and_then(|v| v.first()).map(String::as_str)
    }
}

/// A reconciliation configuration: the sources and, optionally, a rule table replacing §29's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    pub sources: Vec<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<Rule>>,
}

impl Config {
    /// Parses and checks a JSON configuration; the error names the field.
    pub fn parse(json: &str) -> Result<Config, Error> {
        let c: Config = serde_json::from_str(json).map_err(|e| invalid(format!("reconcile config: {e}")))?;
        c.check()?;
        Ok(c)
    }

    pub fn check(&self) -> Result<(), Error> {
        use kairos_store_engine::business::check_identifier;
        let mut types = std::collections::HashSet::new();
        for (i, s) in self.sources.iter().enumerate() {
            let at = format!("sources[{i}]");
            if s.business_type.is_empty() || s.business_type.len() > 64 {
                return Err(invalid(format!("{at}.businessType: must be 1..=64 characters")));
            }
            if !types.insert(s.business_type.as_str()) {
                return Err(invalid(format!("{at}.businessType: {:?} is declared twice", s.business_type)));
            }
            for (field, name) in [("table", &s.table), ("idColumn", &s.id_column), ("statusColumn", &s.status_column)] {
                check_identifier(&format!("{at}.{field}"), name)?;
            }
            if s.process_type.is_empty() {
                return Err(invalid(format!("{at}.processType: name the process definition key")));
            }
            if s.states.values().all(Vec::is_empty) {
                return Err(invalid(format!("{at}.states: map at least one status value")));
            }
            let mut seen = HashMap::new();
            for (state, values) in &s.states {
                for v in values {
                    if let Some(other) = seen.insert(v.as_str(), *state) {
                        return Err(invalid(format!(
                            "{at}.states: {v:?} means both {} and {}",
                            other.as_str(),
                            state.as_str()
                        )));
                    }
                }
            }
        }
        if let Some(r) = &self.rules {
            rules::check(r).map_err(invalid)?;
        }
        Ok(())
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.rules.clone().unwrap_or_else(rules::default_rules)
    }
}

/// One record the pass did not find consistent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub business_type: String,
    pub business_id: String,
    pub business_status: String,
    pub state: State,
    pub evidence: Vec<Evidence>,
    /// The rule that matched (`unmatched`: none did).
    pub rule_id: String,
    /// What was done: waiting, repaired, incident, frozen (an incident is open), skipped
    /// (the row changed during the pass), unmatched, or, in a dry run, would-repair /
    /// would-open-incident.
    pub outcome: String,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_instance_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incident_id: Option<String>,
}

/// What a pass did.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub checked_at: Option<Timestamp>,
    pub dry_run: bool,
    pub records: u64,
    pub consistent: u64,
    pub waiting: u64,
    pub repaired: u64,
    pub repairs_refused: u64,
    pub incidents_opened: u64,
    /// Records with an incident already open (frozen).
    pub frozen: u64,
    pub unmatched: u64,
    /// Records by rule id (matched, whatever the outcome).
    pub by_rule: BTreeMap<String, u64>,
    /// The differences, at most [`FINDINGS_LIMIT`].
    pub findings: Vec<Finding>,
    pub findings_truncated: bool,
    pub seconds: f64,
}

/// The reconciler: its configuration, the engine's store, and the business database.
#[derive(Debug, Clone)]
pub struct Reconciler {
    config: Arc<Config>,
    rules: Arc<Vec<Rule>>,
    store: Arc<dyn Store>,
    business: Arc<dyn Sql>,
    stats: Arc<Stats>,
}

/// What `/metrics` shows of reconciliation on this node (seed 002 §39): the differences of the
/// last pass by rule, and the auto-repairs since start (made, refused by §30's guard).
#[derive(Debug, Default)]
pub struct Stats {
    pub last_by_rule: std::sync::Mutex<BTreeMap<String, u64>>,
    pub passes: std::sync::atomic::AtomicU64,
    pub repaired: std::sync::atomic::AtomicU64,
    pub refused: std::sync::atomic::AtomicU64,
}

/// Everything known about one record, for the decision and the evidence snapshot.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot<'a> {
    business_type: &'a str,
    business_id: &'a str,
    business_status: &'a str,
    state: State,
    evidence: &'a [Evidence],
    bindings: Vec<&'a ev::BindingEvidence>,
    instances: Vec<&'a ev::InstanceEvidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commands: Option<Vec<&'a ev::CommandEvidence>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outbox: Option<Vec<&'a ev::OutboxEvidence>>,
}

/// What one page's evidence is, by business id.
struct Page {
    bindings: HashMap<String, Vec<ev::BindingEvidence>>,
    instances: HashMap<String, Vec<ev::InstanceEvidence>>,
    commands: Option<HashMap<String, Vec<ev::CommandEvidence>>>,
    outbox: Option<HashMap<String, Vec<ev::OutboxEvidence>>>,
    open: HashMap<String, Vec<String>>,
}

/// One record's part of a page.
struct Of<'p> {
    bindings: &'p [ev::BindingEvidence],
    instances: &'p [ev::InstanceEvidence],
    bound: Vec<String>,
    commands: Option<&'p [ev::CommandEvidence]>,
    outbox: Option<&'p [ev::OutboxEvidence]>,
}

impl Page {
    fn of(&self, id: &str) -> Of<'_> {
        let bindings = self.bindings.get(id).map_or(&[][..], Vec::as_slice);
        Of {
            bindings,
            instances: self.instances.get(id).map_or(&[][..], Vec::as_slice),
            bound: bindings.iter().map(|b| b.process_instance_id.clone()).collect(),
            commands: self.commands.as_ref().map(|c| c.get(id).map_or(&[][..], Vec::as_slice)),
            outbox: self.outbox.as_ref().map(|o| o.get(id).map_or(&[][..], Vec::as_slice)),
        }
    }
}

impl Of<'_> {
    fn facts<'a>(&'a self, state: State, approved_ends: &'a [String]) -> rules::Facts<'a> {
        rules::Facts {
            state,
            instances: self.instances,
            bound: &self.bound,
            commands: self.commands,
            outbox: self.outbox,
            approved_ends,
        }
    }
}

fn group<T>(items: Vec<T>, key: impl Fn(&T) -> String) -> HashMap<String, Vec<T>> {
    let mut m: HashMap<String, Vec<T>> = HashMap::new();
    for i in items {
        m.entry(key(&i)).or_default().push(i);
    }
    m
}

impl Reconciler {
    /// A reconciler over the engine's `store` and the business rows on `business` (the same
    /// store when the business tables live in kairos's database).
    pub fn new(config: Config, store: Arc<dyn Store>, business: Arc<dyn Sql>) -> Result<Reconciler, Error> {
        config.check()?;
        let rules = Arc::new(config.rules());
        Ok(Reconciler { config: Arc::new(config), rules, store, business, stats: Arc::default() })
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Whether `rule_id` names a difference (any rule whose action is not `none`).
    pub fn is_difference(&self, rule_id: &str) -> bool {
        self.rules.iter().any(|r| r.id == rule_id && r.action != Action::None)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn source(&self, business_type: &str) -> Option<&Source> {
        self.config.sources.iter().find(|s| s.business_type == business_type)
    }

    /// One pass over every source. `dry_run`: classify and report, change nothing.
    pub async fn pass(&self, dry_run: bool) -> Result<Report, Error> {
        let started = std::time::Instant::now();
        let mut report = Report { checked_at: Some(self.store.db_now().await?), dry_run, ..Default::default() };
        for source in &self.config.sources {
            self.pass_source(source, dry_run, &mut report).await?;
        }
        report.seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        if !dry_run {
            use std::sync::atomic::Ordering::Relaxed;
            self.stats.passes.fetch_add(1, Relaxed);
            self.stats.repaired.fetch_add(report.repaired, Relaxed);
            self.stats.refused.fetch_add(report.repairs_refused, Relaxed);
            let differences: BTreeMap<String, u64> =
                report.by_rule.iter().filter(|(r, _)| self.is_difference(r)).map(|(r, n)| (r.clone(), *n)).collect();
            *self.stats.last_by_rule.lock().unwrap_or_else(|e| e.into_inner()) = differences;
        }
        Ok(report)
    }

    async fn pass_source(&self, source: &Source, dry_run: bool, report: &mut Report) -> Result<(), Error> {
        let (statuses, raw) = source.table();
        let table = source.business_table(&statuses);
        let mut after: Option<SqlValue> = None;
        let commands = std::sync::atomic::AtomicBool::new(true);
        // Two pages in flight: the next page's evidence is read while this one's records are
        // judged and acted on (on another connection), so the pass waits on one round trip
        // chain, not two.
        let mut judged: Option<(Vec<ev::BusinessRow>, Page)> = None;
        loop {
            let rows = ev::business_page(self.business.as_ref(), &table, after.as_ref(), PAGE).await?;
            let last = rows.len() < PAGE as usize;
            if let Some(l) = rows.last() {
                after = Some(l.key.clone());
            }
            let previous = judged.take();
            let (page, acted) = tokio::join!(
                async {
                    if rows.is_empty() { Ok(None) } else { self.evidence(source, &rows, &commands).await.map(Some) }
                },
                async {
                    match &previous {
                        Some((r, p)) => self.act_on_page(source, &table, &raw, r, p, dry_run, report).await,
                        None => Ok(()),
                    }
                }
            );
            acted?;
            judged = page?.map(|p| (rows, p));
            if last {
                break;
            }
        }
        if let Some((r, p)) = judged {
            self.act_on_page(source, &table, &raw, &r, &p, dry_run, report).await?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    async fn act_on_page(
        &self,
        source: &Source,
        table: &ev::BusinessTable<'_>,
        raw: &HashMap<String, State>,
        rows: &[ev::BusinessRow],
        page: &Page,
        dry_run: bool,
        report: &mut Report,
    ) -> Result<(), Error> {
        let now = self.store.db_now().await?;
        for row in rows {
            let Some(state) = raw.get(&row.status).copied() else { continue };
            self.reconcile_one(source, table, row, state, page, now, dry_run, report).await?;
        }
        Ok(())
    }

    /// The page's evidence. `commands`: whether the business database may have a command table
    /// (set false at the first page that finds none, so a pass asks once).
    async fn evidence(
        &self,
        source: &Source,
        rows: &[ev::BusinessRow],
        commands: &std::sync::atomic::AtomicBool,
    ) -> Result<Page, Error> {
        let db: &dyn Sql = self.store.as_ref();
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let bindings = ev::bindings(db, &source.business_type, &ids).await?;
        let bound: Vec<String> = bindings.iter().map(|b| b.process_instance_id.clone()).collect();
        let by_instance: HashMap<String, String> =
            bindings.iter().map(|b| (b.process_instance_id.clone(), b.business_id.clone())).collect();
        let instances = ev::instances(db, &bound, &source.process_type, &ids).await?;
        let instances = group(instances, |i| {
            by_instance.get(&i.process_instance_id).cloned().or_else(|| i.business_key.clone()).unwrap_or_default()
        });
        let commands = if commands.load(std::sync::atomic::Ordering::Relaxed) {
            let found = ev::commands(self.business.as_ref(), &source.business_type, &ids).await?;
            commands.store(found.is_some(), std::sync::atomic::Ordering::Relaxed);
            found.map(|c| group(c, |c| c.business_id.clone()))
        } else {
            None
        };
        let outbox = match &source.outbox_aggregate_type {
            Some(agg) => Some(group(ev::outbox(db, agg, &ids).await?, |e| e.aggregate_id.clone())),
            None => None,
        };
        let open = kairos_store_engine::incidents::open_of(db, &source.business_type, &ids).await?;
        let mut open_by: HashMap<String, Vec<String>> = HashMap::new();
        for (id, rule) in open {
            open_by.entry(id).or_default().push(rule);
        }
        Ok(Page { bindings: group(bindings, |b| b.business_id.clone()), instances, commands, outbox, open: open_by })
    }

    #[allow(clippy::too_many_arguments)]
    async fn reconcile_one(
        &self,
        source: &Source,
        table: &ev::BusinessTable<'_>,
        row: &ev::BusinessRow,
        state: State,
        page: &Page,
        now: Timestamp,
        dry_run: bool,
        report: &mut Report,
    ) -> Result<(), Error> {
        report.records += 1;
        let of = page.of(&row.id);
        let (bindings, instances, commands, outbox) = (of.bindings, of.instances, of.commands, of.outbox);
        let facts = of.facts(state, &source.approved_ends);
        let (classes, since) = rules::evidence(&facts);
        let instance = instances.iter().rev().find(|i| i.running).or(instances.last());
        let mut finding = Finding {
            business_type: source.business_type.clone(),
            business_id: row.id.clone(),
            business_status: row.status.clone(),
            state,
            evidence: classes.clone(),
            rule_id: "unmatched".into(),
            outcome: String::new(),
            detail: String::new(),
            process_instance_id: instance.map(|i| i.process_instance_id.clone()),
            incident_id: None,
        };
        let Some(rule) = rules::classify(&self.rules, state, &classes) else {
            report.unmatched += 1;
            finding.outcome = "unmatched".into();
            finding.detail = "no rule matches this state and evidence".into();
            push(report, finding);
            return Ok(());
        };
        *report.by_rule.entry(rule.id.clone()).or_default() += 1;
        finding.rule_id = rule.id.clone();
        let open = page.open.get(&row.id).is_some_and(|r| !r.is_empty());
        let snapshot = Snapshot {
            business_type: &source.business_type,
            business_id: &row.id,
            business_status: &row.status,
            state,
            evidence: &classes,
            bindings: bindings.iter().collect(),
            instances: instances.iter().collect(),
            commands: commands.map(|c| c.iter().collect()),
            outbox: outbox.map(|o| o.iter().collect()),
        };
        // Serialised only for a record that gets a repair or an incident: most are consistent.
        let evidence_json = || serde_json::to_string(&snapshot).unwrap_or_else(|_| "{}".into());
        let incident = |difference: String| (difference, rule);
        let escalate: Option<(String, &Rule)> = match rule.action {
            Action::None => {
                report.consistent += 1;
                return Ok(());
            }
            Action::Wait => {
                let sla = rule.sla.unwrap_or_default();
                match since.and_then(|s| s.checked_add(sla).ok()) {
                    Some(due) if due <= now => Some(incident(format!(
                        "{} past its SLA of {sla} (since {})",
                        rule.id,
                        since.map(|s| s.to_string()).unwrap_or_default()
                    ))),
                    _ => {
                        report.waiting += 1;
                        if open {
                            report.frozen += 1;
                        }
                        return Ok(());
                    }
                }
            }
            Action::Repair => match rules::guard(rule, &classes, open) {
                Ok(()) if dry_run => {
                    report.repaired += 1;
                    finding.outcome = "would-repair".into();
                    finding.detail = rule.advice.clone();
                    push(report, finding);
                    return Ok(());
                }
                Ok(()) => {
                    let done = self.repair(source, table, row, rule, instances, bindings, &evidence_json()).await?;
                    match done {
                        Some(id) => {
                            report.repaired += 1;
                            finding.outcome = "repaired".into();
                            finding.incident_id = Some(id);
                        }
                        None => {
                            finding.outcome = "skipped".into();
                            finding.detail = "the record changed during the pass: the next pass looks again".into();
                        }
                    }
                    push(report, finding);
                    return Ok(());
                }
                Err(why) if open => {
                    report.frozen += 1;
                    finding.outcome = "frozen".into();
                    finding.detail = why;
                    push(report, finding);
                    return Ok(());
                }
                Err(why) => {
                    report.repairs_refused += 1;
                    Some(incident(why))
                }
            },
            Action::Incident => Some(incident(rule.advice.clone())),
        };
        let Some((difference, rule)) = escalate else { return Ok(()) };
        if open {
            report.frozen += 1;
            finding.outcome = "frozen".into();
            finding.detail = "an incident about this record is open".into();
            push(report, finding);
            return Ok(());
        }
        finding.detail = difference.clone();
        if dry_run {
            report.incidents_opened += 1;
            finding.outcome = "would-open-incident".into();
            push(report, finding);
            return Ok(());
        }
        let opened = incidents::open(
            self.store.as_ref(),
            &incidents::Opening {
                rule_id: &rule.id,
                business_type: &source.business_type,
                business_id: &row.id,
                business_state: Some(state.as_str()),
                process_instance_id: instance.map(|i| i.process_instance_id.as_str()),
                process_definition_id: instance.and_then(|i| i.process_definition_id.as_deref()),
                difference: &difference,
                evidence_json: &evidence_json(),
                plan: &rule.advice,
                by: "reconciler",
            },
        )
        .await?;
        if let Some(id) = opened {
            report.incidents_opened += 1;
            finding.outcome = "incident".into();
            finding.incident_id = Some(id);
        } else {
            report.frozen += 1;
            finding.outcome = "frozen".into();
        }
        push(report, finding);
        Ok(())
    }

    /// One record's evidence and the rule it matches now, as JSON (an incident's before and
    /// after); `None` when no source declares `business_type` or the row is gone.
    pub async fn inspect(&self, business_type: &str, business_id: &str) -> Result<Option<serde_json::Value>, Error> {
        let Some(source) = self.source(business_type) else { return Ok(None) };
        let (statuses, raw) = source.table();
        let table = source.business_table(&statuses);
        let Some(row) = ev::business_row(self.business.as_ref(), &table, business_id).await? else { return Ok(None) };
        let page = self.evidence(source, std::slice::from_ref(&row), &std::sync::atomic::AtomicBool::new(true)).await?;
        let of = page.of(&row.id);
        let (bindings, instances, commands, outbox) = (of.bindings, of.instances, of.commands, of.outbox);
        let state = raw.get(&row.status).copied();
        let (classes, _) = match state {
            Some(state) => rules::evidence(&of.facts(state, &source.approved_ends)),
            None => (Vec::new(), None),
        };
        let rule = state.and_then(|s| rules::classify(&self.rules, s, &classes));
        Ok(Some(serde_json::json!({
            "businessStatus": row.status,
            "state": state,
            "evidence": classes,
            "ruleId": rule.map_or("unmatched", |r| r.id.as_str()),
            "action": rule.map(|r| r.action),
            "bindings": bindings,
            "instances": instances,
            "commands": commands,
            "outbox": outbox,
        })))
    }

    /// Moves a record's status from `from` to `to`'s first value, only while it is still
    /// `from` (an incident's write-back, approved by a person).
    pub async fn write_back(&self, business_type: &str, business_id: &str, from: &str, to: State) -> Result<(), Error> {
        let source = self
            .source(business_type)
            .ok_or_else(|| invalid(format!("businessType: no reconcile source declares {business_type:?}")))?;
        let to_raw = source.written(to).ok_or_else(|| {
            invalid(format!("action.to: the source of {business_type} maps no status to {}", to.as_str()))
        })?;
        let (statuses, _) = source.table();
        let table = source.business_table(&statuses);
        let row = ev::business_row(self.business.as_ref(), &table, business_id).await?.ok_or_else(|| {
            Error::Store(kairos_store::Error::new(
                ErrorKind::NotFound,
                format!("no {business_type} record {business_id:?}"),
            ))
        })?;
        if !ev::business_set_status(self.business.as_ref(), &table, &row.key, from, to_raw).await? {
            return Err(Error::Store(kairos_store::Error::new(
                ErrorKind::Conflict,
                format!(
                    "{business_type} {business_id} is {:?} now, no longer {from:?}: read the incident again",
                    row.status
                ),
            )));
        }
        Ok(())
    }

    /// Makes `rule`'s repair and records it (kind `repair`, CLOSED, before/after, the
    /// verification). `None`: the record changed since it was read, nothing written.
    #[allow(clippy::too_many_arguments)]
    async fn repair(
        &self,
        source: &Source,
        table: &ev::BusinessTable<'_>,
        row: &ev::BusinessRow,
        rule: &Rule,
        instances: &[ev::InstanceEvidence],
        bindings: &[ev::BindingEvidence],
        evidence_json: &str,
    ) -> Result<Option<String>, Error> {
        let db: &dyn Sql = self.store.as_ref();
        let now = db.db_now().await?;
        let (action, before, after, verification, instance) = match rule.repair {
            Some(Repair::WriteBack) => {
                let to = rule.to.ok_or_else(|| invalid("a write-back names its state"))?;
                let Some(to_raw) = source.written(to) else {
                    return Err(invalid(format!(
                        "sources[{}].states.{}: a write-back to it needs a status value",
                        source.business_type,
                        to.as_str()
                    )));
                };
                let instance = match to {
                    State::Approving => instances.iter().find(|i| i.running),
                    _ => instances.iter().filter(|i| i.ended.is_some()).max_by_key(|i| i.ended),
                };
                let Some(instance) = instance else { return Ok(None) };
                let mut wrote_binding = false;
                if !bindings.iter().any(|b| b.process_instance_id == instance.process_instance_id) {
                    let lifecycle = bindings.iter().map(|b| b.lifecycle_no).max().unwrap_or(0) + 1;
                    let insert =
                        kairos_store_engine::business::binding_insert(&kairos_store_engine::business::NewBinding {
                            business_type: &source.business_type,
                            business_id: &row.id,
                            process_type: &source.process_type,
                            process_instance_id: &instance.process_instance_id,
                            process_definition_id: instance.process_definition_id.as_deref().unwrap_or(""),
                            lifecycle_no: lifecycle,
                            created_at: instance.started.unwrap_or(now),
                            ended: instance.ended.map(|e| (e, instance.delete_reason.is_some())),
                        });
                    match db.write_all(&[insert]).await {
                        Ok(_) => wrote_binding = true,
                        // Another binding took that lifecycle meanwhile: look again next pass.
                        Err(e) if e.kind == ErrorKind::Conflict => return Ok(None),
                        Err(e) => return Err(e.into()),
                    }
                }
                if !ev::business_set_status(self.business.as_ref(), table, &row.key, &row.status, to_raw).await? {
                    return Ok(None);
                }
                let status = ev::business_status(self.business.as_ref(), table, &row.key).await?;
                let action = serde_json::json!({
                    "repair": "write-back", "to": to.as_str(), "status": to_raw,
                    "processInstanceId": instance.process_instance_id, "bindingWritten": wrote_binding,
                });
                let verification = format!(
                    "{}.{} is now {:?}",
                    source.table,
                    source.status_column,
                    status.as_deref().unwrap_or("(row gone)")
                );
                (
                    action,
                    serde_json::json!({"status": row.status}),
                    serde_json::json!({"status": status, "bindingWritten": wrote_binding}),
                    verification,
                    Some(instance),
                )
            }
            Some(Repair::OutboxRetry) => {
                let agg = source.outbox_aggregate_type.as_deref().unwrap_or(&source.business_type);
                let moved = ev::outbox_retry_now(db, agg, &row.id).await?;
                if moved == 0 {
                    return Ok(None);
                }
                let after = ev::outbox(db, agg, std::slice::from_ref(&row.id)).await?;
                (
                    serde_json::json!({"repair": "outbox-retry", "aggregateType": agg, "events": moved}),
                    serde_json::json!({"outbox": "RETRY, due later"}),
                    serde_json::json!({"outbox": after}),
                    format!("{moved} event(s) due now"),
                    instances.last(),
                )
            }
            None => return Err(invalid("a repair rule names its repair")),
        };
        let id = kairos_core::new_id();
        let audit = incidents::audit_start(now, "reconciler", &format!("auto-repair by rule {}", rule.id));
        kairos_store_engine::incidents::insert(
            db,
            &kairos_store_engine::incidents::NewIncident {
                id: &id,
                kind: kairos_store_engine::incidents::REPAIR,
                rule_id: &rule.id,
                business_type: &source.business_type,
                business_id: &row.id,
                business_state: Some(rule.state.map_or("*", State::as_str)),
                process_instance_id: instance.map(|i| i.process_instance_id.as_str()),
                process_definition_id: instance.and_then(|i| i.process_definition_id.as_deref()),
                difference: &rule.advice,
                evidence_json,
                plan: Some(&rule.advice),
                status: "CLOSED",
                executed_by: Some("reconciler"),
                action_json: Some(&action.to_string()),
                before_json: Some(&before.to_string()),
                after_json: Some(&after.to_string()),
                verification: Some(&verification),
                audit_json: &audit,
            },
        )
        .await?;
        Ok(Some(id))
    }
}

fn push(report: &mut Report, finding: Finding) {
    if report.findings.len() < FINDINGS_LIMIT {
        report.findings.push(finding);
    } else {
        report.findings_truncated = true;
    }
}
