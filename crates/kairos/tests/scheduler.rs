//! The scheduler end to end on both backends (SPEC S): job details and triggers in the QRTZ_*
//! tables, fired through the job executor; misfires after downtime; pause and resume of groups;
//! non-concurrent jobs; calendars; bad input refused with nothing written; seed 004 §5's SQL.

mod common;

use common::{Backend, Fixture, count_rows, wait_until};
use kairos::handler_fn;
use kairos::scheduler::{JobSpec, TriggerSpec, TriggerState};
use serde_json::{Value as Json, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// What the `record` handler saw: (scheduled fire time, start, end) of each run, by job name.
type Runs = Arc<Mutex<Vec<(String, jiff::Timestamp, jiff::Timestamp, jiff::Timestamp)>>>;

fn builder(fx: &Fixture, runs: &Runs, sleep: Duration) -> kairos::EngineBuilder {
    let r = runs.clone();
    fx.engine("s1")
        .configure(|c| c.poll_interval = Duration::from_millis(50))
        // These tests fire simple triggers every 100 ms, below the default minimum of 1 s.
        .min_repeat_interval(jiff::SignedDuration::from_millis(100))
        .scheduler(kairos::scheduler::SchedulerSettings {
            name: "MyScheduler".into(),
            checkin_interval: Duration::from_millis(200),
            ..Default::default()
        })
        .handler(
            "record",
            handler_fn(move |ctx| {
                let r = r.clone();
                async move {
                    let start = jiff::Timestamp::now();
                    tokio::time::sleep(sleep).await;
                    let name = ctx.payload.get("name").and_then(Json::as_str).unwrap_or("?").to_string();
                    r.lock().unwrap().push((name, ctx.due_date.unwrap_or(start), start, jiff::Timestamp::now()));
                    Ok(None)
                }
            }),
        )
}

fn job(name: &str) -> JobSpec {
    serde_json::from_value(json!({"name": name, "handler": "record", "data": {"name": name}})).unwrap()
}

fn trigger(v: Json) -> TriggerSpec {
    serde_json::from_value(v).unwrap()
}

fn count(runs: &Runs, name: &str) -> usize {
    runs.lock().unwrap().iter().filter(|r| r.0 == name).count()
}

async fn a_cron_trigger_fires_each_second_through_the_executor(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    s.add_job(&job("tick")).await.unwrap();
    let v = s
        .schedule(&trigger(
            json!({"name": "t", "jobName": "tick", "cron": {"expression": "* * * * * ?", "timeZone": "Europe/Berlin"}}),
        ))
        .await
        .unwrap();
    assert_eq!(v.state, TriggerState::Waiting);
    let first = v.next_fire_time.expect("a next fire time");
    assert_eq!(first.subsec_nanosecond(), 0, "cron fire times are whole seconds");
    // Its trigger job waits in ACT_RU_JOB as a timer at NEXT_FIRE_TIME.
    let jobs = engine
        .store()
        .sql_query("SELECT TYPE_, HANDLER_TYPE_ FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'quartz-trigger'", &[])
        .await
        .unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0][0].as_str(), Some("timer"));
    wait_until(LIMIT, "three fires", || async { count(&runs, "tick") >= 3 }).await;
    let got = runs.lock().unwrap().clone();
    let scheduled: Vec<jiff::Timestamp> = got.iter().map(|r| r.1).collect();
    for pair in scheduled.windows(2) {
        assert_eq!(
            pair[1].duration_since(pair[0]),
            jiff::SignedDuration::from_secs(1),
            "one fire per second: {scheduled:?}"
        );
    }
    for r in &got {
        assert!(r.2 >= r.1, "never before its fire time: {r:?}");
    }
    s.check_in().await.unwrap();
    assert_eq!(s.nodes().await.unwrap().len(), 1, "the node checked in");
    let v = s.trigger("DEFAULT", "t").await.unwrap();
    assert!(v.previous_fire_time.is_some());
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_simple_trigger_fires_its_count_then_goes_with_its_non_durable_job(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    s.add_job(&job("three")).await.unwrap();
    s.schedule(&trigger(json!({"name": "t3", "jobName": "three", "simple": {"interval": "PT0.2S", "repeatCount": 2}})))
        .await
        .unwrap();
    wait_until(LIMIT, "three fires and the trigger gone", || async {
        count(&runs, "three") == 3 && s.trigger("DEFAULT", "t3").await.is_err()
    })
    .await;
    assert!(s.job("DEFAULT", "three").await.is_err(), "a non-durable job goes with its last trigger");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&runs, "three"), 3, "exactly repeatCount + 1 fires");
    wait_until(LIMIT, "fired rows cleared", || async { s.fired_triggers().await.unwrap().is_empty() }).await;
    engine.shutdown(Duration::from_secs(5)).await;
}

/// After downtime: a trigger missed six fire times. `doNothing` skips them all; `fireOnceNow`
/// fires once now; neither fires the missed ones one after another (Quartz #239).
async fn misfired_triggers_follow_their_instruction_after_downtime(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    let s = engine.scheduler();
    let now = engine.store().db_now().await.unwrap();
    let hour_ago = now - jiff::SignedDuration::from_mins(61);
    for (name, policy) in [("nothing", "doNothing"), ("once", "fireOnceNow"), ("ignore", "ignoreMisfires")] {
        s.add_job(&job(name)).await.unwrap();
        s.schedule(&trigger(json!({
            "name": name, "jobName": name, "startTime": hour_ago.to_string(),
            "cron": {"expression": "0 0/10 * * * ?"}, "misfirePolicy": policy,
        })))
        .await
        .unwrap();
    }
    // The engine was down: only now does the executor run the overdue trigger jobs.
    engine.start().await.unwrap();
    wait_until(LIMIT, "the three triggers handled", || async {
        let mut done = 0;
        for name in ["nothing", "once", "ignore"] {
            if s.trigger("DEFAULT", name).await.unwrap().next_fire_time.is_some_and(|t| t > now) {
                done += 1;
            }
        }
        done == 3
    })
    .await;
    wait_until(LIMIT, "the work done", || async { s.fired_triggers().await.unwrap().is_empty() }).await;
    assert_eq!(count(&runs, "nothing"), 0, "doNothing skips every missed fire time");
    assert_eq!(count(&runs, "once"), 1, "fireOnceNow fires once");
    assert!(count(&runs, "ignore") >= 6, "ignoreMisfires fires each missed time: {}", count(&runs, "ignore"));
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_paused_group_persists_and_catches_new_triggers(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    s.add_job(
        &serde_json::from_value(json!({"name": "rep", "handler": "record", "durable": true, "data": {"name": "rep"}}))
            .unwrap(),
    )
    .await
    .unwrap();
    let every = |name: &str| {
        trigger(json!({"name": name, "group": "reports", "jobName": "rep", "simple": {"interval": "PT0.1S"}}))
    };
    s.schedule(&every("a")).await.unwrap();
    s.pause_group("reports").await.unwrap();
    assert_eq!(s.trigger("reports", "a").await.unwrap().state, TriggerState::Paused);
    let b = s.schedule(&every("b")).await.unwrap();
    assert_eq!(b.state, TriggerState::Paused, "a trigger added to a paused group starts paused");
    assert_eq!(s.paused_groups().await.unwrap(), vec!["reports".to_string()]);
    let quartz_jobs = |store: Arc<dyn kairos::Store>| async move {
        store.sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'quartz-trigger'", &[]).await.unwrap()[0]
            [0]
        .as_i64()
        .unwrap()
    };
    assert_eq!(quartz_jobs(engine.store().clone()).await, 0, "paused triggers have no trigger job");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = count(&runs, "rep");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&runs, "rep"), before, "nothing fires while paused");
    s.resume_group("reports").await.unwrap();
    assert_eq!(s.trigger("reports", "b").await.unwrap().state, TriggerState::Waiting);
    assert!(s.paused_groups().await.unwrap().is_empty());
    wait_until(LIMIT, "fires after resume", || async { count(&runs, "rep") >= before + 4 }).await;
    engine.shutdown(Duration::from_secs(5)).await;
}

/// S8: the firings of a non-concurrent job never overlap; its trigger waits in BLOCKED.
async fn non_concurrent_jobs_never_overlap(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::from_millis(400)).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    s.add_job(
        &serde_json::from_value(
            json!({"name": "slow", "handler": "record", "concurrent": false, "data": {"name": "slow"}}),
        )
        .unwrap(),
    )
    .await
    .unwrap();
    for name in ["x", "y"] {
        s.schedule(&trigger(json!({"name": name, "jobName": "slow", "simple": {"interval": "PT0.1S"}}))).await.unwrap();
    }
    let saw_blocked = std::sync::atomic::AtomicBool::new(false);
    wait_until(LIMIT, "five runs", || async {
        if !s.triggers(None, Some(TriggerState::Blocked)).await.unwrap().is_empty() {
            saw_blocked.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        count(&runs, "slow") >= 5
    })
    .await;
    assert!(saw_blocked.into_inner(), "a trigger of the busy job was seen BLOCKED");
    let mut got = runs.lock().unwrap().clone();
    got.sort_by_key(|r| r.2);
    for pair in got.windows(2) {
        assert!(pair[1].2 >= pair[0].3, "runs overlap: {:?} and {:?}", pair[0], pair[1]);
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn calendars_exclude_fire_times_and_chain(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    let s = engine.scheduler();
    let today = engine.store().db_now().await.unwrap().to_zoned(jiff::tz::TimeZone::UTC).date();
    s.put_calendar("weekends", &json!({"type": "weekly", "excludedDays": []})).await.unwrap();
    s.put_calendar(
        "today-off",
        &json!({"type": "holiday", "excludedDates": [today.to_string()], "baseCalendar": "weekends"}),
    )
    .await
    .unwrap();
    s.add_job(&job("cal")).await.unwrap();
    let v = s
        .schedule(&trigger(
            json!({"name": "c", "jobName": "cal", "cron": {"expression": "0 * * * * ?"}, "calendarName": "today-off"}),
        ))
        .await
        .unwrap();
    let next = v.next_fire_time.unwrap().to_zoned(jiff::tz::TimeZone::UTC);
    assert_eq!(next.date(), today.tomorrow().unwrap(), "today is excluded: {next}");
    assert_eq!((next.hour(), next.minute(), next.second()), (0, 0, 0));
    let e = s.delete_calendar("today-off").await.unwrap_err();
    assert!(e.to_string().contains("used by trigger"), "{e}");
    let e = s
        .schedule(&trigger(
            json!({"name": "d", "jobName": "cal", "cron": {"expression": "0 * * * * ?"}, "calendarName": "nope"}),
        ))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("calendarName"), "{e}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Bad input names what is wrong and writes nothing.
async fn bad_triggers_are_refused_naming_the_field(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).build().await.unwrap();
    let s = engine.scheduler();
    s.add_job(&job("j")).await.unwrap();
    let cases = [
        (json!({"name": "t", "jobName": "j", "cron": {"expression": "0 0 12 * * MON"}}), "cron.expression"),
        (json!({"name": "t", "jobName": "j", "cron": {"expression": "0 61 * * * ?"}}), "position"),
        (json!({"name": "t", "jobName": "j", "cron": {"expression": "0 0 0 0W * ?"}}), "cron.expression"),
        (
            json!({"name": "t", "jobName": "j", "cron": {"expression": "0 * * * * ?", "timeZone": "Mars/Olympus"}}),
            "cron.timeZone",
        ),
        (json!({"name": "t", "jobName": "j", "simple": {"interval": "-PT1S"}}), "simple.interval"),
        // Below the engine's minimum interval (100 ms in these tests; 1 s by default).
        (json!({"name": "t", "jobName": "j", "simple": {"interval": "PT0.001S"}}), "simple.interval"),
        (
            json!({"name": "t", "jobName": "j", "simple": {"interval": "PT0.099S", "repeatCount": 3}}),
            "shorter than the minimum",
        ),
        (
            json!({"name": "t", "jobName": "j", "simple": {"interval": "PT1S"}, "startTime": "2030-01-02T00:00:00Z", "endTime": "2030-01-01T00:00:00Z"}),
            "endTime",
        ),
        (json!({"name": "t", "jobName": "j", "simple": {"interval": "PT1S"}, "calendarName": "none"}), "calendarName"),
        (json!({"name": "t", "jobName": "nope", "simple": {"interval": "PT1S"}}), "jobName"),
        (json!({"name": "", "jobName": "j", "simple": {"interval": "PT1S"}}), "name"),
        (
            json!({"name": "t", "jobName": "j", "cron": {"expression": "0 * * * * ?"}, "misfirePolicy": "rescheduleNextWithRemainingCount"}),
            "misfirePolicy",
        ),
        (json!({"name": "t", "jobName": "j"}), "schedule"),
        (
            json!({"name": "t", "jobName": "j", "dailyTimeInterval": {"interval": 1, "unit": "day"}}),
            "dailyTimeInterval.unit",
        ),
    ];
    for (spec, field) in cases {
        let e = match serde_json::from_value::<TriggerSpec>(spec.clone()) {
            Ok(t) => s.schedule(&t).await.expect_err(&format!("{spec} must be refused")).to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(field), "{spec}: '{e}' should name {field}");
    }
    assert_eq!(count_rows(engine.store(), "QRTZ_TRIGGERS").await, 0, "nothing written");
    assert_eq!(count_rows(engine.store(), "ACT_RU_JOB").await, 0);
    let e = s
        .add_job(&serde_json::from_value(json!({"name": "k", "handler": "no-such-handler"})).unwrap())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("handler"), "{e}");
    let e = s
        .add_job(&serde_json::from_value(json!({"name": "k", "handler": "record", "retries": 3})).unwrap())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("requestsRecovery"), "{e}");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Seed 004 §5's walk in `kairos doctor`: a late WAITING trigger, one in ERROR, one whose
/// trigger job is gone, and no node checked in.
async fn the_doctor_finds_what_keeps_a_trigger_from_firing(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    // The executor is off: nothing fires, and no node checks in.
    let engine = builder(&fx, &runs, Duration::ZERO).executor_enabled(false).build().await.unwrap();
    let s = engine.scheduler();
    s.add_job(&job("j")).await.unwrap();
    let past = engine.store().db_now().await.unwrap() - jiff::SignedDuration::from_mins(5);
    for name in ["late", "broken", "jobless"] {
        s.schedule(&trigger(
            json!({"name": name, "jobName": "j", "startTime": past.to_string(), "simple": {"interval": "PT1H"}}),
        ))
        .await
        .unwrap();
    }
    let store = engine.store();
    store
        .sql_execute("UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'ERROR' WHERE TRIGGER_NAME = 'broken'", &[])
        .await
        .unwrap();
    store.sql_execute("DELETE FROM ACT_RU_JOB WHERE SCOPE_ID_ = 'jobless'", &[]).await.unwrap();
    let report = kairos::doctor::diagnose(&engine, &Default::default()).await.unwrap();
    let codes: Vec<&str> = report.findings.iter().map(|f| f.code).collect();
    for code in ["trigger-late", "trigger-error", "trigger-without-job", "no-scheduler-checkin"] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}\n{report}");
    }
    let late: Vec<(Option<&str>, Option<&str>)> =
        report.with_code("trigger-late").map(|f| (f.trigger_group.as_deref(), f.trigger_name.as_deref())).collect();
    assert!(late.contains(&(Some("DEFAULT"), Some("late"))), "one finding per trigger, named: {late:?}");
    let jobless = report.with_code("trigger-without-job").next().unwrap();
    assert_eq!(jobless.trigger_name.as_deref(), Some("jobless"), "{jobless:?}");
    // Resuming the trigger gives it its trigger job back.
    s.pause_trigger("DEFAULT", "jobless").await.unwrap();
    s.resume_trigger("DEFAULT", "jobless").await.unwrap();
    let report = kairos::doctor::diagnose(&engine, &Default::default()).await.unwrap();
    assert_eq!(report.with_code("trigger-without-job").count(), 0, "{report}");
}

on_both_backends!(
    the_doctor_finds_what_keeps_a_trigger_from_firing,
    a_cron_trigger_fires_each_second_through_the_executor,
    a_firing_commits_ahead_runs_on_time_and_a_pause_cancels_it,
    simultaneous_firings_run_in_priority_order,
    seed_004_diagnostics_run_verbatim,
    a_simple_trigger_fires_its_count_then_goes_with_its_non_durable_job,
    misfired_triggers_follow_their_instruction_after_downtime,
    a_paused_group_persists_and_catches_new_triggers,
    non_concurrent_jobs_never_overlap,
    calendars_exclude_fire_times_and_chain,
    bad_triggers_are_refused_naming_the_field,
);

// Seed 004 §5's diagnostic queries, verbatim (the seed lost its quotes in transcription; they are
// restored around 'MyScheduler' and the states). The seed's MySQL arithmetic on NOW() runs
// through kairos's two operators on PostgreSQL (see 0004_scheduler.sql) and is translated to
// the same meaning on SQLite (store-sqlite/src/now.rs).
const SEED_004_HEARTBEAT: &str = "SELECT SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, NOW() - LAST_CHECKIN_TIME AS HEARTBEAT_AGE_SEC FROM qrtz_scheduler_state WHERE SCHED_NAME = 'MyScheduler';";
const SEED_004_WAITING: &str = "SELECT TRIGGER_NAME, TRIGGER_GROUP, TRIGGER_STATE, NEXT_FIRE_TIME, PREV_FIRE_TIME, (NOW() * 1000 - NEXT_FIRE_TIME) AS DELAY_MS FROM qrtz_triggers WHERE SCHED_NAME = 'MyScheduler' AND TRIGGER_STATE = 'WAITING' ORDER BY NEXT_FIRE_TIME ASC LIMIT 5;";
const SEED_004_FIRED: &str = "SELECT ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_STATE, SCHED_TIME, ENTRY_TIME, (NOW() * 1000 - ENTRY_TIME) AS DURATION_MS FROM qrtz_fired_triggers WHERE SCHED_NAME = 'MyScheduler' AND FIRED_STATE IN ('ACQUIRED', 'EXECUTING') ORDER BY ENTRY_TIME ASC;";
const SEED_004_SIMPLE: &str = "SELECT TRIGGER_NAME, TRIGGER_GROUP, REPEAT_COUNT, TIMES_TRIGGERED FROM qrtz_simple_triggers WHERE TRIGGER_NAME = 'myTrigger' AND TRIGGER_GROUP = 'myGroup';";

/// Fire-ahead (`SchedulerSettings::fire_ahead`): a firing is committed before its fire time —
/// its QRTZ_FIRED_TRIGGERS row ACQUIRED, its work waiting in ACT_RU_JOB — and its work runs at
/// the fire time, not before; pausing the trigger cancels a firing so committed.
/// Firings due at the same instant run in trigger priority order, higher first, as Quartz
/// acquires them (NEXT_FIRE_TIME, then PRIORITY descending): with one worker the order is
/// visible. The triggers are scheduled in another order than their priorities.
async fn simultaneous_firings_run_in_priority_order(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO).configure(|c| c.workers = 1).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    let at = (engine.store().db_now().await.unwrap() + jiff::SignedDuration::from_secs(3))
        .round(jiff::Unit::Second)
        .unwrap();
    let priorities = [("p1", 3), ("p2", 10), ("p3", -2), ("p4", 7), ("p5", 5), ("p6", 5)];
    for (name, priority) in priorities {
        s.add_job(&job(name)).await.unwrap();
        s.schedule(&trigger(json!({"name": name, "jobName": name, "startTime": at, "priority": priority,
                                   "simple": {"repeatCount": 0}})))
            .await
            .unwrap();
    }
    wait_until(LIMIT, "every firing", || async { runs.lock().unwrap().len() == priorities.len() }).await;
    let order: Vec<String> = runs.lock().unwrap().iter().map(|r| r.0.clone()).collect();
    let by_name = |n: &String| priorities.iter().find(|p| p.0 == n).map(|p| p.1);
    let got: Vec<_> = order.iter().filter_map(by_name).collect();
    assert_eq!(got, [10, 7, 5, 5, 3, -2], "higher priority first: {order:?}");
    assert!(runs.lock().unwrap().iter().all(|r| r.1 == at), "all were due at {at}");
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn a_firing_commits_ahead_runs_on_time_and_a_pause_cancels_it(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    let engine = builder(&fx, &runs, Duration::ZERO)
        .scheduler(kairos::scheduler::SchedulerSettings {
            name: "MyScheduler".into(),
            checkin_interval: Duration::from_millis(200),
            fire_ahead: jiff::SignedDuration::from_secs(3),
            ..Default::default()
        })
        .build()
        .await
        .unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    let store = engine.store().clone();
    let soon = || async {
        let now = store.db_now().await.unwrap() + jiff::SignedDuration::from_secs(4);
        now.round(jiff::Unit::Millisecond).unwrap()
    };
    let fired = |name: &'static str| async move {
        s.fired_triggers().await.unwrap().into_iter().filter(|f| f.trigger_name == name).collect::<Vec<_>>()
    };

    s.add_job(&job("early")).await.unwrap();
    let at = soon().await;
    s.schedule(&trigger(json!({"name": "once", "jobName": "early", "startTime": at, "simple": {"repeatCount": 0}})))
        .await
        .unwrap();
    wait_until(LIMIT, "the firing committed ahead", || async { !fired("once").await.is_empty() }).await;
    let f = fired("once").await.remove(0);
    assert_eq!(f.scheduled_time, at);
    assert!(f.fired_time < at, "fired ahead of its time: {f:?}");
    assert_eq!(f.state, "ACQUIRED", "its work waits for the fire time");
    assert!(store.db_now().await.unwrap() < at, "the test saw it before the fire time");
    assert_eq!(count(&runs, "early"), 0, "nothing ran yet");
    wait_until(LIMIT, "the work at its fire time", || async { count(&runs, "early") == 1 }).await;
    let run = runs.lock().unwrap()[0].clone();
    assert_eq!(run.1, at, "the work job is due at the fire time");
    assert!(run.2 >= at, "not before its fire time: {run:?}");

    s.add_job(&job("skipped")).await.unwrap();
    let at = soon().await;
    s.schedule(&trigger(
        json!({"name": "every", "jobName": "skipped", "startTime": at, "simple": {"interval": "PT60S"}}),
    ))
    .await
    .unwrap();
    wait_until(LIMIT, "the firing committed ahead", || async { !fired("every").await.is_empty() }).await;
    s.pause_trigger("DEFAULT", "every").await.unwrap();
    assert!(fired("every").await.is_empty(), "the pause cancelled the committed firing");
    let work = store
        .sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE HANDLER_TYPE_ = 'quartz-job' AND SCOPE_ID_ = 'every'", &[])
        .await
        .unwrap();
    assert_eq!(work[0][0].as_i64(), Some(0), "and its work job");
    let wait = at.duration_since(store.db_now().await.unwrap()).unsigned_abs() + Duration::from_millis(500);
    tokio::time::sleep(wait).await;
    assert_eq!(count(&runs, "skipped"), 0, "a paused trigger's committed firing does not run");
    engine.shutdown(Duration::from_secs(5)).await;
}

async fn seed_004_diagnostics_run_verbatim(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let runs: Runs = Default::default();
    // A slow job, so that a firing is seen ACQUIRED or EXECUTING.
    let engine = builder(&fx, &runs, Duration::from_secs(3)).build().await.unwrap();
    engine.start().await.unwrap();
    let s = engine.scheduler();
    s.check_in().await.unwrap();
    s.add_job(&job("slow")).await.unwrap();
    s.schedule(&trigger(json!({"name": "myTrigger", "group": "myGroup", "jobName": "slow", "simple": {"interval": "PT1H", "repeatCount": 5}})))
        .await
        .unwrap();
    s.schedule(&trigger(json!({"name": "later", "jobName": "slow", "startTime": "2099-01-01T00:00:00Z", "cron": {"expression": "0 0 12 * * ?"}})))
        .await
        .unwrap();
    let q = |sql: &'static str| {
        let store = engine.store().clone();
        async move { store.sql_query(sql, &[]).await.unwrap() }
    };
    let hb = q(SEED_004_HEARTBEAT).await;
    assert_eq!(hb.len(), 1, "{hb:?}");
    assert_eq!(hb[0][1].as_str(), Some("s1"));
    let age = hb[0][3].as_f64().or_else(|| hb[0][3].as_str().and_then(|s| s.parse().ok())).expect("an age");
    assert!((0.0..60.0).contains(&age), "heartbeat age in seconds: {age}");

    wait_until(LIMIT, "the firing in flight", || async { !q(SEED_004_FIRED).await.is_empty() }).await;
    let fired = q(SEED_004_FIRED).await;
    assert_eq!(fired[0][1].as_str(), Some("myTrigger"));
    assert!(matches!(fired[0][4].as_str(), Some("ACQUIRED" | "EXECUTING")), "{fired:?}");
    assert_eq!(fired[0][3].as_str(), Some("s1"));
    // The API reports the firing EXECUTING once its work runs (from the work job's lock).
    wait_until(LIMIT, "the firing seen EXECUTING", || async {
        s.fired_triggers().await.unwrap().iter().any(|f| f.state == "EXECUTING" && f.instance_name == "s1")
    })
    .await;

    let waiting = q(SEED_004_WAITING).await;
    let names: Vec<_> = waiting.iter().map(|r| r[0].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(names, vec!["myTrigger", "later"], "in NEXT_FIRE_TIME order: {waiting:?}");
    let delay = waiting[1][5].as_i64().expect("DELAY_MS is a number");
    assert!(delay < 0, "a trigger due in 2099 has a negative delay: {delay}");

    let simple = q(SEED_004_SIMPLE).await;
    assert_eq!(simple[0][2].as_i64(), Some(5));
    assert_eq!(simple[0][3].as_i64(), Some(1), "fired once so far");
    engine.shutdown(Duration::from_secs(5)).await;
}
