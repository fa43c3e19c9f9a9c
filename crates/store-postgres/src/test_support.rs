//! Isolated PostgreSQL stores for tests (feature `test-support`).
//!
//! Tests read `KAIROS_TEST_PG_URL` (`eval "$(scripts/pg.sh start)"` sets it). Without it they
//! print `skipped: KAIROS_TEST_PG_URL not set` and pass, unless `KAIROS_REQUIRE_PG=1` (CI), which
//! turns the missing database into a failure. Each test gets its own schema,
//! `kairos_t_<uuid>`, reached through the URL's `search_path`, so tests run in parallel on one
//! database without seeing each other's rows and the schema's unquoted ACT_* names land there.
//! Schemas are left behind for post-mortem reading; those older than [`STALE_AFTER_HOURS`] are
//! dropped by the first test of a later run.

use crate::PgStore;
use kairos_store::Store;
use sqlx::{Connection, Executor, PgConnection, Row};
use std::sync::atomic::{AtomicBool, Ordering};

/// The database tests use.
pub const URL_VAR: &str = "KAIROS_TEST_PG_URL";
/// Set to `1` to make a missing database a test failure instead of a skip.
pub const REQUIRE_VAR: &str = "KAIROS_REQUIRE_PG";
/// Test schemas older than this are dropped.
pub const STALE_AFTER_HOURS: i64 = 6;

const SCHEMA_PREFIX: &str = "kairos_t_";

/// The base URL from the environment, or `None` (after printing the skip notice).
///
/// # Panics
/// When the URL is missing and `KAIROS_REQUIRE_PG=1`.
pub fn base_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
                panic!("{REQUIRE_VAR}=1 but {URL_VAR} is not set; run: eval \"$(scripts/pg.sh start)\"");
            }
            eprintln!("skipped: {URL_VAR} not set");
            None
        }
    }
}

/// A URL to a brand-new, empty schema of the test database (not migrated), or `None` when tests
/// run without PostgreSQL. Later cluster tests hand it to real `kairos serve` processes.
///
/// # Panics
/// When the database is configured but cannot be reached.
pub async fn fresh_schema_url() -> Option<String> {
    let base = base_url()?;
    let mut admin = PgConnection::connect(&base).await.unwrap_or_else(|e| panic!("cannot connect to {URL_VAR}: {e}"));
    drop_stale_schemas(&mut admin).await;
    let schema = format!("{SCHEMA_PREFIX}{}", kairos_core::new_id().replace('-', ""));
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .await
        .unwrap_or_else(|e| panic!("cannot create schema {schema}: {e}"));
    let _ = admin.close().await;
    Some(with_search_path(&base, &schema))
}

/// `base` with `search_path` set to `schema` for every session (libpq's `options`, which both
/// sqlx and psql understand).
pub fn with_search_path(base: &str, schema: &str) -> String {
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-c%20search_path%3D{schema}")
}

/// A migrated store on a fresh schema, or `None` when tests run without PostgreSQL.
///
/// # Panics
/// When the database is configured but connecting or migrating fails.
pub async fn test_store() -> Option<PgStore> {
    let url = fresh_schema_url().await?;
    let options = url.parse().expect("test URL parses");
    let store = PgStore::connect_with(options, 8).await.expect("connect to the test schema");
    store.migrate().await.expect("migrate the test schema");
    Some(store)
}

/// Drops test schemas whose UUIDv7 (in the name) is older than [`STALE_AFTER_HOURS`]. Once per
/// process, best effort: a concurrent run dropping the same schema is not an error.
async fn drop_stale_schemas(admin: &mut PgConnection) {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(rows) = sqlx::query("SELECT nspname::text AS name FROM pg_namespace WHERE nspname LIKE 'kairos\\_t\\_%'")
        .fetch_all(&mut *admin)
        .await
    else {
        return;
    };
    let now_ms = jiff::Timestamp::now().as_millisecond();
    for row in rows {
        let Ok(name) = row.try_get::<String, _>("name") else { continue };
        if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
            continue;
        }
        let created_ms = name
            .strip_prefix(SCHEMA_PREFIX)
            .and_then(|hex| hex.get(..12))
            .and_then(|hex| i64::from_str_radix(hex, 16).ok());
        let Some(created_ms) = created_ms else { continue };
        if now_ms - created_ms > STALE_AFTER_HOURS * 3_600_000 {
            let _ = admin.execute(sqlx::AssertSqlSafe(format!("DROP SCHEMA IF EXISTS {name} CASCADE"))).await;
        }
    }
}
