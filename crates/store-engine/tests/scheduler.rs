//! `kairos_store_engine::scheduler`'s job details, triggers and calendars on both backends:
//! each typed function writes then reads back, its filters select what they say, and a bad
//! stored value is named by table, row and column.

mod common;

use jiff::{SignedDuration, Timestamp};
use kairos_schedule::{
    Calendar, CalendarIntervalSchedule, CalendarKind, CronSchedule, DailyTimeIntervalSchedule, IntervalUnit, JobKey,
    Schedule, SimpleSchedule, Trigger, TriggerKey, Zone,
};
use kairos_store::{ErrorKind, SqlValue, Store, Unreadable};
use kairos_store_engine::scheduler::{self as s, JobDetail, PauseScope, TriggerState};
use serde_json::{Map, json};
use std::sync::Arc;

const SCHED: &str = "test";

fn job(name: &str, durable: bool) -> JobDetail {
    JobDetail {
        name: name.into(),
        group: "G".into(),
        handler: "noop".into(),
        description: Some("d".into()),
        durable,
        requests_recovery: false,
        concurrent: true,
        data: json!({"a": 1}).as_object().unwrap().clone(),
        retries: 1,
        tenant_id: "acme".into(),
    }
}

async fn add_job(store: &dyn Store, j: &JobDetail) {
    let data = Some(serde_json::Value::Object(j.data.clone()).to_string());
    store.write_all(&[s::job_upsert(SCHED, j, data, false).expect(1)]).await.unwrap();
}

fn start() -> Timestamp {
    "2030-01-01T00:00:00Z".parse().unwrap()
}

fn trigger(name: &str, job: &str, schedule: Schedule) -> Trigger {
    let mut tr = Trigger::new(TriggerKey::new(name, "TG"), JobKey::new(job, "G"), start(), schedule);
    tr.compute_first_fire_time(None).expect("a first fire time");
    tr
}

fn simple(name: &str) -> Trigger {
    trigger(name, "j", Schedule::Simple(SimpleSchedule::new(-1, SignedDuration::from_secs(10))))
}

async fn add_trigger(store: &dyn Store, tr: &Trigger, state: TriggerState) {
    let data: Map<_, _> = json!({"t": true}).as_object().unwrap().clone();
    store.write_all(&s::trigger_insert(SCHED, tr, state, &data)).await.unwrap();
}

async fn sql(store: &dyn Store, text: &str) {
    store.sql_execute(text, &[]).await.unwrap();
}

async fn job_details_are_written_read_listed_and_deleted(store: Arc<dyn Store>) {
    let store = &*store;
    let (a, b) = (job("a", true), JobDetail { group: "H".into(), ..job("b", false) });
    add_job(store, &a).await;
    add_job(store, &b).await;
    assert!(s::job_exists(store, SCHED, "a", "G").await.unwrap());
    assert!(!s::job_exists(store, "other", "a", "G").await.unwrap(), "another scheduler's");
    assert_eq!(s::job_get(store, SCHED, "G", "a").await.unwrap(), Some(a.clone()));
    assert_eq!(s::job_list(store, SCHED, None).await.unwrap(), [a.clone(), b.clone()]);
    assert_eq!(s::job_list(store, SCHED, Some("H")).await.unwrap(), std::slice::from_ref(&b));
    let changed = JobDetail { handler: "other".into(), concurrent: false, retries: 3, requests_recovery: true, ..a };
    store.write_all(&[s::job_upsert(SCHED, &changed, None, true).expect(1)]).await.unwrap();
    let read = s::job_get(store, SCHED, "G", "a").await.unwrap().unwrap();
    assert_eq!(read, JobDetail { data: Map::new(), ..changed });
    // A durable job stays when orphaned; a non-durable one goes.
    let n =
        store.write_all(&[s::orphan_job_delete(SCHED, "G", "a"), s::orphan_job_delete(SCHED, "H", "b")]).await.unwrap();
    assert_eq!(n, [0, 1]);
    assert_eq!(store.write_all(&[s::job_delete(SCHED, "G", "a")]).await.unwrap(), [1]);
    assert!(s::job_list(store, SCHED, None).await.unwrap().is_empty());
}

async fn a_bad_job_detail_value_is_named(store: Arc<dyn Store>) {
    add_job(&*store, &job("a", true)).await;
    sql(&*store, "UPDATE QRTZ_JOB_DETAILS SET JOB_DATA = 'not json' WHERE JOB_NAME = 'a'").await;
    let e = s::job_get(&*store, SCHED, "G", "a").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("QRTZ_JOB_DETAILS", "a", "JOB_DATA"));
    assert_eq!(u.raw.as_deref(), Some("not json"));
    assert!(s::job_list(&*store, SCHED, None).await.is_err(), "never a default");
}

async fn triggers_of_every_type_round_trip(store: Arc<dyn Store>) {
    let store = &*store;
    add_job(store, &job("j", true)).await;
    let zone = Zone::new("Europe/Paris");
    let mut daily = DailyTimeIntervalSchedule::new(2, IntervalUnit::Hour, zone.clone());
    daily.repeat_count = 7;
    let mut cal = CalendarIntervalSchedule::new(1, IntervalUnit::Month, zone.clone());
    cal.preserve_hour_of_day_across_dst = true;
    let mut triggers = vec![
        simple("a-simple"),
        trigger("b-cron", "j", Schedule::Cron(CronSchedule::parse("0 0 12 * * ?", "Europe/Paris").unwrap())),
        trigger("c-calint", "j", Schedule::CalendarInterval(cal)),
        trigger("d-daily", "j", Schedule::DailyTimeInterval(daily)),
    ];
    triggers[1].description = Some("noon".into());
    triggers[2].calendar_name = Some("holidays".into());
    for tr in &triggers {
        add_trigger(store, tr, TriggerState::Waiting).await;
    }
    for tr in &triggers {
        let got = s::trigger_get(store, SCHED, "TG", &tr.key.name).await.unwrap().unwrap().unwrap();
        assert_eq!(got.state, TriggerState::Waiting);
        assert_eq!(got.data, *json!({"t": true}).as_object().unwrap());
        assert_eq!(serde_json::to_value(&got.trigger).unwrap(), serde_json::to_value(tr).unwrap(), "{}", tr.key.name);
    }
    assert!(s::trigger_get(store, SCHED, "TG", "absent").await.unwrap().is_none());
    let names = |list: Vec<s::TriggerRead>| list.into_iter().map(|r| r.unwrap().trigger.key.name).collect::<Vec<_>>();
    assert_eq!(names(s::trigger_list(store, SCHED, None, None).await.unwrap()).len(), 4);
    assert!(s::trigger_list(store, SCHED, Some("other"), None).await.unwrap().is_empty());
    assert!(s::trigger_list(store, SCHED, None, Some(TriggerState::Paused)).await.unwrap().is_empty());
    assert_eq!(names(s::triggers_waiting_on_calendar(store, SCHED, "holidays").await.unwrap()), ["c-calint"]);
    // With its job detail, in one read; a trigger whose job is gone has none.
    let (st, j) = s::trigger_with_job_get(store, SCHED, "TG", "b-cron").await.unwrap().unwrap().unwrap();
    assert_eq!((st.trigger.key.name.as_str(), j.map(|j| j.name)), ("b-cron", Some("j".to_string())));
}

async fn an_unreadable_trigger_is_set_aside_named_by_group_and_name(store: Arc<dyn Store>) {
    let store = &*store;
    add_job(store, &job("j", true)).await;
    for (name, _) in BAD {
        add_trigger(store, &simple(name), TriggerState::Waiting).await;
    }
    add_trigger(store, &simple("good"), TriggerState::Waiting).await;
    for (name, update) in BAD {
        sql(store, &format!("{update} WHERE TRIGGER_NAME = '{name}'")).await;
    }
    let list = s::trigger_list(store, SCHED, None, None).await.unwrap();
    let bad: Vec<Unreadable> = list.iter().filter_map(|r| r.clone().err()).collect();
    let columns: Vec<(&str, &str, Option<&str>)> =
        bad.iter().map(|u| (u.id.as_str(), u.column.as_str(), u.raw.as_deref())).collect();
    assert_eq!(
        columns,
        [
            ("TG.bad-misfire", "MISFIRE_INSTR", Some("99")),
            ("TG.bad-state", "TRIGGER_STATE", Some("ACQUIRED")),
            ("TG.bad-type", "TRIGGER_TYPE", Some("BOGUS")),
        ]
    );
    assert!(bad.iter().all(|u| u.table == "QRTZ_TRIGGERS"));
    assert_eq!(list.iter().filter(|r| r.is_ok()).count(), 1, "the good one is read");
    assert!(s::trigger_get(store, SCHED, "TG", "bad-type").await.unwrap().unwrap().is_err());
    assert!(s::trigger_with_job_get(store, SCHED, "TG", "bad-state").await.unwrap().unwrap().is_err());
    // A job detail that cannot be read sets its triggers aside on the firing path.
    sql(store, "UPDATE QRTZ_JOB_DETAILS SET JOB_DATA = '[1]'").await;
    let u = s::trigger_with_job_get(store, SCHED, "TG", "good").await.unwrap().unwrap().unwrap_err();
    assert_eq!((u.table.as_str(), u.column.as_str()), ("QRTZ_JOB_DETAILS", "JOB_DATA"));
}

const BAD: [(&str, &str); 3] = [
    ("bad-misfire", "UPDATE QRTZ_TRIGGERS SET MISFIRE_INSTR = 99"),
    ("bad-state", "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'ACQUIRED'"),
    ("bad-type", "UPDATE QRTZ_TRIGGERS SET TRIGGER_TYPE = 'BOGUS'"),
];

async fn a_trigger_advances_once_per_fire_time(store: Arc<dyn Store>) {
    let store = &*store;
    add_job(store, &job("j", true)).await;
    let mut tr = simple("t");
    add_trigger(store, &tr, TriggerState::Waiting).await;
    let was = tr.next_fire_time;
    tr.triggered_at(None, start());
    store.write_all(&s::trigger_advance(SCHED, &tr, was, TriggerState::Waiting)).await.unwrap();
    let e = store.write_all(&s::trigger_advance(SCHED, &tr, was, TriggerState::Waiting)).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict, "the same fire time fires once");
    let got = s::trigger_get(store, SCHED, "TG", "t").await.unwrap().unwrap().unwrap();
    assert_eq!(got.trigger.next_fire_time, tr.next_fire_time);
    assert_eq!(got.trigger.previous_fire_time, was);
    // Into BLOCKED; and its last fire deletes it, once.
    let was = tr.next_fire_time;
    store.write_all(&s::trigger_advance(SCHED, &tr, was, TriggerState::Blocked)).await.unwrap();
    assert_eq!(state(store, "t").await, Some(TriggerState::Blocked));
    sql(store, "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'WAITING'").await;
    store.write_all(&s::trigger_finish(SCHED, &tr, was, true)).await.unwrap();
    assert_eq!(state(store, "t").await, None);
    assert!(store.write_all(&s::trigger_finish(SCHED, &tr, was, true)).await.is_err());
}

async fn state(store: &dyn Store, name: &str) -> Option<TriggerState> {
    s::trigger_get(store, SCHED, "TG", name).await.unwrap().map(|r| r.unwrap().state)
}

async fn trigger_jobs(store: &dyn Store, name: &str) -> i64 {
    let rows = store
        .sql_query(
            "SELECT COUNT(*) FROM ACT_RU_JOB WHERE SCOPE_ID_ = ? AND HANDLER_TYPE_ = 'quartz-trigger'",
            &[SqlValue::Text(name.into())],
        )
        .await
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

async fn pausing_resuming_and_groups(store: Arc<dyn Store>) {
    let store = &*store;
    add_job(store, &job("j", true)).await;
    let (now, ahead) = (store.db_now().await.unwrap(), SignedDuration::from_millis(500));
    for name in ["a", "b"] {
        let tr = simple(name);
        add_trigger(store, &tr, TriggerState::Waiting).await;
        let next = tr.next_fire_time.unwrap();
        store.write_all(&[s::trigger_job_insert(SCHED, "TG", name, 5, next, now, ahead)]).await.unwrap();
    }
    store.write_all(&s::trigger_pause(SCHED, PauseScope::Trigger("TG", "a"), now)).await.unwrap();
    assert_eq!((state(store, "a").await, trigger_jobs(store, "a").await), (Some(TriggerState::Paused), 0));
    assert_eq!((state(store, "b").await, trigger_jobs(store, "b").await), (Some(TriggerState::Waiting), 1));
    // Waking is conditional on the state it moves from.
    let next = Some(s::ts_to_ms(start()));
    let wake = |from| s::trigger_wake(SCHED, "TG", "a", next, now, ahead, from, TriggerState::Waiting);
    assert_eq!(store.write_all(&wake(TriggerState::Error)).await.unwrap(), [0, 0]);
    assert_eq!(store.write_all(&wake(TriggerState::Paused)).await.unwrap(), [1, 1]);
    assert_eq!((state(store, "a").await, trigger_jobs(store, "a").await), (Some(TriggerState::Waiting), 1));
    // A group: paused with its triggers, BLOCKED ones remembered as PAUSED_BLOCKED.
    sql(store, "UPDATE QRTZ_TRIGGERS SET TRIGGER_STATE = 'BLOCKED' WHERE TRIGGER_NAME = 'b'").await;
    let mut writes = s::paused_group_insert(SCHED, "TG");
    writes.extend(s::trigger_pause(SCHED, PauseScope::Group("TG"), now));
    store.write_all(&writes).await.unwrap();
    store.write_all(&s::paused_group_insert(SCHED, "TG")).await.unwrap();
    assert_eq!(s::paused_groups(store, SCHED).await.unwrap(), ["TG"]);
    assert!(s::group_paused(store, SCHED, "TG").await.unwrap());
    assert_eq!(state(store, "a").await, Some(TriggerState::Paused));
    assert_eq!(state(store, "b").await, Some(TriggerState::PausedBlocked));
    store.write_all(&[s::trigger_resume_blocked(SCHED, "TG", "b")]).await.unwrap();
    assert_eq!(state(store, "b").await, Some(TriggerState::Blocked));
    store.write_all(&[s::paused_group_delete(SCHED, "TG")]).await.unwrap();
    assert!(!s::group_paused(store, SCHED, "TG").await.unwrap());
    store.write_all(&[s::trigger_error(SCHED, "TG", "a")]).await.unwrap();
    assert_eq!(state(store, "a").await, Some(TriggerState::Paused), "only a WAITING trigger goes to ERROR");
}

async fn deleting_a_trigger_or_a_jobs_triggers_leaves_no_row(store: Arc<dyn Store>) {
    let store = &*store;
    add_job(store, &job("j", true)).await;
    let now = store.db_now().await.unwrap();
    for name in ["a", "b", "c"] {
        let tr = simple(name);
        add_trigger(store, &tr, TriggerState::Waiting).await;
        let next = tr.next_fire_time.unwrap();
        store.write_all(&[s::trigger_job_insert(SCHED, "TG", name, 5, next, now, SignedDuration::ZERO)]).await.unwrap();
    }
    store.write_all(&s::trigger_delete(SCHED, "TG", "a", now)).await.unwrap();
    assert_eq!((state(store, "a").await, trigger_jobs(store, "a").await), (None, 0));
    store.write_all(&[s::trigger_job_delete(SCHED, "TG", "b")]).await.unwrap();
    assert_eq!((state(store, "b").await, trigger_jobs(store, "b").await), (Some(TriggerState::Waiting), 0));
    store.write_all(&s::triggers_of_job_delete(SCHED, "G", "j")).await.unwrap();
    assert!(s::trigger_list(store, SCHED, None, None).await.unwrap().is_empty());
    let left = store.sql_query("SELECT COUNT(*) FROM QRTZ_SIMPLE_TRIGGERS", &[]).await.unwrap();
    assert_eq!(left[0][0].as_i64(), Some(0));
    assert_eq!(trigger_jobs(store, "c").await, 0);
}

async fn calendars_are_stored_read_used_and_deleted(store: Arc<dyn Store>) {
    let store = &*store;
    let cal = Calendar::new(CalendarKind::Holiday { excluded_dates: ["2030-01-01".parse().unwrap()].into() });
    let text = serde_json::to_string(&cal).unwrap();
    store.write_all(&[s::calendar_put(SCHED, "h", &text, false).expect(1)]).await.unwrap();
    store.write_all(&[s::calendar_put(SCHED, "h", &text, true).expect(1)]).await.unwrap();
    assert_eq!(s::calendar_get(store, SCHED, "h").await.unwrap(), Some(cal));
    assert_eq!(s::calendar_get(store, SCHED, "nope").await.unwrap(), None);
    assert_eq!(s::calendar_names(store, SCHED).await.unwrap(), ["h"]);
    add_job(store, &job("j", true)).await;
    let mut tr = simple("t");
    tr.calendar_name = Some("h".into());
    add_trigger(store, &tr, TriggerState::Waiting).await;
    assert_eq!(s::calendar_users(store, SCHED, "h").await.unwrap(), [("TG".to_string(), "t".to_string())]);
    sql(store, "UPDATE QRTZ_CALENDARS SET CALENDAR = '{\"type\": \"nope\"}'").await;
    let e = s::calendar_get(store, SCHED, "h").await.unwrap_err();
    let u = e.unreadable.unwrap();
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("QRTZ_CALENDARS", "h", "CALENDAR"));
    assert_eq!(store.write_all(&[s::calendar_delete(SCHED, "h")]).await.unwrap(), [1]);
}

on_both_backends!(
    job_details_are_written_read_listed_and_deleted,
    a_bad_job_detail_value_is_named,
    triggers_of_every_type_round_trip,
    an_unreadable_trigger_is_set_aside_named_by_group_and_name,
    a_trigger_advances_once_per_fire_time,
    pausing_resuming_and_groups,
    deleting_a_trigger_or_a_jobs_triggers_leaves_no_row,
    calendars_are_stored_read_used_and_deleted,
);
