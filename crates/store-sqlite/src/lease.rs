//! Keeping and giving back leases: extension while a handler runs, and hand-back when a node
//! shuts down. Both are fenced by the lease (owner + attempt), so a lease another node took over
//! is never extended or released by its old owner.

use crate::acquire::add;
use crate::errors::db_err;
use crate::joblog::{JobFacts, LogRow, insert_log_rows};
use crate::time::to_text;
use crate::{SqliteStore, now_on, rows};
use kairos_core::JobLogOutcome;
use kairos_store::{JobReleaseParams, LeaseExtendParams, Result};
use serde_json::json;
use std::collections::HashSet;

impl SqliteStore {
    /// Moves LOCK_EXP_TIME_ of the leases `node` still holds to the database now + lock time.
    pub(crate) async fn lease_extend(&self, p: &LeaseExtendParams) -> Result<Vec<String>> {
        const OP: &str = "job_lease_extend";
        if p.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let rows = sqlx::query(include_str!("sql/job_lease_extend.sql"))
            .bind(json!(p.jobs).to_string())
            .bind(&p.node)
            .bind(to_text(add(now, p.lock_time, "lock time")?)?)
            .bind(to_text(now)?)
            .bind(p.start)
            .fetch_all(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        w.commit(OP).await?;
        let extended: HashSet<String> = rows.iter().map(|r| rows::text(r, "ID_")).collect::<Result<_>>()?;
        let mut out: Vec<String> = p.jobs.iter().map(|(id, _)| id.clone()).filter(|id| extended.contains(id)).collect();
        out.dedup();
        Ok(out)
    }

    /// Hands leases back without spending a retry, logging each attempt as abandoned.
    pub(crate) async fn release(&self, p: &JobReleaseParams) -> Result<u64> {
        const OP: &str = "job_release";
        if p.jobs.is_empty() {
            return Ok(0);
        }
        let mut w = self.write(OP).await?;
        let now = now_on(&mut w.tx, None, OP).await?;
        let held = sqlx::query(include_str!("sql/job_fenced_many.sql"))
            .bind(json!(p.jobs).to_string())
            .bind(&p.node)
            .fetch_all(&mut *w.tx)
            .await
            .map_err(db_err(OP))?;
        let mut held = rows::jobs(&held)?;
        held.sort_by(|a, b| a.id.cmp(&b.id));
        held.dedup_by(|a, b| a.id == b.id);
        if held.is_empty() {
            w.commit(OP).await?;
            return Ok(0);
        }
        let ids = json!(held.iter().map(|j| &j.id).collect::<Vec<_>>()).to_string();
        let released = sqlx::query(include_str!("sql/job_release.sql"))
            .bind(ids)
            .execute(&mut *w.tx)
            .await
            .map_err(db_err(OP))?
            .rows_affected();
        let log = held
            .iter()
            .map(|j| {
                Ok(LogRow {
                    job: JobFacts::of_job(j)?,
                    attempt: j.attempts,
                    node: Some(p.node.clone()),
                    start: j.lock_time,
                    end: Some(now),
                    outcome: JobLogOutcome::Abandoned,
                    message: Some(p.reason.clone()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        insert_log_rows(&mut w.tx, &log, OP).await?;
        w.commit(OP).await?;
        Ok(released)
    }
}
