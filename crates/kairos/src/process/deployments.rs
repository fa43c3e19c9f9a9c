//! Deployments after the fact (Camunda's and Flowable's deployment list, get and delete): the
//! rows are `kairos_store_engine::process`'s; deleting one takes its definitions, resources
//! and start events, and (with `cascade`) its running instances first. When it held the latest
//! version of a key, the version before takes its start events back, so that the key still
//! starts by its messages, signals and timers as it did before that deployment.

use super::{Processes, deploy, limits, process_of};
use crate::Error;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store_engine::process as tables;

pub use kairos_store_engine::process::DeploymentRow;

impl Processes {
    /// A page of deployments, of one name or all, and how many match in all.
    pub async fn deployments(
        &self,
        name: Option<&str>,
        newest_first: bool,
        start: u64,
        size: u64,
    ) -> Result<(Vec<DeploymentRow>, u64), Error> {
        Ok(tables::deployment_list(self.store.as_ref(), name, newest_first, start, size).await?)
    }

    /// Deployment `id`, or a 404.
    pub async fn deployment(&self, id: &str) -> Result<DeploymentRow, Error> {
        tables::deployment_get(self.store.as_ref(), id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("deployment {id} does not exist")))
        })
    }

    /// Deletes deployment `id`. Its running instances are deleted first with `cascade`
    /// (their history stays, delete reason `deployment deleted`); without, they refuse it (a
    /// conflict naming how many run).
    pub async fn delete_deployment(&self, id: &str, cascade: bool) -> Result<(), Error> {
        self.deployment(id).await?;
        let running = tables::deployment_instances(self.store.as_ref(), id).await?;
        if !running.is_empty() && !cascade {
            return Err(Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!(
                    "deployment {id} has {} running process instance(s); delete them first, or with cascade",
                    running.len()
                ),
            )));
        }
        for pi in &running {
            match self.delete_instance(pi, "deployment deleted").await {
                Ok(()) => {}
                // Ended meanwhile: nothing to delete.
                Err(Error::Process(p)) if p.kind == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let all = self.definitions_list(None, false).await?;
        let (gone, kept): (Vec<_>, Vec<_>) = all.into_iter().partition(|d| d.deployment_id == id);
        let mut writes = Vec::new();
        let now = self.store.db_now().await?;
        for d in &gone {
            let was_latest = !kept.iter().any(|k| k.key == d.key && k.version > d.version);
            let before = kept.iter().filter(|k| k.key == d.key).max_by_key(|k| k.version);
            if let (true, Some(before)) = (was_latest, before) {
                let defs = self.definitions(&before.id).await?;
                let process = process_of(&defs, &before.key)?;
                writes.extend(deploy::start_event_writes(process, &before.id, &now));
            }
        }
        writes.extend(tables::deployment_delete_writes(id));
        self.store.write_all(&writes).await.map_err(limits::checked_write)?;
        Ok(())
    }
}
