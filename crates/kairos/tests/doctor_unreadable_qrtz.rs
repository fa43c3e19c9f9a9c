//! `kairos doctor` with a QRTZ_* value it cannot read, on both backends: the diagnosis still
//! runs, the row is its own `unreadable-row` finding naming table, row and column (issue 15:
//! never a default such as 1970), and the other checks report as before.

mod common;

use common::{Backend, Fixture};
use kairos::Engine;
use kairos::doctor::{DoctorQuery, Severity, diagnose};

async fn a_bad_check_in_time_is_named_and_the_diagnosis_goes_on(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = Engine::builder(fx.url.clone()).node_id("doctor-cli").executor_enabled(false).build().await.unwrap();
    let sched = engine.scheduler().settings().name.clone();
    engine
        .store()
        .sql_execute(
            "INSERT INTO QRTZ_SCHEDULER_STATE (SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL) \
             VALUES (?, 'n1', 999999999999999999, 7500)",
            &[kairos::store::SqlValue::Text(sched)],
        )
        .await
        .unwrap();
    let report = diagnose(&engine, &DoctorQuery { from_tool: true, ..Default::default() }).await.unwrap();
    let f = report.with_code("unreadable-row").next().unwrap_or_else(|| panic!("no unreadable-row in\n{report}"));
    assert_eq!(f.severity, Severity::Error);
    assert!(f.title.contains("QRTZ_SCHEDULER_STATE row n1"), "{}", f.title);
    assert!(f.detail.contains("LAST_CHECKIN_TIME"), "{}", f.detail);
    assert!(report.with_code("no-live-node").next().is_some(), "the other checks ran:\n{report}");
}

on_both_backends!(a_bad_check_in_time_is_named_and_the_diagnosis_goes_on);
