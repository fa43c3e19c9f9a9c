//! The statements of the opt-in two-phase commit (SPEC C11, docs/two-phase-commit.md): the
//! coordinator log `KAIROS_TWO_PHASE` in the kairos database, and PostgreSQL's prepared
//! transactions (`PREPARE TRANSACTION`, `COMMIT PREPARED`, `ROLLBACK PREPARED`,
//! `pg_prepared_xacts`) on either database. PostgreSQL only: SQLite has no prepared
//! transactions, so these are typed functions of this backend rather than of the seam.
//!
//! The gid of a prepared transaction is a literal in PostgreSQL's syntax (no parameter can stand
//! for it), so every function that writes one first checks it is made of the characters kairos's
//! gids use ([`check_gid`]); no other text is ever spliced into a statement.

use crate::error::DbResultExt;
use crate::rows::get;
use jiff::Timestamp;
use kairos_store::{Error, ErrorKind, Result};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool};

const LOG_INSERT: &str = include_str!("sql/two_phase_log_insert.sql");
const LOG_MOVE: &str = include_str!("sql/two_phase_log_move.sql");
const LOG_ERROR: &str = include_str!("sql/two_phase_log_error.sql");
const LOG_LIST: &str = include_str!("sql/two_phase_log_list.sql");
const PREPARED: &str = include_str!("sql/two_phase_prepared.sql");
const LOG_DELETE_FINAL: &str = include_str!("sql/two_phase_log_delete_final.sql");

/// A global transaction's state in the log. PREPARING → COMMITTING (the decision) → COMMITTED,
/// or PREPARING → ABORTING → ROLLED_BACK (or straight to ROLLED_BACK when the coordinator itself
/// gives up before deciding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Logged before either side is prepared; no decision yet.
    Preparing,
    /// Both sides prepared and the decision to commit recorded: from here on the outcome is commit.
    Committing,
    Committed,
    /// Recovery decided to roll back a transaction whose coordinator never decided.
    Aborting,
    RolledBack,
}

impl State {
    pub const ALL: [State; 5] =
        [State::Preparing, State::Committing, State::Committed, State::Aborting, State::RolledBack];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Preparing => "PREPARING",
            State::Committing => "COMMITTING",
            State::Committed => "COMMITTED",
            State::Aborting => "ABORTING",
            State::RolledBack => "ROLLED_BACK",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// COMMITTED and ROLLED_BACK: nothing is left to do.
    pub fn is_final(self) -> bool {
        matches!(self, State::Committed | State::RolledBack)
    }

    /// Whether the outcome is commit (COMMITTING or COMMITTED).
    pub fn decided_commit(self) -> bool {
        matches!(self, State::Committing | State::Committed)
    }
}

/// A row of the coordinator log.
#[derive(Debug, Clone)]
pub struct LogRow {
    pub id: String,
    pub gid_business: String,
    pub gid_kairos: String,
    pub state: State,
    pub node: String,
    pub last_error: Option<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
    /// Milliseconds since the last state change, by the database clock.
    pub age_ms: i64,
}

fn log_row(row: &PgRow) -> Result<LogRow> {
    let id: String = get(row, "id_")?;
    let raw: String = get(row, "state_")?;
    let state = State::parse(&raw).ok_or_else(|| {
        Error::new(
            ErrorKind::Unreadable,
            format!("KAIROS_TWO_PHASE row {id} has STATE_ '{raw}', which kairos does not know"),
        )
    })?;
    let ts = |col: &str| -> Result<Timestamp> { Ok(get::<jiff_sqlx::Timestamp>(row, col)?.to_jiff()) };
    Ok(LogRow {
        gid_business: get(row, "gid_business_")?,
        gid_kairos: get(row, "gid_kairos_")?,
        state,
        node: get(row, "node_")?,
        last_error: get(row, "last_error_")?,
        created: ts("create_time_")?,
        updated: ts("update_time_")?,
        age_ms: get(row, "age_ms_")?,
        id,
    })
}

/// Writes the PREPARING row, committed on its own before either side is prepared.
pub async fn log_begin(pool: &PgPool, id: &str, gid_business: &str, gid_kairos: &str, node: &str) -> Result<()> {
    sqlx::query(LOG_INSERT).bind(id).bind(gid_business).bind(gid_kairos).bind(node).execute(pool).await.db()?;
    Ok(())
}

/// Moves the row to `to` if it is in one of `from` (and records `error` when given); answers
/// whether it moved. The condition is what makes a decision single: of a coordinator moving
/// PREPARING → COMMITTING and a recovery moving PREPARING → ABORTING, one wins.
pub async fn log_move(pool: &PgPool, id: &str, from: &[State], to: State, error: Option<&str>) -> Result<bool> {
    let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
    let done = sqlx::query(LOG_MOVE).bind(id).bind(to.as_str()).bind(&from).bind(error).execute(pool).await.db()?;
    Ok(done.rows_affected() == 1)
}

/// Records the last error of a row without changing its state.
pub async fn log_error(pool: &PgPool, id: &str, error: &str) -> Result<()> {
    sqlx::query(LOG_ERROR).bind(id).bind(error).execute(pool).await.db()?;
    Ok(())
}

/// Rows of the log, oldest first: those not final (or all with `all`), restricted to `ids` when
/// it is not empty, at most `limit`.
pub async fn log_list(pool: &PgPool, all: bool, ids: &[String], limit: i64) -> Result<Vec<LogRow>> {
    let rows = sqlx::query(LOG_LIST).bind(all).bind(ids).bind(limit.max(0)).fetch_all(pool).await.db()?;
    rows.iter().map(log_row).collect()
}

/// Deletes at most `limit` COMMITTED and ROLLED_BACK rows unchanged for `older_than_ms`, oldest
/// first; answers how many. A final row has nothing left prepared (or, ROLLED_BACK, only what a
/// late coordinator prepared after it: an orphan once the row is gone, rolled back all the same).
pub async fn log_delete_final(pool: &PgPool, older_than_ms: i64, limit: i64) -> Result<u64> {
    let done = sqlx::query(LOG_DELETE_FINAL).bind(older_than_ms.max(0)).bind(limit.max(0)).execute(pool).await.db()?;
    Ok(done.rows_affected())
}

/// A transaction prepared on a database: its gid and milliseconds since it was prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub gid: String,
    pub age_ms: i64,
}

/// The prepared transactions of the database `pool` is connected to whose gid starts with
/// `prefix` (`pg_prepared_xacts` lists the whole cluster's; only this database's can be finished
/// from here).
pub async fn prepared(pool: &PgPool, prefix: &str) -> Result<Vec<Prepared>> {
    let rows = sqlx::query(PREPARED).bind(prefix).fetch_all(pool).await.db()?;
    rows.iter().map(|r| Ok(Prepared { gid: get(r, "gid")?, age_ms: get(r, "age_ms_")? })).collect()
}

/// `max_prepared_transactions` of the server `conn` is connected to; 0 means PREPARE TRANSACTION
/// is refused.
pub async fn max_prepared_transactions(conn: &mut PgConnection) -> Result<i64> {
    let (n,): (i32,) =
        sqlx::query_as("SELECT current_setting('max_prepared_transactions')::INT").fetch_one(conn).await.db()?;
    Ok(i64::from(n))
}

/// This kairos database's namespace in gids: a hash of the database's name, the schema the log
/// table is in and that table's oid. Two kairos deployments whose transactions reach one
/// business database (another database, or another schema of the same one) so never take each
/// other's prepared transactions for orphans.
pub async fn namespace(pool: &PgPool) -> Result<String> {
    let (ns,): (String,) = sqlx::query_as(
        "SELECT substr(md5(current_database() || '/' || n.nspname || '/' || c.oid::text), 1, 12) \
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
          WHERE c.oid = 'kairos_two_phase'::regclass",
    )
    .fetch_one(pool)
    .await
    .db()?;
    Ok(ns)
}

/// Refuses a gid with characters other than ASCII letters, digits, `-`, `:` and `_`, or longer
/// than PostgreSQL's 199 bytes: it is spliced into the statement as a literal.
pub fn check_gid(gid: &str) -> Result<()> {
    let ok = !gid.is_empty()
        && gid.len() < 200
        && gid.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b':' | b'_'));
    if ok { Ok(()) } else { Err(Error::new(ErrorKind::Invalid, format!("gid {gid:?} is not a kairos two-phase gid"))) }
}

/// `PREPARE TRANSACTION 'gid'` on `conn`, which must be inside a transaction: the transaction
/// leaves the session and waits, durably, for `COMMIT PREPARED` or `ROLLBACK PREPARED` from any
/// session of the same database. If it fails, PostgreSQL has rolled the transaction back.
///
/// A transaction that an earlier statement's error had aborted is not prepared: PostgreSQL
/// answers that PREPARE with a plain ROLLBACK and no error. So the same round trip asks
/// `pg_prepared_xacts` whether the gid is there, and its absence is this function's error —
/// without the check, the other side would commit alone.
///
/// The round trip also opens a new, empty transaction (`BEGIN`), so that the session is in a
/// transaction again as the caller's `sqlx::Transaction` believes: its commit then ends that
/// empty one, instead of a COMMIT with no transaction that PostgreSQL answers (and logs) with a
/// warning. A failed PREPARE skips the rest (a failed query string is not run further).
pub async fn prepare(conn: &mut PgConnection, gid: &str) -> Result<()> {
    check_gid(gid)?;
    let sql = format!(
        "PREPARE TRANSACTION '{gid}'; BEGIN; SELECT COUNT(*) AS prepared_ FROM pg_prepared_xacts \
         WHERE gid = '{gid}' AND database = current_database()"
    );
    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).fetch_all(conn).await.db()?;
    let prepared: i64 = match rows.first() {
        Some(row) => get(row, "prepared_")?,
        None => 0,
    };
    if prepared == 1 {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "PREPARE TRANSACTION '{gid}' rolled the transaction back instead: an earlier statement of it had \
                 failed, which aborts a PostgreSQL transaction"
            ),
        ))
    }
}

/// What finishing a prepared transaction found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// This call committed (or rolled back) it.
    Done,
    /// No prepared transaction has that gid: it was finished before (by another session, or by
    /// an earlier attempt whose answer was lost), or never prepared.
    Absent,
}

/// `COMMIT PREPARED 'gid'` (or `ROLLBACK PREPARED`) on a connection of `pool`, outside any
/// transaction block as PostgreSQL requires.
pub async fn finish(pool: &PgPool, gid: &str, commit: bool) -> Result<Finished> {
    check_gid(gid)?;
    let verb = if commit { "COMMIT" } else { "ROLLBACK" };
    match sqlx::raw_sql(sqlx::AssertSqlSafe(format!("{verb} PREPARED '{gid}'"))).execute(pool).await {
        Ok(_) => Ok(Finished::Done),
        // undefined_object: "prepared transaction with identifier … does not exist".
        Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("42704") => Ok(Finished::Absent),
        Err(e) => Err(crate::error::db(e)),
    }
}
