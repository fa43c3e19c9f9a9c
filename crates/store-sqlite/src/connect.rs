//! Opening a SQLite store: the URL, the pragmas that make it durable and concurrent, and the
//! embedded migrations.

use crate::SqliteStore;
use crate::errors::db_err;
use kairos_store::{Error, ErrorKind, Result};
use sqlx::Connection;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::path::PathBuf;
use std::time::Duration;

/// The schema, embedded in the binary so a node needs no files besides its database.
pub(crate) static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// How long a writer waits for another writer (another process: the CLI while `kairos serve`
/// runs) before failing with `Unavailable`. Writes are short, so waiting is almost always right.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections of a pool opened by [`SqliteStore::connect`]. SQLite has one writer at a time (the
/// store queues its own writes in process), so extra connections only serve concurrent readers.
const MAX_CONNECTIONS: u32 = 8;

/// The file path of a `sqlite://PATH` URL.
fn path_of(url: &str) -> Result<PathBuf> {
    let invalid = |msg: String| Error::new(ErrorKind::Invalid, msg);
    let memory = || {
        invalid(format!(
            "{url}: in-memory SQLite databases are not supported: every pooled connection would see \
             its own empty database, and jobs must survive a restart; use sqlite://PATH to a file"
        ))
    };
    if url.starts_with("sqlite::memory:") || url.contains(":memory:") || url.contains("mode=memory") {
        return Err(memory());
    }
    let path = url.strip_prefix("sqlite://").ok_or_else(|| {
        invalid(format!("{url}: a SQLite store URL has the form sqlite://PATH (e.g. sqlite://kairos.db)"))
    })?;
    if path.contains('?') {
        return Err(invalid(format!("{url}: URL options are not supported; kairos sets the SQLite pragmas itself")));
    }
    if path.is_empty() {
        return Err(invalid(format!("{url}: the database file path is missing (sqlite://PATH)")));
    }
    Ok(PathBuf::from(path))
}

/// The options every kairos connection uses.
///
/// - `journal_mode=WAL`: readers never block the writer, nor the writer the readers.
/// - `synchronous=FULL`: the WAL is synced at every commit, so an acknowledged commit survives a
///   power loss (NORMAL may lose the last commits in WAL mode).
/// - `busy_timeout`: a writer waits for another process's write transaction instead of failing
///   at once with SQLITE_BUSY.
fn options(path: PathBuf) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(BUSY_TIMEOUT)
        .statement_cache_capacity(256)
        .pragma("cache_size", "-65536")
}

/// Whether a connection coming back to the pool may serve again. sqlx counts the transactions
/// it opened on a connection; when a statement or COMMIT fails with SQLITE_FULL or SQLITE_IOERR,
/// SQLite may already have rolled the transaction back itself, so sqlx's ROLLBACK on drop fails
/// ("no transaction is active") and the count stays at one. Every later `BEGIN IMMEDIATE` on that
/// connection would then fail ("begin_with at non-zero transaction depth") until a restart, so
/// such a connection is closed instead and the pool opens a fresh one.
///
/// A dropped transaction only queues its rollback, so a connection that still counts one is
/// pinged first: the answer comes after the worker has run that rollback.
async fn reusable(conn: &mut SqliteConnection) -> sqlx::Result<bool> {
    if !conn.is_in_transaction() {
        return Ok(true);
    }
    conn.ping().await?;
    let clean = !conn.is_in_transaction();
    if !clean {
        tracing::warn!("a sqlite connection was left inside a failed transaction; closing it");
    }
    Ok(clean)
}

impl SqliteStore {
    /// The connection options of a `sqlite://PATH` URL, with the pragmas kairos relies on. For
    /// callers that build their own pool for [`SqliteStore::from_pool`].
    pub fn connect_options(url: &str) -> Result<SqliteConnectOptions> {
        Ok(options(path_of(url)?))
    }

    /// The pool settings [`SqliteStore::connect`] uses, including the check that closes a
    /// connection a failed transaction left behind (see the crate docs). A pool given to
    /// [`SqliteStore::from_pool`] should start from these.
    pub fn pool_options() -> SqlitePoolOptions {
        SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .min_connections(1)
            .acquire_timeout(BUSY_TIMEOUT)
            // A connection to a local file does not go stale; pinging it before every use would
            // add a round trip to the connection's thread to every transaction.
            .test_before_acquire(false)
            .after_release(|conn, _| Box::pin(reusable(conn)))
    }

    /// Opens (creating it if missing) the database file of a `sqlite://PATH` URL. Relative paths
    /// are relative to the working directory; `sqlite:///var/lib/kairos.db` is absolute.
    /// `sqlite::memory:` is refused. The schema is not touched: call [`kairos_store::Store::migrate`].
    pub async fn connect(url: &str) -> Result<SqliteStore> {
        let path = path_of(url)?;
        let pool = Self::pool_options().connect_with(options(path.clone())).await.map_err(|e| {
            let mut err = db_err("connect")(e);
            err.message = format!("cannot open {}: {}", path.display(), err.message);
            err
        })?;
        Ok(SqliteStore::from_pool(pool))
    }

    /// Runs the embedded migrations. Two processes migrating at once can race on the migration
    /// table; the loser finds the work done when it tries again, so one retry makes it idempotent.
    pub(crate) async fn run_migrations(&self) -> Result<()> {
        let _writer = self.writer.lock().await;
        // sqlx takes no cross-process lock on SQLite: another process migrating the same new
        // file can apply a migration between our check and our apply, and ours then fails with
        // "already exists". Each such failure means the other process moved on, so trying again
        // (a bounded number of times) converges.
        let mut tries = 0;
        loop {
            match MIGRATOR.run(&self.pool).await {
                Ok(()) => return Ok(()),
                Err(e) if tries < 10 => {
                    tries += 1;
                    tracing::debug!(error = %e, tries, "migration failed; another process may be migrating; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(50 * tries)).await;
                }
                Err(e) => {
                    return Err(
                        Error::new(ErrorKind::Other, format!("migrating the sqlite schema failed: {e}")).with_source(e)
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_file() {
        assert_eq!(path_of("sqlite://kairos.db").unwrap(), PathBuf::from("kairos.db"));
        assert_eq!(path_of("sqlite://data/k.db").unwrap(), PathBuf::from("data/k.db"));
        assert_eq!(path_of("sqlite:///var/lib/k.db").unwrap(), PathBuf::from("/var/lib/k.db"));
    }

    #[test]
    fn memory_and_malformed_urls_are_refused_with_a_reason() {
        let e = path_of("sqlite::memory:").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid);
        assert!(e.message.contains("in-memory"), "{}", e.message);
        assert!(path_of("sqlite://file::memory:?cache=shared").is_err());
        assert!(path_of("postgres://x").unwrap_err().message.contains("sqlite://PATH"));
        assert!(path_of("sqlite://").is_err());
        assert!(path_of("sqlite://k.db?mode=rwc").is_err());
    }
}
