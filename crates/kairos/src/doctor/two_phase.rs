//! The doctor's finding `two-phase-in-doubt`: a two-phase transaction (SPEC C11) whose log row
//! has not reached COMMITTED or ROLLED_BACK long after its last change. Its prepared side holds
//! its locks and keeps its rows invisible until recovery finishes it, and a prepared transaction
//! holds back vacuum on its database, so each is a warning saying how to finish it. Only the
//! kairos database's log is read: the doctor knows no business database.

use super::*;
use kairos_store_postgres::two_phase as log;

/// A row unchanged this long is past any coordinator's work and the recovery's default grace.
const IN_DOUBT_AFTER_MS: i64 = 2 * 60 * 1000;
/// Rows named at most.
const LIMIT: i64 = 20;

/// Adds one finding per in-doubt row (PostgreSQL stores only; SQLite has no two-phase commit).
pub(super) async fn check(engine: &Engine, out: &mut Vec<Finding>) -> Result<(), Error> {
    let Some(pool) = engine.postgres_pool() else { return Ok(()) };
    let rows = log::log_list(pool, false, &[], 1000).await?;
    let stale: Vec<_> = rows.iter().filter(|r| r.age_ms >= IN_DOUBT_AFTER_MS).take(LIMIT as usize).collect();
    if stale.is_empty() {
        return Ok(());
    }
    out.retain(|f| f.code != "all-clear");
    out.extend(stale.into_iter().map(|r| Finding {
        severity: Severity::Warning,
        code: "two-phase-in-doubt",
        title: format!("two-phase transaction {} has been {} for {} s", r.id, r.state.as_str(), r.age_ms / 1000),
        detail: format!(
            "coordinated by node {}; gids {} (business) and {} (kairos){}",
            r.node,
            r.gid_business,
            r.gid_kairos,
            r.last_error.as_deref().map(|e| format!("; last error: {e}")).unwrap_or_default()
        ),
        action: format!(
            "Run `kairos twophase recover --business-db URL` (it {} both sides), or start a node with \
             `kairos serve --two-phase-recovery URL`; until then the prepared side keeps its locks.",
            if r.state.decided_commit() { "commits" } else { "rolls back" }
        ),
        job_id: None,
        process_instance_id: None,
        trigger_group: None,
        trigger_name: None,
    }));
    Ok(())
}
