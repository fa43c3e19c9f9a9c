//! An operator's own SQL (the seeds' diagnostic queries, repair statements, test fixtures).
//! The only place this crate runs SQL text it did not write, hence `AssertSqlSafe`: the text is
//! the operator's, and values always travel as bound parameters.

use crate::SqliteStore;
use crate::errors::operator_err;
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

/// Runs a handler's staged write inside the completion's transaction (see `JobEffect`).
pub(crate) async fn execute_effect(conn: &mut sqlx::SqliteConnection, sql: &str, binds: &[SqlValue]) -> Result<u64> {
    let done = bind_all(sql, binds)?.execute(&mut *conn).await.map_err(operator_err("job effect"))?;
    Ok(done.rows_affected())
}

impl SqliteStore {
    /// The engine's own reads: the same binding and decoding, statements cached per connection.
    pub(crate) async fn engine_read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = bind_all(sql, binds)?.fetch_all(&self.pool).await.map_err(operator_err("read"))?;
        rows.iter().map(decode_row).collect()
    }

    /// The engine's own writes in one `BEGIN IMMEDIATE` transaction, each checked against the
    /// rows it must affect.
    pub(crate) async fn engine_write_all(&self, writes: &[kairos_store::Write]) -> Result<Vec<u64>> {
        const OP: &str = "write_all";
        let mut w = self.write(OP).await?;
        let mut affected = Vec::with_capacity(writes.len());
        for (i, write) in writes.iter().enumerate() {
            let n = bind_all(&write.sql, &write.binds)?
                .execute(&mut *w.tx)
                .await
                .map_err(operator_err(OP))?
                .rows_affected();
            if let Some(want) = write.expect.filter(|&want| want != n) {
                return Err(kairos_store::write_conflict(i, write, want, n));
            }
            affected.push(n);
        }
        w.commit(OP).await?;
        Ok(affected)
    }

    pub(crate) async fn operator_query(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = bind_all(sql, binds)?.fetch_all(&self.pool).await.map_err(operator_err("sql_query"))?;
        rows.iter().map(decode_row).collect()
    }

    /// Runs a write in its own `BEGIN IMMEDIATE` transaction, queued behind this process's
    /// other writers.
    pub(crate) async fn operator_execute(&self, sql: &str, binds: &[SqlValue]) -> Result<u64> {
        const OP: &str = "sql_execute";
        let q = bind_all(sql, binds)?;
        let mut w = self.write(OP).await?;
        let n = q.execute(&mut *w.tx).await.map_err(operator_err(OP))?.rows_affected();
        w.commit(OP).await?;
        Ok(n)
    }
}
