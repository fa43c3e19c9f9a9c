//! Withdraw, terminate and delete with their record (seed 002 §27).
//!
//! Ending an instance from outside is a business act, not only a runtime one: who did it, why,
//! where the instance was, which tasks, jobs and waits were still open, what state the business
//! record was in, which external actions were still pending and how they will be compensated.
//! [`Processes::terminate`] takes that record and writes it (`kairos_termination`) in the very
//! command that ends the instance, so the record exists exactly when the instance ended; it is
//! kept after the runtime rows go and shown by [`Processes::termination`] (REST
//! `GET /runtime/process-instances/{id}/termination`).
//!
//! A withdrawal is the starter taking the request back: only the user who started it, and only
//! while no user task has been completed (an approver who already acted makes it a matter for
//! termination by an administrator, with its compensation plan).

use super::{Processes, invalid};
use crate::Error;
use kairos_process::{Command, ErrorKind, ProcessError};
use kairos_store::Sql;
use kairos_store_engine::process::{self as tables, Termination};
use serde::{Deserialize, Serialize};

/// How an instance is ended from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TerminationKind {
    /// The starter takes the request back.
    Withdraw,
    /// An administrator stops it.
    #[default]
    Terminate,
    /// Removed (`DELETE /runtime/process-instances/{id}`).
    Delete,
}

impl TerminationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminationKind::Withdraw => "WITHDRAW",
            TerminationKind::Terminate => "TERMINATE",
            TerminationKind::Delete => "DELETE",
        }
    }
}

/// What the caller says about the termination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminateRequest {
    #[serde(default)]
    pub kind: TerminationKind,
    /// Who does it (required for WITHDRAW and TERMINATE).
    pub user: Option<String>,
    pub reason: String,
    /// The business record's state at the time (e.g. APPROVING).
    pub business_state: Option<String>,
    /// External actions still pending (a contract number reserved, a notice sent).
    pub pending_actions: Option<String>,
    /// How those are compensated.
    pub compensation_plan: Option<String>,
    /// Camunda's `skipCustomListeners`: the delete listeners of its tasks (and of its called
    /// instances' tasks) do not run. Not a field of the REST body.
    #[serde(skip)]
    pub skip_listeners: bool,
}

/// The record as the API shows it (its JSON columns as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminationRecord {
    pub process_instance_id: String,
    pub kind: String,
    pub user: Option<String>,
    pub reason: String,
    pub activities: serde_json::Value,
    pub tasks: serde_json::Value,
    pub jobs: serde_json::Value,
    pub waits: serde_json::Value,
    pub business_state: Option<String>,
    pub pending_actions: Option<String>,
    pub compensation_plan: Option<String>,
    pub node_id: Option<String>,
    pub recorded_at: jiff::Timestamp,
}

impl From<Termination> for TerminationRecord {
    fn from(t: Termination) -> Self {
        let json = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
        TerminationRecord {
            activities: json(&t.activities_json),
            tasks: json(&t.tasks_json),
            jobs: json(&t.jobs_json),
            waits: json(&t.waits_json),
            process_instance_id: t.process_instance_id,
            kind: t.kind,
            user: t.user_id,
            reason: t.reason,
            business_state: t.business_state,
            pending_actions: t.pending_actions,
            compensation_plan: t.compensation_plan,
            node_id: t.node_id,
            recorded_at: t.recorded_at,
        }
    }
}

/// The longest reason, state, pending actions and plan (their columns' widths).
const MAX_TEXT: usize = 4000;

fn check(req: &TerminateRequest) -> Result<(), Error> {
    let user = req.user.as_deref().map(str::trim).filter(|u| !u.is_empty());
    if req.kind != TerminationKind::Delete && user.is_none() {
        return Err(invalid("user", "say who withdraws or terminates the instance"));
    }
    if req.user.as_deref().is_some_and(|u| u.chars().count() > 255) {
        return Err(invalid("user", "at most 255 characters"));
    }
    if req.reason.trim().is_empty() {
        return Err(invalid("reason", "say why the instance is ended"));
    }
    for (field, v) in [
        ("reason", Some(&req.reason)),
        ("pendingActions", req.pending_actions.as_ref()),
        ("compensationPlan", req.compensation_plan.as_ref()),
    ] {
        if v.is_some_and(|v| v.chars().count() > MAX_TEXT) {
            return Err(invalid(field, "at most 4000 characters"));
        }
    }
    if req.business_state.as_deref().is_some_and(|s| s.chars().count() > 255) {
        return Err(invalid("businessState", "at most 255 characters"));
    }
    Ok(())
}

impl Processes {
    /// Withdraws, terminates or deletes instance `id` (its called instances first) and records
    /// the termination with it, in one transaction.
    pub async fn terminate(&self, id: &str, req: &TerminateRequest) -> Result<TerminationRecord, Error> {
        self.terminate_on(self.store.as_ref(), id, req).await?;
        self.termination(id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("the termination of {id} was not recorded")))
        })
    }

    pub(crate) async fn terminate_on(&self, db: &dyn Sql, id: &str, req: &TerminateRequest) -> Result<(), Error> {
        check(req)?;
        let Some(inst) = tables::instance_load(db, id).await? else {
            return Err(Error::Process(ProcessError::new(
                ErrorKind::NotFound,
                format!("process instance {id} is not running"),
            )));
        };
        if req.kind == TerminationKind::Withdraw {
            let user = req.user.as_deref().unwrap_or_default();
            if inst.start_user.as_deref() != Some(user) {
                return Err(Error::Process(ProcessError::new(
                    ErrorKind::Conflict,
                    format!(
                        "user: only the user who started instance {id} ({}) may withdraw it",
                        inst.start_user.as_deref().unwrap_or("nobody recorded")
                    ),
                )));
            }
            if tables::instance_has_completed_task(db, id).await? {
                return Err(Error::Process(ProcessError::new(
                    ErrorKind::Conflict,
                    format!("instance {id} has a completed task: too late to withdraw; an administrator terminates it"),
                )));
            }
        }
        // Where its tokens are (a boundary event's wait is listed with the jobs and waits).
        let activities: Vec<&str> =
            inst.executions.iter().filter(|e| e.is_active).filter_map(|e| e.activity.as_deref()).collect();
        let tasks: Vec<serde_json::Value> = inst
            .tasks
            .iter()
            .map(|t| {
                serde_json::json!({"id": t.id, "taskDefinitionKey": t.task_def_key, "name": t.name, "assignee": t.assignee,
                    "candidateUsers": t.candidate_users, "candidateGroups": t.candidate_groups})
            })
            .collect();
        let jobs: Vec<serde_json::Value> = inst
            .jobs
            .iter()
            .map(|j| serde_json::json!({"id": j.id, "kind": format!("{:?}", j.kind), "activityId": j.activity_id, "due": j.due}))
            .collect();
        let waits: Vec<serde_json::Value> = inst
            .subscriptions
            .iter()
            .map(|s| serde_json::json!({"eventType": s.event_type.as_str(), "eventName": s.event_name, "activityId": s.activity_id}))
            .collect();
        let record = Termination {
            process_instance_id: id.to_owned(),
            kind: req.kind.as_str().to_owned(),
            user_id: req.user.clone(),
            reason: req.reason.clone(),
            activities_json: serde_json::to_string(&activities).unwrap_or_else(|_| "[]".into()),
            tasks_json: serde_json::Value::Array(tasks).to_string(),
            jobs_json: serde_json::Value::Array(jobs).to_string(),
            waits_json: serde_json::Value::Array(waits).to_string(),
            business_state: req.business_state.clone(),
            pending_actions: req.pending_actions.clone(),
            compensation_plan: req.compensation_plan.clone(),
            node_id: Some(self.node_id.clone()),
            recorded_at: jiff::Timestamp::UNIX_EPOCH,
        };
        let write = tables::termination_insert(db.dialect(), &record);
        // DELETE_REASON_ as before for a plain delete; a withdrawal or termination says so.
        let reason = match req.kind {
            TerminationKind::Delete => req.reason.clone(),
            kind => format!("{}: {}", kind.as_str().to_lowercase(), req.reason),
        };
        for c in tables::called_by_instance(db, id).await? {
            Box::pin(self.delete_instance_with(db, &c, &reason, req.skip_listeners)).await?;
        }
        let delete = Command::Delete { reason, skip_listeners: req.skip_listeners };
        self.command_with(db, id, delete, &[], &[write]).await
    }

    /// The termination record of instance `id`, if it was withdrawn, terminated or deleted.
    pub async fn termination(&self, id: &str) -> Result<Option<TerminationRecord>, Error> {
        Ok(tables::termination_get(self.store.as_ref(), id).await?.map(TerminationRecord::from))
    }
}
