//! SPEC C1: engine commands inside the caller's own database transaction (seed 002 §5–§6).
//!
//! A team that updates its business row and starts (or completes, or signals) a process wants
//! both or neither. kairos runs the command on the caller's connection, inside the caller's
//! transaction: the engine's rows — instance, executions, tasks, variables, history, jobs,
//! subscriptions, requestIds, bindings — commit or roll back with the caller's own.
//!
//! ```no_run
//! # async fn demo(engine: &kairos::Engine, pool: &sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
//! use kairos::process::StartRequest;
//! let mut tx = pool.begin().await?;
//! sqlx::query("UPDATE asset_publish_apply SET approval_status = 'APPROVING' WHERE id = 1001")
//!     .execute(&mut *tx)
//!     .await?;
//! let started = engine
//!     .within(&mut *tx)
//!     .start(StartRequest { process_definition_key: Some("asset_publish".into()), ..Default::default() })
//!     .await?;
//! tx.commit().await?; // the business row and the instance, or (on rollback or error) neither
//! engine.wake(); // its first jobs, if any, run now rather than at the next poll
//! # let _ = started; Ok(()) }
//! ```
//!
//! What the engine does outside the database waits for the caller's commit by construction:
//! jobs (async continuations, timers, deliveries of a thrown signal to other instances) are
//! rows that no executor sees before the commit, and nothing is published from memory. What
//! runs inside the command — synchronous service-task handlers — runs before the commit, and
//! their staged writes join the caller's transaction. On SQLite open the transaction with
//! `BEGIN IMMEDIATE` (see [`kairos_store_sqlite::InTransaction`]).
//!
//! Each command's writes run in a savepoint: a command that fails (a 409, a refused value)
//! leaves the caller's transaction usable and unchanged by it; the caller decides whether to
//! roll back. A command that loses its optimistic lock to a concurrent one is run again on fresh
//! rows, as outside a transaction (PostgreSQL's READ COMMITTED sees the winner's commit).

use crate::Error;
use crate::process::{InstanceView, StartRequest};
use async_trait::async_trait;
use kairos_core::{Job, NewJob};
use kairos_store::Sql;
use serde_json::{Map, Value as Json};

/// A database connection inside a transaction the caller holds.
#[async_trait]
pub trait CallerTransaction: Send {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error>;

    /// This connection as a session for the engine's statements.
    fn session(&mut self) -> Box<dyn Sql + '_>;
}

#[async_trait]
impl CallerTransaction for sqlx::PgConnection {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error> {
        kairos_store_postgres::job_insert_in(self, job).await
    }

    fn session(&mut self) -> Box<dyn Sql + '_> {
        Box::new(kairos_store_postgres::InTransaction::new(self))
    }
}

#[async_trait]
impl CallerTransaction for sqlx::SqliteConnection {
    async fn insert_job(&mut self, job: &NewJob) -> Result<Job, kairos_store::Error> {
        kairos_store_sqlite::job_insert_in(self, job).await
    }

    fn session(&mut self) -> Box<dyn Sql + '_> {
        Box::new(kairos_store_sqlite::InTransaction::new(self))
    }
}

/// An engine's commands bound to a caller's transaction ([`crate::Engine::within`]). Drop it
/// before committing the transaction (it borrows the connection).
pub struct Within<'t> {
    engine: &'t crate::Engine,
    db: Box<dyn Sql + 't>,
}

impl std::fmt::Debug for Within<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Within")
    }
}

impl<'t> Within<'t> {
    pub(crate) fn new(engine: &'t crate::Engine, db: Box<dyn Sql + 't>) -> Within<'t> {
        Within { engine, db }
    }

    /// The caller's transaction as a session: for the business helpers (bindings, compare-and-set,
    /// inbox, outbox) that take any [`Sql`].
    pub fn session(&self) -> &dyn Sql {
        self.db.as_ref()
    }

    /// Starts an instance ([`crate::process::Processes::start`]), binding and requestId included.
    pub async fn start(&self, req: StartRequest) -> Result<InstanceView, Error> {
        self.engine.processes().start_on(self.session(), req).await
    }

    /// Completes a task; with a requestId, idempotently
    /// ([`crate::process::Processes::complete_task_once`]).
    pub async fn complete_task(
        &self,
        task_id: &str,
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<(), Error> {
        self.engine.processes().complete_task_on(self.session(), task_id, variables, request_id).await
    }

    /// Correlates a message (by instance id or business key, or starting a definition by its
    /// message start event); returns the instance it reached.
    pub async fn message(
        &self,
        name: &str,
        instance: Option<&str>,
        business_key: Option<&str>,
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<String, Error> {
        self.engine
            .processes()
            .message_on(self.session(), name, instance, business_key, variables, request_id, None)
            .await
    }

    /// Broadcasts a signal; returns how many instances and start events received it.
    pub async fn signal(
        &self,
        name: &str,
        variables: Map<String, Json>,
        request_id: Option<&str>,
    ) -> Result<usize, Error> {
        self.engine.processes().signal_on(self.session(), name, variables, request_id, None).await
    }

    /// Sets variables on an instance.
    pub async fn set_variables(&self, instance: &str, variables: Map<String, Json>) -> Result<(), Error> {
        self.engine.processes().set_variables_on(self.session(), instance, variables).await
    }

    /// Writes an outbox event (SPEC C4): delivered by a publisher only once the caller's
    /// transaction commits, never if it rolls back. Call `engine.outbox().wake()` after the
    /// commit to skip the publisher's poll interval.
    pub async fn outbox_write(&self, event: &crate::outbox::NewEvent) -> Result<(), Error> {
        self.engine.outbox_write_in(self.session(), event).await
    }

    /// Deletes an instance (and what it called) with a reason.
    pub async fn delete_instance(&self, instance: &str, reason: &str) -> Result<(), Error> {
        self.engine.processes().delete_instance_on(self.session(), instance, reason).await
    }
}
