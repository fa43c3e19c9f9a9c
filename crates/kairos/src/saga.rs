//! Sagas outside BPMN (SPEC C8, seed 002 §23): a sequence of steps across systems, each a
//! local commit plus an action that can be compensated, for work no database transaction can
//! span (freeze a budget, reserve a contract number, push to an external archive).
//!
//! Every step is recorded (`kairos_saga_step`, keyed by the saga id and the step): a re-run of
//! the same saga id after a crash skips the steps recorded DONE and resumes where it stopped —
//! so a step whose effect happened but whose record did not is run again, with the same
//! idempotency key (`{saga}:{step}`), which its target must honour. When a step fails, the
//! steps done before it are compensated in reverse order, each at most once (its record says
//! COMPENSATED) and each given what its action answered. A compensation that keeps failing is
//! retried `attempts` times with a doubling wait, then recorded COMPENSATION_FAILED and handed
//! to people as an incident (rule `saga-compensation-failed`): §23's warning that compensation
//! is not time running backwards — a sent message is corrected, not unsent.
//!
//! A BPMN model compensates with its own events (docs/processes.md, "Compensation"); this is
//! for a Rust caller's own orchestration.

use crate::{Engine, Error};
use async_trait::async_trait;
use kairos_store::ErrorKind;
use kairos_store_engine::saga as rows;
use std::time::Duration;

/// One step of a saga.
#[async_trait]
pub trait SagaStep: Send + Sync {
    /// Stable across versions of the code: the record is keyed by the step's position, and
    /// its name is checked against it.
    fn name(&self) -> &str;

    /// Does the step; `key` is the same on every re-run of this step of this saga. The answer
    /// is kept and given to [`SagaStep::compensate`].
    async fn run(&self, key: &str) -> Result<serde_json::Value, String>;

    /// Undoes (or corrects) what `run` did; idempotent under `key`.
    async fn compensate(&self, key: &str, result: &serde_json::Value) -> Result<(), String>;
}

/// How a saga ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SagaOutcome {
    /// Every step done; their answers in order.
    Completed(Vec<serde_json::Value>),
    /// Step `failed` failed with `error`; the steps before it were compensated.
    Compensated { failed: String, error: String },
}

/// A saga to run.
pub struct Saga<'e> {
    engine: &'e Engine,
    id: String,
    steps: Vec<Box<dyn SagaStep>>,
    attempts: u32,
    backoff: Duration,
}

fn err(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::Store(kairos_store::Error::new(kind, message))
}

impl<'e> Saga<'e> {
    /// A saga with a caller-chosen id (e.g. the business object's): running it again resumes it.
    pub fn new(engine: &'e Engine, id: impl Into<String>) -> Saga<'e> {
        Saga { engine, id: id.into(), steps: Vec::new(), attempts: 5, backoff: Duration::from_millis(200) }
    }

    pub fn step(mut self, step: impl SagaStep + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// Attempts of each compensation before it is handed to people (default 5), and the first
    /// wait between them (default 200 ms, doubled each time).
    pub fn compensation_attempts(mut self, attempts: u32, backoff: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.backoff = backoff;
        self
    }

    /// Runs (or resumes) the saga. `Err` only for what stops it outright: a bad id, the store,
    /// a compensation out of attempts (its incident is open), a record that does not match the
    /// steps (another saga's id).
    pub async fn run(self) -> Result<SagaOutcome, Error> {
        if self.id.is_empty() || self.id.chars().count() > 128 {
            return Err(err(ErrorKind::Invalid, "saga id: 1..=128 characters"));
        }
        let db = self.engine.store().as_ref();
        let recorded = rows::steps(db, &self.id).await?;
        for r in &recorded {
            let known = self.steps.get(usize::try_from(r.step_no).unwrap_or(usize::MAX)).map(|s| s.name());
            if known != Some(r.step_name.as_str()) {
                return Err(err(
                    ErrorKind::Conflict,
                    format!("saga {}: step {} is recorded as {:?}, not {:?}", self.id, r.step_no, r.step_name, known),
                ));
            }
        }
        let status = |i: usize| recorded.iter().find(|r| r.step_no == i as i64);
        // A saga that began compensating goes on compensating.
        if let Some(failed) = recorded.iter().find(|r| r.status == "FAILED") {
            let i = usize::try_from(failed.step_no).unwrap_or(0);
            let error = failed.last_error.clone().unwrap_or_default();
            return self.compensate_before(i, &error).await;
        }
        let mut results = Vec::with_capacity(self.steps.len());
        for (i, step) in self.steps.iter().enumerate() {
            if let Some(r) = status(i).filter(|r| r.status == "DONE") {
                results.push(r.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default());
                continue;
            }
            let key = format!("{}:{}", self.id, step.name());
            match step.run(&key).await {
                Ok(v) => {
                    rows::record(db, &self.id, i as i64, step.name(), "DONE", Some(&v.to_string()), 1, None).await?;
                    results.push(v);
                }
                Err(e) => {
                    rows::record(db, &self.id, i as i64, step.name(), "FAILED", None, 1, Some(&e)).await?;
                    return self.compensate_before(i, &e).await;
                }
            }
        }
        Ok(SagaOutcome::Completed(results))
    }

    /// Compensates steps `failed - 1` down to 0, each once.
    async fn compensate_before(&self, failed: usize, error: &str) -> Result<SagaOutcome, Error> {
        let db = self.engine.store().as_ref();
        let recorded = rows::steps(db, &self.id).await?;
        for i in (0..failed).rev() {
            let Some(r) = recorded.iter().find(|r| r.step_no == i as i64) else { continue };
            if r.status != "DONE" && r.status != "COMPENSATION_FAILED" {
                continue;
            }
            let step = &self.steps[i];
            let key = format!("{}:{}", self.id, step.name());
            let result: serde_json::Value =
                r.result_json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or_default();
            let mut wait = self.backoff;
            let mut last = String::new();
            let mut done = false;
            for attempt in 1..=self.attempts {
                match step.compensate(&key, &result).await {
                    Ok(()) => {
                        rows::record(
                            db,
                            &self.id,
                            i as i64,
                            step.name(),
                            "COMPENSATED",
                            None,
                            i64::from(attempt),
                            None,
                        )
                        .await?;
                        done = true;
                        break;
                    }
                    Err(e) => {
                        last = e;
                        if attempt < self.attempts {
                            tokio::time::sleep(wait).await;
                            wait = wait.saturating_mul(2);
                        }
                    }
                }
            }
            if !done {
                rows::record(
                    db,
                    &self.id,
                    i as i64,
                    step.name(),
                    "COMPENSATION_FAILED",
                    None,
                    i64::from(self.attempts),
                    Some(&last),
                )
                .await?;
                self.open_incident(step.name(), &last).await?;
                return Err(err(
                    ErrorKind::Conflict,
                    format!(
                        "saga {}: compensating step {:?} failed {} times ({last}); an incident is open",
                        self.id,
                        step.name(),
                        self.attempts
                    ),
                ));
            }
        }
        let failed_name = self.steps.get(failed).map(|s| s.name().to_owned()).unwrap_or_default();
        Ok(SagaOutcome::Compensated { failed: failed_name, error: error.to_owned() })
    }

    async fn open_incident(&self, step: &str, error: &str) -> Result<(), Error> {
        let db = self.engine.store().as_ref();
        let evidence = serde_json::json!({"saga": self.id, "steps": rows::steps(db, &self.id).await?});
        let difference = format!("compensation of step {step:?} failed: {error}");
        crate::reconcile::incidents::open(
            db,
            &crate::reconcile::incidents::Opening {
                rule_id: "saga-compensation-failed",
                business_type: "SAGA",
                business_id: &self.id,
                business_state: None,
                process_instance_id: None,
                process_definition_id: None,
                difference: &difference,
                evidence_json: &evidence.to_string(),
                plan: "Find what the step left in the target system; correct it there (a compensation is a correction, not an undo), then run the saga again to finish compensating, and close the incident.",
                by: "saga",
            },
        )
        .await?;
        Ok(())
    }
}
