//! Connecting: the pool, the settings every engine session carries, and the embedded migrations.

use crate::PgStore;
use crate::error::db;
use kairos_store::{Error, ErrorKind, Result};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgPool};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The schema, embedded in the binary so a node can never run against tables it does not know.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Pool size of [`PgStore::connect`]: the executor's producer, its completion writers (8 by
/// default, each holding a session for its batch's transaction), the handlers' reads, lease
/// extension, heartbeats and the HTTP API share it. With 10, completion batches of scheduler
/// firings waited 5–30 ms for a session (measured with `kairos bench scheduler`); the pool
/// opens sessions only as they are needed.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 20;

/// Prepared statements each session keeps ([`PgStore::connect_with`]).
const STATEMENT_CACHE: usize = 256;

/// Limits set on every session of the engine, so that no statement of ours can hang a node or
/// hold locks and snapshots for long (LESSONS.md: never hold a transaction while a handler
/// runs; a stuck transaction blocks vacuum and bloats the queue tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTimeouts {
    /// `statement_timeout`: no statement of the engine legitimately runs this long.
    pub statement: Duration,
    /// `lock_timeout`: the engine's row-lock waits are milliseconds (acquisition skips locked
    /// rows); a longer wait means something else holds the row, and the caller should retry.
    pub lock: Duration,
    /// `idle_in_transaction_session_timeout`: a transaction of ours is never idle on purpose.
    pub idle_in_transaction: Duration,
}

impl Default for SessionTimeouts {
    fn default() -> Self {
        SessionTimeouts {
            statement: Duration::from_secs(30),
            lock: Duration::from_secs(10),
            idle_in_transaction: Duration::from_secs(60),
        }
    }
}

impl SessionTimeouts {
    /// Adds the settings to `options` as startup parameters (no extra round trip; `RESET`
    /// returns to them). A setting already given in the URL (`?options=-c ...`) wins.
    pub fn apply(&self, options: PgConnectOptions) -> PgConnectOptions {
        let given = options.get_options().unwrap_or_default().to_string();
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let settings = [
            ("statement_timeout", ms(self.statement)),
            ("lock_timeout", ms(self.lock)),
            ("idle_in_transaction_session_timeout", ms(self.idle_in_transaction)),
            // Acquisition relies on READ COMMITTED's fresh snapshot per statement (acquire.rs);
            // a database defaulting to SERIALIZABLE would turn SKIP LOCKED into serialization
            // failures.
            ("default_transaction_isolation", "read committed".to_string()),
            // The engine's statements are prepared once per session and run with parameters
            // that do not change their best plan (key lookups, acquisition bounded by LIMIT):
            // PostgreSQL's default replans each execution while it weighs custom plans, and
            // the acquisition statement's custom plans cost more to make (5 ms) than to run.
            ("plan_cache_mode", "force_generic_plan".to_string()),
        ];
        let missing: Vec<_> = settings.into_iter().filter(|(k, _)| !given.contains(k)).collect();
        options.options(missing)
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://USER:PASS@HOST:PORT/DB`, libpq parameters such as
    /// `?options=-c%20search_path%3Dx` allowed) with [`DEFAULT_MAX_CONNECTIONS`] sessions.
    pub async fn connect(url: &str) -> Result<PgStore> {
        let options: PgConnectOptions = url
            .parse()
            .map_err(|e| Error::new(ErrorKind::Invalid, format!("invalid PostgreSQL URL: {e}")).with_source(e))?;
        PgStore::connect_with(options, DEFAULT_MAX_CONNECTIONS).await
    }

    /// Connects with explicit options and pool size; [`SessionTimeouts::default`] is added.
    pub async fn connect_with(options: PgConnectOptions, max_connections: u32) -> Result<PgStore> {
        let mut options = SessionTimeouts::default().apply(options);
        // Prepared statements kept per session (sqlx's default is 100): the engine's steady
        // statements, plus merged ones of a few sizes each (see `kairos_store::coalesce`, the
        // group commit); one pushed out is prepared and planned again on its next use.
        options = options.statement_cache_capacity(STATEMENT_CACHE);
        if options.get_application_name().is_none() {
            // Lets operators tell the engine's sessions apart in pg_stat_activity.
            options = options.application_name("kairos");
        }
        // One direct attempt first, so a wrong URL or a database that is down fails now with
        // its own error instead of after the pool's 30 s of connection retries.
        let probe = options.connect().await.map_err(db)?;
        let _ = probe.close().await;
        let pool = PgPoolOptions::new()
            .max_connections(max_connections.max(1))
            .acquire_timeout(Duration::from_secs(30))
            // No ping before each use: it would double the round trips of the hot path (one
            // statement per acquisition or completion batch). A connection broken by a server
            // restart fails its next statement with `Unavailable`, is discarded, and the
            // caller's retry gets a fresh one.
            .test_before_acquire(false)
            .connect_lazy_with(options);
        Ok(PgStore::from_pool(pool))
    }

    /// Wraps an existing pool. Its sessions should carry [`SessionTimeouts`] (see
    /// [`SessionTimeouts::apply`]); the store does not change them.
    pub fn from_pool(pool: PgPool) -> PgStore {
        PgStore { pool, exclusive_hint: Arc::new(AtomicBool::new(false)), group: Arc::default() }
    }
}

/// Runs the embedded migrations. sqlx holds a session-level `pg_advisory_lock` (keyed on the
/// database name) around the whole run, created before it even looks at `_sqlx_migrations`, so
/// nodes starting together apply each migration once and the others wait, then see it applied.
/// The run uses a dedicated session without our timeouts: waiting for another node's migration
/// is legitimate, and a long DDL must not be cancelled halfway.
pub(crate) async fn migrate(pool: &PgPool) -> Result<()> {
    let options = (*pool.connect_options()).clone().options([("statement_timeout", "0"), ("lock_timeout", "0")]);
    // A one-session pool rather than a bare connection: `Migrator::run` on `&mut PgConnection`
    // does not satisfy the `Send` bound of the trait's future (sqlx's "Acquire is not general
    // enough").
    let single = PgPoolOptions::new().max_connections(1).connect_with(options).await.map_err(db)?;
    let result = MIGRATOR.run(&single).await;
    single.close().await;
    result.map_err(|e| {
        let kind = match &e {
            sqlx::migrate::MigrateError::Execute(sqlx::Error::Io(_)) => ErrorKind::Unavailable,
            _ => ErrorKind::Other,
        };
        Error::new(kind, format!("migration failed: {e}")).with_source(e)
    })
}
