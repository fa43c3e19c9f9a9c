//! Call activities (SPEC P4): the called instance starts in its caller's transaction, an
//! ended one continues its caller, and a cancelled call activity deletes what it called.

use super::{Processes, deploy, process_of};
use crate::Error;
use kairos_process::{Command, Env, ErrorKind, Instance, ProcessError, Runtime};
use kairos_store::{Sql, Write};
use kairos_store_engine::process as tables;

impl Processes {
    /// Starts the instance a call activity asks for (SPEC P4: SUPER_EXEC_, variables in,
    /// business key); returns it and its writes, which commit with the caller's.
    pub(super) async fn start_called(
        &self,
        db: &dyn Sql,
        call: &kairos_process::CalledStart,
        caller: &str,
    ) -> Result<(Instance, Vec<Write>), Error> {
        let (def, now) = deploy::lookup(db, deploy::Lookup::LatestOf(&call.process_key)).await?;
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
        inst.super_exec = Some(call.execution_id.clone());
        inst.super_instance = Some(caller.to_string());
        let mut rt = Runtime::new(env, inst).with_scripts(self.script_runner());
        let command = Command::Start { variables: call.variables.clone(), start_user: None, start_event: None };
        let step = super::heavy::run(super::heavy::command(rt.instance(), &command), || rt.apply(command));
        let (after, mut staged) = self.drive(db, &mut rt, step).await?;
        let heavy = super::heavy::instance(&after);
        let mut writes = super::heavy::run(heavy, || tables::instance_writes(None, &after, self.history));
        writes.append(&mut staged);
        Ok((after, writes))
    }

    /// When `ended` was called by a call activity, the caller goes on (and its caller, when
    /// that ends it too): their writes join `writes`, in the same transaction.
    pub(super) async fn continue_callers(
        &self,
        db: &dyn Sql,
        ended: &Instance,
        writes: &mut Vec<Write>,
    ) -> Result<(), Error> {
        let mut current = ended.clone();
        // An instance deleted with a reason does not continue its caller: the caller is being
        // deleted (P10 cascades downwards) or the operator cancelled the called work.
        while let (Some(_), None, Some(exec), Some(caller)) =
            (&current.ended, &current.delete_reason, &current.super_exec, &current.super_instance)
        {
            let Some(before) = tables::instance_load(db, caller).await? else { break };
            let now = db.db_now().await?;
            let ended = Command::CalledEnded { execution_id: exec.clone(), variables: current.final_variables.clone() };
            let (after, changes) = Box::pin(self.run_command(db, &before, ended, now)).await?;
            writes.extend(changes);
            Box::pin(self.cancel_called(db, &after.interrupted_calls, None, writes)).await?;
            current = after;
        }
        Ok(())
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
                    None => format!(
                        "call activity {activity} of process instance {} was interrupted",
                        before.super_instance.as_deref().unwrap_or("?")
                    ),
                };
                let delete = Command::Delete { reason: reason.clone() };
                let (after, changes) = Box::pin(self.run_command(db, &before, delete, now)).await?;
                writes.extend(changes);
                Box::pin(self.cancel_called(db, &after.interrupted_calls, Some(&reason), writes)).await?;
            }
        }
        Ok(())
    }
}
