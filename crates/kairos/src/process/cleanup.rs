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
use kairos_store_engine::process as tables;
use std::time::Duration;

impl Processes {
    /// Deletes the history of at most `limit` instances past their definition's time to live;
    /// returns how many. Call again while it returns `limit`.
    pub async fn clean_history(&self, limit: usize) -> Result<usize, Error> {
        let store = self.store.as_ref();
        let now = store.db_now().await?;
        let mut ids: Vec<String> = Vec::new();
        for days in tables::history_ttls(store).await? {
            let want = limit.saturating_sub(ids.len());
            if want == 0 {
                break;
            }
            let cutoff = now
                .checked_sub(jiff::SignedDuration::from_hours(days.saturating_mul(24)))
                .unwrap_or(jiff::Timestamp::MIN);
            ids.extend(tables::history_expired(store, days, cutoff, want).await?);
        }
        if ids.is_empty() {
            return Ok(0);
        }
        store.write_all(&tables::history_delete(&ids)).await?;
        tracing::info!(
            instances = ids.len(),
            "history cleanup deleted the history of ended instances past their time to live"
        );
        Ok(ids.len())
    }

    /// Deletes at most `limit` rows of the job log (any job's, in or outside a process) that
    /// ended longer than `retention` ago; returns how many.
    pub async fn clean_job_log(&self, retention: jiff::SignedDuration, limit: usize) -> Result<usize, Error> {
        let cutoff = self.cutoff(retention).await?;
        let n = tables::job_log_delete_older(self.store.as_ref(), cutoff, limit).await? as usize;
        if n > 0 {
            tracing::info!(rows = n, "history cleanup deleted job log rows past their retention");
        }
        Ok(n)
    }

    /// Deletes at most `limit` recorded requestIds (idempotent starts and completions) older
    /// than `retention`; returns how many. A retry after that runs as a new command.
    pub async fn clean_requests(&self, retention: jiff::SignedDuration, limit: usize) -> Result<usize, Error> {
        let cutoff = self.cutoff(retention).await?;
        let n = tables::requests_delete_older(self.store.as_ref(), cutoff, limit).await? as usize;
        if n > 0 {
            tracing::info!(rows = n, "history cleanup forgot requestIds past their retention");
        }
        Ok(n)
    }

    /// The instant `retention` before the database's now.
    async fn cutoff(&self, retention: jiff::SignedDuration) -> Result<jiff::Timestamp, Error> {
        let now = self.store.db_now().await?;
        Ok(now.checked_sub(retention).unwrap_or(jiff::Timestamp::MIN))
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
