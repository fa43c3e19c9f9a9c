//! Business bindings (SPEC C3, seed 002 §4, §8.3, §19): a start may name the business object
//! it runs for. `business_process_binding`'s unique key (business type, business id, process
//! type, lifecycle) allows one instance per lifecycle, so
//! - a second start for a lifecycle that has its instance answers that instance (a retry of a
//!   worker whose write-back was lost adopts the instance instead of starting another, §19);
//! - of concurrent starts for one lifecycle exactly one commits; the others, finding the key
//!   taken, answer the winner's instance;
//! - a resubmission (after a rejection, a cancellation) is the next lifecycle number.
//!
//! The binding is written in the start's own transaction, and its status follows the instance
//! in the command that ends or deletes it (`store-engine`'s `instance_writes`).

use super::{InstanceView, Processes, invalid};
use crate::Error;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store::Sql;
use kairos_store_engine::business::{self as table, Binding};

/// The longest business type, business id and process type (seed 002 §4's VARCHAR(64)).
pub const MAX_BINDING_CHARS: usize = 64;

/// What a start names to bind its instance to a business object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BindingRequest {
    pub business_type: String,
    pub business_id: String,
    /// The kind of process run for the object ("APPROVAL"); empty: the definition's key.
    pub process_type: String,
    /// The lifecycle to bind: its instance if it has one, else (when it is the next one) a new
    /// instance. `None`: the latest lifecycle while its instance is ACTIVE, else the next one.
    pub lifecycle: Option<i64>,
}

/// Where a start with a binding goes.
pub(super) enum Resolved {
    /// The lifecycle has its instance: answer it.
    Existing(String),
    /// Start an instance for this (new) lifecycle.
    New(i64),
}

impl BindingRequest {
    /// Refuses what the table cannot hold, naming the field; fills in the process type.
    pub(super) fn checked(&self, definition_key: &str) -> Result<BindingRequest, Error> {
        let mut b = self.clone();
        if b.process_type.is_empty() {
            b.process_type = definition_key.chars().take(MAX_BINDING_CHARS).collect();
        }
        for (field, value) in [
            ("binding.businessType", &b.business_type),
            ("binding.businessId", &b.business_id),
            ("binding.processType", &b.process_type),
        ] {
            let n = value.chars().count();
            if n == 0 || n > MAX_BINDING_CHARS || value.chars().any(char::is_control) {
                return Err(invalid(
                    field,
                    &format!(
                        "{field} must have 1 to {MAX_BINDING_CHARS} characters and no control characters (it has {n})"
                    ),
                ));
            }
        }
        if let Some(n) = b.lifecycle
            && !(1..=i64::from(i32::MAX)).contains(&n)
        {
            return Err(invalid("binding.lifecycle", &format!("binding.lifecycle must be at least 1 (it is {n})")));
        }
        Ok(b)
    }

    /// Decides against the object's bindings of this process type (in lifecycle order).
    pub(super) fn resolve(&self, existing: &[Binding]) -> Result<Resolved, Error> {
        let latest = existing.iter().max_by_key(|b| b.lifecycle_no);
        let next = latest.map_or(1, |b| b.lifecycle_no + 1);
        match self.lifecycle {
            Some(n) => match existing.iter().find(|b| b.lifecycle_no == n) {
                Some(b) => Ok(Resolved::Existing(b.process_instance_id.clone())),
                None if n == next => Ok(Resolved::New(n)),
                None => Err(invalid(
                    "binding.lifecycle",
                    &format!(
                        "{} {} has no lifecycle {n} of {}; the next one is {next}",
                        self.business_type, self.business_id, self.process_type
                    ),
                )),
            },
            None => match latest {
                Some(b) if b.binding_status == "ACTIVE" => Ok(Resolved::Existing(b.process_instance_id.clone())),
                _ => Ok(Resolved::New(next)),
            },
        }
    }
}

impl Processes {
    /// The bindings of one business object (all process types and lifecycles).
    pub async fn bindings(&self, business_type: &str, business_id: &str) -> Result<Vec<Binding>, Error> {
        Ok(table::bindings_of(self.store.as_ref(), business_type, business_id, None).await?)
    }

    /// The binding of instance `id`, if it has one.
    pub async fn binding_of(&self, id: &str) -> Result<Option<Binding>, Error> {
        Ok(table::binding_of_instance(self.store.as_ref(), id).await?)
    }

    /// Seed 002 §39's binding gauges: running instances without a binding, and business
    /// objects with more than one ACTIVE binding of one process type (each counted up to
    /// [`kairos_store_engine::business::HEALTH_COUNT_CAP`]).
    pub async fn binding_health(&self) -> Result<(i64, i64), Error> {
        Ok(table::binding_health(self.store.as_ref()).await?)
    }

    /// The instance a binding already has, as a start answers it.
    pub(super) async fn bound_answer(&self, db: &dyn Sql, pi: &str) -> Result<InstanceView, Error> {
        kairos_store_engine::process::instance_get(db, pi).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(
                ErrorKind::Conflict,
                format!("the binding names process instance {pi}, whose history is gone"),
            ))
        })
    }

    /// After a start with binding `b` (for lifecycle `n`) failed with `error`: the instance that
    /// won the lifecycle when the failure was the binding's key taken meanwhile, else `error`.
    pub(super) async fn bound_after_conflict(
        &self,
        db: &dyn Sql,
        b: &BindingRequest,
        n: i64,
        error: Error,
    ) -> Result<InstanceView, Error> {
        if !matches!(&error, Error::Store(e) if e.kind == kairos_store::ErrorKind::Conflict) {
            return Err(error);
        }
        let existing = table::bindings_of(db, &b.business_type, &b.business_id, Some(&b.process_type)).await?;
        match existing.iter().find(|x| x.lifecycle_no == n) {
            Some(winner) => self.bound_answer(db, &winner.process_instance_id).await,
            None => Err(error),
        }
    }
}
