//! `kairos_store_engine::doctor`'s finding queries on both backends: each selects the rows its
//! finding is about, typed, and a stored instant that is not one is shown as stored.

mod common;

use jiff::{SignedDuration, Timestamp};
use kairos_schedule::{CronSchedule, JobKey, Schedule, SimpleSchedule, Trigger, TriggerKey};
use kairos_store::{SqlValue, Store};
use kairos_store_engine::doctor::{Shown, cluster, instance, scheduler as q};
use kairos_store_engine::scheduler::{self as s, JobDetail, TriggerState};
use serde_json::Map;
use std::sync::Arc;

const SCHED: &str = "test";

async fn sql(store: &dyn Store, text: &str, binds: &[SqlValue]) {
    store.sql_execute(text, binds).await.unwrap();
}

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
}

async fn add_trigger(store: &dyn Store, name: &str, group: &str, schedule: Schedule, state: TriggerState) -> Trigger {
    let start: Timestamp = "2020-01-01T00:00:00Z".parse().unwrap();
    let mut tr = Trigger::new(TriggerKey::new(name, group), JobKey::new("j", "G"), start, schedule);
    tr.compute_first_fire_time(None);
    store.write_all(&s::trigger_insert(SCHED, &tr, state, &Map::new())).await.unwrap();
    tr
}

async fn the_scheduler_findings_select_their_triggers(store: Arc<dyn Store>) {
    let store = &*store;
    let job = JobDetail {
        name: "j".into(),
        group: "G".into(),
        handler: "noop".into(),
        description: None,
        durable: true,
        requests_recovery: false,
        concurrent: false,
        data: Map::new(),
        retries: 1,
        tenant_id: String::new(),
    };
    store.write_all(&[s::job_upsert(SCHED, &job, None, false)]).await.unwrap();
    let every = || Schedule::Simple(SimpleSchedule::new(-1, SignedDuration::from_secs(60)));
    let late = add_trigger(store, "late", "A", every(), TriggerState::Waiting).await;
    add_trigger(store, "broken", "A", every(), TriggerState::Error).await;
    add_trigger(store, "held", "A", every(), TriggerState::Paused).await;
    add_trigger(store, "grouped", "P", every(), TriggerState::PausedBlocked).await;
    add_trigger(store, "busy", "A", every(), TriggerState::Blocked).await;
    let cron = Schedule::Cron(CronSchedule::parse("0 0 12 * * ?", "Asia/Shanghai").unwrap());
    add_trigger(store, "noon", "C", cron, TriggerState::Paused).await;
    store.write_all(&s::paused_group_insert(SCHED, "P")).await.unwrap();
    assert_eq!(q::trigger_count(store, SCHED).await.unwrap(), 6);
    assert_eq!(q::trigger_count(store, "other").await.unwrap(), 0);
    let now = store.db_now().await.unwrap();
    let names =
        |l: Vec<q::TriggerFinding>| l.into_iter().map(|f| format!("{}.{}", f.group, f.name)).collect::<Vec<_>>();
    let found = q::triggers_late(store, SCHED, now.as_millisecond()).await.unwrap();
    assert_eq!(found[0].next_fire_time, late.next_fire_time.map(s::ts_to_ms));
    assert_eq!(names(found), ["A.late"]);
    assert_eq!(names(q::triggers_in_error(store, SCHED).await.unwrap()), ["A.broken"]);
    assert_eq!(names(q::triggers_without_trigger_job(store, SCHED).await.unwrap()), ["A.late"]);
    store.write_all(&[s::trigger_job_insert(SCHED, "A", "late", 5, now, now, SignedDuration::ZERO)]).await.unwrap();
    assert!(q::triggers_without_trigger_job(store, SCHED).await.unwrap().is_empty());
    let paused = q::triggers_paused(store, SCHED).await.unwrap();
    let flags: Vec<(String, bool)> = paused.iter().map(|f| (f.name.clone(), f.group_paused)).collect();
    assert_eq!(flags, [("held".into(), false), ("noon".into(), false), ("grouped".into(), true)]);
    let blocked = q::triggers_blocked(store, SCHED).await.unwrap();
    assert_eq!((blocked[0].name.as_str(), blocked[0].job_name.as_deref()), ("busy", Some("j")));
    let zones = q::cron_triggers_with_zone(store, SCHED).await.unwrap();
    assert_eq!(zones.len(), 1);
    assert_eq!(
        (zones[0].time_zone.as_deref(), zones[0].cron_expression.as_deref()),
        (Some("Asia/Shanghai"), Some("0 0 12 * * ?"))
    );
}

async fn the_job_findings_select_backlog_retries_and_durations(store: Arc<dyn Store>) {
    let store = &*store;
    let now = store.db_now().await.unwrap();
    let due = now - SignedDuration::from_secs(120);
    store
        .write_all(&[
            s::trigger_job_insert(SCHED, "A", "t1", 5, due, now, SignedDuration::ZERO),
            s::trigger_job_insert(SCHED, "A", "t2", 5, now, now, SignedDuration::ZERO),
        ])
        .await
        .unwrap();
    let backlog = cluster::backlog_by_type(store, now).await.unwrap();
    assert_eq!(backlog.len(), 1);
    assert_eq!((backlog[0].job_type.as_str(), backlog[0].count), ("timer", 2));
    let oldest = backlog[0].oldest.as_ref().and_then(Shown::at).unwrap();
    assert_eq!(oldest.as_millisecond(), due.as_millisecond());
    sql(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE SCOPE_ID_ = 't1'", &[]).await;
    let ids = cluster::jobs_without_retries(store, 20).await.unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(cluster::backlog_by_type(store, now).await.unwrap()[0].count, 1, "retries left only");
    let (start, end) = (now - SignedDuration::from_secs(9), now);
    for (id, outcome) in [("l1", "success"), ("l2", "abandoned")] {
        sql(
            store,
            "INSERT INTO ACT_HI_JOB_LOG (ID_, JOB_ID_, ATTEMPT_, START_TIME_, END_TIME_, OUTCOME_, TYPE_, HANDLER_TYPE_) \
             VALUES (?, 'job1', 1, ?, ?, ?, 'message', 'slow')",
            &[text(id), SqlValue::Timestamp(start), SqlValue::Timestamp(end), text(outcome)],
        )
        .await;
    }
    let attempts = cluster::recent_attempt_times(store, 1000).await.unwrap();
    assert_eq!(attempts.len(), 1, "not the abandoned one");
    let took = attempts[0]
        .end
        .as_ref()
        .and_then(Shown::at)
        .unwrap()
        .duration_since(attempts[0].start.as_ref().and_then(Shown::at).unwrap());
    assert_eq!((attempts[0].handler.as_str(), attempts[0].job_id.as_str(), took.as_secs()), ("slow", "job1", 9));
}

async fn the_instance_findings_read_runs_history_and_waits(store: Arc<dyn Store>) {
    let store = &*store;
    let now = SqlValue::Timestamp(store.db_now().await.unwrap());
    sql(
        store,
        "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, BUSINESS_KEY_, SUSPENSION_STATE_, ACT_ID_) VALUES ('p1', 'p1', 'k', 2, 'task')",
        &[],
    )
    .await;
    sql(store, "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, PARENT_ID_) VALUES ('e2', 'p1', 'p1')", &[]).await;
    for (id, end) in [("p1", now.clone()), ("p0", now.clone())] {
        sql(
            store,
            "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, BUSINESS_KEY_, START_TIME_, END_TIME_, DELETE_REASON_) \
             VALUES (?, ?, 'k', ?, ?, 'gone')",
            &[text(id), text(id), now.clone(), end],
        )
        .await;
    }
    sql(
        store,
        "INSERT INTO ACT_RU_TASK (ID_, PROC_INST_ID_, TASK_DEF_KEY_, NAME_, CREATE_TIME_) VALUES ('t1', 'p1', 'task', 'Check', ?)",
        std::slice::from_ref(&now),
    )
    .await;
    sql(
        store,
        "INSERT INTO ACT_RU_EVENT_SUBSCR (ID_, EVENT_TYPE_, EVENT_NAME_, EXECUTION_ID_, PROC_INST_ID_, ACTIVITY_ID_, CREATED_) \
         VALUES ('s1', 'message', 'go', 'e2', 'p1', 'start', ?)",
        std::slice::from_ref(&now),
    )
    .await;
    assert_eq!(instance::running_of_business_key(store, "k").await.unwrap(), ["p1"]);
    let ended = instance::ended_of_business_key(store, "k").await.unwrap();
    assert_eq!(ended.len(), 2);
    assert!(ended.iter().all(|e| e.end_time.as_ref().and_then(Shown::at).is_some()));
    assert_eq!(ended[0].delete_reason.as_deref(), Some("gone"));
    assert_eq!(instance::running_suspended(store, "p1").await.unwrap(), Some(true));
    assert_eq!(instance::running_suspended(store, "nope").await.unwrap(), None);
    assert!(instance::history_of(store, "p0").await.unwrap().unwrap().end_time.is_some());
    assert!(instance::history_of(store, "nope").await.unwrap().is_none());
    let tasks = instance::open_tasks(store, "p1").await.unwrap();
    assert_eq!(
        (tasks[0].task_def_key.as_deref(), tasks[0].name.as_deref(), tasks[0].assignee.as_deref()),
        (Some("task"), Some("Check"), None)
    );
    let subs = instance::subscriptions(store, "p1").await.unwrap();
    assert_eq!((subs[0].event_type.as_str(), subs[0].event_name.as_deref()), ("message", Some("go")));
    assert_eq!(instance::activities(store, "p1").await.unwrap(), ["task"]);
    let waits = instance::event_waits_without_activity(store, "p1").await.unwrap();
    assert_eq!((waits[0].execution_id.as_deref(), waits[0].activity_id.as_deref()), (Some("e2"), Some("start")));
    let ended = cluster::ended_with_runtime_rows(store, 20).await.unwrap();
    assert_eq!(ended.iter().map(|e| e.process_instance_id.as_str()).collect::<Vec<_>>(), ["p1"]);
}

async fn an_instant_that_is_not_one_is_shown_as_stored(store: Arc<dyn Store>) {
    let store = &*store;
    let now = SqlValue::Timestamp(store.db_now().await.unwrap());
    sql(store, "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_) VALUES ('p1', 'p1')", &[]).await;
    sql(
        store,
        "INSERT INTO ACT_HI_PROCINST (ID_, PROC_INST_ID_, START_TIME_, END_TIME_) VALUES ('p1', 'p1', ?, ?)",
        &[now.clone(), now],
    )
    .await;
    if store.backend() == kairos_store::Backend::Sqlite {
        sql(store, "UPDATE ACT_HI_PROCINST SET END_TIME_ = 'someday'", &[]).await;
        let ended = cluster::ended_with_runtime_rows(store, 20).await.unwrap();
        assert_eq!(ended[0].end_time, Some(Shown::Raw("someday".into())));
        assert_eq!(ended[0].end_time.as_ref().unwrap().to_string(), "someday");
    }
}

on_both_backends!(
    the_scheduler_findings_select_their_triggers,
    the_job_findings_select_backlog_retries_and_durations,
    the_instance_findings_read_runs_history_and_waits,
    an_instant_that_is_not_one_is_shown_as_stored,
);
