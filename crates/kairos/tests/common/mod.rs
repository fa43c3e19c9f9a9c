//! Fixtures shared by the engine's integration tests: a fresh store per test on each backend,
//! and bounded waits on conditions (never a fixed sleep standing in for "it has happened").

#![allow(dead_code)]

pub mod faulty;

use kairos::store::{JobFilter, JobLogFilter, SqlValue};
use kairos::{Engine, EngineBuilder, JobLogEntry, JobTable, RetryPolicy, SignedDuration, Store};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A store URL for one test, and what keeps it alive.
pub struct Fixture {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// A fresh, empty store; `None` when PostgreSQL is not configured (and not required).
    pub async fn new(backend: Backend) -> Option<Fixture> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("kairos.db").display());
                Some(Fixture { url, _dir: Some(dir) })
            }
            Backend::Postgres => {
                let Ok(base) = std::env::var("KAIROS_TEST_PG_URL") else {
                    if std::env::var("KAIROS_REQUIRE_PG").is_ok_and(|v| v == "1") {
                        panic!("KAIROS_REQUIRE_PG=1 but KAIROS_TEST_PG_URL is not set");
                    }
                    eprintln!("skipped: KAIROS_TEST_PG_URL not set");
                    return None;
                };
                let schema = format!("kairos_t_{}", uuid_simple());
                let pool = sqlx::PgPool::connect(&base).await.expect("connect to KAIROS_TEST_PG_URL");
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}"))).execute(&pool).await.unwrap();
                pool.close().await;
                let sep = if base.contains('?') { '&' } else { '?' };
                Some(Fixture { url: format!("{base}{sep}options[search_path]={schema}"), _dir: None })
            }
        }
    }

    /// An engine builder on this store with settings fit for tests: short retry waits, fast
    /// heartbeats, a short poll interval.
    pub fn engine(&self, node: &str) -> EngineBuilder {
        Engine::builder(self.url.clone()).node_id(node).workers(8).configure(|c| {
            c.retry_policy = RetryPolicy {
                async_failed_wait: SignedDuration::from_millis(50),
                default_failed_wait: SignedDuration::from_millis(50),
            };
            c.poll_interval = Duration::from_millis(100);
            c.heartbeat_interval = Duration::from_millis(200);
            c.dead_after = SignedDuration::from_secs(2);
        })
    }
}

fn uuid_simple() -> String {
    kairos::new_id().replace('-', "")
}

/// Waits until `cond` holds, checking every 20 ms, for at most `limit`.
pub async fn wait_until<F, Fut>(limit: Duration, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if cond().await {
            return;
        }
        assert!(start.elapsed() < limit, "timed out after {limit:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn log_of(store: &Arc<dyn Store>, job_id: &str) -> Vec<JobLogEntry> {
    store
        .job_log_list(&JobLogFilter { job_id: Some(job_id.into()), size: 1000, ..Default::default() })
        .await
        .unwrap()
        .data
}

pub async fn count_rows(store: &Arc<dyn Store>, table: &str) -> i64 {
    let rows = store.sql_query(&format!("SELECT COUNT(*) FROM {table}"), &[]).await.unwrap();
    rows[0][0].as_i64().unwrap()
}

pub async fn runtime_jobs(store: &Arc<dyn Store>) -> u64 {
    store.job_list(&JobFilter { table: JobTable::Runtime, ..Default::default() }).await.unwrap().total
}

pub fn bind_text(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}

/// Expands test bodies `async fn name(backend: Backend)` into one test per backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::common::Backend::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() { super::$name(super::common::Backend::Postgres).await } )*
        }
    };
}
