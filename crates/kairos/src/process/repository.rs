//! Deployments as a whole and definition queries (Flowable's `/repository/…`): list, read and
//! delete deployments and their resources; definitions by Flowable's filters; suspending a
//! definition with its running instances.
//!
//! Deleting a deployment (Flowable's `deleteDeployment(id, cascade)`):
//! * without `cascade`, a deployment whose definitions have running instances is refused (409
//!   naming them);
//! * with `cascade`, those instances are deleted first, each through the engine's own delete
//!   (its called instances, jobs, timers, subscriptions, termination record and history end
//!   as for any delete), then the history of every instance of its definitions, in batches;
//! * then one transaction deletes the definitions' jobs, subscriptions, identity links, the
//!   definitions, the resources and the deployment, guarded so that it rolls back if an
//!   instance of them exists by then (a timer or a message started one meanwhile): the
//!   deletion goes round again (with `cascade`) or answers 409. If a key's latest version goes,
//!   the version before it gets its start events back (timer jobs, message and signal start
//!   subscriptions), as Flowable does, in the same transaction.
//!
//! A failure midway leaves whole instances deleted and the deployment as it was: nothing the
//! engine later trips over (no instance without its definition, no timer start job of a
//! definition that is gone).

use super::{Processes, deploy};
use crate::Error;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store::Write;
use kairos_store_engine::process as tables;
use std::collections::HashSet;

pub use kairos_store_engine::process::{DefinitionFilter, DeploymentRow, ResourceRow, RunningInstance};

/// Instances (and histories) handled per read while deleting or suspending.
const BATCH: u64 = 100;

/// How often a deletion starts over after an instance appeared under it.
const ROUNDS: usize = 5;

/// Most running instances a refusal names.
const NAMED: usize = 10;

/// DELETE_REASON_ of the instances a cascading deletion deletes (Flowable's words).
pub const DEPLOYMENT_DELETED: &str = "deleted deployment";

/// What deleting a deployment did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeploymentDeleted {
    /// Running instances deleted (with `cascade`).
    pub instances: usize,
    /// Instances whose history was deleted (with `cascade`).
    pub histories: usize,
}

fn not_found(message: String) -> Error {
    Error::Process(ProcessError::new(ErrorKind::NotFound, message))
}

impl Processes {
    /// Deployments whose name, category and tenant equal the given ones, oldest first.
    pub async fn deployments(
        &self,
        name: Option<&str>,
        category: Option<&str>,
        tenant: Option<&str>,
    ) -> Result<Vec<DeploymentRow>, Error> {
        Ok(tables::deployment_list(self.store.as_ref(), name, category, tenant).await?)
    }

    /// Deployment `id`, or a 404.
    pub async fn deployment(&self, id: &str) -> Result<DeploymentRow, Error> {
        tables::deployment_get(self.store.as_ref(), id)
            .await?
            .ok_or_else(|| not_found(format!("deployment {id} does not exist")))
    }

    /// The resources of deployment `id` by name, or a 404 when there is no such deployment.
    pub async fn deployment_resources(&self, id: &str) -> Result<Vec<ResourceRow>, Error> {
        self.deployment(id).await?;
        Ok(tables::deployment_resources(self.store.as_ref(), id).await?)
    }

    /// The bytes of resource `name` of deployment `id`, or a 404 saying which is missing.
    pub async fn deployment_resource(&self, id: &str, name: &str) -> Result<Vec<u8>, Error> {
        match tables::deployment_resource_data(self.store.as_ref(), id, name).await? {
            Some(bytes) => Ok(bytes),
            None => {
                self.deployment(id).await?;
                Err(not_found(format!("deployment {id} has no resource named '{name}'")))
            }
        }
    }

    /// The definitions `filter` keeps, by key and version.
    pub async fn definitions_query(&self, filter: &DefinitionFilter<'_>) -> Result<Vec<deploy::DefinitionInfo>, Error> {
        Ok(tables::definition_query(self.store.as_ref(), filter).await?)
    }

    /// Suspends or activates definition `id` and, with `instances`, every running instance of
    /// it (each as [`Processes::set_instance_suspended`] does, jobs included). The definition
    /// first: no new instance starts while its running ones are being suspended.
    pub async fn set_definition_suspended_with(
        &self,
        id: &str,
        suspended: bool,
        instances: bool,
    ) -> Result<deploy::DefinitionInfo, Error> {
        let definition = self.set_definition_suspended(id, suspended).await?;
        if instances {
            let store = self.store.as_ref();
            // Each pass takes instances still in the other state; each one handled leaves it.
            let mut tried = HashSet::new();
            loop {
                let batch = tables::definition_instances(store, id, !suspended, BATCH).await?;
                if batch.is_empty() {
                    break;
                }
                stuck(&mut tried, batch.iter().map(String::as_str))?;
                for pi in batch {
                    match self.set_instance_suspended(&pi, suspended).await {
                        Ok(()) => {}
                        // Ended meanwhile.
                        Err(Error::Process(p)) if p.kind == ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(definition)
    }

    /// Deletes deployment `id` (see the module's doc); a 404 when there is none, a 409 naming
    /// running instances without `cascade`.
    pub async fn delete_deployment(&self, id: &str, cascade: bool) -> Result<DeploymentDeleted, Error> {
        self.delete_deployment_with(id, cascade, false).await
    }

    /// [`Processes::delete_deployment`]; with `skip_listeners` the cascade deletes its
    /// instances without running their tasks' delete listeners (Camunda's `skipCustomListeners`).
    pub async fn delete_deployment_with(
        &self,
        id: &str,
        cascade: bool,
        skip_listeners: bool,
    ) -> Result<DeploymentDeleted, Error> {
        self.deployment(id).await?;
        let store = self.store.as_ref();
        let mut done = DeploymentDeleted::default();
        for _ in 0..ROUNDS {
            if cascade {
                done.instances += self.delete_running(id, skip_listeners).await?;
                done.histories += self.delete_histories(id).await?;
            } else {
                let running = tables::deployment_running_instances(store, id, NAMED as u64 + 1).await?;
                if !running.is_empty() {
                    return Err(refused(id, &running));
                }
            }
            let restore = self.restore_start_events(id).await?;
            match store.write_all(&tables::deployment_delete(id, restore)).await {
                Ok(_) => {
                    tracing::info!(deployment = id, cascade, instances = done.instances, "deployment deleted");
                    return Ok(done);
                }
                // The guard: gone meanwhile (a concurrent delete), or an instance appeared.
                Err(e) if e.kind == kairos_store::ErrorKind::Conflict => {
                    self.deployment(id).await?;
                    tracing::debug!(deployment = id, "an instance appeared while deleting the deployment; again");
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Process(ProcessError::new(
            ErrorKind::Conflict,
            format!("instances of deployment {id} kept being started while it was deleted ({ROUNDS} tries); try again"),
        )))
    }

    /// Deletes the running instances of deployment `id`'s definitions; returns how many.
    async fn delete_running(&self, id: &str, skip_listeners: bool) -> Result<usize, Error> {
        let mut n = 0;
        let mut tried = HashSet::new();
        loop {
            let batch = tables::deployment_running_instances(self.store.as_ref(), id, BATCH).await?;
            if batch.is_empty() {
                return Ok(n);
            }
            stuck(&mut tried, batch.iter().map(|pi| pi.id.as_str()))?;
            for pi in batch {
                match self.delete_instance_with(self.store.as_ref(), &pi.id, DEPLOYMENT_DELETED, skip_listeners).await {
                    Ok(()) => n += 1,
                    // Deleted with its caller, or ended meanwhile.
                    Err(Error::Process(p)) if p.kind == ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// Deletes the history of the instances of deployment `id`'s definitions that are not
    /// running, a batch per transaction; returns how many.
    async fn delete_histories(&self, id: &str) -> Result<usize, Error> {
        let mut n = 0;
        loop {
            let ids = tables::deployment_ended_instances(self.store.as_ref(), id, BATCH).await?;
            if ids.is_empty() {
                return Ok(n);
            }
            self.store.write_all(&tables::history_delete(&ids)).await?;
            n += ids.len();
        }
    }

    /// For each key whose latest version is in deployment `id`: the start events of the version
    /// that becomes the latest once it is gone (none if it was the only one).
    async fn restore_start_events(&self, id: &str) -> Result<Vec<Write>, Error> {
        let store = self.store.as_ref();
        let mine = tables::definition_query(store, &DefinitionFilter { deployment_id: Some(id), ..Default::default() })
            .await?;
        let mut writes = Vec::new();
        for d in &mine {
            let filter = DefinitionFilter { key: Some(&d.key), tenant: Some(&d.tenant_id), ..Default::default() };
            let versions = tables::definition_query(store, &filter).await?;
            let latest = versions.iter().max_by_key(|v| v.version);
            if latest.is_none_or(|l| l.deployment_id != id) {
                continue;
            }
            let Some(previous) = versions.iter().filter(|v| v.deployment_id != id).max_by_key(|v| v.version) else {
                continue;
            };
            let defs = self.definitions(&previous.id).await?;
            let process = super::process_of(&defs, &previous.key)?;
            let now = store.db_now().await?;
            writes.extend(deploy::start_event_writes(process, (&previous.id, &previous.tenant_id), &now));
        }
        Ok(writes)
    }
}

/// Notes the instances of a batch; a 409 naming one when a batch holds only instances already
/// handled (one the engine cannot load stays listed: without this the loop would not end).
fn stuck<'a>(tried: &mut HashSet<String>, batch: impl Iterator<Item = &'a str>) -> Result<(), Error> {
    let mut fresh = false;
    let mut first = None;
    for pi in batch {
        first.get_or_insert_with(|| pi.to_string());
        fresh |= tried.insert(pi.to_string());
    }
    match (fresh, first) {
        (false, Some(pi)) => Err(Error::Process(ProcessError::new(
            ErrorKind::Conflict,
            format!(
                "process instance {pi} is still running after it was handled; see GET /management/doctor?processInstanceId={pi}"
            ),
        ))),
        _ => Ok(()),
    }
}

/// The 409 of a deletion without cascade: which instances run, and what to do.
fn refused(id: &str, running: &[RunningInstance]) -> Error {
    let named: Vec<String> =
        running.iter().take(NAMED).map(|r| format!("{} (definition {})", r.id, r.definition_id)).collect();
    let more = if running.len() > NAMED { ", and more" } else { "" };
    Error::Process(ProcessError::new(
        ErrorKind::Conflict,
        format!(
            "deployment {id} has running process instances: {}{more}; delete them, or the deployment with cascade=true",
            named.join(", ")
        ),
    ))
}
