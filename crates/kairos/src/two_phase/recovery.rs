//! Recovery of in-doubt two-phase transactions: what a crash of the coordinator, or of either
//! database, left prepared is finished the way the log says — committed where the decision is
//! recorded, rolled back where it is not. Run on engine start and on a schedule
//! ([`crate::EngineBuilder::two_phase_recovery`]), and on demand (`kairos twophase recover`).
//!
//! A row or a prepared transaction younger than the grace period is left alone: its coordinator
//! may be alive and still working. Past it, a row without a decision is moved to ABORTING first —
//! conditionally, so a coordinator that decides meanwhile wins and one that decides later is
//! refused — then its prepared sides are rolled back.

use super::{LogRow, Prepared, State, TwoPhase, gid_prefix, global_id};
use crate::Error;
use kairos_store_postgres::two_phase::{self as log, Finished};
use serde::Serialize;
use sqlx::PgPool;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// How the engine's recovery loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoverySettings {
    /// How long a global transaction may go without a state change before recovery takes it as
    /// abandoned. Longer than any coordinator legitimately needs between `begin` and `commit`.
    pub grace: Duration,
    /// How often the loop looks.
    pub every: Duration,
    /// How long the loop keeps COMMITTED and ROLLED_BACK rows (for `kairos twophase list --all`
    /// and audits) before deleting them; `None` keeps them.
    pub retention: Option<Duration>,
}

impl Default for RecoverySettings {
    fn default() -> Self {
        RecoverySettings {
            grace: Duration::from_secs(60),
            every: Duration::from_secs(30),
            retention: Some(Duration::from_secs(7 * 24 * 3600)),
        }
    }
}

/// What one recovery round did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// Gids it committed (COMMIT PREPARED).
    pub committed: Vec<String>,
    /// Gids it rolled back (ROLLBACK PREPARED), orphans included.
    pub rolled_back: Vec<String>,
    /// Prepared gids with kairos's prefix and no log row, rolled back.
    pub orphans: Vec<String>,
    /// Log rows it moved to COMMITTED or ROLLED_BACK.
    pub closed: Vec<String>,
    /// Rows and gids it could not finish this round, with why (tried again next round).
    pub errors: Vec<String>,
}

impl Recovered {
    pub fn is_empty(&self) -> bool {
        self.committed.is_empty() && self.rolled_back.is_empty() && self.closed.is_empty() && self.errors.is_empty()
    }
}

/// The log rows and the prepared transactions of both databases (`kairos twophase list`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    pub transactions: Vec<Entry>,
    /// Gids with kairos's prefix prepared on the business database now.
    pub prepared_business: Vec<PreparedEntry>,
    /// … and on the kairos database.
    pub prepared_kairos: Vec<PreparedEntry>,
}

/// A log row as shown.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: String,
    pub state: &'static str,
    pub gid_business: String,
    pub gid_kairos: String,
    pub node: String,
    pub last_error: Option<String>,
    pub created: String,
    pub updated: String,
    pub age_ms: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreparedEntry {
    pub gid: String,
    pub age_ms: i64,
}

impl From<&LogRow> for Entry {
    fn from(r: &LogRow) -> Entry {
        Entry {
            id: r.id.clone(),
            state: r.state.as_str(),
            gid_business: r.gid_business.clone(),
            gid_kairos: r.gid_kairos.clone(),
            node: r.node.clone(),
            last_error: r.last_error.clone(),
            created: r.created.to_string(),
            updated: r.updated.to_string(),
            age_ms: r.age_ms,
        }
    }
}

/// Rows looked at per round; the rest wait for the next.
const ROUND: i64 = 1000;

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl TwoPhase<'_> {
    /// The log (rows not final, or all with `all`, at most `limit`) and what is prepared now.
    pub async fn list(&self, all: bool, limit: i64) -> Result<Listing, Error> {
        Pools { kairos: &self.kairos, business: &self.business }.list(all, limit).await
    }

    /// One recovery round (see the module's doc). `grace` zero takes everything as abandoned:
    /// only for an operator who knows no coordinator is running, and for tests.
    pub async fn recover(&self, grace: Duration) -> Result<Recovered, Error> {
        Pools { kairos: &self.kairos, business: &self.business }.recover(grace).await
    }
}

/// What recovery works on: the two databases, no engine.
struct Pools<'p> {
    kairos: &'p PgPool,
    business: &'p PgPool,
}

impl Pools<'_> {
    async fn list(&self, all: bool, limit: i64) -> Result<Listing, Error> {
        let rows = log::log_list(self.kairos, all, &[], limit).await?;
        let prefix = gid_prefix(self.kairos).await?;
        let show = |p: Vec<Prepared>| p.into_iter().map(|p| PreparedEntry { gid: p.gid, age_ms: p.age_ms }).collect();
        Ok(Listing {
            transactions: rows.iter().map(Entry::from).collect(),
            prepared_business: show(log::prepared(self.business, &prefix).await?),
            prepared_kairos: show(log::prepared(self.kairos, &prefix).await?),
        })
    }

    async fn recover(&self, grace: Duration) -> Result<Recovered, Error> {
        let grace = ms(grace);
        let prefix = gid_prefix(self.kairos).await?;
        let on_business = log::prepared(self.business, &prefix).await?;
        let on_kairos = log::prepared(self.kairos, &prefix).await?;
        let mut rows: HashMap<String, LogRow> =
            log::log_list(self.kairos, false, &[], ROUND).await?.into_iter().map(|r| (r.id.clone(), r)).collect();
        // Prepared gids whose row is final (a coordinator that prepared after recovery closed its
        // row) or missing: their rows are read too.
        let named: BTreeSet<String> = on_business
            .iter()
            .chain(&on_kairos)
            .filter_map(|p| global_id(&prefix, &p.gid))
            .map(str::to_string)
            .collect();
        let missing: Vec<String> = named.iter().filter(|id| !rows.contains_key(*id)).cloned().collect();
        if !missing.is_empty() {
            for r in log::log_list(self.kairos, true, &missing, ROUND).await? {
                rows.insert(r.id.clone(), r);
            }
        }
        let mut out = Recovered::default();
        let prepared_b: HashMap<&str, i64> = on_business.iter().map(|p| (p.gid.as_str(), p.age_ms)).collect();
        let prepared_k: HashMap<&str, i64> = on_kairos.iter().map(|p| (p.gid.as_str(), p.age_ms)).collect();
        let mut ordered: Vec<&LogRow> = rows.values().collect();
        ordered.sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
        for row in ordered {
            self.recover_row(row, grace, &prepared_b, &prepared_k, &mut out).await;
        }
        // Orphans: kairos's prefix, no row at all.
        for (pool, prepared) in [(self.business, &on_business), (self.kairos, &on_kairos)] {
            for p in prepared.iter() {
                let known = global_id(&prefix, &p.gid).is_some_and(|id| rows.contains_key(id));
                if known || p.age_ms < grace {
                    continue;
                }
                match log::finish(pool, &p.gid, false).await {
                    Ok(Finished::Done) => {
                        out.rolled_back.push(p.gid.clone());
                        out.orphans.push(p.gid.clone());
                    }
                    // Both databases are one (two schemas of it): listed on each side, finished once.
                    Ok(Finished::Absent) => {}
                    Err(e) => out.errors.push(format!("orphan {}: ROLLBACK PREPARED failed: {e}", p.gid)),
                }
            }
        }
        if !out.is_empty() {
            tracing::info!(
                committed = out.committed.len(),
                rolled_back = out.rolled_back.len(),
                closed = out.closed.len(),
                errors = out.errors.len(),
                "two-phase recovery"
            );
        }
        Ok(out)
    }

    async fn recover_row(
        &self,
        row: &LogRow,
        grace: i64,
        prepared_b: &HashMap<&str, i64>,
        prepared_k: &HashMap<&str, i64>,
        out: &mut Recovered,
    ) {
        let mut state = row.state;
        if !state.is_final() && row.age_ms < grace {
            return; // its coordinator may still be at work
        }
        if state == State::Preparing {
            match log::log_move(self.kairos, &row.id, &[State::Preparing], State::Aborting, None).await {
                Ok(true) => state = State::Aborting,
                // Its coordinator moved it meanwhile; the next round sees where to.
                Ok(false) => return,
                Err(e) => return out.errors.push(format!("{}: recording ABORTING failed: {e}", row.id)),
            }
        }
        let commit = state.decided_commit();
        let sides: [(&PgPool, &str, &HashMap<&str, i64>); 2] =
            [(self.business, &row.gid_business, prepared_b), (self.kairos, &row.gid_kairos, prepared_k)];
        let mut clean = true;
        for (pool, gid, prepared) in sides {
            if !prepared.contains_key(gid) {
                continue;
            }
            match log::finish(pool, gid, commit).await {
                Ok(Finished::Done) => {
                    if commit { &mut out.committed } else { &mut out.rolled_back }.push(gid.to_string())
                }
                Ok(Finished::Absent) => {}
                Err(e) => {
                    clean = false;
                    let verb = if commit { "COMMIT" } else { "ROLLBACK" };
                    let message = format!("{verb} PREPARED {gid}: {e}");
                    let _ = log::log_error(self.kairos, &row.id, &message).await;
                    out.errors.push(format!("{}: {message}", row.id));
                }
            }
        }
        if !clean || state.is_final() {
            return;
        }
        let to = if commit { State::Committed } else { State::RolledBack };
        match log::log_move(self.kairos, &row.id, &[state], to, None).await {
            Ok(true) => out.closed.push(row.id.clone()),
            Ok(false) => {}
            Err(e) => out.errors.push(format!("{}: recording {} failed: {e}", row.id, to.as_str())),
        }
    }
}

/// The engine's recovery loop: a round at once, then one every `settings.every`, until stopped.
pub(crate) async fn run(
    kairos: PgPool,
    business: PgPool,
    settings: RecoverySettings,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let pools = Pools { kairos: &kairos, business: &business };
    loop {
        if *stopped.borrow() {
            return;
        }
        if let Err(e) = pools.recover(settings.grace).await {
            tracing::warn!(error = %e, "two-phase recovery: a round failed");
        }
        if let Some(keep) = settings.retention
            && let Err(e) = log::log_delete_final(&kairos, ms(keep), ROUND).await
        {
            tracing::warn!(error = %e, "two-phase recovery: deleting old final rows failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(settings.every) => {}
            _ = stopped.changed() => {}
        }
    }
}
