//! An incident's life (seed 002 §31, §38): OPEN → APPROVED (a person approves a plan) →
//! EXECUTED (another person runs it: the executor may not be the approver) → CLOSED; or OPEN →
//! CLOSED, dismissed with a note. The execution goes through the engine's API — delete an
//! instance with a reason, write the business status back, retry an outbox event — or records a
//! manual action taken elsewhere; never an edit of ACT tables. Its before and after are the
//! record's evidence as reconciliation sees it, and the verification is the rule that record
//! matches after. Every step is appended to the audit trail.

use super::rules::State;
use crate::{Engine, Error};
use jiff::Timestamp;
use kairos_store::{ErrorKind, SqlValue};
use kairos_store_engine::incidents as db;
pub use kairos_store_engine::incidents::{Filter, Incident};
use serde::{Deserialize, Serialize};

fn err(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::Store(kairos_store::Error::new(kind, message))
}

/// What an executor does about an incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum IncidentAction {
    /// Deletes a process instance through the engine (its binding follows: DELETED).
    #[serde(rename_all = "camelCase")]
    DeleteInstance { process_instance_id: String, reason: String },
    /// Writes the business record's status back to `to` (the source's first value for it),
    /// only while it is still what it was when the incident was read.
    WriteBack { to: State },
    /// Sends a FAILED outbox event again (FAILED → PENDING, its attempts counted afresh).
    #[serde(rename_all = "camelCase")]
    OutboxRetry { event_id: String },
    /// Something done outside the engine (asked the target, a compensation, a customer call).
    Manual { note: String },
}

#[derive(Debug, Serialize)]
struct Step<'a> {
    at: String,
    by: &'a str,
    what: &'a str,
}

/// What an incident is opened with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opening<'a> {
    pub rule_id: &'a str,
    pub business_type: &'a str,
    pub business_id: &'a str,
    pub business_state: Option<&'a str>,
    pub process_instance_id: Option<&'a str>,
    pub process_definition_id: Option<&'a str>,
    pub difference: &'a str,
    pub evidence_json: &'a str,
    pub plan: &'a str,
    /// Who opens it (the reconciler, a saga), for the audit trail.
    pub by: &'a str,
}

/// Opens an incident (OPEN) unless one of its rule and record is open: answers its id, or
/// `None` when one was already open.
pub(crate) async fn open(db: &dyn kairos_store::Sql, o: &Opening<'_>) -> Result<Option<String>, Error> {
    let id = kairos_core::new_id();
    let audit = audit_start(db.db_now().await?, o.by, &format!("opened by rule {}", o.rule_id));
    let opened = db::insert(
        db,
        &db::NewIncident {
            id: &id,
            kind: db::INCIDENT,
            rule_id: o.rule_id,
            business_type: o.business_type,
            business_id: o.business_id,
            business_state: o.business_state,
            process_instance_id: o.process_instance_id,
            process_definition_id: o.process_definition_id,
            difference: o.difference,
            evidence_json: o.evidence_json,
            plan: Some(o.plan),
            status: "OPEN",
            executed_by: None,
            action_json: None,
            before_json: None,
            after_json: None,
            verification: None,
            audit_json: &audit,
        },
    )
    .await?;
    Ok(opened.then_some(id))
}

/// The first entry of an audit trail.
pub fn audit_start(at: Timestamp, by: &str, what: &str) -> String {
    serde_json::to_string(&[Step { at: at.to_string(), by, what }]).unwrap_or_else(|_| "[]".into())
}

fn audit_append(trail: &str, at: Timestamp, by: &str, what: &str) -> String {
    let mut steps: Vec<serde_json::Value> = serde_json::from_str(trail).unwrap_or_default();
    steps.push(serde_json::json!({"at": at.to_string(), "by": by, "what": what}));
    serde_json::Value::Array(steps).to_string()
}

fn check_user(user: &str) -> Result<(), Error> {
    if user.trim().is_empty() || user.chars().count() > 255 {
        return Err(err(ErrorKind::Invalid, "user: name who does this (1..=255 characters)"));
    }
    Ok(())
}

fn t(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

/// The incidents of an engine.
#[derive(Debug, Clone, Copy)]
pub struct Incidents<'a> {
    pub(crate) engine: &'a Engine,
}

impl Incidents<'_> {
    pub async fn get(&self, id: &str) -> Result<Option<Incident>, Error> {
        Ok(db::get(self.engine.store().as_ref(), id).await?)
    }

    async fn must(&self, id: &str) -> Result<Incident, Error> {
        self.get(id).await?.ok_or_else(|| err(ErrorKind::NotFound, format!("no incident {id:?}")))
    }

    /// Counts by (kind, status), for `/metrics`.
    pub async fn counts(&self) -> Result<Vec<(String, String, i64)>, Error> {
        Ok(db::counts(self.engine.store().as_ref()).await?)
    }

    /// Failed compensation handlers' jobs: (retrying, dead letters, the oldest dead letter's
    /// creation), for `/metrics`.
    pub async fn compensation_failures(&self) -> Result<(i64, i64, Option<Timestamp>), Error> {
        Ok(kairos_store_engine::doctor::cluster::compensation_failures(self.engine.store().as_ref()).await?)
    }

    /// When the oldest incident waiting for a person was opened.
    pub async fn oldest_open(&self) -> Result<Option<Timestamp>, Error> {
        Ok(db::oldest_open(self.engine.store().as_ref()).await?)
    }

    pub async fn list(&self, f: &Filter, limit: u32) -> Result<Vec<Incident>, Error> {
        Ok(db::list(self.engine.store().as_ref(), f, limit.clamp(1, 1_000)).await?)
    }

    /// OPEN → APPROVED by `user`, with the plan to run (the rule's when `None`).
    pub async fn approve(&self, id: &str, user: &str, plan: Option<&str>) -> Result<Incident, Error> {
        check_user(user)?;
        if plan.is_some_and(|p| p.chars().count() > 2000) {
            return Err(err(ErrorKind::Invalid, "plan: at most 2000 characters"));
        }
        let i = self.must(id).await?;
        let store = self.engine.store();
        let now = store.db_now().await?;
        let audit = audit_append(&i.audit_json, now, user, &format!("approved: {}", plan.unwrap_or("the rule's plan")));
        let plan = plan.map(str::to_owned).or(i.plan.clone());
        let moved = db::step(
            store.as_ref(),
            id,
            &["OPEN"],
            "status = 'APPROVED', approved_by = ?, plan = ?, audit_json = ?",
            vec![t(user), plan.as_deref().map_or(SqlValue::Null, t), t(&audit)],
        )
        .await?;
        if !moved {
            return Err(err(
                ErrorKind::Conflict,
                format!("incident {id} is {}, not OPEN: it cannot be approved", i.status),
            ));
        }
        self.must(id).await
    }

    /// APPROVED → EXECUTED by `user`, who must not be the approver: runs `action` through the
    /// engine and records before, after and the verification.
    pub async fn execute(&self, id: &str, user: &str, action: &IncidentAction) -> Result<Incident, Error> {
        check_user(user)?;
        let i = self.must(id).await?;
        if i.status != "APPROVED" {
            return Err(err(
                ErrorKind::Conflict,
                format!("incident {id} is {}: only an APPROVED incident is executed", i.status),
            ));
        }
        if i.approved_by.as_deref() == Some(user) {
            return Err(err(
                ErrorKind::Conflict,
                format!(
                    "user: {user:?} approved incident {id}; another person executes it (§31: approver and executor differ)"
                ),
            ));
        }
        let before = self.inspect(&i).await?;
        self.run(&i, action, &before).await?;
        let after = self.inspect(&i).await?;
        let verification = match &after {
            Some(a) => {
                format!("after: rule {} ({})", a["ruleId"].as_str().unwrap_or("?"), a["action"].as_str().unwrap_or("?"))
            }
            None => "after: the record is not reconciled by this node (no source declared)".into(),
        };
        let store = self.engine.store();
        let now = store.db_now().await?;
        let action_json = serde_json::to_string(action).unwrap_or_default();
        let audit = audit_append(&i.audit_json, now, user, &format!("executed: {action_json}"));
        let moved = db::step(
            store.as_ref(),
            id,
            &["APPROVED"],
            "status = 'EXECUTED', executed_by = ?, action_json = ?, before_json = ?, after_json = ?, verification = ?, audit_json = ?",
            vec![
                t(user),
                t(&action_json),
                t(&before.map_or("null".into(), |b| b.to_string())),
                t(&after.map_or("null".into(), |a| a.to_string())),
                t(&verification),
                t(&audit),
            ],
        )
        .await?;
        if !moved {
            return Err(err(ErrorKind::Conflict, format!("incident {id} changed while it was executed")));
        }
        self.must(id).await
    }

    /// → CLOSED by `user` with a note (an OPEN one is dismissed); the record is no longer frozen.
    pub async fn close(&self, id: &str, user: &str, note: &str) -> Result<Incident, Error> {
        check_user(user)?;
        if note.trim().is_empty() || note.chars().count() > 2000 {
            return Err(err(ErrorKind::Invalid, "note: say why it is closed (1..=2000 characters)"));
        }
        let i = self.must(id).await?;
        let store = self.engine.store();
        let now = store.db_now().await?;
        let audit = audit_append(&i.audit_json, now, user, &format!("closed: {note}"));
        let moved = db::step(
            store.as_ref(),
            id,
            &["OPEN", "APPROVED", "EXECUTED"],
            "status = 'CLOSED', open_key = NULL, audit_json = ?",
            vec![t(&audit)],
        )
        .await?;
        if !moved {
            return Err(err(ErrorKind::Conflict, format!("incident {id} is already CLOSED")));
        }
        self.must(id).await
    }

    /// The record's evidence and the rule it matches now, when this node reconciles its type.
    async fn inspect(&self, i: &Incident) -> Result<Option<serde_json::Value>, Error> {
        let Some(r) = self.engine.reconciler() else { return Ok(None) };
        r.inspect(&i.business_type, &i.business_id).await
    }

    async fn run(
        &self,
        i: &Incident,
        action: &IncidentAction,
        before: &Option<serde_json::Value>,
    ) -> Result<(), Error> {
        match action {
            IncidentAction::DeleteInstance { process_instance_id, reason } => {
                if reason.trim().is_empty() {
                    return Err(err(ErrorKind::Invalid, "action.reason: say why the instance is deleted"));
                }
                self.engine.processes().delete_instance(process_instance_id, reason).await
            }
            IncidentAction::WriteBack { to } => {
                let Some(r) = self.engine.reconciler() else {
                    return Err(err(
                        ErrorKind::Invalid,
                        "action: write-back needs a reconcile configuration on this node (kairos serve --reconcile FILE)",
                    ));
                };
                let from = before.as_ref().and_then(|b| b["businessStatus"].as_str()).map(str::to_owned);
                let Some(from) = from else {
                    return Err(err(
                        ErrorKind::NotFound,
                        format!("no {} record {:?} to write back", i.business_type, i.business_id),
                    ));
                };
                r.write_back(&i.business_type, &i.business_id, &from, *to).await
            }
            IncidentAction::OutboxRetry { event_id } => {
                if self.engine.outbox().retry(event_id).await? {
                    Ok(())
                } else {
                    Err(err(ErrorKind::NotFound, format!("action.eventId: no FAILED outbox event {event_id:?}")))
                }
            }
            IncidentAction::Manual { note } => {
                if note.trim().is_empty() || note.chars().count() > 2000 {
                    return Err(err(ErrorKind::Invalid, "action.note: say what was done (1..=2000 characters)"));
                }
                Ok(())
            }
        }
    }
}
