//! Per-activity counts of one process definition (Camunda's `GET /process-definition/{id}/
//! statistics`, Cockpit's overlays): active tokens, jobs waiting or running, dead letters.

use super::t;
use crate::Rows;
use kairos_store::{Result, Sql};
use serde::Serialize;
use std::collections::BTreeMap;

/// One activity's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivityStatistics {
    /// The activity's id in the model.
    pub id: String,
    /// Active executions (tokens) at the activity.
    pub instances: i64,
    /// Jobs of the activity in ACT_RU_JOB and ACT_RU_SUSPENDED_JOB (timers, async
    /// continuations, external tasks).
    pub jobs: i64,
    /// Dead letters of the activity (retries exhausted).
    pub failed_jobs: i64,
}

/// Counts per activity of definition `definition_id`, by activity id; activities with nothing
/// left out.
pub async fn activity_statistics(store: &dyn Sql, definition_id: &str) -> Result<Vec<ActivityStatistics>> {
    let mut by: BTreeMap<String, ActivityStatistics> = BTreeMap::new();
    let tokens = Rows::read(
        store,
        "ACT_RU_EXECUTION",
        &["ACT_ID_", "N"],
        "SELECT ACT_ID_, COUNT(*) AS N FROM ACT_RU_EXECUTION WHERE PROC_DEF_ID_ = ? AND ACT_ID_ IS NOT NULL \
         AND IS_ACTIVE_ = 1 AND IS_EVENT_SCOPE_ = 0 GROUP BY ACT_ID_",
        &[t(definition_id)],
    )
    .await?;
    for r in tokens.iter() {
        let id = r.text("ACT_ID_")?;
        by.entry(id.clone()).or_insert_with(|| ActivityStatistics { id, ..Default::default() }).instances =
            r.int("N")?;
    }
    for (table, dead) in [("ACT_RU_JOB", false), ("ACT_RU_SUSPENDED_JOB", false), ("ACT_RU_DEADLETTER_JOB", true)] {
        let sql = format!(
            "SELECT ELEMENT_ID_, COUNT(*) AS N FROM {table} WHERE PROC_DEF_ID_ = ? AND ELEMENT_ID_ IS NOT NULL \
             GROUP BY ELEMENT_ID_"
        );
        let rows = Rows::read(store, "ACT_RU_JOB", &["ELEMENT_ID_", "N"], &sql, &[t(definition_id)]).await?;
        for r in rows.iter() {
            let id = r.text("ELEMENT_ID_")?;
            let s = by.entry(id.clone()).or_insert_with(|| ActivityStatistics { id, ..Default::default() });
            if dead {
                s.failed_jobs += r.int("N")?;
            } else {
                s.jobs += r.int("N")?;
            }
        }
    }
    Ok(by.into_values().collect())
}
