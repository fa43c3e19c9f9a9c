//! SPEC C1: engine commands inside the caller's own database transaction.
//!
//! A team that writes an order row and wants "send the confirmation" to happen if and only if
//! that row commits enqueues the job on the same connection, inside the same transaction:
//!
//! ```no_run
//! # async fn demo(engine: &kairos::Engine, pool: &sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
//! # async fn insert_order(tx: &mut sqlx::PgConnection, id: &str) -> sqlx::Result<()> { let _ = (tx, id); Ok(()) }
//! let mut tx = pool.begin().await?;
//! insert_order(&mut *tx, "o-1").await?; // the caller's own statement, on the same connection
//! engine.enqueue_in(&mut *tx, &kairos::EnqueueRequest { handler: "log".into(), ..Default::default() }).await?;
//! tx.commit().await?; // both rows, or (on rollback) neither
//! engine.wake();
//! # Ok(()) }
//! ```

use async_trait::async_trait;
use kairos_core::{Job, NewJob};

/// A database connection inside a transaction the caller holds.
#[async_trait]
pub trait CallerTransaction: Send {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error>;
}

#[async_trait]
impl CallerTransaction for sqlx::PgConnection {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error> {
        kairos_store_postgres::job_insert_in(self, job).await
    }
}

#[async_trait]
impl CallerTransaction for sqlx::SqliteConnection {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error> {
        kairos_store_sqlite::job_insert_in(self, job).await
    }
}
