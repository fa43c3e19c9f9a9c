//! History cleanup (SPEC P11): the history of an instance whose definition has a
//! `historyTimeToLive` (in days) is deleted once the instance has been ended that long —
//! ACT_HI_PROCINST, ACT_HI_ACTINST, ACT_HI_TASKINST, ACT_HI_VARINST, ACT_HI_DETAIL and the
//! instance's rows of the job log — so that history does not grow without bound.
//!
//! The job log is kept for a retention time of its own (`EngineBuilder::job_log_retention`,
//! 30 days unless set), whatever its jobs were; the requestIds of idempotent commands
//! (`KAIROS_REQUEST`) for [`super::REQUEST_RETENTION`].
//!
//! Every running node runs it on an interval (`EngineBuilder::history_cleanup_every`), in
//! batches. No coordination is needed: the deletes are idempotent, and two nodes deleting one
//! batch at once only wait for each other's row locks. Definitions without a time to live keep
//! their history (Camunda's and Flowable's default too).

use super::Processes;
use crate::Error;
use kairos_store::{SqlValue, Write};
use std::time::Duration;

/// The history tables an instance has rows in, with the column naming the instance; the
/// instance row last.
const TABLES: [(&str, &str); 6] = [
    ("ACT_HI_ACTINST", "PROC_INST_ID_"),
    ("ACT_HI_TASKINST", "PROC_INST_ID_"),
    ("ACT_HI_VARINST", "PROC_INST_ID_"),
    ("ACT_HI_DETAIL", "PROC_INST_ID_"),
    ("ACT_HI_JOB_LOG", "PROCESS_INSTANCE_ID_"),
    ("ACT_HI_PROCINST", "PROC_INST_ID_"),
];

impl Processes {
    /// Deletes the history of at most `limit` instances past their definition's time to live;
    /// returns how many. Call again while it returns `limit`.
    pub async fn clean_history(&self, limit: usize) -> Result<usize, Error> {
        let store = self.store.as_ref();
        let ttls =
            store.read("SELECT DISTINCT HISTORY_TTL_ FROM ACT_RE_PROCDEF WHERE HISTORY_TTL_ IS NOT NULL", &[]).await?;
        let now = store.db_now().await?;
        let mut ids: Vec<String> = Vec::new();
        for days in ttls.iter().filter_map(|r| r.first().and_then(SqlValue::as_i64)) {
            let want = limit.saturating_sub(ids.len());
            if want == 0 {
                break;
            }
            let cutoff = now
                .checked_sub(jiff::SignedDuration::from_hours(days.saturating_mul(24)))
                .unwrap_or(jiff::Timestamp::MIN);
            let rows = store
                .read(
                    "SELECT h.PROC_INST_ID_ FROM ACT_HI_PROCINST h JOIN ACT_RE_PROCDEF d ON d.ID_ = h.PROC_DEF_ID_ \
                     WHERE d.HISTORY_TTL_ = ? AND h.END_TIME_ IS NOT NULL AND h.END_TIME_ < ? \
                     ORDER BY h.END_TIME_ LIMIT ?",
                    &[SqlValue::Int(days), SqlValue::Timestamp(cutoff), SqlValue::Int(want as i64)],
                )
                .await?;
            ids.extend(rows.iter().filter_map(|r| r.first().and_then(SqlValue::as_str)).map(str::to_string));
        }
        if ids.is_empty() {
            return Ok(0);
        }
        // One statement per table: the per-instance deletes are merged into `IN` lists.
        let writes: Vec<Write> = TABLES
            .iter()
            .flat_map(|(table, column)| {
                ids.iter().map(move |id| {
                    Write::new(format!("DELETE FROM {table} WHERE {column} = ?"), vec![SqlValue::Text(id.clone())])
                })
            })
            .collect();
        store.write_all(&kairos_store::coalesce(writes)).await?;
        tracing::info!(
            instances = ids.len(),
            "history cleanup deleted the history of ended instances past their time to live"
        );
        Ok(ids.len())
    }

    /// Deletes at most `limit` rows of the job log (any job's, in or outside a process) that
    /// ended longer than `retention` ago; returns how many.
    pub async fn clean_job_log(&self, retention: jiff::SignedDuration, limit: usize) -> Result<usize, Error> {
        let n = self.delete_older(("ACT_HI_JOB_LOG", "ID_", "END_TIME_"), retention, limit).await?;
        if n > 0 {
            tracing::info!(rows = n, "history cleanup deleted job log rows past their retention");
        }
        Ok(n)
    }

    /// Deletes at most `limit` recorded requestIds (idempotent starts and completions) older
    /// than `retention`; returns how many. A retry after that runs as a new command.
    pub async fn clean_requests(&self, retention: jiff::SignedDuration, limit: usize) -> Result<usize, Error> {
        let n = self.delete_older(("KAIROS_REQUEST", "REQUEST_ID_", "CREATE_TIME_"), retention, limit).await?;
        if n > 0 {
            tracing::info!(rows = n, "history cleanup forgot requestIds past their retention");
        }
        Ok(n)
    }

    /// Deletes at most `limit` rows of `table` (with its key and time columns) whose time is
    /// older than `retention` by the database's clock, oldest first; returns how many.
    async fn delete_older(
        &self,
        (table, key, time): (&str, &str, &str),
        retention: jiff::SignedDuration,
        limit: usize,
    ) -> Result<usize, Error> {
        let now = self.store.db_now().await?;
        let cutoff = now.checked_sub(retention).unwrap_or(jiff::Timestamp::MIN);
        let n = self
            .store
            .write_all(&[Write::new(
                format!(
                    "DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {time} < ? ORDER BY {time} LIMIT ?)"
                ),
                vec![SqlValue::Timestamp(cutoff), SqlValue::Int(limit as i64)],
            )])
            .await?;
        Ok(n.first().copied().unwrap_or(0) as usize)
    }

    /// Runs [`Processes::clean_history`] (and [`Processes::clean_job_log`] with
    /// `job_log_retention`) every `every` until `stop` turns true; the first run a little
    /// after the start, so that a node's start-up stays quick.
    pub(crate) fn spawn_history_cleanup(
        self: &std::sync::Arc<Self>,
        every: Duration,
        job_log_retention: Option<jiff::SignedDuration>,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        const BATCH: usize = 1_000;
        let this = self.clone();
        tokio::spawn(async move {
            let mut wait = every.min(Duration::from_secs(60));
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                wait = every;
                loop {
                    let log = match job_log_retention {
                        Some(keep) => this.clean_job_log(keep, BATCH).await,
                        None => Ok(0),
                    };
                    let requests = this.clean_requests(super::REQUEST_RETENTION, BATCH).await;
                    let done = this.clean_history(BATCH).await.and_then(|n| Ok(n.max(log?).max(requests?)));
                    match done {
                        Ok(n) if n == BATCH && !*stop.borrow() => continue,
                        Ok(_) => break,
                        Err(e) => {
                            tracing::warn!(error = %e, "history cleanup failed; it runs again at its next interval");
                            break;
                        }
                    }
                }
            }
        })
    }
}
