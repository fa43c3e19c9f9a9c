//! The reads of reconciliation (SPEC C7, seed 002 §28): a page of a team's business rows, and
//! for a page of business ids every piece of engine evidence about them in a few statements
//! (bindings, running roots, history, waits, outbox events, commands, open incidents) — so a
//! pass over a million records is a thousand pages, not a million look-ups.
//!
//! The business table is the team's: its name and columns come from a declared source and pass
//! [`check_identifier`] before they are put into a statement.

use crate::business::check_identifier;
use crate::{Row, Rows};
use jiff::Timestamp;
use kairos_store::{Result, Sql, SqlValue};
use std::collections::HashMap;

/// Where one business type's records are: `SELECT id, status FROM table`.
#[derive(Debug, Clone)]
pub struct BusinessTable<'a> {
    pub table: &'a str,
    pub id_column: &'a str,
    pub status_column: &'a str,
    /// Only rows whose status is one of these are read (the declared ones).
    pub statuses: &'a [String],
}

/// One business row.
#[derive(Debug, Clone, PartialEq)]
pub struct BusinessRow {
    /// The id as the bindings store it (text).
    pub id: String,
    /// The id as the table holds it, for the next page's `WHERE id > ?`.
    pub key: SqlValue,
    pub status: String,
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// The text form of a business id column's value (an integer id binds as its digits).
fn id_text(v: &SqlValue) -> Option<String> {
    match v {
        SqlValue::Text(s) => Some(s.clone()),
        SqlValue::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// Up to `limit` rows after `after` (by id), in id order.
pub async fn business_page(
    db: &dyn Sql,
    src: &BusinessTable<'_>,
    after: Option<&SqlValue>,
    limit: u32,
) -> Result<Vec<BusinessRow>> {
    check_identifier("table", src.table)?;
    check_identifier("idColumn", src.id_column)?;
    check_identifier("statusColumn", src.status_column)?;
    if src.statuses.is_empty() {
        return Ok(Vec::new());
    }
    let (table, idc, sc) = (src.table, src.id_column, src.status_column);
    let mut binds: Vec<SqlValue> = src.statuses.iter().map(|s| t(s)).collect();
    let after_sql = match after {
        Some(a) => {
            binds.push(a.clone());
            format!(" AND {idc} > ?")
        }
        None => String::new(),
    };
    binds.push(SqlValue::Int(i64::from(limit)));
    let sql = format!(
        "SELECT {idc}, {sc} FROM {table} WHERE {sc} IN ({}){after_sql} ORDER BY {idc} LIMIT ?",
        marks(src.statuses.len())
    );
    let rows = db.read(&sql, &binds).await?;
    let mut out = Vec::with_capacity(rows.len());
    for mut r in rows {
        let status = r.pop();
        let key = r.pop();
        let (Some(key), Some(SqlValue::Text(status))) = (key, status) else {
            return Err(kairos_store::Error::new(
                kairos_store::ErrorKind::Unreadable,
                format!("{table}: {sc} must be text and {idc} text or an integer"),
            ));
        };
        let Some(id) = id_text(&key) else {
            return Err(kairos_store::Error::new(
                kairos_store::ErrorKind::Unreadable,
                format!("{table}: {idc} {key:?} is neither text nor an integer"),
            ));
        };
        out.push(BusinessRow { id, key, status });
    }
    Ok(out)
}

/// A binding, as reconciliation reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingEvidence {
    pub business_id: String,
    pub process_type: String,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub lifecycle_no: i64,
    pub binding_status: String,
}

/// A process instance's root, from runtime and history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceEvidence {
    pub process_instance_id: String,
    pub business_key: Option<String>,
    pub process_definition_id: Option<String>,
    /// A root execution exists in ACT_RU_EXECUTION.
    pub running: bool,
    pub suspended: bool,
    /// From ACT_HI_PROCINST (absent: no history row).
    pub started: Option<Timestamp>,
    pub ended: Option<Timestamp>,
    pub end_activity: Option<String>,
    pub delete_reason: Option<String>,
    /// What the instance waits on (runtime rows by PROC_INST_ID_).
    pub tasks: i64,
    pub jobs: i64,
    pub dead_letters: i64,
    pub subscriptions: i64,
}

/// An outbox event of a business aggregate, grouped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEvidence {
    pub aggregate_id: String,
    pub event_status: String,
    pub last_error_code: Option<String>,
    /// Its next attempt's time has come (or it has none).
    pub due: bool,
    pub count: i64,
}

/// A workflow command of the business database.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandEvidence {
    pub business_id: String,
    pub request_id: String,
    pub command_type: String,
    pub command_status: String,
    pub result_code: Option<String>,
    pub process_instance_id: Option<String>,
    pub created_at: Timestamp,
}

/// The bindings of `ids` of one business type.
pub async fn bindings(db: &dyn Sql, business_type: &str, ids: &[String]) -> Result<Vec<BindingEvidence>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT business_id, process_type, process_instance_id, process_definition_id, lifecycle_no, binding_status \
         FROM business_process_binding WHERE business_type = ? AND business_id IN ({}) \
         ORDER BY business_id, lifecycle_no",
        marks(ids.len())
    );
    let mut binds = vec![t(business_type)];
    binds.extend(ids.iter().map(|i| t(i)));
    const COLS: &[&str] = &[
        "business_id",
        "process_type",
        "process_instance_id",
        "process_definition_id",
        "lifecycle_no",
        "binding_status",
    ];
    let rows = Rows::read(db, "business_process_binding", COLS, &sql, &binds).await?;
    rows.iter()
        .map(|r| {
            Ok(BindingEvidence {
                business_id: r.text("business_id")?,
                process_type: r.text("process_type")?,
                process_instance_id: r.text("process_instance_id")?,
                process_definition_id: r.text("process_definition_id")?,
                lifecycle_no: r.int("lifecycle_no")?,
                binding_status: r.text("binding_status")?,
            })
        })
        .collect()
}

/// The instances of `instance_ids`, and those of definition key `process_key` whose business
/// key is one of `business_keys` (started without a binding, or whose binding was lost): root
/// executions and history rows, with their waits.
pub async fn instances(
    db: &dyn Sql,
    instance_ids: &[String],
    process_key: &str,
    business_keys: &[String],
) -> Result<Vec<InstanceEvidence>> {
    let mut by_id: HashMap<String, InstanceEvidence> = HashMap::new();
    let blank = |id: &str| InstanceEvidence {
        process_instance_id: id.to_owned(),
        business_key: None,
        process_definition_id: None,
        running: false,
        suspended: false,
        started: None,
        ended: None,
        end_activity: None,
        delete_reason: None,
        tasks: 0,
        jobs: 0,
        dead_letters: 0,
        subscriptions: 0,
    };
    let (ids_m, keys_m) = (marks(instance_ids.len().max(1)), marks(business_keys.len().max(1)));
    let mut binds: Vec<SqlValue> =
        if instance_ids.is_empty() { vec![SqlValue::Null] } else { instance_ids.iter().map(|i| t(i)).collect() };
    binds.push(t(process_key));
    if business_keys.is_empty() {
        binds.push(SqlValue::Null);
    } else {
        binds.extend(business_keys.iter().map(|k| t(k)));
    }
    let defs = "SELECT d.ID_ FROM ACT_RE_PROCDEF d WHERE d.KEY_ = ?";
    let sql = format!(
        "SELECT ID_, BUSINESS_KEY_, PROC_DEF_ID_, SUSPENSION_STATE_ FROM ACT_RU_EXECUTION \
         WHERE PARENT_ID_ IS NULL AND ID_ = PROC_INST_ID_ AND (ID_ IN ({ids_m}) \
         OR (PROC_DEF_ID_ IN ({defs}) AND BUSINESS_KEY_ IN ({keys_m})))"
    );
    const RU: &[&str] = &["ID_", "BUSINESS_KEY_", "PROC_DEF_ID_", "SUSPENSION_STATE_"];
    for r in Rows::read(db, "ACT_RU_EXECUTION", RU, &sql, &binds).await?.iter() {
        let id = r.text("ID_")?;
        let e = by_id.entry(id.clone()).or_insert_with(|| blank(&id));
        e.running = true;
        e.business_key = r.opt_text("BUSINESS_KEY_")?;
        e.process_definition_id = r.opt_text("PROC_DEF_ID_")?;
        e.suspended = r.opt_int("SUSPENSION_STATE_")? == Some(2);
    }
    let sql = format!(
        "SELECT ID_, BUSINESS_KEY_, PROC_DEF_ID_, START_TIME_, END_TIME_, END_ACT_ID_, DELETE_REASON_ \
         FROM ACT_HI_PROCINST WHERE ID_ IN ({ids_m}) \
         OR (PROC_DEF_ID_ IN ({defs}) AND BUSINESS_KEY_ IN ({keys_m}))"
    );
    const HI: &[&str] =
        &["ID_", "BUSINESS_KEY_", "PROC_DEF_ID_", "START_TIME_", "END_TIME_", "END_ACT_ID_", "DELETE_REASON_"];
    for r in Rows::read(db, "ACT_HI_PROCINST", HI, &sql, &binds).await?.iter() {
        let id = r.text("ID_")?;
        let e = by_id.entry(id.clone()).or_insert_with(|| blank(&id));
        if e.business_key.is_none() {
            e.business_key = r.opt_text("BUSINESS_KEY_")?;
        }
        if e.process_definition_id.is_none() {
            e.process_definition_id = r.opt_text("PROC_DEF_ID_")?;
        }
        e.started = Some(r.instant("START_TIME_")?);
        e.ended = r.opt_instant("END_TIME_")?;
        e.end_activity = r.opt_text("END_ACT_ID_")?;
        e.delete_reason = r.opt_text("DELETE_REASON_")?;
    }
    // Bound instances that are in neither table stay: a binding pointing at nothing.
    for id in instance_ids {
        by_id.entry(id.clone()).or_insert_with(|| blank(id));
    }
    let running: Vec<String> = by_id.values().filter(|e| e.running).map(|e| e.process_instance_id.clone()).collect();
    if !running.is_empty() {
        for (table, column) in [
            ("ACT_RU_TASK", "PROC_INST_ID_"),
            ("ACT_RU_JOB", "PROCESS_INSTANCE_ID_"),
            ("ACT_RU_DEADLETTER_JOB", "PROCESS_INSTANCE_ID_"),
            ("ACT_RU_EVENT_SUBSCR", "PROC_INST_ID_"),
        ] {
            let sql = format!(
                "SELECT {column} AS pi, COUNT(*) AS n FROM {table} WHERE {column} IN ({}) GROUP BY {column}",
                marks(running.len())
            );
            let binds: Vec<SqlValue> = running.iter().map(|i| t(i)).collect();
            for r in Rows::read(db, "waits", &["pi", "n"], &sql, &binds).await?.iter() {
                if let Some(e) = by_id.get_mut(&r.text("pi")?) {
                    let n = r.int("n")?;
                    match table {
                        "ACT_RU_TASK" => e.tasks = n,
                        "ACT_RU_JOB" => e.jobs = n,
                        "ACT_RU_DEADLETTER_JOB" => e.dead_letters = n,
                        _ => e.subscriptions = n,
                    }
                }
            }
        }
    }
    let mut out: Vec<InstanceEvidence> = by_id.into_values().collect();
    out.sort_by(|a, b| a.started.cmp(&b.started).then_with(|| a.process_instance_id.cmp(&b.process_instance_id)));
    Ok(out)
}

/// The outbox events of aggregates `ids` of `aggregate_type`, by status, error code and
/// whether they are due (a RETRY that is due is on its way, one that is not waits its backoff).
pub async fn outbox(db: &dyn Sql, aggregate_type: &str, ids: &[String]) -> Result<Vec<OutboxEvidence>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let now = db.db_now().await?;
    let sql = format!(
        "SELECT aggregate_id, event_status, last_error_code, due, COUNT(*) AS n FROM (\
         SELECT aggregate_id, event_status, last_error_code, \
         CASE WHEN next_retry_at IS NULL OR next_retry_at <= ? THEN 1 ELSE 0 END AS due \
         FROM outbox_event WHERE aggregate_type = ? AND aggregate_id IN ({})) e \
         GROUP BY aggregate_id, event_status, last_error_code, due",
        marks(ids.len())
    );
    let mut binds = vec![SqlValue::Timestamp(now), t(aggregate_type)];
    binds.extend(ids.iter().map(|i| t(i)));
    const COLS: &[&str] = &["aggregate_id", "event_status", "last_error_code", "due", "n"];
    let rows = Rows::read(db, "outbox_event", COLS, &sql, &binds).await?;
    rows.iter()
        .map(|r| {
            Ok(OutboxEvidence {
                aggregate_id: r.text("aggregate_id")?,
                event_status: r.text("event_status")?,
                last_error_code: r.opt_text("last_error_code")?,
                due: r.int("due")? == 1,
                count: r.int("n")?,
            })
        })
        .collect()
}

/// RETRY events of aggregate `id` waiting for their backoff whose last error is retryable, made due now (§30's
/// "Outbox still RETRY with a retryable error"). Answers the events moved.
pub async fn outbox_retry_now(db: &dyn Sql, aggregate_type: &str, id: &str) -> Result<u64> {
    let sql = format!(
        "UPDATE outbox_event SET next_retry_at = {} WHERE aggregate_type = ? AND aggregate_id = ? \
         AND event_status = 'RETRY' AND (last_error_code IS NULL OR last_error_code = 'RETRY') AND next_retry_at > ?",
        db.dialect().now
    );
    let now = db.db_now().await?;
    let n = db
        .write_all(&[kairos_store::Write::new(sql, vec![t(aggregate_type), t(id), SqlValue::Timestamp(now)])])
        .await?;
    Ok(n.first().copied().unwrap_or(0))
}

/// The workflow commands of `ids` of one business type, in the business database; `None` when
/// that database has no workflow_command table (the command worker is not used).
pub async fn commands(db: &dyn Sql, business_type: &str, ids: &[String]) -> Result<Option<Vec<CommandEvidence>>> {
    if ids.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let sql = format!(
        "SELECT business_id, request_id, command_type, command_status, result_code, process_instance_id, created_at \
         FROM workflow_command WHERE business_type = ? AND business_id IN ({}) ORDER BY created_at",
        marks(ids.len())
    );
    let mut binds = vec![t(business_type)];
    binds.extend(ids.iter().map(|i| t(i)));
    const COLS: &[&str] = &[
        "business_id",
        "request_id",
        "command_type",
        "command_status",
        "result_code",
        "process_instance_id",
        "created_at",
    ];
    let rows = match Rows::read(db, "workflow_command", COLS, &sql, &binds).await {
        Ok(rows) => rows,
        // No such table: the team does not use the command worker.
        Err(e) if e.message.contains("no such table") || e.message.contains("does not exist") => return Ok(None),
        Err(e) => return Err(e),
    };
    let commands = rows
        .iter()
        .map(|r: Row<'_>| {
            Ok(CommandEvidence {
                business_id: r.text("business_id")?,
                request_id: r.text("request_id")?,
                command_type: r.text("command_type")?,
                command_status: r.text("command_status")?,
                result_code: r.opt_text("result_code")?,
                process_instance_id: r.opt_text("process_instance_id")?,
                created_at: r.instant("created_at")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(commands))
}

/// Moves a business row's status from `from` to `to` (the repair's write-back), only while it
/// is still `from`: answers whether this call moved it.
pub async fn business_set_status(
    db: &dyn Sql,
    src: &BusinessTable<'_>,
    key: &SqlValue,
    from: &str,
    to: &str,
) -> Result<bool> {
    check_identifier("table", src.table)?;
    check_identifier("idColumn", src.id_column)?;
    check_identifier("statusColumn", src.status_column)?;
    let (table, idc, sc) = (src.table, src.id_column, src.status_column);
    let sql = format!("UPDATE {table} SET {sc} = ? WHERE {idc} = ? AND {sc} = ?");
    let n = db.write_all(&[kairos_store::Write::new(sql, vec![t(to), key.clone(), t(from)])]).await?;
    Ok(n.first().copied() == Some(1))
}

/// Reads one business row's status by id (the repair's verification).
pub async fn business_status(db: &dyn Sql, src: &BusinessTable<'_>, key: &SqlValue) -> Result<Option<String>> {
    check_identifier("table", src.table)?;
    check_identifier("idColumn", src.id_column)?;
    check_identifier("statusColumn", src.status_column)?;
    let sql = format!("SELECT {} FROM {} WHERE {} = ?", src.status_column, src.table, src.id_column);
    let rows = db.read(&sql, std::slice::from_ref(key)).await?;
    Ok(rows.into_iter().next().and_then(|r| r.into_iter().next()).and_then(|v| match v {
        SqlValue::Text(s) => Some(s),
        _ => None,
    }))
}

/// One business row by its id's text (an incident names its record by text; the id column may
/// hold integers, hence the cast: a single-row look-up, not the pass's keyset).
pub async fn business_row(db: &dyn Sql, src: &BusinessTable<'_>, id: &str) -> Result<Option<BusinessRow>> {
    check_identifier("table", src.table)?;
    check_identifier("idColumn", src.id_column)?;
    check_identifier("statusColumn", src.status_column)?;
    let (table, idc, sc) = (src.table, src.id_column, src.status_column);
    let sql = format!("SELECT {idc}, {sc} FROM {table} WHERE CAST({idc} AS VARCHAR(255)) = ?");
    let rows = db.read(&sql, &[t(id)]).await?;
    Ok(rows.into_iter().next().and_then(|mut r| {
        let status = r.pop();
        let key = r.pop();
        match (key, status) {
            (Some(key), Some(SqlValue::Text(status))) => Some(BusinessRow { id: id_text(&key)?, key, status }),
            _ => None,
        }
    }))
}
