//! Deployed DMN decisions (ACT_RE_DECISION_DEF, Camunda 7's table): one row per decision of a
//! DMN resource, versioned by key like process definitions; the DMN XML is the deployment's
//! resource in ACT_GE_BYTEARRAY, read back with [`decision_resource`].

use super::{i, ot, t};
use crate::{Row, Rows};
use kairos_store::{Result, Sql, SqlValue, Write};
use serde::Serialize;

/// A decision definition as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionDefinition {
    pub id: String,
    pub key: String,
    pub version: i64,
    pub name: Option<String>,
    /// CATEGORY_: the DMN document's namespace.
    pub category: Option<String>,
    pub deployment_id: String,
    pub resource_name: String,
    pub tenant_id: String,
    pub history_ttl_days: Option<i64>,
    pub version_tag: Option<String>,
}

const COLUMNS: &[&str] = &[
    "ID_",
    "KEY_",
    "VERSION_",
    "NAME_",
    "CATEGORY_",
    "DEPLOYMENT_ID_",
    "RESOURCE_NAME_",
    "TENANT_ID_",
    "HISTORY_TTL_",
    "VERSION_TAG_",
];

const SELECT: &str = "SELECT ID_, KEY_, VERSION_, NAME_, CATEGORY_, DEPLOYMENT_ID_, RESOURCE_NAME_, TENANT_ID_, \
                      HISTORY_TTL_, VERSION_TAG_ FROM ACT_RE_DECISION_DEF";

fn decision_row(r: &Row<'_>) -> Result<DecisionDefinition> {
    Ok(DecisionDefinition {
        id: r.text("ID_")?,
        key: r.text("KEY_")?,
        version: r.int("VERSION_")?,
        name: r.opt_text("NAME_")?,
        category: r.opt_text("CATEGORY_")?,
        deployment_id: r.text("DEPLOYMENT_ID_")?,
        resource_name: r.text("RESOURCE_NAME_")?,
        tenant_id: r.text("TENANT_ID_")?,
        history_ttl_days: r.opt_int("HISTORY_TTL_")?,
        version_tag: r.opt_text("VERSION_TAG_")?,
    })
}

/// The ACT_RE_DECISION_DEF row of `d`. Key and version are unique: a concurrent deployment
/// that took the version first makes the transaction fail.
pub fn decision_insert(d: &DecisionDefinition) -> Write {
    Write::new(
        "INSERT INTO ACT_RE_DECISION_DEF (ID_, REV_, CATEGORY_, NAME_, KEY_, VERSION_, DEPLOYMENT_ID_, RESOURCE_NAME_, \
         TENANT_ID_, HISTORY_TTL_, VERSION_TAG_) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            t(&d.id),
            ot(&d.category),
            ot(&d.name),
            t(&d.key),
            i(d.version),
            t(&d.deployment_id),
            t(&d.resource_name),
            t(&d.tenant_id),
            d.history_ttl_days.map_or(SqlValue::Null, i),
            ot(&d.version_tag),
        ],
    )
}

/// Which decision [`decision_find`] finds.
#[derive(Debug, Clone, Copy)]
pub enum DecisionLookup<'a> {
    Id(&'a str),
    /// The latest version of a key, in a tenant (`''`: of no tenant).
    Latest(&'a str, &'a str),
    /// One version of a key, in a tenant.
    Version(&'a str, i64, &'a str),
    /// The latest version of a key with this version tag, in a tenant.
    Tag(&'a str, &'a str, &'a str),
    /// The key's version deployed in this deployment.
    InDeployment(&'a str, &'a str),
}

/// The decision `which` names, if it exists.
pub async fn decision_find(store: &dyn Sql, which: DecisionLookup<'_>) -> Result<Option<DecisionDefinition>> {
    let (filter, binds) = match which {
        DecisionLookup::Id(id) => ("ID_ = ?", vec![t(id)]),
        DecisionLookup::Latest(key, tenant) => ("KEY_ = ? AND TENANT_ID_ = ?", vec![t(key), t(tenant)]),
        DecisionLookup::Version(key, v, tenant) => {
            ("KEY_ = ? AND TENANT_ID_ = ? AND VERSION_ = ?", vec![t(key), t(tenant), i(v)])
        }
        DecisionLookup::Tag(key, tag, tenant) => {
            ("KEY_ = ? AND TENANT_ID_ = ? AND VERSION_TAG_ = ?", vec![t(key), t(tenant), t(tag)])
        }
        DecisionLookup::InDeployment(key, dep) => ("KEY_ = ? AND DEPLOYMENT_ID_ = ?", vec![t(key), t(dep)]),
    };
    let sql = format!("{SELECT} WHERE {filter} ORDER BY VERSION_ DESC LIMIT 1");
    let rows = Rows::read(store, "ACT_RE_DECISION_DEF", COLUMNS, &sql, &binds).await?;
    rows.first().map(|r| decision_row(&r)).transpose()
}

/// Decision definitions, optionally of one key and/or of one deployment and/or of one tenant,
/// by key and version; `latest_only` keeps the latest version of each key.
pub async fn decision_list(
    store: &dyn Sql,
    key: Option<&str>,
    deployment_id: Option<&str>,
    latest_only: bool,
    tenant: Option<&str>,
) -> Result<Vec<DecisionDefinition>> {
    let sql = format!(
        "{SELECT} d WHERE (CAST(? AS VARCHAR(255)) IS NULL OR KEY_ = ?) \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR DEPLOYMENT_ID_ = ?) \
         AND (CAST(? AS VARCHAR(255)) IS NULL OR TENANT_ID_ = ?) \
         AND (? = 0 OR VERSION_ = (SELECT MAX(VERSION_) FROM ACT_RE_DECISION_DEF x WHERE x.KEY_ = d.KEY_ \
         AND x.TENANT_ID_ = d.TENANT_ID_)) ORDER BY KEY_, VERSION_"
    );
    let text = |v: Option<&str>| v.map_or(SqlValue::Null, t);
    let binds = vec![
        text(key),
        text(key),
        text(deployment_id),
        text(deployment_id),
        text(tenant),
        text(tenant),
        i(i64::from(latest_only)),
    ];
    let rows = Rows::read(store, "ACT_RE_DECISION_DEF", COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| decision_row(&r)).collect()
}

/// The DMN XML decision `id` was deployed from, if the decision exists.
pub async fn decision_resource(store: &dyn Sql, id: &str) -> Result<Option<String>> {
    super::definitions::resource_of(store, "ACT_RE_DECISION_DEF", id).await
}
