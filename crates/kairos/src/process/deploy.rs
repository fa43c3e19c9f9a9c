//! Deployments and definitions (SPEC P1): the XML goes to ACT_GE_BYTEARRAY, each executable
//! process becomes a version of its key in ACT_RE_PROCDEF; a resource identical to the latest
//! version's adds no version.

use super::{Processes, limits};
use crate::Error;
use kairos_bpmn::{Definitions, Implementation, NodeKind, TimerValue};
use kairos_executor::Handlers;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store::{Sql, Write};
use kairos_store_engine::process::{self as tables, NewDefinition};
use serde::Serialize;
use std::collections::BTreeMap;

/// A deployment as the API returns it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentInfo {
    pub id: String,
    pub name: String,
    pub deployment_time: jiff::Timestamp,
    pub process_definitions: Vec<DefinitionInfo>,
    /// The decisions of a DMN document (none for BPMN).
    pub decision_definitions: Vec<kairos_store_engine::process::DecisionDefinition>,
    /// The processes of the document marked `isExecutable="false"`: deployed as part of the
    /// resource, with no definition (Camunda and Flowable do the same).
    pub skipped_processes: Vec<String>,
    /// The tenant it was deployed for (`''`: none).
    pub tenant_id: String,
}

pub use kairos_store_engine::process::{DefinitionInfo, Lookup};

/// The definition, or a 404; with the database's now, read by the same statement: a start
/// needs both, and that is one round trip instead of two.
pub(crate) async fn lookup(store: &dyn Sql, which: Lookup<'_>) -> Result<(DefinitionInfo, jiff::Timestamp), Error> {
    tables::definition_lookup(store, which).await?.ok_or_else(|| {
        Error::Process(ProcessError::new(
            ErrorKind::NotFound,
            match which {
                Lookup::Id(id) => format!("process definition {id} does not exist"),
                Lookup::LatestOf(key, "") => format!("no process definition has key '{key}'"),
                Lookup::LatestOf(key, tenant) => format!("no process definition of tenant '{tenant}' has key '{key}'"),
            },
        ))
    })
}

/// Definition `id`, or a 404.
pub(crate) async fn definition(store: &dyn Sql, id: &str) -> Result<DefinitionInfo, Error> {
    Ok(lookup(store, Lookup::Id(id)).await?.0)
}

/// The latest version of `key` in `tenant`, or a 404.
pub(crate) async fn latest(store: &dyn Sql, key: &str, tenant: &str) -> Result<DefinitionInfo, Error> {
    Ok(lookup(store, Lookup::LatestOf(key, tenant)).await?.0)
}

/// Definitions, optionally of one key and/or only the latest versions.
pub(crate) async fn list(store: &dyn Sql, key: Option<&str>, latest_only: bool) -> Result<Vec<DefinitionInfo>, Error> {
    Ok(tables::definition_list(store, key, latest_only).await?)
}

/// The BPMN XML a definition was deployed from.
pub(crate) async fn resource_of(store: &dyn Sql, id: &str) -> Result<String, Error> {
    tables::definition_resource(store, id).await?.ok_or_else(|| {
        Error::Process(ProcessError::new(ErrorKind::NotFound, format!("process definition {id} does not exist")))
    })
}

impl Processes {
    /// Checks a BPMN document as [`Processes::deploy`] would (XML, model, handlers, what this
    /// engine can run), writing nothing: for tools that deploy several documents all or none.
    pub fn validate(&self, xml: &str) -> Result<Definitions, Error> {
        validate(&self.handlers, &self.topics, self.min_repeat, self.scripts.is_some(), xml)
    }

    /// Checks a resource as [`Processes::deploy`] would, by its name: a `.dmn` file as DMN,
    /// anything else as BPMN (see [`Processes::validate`]). Writes nothing.
    pub fn check_resource(&self, name: &str, xml: &str) -> Result<(), Error> {
        if is_dmn(name) { self.validate_dmn(name, xml) } else { self.validate(xml).map(drop) }
    }

    /// Deploys one BPMN document (a `.dmn` name: one DMN document). Everything is checked first (see [`Processes::validate`]); a
    /// refused deployment writes nothing.
    pub async fn deploy(&self, name: &str, xml: &str) -> Result<DeploymentInfo, Error> {
        self.deploy_keyed(name, None, xml).await
    }

    /// [`Processes::deploy`], keeping Flowable's `deploymentKey` (ACT_RE_DEPLOYMENT.KEY_).
    pub async fn deploy_keyed(&self, name: &str, key: Option<&str>, xml: &str) -> Result<DeploymentInfo, Error> {
        self.deploy_in("", name, key, xml).await
    }

    /// [`Processes::deploy_keyed`] for `tenant` (`''`: none): the deployment, its definitions
    /// and their start events are the tenant's, and versions count within the tenant (a key
    /// deployed by two tenants has a version 1 in each, as in Flowable).
    pub async fn deploy_in(
        &self,
        tenant: &str,
        name: &str,
        key: Option<&str>,
        xml: &str,
    ) -> Result<DeploymentInfo, Error> {
        if let Some(m) = too_long(Some(tenant), "tenant id")
            .or_else(|| tenant.contains('\0').then(|| "the tenant id contains a NUL character".to_string()))
        {
            return Err(Error::Process(ProcessError {
                kind: ErrorKind::Invalid,
                message: m,
                element_id: Some("tenantId".into()),
            }));
        }
        if let Some(m) = too_long(key, "deployment key") {
            return Err(Error::Process(ProcessError {
                kind: ErrorKind::Invalid,
                message: m,
                element_id: Some("deploymentKey".into()),
            }));
        }
        // ACT_RE_DEPLOYMENT.NAME_ holds 255 characters (and RESOURCE_NAME_, made from it, 4000).
        if let Some(m) = too_long(Some(name), "deployment name")
            .or_else(|| name.contains('\0').then(|| "the deployment name contains a NUL character".to_string()))
        {
            return Err(Error::Process(ProcessError {
                kind: ErrorKind::Invalid,
                message: m,
                element_id: Some("name".into()),
            }));
        }
        if is_dmn(name) {
            return self.deploy_dmn(tenant, name, key, xml).await;
        }
        let (handlers, topics, min_repeat, scripts, owned) =
            (self.handlers.clone(), self.topics.clone(), self.min_repeat, self.scripts.is_some(), xml.to_string());
        let defs = blocking(move || validate(&handlers, &topics, min_repeat, scripts, &owned)).await??;
        let resource = if name.ends_with(".bpmn") || name.ends_with(".xml") {
            name.to_string()
        } else {
            format!("{name}.bpmn20.xml")
        };
        for _ in 0..5 {
            let now = self.store.db_now().await?;
            let deployment_id = kairos_core::new_id();
            let mut writes = Vec::new();
            let mut out = Vec::new();
            // A document of non-executable processes only is a deployment of its resource.
            let mut changed = defs.processes.is_empty();
            for p in &defs.processes {
                let latest = latest(self.store.as_ref(), &p.id, tenant).await.ok();
                if let Some(l) = &latest
                    && resource_of(self.store.as_ref(), &l.id).await.ok().as_deref() == Some(xml)
                {
                    out.push(l.clone());
                    continue;
                }
                changed = true;
                let version = latest.map_or(1, |l| l.version + 1);
                let id = definition_id(&p.id, version);
                writes.push(tables::definition_insert(&NewDefinition {
                    id: &id,
                    key: &p.id,
                    version,
                    name: p.name.clone(),
                    category: defs.target_namespace.clone(),
                    deployment_id: &deployment_id,
                    resource_name: &resource,
                    has_diagram: !defs.diagram.shapes.is_empty(),
                    history_ttl_days: match &p.history_time_to_live {
                        Some(kairos_bpmn::HistoryTimeToLive::Days(d)) => Some(i64::from(*d)),
                        // `P180D`: kept in days as Camunda does, rounded up.
                        Some(kairos_bpmn::HistoryTimeToLive::Duration(d)) => {
                            d.to_signed_duration_at(now).ok().map(|span| (span.as_secs() + 86_399) / 86_400)
                        }
                        _ => None,
                    },
                    tenant,
                }));
                writes.extend(start_event_writes(p, (&id, tenant), &now));
                out.push(DefinitionInfo {
                    id,
                    key: p.id.clone(),
                    version,
                    name: p.name.clone(),
                    deployment_id: deployment_id.clone(),
                    resource_name: resource.clone(),
                    suspended: false,
                    category: defs.target_namespace.clone(),
                    description: None,
                    tenant_id: tenant.to_string(),
                    graphical_notation_defined: !defs.diagram.shapes.is_empty(),
                    start_form_defined: false,
                });
            }
            if changed {
                writes.insert(0, tables::deployment_insert_keyed(&deployment_id, name, key, tenant, now));
                writes.insert(1, tables::resource_insert(&deployment_id, &resource, xml));
                match self.store.write_all(&writes).await.map_err(limits::checked_write) {
                    Ok(_) => {}
                    // Another deployment of the same key took this version number first.
                    Err(e) if e.kind == kairos_store::ErrorKind::Conflict => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            if !changed
                && let Some(existing) = out.first()
                && let Some(d) = tables::deployment_get(self.store.as_ref(), &existing.deployment_id).await?
            {
                // Nothing new: the deployment that holds this document, as it was made.
                return Ok(DeploymentInfo {
                    id: d.id,
                    name: d.name.unwrap_or_default(),
                    deployment_time: d.deploy_time,
                    process_definitions: out,
                    decision_definitions: Vec::new(),
                    skipped_processes: defs.skipped_processes.clone(),
                    tenant_id: d.tenant_id,
                });
            }
            return Ok(DeploymentInfo {
                id: deployment_id,
                name: name.to_string(),
                deployment_time: now,
                process_definitions: out,
                decision_definitions: Vec::new(),
                skipped_processes: defs.skipped_processes.clone(),
                tenant_id: tenant.to_string(),
            });
        }
        Err(Error::Process(ProcessError::new(
            ErrorKind::Conflict,
            "concurrent deployments of the same keys; try again",
        )))
    }

    /// Definitions, optionally of one key and/or latest only.
    pub async fn definitions_list(&self, key: Option<&str>, latest_only: bool) -> Result<Vec<DefinitionInfo>, Error> {
        list(self.store.as_ref(), key, latest_only).await
    }

    pub async fn definition(&self, id: &str) -> Result<DefinitionInfo, Error> {
        definition(self.store.as_ref(), id).await
    }

    /// The XML of a definition (`resourcedata`).
    pub async fn resource(&self, id: &str) -> Result<String, Error> {
        resource_of(self.store.as_ref(), id).await
    }

    /// Suspends or activates a definition: a suspended one refuses new instances.
    pub async fn set_definition_suspended(&self, id: &str, suspended: bool) -> Result<DefinitionInfo, Error> {
        if !tables::definition_set_suspended(self.store.as_ref(), id, suspended).await? {
            return Err(Error::Process(ProcessError::new(
                ErrorKind::NotFound,
                format!("process definition {id} does not exist"),
            )));
        }
        definition(self.store.as_ref(), id).await
    }
}

/// What makes a definition start by itself (SPEC P4): a subscription per message or signal
/// start event (ACT_RU_EVENT_SUBSCR without execution, CONFIGURATION_ = the definition), a
/// timer job per timer start event; those of the key's earlier versions go (only the latest
/// version starts by events, as in Activiti).
pub(super) fn start_event_writes(
    p: &kairos_bpmn::Process,
    (def_id, tenant): (&str, &str),
    now: &jiff::Timestamp,
) -> Vec<Write> {
    let mut w = tables::start_events_clear(&p.id, tenant).to_vec();
    for &s in &p.start_events {
        let n = p.node(s);
        let (event_type, name) = match n.kind.trigger() {
            Some(kairos_bpmn::EventTrigger::Message(m)) => ("message", m.name.clone()),
            Some(kairos_bpmn::EventTrigger::Signal(g)) => ("signal", g.name.clone()),
            Some(kairos_bpmn::EventTrigger::Timer(t)) => {
                let (due, repeat) = match &t.value {
                    TimerValue::Date(at) => (Some(*at), None),
                    TimerValue::Duration(d) => (d.add_to(*now).ok(), None),
                    TimerValue::Cycle(c) => (c.first_due(*now).ok().flatten(), Some(c.to_string())),
                    // REPEAT_ keeps the cron; the job engine moves the timer on after each start
                    // (kairos_core::Repeat, in UTC).
                    TimerValue::Cron(c) => match kairos_core::Repeat::parse(c) {
                        Ok(r) => (r.first_due(*now).ok().flatten(), Some(r.to_string())),
                        Err(_) => (None, None),
                    },
                    _ => (None, None),
                };
                let Some(due) = due else { continue };
                w.push(tables::timer_start_insert((def_id, tenant), &n.id, due, repeat, *now));
                continue;
            }
            _ => continue,
        };
        w.push(tables::start_subscription_insert(event_type, &name, &n.id, (def_id, tenant), *now));
    }
    w
}

/// Parses a BPMN document as this engine runs it: every `${…}` checked by the expression
/// language (what it cannot evaluate, such as a bean method call, is read as a handler's name),
/// and the handler names bound to topics made external tasks. Deploying and loading a
/// deployed definition both parse this way, so a model means the same thing at both times;
/// deploying also checks its scripts (`scripts`: see [`validate`]), loading keeps them as
/// stored.
pub(crate) fn parse(topics: &BTreeMap<String, String>, xml: &str) -> Result<Definitions, kairos_bpmn::ParseErrors> {
    parse_with(topics, xml, None)
}

fn parse_with(
    topics: &BTreeMap<String, String>,
    xml: &str,
    script_check: Option<kairos_bpmn::ScriptCheck<'_>>,
) -> Result<Definitions, kairos_bpmn::ParseErrors> {
    let check = |text: &str| kairos_expr::Expression::parse(text).map(|_| ()).map_err(|e| e.to_string());
    let mut options = kairos_bpmn::ParseOptions::default().with_expression_check(&check);
    options.script_check = script_check;
    let mut defs = kairos_bpmn::parse_with(xml, &options)?;
    if !topics.is_empty() {
        defs.bind_topics(|name| topics.get(name).cloned());
    }
    Ok(defs)
}

/// Why a script is refused on an engine that runs none.
const SCRIPTS_OFF: &str = "scripts are switched off on this engine (kairos serve --scripts on runs them)";

/// Parses and checks a BPMN document (see [`Processes::validate`]).
fn validate(
    handlers: &Handlers,
    topics: &BTreeMap<String, String>,
    min_repeat: jiff::SignedDuration,
    scripts: bool,
    xml: &str,
) -> Result<Definitions, Error> {
    // Every `${…}` and script of the model must parse now, not fail at 3 a.m. when a token
    // reaches it; with scripts switched off, every script is refused by its element and line.
    let off = |_: &kairos_bpmn::Script| Err(SCRIPTS_OFF.to_string());
    let check: kairos_bpmn::ScriptCheck<'_> = if scripts { &super::scripts::check } else { &off };
    let defs = parse_with(topics, xml, Some(check)).map_err(Error::Deploy)?;
    check_runnable(handlers, topics, min_repeat, &defs)?;
    Ok(defs)
}

/// Refuses what this engine cannot run yet, naming the element and its line, and
/// service tasks naming a handler that is not registered.
fn check_runnable(
    handlers: &Handlers,
    topics: &BTreeMap<String, String>,
    min_repeat: jiff::SignedDuration,
    defs: &Definitions,
) -> Result<(), Error> {
    let mut problems = Vec::new();
    for p in &defs.processes {
        let process = |m: &str| format!("line {}, process '{}': {m}", p.line, p.id);
        if let Some(m) = key_problem(&p.id) {
            problems.push(process(&m));
        }
        if let Some(m) = too_long(p.name.as_deref(), "name") {
            problems.push(process(&m));
        }
        let sites = std::iter::once((p.id.as_str(), "process", &p.listeners))
            .chain(p.nodes.iter().map(|n| (n.id.as_str(), n.element, &n.listeners)))
            .chain(p.flows.iter().map(|f| (f.id.as_str(), "sequenceFlow", &f.listeners)));
        for (id, element, listeners) in sites {
            for l in listeners {
                let kairos_bpmn::ListenerAction::Handler { name, source, .. } = &l.action else { continue };
                let at = format!("line {}, {element} '{id}', {} listener", l.line, l.event.as_str());
                if let Some(topic) = topics.get(name) {
                    problems.push(format!(
                        "{at}: handler '{name}' is bound to topic '{topic}', but a listener runs inside its command: bind it to http:URL or handler:NAME"
                    ));
                } else if !handlers.contains(name) {
                    problems.push(format!(
                        "{at}: handler '{name}' ({}) is not registered with this engine: {}",
                        source.attribute(),
                        super::handler_binding::how_to_bind(name)
                    ));
                }
            }
        }
        for n in &p.nodes {
            let what = |m: &str| format!("line {}, {} '{}': {m}", n.line, n.element, n.id);
            if let NodeKind::ServiceTask(s) = &n.kind
                && let Implementation::Handler { name, source } = &s.implementation
                && !handlers.contains(name)
            {
                problems.push(what(&format!(
                    "handler '{name}' ({}) is not registered with this engine: {}",
                    source.attribute(),
                    super::handler_binding::how_to_bind(name)
                )));
            }
            if let Some(kairos_bpmn::EventTrigger::Timer(t)) = n.kind.trigger()
                && let TimerValue::Cycle(c) = &t.value
                && let Err(m) = kairos_core::repeat::check_interval(&kairos_core::Repeat::Cycle(c.clone()), min_repeat)
            {
                problems.push(what(&format!("timeCycle: {m}")));
            }
            if let Some(kairos_bpmn::EventTrigger::Timer(t)) = n.kind.trigger() {
                let instants: Vec<jiff::Timestamp> = match &t.value {
                    TimerValue::Date(at) => vec![*at],
                    TimerValue::Cycle(c) => c.start.iter().chain(c.end.iter()).copied().collect(),
                    _ => vec![],
                };
                for at in instants {
                    if let Err(m) = kairos_time::check_accepted_instant(at) {
                        problems.push(what(&format!("timer: {m}")));
                    }
                }
            }
            // ACT_ID_, ACT_NAME_, EVENT_NAME_ and their kin hold 255 characters.
            let event_name = match n.kind.trigger() {
                Some(kairos_bpmn::EventTrigger::Message(m)) => Some(m.name.as_str()),
                Some(kairos_bpmn::EventTrigger::Signal(s)) => Some(s.name.as_str()),
                _ => None,
            };
            let long =
                [too_long(Some(&n.id), "id"), too_long(n.name.as_deref(), "name"), too_long(event_name, "event name")];
            problems.extend(long.into_iter().flatten().map(|m| what(&m)));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Process(ProcessError {
            kind: ErrorKind::Invalid,
            message: format!("the deployment cannot run here: {}", problems.join("; ")),
            element_id: None,
        }))
    }
}

/// Runs CPU-heavy work (parsing a model of up to 10 MiB, checking its expressions) on tokio's
/// blocking threads: on the async threads it would stall every other request and the
/// executor's heartbeats while it runs.
pub(crate) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    match tokio::task::spawn_blocking(work).await {
        Ok(t) => Ok(t),
        // A panic goes on as it would have inline.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(Error::Config("the engine is shutting down".to_owned())),
    }
}

/// ACT_RE_PROCDEF.ID_: `key:version:uuid`, as Flowable and Camunda make it, unless that is over
/// the column's 64 characters (a key over 25 characters); then, as they do, a generated id
/// alone. The key and version stay in their own columns either way.
pub(crate) fn definition_id(key: &str, version: i64) -> String {
    let id = kairos_core::new_id();
    let full = format!("{key}:{version}:{id}");
    if full.chars().count() <= MAX_ID_CHARS { full } else { id }
}

/// Whether a resource name is a DMN document's.
fn is_dmn(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with(".dmn")
}

/// The width of every ID_ column (VARCHAR(64)).
const MAX_ID_CHARS: usize = 64;

/// Why a process id cannot be a definition key: too long for KEY_, or with a character that
/// would stop it being reached by path (`/runtime/process-definitions/key/{key}`) or quoted in
/// an operator's SQL. BPMN ids are xsd:ID names, which have none of these.
pub(crate) fn key_problem(key: &str) -> Option<String> {
    if let Some(m) = too_long(Some(key), "id") {
        return Some(m);
    }
    let bad = key.chars().find(|c| c.is_control() || c.is_whitespace() || "/\\'\"?#%".contains(*c))?;
    Some(format!("the id contains {bad:?}, which a process key cannot hold (it must be usable in a URL path)"))
}

/// "`what` is N characters long" when over the 255 of ACT_ID_, NAME_, KEY_, EVENT_NAME_.
fn too_long(value: Option<&str>, what: &str) -> Option<String> {
    let n = value?.chars().count();
    (n > limits::MAX_NAME_CHARS)
        .then(|| format!("the {what} is {n} characters long; at most {} fit", limits::MAX_NAME_CHARS))
}
