//! Process instance migration (SPEC P13): one running instance moves to another version of
//! its definition (or another definition) with a checked activity mapping, in one
//! transaction under the instance's REV_ lock.
//!
//! The check and the move are the pure runtime's ([`kairos_process::migrate`],
//! `Runtime::migrate`); this module picks the target, refuses what it cannot move safely —
//! a suspended instance or target, a job some node or external worker is running now, a dead
//! letter (its stored configuration names the old activity) — and writes the rows the diff of
//! the instance does not cover: every row's PROC_DEF_ID_, a task's key and name, an open
//! history record's activity, a kept job's activity.

use kairos_process::migrate as plan;
use kairos_process::{Env, ErrorKind, Instance, ProcessError, Runtime};
use kairos_store_engine::process::{self as tables, DefinitionFilter};

use super::deploy::{self, DefinitionInfo};
use super::limits;
use super::views::InstanceView;
use super::{CONFLICT_RETRIES, Processes, process_of};
use crate::Error;

/// Where an instance goes: a definition by id, or a version of a key (the instance's own key
/// and the latest version when left out), and which activities move where.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MigrateRequest {
    pub to_process_definition_id: Option<String>,
    pub to_process_definition_key: Option<String>,
    pub to_process_definition_version: Option<i64>,
    /// (`fromActivityId`, `toActivityId`); an active activity without one moves to the
    /// activity of the same id.
    pub activity_mappings: Vec<(String, String)>,
}

impl MigrateRequest {
    /// To the latest version of the instance's own definition key.
    pub fn latest() -> MigrateRequest {
        MigrateRequest::default()
    }

    pub fn to_definition(id: impl Into<String>) -> MigrateRequest {
        MigrateRequest { to_process_definition_id: Some(id.into()), ..Default::default() }
    }

    pub fn to_version(key: impl Into<String>, version: i64) -> MigrateRequest {
        MigrateRequest {
            to_process_definition_key: Some(key.into()),
            to_process_definition_version: Some(version),
            ..Default::default()
        }
    }

    /// Adds a mapping of `from` (an activity of the instance's definition) to `to`.
    pub fn map(mut self, from: impl Into<String>, to: impl Into<String>) -> MigrateRequest {
        self.activity_mappings.push((from.into(), to.into()));
        self
    }
}

/// One instance of a batch migration: moved (`error` is `None`) or left as it was, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationOutcome {
    pub process_instance_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Processes {
    /// Moves running instance `id` to the definition `req` names (SPEC P13) and returns it.
    /// Every problem with the mapping is an error naming the activity, and nothing changes.
    pub async fn migrate_instance(&self, id: &str, req: &MigrateRequest) -> Result<InstanceView, Error> {
        for _ in 0..CONFLICT_RETRIES {
            let Some(before) = tables::instance_load(self.store.as_ref(), id).await? else {
                return Err(process_error(ErrorKind::NotFound, format!("process instance {id} is not running")));
            };
            let target = self.migration_target(&before, req).await?;
            self.check_movable(&before).await?;
            let source_defs = self.definitions(&before.definition_id).await?;
            let target_defs = self.definitions(&target.id).await?;
            let source = process_of(&source_defs, &before.definition_key)?;
            let target_process = process_of(&target_defs, &target.key)?;
            let migration = plan::plan(&before, source, target_process, &req.activity_mappings)?;
            let now = self.store.db_now().await?;
            let mut ids = kairos_core::new_id;
            let env = Env { definitions: &target_defs, process: target_process, now, ids: &mut ids };
            let mut rt = Runtime::new(env, before.clone()).with_scripts(self.script_runner());
            rt.migrate(&migration, &target.id, &target.key)?;
            let after = rt.into_instance();
            let mut writes = tables::instance_writes(Some(&before), &after, self.history);
            // In the same transaction as the rows it deletes or rewrites: no job of the instance
            // was locked since check_movable (a node or worker would hold a job that changed).
            writes.push(tables::migration_guard(self.store.dialect(), id));
            writes.extend(tables::migration_writes(&before, &after));
            match self.store.write_all(&writes).await.map_err(limits::checked_write) {
                Ok(_) => return self.instance(id).await,
                Err(e) if e.kind == kairos_store::ErrorKind::Conflict => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(process_error(
            ErrorKind::Conflict,
            format!("process instance {id} kept changing under the migration ({CONFLICT_RETRIES} tries); try again"),
        ))
    }

    /// Moves every running instance of definition `from` (a version being retired) along
    /// `req`, each in its own transaction: one that cannot move is reported with why and left
    /// as it was, the others move. The ids come back in instance order.
    pub async fn migrate_instances_of(&self, from: &str, req: &MigrateRequest) -> Result<Vec<MigrationOutcome>, Error> {
        deploy::definition(self.store.as_ref(), from).await?;
        let ids = tables::instances_of_definition(self.store.as_ref(), from).await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in &ids {
            let error = match self.migrate_instance(id, req).await {
                Ok(_) => None,
                Err(Error::Process(e)) => Some(e.to_string()),
                Err(e) => return Err(e), // the store failed: stop, the rest stay where they are
            };
            out.push(MigrationOutcome { process_instance_id: id.to_string(), error });
        }
        Ok(out)
    }

    async fn migration_target(&self, inst: &Instance, req: &MigrateRequest) -> Result<DefinitionInfo, Error> {
        let store = self.store.as_ref();
        let target = match (&req.to_process_definition_id, req.to_process_definition_version) {
            // An instance moves within its tenant: another tenant's definition is not there.
            (Some(id), _) => Some(deploy::definition(store, id).await?)
                .filter(|d| d.tenant_id == inst.tenant_id)
                .ok_or_else(|| process_error(ErrorKind::NotFound, format!("process definition {id} does not exist")))?,
            (None, None) => {
                let key = req.to_process_definition_key.as_deref().unwrap_or(&inst.definition_key);
                deploy::latest(store, key, &inst.tenant_id).await?
            }
            (None, Some(version)) => {
                let key = req.to_process_definition_key.as_deref().unwrap_or(&inst.definition_key);
                let filter = DefinitionFilter { key: Some(key), tenant: Some(&inst.tenant_id), ..Default::default() };
                let all = tables::definition_query(store, &filter).await?;
                all.into_iter().find(|d| d.version == version).ok_or_else(|| {
                    process_error(ErrorKind::NotFound, format!("process definition '{key}' has no version {version}"))
                })?
            }
        };
        if target.suspended {
            return Err(process_error(
                ErrorKind::Conflict,
                format!("process definition {} is suspended: activate it before migrating to it", target.id),
            ));
        }
        Ok(target)
    }

    /// A suspended instance, a job running right now (on a node, or locked by an external
    /// worker) or a dead letter would be left pointing at the old model: refused.
    async fn check_movable(&self, inst: &Instance) -> Result<(), Error> {
        if inst.suspension_state == kairos_process::SuspensionState::Suspended {
            return Err(process_error(
                ErrorKind::Conflict,
                format!("process instance {} is suspended: activate it before migrating it", inst.id),
            ));
        }
        if let Some((job, owner)) = tables::instance_running_job(self.store.as_ref(), &inst.id).await? {
            return Err(process_error(
                ErrorKind::Conflict,
                format!("job {job} of the instance is running now (locked by {owner}): migrate when it is done"),
            ));
        }
        if let Some(dead) = tables::instance_dead_letter(self.store.as_ref(), &inst.id).await? {
            return Err(process_error(
                ErrorKind::Conflict,
                format!("dead letter job {dead} belongs to the instance: retry or delete it before migrating"),
            ));
        }
        Ok(())
    }
}

fn process_error(kind: ErrorKind, message: String) -> Error {
    Error::Process(ProcessError::new(kind, message))
}
