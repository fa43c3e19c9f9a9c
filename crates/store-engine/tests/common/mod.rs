//! A fresh, migrated store per test on each backend.

#![allow(dead_code)]

use kairos_store::Store;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A migrated store, and what keeps it alive (the SQLite file's directory).
pub struct Fixture {
    pub store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// `None` when PostgreSQL is not configured (and not required: `KAIROS_REQUIRE_PG=1`).
    pub async fn new(backend: Backend) -> Option<Fixture> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("kairos.db").display());
                let store = kairos_store_sqlite::SqliteStore::connect(&url).await.expect("open SQLite");
                store.migrate().await.expect("migrate SQLite");
                Some(Fixture { store: Arc::new(store), _dir: Some(dir) })
            }
            Backend::Postgres => {
                let store = kairos_store_postgres::test_support::test_store().await?;
                Some(Fixture { store: Arc::new(store), _dir: None })
            }
        }
    }
}

/// Expands test bodies `async fn name(store: Arc<dyn Store>)` into one test per backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() {
                   let f = super::common::Fixture::new(super::common::Backend::Sqlite).await.unwrap();
                   super::$name(f.store.clone()).await
               } )*
        }
        mod postgres {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
               async fn $name() {
                   let Some(f) = super::common::Fixture::new(super::common::Backend::Postgres).await else { return };
                   super::$name(f.store.clone()).await
               } )*
        }
    };
}
