//! `kairos doctor` on both backends against the runbook cases it used to miss or misread
//! (issue 14 item 10; seed 000 §4, seed 003 §5, seed 004 §5). The diagnosis runs from a tool
//! engine built with the defaults, as the `kairos doctor` CLI does, so every judgement about a
//! node must come from what that node recorded in KAIROS_NODE.

mod common;

use common::{Backend, Fixture, wait_until};
use kairos::doctor::{DoctorQuery, DoctorReport, Finding, Severity, diagnose};
use kairos::store::{JobAcquireParams, NodeRegistration, SqlValue};
use kairos::{Engine, EnqueueRequest, NodeSettings, SignedDuration, handler_fn};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// The engine `kairos doctor` opens: default settings (lock time PT5M, dead after 10 s), no
/// executor.
async fn tool(fx: &Fixture) -> Engine {
    Engine::builder(fx.url.clone()).node_id("doctor-cli").executor_enabled(false).build().await.unwrap()
}

fn cluster() -> DoctorQuery {
    DoctorQuery { from_tool: true, ..Default::default() }
}

fn of_instance(id: &str) -> DoctorQuery {
    DoctorQuery { process_instance_id: Some(id.into()), from_tool: true, ..Default::default() }
}

fn codes(r: &DoctorReport) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.code).collect()
}

fn one<'a>(r: &'a DoctorReport, code: &'a str) -> &'a Finding {
    r.with_code(code).next().unwrap_or_else(|| panic!("no {code} in {:?}\n{r}", codes(r)))
}

fn settings(lock_time: SignedDuration, dead_after: SignedDuration, zone: &str) -> NodeSettings {
    NodeSettings {
        lock_time,
        heartbeat_interval: SignedDuration::from_millis(200),
        dead_after,
        lookahead: SignedDuration::ZERO,
        poll_interval: SignedDuration::from_millis(100),
        time_zone: zone.into(),
    }
}

/// A node as a real one registers: with its settings.
async fn node(engine: &Engine, id: &str, s: NodeSettings) {
    let reg = NodeRegistration { id: id.into(), host: "h".into(), pid: 7, workers: 4, settings: Some(s) };
    engine.store().node_register(&reg).await.unwrap();
}

async fn sql(engine: &Engine, statement: &str, binds: &[SqlValue]) {
    engine.store().sql_execute(statement, binds).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
}

async fn age_heartbeat(engine: &Engine, id: &str, by: SignedDuration) {
    let at = engine.store().db_now().await.unwrap() - by;
    sql(
        engine,
        "UPDATE KAIROS_NODE SET HEARTBEAT_ = ? WHERE ID_ = ?",
        &[SqlValue::Timestamp(at), SqlValue::Text(id.into())],
    )
    .await;
}

/// Seed 000 §4.5: async continuations have no DUEDATE_; the backlog counts from CREATE_TIME_
/// and is told apart by TYPE_.
async fn a_backlog_of_async_jobs_is_aged_from_creation_and_counted_by_type(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "n1", settings(SignedDuration::from_mins(5), SignedDuration::from_secs(10), "UTC")).await;
    let ago = engine.store().db_now().await.unwrap() - SignedDuration::from_mins(10);
    for _ in 0..3 {
        let job = engine.enqueue(&EnqueueRequest { handler: "log".into(), ..Default::default() }).await.unwrap();
        sql(
            &engine,
            "UPDATE ACT_RU_JOB SET DUEDATE_ = NULL, CREATE_TIME_ = ? WHERE ID_ = ?",
            &[SqlValue::Timestamp(ago), SqlValue::Text(job.id)],
        )
        .await;
    }
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "backlog");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("3 job(s)") && f.title.contains("10m"), "{f:?}");
    assert!(f.detail.contains("message 3"), "counted by TYPE_: {}", f.detail);
    assert!(!codes(&r).contains(&"all-clear"), "{r}");
}

/// The tool's defaults (dead after 10 s) are not the nodes': a node that runs with a 2 s
/// dead-after and has been silent for 5 s is dead, and a real node records its settings.
async fn liveness_is_judged_by_the_settings_each_node_recorded(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let real = fx
        .engine("real")
        .configure(|c| {
            c.lock_time = SignedDuration::from_secs(7);
            c.lookahead = SignedDuration::from_millis(300);
        })
        .build()
        .await
        .unwrap();
    real.start().await.unwrap();
    let recorded = real.store().node_list().await.unwrap().into_iter().find(|n| n.id == "real").unwrap();
    let s = recorded.settings.expect("a node records its settings when it registers");
    assert_eq!(
        (s.lock_time, s.dead_after, s.lookahead, s.heartbeat_interval, s.poll_interval),
        (
            SignedDuration::from_secs(7),
            SignedDuration::from_secs(2),
            SignedDuration::from_millis(300),
            SignedDuration::from_millis(200),
            SignedDuration::from_millis(100)
        )
    );
    real.shutdown(Duration::from_secs(5)).await;

    let engine = tool(&fx).await;
    node(&engine, "quick", settings(SignedDuration::from_secs(7), SignedDuration::from_secs(2), "UTC")).await;
    age_heartbeat(&engine, "quick", SignedDuration::from_secs(5)).await;
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "stale-node");
    assert!(f.title.contains("quick") && f.detail.contains("2s"), "judged by its own dead-after: {f:?}");
    assert!(!r.with_code("nodes").any(|f| f.title.contains("quick")), "{r}");
}

/// Seed 000 §4.2: a dead node's lock on a job with no retries left is no "it will run again".
async fn a_dead_nodes_lock_on_a_job_without_retries_is_never_run_again(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "gone", settings(SignedDuration::from_mins(10), SignedDuration::from_secs(2), "UTC")).await;
    let held = engine.enqueue(&EnqueueRequest { handler: "log".into(), ..Default::default() }).await.unwrap();
    let params = JobAcquireParams {
        node: "gone".into(),
        limit: 10,
        lock_time: SignedDuration::from_mins(10),
        now: None,
        lookahead: SignedDuration::ZERO,
    };
    assert_eq!(engine.store().job_acquire(&params).await.unwrap().jobs.len(), 1);
    let spent = engine.enqueue(&EnqueueRequest { handler: "log".into(), ..Default::default() }).await.unwrap();
    for id in [&held.id, &spent.id] {
        sql(
            &engine,
            "UPDATE ACT_RU_JOB SET RETRIES_ = 0, EXCEPTION_MSG_ = 'payment service refused' WHERE ID_ = ?",
            &[SqlValue::Text(id.clone())],
        )
        .await;
    }
    age_heartbeat(&engine, "gone", SignedDuration::from_secs(30)).await;

    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = r.findings.iter().find(|f| f.job_id.as_deref() == Some(held.id.as_str())).expect("the held job is named");
    assert_eq!((f.code, f.severity), ("locked-no-retries", Severity::Error), "{r}");
    assert!(
        f.detail.contains("no node will ever run it again") && f.detail.contains("payment service refused"),
        "{f:?}"
    );
    assert!(f.action.contains(&format!("DELETE /management/jobs/{}?force=true", held.id)), "{f:?}");
    assert!(!f.action.contains("runs the job again"), "{f:?}");
    let f = r.findings.iter().find(|f| f.job_id.as_deref() == Some(spent.id.as_str())).expect("the spent job is named");
    assert_eq!((f.code, f.severity), ("no-retries", Severity::Error));
    assert!(f.detail.contains("payment service refused"), "names the exception message: {f:?}");
}

const ONE_TASK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="approval" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve the order"/>
    <sequenceFlow id="f2" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A healthy instance at a user task has no job, and that is no warning (no exit 3).
async fn an_instance_waiting_at_a_user_task_is_no_alarm(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "n1", settings(SignedDuration::from_mins(5), SignedDuration::from_secs(60), "UTC")).await;
    let p = engine.processes();
    p.deploy("approval.bpmn", ONE_TASK).await.unwrap();
    let start = kairos::process::StartRequest {
        process_definition_key: Some("approval".into()),
        business_key: Some("order-1".into()),
        ..Default::default()
    };
    let inst = p.start(start).await.unwrap();
    let r = diagnose(&engine, &of_instance(&inst.id)).await.unwrap();
    assert!(r.worst() < Severity::Warning, "a user task is a healthy wait: {r}");
    let f = one(&r, "waiting");
    assert!(f.detail.contains("approve") && f.detail.contains("Approve the order"), "{f:?}");
}

/// Seed 003 §5: an instance ended in history with its runtime rows left, and an execution with
/// a null ACT_ID_ that waits on an event subscription.
async fn leftover_runtime_rows_and_event_waits_are_explained(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "n1", settings(SignedDuration::from_mins(5), SignedDuration::from_secs(60), "UTC")).await;
    for statement in [
        "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, PARENT_ID_, START_TIME_) VALUES ('pi-left', 'pi-left', NULL, '2026-01-01 00:00:00.000')",
        "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_, END_TIME_) VALUES ('pi-left', 'pi-left', '2026-01-01 00:00:00.000', '2026-01-02 08:30:00.000')",
        "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, PARENT_ID_, START_TIME_) VALUES ('pi-w', 'pi-w', NULL, '2026-01-01 00:00:00.000')",
        "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, PARENT_ID_, ACT_ID_, IS_EVENT_SCOPE_, START_TIME_) VALUES ('pi-w-es', 'pi-w', 'pi-w', NULL, TRUE, '2026-01-01 00:00:00.000')",
        "INSERT INTO ACT_RU_EVENT_SUBSCR (ID_, EVENT_TYPE_, EVENT_NAME_, EXECUTION_ID_, PROC_INST_ID_, ACTIVITY_ID_, CREATED_) VALUES ('s1', 'message', 'paymentReceived', 'pi-w-es', 'pi-w', 'onPayment', '2026-01-01 00:00:00.000')",
    ] {
        sql(&engine, statement, &[]).await;
    }
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "ended-with-runtime-rows");
    assert_eq!((f.severity, f.process_instance_id.as_deref()), (Severity::Warning, Some("pi-left")));
    assert!(f.detail.contains("2026-01-02T08:30:00Z"), "RFC 3339: {}", f.detail);

    let r = diagnose(&engine, &of_instance("pi-w")).await.unwrap();
    let f = one(&r, "event-wait");
    assert!(f.title.contains("pi-w-es") && f.title.contains("paymentReceived"), "{f:?}");
    assert!(!codes(&r).contains(&"no-jobs"), "it waits for a message, not for a job: {r}");
    let ended = diagnose(&engine, &of_instance("pi-left")).await.unwrap();
    assert!(codes(&ended).contains(&"ended-with-runtime-rows"), "{ended}");

    // Every instant is RFC 3339, whatever the store keeps (SQLite keeps UTC text).
    sql(&engine, "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_, END_TIME_) VALUES ('pi-done', 'pi-done', '2026-01-01 00:00:00.000', '2026-01-03 00:00:00.000')", &[]).await;
    let done = diagnose(&engine, &of_instance("pi-done")).await.unwrap();
    assert!(one(&done, "instance-ended").detail.contains("ended at 2026-01-03T00:00:00Z"), "{done}");
}

/// Seed 000 §4.4: handlers that take longer than the nodes' lock time.
async fn a_lock_time_shorter_than_the_handlers_take_is_reported(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "n1", settings(SignedDuration::from_secs(5), SignedDuration::from_secs(60), "UTC")).await;
    for (id, start, end) in [
        ("l1", "2026-01-01 00:00:00.000", "2026-01-01 00:00:08.000"),
        ("l2", "2026-01-01 00:01:00.000", "2026-01-01 00:01:01.000"),
    ] {
        sql(
            &engine,
            &format!(
                "INSERT INTO ACT_HI_JOB_LOG (ID_, JOB_ID_, ATTEMPT_, NODE_ID_, START_TIME_, END_TIME_, OUTCOME_, TYPE_, HANDLER_TYPE_) \
                 VALUES ('{id}', 'job-{id}', 1, 'n1', '{start}', '{end}', 'succeeded', 'message', 'callPartner')"
            ),
            &[],
        )
        .await;
    }
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "lock-time-short");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("5s") && f.detail.contains("callPartner took up to 8s"), "{f:?}");
}

/// Seed 004 §5.2/§5.4: paused triggers (by themselves or their group), blocked triggers and
/// cron triggers in another time zone than the nodes, each named in its own fields.
async fn triggers_that_will_not_fire_are_each_named(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    node(&engine, "n1", settings(SignedDuration::from_mins(5), SignedDuration::from_secs(60), "Europe/Berlin")).await;
    let s = engine.scheduler();
    s.add_job(&serde_json::from_value(json!({"name": "j", "handler": "log", "durable": true})).unwrap()).await.unwrap();
    let schedule = |v: serde_json::Value| {
        let s = engine.scheduler();
        async move { s.schedule(&serde_json::from_value(v).unwrap()).await.unwrap() }
    };
    schedule(json!({"name": "p", "jobName": "j", "simple": {"interval": "PT1H"}, "startTime": "2099-01-01T00:00:00Z"}))
        .await;
    s.pause_trigger("DEFAULT", "p").await.unwrap();
    s.pause_group("nightly").await.unwrap();
    schedule(json!({"name": "g", "group": "nightly", "jobName": "j", "simple": {"interval": "PT1H"}, "startTime": "2099-01-01T00:00:00Z"}))
        .await;
    schedule(json!({"name": "b", "jobName": "j", "simple": {"interval": "PT1H"}, "startTime": "2099-01-01T00:00:00Z"}))
        .await;
    sql(&engine, "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'BLOCKED' WHERE TRIGGER_NAME = 'b'", &[]).await;
    schedule(json!({"name": "c", "jobName": "j", "cron": {"expression": "0 0 8 * * ?", "timeZone": "Asia/Shanghai"}}))
        .await;
    schedule(
        json!({"name": "c-ok", "jobName": "j", "cron": {"expression": "0 0 8 * * ?", "timeZone": "Europe/Berlin"}}),
    )
    .await;

    let r = diagnose(&engine, &cluster()).await.unwrap();
    let named = |code: &str| -> Vec<(String, String, Severity)> {
        r.with_code(code)
            .map(|f| (f.trigger_group.clone().unwrap(), f.trigger_name.clone().unwrap(), f.severity))
            .collect()
    };
    assert_eq!(named("trigger-paused"), vec![("DEFAULT".into(), "p".into(), Severity::Info)], "{r}");
    assert_eq!(named("trigger-group-paused"), vec![("nightly".into(), "g".into(), Severity::Info)], "{r}");
    assert_eq!(
        named("trigger-blocked"),
        vec![("DEFAULT".into(), "b".into(), Severity::Warning)],
        "no firing of j: {r}"
    );
    assert_eq!(named("trigger-time-zone"), vec![("DEFAULT".into(), "c".into(), Severity::Info)], "{r}");
    assert!(one(&r, "trigger-group-paused").action.contains("/scheduler/trigger-groups/nightly"));
    assert!(one(&r, "trigger-time-zone").title.contains("Asia/Shanghai"));
    let json = r.to_json();
    let f = json["findings"].as_array().unwrap().iter().find(|f| f["code"] == "trigger-paused").unwrap().clone();
    assert_eq!((f["triggerGroup"].as_str(), f["triggerName"].as_str()), (Some("DEFAULT"), Some("p")));
    assert!(r.to_string().contains("trigger: group DEFAULT, name p"), "{r}");
}

/// A node killed while checked in is a warning, not `info`; and a firing stuck in ACQUIRED is
/// reported even when QRTZ_TRIGGERS is empty.
async fn a_killed_scheduler_node_and_a_stuck_firing_without_triggers_are_warnings(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = tool(&fx).await;
    let sched = engine.scheduler().settings().name.clone();
    let now_ms = engine.store().db_now().await.unwrap().as_millisecond();
    node(&engine, "killed", settings(SignedDuration::from_mins(5), SignedDuration::from_secs(2), "UTC")).await;
    sql(&engine, "UPDATE KAIROS_NODE SET STATE_ = 'dead' WHERE ID_ = 'killed'", &[]).await;
    let t = |s: &str| SqlValue::Text(s.into());
    sql(
        &engine,
        "INSERT INTO QRTZ_SCHEDULER_STATE (SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL) VALUES (?, 'killed', ?, 1000)",
        &[t(&sched), SqlValue::Int(now_ms - 120_000)],
    )
    .await;
    sql(
        &engine,
        "INSERT INTO QRTZ_FIRED_TRIGGERS (SCHED_NAME, ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_TIME, SCHED_TIME, PRIORITY, STATE, JOB_NAME, JOB_GROUP) \
         VALUES (?, 'entry-1', 'gone', 'reports', 'killed', ?, ?, 5, 'ACQUIRED', 'j', 'DEFAULT')",
        &[t(&sched), SqlValue::Int(now_ms - 90_000), SqlValue::Int(now_ms - 90_000)],
    )
    .await;
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "stale-checkin");
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(f.action.contains("killed"), "{f:?}");
    let f = one(&r, "fired-not-started");
    assert_eq!(
        (f.trigger_group.as_deref(), f.trigger_name.as_deref(), f.severity),
        (Some("reports"), Some("gone"), Severity::Warning)
    );
    assert!(r.worst() >= Severity::Warning);
}

/// A firing that runs longer than its node's lock time (1 s here; the tool's own is PT5M) is a
/// warning with the way out.
async fn a_hung_firing_is_a_warning_judged_by_its_nodes_lock_time(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let release = Arc::new(tokio::sync::Notify::new());
    let r2 = release.clone();
    let real = fx
        .engine("worker")
        .configure(|c| c.lock_time = SignedDuration::from_secs(1))
        .handler(
            "hang",
            handler_fn(move |_| {
                let r = r2.clone();
                async move {
                    r.notified().await;
                    Ok(None)
                }
            }),
        )
        .build()
        .await
        .unwrap();
    real.start().await.unwrap();
    let s = real.scheduler();
    s.add_job(&serde_json::from_value(json!({"name": "slow", "handler": "hang"})).unwrap()).await.unwrap();
    s.schedule(
        &serde_json::from_value(json!({"name": "t", "jobName": "slow", "simple": {"interval": "PT1H"}})).unwrap(),
    )
    .await
    .unwrap();
    let engine = tool(&fx).await;
    wait_until(LIMIT, "the firing reported as running long", || async {
        diagnose(&engine, &cluster()).await.unwrap().with_code("fired-running-long").next().is_some()
    })
    .await;
    let r = diagnose(&engine, &cluster()).await.unwrap();
    let f = one(&r, "fired-running-long");
    assert_eq!((f.severity, f.trigger_name.as_deref()), (Severity::Warning, Some("t")), "{f:?}");
    assert!(f.title.contains("worker") && f.action.contains("thread dump"), "{f:?}");
    release.notify_waiters();
    real.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_backlog_of_async_jobs_is_aged_from_creation_and_counted_by_type,
    liveness_is_judged_by_the_settings_each_node_recorded,
    a_dead_nodes_lock_on_a_job_without_retries_is_never_run_again,
    an_instance_waiting_at_a_user_task_is_no_alarm,
    leftover_runtime_rows_and_event_waits_are_explained,
    a_lock_time_shorter_than_the_handlers_take_is_reported,
    triggers_that_will_not_fire_are_each_named,
    a_killed_scheduler_node_and_a_stuck_firing_without_triggers_are_warnings,
    a_hung_firing_is_a_warning_judged_by_its_nodes_lock_time,
);
