//! The tables of seed 002 that tie a team's business rows to kairos (SPEC C3, C5):
//! `business_process_binding` (§4), `inbox_message` (§15), and the compare-and-set a team runs
//! on its own rows (§9). Column names are the seed's, so its queries run unchanged.

use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Error, ErrorKind, Result, Sql, SqlValue, Write};

const BINDING_COLUMNS: &[&str] = &[
    "id",
    "business_type",
    "business_id",
    "process_type",
    "process_instance_id",
    "process_definition_id",
    "lifecycle_no",
    "binding_status",
    "created_at",
    "ended_at",
];

const BINDING_SQL: &str = "SELECT id, business_type, business_id, process_type, process_instance_id, \
     process_definition_id, lifecycle_no, binding_status, created_at, ended_at FROM business_process_binding";

/// One row of `business_process_binding`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub id: i64,
    pub business_type: String,
    pub business_id: String,
    pub process_type: String,
    pub process_instance_id: String,
    pub process_definition_id: String,
    pub lifecycle_no: i64,
    /// ACTIVE, ENDED (the instance ended) or DELETED (deleted with a reason).
    pub binding_status: String,
    pub created_at: Timestamp,
    pub ended_at: Option<Timestamp>,
}

/// What a new binding names.
#[derive(Debug, Clone)]
pub struct NewBinding<'a> {
    pub business_type: &'a str,
    pub business_id: &'a str,
    pub process_type: &'a str,
    pub process_instance_id: &'a str,
    pub process_definition_id: &'a str,
    pub lifecycle_no: i64,
    pub created_at: Timestamp,
    /// Set when the instance ended in its start: ENDED (or DELETED) at once.
    pub ended: Option<(Timestamp, bool)>,
}

/// The insert of a new binding (ACTIVE, or already ended when the instance ran through): it must insert its row; a second binding of the same
/// lifecycle fails on the unique key (a conflict), which is how concurrent starts learn that
/// another one won.
pub fn binding_insert(b: &NewBinding<'_>) -> Write {
    Write::new(
        "INSERT INTO business_process_binding (business_type, business_id, process_type, process_instance_id, \
         process_definition_id, lifecycle_no, binding_status, created_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            t(b.business_type),
            t(b.business_id),
            t(b.process_type),
            t(b.process_instance_id),
            t(b.process_definition_id),
            SqlValue::Int(b.lifecycle_no),
            t(match b.ended {
                None => "ACTIVE",
                Some((_, false)) => "ENDED",
                Some((_, true)) => "DELETED",
            }),
            SqlValue::Timestamp(b.created_at),
            b.ended.map_or(SqlValue::Null, |(at, _)| SqlValue::Timestamp(at)),
        ],
    )
    .expect(1)
}

/// The binding of instance `pi` (if any) follows its end, in the command that ends it: ENDED,
/// or DELETED when it was deleted with a reason. Affects no row for an unbound instance. One
/// keyed single-row shape, so a completion batch merges those of many jobs (an instance ends
/// once, so no status condition is needed).
pub fn binding_end(pi: &str, deleted: bool, at: Timestamp) -> Write {
    Write::new(
        "UPDATE business_process_binding SET binding_status = ?, ended_at = ? WHERE process_instance_id = ?",
        vec![t(if deleted { "DELETED" } else { "ENDED" }), SqlValue::Timestamp(at), t(pi)],
    )
}

/// The bindings of one business object, by process type and lifecycle (all process types
/// when `process_type` is `None`).
pub async fn bindings_of(
    db: &dyn Sql,
    business_type: &str,
    business_id: &str,
    process_type: Option<&str>,
) -> Result<Vec<Binding>> {
    let sql = format!(
        "{BINDING_SQL} WHERE business_type = ? AND business_id = ? \
         AND (CAST(? AS VARCHAR(64)) IS NULL OR process_type = ?) ORDER BY process_type, lifecycle_no"
    );
    let pt = process_type.map_or(SqlValue::Null, t);
    let binds = [t(business_type), t(business_id), pt.clone(), pt];
    let rows = Rows::read(db, "business_process_binding", BINDING_COLUMNS, &sql, &binds).await?;
    rows.iter().map(|r| binding_row(&r)).collect()
}

/// The binding of instance `pi`, if it has one.
pub async fn binding_of_instance(db: &dyn Sql, pi: &str) -> Result<Option<Binding>> {
    let sql = format!("{BINDING_SQL} WHERE process_instance_id = ?");
    let rows = Rows::read(db, "business_process_binding", BINDING_COLUMNS, &sql, &[t(pi)]).await?;
    rows.first().map(|r| binding_row(&r)).transpose()
}

/// At most this many are counted by [`binding_health`]: a scrape must stay cheap however many
/// instances run (`/metrics` shows the cap as "at least").
pub const HEALTH_COUNT_CAP: i64 = 10_000;

/// How many running instances have no binding, and how many business objects have more than
/// one ACTIVE binding of one process type (seed 002 §39: a write-back that failed, a broken
/// idempotency), each counted up to [`HEALTH_COUNT_CAP`].
pub async fn binding_health(db: &dyn Sql) -> Result<(i64, i64)> {
    let sql = format!(
        "SELECT (SELECT COUNT(*) FROM (SELECT 1 AS one FROM ACT_RU_EXECUTION e WHERE e.ID_ = e.PROC_INST_ID_ \
         AND e.PARENT_ID_ IS NULL AND NOT EXISTS (SELECT 1 FROM business_process_binding b \
         WHERE b.process_instance_id = e.ID_) LIMIT {HEALTH_COUNT_CAP}) u) AS unbound, \
         (SELECT COUNT(*) FROM (SELECT 1 AS one FROM business_process_binding WHERE binding_status = 'ACTIVE' \
         GROUP BY business_type, business_id, process_type HAVING COUNT(*) > 1 LIMIT {HEALTH_COUNT_CAP}) d) AS duplicated"
    );
    let rows = Rows::read(db, "business_process_binding", &["unbound", "duplicated"], &sql, &[]).await?;
    let row = rows.first().ok_or_else(|| Error::new(ErrorKind::Other, "binding health: no row"))?;
    Ok((row.int("unbound")?, row.int("duplicated")?))
}

fn binding_row(r: &crate::Row<'_>) -> Result<Binding> {
    Ok(Binding {
        id: r.int("id")?,
        business_type: r.text("business_type")?,
        business_id: r.text("business_id")?,
        process_type: r.text("process_type")?,
        process_instance_id: r.text("process_instance_id")?,
        process_definition_id: r.text("process_definition_id")?,
        lifecycle_no: r.int("lifecycle_no")?,
        binding_status: r.text("binding_status")?,
        created_at: r.instant("created_at")?,
        ended_at: r.opt_instant("ended_at")?,
    })
}

/// The first-insert-wins write of the inbox (§15): affects one row for the first delivery of
/// `event_id` to `consumer`, none for every later one — the primary key decides, so concurrent
/// deliveries cannot both be first.
pub fn inbox_insert(
    dialect: &kairos_store::Dialect,
    consumer: &str,
    event_id: &str,
    result_code: Option<&str>,
) -> Write {
    Write::new(
        format!(
            "INSERT INTO inbox_message (consumer_name, event_id, processed_at, result_code) VALUES (?, ?, {}, ?) \
             ON CONFLICT (consumer_name, event_id) DO NOTHING",
            dialect.now
        ),
        vec![t(consumer), t(event_id), result_code.map_or(SqlValue::Null, t)],
    )
}

/// The inbox row of (`consumer`, `event_id`), if the event was processed: its result code.
pub async fn inbox_result(db: &dyn Sql, consumer: &str, event_id: &str) -> Result<Option<Option<String>>> {
    let sql = "SELECT result_code FROM inbox_message WHERE consumer_name = ? AND event_id = ?";
    let rows = Rows::read(db, "inbox_message", &["result_code"], sql, &[t(consumer), t(event_id)]).await?;
    rows.first().map(|r| r.opt_text("result_code")).transpose()
}

/// Inbox rows (consumer, event id) in total and how many deliveries found their row taken
/// since start are counted by the caller; this is the table's size, for `/metrics`.
pub async fn inbox_count(db: &dyn Sql) -> Result<i64> {
    let rows = Rows::read(db, "inbox_message", &["n"], "SELECT COUNT(*) AS n FROM inbox_message", &[]).await?;
    rows.first().map_or(Ok(0), |r| r.int("n"))
}

/// A compare-and-set of seed 002 §9 on a team's own table: move `id`'s status from one of
/// `from` to `to` only while its row_version is still `version`.
#[derive(Debug, Clone)]
pub struct CompareAndSet<'a> {
    pub table: &'a str,
    pub id_column: &'a str,
    pub id: SqlValue,
    pub status_column: &'a str,
    pub from: &'a [&'a str],
    pub to: &'a str,
    pub version_column: &'a str,
    pub version: i64,
    /// A column to set to the database's now with the change (`updated_at`), if any.
    pub updated_column: Option<&'a str>,
}

/// What a compare-and-set found (§9: "0 rows" has several meanings, and each needs its answer).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum CasOutcome {
    /// This call moved the row; its row_version is now `version`.
    Done { version: i64 },
    /// The row already has the target status (another request, or an earlier try of this one).
    AlreadyDone { version: i64 },
    /// The row's status does not allow the move.
    NotAllowed { status: String, version: i64 },
    /// The status allows it but the row changed since it was read: read again and decide.
    Stale { status: String, version: i64 },
    /// No row has this id.
    NotFound,
}

/// Refuses a name that is not a plain SQL identifier: the compare-and-set puts table and
/// column names into its statement, so only `[A-Za-z_][A-Za-z0-9_]*` (at most 63) passes.
pub fn check_identifier(field: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::Invalid, format!("{field}: \"{name}\" is not a plain SQL identifier")))
    }
}

/// Runs `cas` on `db` (the caller's transaction, typically) and says what happened.
pub async fn compare_and_set(db: &dyn Sql, cas: &CompareAndSet<'_>) -> Result<CasOutcome> {
    check_identifier("table", cas.table)?;
    check_identifier("idColumn", cas.id_column)?;
    check_identifier("statusColumn", cas.status_column)?;
    check_identifier("versionColumn", cas.version_column)?;
    if let Some(u) = cas.updated_column {
        check_identifier("updatedColumn", u)?;
    }
    if cas.from.is_empty() {
        return Err(Error::new(ErrorKind::Invalid, "from: name at least one status the move may start from"));
    }
    let (table, idc, sc, vc) = (cas.table, cas.id_column, cas.status_column, cas.version_column);
    let updated = cas.updated_column.map(|u| format!(", {u} = {}", db.dialect().now)).unwrap_or_default();
    let marks = vec!["?"; cas.from.len()].join(", ");
    let sql = format!(
        "UPDATE {table} SET {sc} = ?, {vc} = {vc} + 1{updated} WHERE {idc} = ? AND {sc} IN ({marks}) AND {vc} = ?"
    );
    let mut binds = vec![t(cas.to), cas.id.clone()];
    binds.extend(cas.from.iter().map(|s| t(s)));
    binds.push(SqlValue::Int(cas.version));
    let moved = db.write_all(&[Write::new(sql, binds)]).await?;
    let read = format!("SELECT {sc} AS status_, {vc} AS version_ FROM {table} WHERE {idc} = ?");
    let rows =
        Rows::read(db, "compare-and-set", &["status_", "version_"], &read, std::slice::from_ref(&cas.id)).await?;
    let Some(row) = rows.first() else { return Ok(CasOutcome::NotFound) };
    let (status, version) = (row.text("status_")?, row.int("version_")?);
    Ok(match moved.first() {
        Some(1) => CasOutcome::Done { version },
        _ if status == cas.to => CasOutcome::AlreadyDone { version },
        _ if cas.from.contains(&status.as_str()) => CasOutcome::Stale { status, version },
        _ => CasOutcome::NotAllowed { status, version },
    })
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}
