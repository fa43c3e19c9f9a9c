//! Call activities (SPEC P4): the called instance starts in its caller's transaction, an
//! ended one continues its caller, what it raises is thrown again from its call activity, and
//! a cancelled call activity deletes what it called.

use super::{Processes, deploy, process_of};
use crate::Error;
use kairos_process::{Command, Env, ErrorKind, Instance, ProcessError, Runtime};
use kairos_store::{Sql, Write};
use kairos_store_engine::process as tables;

impl Processes {
    /// Starts the instance a call activity of `caller` (its id and tenant) asks for (SPEC P4:
    /// SUPER_EXEC_, variables in, business key), the latest version of the called key in the
    /// caller's tenant; returns it and what its handlers staged. Its own writes are computed by
    /// the caller ([`Processes::called_started`]), once it knows whether the call survived
    /// what the new instance raised.
    pub(super) async fn start_called(
        &self,
        db: &dyn Sql,
        call: &kairos_process::CalledStart,
        (caller, tenant): &(String, String),
    ) -> Result<(Instance, Vec<Write>), Error> {
        let (def, now) = deploy::lookup(db, deploy::Lookup::LatestOf(&call.process_key, tenant)).await?;
        if def.suspended {
            return Err(Error::Process(ProcessError::at(
                ErrorKind::Conflict,
                &call.activity_id,
                format!("call activity '{}': process definition {} is suspended", call.activity_id, def.id),
            )));
        }
        let defs = self.definitions(&def.id).await?;
        let process = process_of(&defs, &def.key)?;
        let mut ids = kairos_core::new_id;
        let mut env = Env { definitions: &defs, process, now, ids: &mut ids };
        let mut inst = Runtime::new_instance(&mut env, &def.id, call.business_key.clone());
        inst.tenant_id = def.tenant_id.clone();
        inst.super_exec = Some(call.execution_id.clone());
        inst.super_instance = Some(caller.clone());
        let mut rt = Runtime::new(env, inst).with_scripts(self.script_runner());
        let command = Command::Start { variables: call.variables.clone(), start_user: None, start_event: None };
        let step = super::heavy::run(super::heavy::command(rt.instance(), &command), || rt.apply(command));
        self.drive(db, &mut rt, step).await
    }

    /// The caller `rt` waits for the instance `called` it has just started: it learns whether
    /// that ended and what it raised. When a catch in the caller interrupted the call, the
    /// new instance is deleted before it is ever stored. Returns the new instance's writes.
    pub(super) async fn called_started(
        &self,
        db: &dyn Sql,
        rt: &mut Runtime<'_>,
        call: &kairos_process::CalledStart,
        mut called: Instance,
        staged: Vec<Write>,
    ) -> Result<(kairos_process::Result<kairos_process::Step>, Vec<Write>), Error> {
        let raised = std::mem::take(&mut called.raised);
        let mark = rt.instance().interrupted_calls.len();
        let step = rt.resume_called(returned(&called), raised);
        let cancelled = rt.instance().interrupted_calls[mark..].iter().any(|(e, _)| *e == call.execution_id);
        if cancelled {
            let reason = interrupted(&call.activity_id, &rt.instance().id);
            called = self.abandon(db, called, reason).await?;
        }
        let heavy = super::heavy::instance(&called);
        let mut writes = super::heavy::run(heavy, || tables::instance_writes(None, &called, self.history));
        writes.extend(staged);
        Ok((step, writes))
    }

    /// A called instance whose call activity a catch interrupted, in the command that raised
    /// what was caught: deleted with `reason` (in memory: its rows are written once). One that
    /// ran to its end in that command (an escalation end event) keeps its end, with `reason`.
    async fn abandon(&self, db: &dyn Sql, mut called: Instance, reason: String) -> Result<Instance, Error> {
        if called.ended.is_some() {
            called.delete_reason = Some(reason);
            return Ok(called);
        }
        let now = db.db_now().await?;
        Ok(Box::pin(self.apply(db, &called, Command::Delete { reason, skip_listeners: false }, now)).await?.0)
    }

    /// Finishes a command that took instance `before` to `after` (`staged`: what its handlers
    /// staged) and returns every write of it, for one transaction:
    /// - what `after` raised and its end go to the call activity that called it (one
    ///   [`Command::CalledRaised`] or [`Command::CalledEnded`] on the caller, settled in turn,
    ///   so a chain of callers goes on as far as it must);
    /// - when a catch there interrupted the call, `after` is deleted, in memory, so that its
    ///   rows are written once;
    /// - the instances its own interrupted call activities called are deleted.
    pub(super) async fn settle(
        &self,
        db: &dyn Sql,
        before: Option<&Instance>,
        mut after: Instance,
        staged: Vec<Write>,
    ) -> Result<(Instance, Vec<Write>), Error> {
        let mut caller_writes = Vec::new();
        let ended = returned(&after);
        let returns = ended.is_some() || !after.raised.is_empty();
        if let (true, Some(exec), Some(caller)) = (returns, after.super_exec.clone(), after.super_instance.clone())
            && let Some(caller_before) = tables::instance_load(db, &caller).await?
        {
            let raised = std::mem::take(&mut after.raised);
            let command = match ended {
                Some(variables) if raised.is_empty() => Command::CalledEnded { execution_id: exec.clone(), variables },
                ended => Command::CalledRaised { execution_id: exec.clone(), raised, ended },
            };
            let now = db.db_now().await?;
            let (mut caller_after, caller_staged) = Box::pin(self.apply(db, &caller_before, command, now)).await?;
            if let Some(i) = caller_after.interrupted_calls.iter().position(|(e, _)| *e == exec) {
                let (_, activity) = caller_after.interrupted_calls.remove(i);
                after = self.abandon(db, after, interrupted(&activity, &caller)).await?;
            }
            caller_writes = Box::pin(self.settle(db, Some(&caller_before), caller_after, caller_staged)).await?.1;
        }
        let heavy = before.is_some_and(super::heavy::instance) || super::heavy::instance(&after);
        let mut writes = super::heavy::run(heavy, || tables::instance_writes(before, &after, self.history));
        writes.extend(staged);
        Box::pin(self.cancel_called(db, &after.interrupted_calls, None, &mut writes)).await?;
        writes.extend(caller_writes);
        Ok((after, writes))
    }

    /// Deletes the instances that the interrupted call activities `calls` (execution, activity)
    /// called, and what those called in turn (with the first one's `reason`), in the caller's
    /// transaction (their REV_ checks included: a called instance changing meanwhile re-runs
    /// the whole command). Flowable does the same; left running, a called instance would end
    /// into a caller that moved on.
    pub(super) async fn cancel_called(
        &self,
        db: &dyn Sql,
        calls: &[(String, String)],
        reason: Option<&str>,
        writes: &mut Vec<Write>,
    ) -> Result<(), Error> {
        if calls.is_empty() {
            return Ok(());
        }
        let now = db.db_now().await?;
        for (exec, activity) in calls {
            for id in &tables::called_instances(db, exec).await? {
                let Some(before) = tables::instance_load(db, id).await? else { continue };
                let reason = match reason {
                    Some(r) => r.to_string(),
                    None => interrupted(activity, before.super_instance.as_deref().unwrap_or("?")),
                };
                let delete = Command::Delete { reason: reason.clone(), skip_listeners: false };
                let (after, changes) = Box::pin(self.run_command(db, &before, delete, now)).await?;
                writes.extend(changes);
                Box::pin(self.cancel_called(db, &after.interrupted_calls, Some(&reason), writes)).await?;
            }
        }
        Ok(())
    }
}

/// The final variables of `called` when it ended by itself (not deleted): what its call
/// activity's `out` mappings read.
fn returned(called: &Instance) -> Option<serde_json::Map<String, serde_json::Value>> {
    (called.ended.is_some() && called.delete_reason.is_none()).then(|| called.final_variables.clone())
}

/// DELETE_REASON_ of an instance whose call activity was interrupted.
fn interrupted(activity: &str, caller: &str) -> String {
    format!("call activity {activity} of process instance {caller} was interrupted")
}
