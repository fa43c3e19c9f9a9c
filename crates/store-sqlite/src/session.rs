//! A transaction the caller holds, as a session the engine's statements run on (SPEC C1).

use crate::DIALECT;
use crate::operator::{Savepoint, engine_read_on, run_in_savepoint};
use async_trait::async_trait;
use jiff::Timestamp;
use kairos_store::{Dialect, Result, Sql, SqlValue, Write};
use sqlx::SqliteConnection;
use tokio::sync::Mutex;

/// The caller's connection, inside the caller's transaction: every engine statement of a
/// command given this session runs on it, so the command commits or rolls back with the
/// caller's own rows. Each [`Sql::write_all`] runs in a savepoint (see [`kairos_store::Sql`]).
///
/// Open the transaction with `BEGIN IMMEDIATE` (`pool.begin_with("BEGIN IMMEDIATE")`): a
/// deferred transaction that reads first and writes later can be refused the write lock
/// (SQLITE_BUSY) when another connection wrote in between. While the caller holds the write
/// lock, every other writer of the file — this node's executor among them — waits for its
/// commit: keep such transactions short.
pub struct InTransaction<'c> {
    conn: Mutex<&'c mut SqliteConnection>,
}

impl std::fmt::Debug for InTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InTransaction(sqlite)")
    }
}

impl<'c> InTransaction<'c> {
    /// `conn` must be inside a transaction: outside one, each write list commits on its own.
    pub fn new(conn: &'c mut SqliteConnection) -> InTransaction<'c> {
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
        crate::now_on(&mut conn, None, "db_now").await
    }

    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let mut conn = self.conn.lock().await;
        engine_read_on(&mut conn, sql, binds).await
    }

    async fn write_all(&self, writes: &[Write]) -> Result<Vec<u64>> {
        let mut conn = self.conn.lock().await;
        match run_in_savepoint(&mut conn, writes).await {
            Savepoint::Done(result) => result,
            // The statement took the caller's whole transaction with it (a full disk).
            Savepoint::Aborted(e) => Err(e),
        }
    }
}
