//! Sagas outside BPMN (SPEC C8, seed 002 §23), both backends: steps recorded, a failure
//! compensates the done steps in reverse order, each once and given its action's answer; a
//! re-run resumes from the record (nothing run or compensated twice); a compensation out of
//! attempts opens an incident and a later run finishes compensating.

mod common;

use async_trait::async_trait;
use common::{Backend, Fixture};
use kairos::saga::{Saga, SagaOutcome, SagaStep};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Log = Arc<Mutex<Vec<String>>>;
/// Per step: (its run fails, its compensation fails).
type Flags = [(Arc<Mutex<bool>>, Arc<Mutex<bool>>); 3];

struct Step {
    name: &'static str,
    log: Log,
    /// run fails while this says so
    fail_run: Arc<Mutex<bool>>,
    fail_compensate: Arc<Mutex<bool>>,
}

#[async_trait]
impl SagaStep for Step {
    fn name(&self) -> &str {
        self.name
    }
    async fn run(&self, key: &str) -> Result<serde_json::Value, String> {
        self.log.lock().unwrap().push(format!("run {key}"));
        if *self.fail_run.lock().unwrap() {
            return Err(format!("{} is down", self.name));
        }
        Ok(json!({"ref": format!("{}-1", self.name)}))
    }
    async fn compensate(&self, key: &str, result: &serde_json::Value) -> Result<(), String> {
        self.log.lock().unwrap().push(format!("undo {key} {}", result["ref"].as_str().unwrap_or("?")));
        if *self.fail_compensate.lock().unwrap() { Err("still down".into()) } else { Ok(()) }
    }
}

fn steps(log: &Log, flags: &Flags) -> [Step; 3] {
    let names = ["freezeBudget", "createContract", "pushArchive"];
    std::array::from_fn(|i| Step {
        name: names[i],
        log: log.clone(),
        fail_run: flags[i].0.clone(),
        fail_compensate: flags[i].1.clone(),
    })
}

fn flags() -> Flags {
    std::array::from_fn(|_| (Arc::default(), Arc::default()))
}

async fn a_failed_step_compensates_the_done_ones_in_reverse_once(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let e = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let log: Log = Arc::default();
    let f = flags();
    *f[2].0.lock().unwrap() = true;
    let saga = |log: &Log| {
        let [a, b, c] = steps(log, &f);
        Saga::new(&e, "contract-42").step(a).step(b).step(c).compensation_attempts(2, Duration::from_millis(10))
    };
    let out = saga(&log).run().await.unwrap();
    assert_eq!(out, SagaOutcome::Compensated { failed: "pushArchive".into(), error: "pushArchive is down".into() });
    assert_eq!(
        *log.lock().unwrap(),
        [
            "run contract-42:freezeBudget",
            "run contract-42:createContract",
            "run contract-42:pushArchive",
            "undo contract-42:createContract createContract-1",
            "undo contract-42:freezeBudget freezeBudget-1",
        ]
    );
    // Again: the record says it is compensated; nothing runs or is undone twice.
    log.lock().unwrap().clear();
    assert!(matches!(saga(&log).run().await.unwrap(), SagaOutcome::Compensated { .. }));
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
    // Another saga id completes, and a re-run answers from the record.
    *f[2].0.lock().unwrap() = false;
    let [a, b, c] = steps(&log, &f);
    let done = Saga::new(&e, "contract-43").step(a).step(b).step(c).run().await.unwrap();
    assert_eq!(
        done,
        SagaOutcome::Completed(vec![
            json!({"ref": "freezeBudget-1"}),
            json!({"ref": "createContract-1"}),
            json!({"ref": "pushArchive-1"})
        ])
    );
    log.lock().unwrap().clear();
    let [a, b, c] = steps(&log, &f);
    assert!(matches!(
        Saga::new(&e, "contract-43").step(a).step(b).step(c).run().await.unwrap(),
        SagaOutcome::Completed(_)
    ));
    assert!(log.lock().unwrap().is_empty(), "a completed saga runs nothing again");
    // Steps that do not match the record are refused.
    let [a, _, c] = steps(&log, &f);
    assert!(Saga::new(&e, "contract-43").step(a).step(c).run().await.unwrap_err().to_string().contains("recorded as"));
}

async fn a_compensation_out_of_attempts_opens_an_incident_and_a_rerun_finishes(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let e = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let log: Log = Arc::default();
    let f = flags();
    *f[2].0.lock().unwrap() = true;
    *f[0].1.lock().unwrap() = true;
    let run = || {
        let [a, b, c] = steps(&log, &f);
        Saga::new(&e, "contract-7").step(a).step(b).step(c).compensation_attempts(3, Duration::from_millis(5)).run()
    };
    let err = run().await.unwrap_err();
    assert!(err.to_string().contains("an incident is open"), "{err}");
    let undo_budget = log.lock().unwrap().iter().filter(|l| l.starts_with("undo contract-7:freezeBudget")).count();
    assert_eq!(undo_budget, 3, "three attempts");
    let open = e
        .incidents()
        .list(
            &kairos::reconcile::incidents::Filter {
                rule_id: Some("saga-compensation-failed".into()),
                ..Default::default()
            },
            10,
        )
        .await
        .unwrap();
    assert_eq!((open.len(), open[0].business_id.as_str(), open[0].status.as_str()), (1, "contract-7", "OPEN"));
    // The target is fixed; a re-run compensates what is left, and only that.
    *f[0].1.lock().unwrap() = false;
    log.lock().unwrap().clear();
    assert!(matches!(run().await.unwrap(), SagaOutcome::Compensated { .. }));
    assert_eq!(*log.lock().unwrap(), ["undo contract-7:freezeBudget freezeBudget-1"]);
}

on_both_backends!(
    a_failed_step_compensates_the_done_ones_in_reverse_once,
    a_compensation_out_of_attempts_opens_an_incident_and_a_rerun_finishes,
);
