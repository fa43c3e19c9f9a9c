//! `kairos_store_engine::scheduler`'s firing and check-in statements on both backends: a
//! firing's work job and QRTZ_FIRED_TRIGGERS row, the blocked triggers of a busy job, the
//! check-in's rows and sweep; a bad stored value is named.

mod common;

use jiff::{SignedDuration, Timestamp};
use kairos_schedule::{JobKey, Schedule, SimpleSchedule, Trigger, TriggerKey};
use kairos_store::{ErrorKind, Store};
use kairos_store_engine::scheduler::{self as s, JobDetail, TriggerState};
use serde_json::Map;
use std::sync::Arc;

const SCHED: &str = "test";

fn job() -> JobDetail {
    JobDetail {
        name: "j".into(),
        group: "G".into(),
        handler: "noop".into(),
        description: None,
        durable: true,
        requests_recovery: true,
        concurrent: false,
        data: Map::new(),
        retries: 3,
        tenant_id: String::new(),
    }
}

async fn setup(store: &dyn Store, triggers: &[(&str, TriggerState)]) {
    store.write_all(&[s::job_upsert(SCHED, &job(), None, false)]).await.unwrap();
    for (name, state) in triggers {
        let start: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        let schedule = Schedule::Simple(SimpleSchedule::new(-1, SignedDuration::from_secs(10)));
        let mut tr = Trigger::new(TriggerKey::new(*name, "TG"), JobKey::new("j", "G"), start, schedule);
        tr.compute_first_fire_time(None);
        store.write_all(&s::trigger_insert(SCHED, &tr, *state, &Map::new())).await.unwrap();
    }
}

fn work<'a>(id: &'a str, job: &'a JobDetail, now: Timestamp) -> s::WorkJob<'a> {
    s::WorkJob {
        id,
        job,
        exclusive_key: Some("quartz:test:G.j".into()),
        trigger_group: "TG",
        trigger_name: "a",
        scheduled: now,
        now,
        priority: 7,
        config: "{}".into(),
    }
}

async fn a_firing_is_listed_until_its_work_is_done(store: Arc<dyn Store>) {
    let store = &*store;
    setup(store, &[("a", TriggerState::Waiting)]).await;
    let now = Timestamp::from_millisecond(store.db_now().await.unwrap().as_millisecond()).unwrap();
    let j = job();
    let wj = work("w1", &j, now);
    assert!(!s::job_busy(store, SCHED, "G", "j").await.unwrap());
    store.write_all(&[s::work_job_insert(SCHED, &wj), s::fired_insert(SCHED, &wj, "n1")]).await.unwrap();
    assert!(s::job_busy(store, SCHED, "G", "j").await.unwrap());
    let fired = s::fired_list(store, SCHED).await.unwrap();
    assert_eq!(fired.len(), 1);
    let f = &fired[0];
    assert_eq!(
        (f.entry_id.as_str(), f.trigger_name.as_str(), f.instance_name.as_str(), f.state.as_str()),
        ("w1", "a", "n1", "ACQUIRED")
    );
    assert_eq!((f.fired_time, f.scheduled_time, f.priority), (now, now, 7));
    assert!(f.nonconcurrent && f.requests_recovery);
    assert_eq!(s::fired_by_time(store, SCHED).await.unwrap(), fired);
    // Its work job locked: EXECUTING on the locking node.
    store.sql_execute("UPDATE ACT_RU_JOB SET LOCK_OWNER_ = 'n2' WHERE ID_ = 'w1'", &[]).await.unwrap();
    let f = &s::fired_list(store, SCHED).await.unwrap()[0];
    assert_eq!((f.state.as_str(), f.instance_name.as_str()), ("EXECUTING", "n2"));
    assert_eq!(store.write_all(&[s::fired_delete(SCHED, "w1")]).await.unwrap(), [1]);
    assert!(s::fired_list(store, SCHED).await.unwrap().is_empty());
}

async fn blocked_triggers_are_found_and_unblocked(store: Arc<dyn Store>) {
    let store = &*store;
    setup(store, &[("a", TriggerState::Blocked), ("b", TriggerState::PausedBlocked), ("c", TriggerState::Waiting)])
        .await;
    let now = store.db_now().await.unwrap();
    let mut names: Vec<String> =
        s::triggers_blocked_of_job(store, SCHED, "G", "j").await.unwrap().into_iter().map(|r| r.name).collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    // A firing of the job under way: none is free to unblock.
    let j = job();
    let wj = work("w1", &j, now);
    store.write_all(&[s::fired_insert(SCHED, &wj, "n1")]).await.unwrap();
    assert!(s::triggers_blocked_without_firing(store, SCHED).await.unwrap().is_empty());
    // The check-in's sweep: the firing without a work job goes, then both are free.
    store.write_all(&[s::fired_orphans_delete(SCHED)]).await.unwrap();
    let free = s::triggers_blocked_without_firing(store, SCHED).await.unwrap();
    assert_eq!(free.len(), 2);
    let a = free.iter().find(|r| r.name == "a").unwrap();
    assert!(a.next_fire_time.is_some());
    let ahead = SignedDuration::ZERO;
    let mut writes =
        s::trigger_wake(SCHED, "TG", "a", a.next_fire_time, now, ahead, TriggerState::Blocked, TriggerState::Waiting);
    writes.push(s::trigger_unblock_paused(SCHED, "TG", "b"));
    assert_eq!(store.write_all(&writes).await.unwrap(), [1, 1, 1]);
    let state = |name: &'static str| async move {
        s::trigger_get(store, SCHED, "TG", name).await.unwrap().unwrap().unwrap().state
    };
    assert_eq!((state("a").await, state("b").await), (TriggerState::Waiting, TriggerState::Paused));
}

async fn an_unreadable_blocked_trigger_is_set_aside(store: Arc<dyn Store>) {
    let store = &*store;
    // SQLite keeps text in a BIGINT column; PostgreSQL's types hold.
    if store.backend() != kairos_store::Backend::Sqlite {
        return;
    }
    setup(store, &[("a", TriggerState::Blocked), ("z", TriggerState::Blocked)]).await;
    store.sql_execute("UPDATE QRTZ_TRIGGERS SET NEXT_FIRE_TIME = 'soon' WHERE TRIGGER_NAME = 'z'", &[]).await.unwrap();
    let names = |l: Vec<s::TriggerKeyRow>| l.into_iter().map(|r| r.name).collect::<Vec<_>>();
    assert_eq!(names(s::triggers_blocked_of_job(store, SCHED, "G", "j").await.unwrap()), ["a"]);
    assert_eq!(names(s::triggers_blocked_without_firing(store, SCHED).await.unwrap()), ["a"]);
    let list = s::trigger_list(store, SCHED, None, None).await.unwrap();
    let bad: Vec<String> = list.into_iter().filter_map(|r| r.err()).map(|u| u.id).collect();
    assert_eq!(bad, ["TG.z"], "named where triggers are listed");
}

async fn check_ins_are_written_listed_and_forgotten(store: Arc<dyn Store>) {
    let store = &*store;
    let now = store.db_now().await.unwrap().as_millisecond();
    store
        .write_all(&[s::checkin_upsert(SCHED, "n1", now - 10_000, 7500), s::checkin_upsert(SCHED, "n2", now, 7500)])
        .await
        .unwrap();
    store.write_all(&[s::checkin_upsert(SCHED, "n1", now - 5_000, 1000)]).await.unwrap();
    let names = |l: Vec<s::SchedulerNode>| l.into_iter().map(|n| n.instance_name).collect::<Vec<_>>();
    assert_eq!(names(s::checkin_list(store, SCHED).await.unwrap()), ["n2", "n1"], "latest first");
    let by_node = s::checkins_by_node(store, SCHED).await.unwrap();
    assert_eq!(names(by_node.clone()), ["n1", "n2"]);
    assert_eq!((by_node[0].last_checkin_time.as_millisecond(), by_node[0].checkin_interval_ms), (now - 5_000, 1000));
    store.write_all(&[s::checkins_forget(SCHED, now - 1)]).await.unwrap();
    assert_eq!(names(s::checkin_list(store, SCHED).await.unwrap()), ["n2"]);
}

async fn a_bad_check_in_time_is_named(store: Arc<dyn Store>) {
    store.write_all(&[s::checkin_upsert(SCHED, "n1", 999_999_999_999_999_999, 7500)]).await.unwrap();
    let e = s::checkin_list(&*store, SCHED).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    let u = e.unreadable.unwrap();
    assert_eq!(
        (u.table.as_str(), u.id.as_str(), u.column.as_str()),
        ("QRTZ_SCHEDULER_STATE", "n1", "LAST_CHECKIN_TIME")
    );
}

on_both_backends!(
    a_firing_is_listed_until_its_work_is_done,
    blocked_triggers_are_found_and_unblocked,
    an_unreadable_blocked_trigger_is_set_aside,
    check_ins_are_written_listed_and_forgotten,
    a_bad_check_in_time_is_named,
);
