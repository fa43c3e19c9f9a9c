//! [`Sql`]: the four operations the engine's own tables need, on any database session.
//!
//! The process tables, the scheduler's, the outbox's and the bindings' are read and written with
//! statements that one text serves on both backends (`store-engine`). Those statements need only
//! a read, an atomic list of checked writes, the database's clock and the dialect's few
//! spellings — so they run the same on a [`crate::Store`]'s own pool and on a transaction the
//! caller holds (SPEC C1: business rows and engine rows commit or roll back together), or on a
//! database kairos does not own (the business database the command worker reads, C6).
//!
//! On a caller's transaction [`Sql::write_all`] runs inside a savepoint: a list that fails
//! (a conflict, a refused value) is rolled back alone and the caller's transaction goes on, so
//! the engine can re-run a command that lost its optimistic lock, and the caller decides what a
//! failure means for the rest of its transaction.

use crate::{Dialect, Result, SqlValue, Write};
use async_trait::async_trait;
use jiff::Timestamp;

/// A database session the engine's own statements run on.
#[async_trait]
pub trait Sql: Send + Sync + std::fmt::Debug {
    /// How this backend spells what SQL does not agree on.
    fn dialect(&self) -> &'static Dialect;

    /// The database's current instant: the one clock of the cluster (SPEC J9).
    async fn db_now(&self) -> Result<Timestamp>;

    /// The engine's own read query, `?` placeholders bound in order; prepared once per
    /// connection (unlike [`crate::Store::sql_query`], which describes the operator's statement first).
    /// Booleans come back as `Bool` (PostgreSQL) or `Int` (SQLite), instants as `Timestamp`
    /// (PostgreSQL) or stored text (SQLite): read them with [`SqlValue::as_bool`] and
    /// [`SqlValue::as_timestamp`].
    async fn read(&self, sql: &str, binds: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>>;

    /// The engine's own writes, in order, atomically: in one transaction of their own, or in a
    /// savepoint of the caller's. A statement that affects other than its [`Write::expect`]ed
    /// rows rolls all of them back with an [`crate::ErrorKind::Conflict`] naming it. Returns the
    /// rows each statement affected.
    async fn write_all(&self, writes: &[Write]) -> Result<Vec<u64>>;
}
