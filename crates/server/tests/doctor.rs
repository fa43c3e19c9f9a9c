//! `kairos::doctor::diagnose` against a real SQLite store: the five steps of seed 000 §4.1 for
//! each job of an instance, and the cluster findings of SPEC J11. (The doctor lives in the
//! `kairos` crate; its tests live here, beside the HTTP route that serves it.)

mod common;

use common::{App, app};
use kairos::doctor::{DoctorQuery, DoctorReport, Severity, diagnose};
use kairos::store::{JobAcquireParams, NodeRegistration, SqlValue};
use kairos::{Completion, EnqueueRequest, Job, SignedDuration};

fn by_instance(id: &str) -> DoctorQuery {
    DoctorQuery { process_instance_id: Some(id.into()), ..Default::default() }
}

fn by_key(key: &str) -> DoctorQuery {
    DoctorQuery { business_key: Some(key.into()), ..Default::default() }
}

fn codes(r: &DoctorReport) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.code).collect()
}

/// The findings about `job`, as (code, severity).
fn about(r: &DoctorReport, job: &Job) -> Vec<(&'static str, Severity)> {
    r.findings.iter().filter(|f| f.job_id.as_deref() == Some(job.id.as_str())).map(|f| (f.code, f.severity)).collect()
}

/// A root execution (the process instance) and, optionally, a child standing at an activity.
async fn instance(app: &App, id: &str, business_key: &str, at: Option<&str>, suspension: i64) {
    let store = app.engine.store();
    let t = |s: &str| SqlValue::Text(s.into());
    store
        .sql_execute(
            "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, BUSINESS_KEY_, PARENT_ID_, SUSPENSION_STATE_, START_TIME_) VALUES (?, ?, ?, NULL, ?, '2026-01-01 00:00:00.000')",
            &[t(id), t(id), t(business_key), SqlValue::Int(suspension)],
        )
        .await
        .unwrap();
    if let Some(act) = at {
        store
            .sql_execute(
                "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, PARENT_ID_, ACT_ID_, START_TIME_) VALUES (?, ?, ?, ?, '2026-01-01 00:00:00.000')",
                &[t(&format!("{id}-child")), t(id), t(id), t(act)],
            )
            .await
            .unwrap();
    }
}

/// A job of a process instance, inserted the way the process engine will insert one.
async fn process_job(app: &App, pi: &str, execution: &str, req: EnqueueRequest) -> Job {
    let mut new = app.engine.prepare(&req).unwrap();
    new.process_instance_id = Some(pi.into());
    new.execution_id = Some(execution.into());
    new.element_id = Some("timer1".into());
    new.element_name = Some("Remind after 48h".into());
    app.engine.store().job_insert(&new).await.unwrap()
}

fn due_in(d: &str) -> EnqueueRequest {
    EnqueueRequest { handler: "log".into(), due_in: Some(d.into()), ..Default::default() }
}

fn due_at(t: kairos::Timestamp) -> EnqueueRequest {
    EnqueueRequest { handler: "log".into(), due_date: Some(t), ..Default::default() }
}

async fn heartbeat(app: &App, node: &str) {
    let reg = NodeRegistration { id: node.into(), host: "h".into(), pid: 1, workers: 4, settings: None };
    app.engine.store().node_heartbeat(&reg).await.unwrap();
}

#[tokio::test]
async fn an_empty_cluster_with_the_executor_off_says_nothing_runs_jobs() {
    let app = app().await;
    let r = diagnose(&app.engine, &DoctorQuery::default()).await.unwrap();
    let off = r.with_code("executor-off").next().expect("executor-off");
    assert_eq!(off.severity, Severity::Error, "nobody else runs jobs either");
    assert!(!off.action.is_empty());
    assert_eq!(r.with_code("no-live-node").next().unwrap().severity, Severity::Warning, "no job waits");
    assert_eq!(r.worst(), Severity::Error);
    assert!(r.instances.is_empty());
    let text = r.to_string();
    assert!(text.contains("what to do:") && text.contains("executor-off"), "{text}");
    assert_eq!(r.to_json()["worst"], "error");

    heartbeat(&app, "node-b").await;
    let r = diagnose(&app.engine, &DoctorQuery::default()).await.unwrap();
    assert_eq!(r.with_code("executor-off").next().unwrap().severity, Severity::Info, "node-b runs jobs");
    assert!(r.with_code("nodes").next().unwrap().title.contains("node-b"));
    assert!(codes(&r).contains(&"all-clear"), "{:?}", codes(&r));
    assert_eq!(r.worst(), Severity::Info);
}

#[tokio::test]
async fn a_business_key_without_an_instance_is_said_clearly() {
    let app = app().await;
    let r = diagnose(&app.engine, &by_key("order-42")).await.unwrap();
    let f = &r.findings[0];
    assert_eq!((f.code, f.severity), ("no-instance", Severity::Error));
    assert!(f.title.contains("order-42") && f.detail.contains("ACT_RU_EXECUTION"), "{f:?}");

    let r = diagnose(&app.engine, &by_instance("no-such-instance")).await.unwrap();
    assert_eq!(r.findings[0].code, "no-instance");

    let both = DoctorQuery { business_key: Some("a".into()), process_instance_id: Some("b".into()), from_tool: false };
    assert!(matches!(diagnose(&app.engine, &both).await, Err(kairos::Error::Invalid(_))));
}

#[tokio::test]
async fn step_one_an_instance_without_jobs_says_where_it_stands() {
    let app = app().await;
    instance(&app, "pi-1", "order-7", Some("approveOrder"), 1).await;
    let r = diagnose(&app.engine, &by_key("order-7")).await.unwrap();
    assert_eq!(r.instances, vec!["pi-1".to_string()]);
    let f = r.with_code("no-jobs").next().expect("no-jobs");
    assert_eq!(f.process_instance_id.as_deref(), Some("pi-1"));
    assert!(f.detail.contains("approveOrder"), "{}", f.detail);
    assert!(f.action.contains("timer"), "{}", f.action);

    instance(&app, "pi-2", "order-8", None, 2).await;
    let r = diagnose(&app.engine, &by_instance("pi-2")).await.unwrap();
    assert!(codes(&r).contains(&"instance-suspended"), "{:?}", codes(&r));
}

/// Steps 2–4 for each job, and step 5, on one instance holding a job in every state.
#[tokio::test]
async fn steps_two_to_five_for_every_job_of_an_instance() {
    let app = app().await;
    let store = app.engine.store().clone();
    instance(&app, "pi-9", "order-9", None, 1).await;
    heartbeat(&app, "node-b").await;
    let now = store.db_now().await.unwrap();
    let five_min = SignedDuration::from_mins(5);

    // Running on a live node (step 3).
    let running = process_job(&app, "pi-9", "pi-9", due_at(now)).await;
    assert_eq!(app.acquire("node-b", five_min).await.len(), 1);
    // Failed once, retrying (step 4).
    let failing = process_job(&app, "pi-9", "pi-9", due_at(now)).await;
    let locked = app.acquire("node-b", five_min).await.pop().unwrap();
    let retry_due = store.db_now().await.unwrap() + SignedDuration::from_mins(10);
    app.complete(
        &locked,
        Completion::Retry { retries: 2, due: retry_due, message: "timeout".into(), stack: "timeout".into() },
    )
    .await;
    // Out of retries (step 4).
    let dead = process_job(&app, "pi-9", "pi-9", EnqueueRequest { retries: Some(1), ..due_at(now) }).await;
    let locked = app.acquire("node-b", five_min).await.pop().unwrap();
    app.complete(&locked, Completion::DeadLetter { message: "refused".into(), stack: "refused".into() }).await;
    // Due two minutes ago, nobody took it (step 5), and one not due for an hour (step 2).
    let overdue = process_job(&app, "pi-9", "pi-9", due_at(now - SignedDuration::from_mins(2))).await;
    let waiting = process_job(&app, "pi-9", "pi-9", due_in("PT1H")).await;
    // Locked by a node that vanished; its lease has run out (step 3).
    let expired = process_job(&app, "pi-9", "pi-9", due_at(now - SignedDuration::from_mins(10))).await;
    let params = JobAcquireParams {
        node: "gone-node".into(),
        limit: 10,
        lock_time: SignedDuration::from_mins(1),
        now: Some(now - five_min),
        lookahead: SignedDuration::ZERO,
    };
    let got = store.job_acquire(&params).await.unwrap();
    assert_eq!(got.jobs.len(), 1);

    let r = diagnose(&app.engine, &by_key("order-9")).await.unwrap();
    assert_eq!(about(&r, &running), vec![("locked", Severity::Info)], "{r}");
    assert_eq!(about(&r, &failing), vec![("failing", Severity::Warning)], "{r}");
    assert_eq!(about(&r, &dead), vec![("dead-letter", Severity::Error)], "listed once: {r}");
    assert_eq!(about(&r, &overdue), vec![("overdue", Severity::Warning)], "{r}");
    assert_eq!(about(&r, &waiting), vec![("not-due", Severity::Info)], "{r}");
    assert_eq!(about(&r, &expired), vec![("lock-expired", Severity::Warning)], "listed once: {r}");
    let f = r.findings.iter().find(|f| f.job_id.as_deref() == Some(failing.id.as_str())).unwrap();
    assert!(f.detail.contains("timeout") && f.action.contains("exception-stacktrace"), "{f:?}");
    let f = r.findings.iter().find(|f| f.job_id.as_deref() == Some(dead.id.as_str())).unwrap();
    assert!(f.action.contains("\"move\""), "{f:?}");
    assert!(codes(&r).contains(&"backlog"), "{:?}", codes(&r));
    assert_eq!(r.worst(), Severity::Error);
    assert!(!codes(&r).contains(&"all-clear"));

    let json = r.to_json();
    assert_eq!(json["instances"][0], "pi-9");
    assert!(
        json["findings"].as_array().unwrap().iter().any(|f| f["jobId"] == dead.id.as_str() && f["severity"] == "error")
    );
}

#[tokio::test]
async fn orphans_and_jobs_of_ended_instances_are_found_cluster_wide() {
    let app = app().await;
    let store = app.engine.store().clone();
    let orphan = process_job(&app, "pi-gone", "exec-gone", due_in("PT1H")).await;
    store
        .sql_execute(
            "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, BUSINESS_KEY_, START_TIME_, END_TIME_) VALUES ('pi-done', 'pi-done', 'order-1', '2026-01-01 00:00:00.000', '2026-01-02 00:00:00.000')",
            &[],
        )
        .await
        .unwrap();
    instance(&app, "pi-done", "order-1-old", None, 1).await;
    let leftover = process_job(&app, "pi-done", "pi-done", due_in("PT1H")).await;

    let r = diagnose(&app.engine, &DoctorQuery::default()).await.unwrap();
    assert!(about(&r, &orphan).contains(&("orphan-job", Severity::Warning)), "{r}");
    assert!(about(&r, &leftover).contains(&("job-of-ended-instance", Severity::Warning)), "{r}");
    let f = r.with_code("orphan-job").next().unwrap();
    assert!(f.action.contains(&format!("DELETE /management/jobs/{}", orphan.id)), "{f:?}");

    let r = diagnose(&app.engine, &by_key("order-1")).await.unwrap();
    assert!(codes(&r).contains(&"instance-ended"), "{:?}", codes(&r));
}
