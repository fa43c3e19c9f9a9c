//! The opt-in two-phase commit across two PostgreSQL databases (SPEC C11, seed 002 §21;
//! docs/two-phase-commit.md): the caller's business statements on the business database and an
//! engine command on the kairos database commit together or not at all, through PostgreSQL's
//! `PREPARE TRANSACTION` / `COMMIT PREPARED`, with kairos as the coordinator and
//! `KAIROS_TWO_PHASE` as its log.
//!
//! ```no_run
//! # async fn demo(engine: &kairos::Engine, business: &sqlx::PgPool) -> Result<(), kairos::Error> {
//! use kairos::process::StartRequest;
//! let mut tx = engine.two_phase(business)?.begin().await?;
//! sqlx::query("UPDATE asset_publish_apply SET approval_status = 'APPROVING' WHERE id = 1001")
//!     .execute(tx.business())
//!     .await
//!     .map_err(kairos::two_phase::business_error)?;
//! let started = tx
//!     .kairos()
//!     .start(StartRequest { process_definition_key: Some("asset_publish".into()), ..Default::default() })
//!     .await?;
//! let committed = tx.commit().await?; // both, or (on any error before the decision) neither
//! # let _ = (started, committed); Ok(()) }
//! ```
//!
//! The steps of [`TwoPhaseTransaction::commit`], and what a crash at each leaves for
//! [`TwoPhase::recover`]:
//!
//! | step | written | after a crash here |
//! |---|---|---|
//! | `begin` | log row PREPARING (committed) | the open transactions die with their sessions; the row is rolled back |
//! | prepare the business side | `PREPARE TRANSACTION '…:b'` | no decision: ROLLBACK PREPARED, row ROLLED_BACK |
//! | prepare the kairos side | `PREPARE TRANSACTION '…:k'` | the same |
//! | decide | row COMMITTING (committed, conditional on PREPARING) | COMMIT PREPARED both, row COMMITTED |
//! | commit the business side | `COMMIT PREPARED '…:b'` | COMMIT PREPARED the kairos side |
//! | commit the kairos side, log | row COMMITTED | nothing left |
//!
//! The decision is the one write that matters: before it every failure rolls both back, after it
//! every failure ends in commit. It is a conditional update (PREPARING → COMMITTING) and so is
//! recovery's abort (PREPARING → ABORTING), so a coordinator slower than the grace period and a
//! recovery cannot decide differently: whichever moves the row first wins, the other follows.

mod recovery;

pub use kairos_store_postgres::two_phase::{LogRow, Prepared, State};
pub(crate) use recovery::run as recovery_loop;
pub use recovery::{Entry, Listing, PreparedEntry, Recovered, RecoverySettings};

use crate::transaction::Within;
use crate::{Engine, Error};
use kairos_store::ErrorKind;
use kairos_store_postgres::two_phase as log;
use sqlx::{PgConnection, PgPool, Postgres};
use std::time::Duration;

/// The prefix of every gid kairos prepares. After it comes this kairos database's namespace
/// ([`TwoPhase::gid_prefix`]), and recovery looks only at prepared transactions that carry both.
pub const GID_PREFIX: &str = "kairos-2pc:";

/// The gids of a global transaction: `<prefix><id>:b` on the business database, `<prefix><id>:k`
/// on the kairos database.
fn gids(prefix: &str, id: &str) -> (String, String) {
    (format!("{prefix}{id}:b"), format!("{prefix}{id}:k"))
}

/// The global id a gid of this namespace's `prefix` names.
pub(crate) fn global_id<'g>(prefix: &str, gid: &'g str) -> Option<&'g str> {
    gid.strip_prefix(prefix)?.rsplit_once(':').map(|(id, _)| id)
}

async fn gid_prefix(kairos: &PgPool) -> Result<String, Error> {
    Ok(format!("{GID_PREFIX}{}:", log::namespace(kairos).await?))
}

/// A failure of the caller's own statement on the business database, as this crate's error
/// (for `?` in a two-phase transaction's business part).
pub fn business_error(e: sqlx::Error) -> Error {
    let kind = match &e {
        // By SQLSTATE class: integrity (a key taken), data (a value the column refuses), and
        // connection, shutdown or resource trouble (try again later).
        sqlx::Error::Database(d) => match d.code().as_deref().unwrap_or("") {
            "23505" | "23503" | "23P01" => ErrorKind::Conflict,
            c if c.starts_with("22") || c.starts_with("23") => ErrorKind::Invalid,
            c if c.starts_with("08") || c.starts_with("57P") || c.starts_with("53") => ErrorKind::Unavailable,
            _ => ErrorKind::Other,
        },
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    };
    Error::Store(kairos_store::Error::new(kind, format!("business database: {e}")).with_source(e))
}

/// Opens the business database of a two-phase commit. Only PostgreSQL has prepared
/// transactions: any other URL is refused, naming it (without its password).
pub async fn connect_business(url: &str) -> Result<PgPool, Error> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(Error::Config(format!(
            "business database URL \"{}\" is not PostgreSQL: the two-phase commit needs PREPARE TRANSACTION on both \
             databases (postgres://USER:PASS@HOST:PORT/DB); for a SQLite business database use the command worker \
             (docs/commands.md)",
            crate::store_url::redact(url)
        )));
    }
    Ok(kairos_store_postgres::PgStore::connect(url).await?.pool().clone())
}

/// Why a two-phase commit needs a PostgreSQL kairos store, as said to a caller.
pub fn needs_postgres_message() -> &'static str {
    "two-phase commit needs a PostgreSQL kairos store (PREPARE TRANSACTION); this engine's store is SQLite, or was \
     not opened from a postgres:// URL. On SQLite keep business rows and kairos in one database (Engine::within) or \
     use the command worker (docs/commands.md)"
}

/// The refusal for an engine whose store is not PostgreSQL.
pub(crate) fn needs_postgres() -> Error {
    Error::Config(needs_postgres_message().into())
}

/// A step of [`TwoPhaseTransaction::commit`] where a test may pause the coordinator
/// (`KAIROS_FAULT_TWO_PHASE_PAUSE=<step>`) to kill it or its business connection there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Both sides' statements ran; nothing is prepared.
    BeforePrepare,
    /// The business side is prepared, the kairos side not.
    BusinessPrepared,
    /// Both are prepared; no decision yet.
    BothPrepared,
    /// The decision (COMMITTING) is committed; neither side is.
    Decided,
    /// The business side is committed, the kairos side still prepared.
    BusinessCommitted,
}

impl Step {
    pub const ALL: [Step; 5] =
        [Step::BeforePrepare, Step::BusinessPrepared, Step::BothPrepared, Step::Decided, Step::BusinessCommitted];

    pub fn as_str(self) -> &'static str {
        match self {
            Step::BeforePrepare => "before-prepare",
            Step::BusinessPrepared => "business-prepared",
            Step::BothPrepared => "both-prepared",
            Step::Decided => "decided",
            Step::BusinessCommitted => "business-committed",
        }
    }

    pub fn parse(s: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// The coordinator of two-phase transactions between one business database and this engine's.
#[derive(Debug, Clone)]
pub struct TwoPhase<'e> {
    engine: &'e Engine,
    kairos: PgPool,
    business: PgPool,
    /// Test hook: the step to pause at, only from `KAIROS_FAULT_TWO_PHASE_PAUSE`.
    fault: Option<Step>,
}

impl Engine {
    /// The two-phase commit between `business` and this engine's database (SPEC C11; see
    /// [`crate::two_phase`]). Refused on a SQLite store.
    pub fn two_phase(&self, business: &PgPool) -> Result<TwoPhase<'_>, Error> {
        let kairos = self.postgres_pool().ok_or_else(needs_postgres)?.clone();
        let fault = std::env::var("KAIROS_FAULT_TWO_PHASE_PAUSE").ok().and_then(|s| Step::parse(&s));
        Ok(TwoPhase { engine: self, kairos, business: business.clone(), fault })
    }
}

impl<'e> TwoPhase<'e> {
    /// The prefix of this kairos database's gids: `kairos-2pc:<namespace>:`.
    pub async fn gid_prefix(&self) -> Result<String, Error> {
        gid_prefix(&self.kairos).await
    }

    /// Opens a transaction on each database and logs the global transaction PREPARING. Refused,
    /// with nothing written, when either server has `max_prepared_transactions = 0` (the kairos
    /// side is checked once per engine, the business side on every call: the pool may reach
    /// another server after a fail-over).
    pub async fn begin(&self) -> Result<TwoPhaseTransaction<'e>, Error> {
        let mut business = self.business.begin().await.map_err(business_error)?;
        check_prepared_transactions("business", &mut business).await?;
        let prefix = self.checked_prefix().await?;
        let business_pid = match self.fault {
            Some(_) => Some(backend_pid(&mut business).await?),
            None => None,
        };
        let id = kairos_core::new_id();
        let (gid_business, gid_kairos) = gids(prefix, &id);
        // The log row first, then the kairos transaction: no step of a global transaction needs
        // a second connection of the kairos pool while it holds one, so as many of them as the
        // pool has connections can run at once without waiting on each other.
        log::log_begin(&self.kairos, &id, &gid_business, &gid_kairos, self.engine.node_id()).await?;
        let kairos = match self.kairos.begin().await {
            Ok(tx) => tx,
            Err(e) => {
                let e = kairos_store_postgres_error(e);
                return Err(self.abort(&id, &[], e).await);
            }
        };
        Ok(TwoPhaseTransaction { tpc: self.clone(), id, gid_business, gid_kairos, business, kairos, business_pid })
    }

    /// The gid prefix, once the kairos side's max_prepared_transactions passed (cached).
    async fn checked_prefix(&self) -> Result<&'e str, Error> {
        let engine: &'e Engine = self.engine;
        let prefix = engine
            .two_phase_prefix()
            .get_or_try_init(|| async {
                let mut conn = self.kairos.acquire().await.map_err(kairos_store_postgres_error)?;
                check_prepared_transactions("kairos", &mut conn).await?;
                gid_prefix(&self.kairos).await
            })
            .await?;
        Ok(prefix.as_str())
    }
}

/// Refuses a server where PREPARE TRANSACTION cannot work, saying what to set.
async fn check_prepared_transactions(side: &str, conn: &mut PgConnection) -> Result<(), Error> {
    if log::max_prepared_transactions(conn).await? > 0 {
        return Ok(());
    }
    Err(Error::Config(format!(
        "the {side} database's server has max_prepared_transactions = 0, so PREPARE TRANSACTION is refused: set it \
         above the number of two-phase transactions in flight at once (e.g. 64) and restart that server"
    )))
}

fn kairos_store_postgres_error(e: sqlx::Error) -> Error {
    Error::Store(kairos_store::Error::new(ErrorKind::Unavailable, format!("kairos database: {e}")).with_source(e))
}

async fn backend_pid(conn: &mut PgConnection) -> Result<i32, Error> {
    let (pid,): (i32,) = sqlx::query_as("SELECT pg_backend_pid()").fetch_one(conn).await.map_err(business_error)?;
    Ok(pid)
}

/// One global transaction: a transaction open on each database until [`commit`] prepares and
/// commits both. Dropped without `commit`, both roll back (nothing was prepared) and recovery
/// closes its log row after the grace period; [`rollback`] closes it at once.
///
/// [`commit`]: TwoPhaseTransaction::commit
/// [`rollback`]: TwoPhaseTransaction::rollback
pub struct TwoPhaseTransaction<'e> {
    tpc: TwoPhase<'e>,
    id: String,
    gid_business: String,
    gid_kairos: String,
    business: sqlx::Transaction<'static, Postgres>,
    kairos: sqlx::Transaction<'static, Postgres>,
    business_pid: Option<i32>,
}

impl std::fmt::Debug for TwoPhaseTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoPhaseTransaction").field("id", &self.id).finish()
    }
}

/// A global transaction whose decision was commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// The log row's id (`kairos twophase list`).
    pub id: String,
    /// Whether both sides are committed now. False when a `COMMIT PREPARED` failed after the
    /// decision (a database away): the outcome is still commit, and recovery finishes it; until
    /// then that side's rows stay invisible to others and its locks stay held.
    pub finished: bool,
}

impl<'e> TwoPhaseTransaction<'e> {
    /// The global transaction's id (the log row's).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The business database's connection, inside this transaction: run the caller's statements
    /// on it (`.execute(tx.business())`).
    pub fn business(&mut self) -> &mut PgConnection {
        &mut self.business
    }

    /// The engine's commands on the kairos database, inside this transaction.
    pub fn kairos(&mut self) -> Within<'_> {
        self.tpc.engine.within(&mut *self.kairos)
    }

    /// Both at once, for code that moves values between them.
    pub fn both(&mut self) -> (&mut PgConnection, Within<'_>) {
        (&mut self.business, self.tpc.engine.within(&mut *self.kairos))
    }

    /// Rolls both sides back and closes the log row.
    pub async fn rollback(self) -> Result<(), Error> {
        let TwoPhaseTransaction { tpc, id, business, kairos, .. } = self;
        let b = business.rollback().await.map_err(business_error);
        let k = kairos.rollback().await.map_err(kairos_store_postgres_error);
        log::log_move(&tpc.kairos, &id, &[State::Preparing], State::RolledBack, Some("rolled back by the caller"))
            .await?;
        b.and(k)
    }

    /// Prepares both sides, records the decision and commits both (see the module's table).
    /// An error before the decision rolls back whatever was prepared and is returned; after the
    /// decision the answer is [`Committed`], finished or left to recovery. An error of kind
    /// `Unavailable` naming the id as in doubt means the decision's own write failed and could
    /// not be read back: recovery settles it from the log once the kairos database answers.
    pub async fn commit(self) -> Result<Committed, Error> {
        let TwoPhaseTransaction { tpc, id, gid_business, gid_kairos, mut business, mut kairos, business_pid } = self;
        tpc.pause(Step::BeforePrepare, &id, business_pid).await;
        // A PREPARE whose answer was lost (the connection broke) may have prepared all the same:
        // a failed side is rolled back by its gid too (absent is fine).
        if let Err(e) = log::prepare(&mut business, &gid_business).await {
            // Both connections back to their pools before the abort takes others from them.
            drop((business, kairos));
            return Err(tpc.abort(&id, &[(&tpc.business, &gid_business)], e.into()).await);
        }
        // PREPARE took the transaction out of the session and opened an empty one (see
        // `prepare`): committing that one returns the connection to its pool clean.
        let _ = business.commit().await;
        tpc.pause(Step::BusinessPrepared, &id, business_pid).await;
        if let Err(e) = log::prepare(&mut kairos, &gid_kairos).await {
            drop(kairos); // its connection back to the pool before the log is written
            let both = [(&tpc.business, gid_business.as_str()), (&tpc.kairos, gid_kairos.as_str())];
            return Err(tpc.abort(&id, &both, e.into()).await);
        }
        let _ = kairos.commit().await;
        tpc.pause(Step::BothPrepared, &id, business_pid).await;
        let prepared = [(&tpc.business, gid_business.as_str()), (&tpc.kairos, gid_kairos.as_str())];
        match tpc.decide(&id).await {
            Decision::Commit => {}
            Decision::Abort(e) => return Err(tpc.abort(&id, &prepared, e).await),
            Decision::InDoubt(e) => {
                return Err(Error::Store(kairos_store::Error::new(
                    ErrorKind::Unavailable,
                    format!(
                        "two-phase transaction {id} is in doubt: recording the decision failed ({e}); both sides \
                         stay prepared and recovery settles them from the log"
                    ),
                )));
            }
        }
        tpc.pause(Step::Decided, &id, business_pid).await;
        let mut finished = tpc.finish_side(&id, &tpc.business, &gid_business).await;
        tpc.pause(Step::BusinessCommitted, &id, business_pid).await;
        finished &= tpc.finish_side(&id, &tpc.kairos, &gid_kairos).await;
        if finished {
            match log::log_move(&tpc.kairos, &id, &[State::Committing], State::Committed, None).await {
                Ok(_) => {}
                // Both sides are committed; recovery finds nothing prepared and closes the row.
                Err(e) => tracing::warn!(id, error = %e, "two-phase: committed, but the log row stays COMMITTING"),
            }
            tpc.engine.wake();
        }
        Ok(Committed { id, finished })
    }
}

enum Decision {
    Commit,
    /// Recovery rolled the row back first, or the log refused the write: roll back.
    Abort(Error),
    /// The write's answer was lost and the row could not be read: leave it to recovery.
    InDoubt(Error),
}

impl TwoPhase<'_> {
    async fn pause(&self, step: Step, id: &str, business_pid: Option<i32>) {
        if self.fault != Some(step) {
            return;
        }
        eprintln!(
            "kairos two-phase: paused at {} id={id} business_pid={}",
            step.as_str(),
            business_pid.unwrap_or_default()
        );
        // Waits for a line on stdin (the test's "go on"); a test that kills us never sends it.
        let _ = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)
        })
        .await;
    }

    /// Records COMMITTING. A write that failed may still have committed (its answer lost): the
    /// row is read back to tell.
    async fn decide(&self, id: &str) -> Decision {
        let error = match log::log_move(&self.kairos, id, &[State::Preparing], State::Committing, None).await {
            Ok(true) => return Decision::Commit,
            Ok(false) => {
                return Decision::Abort(Error::Store(kairos_store::Error::new(
                    ErrorKind::Conflict,
                    format!(
                        "two-phase transaction {id} was rolled back by recovery before it could commit: it took \
                         longer than the recovery's grace period"
                    ),
                )));
            }
            Err(e) => e,
        };
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if let Ok(rows) = log::log_list(&self.kairos, true, &[id.to_string()], 1).await {
                return match rows.first().map(|r| r.state) {
                    Some(State::Committing | State::Committed) => Decision::Commit,
                    _ => Decision::Abort(error.into()),
                };
            }
        }
        Decision::InDoubt(error.into())
    }

    /// Rolls back the sides that were prepared and closes the row; answers `cause`.
    async fn abort(&self, id: &str, prepared: &[(&PgPool, &str)], cause: Error) -> Error {
        let mut clean = true;
        for (pool, gid) in prepared {
            if let Err(e) = finish_retrying(pool, gid, false).await {
                tracing::warn!(id, gid, error = %e, "two-phase: ROLLBACK PREPARED failed; recovery will roll it back");
                clean = false;
            }
        }
        let error = cause.to_string();
        let closed = if clean {
            log::log_move(&self.kairos, id, &[State::Preparing, State::Aborting], State::RolledBack, Some(&error)).await
        } else {
            log::log_error(&self.kairos, id, &error).await.map(|()| false)
        };
        if let Err(e) = closed {
            tracing::warn!(id, error = %e, "two-phase: rolled back, but the log row stays open for recovery");
        }
        cause
    }

    /// Commits one prepared side after the decision; a failure is recorded for recovery.
    async fn finish_side(&self, id: &str, pool: &PgPool, gid: &str) -> bool {
        match finish_retrying(pool, gid, true).await {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(id, gid, error = %e, "two-phase: COMMIT PREPARED failed after the decision; recovery will commit it");
                let _ = log::log_error(&self.kairos, id, &format!("COMMIT PREPARED {gid}: {e}")).await;
                false
            }
        }
    }
}

/// `COMMIT PREPARED` / `ROLLBACK PREPARED`, tried three times: a pool's connection may have been
/// broken (a server restart, a terminated backend) and the next attempt takes a fresh one.
async fn finish_retrying(pool: &PgPool, gid: &str, commit: bool) -> Result<log::Finished, kairos_store::Error> {
    let mut last = None;
    for attempt in 0..3u64 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
        }
        match log::finish(pool, gid, commit).await {
            Ok(f) => return Ok(f),
            Err(e) if e.kind == ErrorKind::Unavailable => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| kairos_store::Error::new(ErrorKind::Other, "no attempt made")))
}
