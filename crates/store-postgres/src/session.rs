//! A transaction the caller holds, as a session the engine's statements run on (SPEC C1).

use crate::DIALECT;
use async_trait::async_trait;
use jiff::Timestamp;
use kairos_store::{Dialect, Result, Sql, SqlValue, Write};
use sqlx::PgConnection;
use tokio::sync::Mutex;

/// The caller's connection, inside the caller's transaction: every engine statement of a
/// command given this session runs on it, so the command commits or rolls back with the
/// caller's own rows. Each [`Sql::write_all`] runs in a savepoint (see [`kairos_store::Sql`]).
///
/// The database's now is the transaction's start (`now()` on PostgreSQL), so every row the
/// transaction writes carries one instant.
pub struct InTransaction<'c> {
    conn: Mutex<&'c mut PgConnection>,
}

impl std::fmt::Debug for InTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InTransaction(postgres)")
    }
}

impl<'c> InTransaction<'c> {
    /// `conn` must be inside a transaction (`pool.begin()`): outside one, each write list
    /// commits on its own, which is what the caller wanted to avoid.
    pub fn new(conn: &'c mut PgConnection) -> InTransaction<'c> {
        InTransaction { conn: Mutex::new(conn) }
    }
}

#[async_trait]
impl Sql for InTransaction<'_> {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    async fn db_now(&self) -> Result<Timestamp> {
        let mut conn = self.conn.lock().await;
        crate::jobs::db_now(&mut **conn).await
    }

    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let mut conn = self.conn.lock().await;
        crate::operator_sql::engine_read_on(&mut conn, sql, binds).await
    }

    async fn write_all(&self, writes: &[Write]) -> Result<Vec<u64>> {
        let mut conn = self.conn.lock().await;
        crate::operator_sql::engine_write_all_on(&mut conn, writes).await
    }
}
