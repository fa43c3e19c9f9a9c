//! Deployments and definitions (SPEC P1): ACT_RE_DEPLOYMENT, ACT_GE_BYTEARRAY (the XML),
//! ACT_RE_PROCDEF, and what makes a definition start by itself (start event subscriptions,
//! timer start jobs).

use super::{TIMER_START, b, i, ot, t, ts};
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue, Write};
use serde::Serialize;

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
    /// CATEGORY_: the document's target namespace (as Flowable fills it).
    pub category: Option<String>,
    /// DESCRIPTION_ (kairos does not read `<documentation>` into it yet: null).
    pub description: Option<String>,
    /// TENANT_ID_: the tenant of its deployment (`''`: none).
    pub tenant_id: String,
    /// HAS_GRAPHICAL_NOTATION_: the document carries BPMN DI shapes.
    pub graphical_notation_defined: bool,
    /// HAS_START_FORM_KEY_: kairos has no start forms, so false unless a row says otherwise.
    pub start_form_defined: bool,
}

const DEF_SELECT: &str = "ID_, KEY_, VERSION_, NAME_, DEPLOYMENT_ID_, RESOURCE_NAME_, SUSPENSION_STATE_, CATEGORY_, \
    DESCRIPTION_, TENANT_ID_, HAS_GRAPHICAL_NOTATION_, HAS_START_FORM_KEY_";
const DEF_COLUMNS: &[&str] = &[
    "ID_",
    "KEY_",
    "VERSION_",
    "NAME_",
    "DEPLOYMENT_ID_",
    "RESOURCE_NAME_",
    "SUSPENSION_STATE_",
    "CATEGORY_",
    "DESCRIPTION_",
    "TENANT_ID_",
    "HAS_GRAPHICAL_NOTATION_",
    "HAS_START_FORM_KEY_",
];

/// [`DEF_COLUMNS`] and the database's now.
const LOOKUP_COLUMNS: &[&str] = &[
    "ID_",
    "KEY_",
    "VERSION_",
    "NAME_",
    "DEPLOYMENT_ID_",
    "RESOURCE_NAME_",
    "SUSPENSION_STATE_",
    "CATEGORY_",
    "DESCRIPTION_",
    "TENANT_ID_",
    "HAS_GRAPHICAL_NOTATION_",
    "HAS_START_FORM_KEY_",
    "NOW",
];

fn def_row(r: &Row<'_>) -> Result<DefinitionInfo> {
    Ok(DefinitionInfo {
        id: r.text("ID_")?,
        key: r.text("KEY_")?,
        version: r.int("VERSION_")?,
        name: r.opt_text("NAME_")?,
        deployment_id: r.text("DEPLOYMENT_ID_")?,
        resource_name: r.text("RESOURCE_NAME_")?,
        suspended: r.int("SUSPENSION_STATE_")? == super::SUSPENDED,
        category: r.opt_text("CATEGORY_")?,
        description: r.opt_text("DESCRIPTION_")?,
        tenant_id: r.text("TENANT_ID_")?,
        graphical_notation_defined: r.opt_flag("HAS_GRAPHICAL_NOTATION_")?.unwrap_or(false),
        start_form_defined: r.opt_flag("HAS_START_FORM_KEY_")?.unwrap_or(false),
    })
}

/// Which definition [`definition_lookup`] finds.
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a> {
    Id(&'a str),
    /// The latest version of a key within a tenant (`''`: the definitions of no tenant).
    LatestOf(&'a str, &'a str),
}

/// The definition, if any, with the database's now, read by the same statement: a start needs
/// both, and that is one round trip instead of two.
pub async fn definition_lookup(store: &dyn Sql, which: Lookup<'_>) -> Result<Option<(DefinitionInfo, Timestamp)>> {
    let now = store.dialect().now;
    let (filter, binds) = match which {
        Lookup::Id(id) => ("ID_ = ?", vec![t(id)]),
        Lookup::LatestOf(key, tenant) => {
            ("KEY_ = ? AND TENANT_ID_ = ? ORDER BY VERSION_ DESC LIMIT 1", vec![t(key), t(tenant)])
        }
    };
    let sql = format!("SELECT {DEF_SELECT}, {now} FROM ACT_RE_PROCDEF WHERE {filter}");
    let rows = Rows::read(store, "ACT_RE_PROCDEF", LOOKUP_COLUMNS, &sql, &binds).await?;
    rows.first().map(|r| Ok((def_row(&r)?, r.instant("NOW")?))).transpose()
}

/// Definitions, optionally of one key and/or only the latest versions, by key and version.
pub async fn definition_list(store: &dyn Sql, key: Option<&str>, latest_only: bool) -> Result<Vec<DefinitionInfo>> {
    definition_query(store, &DefinitionFilter { key, latest_only, ..DefinitionFilter::default() }).await
}

/// What [`definition_query`] keeps: each given value must be equal (Flowable's list filters
/// that compare for equality; its `…Like` patterns are matched by the caller).
#[derive(Debug, Clone, Copy, Default)]
pub struct DefinitionFilter<'a> {
    pub key: Option<&'a str>,
    pub name: Option<&'a str>,
    pub category: Option<&'a str>,
    pub deployment_id: Option<&'a str>,
    pub resource_name: Option<&'a str>,
    pub version: Option<i64>,
    pub suspended: Option<bool>,
    /// Only the latest version of each key.
    pub latest_only: bool,
    /// Only the definitions of this tenant (`''`: of no tenant); `None`: of every tenant.
    pub tenant: Option<&'a str>,
}

/// The definitions `f` keeps, by key and version.
pub async fn definition_query(store: &dyn Sql, f: &DefinitionFilter<'_>) -> Result<Vec<DefinitionInfo>> {
    let sql = format!(
        "SELECT {DEF_SELECT} FROM ACT_RE_PROCDEF d WHERE (CAST(? AS VARCHAR(255)) IS NULL OR KEY_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR NAME_ = ?) AND (CAST(? AS VARCHAR(255)) IS NULL OR CATEGORY_ = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR DEPLOYMENT_ID_ = ?) \
         AND (CAST(? AS VARCHAR(4000)) IS NULL OR RESOURCE_NAME_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?) \
         AND (CAST(? AS BIGINT) IS NULL OR VERSION_ = ?) AND (? = 0 OR SUSPENSION_STATE_ = ?) \
         AND (? = 0 OR VERSION_ = (SELECT MAX(VERSION_) FROM ACT_RE_PROCDEF x WHERE x.KEY_ = d.KEY_ AND x.TENANT_ID_ = d.TENANT_ID_)) \
         ORDER BY KEY_, VERSION_"
    );
    let text = |v: Option<&str>| v.map_or(SqlValue::Null, t);
    let mut binds = Vec::new();
    for v in [f.key, f.name, f.category, f.deployment_id, f.resource_name, f.tenant] {
        binds.extend([text(v), text(v)]);
    }
    let version = f.version.map_or(SqlValue::Null, i);
    binds.extend([version.clone(), version]);
    // SUSPENSION_STATE_ wanted, 0 for either.
    let state = match f.suspended {
        None => 0,
        Some(true) => super::SUSPENDED,
        Some(false) => 1,
    };
    binds.extend([i(state), i(state), i(i64::from(f.latest_only))]);
    let rows = Rows::read(store, "ACT_RE_PROCDEF", DEF_COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| def_row(&r)).collect()
}

/// The BPMN XML definition `id` was deployed from, if the definition exists.
pub async fn definition_resource(store: &dyn Sql, id: &str) -> Result<Option<String>> {
    resource_of(store, "ACT_RE_PROCDEF", id).await
}

/// The deployed resource (ACT_GE_BYTEARRAY) of row `id` of `table`, a definition table with
/// DEPLOYMENT_ID_ and RESOURCE_NAME_ (ACT_RE_PROCDEF, ACT_RE_DECISION_DEF).
pub(crate) async fn resource_of(store: &dyn Sql, table: &'static str, id: &str) -> Result<Option<String>> {
    let sql = format!(
        "SELECT d.ID_, b.BYTES_ FROM {table} d JOIN ACT_GE_BYTEARRAY b ON b.DEPLOYMENT_ID_ = d.DEPLOYMENT_ID_ \
         AND b.NAME_ = d.RESOURCE_NAME_ WHERE d.ID_ = ?"
    );
    let rows = Rows::read(store, table, &["ID_", "BYTES_"], &sql, &[t(id)]).await?;
    let Some(r) = rows.first() else { return Ok(None) };
    match r.value("BYTES_")? {
        SqlValue::Bytes(b) => Ok(Some(String::from_utf8_lossy(b).into_owned())),
        SqlValue::Text(s) => Ok(Some(s.clone())),
        _ => Err(r.unreadable("BYTES_", "is not the bytes of a resource")),
    }
}

/// Suspends or activates definition `id`; `false` when there is no such definition.
pub async fn definition_set_suspended(store: &dyn Sql, id: &str, suspended: bool) -> Result<bool> {
    let n = store
        .write_all(&[Write::new(
            "UPDATE ACT_RE_PROCDEF SET SUSPENSION_STATE_ = ?, REV_ = REV_ + 1 WHERE ID_ = ?",
            vec![i(if suspended { 2 } else { 1 }), t(id)],
        )])
        .await?;
    Ok(n.first() != Some(&0))
}

/// A new deployment's row, of no tenant.
pub fn deployment_insert(id: &str, name: &str, at: Timestamp) -> Write {
    Write::new(
        "INSERT INTO ACT_RE_DEPLOYMENT (ID_, NAME_, TENANT_ID_, DEPLOY_TIME_) VALUES (?, ?, '', ?)",
        vec![t(id), t(name), ts(at)],
    )
}

/// A deployment's resource: its BPMN XML.
pub fn resource_insert(deployment_id: &str, resource_name: &str, xml: &str) -> Write {
    Write::new(
        "INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, DEPLOYMENT_ID_, BYTES_, GENERATED_) VALUES (?, 1, ?, ?, ?, ?)",
        vec![
            t(&kairos_core::new_id()),
            t(resource_name),
            t(deployment_id),
            SqlValue::Bytes(xml.as_bytes().to_vec()),
            b(false),
        ],
    )
}

/// A new version of a process definition.
#[derive(Debug, Clone)]
pub struct NewDefinition<'a> {
    pub id: &'a str,
    pub key: &'a str,
    pub version: i64,
    pub name: Option<String>,
    /// CATEGORY_: the document's target namespace.
    pub category: Option<String>,
    pub deployment_id: &'a str,
    pub resource_name: &'a str,
    pub has_diagram: bool,
    /// HISTORY_TTL_, in days.
    pub history_ttl_days: Option<i64>,
    /// TENANT_ID_: its deployment's tenant.
    pub tenant: &'a str,
}

/// The ACT_RE_PROCDEF row of `d` (active). Its key and version are unique: a concurrent
/// deployment of the same key that took the version first makes the transaction fail.
pub fn definition_insert(d: &NewDefinition<'_>) -> Write {
    Write::new(
        "INSERT INTO ACT_RE_PROCDEF (ID_, REV_, CATEGORY_, NAME_, KEY_, VERSION_, DEPLOYMENT_ID_, RESOURCE_NAME_, \
         HAS_GRAPHICAL_NOTATION_, SUSPENSION_STATE_, TENANT_ID_, HISTORY_TTL_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        vec![
            t(d.id),
            ot(&d.category),
            ot(&d.name),
            t(d.key),
            i(d.version),
            t(d.deployment_id),
            t(d.resource_name),
            b(d.has_diagram),
            t(d.tenant),
            d.history_ttl_days.map_or(SqlValue::Null, i),
        ],
    )
}

/// Removes what made the earlier versions of `key` in `tenant` start by themselves (only the
/// latest version starts by events, as in Activiti): their start subscriptions and timer start
/// jobs.
pub fn start_events_clear(key: &str, tenant: &str) -> [Write; 2] {
    [
        Write::new(
            "DELETE FROM ACT_RU_EVENT_SUBSCR WHERE EXECUTION_ID_ IS NULL AND PROC_DEF_ID_ IN \
             (SELECT ID_ FROM ACT_RE_PROCDEF WHERE KEY_ = ? AND TENANT_ID_ = ?)",
            vec![t(key), t(tenant)],
        ),
        Write::new(
            "DELETE FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = ? AND PROC_DEF_ID_ IN \
             (SELECT ID_ FROM ACT_RE_PROCDEF WHERE KEY_ = ? AND TENANT_ID_ = ?)",
            vec![t(TIMER_START), t(key), t(tenant)],
        ),
    ]
}

/// The job of a timer start event `activity_id` of definition `definition_id` (of `tenant`),
/// due at `due` (and again per `repeat`); `now` is its creation time.
pub fn timer_start_insert(
    (definition_id, tenant): (&str, &str),
    activity_id: &str,
    due: Timestamp,
    repeat: Option<String>,
    now: Timestamp,
) -> Write {
    Write::new(
        "INSERT INTO ACT_RU_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, PROC_DEF_ID_, ELEMENT_ID_, RETRIES_, INITIAL_RETRIES_, \
         ATTEMPTS_, DUEDATE_, REPEAT_, HANDLER_TYPE_, HANDLER_CFG_, CREATE_TIME_, TENANT_ID_) \
         VALUES (?, 1, 'timer', ?, ?, ?, 3, 3, 0, ?, ?, ?, ?, ?, ?)",
        vec![
            t(&kairos_core::new_id()),
            b(false),
            t(definition_id),
            t(activity_id),
            ts(due),
            ot(&repeat),
            t(TIMER_START),
            t(&serde_json::json!({"processDefinitionId": definition_id, "activityId": activity_id}).to_string()),
            ts(now),
            t(tenant),
        ],
    )
}

/// The subscription of a message or signal start event (`event_type` `message` or `signal`):
/// no execution, CONFIGURATION_ = the definition, TENANT_ID_ = the definition's tenant.
pub fn start_subscription_insert(
    event_type: &str,
    event_name: &str,
    activity_id: &str,
    (definition_id, tenant): (&str, &str),
    now: Timestamp,
) -> Write {
    Write::new(
        "INSERT INTO ACT_RU_EVENT_SUBSCR (ID_, REV_, EVENT_TYPE_, EVENT_NAME_, ACTIVITY_ID_, CONFIGURATION_, CREATED_, \
         PROC_DEF_ID_, TENANT_ID_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            t(&kairos_core::new_id()),
            t(event_type),
            t(event_name),
            t(activity_id),
            t(definition_id),
            ts(now),
            t(definition_id),
            t(tenant),
        ],
    )
}
