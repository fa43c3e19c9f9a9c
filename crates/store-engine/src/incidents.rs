//! `kairos_incident` (SPEC C7, seed 002 §31): the differences reconciliation hands to people,
//! and the repairs it made itself, each with its evidence, plan, the two people (approver and
//! executor), the action, before/after and an audit trail. Every change is one conditional
//! UPDATE on the status it starts from, so two operators cannot both move one incident.

use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Error, ErrorKind, Result, Sql, SqlValue, Write};

/// `kind` of a row a person decides.
pub const INCIDENT: &str = "incident";
/// `kind` of a row recording an auto-repair.
pub const REPAIR: &str = "repair";

const COLUMNS: &[&str] = &[
    "id",
    "kind",
    "rule_id",
    "business_type",
    "business_id",
    "business_state",
    "process_instance_id",
    "process_definition_id",
    "difference",
    "evidence_json",
    "plan",
    "status",
    "approved_by",
    "executed_by",
    "action_json",
    "before_json",
    "after_json",
    "verification",
    "audit_json",
    "created_at",
    "updated_at",
];

const SELECT: &str = "SELECT id, kind, rule_id, business_type, business_id, business_state, process_instance_id, \
     process_definition_id, difference, evidence_json, plan, status, approved_by, executed_by, action_json, \
     before_json, after_json, verification, audit_json, created_at, updated_at FROM kairos_incident";

/// One row of `kairos_incident`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    pub id: String,
    pub kind: String,
    pub rule_id: String,
    pub business_type: String,
    pub business_id: String,
    pub business_state: Option<String>,
    pub process_instance_id: Option<String>,
    pub process_definition_id: Option<String>,
    pub difference: String,
    pub evidence_json: String,
    pub plan: Option<String>,
    pub status: String,
    pub approved_by: Option<String>,
    pub executed_by: Option<String>,
    pub action_json: Option<String>,
    pub before_json: Option<String>,
    pub after_json: Option<String>,
    pub verification: Option<String>,
    pub audit_json: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

fn incident_row(r: &Row<'_>) -> Result<Incident> {
    Ok(Incident {
        id: r.text("id")?,
        kind: r.text("kind")?,
        rule_id: r.text("rule_id")?,
        business_type: r.text("business_type")?,
        business_id: r.text("business_id")?,
        business_state: r.opt_text("business_state")?,
        process_instance_id: r.opt_text("process_instance_id")?,
        process_definition_id: r.opt_text("process_definition_id")?,
        difference: r.text("difference")?,
        evidence_json: r.text("evidence_json")?,
        plan: r.opt_text("plan")?,
        status: r.text("status")?,
        approved_by: r.opt_text("approved_by")?,
        executed_by: r.opt_text("executed_by")?,
        action_json: r.opt_text("action_json")?,
        before_json: r.opt_text("before_json")?,
        after_json: r.opt_text("after_json")?,
        verification: r.opt_text("verification")?,
        audit_json: r.text("audit_json")?,
        created_at: r.instant("created_at")?,
        updated_at: r.instant("updated_at")?,
    })
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

fn opt(s: Option<&str>) -> SqlValue {
    s.map_or(SqlValue::Null, t)
}

fn bounded(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A row to insert.
#[derive(Debug, Clone)]
pub struct NewIncident<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub rule_id: &'a str,
    pub business_type: &'a str,
    pub business_id: &'a str,
    pub business_state: Option<&'a str>,
    pub process_instance_id: Option<&'a str>,
    pub process_definition_id: Option<&'a str>,
    pub difference: &'a str,
    pub evidence_json: &'a str,
    pub plan: Option<&'a str>,
    /// OPEN for an incident; CLOSED for a repair (with before/after and verification).
    pub status: &'a str,
    pub executed_by: Option<&'a str>,
    pub action_json: Option<&'a str>,
    pub before_json: Option<&'a str>,
    pub after_json: Option<&'a str>,
    pub verification: Option<&'a str>,
    pub audit_json: &'a str,
}

/// The key that keeps one open incident per rule and record.
fn open_key(rule: &str, business_type: &str, business_id: &str) -> String {
    bounded(&format!("{rule}|{business_type}|{business_id}"), 255)
}

/// Inserts `n`. An incident (status OPEN) is inserted only when no open one of its rule and
/// record exists: answers whether it was.
pub async fn insert(db: &dyn Sql, n: &NewIncident<'_>) -> Result<bool> {
    let open = (n.status != "CLOSED").then(|| open_key(n.rule_id, n.business_type, n.business_id));
    let now = db.dialect().now;
    let sql = format!(
        "INSERT INTO kairos_incident (id, kind, rule_id, business_type, business_id, business_state, \
         process_instance_id, process_definition_id, difference, evidence_json, plan, status, executed_by, \
         action_json, before_json, after_json, verification, audit_json, open_key, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {now}, {now}) ON CONFLICT DO NOTHING"
    );
    let binds = vec![
        t(n.id),
        t(n.kind),
        t(n.rule_id),
        t(n.business_type),
        t(n.business_id),
        opt(n.business_state),
        opt(n.process_instance_id),
        opt(n.process_definition_id),
        t(&bounded(n.difference, 2000)),
        t(n.evidence_json),
        opt(n.plan.map(|p| bounded(p, 2000)).as_deref()),
        t(n.status),
        opt(n.executed_by),
        opt(n.action_json),
        opt(n.before_json),
        opt(n.after_json),
        opt(n.verification.map(|v| bounded(v, 2000)).as_deref()),
        t(n.audit_json),
        opt(open.as_deref()),
    ];
    let done = db.write_all(&[Write::new(sql, binds)]).await?;
    Ok(done.first().copied() == Some(1))
}

pub async fn get(db: &dyn Sql, id: &str) -> Result<Option<Incident>> {
    let rows = Rows::read(db, "kairos_incident", COLUMNS, &format!("{SELECT} WHERE id = ?"), &[t(id)]).await?;
    rows.first().map(|r| incident_row(&r)).transpose()
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<String>,
    pub kind: Option<String>,
    pub rule_id: Option<String>,
    pub business_type: Option<String>,
    pub business_id: Option<String>,
}

/// Incidents matching `f`, newest first, at most `limit`.
pub async fn list(db: &dyn Sql, f: &Filter, limit: u32) -> Result<Vec<Incident>> {
    let mut clauses = Vec::new();
    let mut binds = Vec::new();
    for (column, value) in [
        ("status", &f.status),
        ("kind", &f.kind),
        ("rule_id", &f.rule_id),
        ("business_type", &f.business_type),
        ("business_id", &f.business_id),
    ] {
        if let Some(v) = value {
            clauses.push(format!("{column} = ?"));
            binds.push(t(v));
        }
    }
    let filter = if clauses.is_empty() { String::new() } else { format!(" WHERE {}", clauses.join(" AND ")) };
    binds.push(SqlValue::Int(i64::from(limit)));
    let sql = format!("{SELECT}{filter} ORDER BY created_at DESC, id DESC LIMIT ?");
    let rows = Rows::read(db, "kairos_incident", COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| incident_row(&r)).collect()
}

/// Open incidents (OPEN or APPROVED) of `ids` of one business type: (business id, rule id).
pub async fn open_of(db: &dyn Sql, business_type: &str, ids: &[String]) -> Result<Vec<(String, String)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT business_id, rule_id FROM kairos_incident WHERE kind = 'incident' AND status <> 'CLOSED' \
         AND business_type = ? AND business_id IN ({})",
        vec!["?"; ids.len()].join(", ")
    );
    let mut binds = vec![t(business_type)];
    binds.extend(ids.iter().map(|i| t(i)));
    let rows = Rows::read(db, "kairos_incident", &["business_id", "rule_id"], &sql, &binds).await?;
    rows.iter().map(|r| Ok((r.text("business_id")?, r.text("rule_id")?))).collect()
}

/// Counts by (kind, status), for `/metrics`.
pub async fn counts(db: &dyn Sql) -> Result<Vec<(String, String, i64)>> {
    let sql = "SELECT kind, status, COUNT(*) AS n FROM kairos_incident GROUP BY kind, status";
    let rows = Rows::read(db, "kairos_incident", &["kind", "status", "n"], sql, &[]).await?;
    rows.iter().map(|r| Ok((r.text("kind")?, r.text("status")?, r.int("n")?))).collect()
}

/// One step of an incident's life: the UPDATE of `set` (with `binds`), only from `from`
/// statuses. Answers false when the incident is not in one of them (someone else moved it).
pub async fn step(db: &dyn Sql, id: &str, from: &[&str], set: &str, mut binds: Vec<SqlValue>) -> Result<bool> {
    if from.is_empty() {
        return Err(Error::new(ErrorKind::Invalid, "from: no status"));
    }
    let sql = format!(
        "UPDATE kairos_incident SET {set}, updated_at = {} WHERE id = ? AND status IN ({})",
        db.dialect().now,
        vec!["?"; from.len()].join(", ")
    );
    binds.push(t(id));
    binds.extend(from.iter().map(|s| t(s)));
    let n = db.write_all(&[Write::new(sql, binds)]).await?;
    Ok(n.first().copied() == Some(1))
}

/// When the oldest incident still waiting for a person (OPEN or APPROVED) was opened.
pub async fn oldest_open(db: &dyn Sql) -> Result<Option<Timestamp>> {
    let sql =
        "SELECT MIN(created_at) AS t FROM kairos_incident WHERE kind = 'incident' AND status IN ('OPEN', 'APPROVED')";
    let rows = Rows::read(db, "kairos_incident", &["t"], sql, &[]).await?;
    match rows.first() {
        Some(r) => r.opt_instant("t"),
        None => Ok(None),
    }
}

/// Incidents waiting for a person (OPEN or APPROVED), by rule: (rule id, count, oldest opened).
pub async fn open_by_rule(db: &dyn Sql) -> Result<Vec<(String, i64, Timestamp)>> {
    let sql = "SELECT rule_id, COUNT(*) AS n, MIN(created_at) AS t FROM kairos_incident \
               WHERE kind = 'incident' AND status IN ('OPEN', 'APPROVED') GROUP BY rule_id ORDER BY rule_id";
    let rows = Rows::read(db, "kairos_incident", &["rule_id", "n", "t"], sql, &[]).await?;
    rows.iter().map(|r| Ok((r.text("rule_id")?, r.int("n")?, r.instant("t")?))).collect()
}

/// Auto-repairs recorded since `since`, by rule: (rule id, count).
pub async fn repairs_since(db: &dyn Sql, since: Timestamp) -> Result<Vec<(String, i64)>> {
    let sql = "SELECT rule_id, COUNT(*) AS n FROM kairos_incident WHERE kind = 'repair' AND created_at >= ? \
               GROUP BY rule_id ORDER BY rule_id";
    let rows = Rows::read(db, "kairos_incident", &["rule_id", "n"], sql, &[SqlValue::Timestamp(since)]).await?;
    rows.iter().map(|r| Ok((r.text("rule_id")?, r.int("n")?))).collect()
}
