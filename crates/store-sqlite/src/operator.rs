//! An operator's own SQL (the seeds' diagnostic queries, repair statements, test fixtures).
//! The only place this crate runs SQL text it did not write, hence `AssertSqlSafe`: the text is
//! the operator's, and values always travel as bound parameters.

use crate::SqliteStore;
use crate::errors::{db_err, operator_err};
use crate::time::to_text;
use kairos_store::{Result, SqlValue};
use sqlx::query::Query;
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{AssertSqlSafe, Row, Sqlite, TypeInfo, ValueRef};

/// Binds `?` placeholders in order. Booleans become 0/1 and instants the stored text format,
/// so `LOCK_EXP_TIME_ < ?` compares as time.
fn bind_all(sql: &str, binds: &[SqlValue]) -> Result<Query<'static, Sqlite, SqliteArguments>> {
    let mut q = sqlx::query(AssertSqlSafe(sql.to_string()));
    for v in binds {
        q = match v {
            SqlValue::Null => q.bind(None::<String>),
            SqlValue::Bool(b) => q.bind(i64::from(*b)),
            SqlValue::Int(i) => q.bind(*i),
            SqlValue::Float(f) => q.bind(*f),
            SqlValue::Text(s) => q.bind(s.clone()),
            SqlValue::Timestamp(t) => q.bind(to_text(*t)?),
            SqlValue::Bytes(b) => q.bind(b.clone()),
        };
    }
    Ok(q)
}

/// Each column by the type of the value SQLite actually holds (its columns are loosely typed):
/// INTEGER → Int, REAL → Float, TEXT → Text, BLOB → Bytes, NULL → Null.
fn decode_row(row: &SqliteRow) -> Result<Vec<SqlValue>> {
    const OP: &str = "sql_query";
    (0..row.columns().len())
        .map(|i| {
            let raw = row.try_get_raw(i).map_err(operator_err(OP))?;
            if raw.is_null() {
                return Ok(SqlValue::Null);
            }
            let kind = raw.type_info().name().to_string();
            Ok(match kind.as_str() {
                "INTEGER" => SqlValue::Int(row.try_get_unchecked::<i64, _>(i).map_err(operator_err(OP))?),
                "REAL" => SqlValue::Float(row.try_get_unchecked::<f64, _>(i).map_err(operator_err(OP))?),
                "BLOB" => SqlValue::Bytes(row.try_get_unchecked::<Vec<u8>, _>(i).map_err(operator_err(OP))?),
                _ => SqlValue::Text(row.try_get_unchecked::<String, _>(i).map_err(operator_err(OP))?),
            })
        })
        .collect()
}

/// One caller's writes waiting for the next group commit.
#[derive(Debug)]
pub(crate) struct Pending {
    writes: Vec<kairos_store::Write>,
    reply: tokio::sync::oneshot::Sender<Result<Vec<u64>>>,
}

/// What became of one caller's writes inside the group's transaction.
pub(crate) enum Savepoint {
    /// Applied (`Ok`) or rolled back alone (`Err`, the caller's error); the transaction goes on.
    Done(Result<Vec<u64>>),
    /// A statement failed and SQLite rolled the whole transaction back with it (SQLITE_FULL,
    /// SQLITE_IOERR): the savepoint is gone, and so are the writes of the callers before.
    Aborted(kairos_store::Error),
}

/// Runs one caller's writes inside a savepoint of the group's transaction: on any failure they
/// are rolled back alone and the error is that caller's.
pub(crate) async fn run_in_savepoint(tx: &mut sqlx::SqliteConnection, writes: &[kairos_store::Write]) -> Savepoint {
    const OP: &str = "write_all";
    if let Err(e) = sqlx::query("SAVEPOINT kairos_write").execute(&mut *tx).await {
        return Savepoint::Aborted(db_err(OP)(e));
    }
    let mut affected = Vec::with_capacity(writes.len());
    let mut failure = None;
    for (i, write) in writes.iter().enumerate() {
        match bind_all(&write.sql, &write.binds) {
            Err(e) => {
                failure = Some(e);
                break;
            }
            Ok(q) => match q.execute(&mut *tx).await {
                Err(e) => {
                    failure = Some(operator_err(OP)(e));
                    break;
                }
                Ok(done) => {
                    let n = done.rows_affected();
                    if let Some(want) = write.expect.filter(|&want| want != n) {
                        failure = Some(kairos_store::write_conflict(i, write, want, n));
                        break;
                    }
                    affected.push(n);
                }
            },
        }
    }
    if let Some(e) = failure {
        if sqlx::query("ROLLBACK TO kairos_write").execute(&mut *tx).await.is_err() {
            return Savepoint::Aborted(e);
        }
        if let Err(e) = sqlx::query("RELEASE kairos_write").execute(&mut *tx).await {
            return Savepoint::Aborted(db_err(OP)(e));
        }
        return Savepoint::Done(Err(e));
    }
    match sqlx::query("RELEASE kairos_write").execute(&mut *tx).await {
        Ok(_) => Savepoint::Done(Ok(affected)),
        Err(e) => Savepoint::Aborted(db_err(OP)(e)),
    }
}

/// `cause` for each caller of a group whose transaction failed as a whole: the cause (a full
/// disk, a broken connection) is the database's, not any one caller's.
fn fail_all(batch: Vec<Pending>, cause: &kairos_store::Error) {
    for p in batch {
        let _ = p.reply.send(Err(kairos_store::Error::new(cause.kind, cause.message.clone())));
    }
}

/// Runs a handler's staged write inside the completion's transaction (see `JobEffect`).
pub(crate) async fn execute_effect(conn: &mut sqlx::SqliteConnection, sql: &str, binds: &[SqlValue]) -> Result<u64> {
    let done = bind_all(sql, binds)?.execute(&mut *conn).await.map_err(operator_err("job effect"))?;
    Ok(done.rows_affected())
}

/// The engine's own reads on a connection the caller holds (inside its transaction).
pub(crate) async fn engine_read_on(
    conn: &mut sqlx::SqliteConnection,
    sql: &str,
    binds: &[SqlValue],
) -> Result<Vec<Vec<SqlValue>>> {
    let rows = bind_all(sql, binds)?.fetch_all(&mut *conn).await.map_err(operator_err("read"))?;
    rows.iter().map(decode_row).collect()
}

impl SqliteStore {
    /// The engine's own reads: the same binding and decoding, statements cached per connection.
    pub(crate) async fn engine_read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = bind_all(sql, binds)?.fetch_all(&self.pool).await.map_err(operator_err("read"))?;
        rows.iter().map(decode_row).collect()
    }

    /// The engine's own writes in one `BEGIN IMMEDIATE` transaction, each checked against the
    /// rows it must affect.
    ///
    /// Group commit: SQLite has one writer and every commit waits for an fsync, so callers that
    /// arrive while another commit is under way queue up, and the next one to hold the writer
    /// commits all of them together, each inside its own SAVEPOINT (one caller's conflict rolls
    /// back that caller's writes only). One fsync then acknowledges many commands; each caller
    /// still returns only once its writes are durable.
    pub(crate) async fn engine_write_all(&self, writes: &[kairos_store::Write]) -> Result<Vec<u64>> {
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.group.lock().unwrap_or_else(|e| e.into_inner()).push(Pending { writes: writes.to_vec(), reply });
        loop {
            if let Ok(result) = answer.try_recv() {
                return result;
            }
            let slot = self.writer.lock().await;
            if let Ok(result) = answer.try_recv() {
                return result;
            }
            let batch = std::mem::take(&mut *self.group.lock().unwrap_or_else(|e| e.into_inner()));
            if !batch.is_empty() {
                self.commit_group(batch).await;
            }
            drop(slot);
        }
    }

    /// Commits queued write lists in one transaction (the caller holds the writer slot).
    async fn commit_group(&self, batch: Vec<Pending>) {
        const OP: &str = "write_all";
        let mut tx = match self.pool.begin_with("BEGIN IMMEDIATE").await {
            Ok(tx) => tx,
            Err(e) => return fail_all(batch, &db_err(OP)(e)),
        };
        let mut results = Vec::with_capacity(batch.len());
        for p in &batch {
            match run_in_savepoint(&mut tx, &p.writes).await {
                Savepoint::Done(r) => results.push(r),
                Savepoint::Aborted(cause) => return fail_all(batch, &cause),
            }
        }
        match tx.commit().await {
            Ok(()) => {
                for (p, r) in batch.into_iter().zip(results) {
                    let _ = p.reply.send(r);
                }
            }
            Err(e) => fail_all(batch, &db_err(OP)(e)),
        }
    }

    pub(crate) async fn operator_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        // The seeds' NOW() arithmetic, as PostgreSQL runs it (see `now.rs`).
        let sql = crate::now::translate(sql);
        let rows = bind_all(&sql, binds)?.fetch_all(&self.pool).await.map_err(operator_err("sql_query"))?;
        rows.iter().map(decode_row).collect()
    }

    /// Runs a write in its own `BEGIN IMMEDIATE` transaction, queued behind this process's
    /// other writers.
    pub(crate) async fn operator_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64> {
        const OP: &str = "sql_execute";
        let q = bind_all(&crate::now::translate(sql), binds)?;
        let mut w = self.write(OP).await?;
        let n = q.execute(&mut *w.tx).await.map_err(operator_err(OP))?.rows_affected();
        w.commit(OP).await?;
        Ok(n)
    }
}
