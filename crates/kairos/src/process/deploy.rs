//! Deployments and definitions (SPEC P1): the XML goes to ACT_GE_BYTEARRAY, each executable
//! process becomes a version of its key in ACT_RE_PROCDEF; a resource identical to the latest
//! version's adds no version.

use super::{Processes, limits};
use crate::Error;
use kairos_bpmn::{Definitions, Implementation, NodeKind, TimerValue};
use kairos_executor::Handlers;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store::{SqlValue, Store, Write};
use serde::Serialize;

/// A deployment as the API returns it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentInfo {
    pub id: String,
    pub name: String,
    pub deployment_time: jiff::Timestamp,
    pub process_definitions: Vec<DefinitionInfo>,
}

/// A process definition as the API returns it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionInfo {
    pub id: String,
    pub key: String,
    pub version: i64,
    pub name: Option<String>,
    pub deployment_id: String,
    pub resource_name: String,
    pub suspended: bool,
}

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}

const DEF_COLUMNS: &str = "ID_, KEY_, VERSION_, NAME_, DEPLOYMENT_ID_, RESOURCE_NAME_, SUSPENSION_STATE_";

fn def_row(r: &[SqlValue]) -> DefinitionInfo {
    DefinitionInfo {
        id: r[0].as_str().unwrap_or_default().into(),
        key: r[1].as_str().unwrap_or_default().into(),
        version: r[2].as_i64().unwrap_or_default(),
        name: r[3].as_str().map(str::to_string),
        deployment_id: r[4].as_str().unwrap_or_default().into(),
        resource_name: r[5].as_str().unwrap_or_default().into(),
        suspended: r[6].as_i64() == Some(2),
    }
}

/// Which definition [`lookup`] finds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lookup<'a> {
    Id(&'a str),
    /// The latest version of a key.
    LatestOf(&'a str),
}

/// The definition, or a 404; with the database's now, read by the same statement: a start
/// needs both, and that is one round trip instead of two.
pub(crate) async fn lookup(store: &dyn Store, which: Lookup<'_>) -> Result<(DefinitionInfo, jiff::Timestamp), Error> {
    let now = store.dialect().now;
    let (filter, key) = match which {
        Lookup::Id(id) => ("ID_ = ?", id),
        Lookup::LatestOf(key) => ("KEY_ = ? AND TENANT_ID_ = '' ORDER BY VERSION_ DESC LIMIT 1", key),
    };
    let rows =
        store.read(&format!("SELECT {DEF_COLUMNS}, {now} FROM ACT_RE_PROCDEF WHERE {filter}"), &[text(key)]).await?;
    let found = rows.first().and_then(|r| Some((def_row(r), r.get(7)?.as_timestamp()?)));
    found.ok_or_else(|| {
        Error::Process(ProcessError::new(
            ErrorKind::NotFound,
            match which {
                Lookup::Id(id) => format!("process definition {id} does not exist"),
                Lookup::LatestOf(key) => format!("no process definition has key '{key}'"),
            },
        ))
    })
}

/// Definition `id`, or a 404.
pub(crate) async fn definition(store: &dyn Store, id: &str) -> Result<DefinitionInfo, Error> {
    Ok(lookup(store, Lookup::Id(id)).await?.0)
}

/// The latest version of `key`, or a 404.
pub(crate) async fn latest(store: &dyn Store, key: &str) -> Result<DefinitionInfo, Error> {
    Ok(lookup(store, Lookup::LatestOf(key)).await?.0)
}

/// Definitions, optionally of one key and/or only the latest versions.
pub(crate) async fn list(
    store: &dyn Store,
    key: Option<&str>,
    latest_only: bool,
) -> Result<Vec<DefinitionInfo>, Error> {
    let rows = store
        .read(
            &format!(
                "SELECT {DEF_COLUMNS} FROM ACT_RE_PROCDEF d WHERE (CAST(? AS VARCHAR(255)) IS NULL OR KEY_ = ?) \
                 AND (? = 0 OR VERSION_ = (SELECT MAX(VERSION_) FROM ACT_RE_PROCDEF x WHERE x.KEY_ = d.KEY_ AND x.TENANT_ID_ = d.TENANT_ID_)) \
                 ORDER BY KEY_, VERSION_"
            ),
            &[
                key.map_or(SqlValue::Null, text),
                key.map_or(SqlValue::Null, text),
                SqlValue::Int(i64::from(latest_only)),
            ],
        )
        .await?;
    Ok(rows.iter().map(|r| def_row(r)).collect())
}

/// The BPMN XML a definition was deployed from.
pub(crate) async fn resource_of(store: &dyn Store, id: &str) -> Result<String, Error> {
    let rows = store
        .read(
            "SELECT b.BYTES_ FROM ACT_RE_PROCDEF d JOIN ACT_GE_BYTEARRAY b ON b.DEPLOYMENT_ID_ = d.DEPLOYMENT_ID_ \
             AND b.NAME_ = d.RESOURCE_NAME_ WHERE d.ID_ = ?",
            &[text(id)],
        )
        .await?;
    match rows.first().map(|r| &r[0]) {
        Some(SqlValue::Bytes(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
        Some(SqlValue::Text(s)) => Ok(s.clone()),
        _ => Err(Error::Process(ProcessError::new(
            ErrorKind::NotFound,
            format!("process definition {id} does not exist"),
        ))),
    }
}

impl Processes {
    /// Checks a BPMN document as [`Processes::deploy`] would (XML, model, handlers, what this
    /// engine can run), writing nothing: for tools that deploy several documents all or none.
    pub fn validate(&self, xml: &str) -> Result<Definitions, Error> {
        validate(&self.handlers, self.min_repeat, xml)
    }

    /// Deploys one BPMN document. Everything is checked first (see [`Processes::validate`]); a
    /// refused deployment writes nothing.
    pub async fn deploy(&self, name: &str, xml: &str) -> Result<DeploymentInfo, Error> {
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
        let (handlers, min_repeat, owned) = (self.handlers.clone(), self.min_repeat, xml.to_string());
        let defs = blocking(move || validate(&handlers, min_repeat, &owned)).await??;
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
            let mut changed = false;
            for p in &defs.processes {
                let latest = latest(self.store.as_ref(), &p.id).await.ok();
                if let Some(l) = &latest
                    && resource_of(self.store.as_ref(), &l.id).await.ok().as_deref() == Some(xml)
                {
                    out.push(l.clone());
                    continue;
                }
                changed = true;
                let version = latest.map_or(1, |l| l.version + 1);
                let id = definition_id(&p.id, version);
                writes.push(Write::new(
                    "INSERT INTO ACT_RE_PROCDEF (ID_, REV_, CATEGORY_, NAME_, KEY_, VERSION_, DEPLOYMENT_ID_, RESOURCE_NAME_, \
                     HAS_GRAPHICAL_NOTATION_, SUSPENSION_STATE_, TENANT_ID_, HISTORY_TTL_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, 1, '', ?)",
                    vec![
                        text(&id),
                        defs.target_namespace.as_deref().map_or(SqlValue::Null, text),
                        p.name.as_deref().map_or(SqlValue::Null, text),
                        text(&p.id),
                        SqlValue::Int(version),
                        text(&deployment_id),
                        text(&resource),
                        SqlValue::Bool(!defs.diagram.shapes.is_empty()),
                        match &p.history_time_to_live {
                            Some(kairos_bpmn::HistoryTimeToLive::Days(d)) => SqlValue::Int(i64::from(*d)),
                            // `P180D`: kept in days as Camunda does, rounded up.
                            Some(kairos_bpmn::HistoryTimeToLive::Duration(d)) => d
                                .to_signed_duration_at(now)
                                .map_or(SqlValue::Null, |span| SqlValue::Int((span.as_secs() + 86_399) / 86_400)),
                            _ => SqlValue::Null,
                        },
                    ],
                ));
                writes.extend(start_event_writes(p, &id, &now));
                out.push(DefinitionInfo {
                    id,
                    key: p.id.clone(),
                    version,
                    name: p.name.clone(),
                    deployment_id: deployment_id.clone(),
                    resource_name: resource.clone(),
                    suspended: false,
                });
            }
            if changed {
                writes.insert(
                    0,
                    Write::new(
                        "INSERT INTO ACT_RE_DEPLOYMENT (ID_, NAME_, TENANT_ID_, DEPLOY_TIME_) VALUES (?, ?, '', ?)",
                        vec![text(&deployment_id), text(name), SqlValue::Timestamp(now)],
                    ),
                );
                writes.insert(
                    1,
                    Write::new(
                        "INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, DEPLOYMENT_ID_, BYTES_, GENERATED_) VALUES (?, 1, ?, ?, ?, ?)",
                        vec![
                            text(&kairos_core::new_id()),
                            text(&resource),
                            text(&deployment_id),
                            SqlValue::Bytes(xml.as_bytes().to_vec()),
                            SqlValue::Bool(false),
                        ],
                    ),
                );
                match self.store.write_all(&writes).await.map_err(limits::checked_write) {
                    Ok(_) => {}
                    // Another deployment of the same key took this version number first.
                    Err(e) if e.kind == kairos_store::ErrorKind::Conflict => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            let deployment =
                if changed { deployment_id } else { out.first().map(|d| d.deployment_id.clone()).unwrap_or_default() };
            return Ok(DeploymentInfo {
                id: deployment,
                name: name.to_string(),
                deployment_time: now,
                process_definitions: out,
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
        let n = self
            .store
            .write_all(&[Write::new(
                "UPDATE ACT_RE_PROCDEF SET SUSPENSION_STATE_ = ?, REV_ = REV_ + 1 WHERE ID_ = ?",
                vec![SqlValue::Int(if suspended { 2 } else { 1 }), text(id)],
            )])
            .await?;
        if n.first() == Some(&0) {
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
fn start_event_writes(p: &kairos_bpmn::Process, def_id: &str, now: &jiff::Timestamp) -> Vec<Write> {
    let mut w = vec![
        Write::new(
            "DELETE FROM ACT_RU_EVENT_SUBSCR WHERE EXECUTION_ID_ IS NULL AND PROC_DEF_ID_ IN \
             (SELECT ID_ FROM ACT_RE_PROCDEF WHERE KEY_ = ? AND TENANT_ID_ = '')",
            vec![text(&p.id)],
        ),
        Write::new(
            "DELETE FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = ? AND PROC_DEF_ID_ IN \
             (SELECT ID_ FROM ACT_RE_PROCDEF WHERE KEY_ = ? AND TENANT_ID_ = '')",
            vec![text(super::TIMER_START), text(&p.id)],
        ),
    ];
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
                w.push(Write::new(
                    "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, PROC_DEF_ID_, ELEMENT_ID_, RETRIES_, INITIAL_RETRIES_, \
                     ATTEMPTS_, DUEDATE_, REPEAT_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_) \
                     VALUES (?, 1, 'timer', ?, ?, ?, 3, 3, 0, ?, ?, ?, ?, ?, '')",
                    vec![
                        text(&kairos_core::new_id()),
                        SqlValue::Bool(false),
                        text(def_id),
                        text(&n.id),
                        SqlValue::Timestamp(due),
                        repeat.map_or(SqlValue::Null, SqlValue::Text),
                        text(super::TIMER_START),
                        SqlValue::Text(serde_json::json!({"processDefinitionId": def_id, "activityId": n.id}).to_string()),
                        SqlValue::Timestamp(*now),
                    ],
                ));
                continue;
            }
            _ => continue,
        };
        w.push(Write::new(
            "INSERT INTO ACT_RU_EVENT_SUBSCR (ID_, REV_, EVENT_TYPE_, EVENT_NAME_, ACTIVITY_ID_, CONFIGURATION_, CREATED_, \
             PROC_DEF_ID_, TENANT_ID_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, '')",
            vec![
                text(&kairos_core::new_id()),
                text(event_type),
                text(&name),
                text(&n.id),
                text(def_id),
                SqlValue::Timestamp(*now),
                text(def_id),
            ],
        ));
    }
    w
}

/// Parses and checks a BPMN document (see [`Processes::validate`]).
fn validate(handlers: &Handlers, min_repeat: jiff::SignedDuration, xml: &str) -> Result<Definitions, Error> {
    // Every `${…}` of the model must parse now, not fail at 3 a.m. when a token reaches it.
    let check = |text: &str| kairos_expr::Expression::parse(text).map(|_| ()).map_err(|e| e.to_string());
    let options = kairos_bpmn::ParseOptions::default().with_expression_check(&check);
    let defs = kairos_bpmn::parse_with(xml, &options).map_err(Error::Deploy)?;
    check_runnable(handlers, min_repeat, &defs)?;
    Ok(defs)
}

/// Refuses what this engine cannot run yet, naming the element and its line, and
/// service tasks naming a handler that is not registered.
fn check_runnable(handlers: &Handlers, min_repeat: jiff::SignedDuration, defs: &Definitions) -> Result<(), Error> {
    let mut problems = Vec::new();
    for p in &defs.processes {
        let process = |m: &str| format!("line {}, process '{}': {m}", p.line, p.id);
        if let Some(m) = key_problem(&p.id) {
            problems.push(process(&m));
        }
        if let Some(m) = too_long(p.name.as_deref(), "name") {
            problems.push(process(&m));
        }
        for n in &p.nodes {
            let what = |m: &str| format!("line {}, {} '{}': {m}", n.line, n.element, n.id);
            if let NodeKind::ServiceTask(s) = &n.kind
                && let Implementation::Handler { name, .. } = &s.implementation
                && !handlers.contains(name)
            {
                problems.push(what(&format!("handler '{name}' is not registered with this engine")));
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
fn definition_id(key: &str, version: i64) -> String {
    let id = kairos_core::new_id();
    let full = format!("{key}:{version}:{id}");
    if full.chars().count() <= MAX_ID_CHARS { full } else { id }
}

/// The width of every ID_ column (VARCHAR(64)).
const MAX_ID_CHARS: usize = 64;

/// Why a process id cannot be a definition key: too long for KEY_, or with a character that
/// would stop it being reached by path (`/runtime/process-definitions/key/{key}`) or quoted in
/// an operator's SQL. BPMN ids are xsd:ID names, which have none of these.
fn key_problem(key: &str) -> Option<String> {
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
