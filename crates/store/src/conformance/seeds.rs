//! The seeds' SQL, verbatim (with `?` bound), against the schema; and the operator SQL entry
//! points that run it.

use super::*;
use std::collections::BTreeSet;

/// Seed 000 §4.1: the jobs of one process instance.
pub const SEED_000_JOBS_OF_INSTANCE: &str = "SELECT ID_, TYPE_, DUEDATE_, RETRIES_, LOCK_OWNER_, LOCK_EXP_TIME_, EXCEPTION_MSG_ FROM ACT_RU_JOB WHERE PROCESS_INSTANCE_ID_ = ?;";
/// Seed 000 §4.3: orphan jobs.
pub const SEED_000_ORPHANS: &str = "SELECT j.ID_, j.PROCESS_INSTANCE_ID_, j.EXECUTION_ID_ FROM ACT_RU_JOB j LEFT JOIN ACT_RU_EXECUTION e ON j.EXECUTION_ID_ = e.ID_ WHERE j.EXECUTION_ID_ IS NOT NULL AND e.ID_ IS NULL;";
/// Seed 000 §4.5: counts and due-date range by TYPE_.
pub const SEED_000_BY_TYPE: &str =
    "SELECT TYPE_, COUNT(*), MAX(DUEDATE_), MIN(DUEDATE_) FROM ACT_RU_JOB GROUP BY TYPE_;";
/// Seed 000 §5.2: failed jobs.
pub const SEED_000_FAILED: &str = "SELECT COUNT(*) FROM ACT_RU_JOB WHERE RETRIES_ = 0 OR EXCEPTION_MSG_ IS NOT NULL";
/// Seed 000 §5.2: expired locks.
pub const SEED_000_EXPIRED_LOCKS: &str =
    "SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ IS NOT NULL AND LOCK_EXP_TIME_ < ?";
/// Seed 001: the job executor's acquisition query, as printed.
pub const SEED_001_ACQUISITION: &str = "SELECT RES.* FROM
ACT_RU_JOB RES
LEFT OUTER JOIN
ACT_RU_EXECUTION PI ON PI.ID_ = RES.PROCESS_INSTANCE_ID_ 
WHERE (RETRIES_ > 0)
AND (DUEDATE_ is null or DUEDATE_ <= ?)
AND (LOCK_OWNER_ is null or LOCK_EXP_TIME_ <= ?)
AND ( (RES.EXECUTION_ID_ is null) or (PI.SUSPENSION_STATE_ = 1) );";

async fn query(store: &dyn Store, sql: &str, binds: &[SqlValue]) -> Vec<Vec<SqlValue>> {
    store.sql_query(sql, binds).await.unwrap_or_else(|e| panic!("{sql}\n{e:?}"))
}

fn str_of(v: &SqlValue) -> String {
    v.as_str().unwrap_or_else(|| panic!("expected text, got {v:?}")).to_string()
}

pub async fn seed_000_diagnostic_sql_runs_verbatim(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let hour = SignedDuration::from_hours(1);
    execution(store, "pi-1", "pi-1", 1).await;
    let timer = insert(store, NewJob { job_type: JobType::Timer, ..of_instance("pi-1", "pi-1", t0 + hour) }).await;
    let failing = insert(store, of_instance("pi-1", "pi-1", t0 - hour)).await;
    fixture(store, "UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = ? WHERE ID_ = ?", &[text("boom"), text(&failing.id)]).await;
    let orphan = insert(store, of_instance("ex-gone", "pi-gone", t0 - hour * 2)).await;
    let stuck = insert(store, due_at("stuck", t0 - hour * 3)).await;
    lock_by_hand(store, &stuck.id, "gone", t0 - hour * 3, t0 - hour * 2).await;
    let spent = insert(store, due_at("spent", t0 - hour * 4)).await;
    fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE ID_ = ?", &[text(&spent.id)]).await;

    // §4.1 The five-step check starts with the instance's jobs.
    let rows = query(store, SEED_000_JOBS_OF_INSTANCE, &[text("pi-1")]).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r.len() == 7));
    let row = rows.iter().find(|r| str_of(&r[0]) == timer.id).expect("the timer's row");
    assert_eq!(str_of(&row[1]), "timer");
    assert_eq!(ts_of(&row[2]), Some(t0 + hour), "DUEDATE_");
    assert_eq!(row[3].as_i64(), Some(3), "RETRIES_");
    assert!(row[4].is_null() && row[5].is_null() && row[6].is_null(), "unlocked, no exception: {row:?}");
    let row = rows.iter().find(|r| str_of(&r[0]) == failing.id).expect("the failing job's row");
    assert_eq!(row[6], text("boom"));

    // §4.3 Orphans.
    let rows = query(store, SEED_000_ORPHANS, &[]).await;
    assert_eq!(rows, vec![vec![text(&orphan.id), text("pi-gone"), text("ex-gone")]]);

    // §4.5 Counts and due-date range by type.
    let rows = query(store, SEED_000_BY_TYPE, &[]).await;
    let mut by_type: Vec<(String, i64, Option<Timestamp>, Option<Timestamp>)> =
        rows.iter().map(|r| (str_of(&r[0]), r[1].as_i64().expect("COUNT(*)"), ts_of(&r[2]), ts_of(&r[3]))).collect();
    by_type.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        by_type,
        vec![
            ("message".to_string(), 4, Some(t0 - hour), Some(t0 - hour * 4)),
            ("timer".to_string(), 1, Some(t0 + hour), Some(t0 + hour)),
        ]
    );

    // §5.2 The two daily numbers.
    assert_eq!(scalar(store, SEED_000_FAILED, &[]).await, 2, "RETRIES_ = 0 or an exception message");
    let db = now(store).await;
    assert_eq!(scalar(store, SEED_000_EXPIRED_LOCKS, &[SqlValue::Timestamp(db)]).await, 1);
    assert_eq!(
        scalar(store, SEED_000_EXPIRED_LOCKS, &[SqlValue::Timestamp(t0 - hour * 2)]).await,
        0,
        "not expired yet then"
    );
}

pub async fn seed_001_acquisition_query_selects_what_job_acquire_takes(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let min = SignedDuration::from_mins(1);
    execution(store, "pi-active", "pi-active", 1).await;
    execution(store, "pi-suspended", "pi-suspended", 2).await;
    let due = insert(store, due_at("due", t0 - min)).await;
    insert(store, due_at("future", t0 + min)).await;
    let live = insert(store, due_at("live", t0 - min)).await;
    lock_by_hand(store, &live.id, "n0", t0 - min, t0 + min * 5).await;
    let expired = insert(store, due_at("expired", t0 - min * 10)).await;
    lock_by_hand(store, &expired.id, "n0", t0 - min * 9, t0 - min).await;
    let at_expiry = insert(store, due_at("at-expiry", t0 - min * 10)).await;
    lock_by_hand(store, &at_expiry.id, "n0", t0 - min * 9, t0).await;
    let spent = insert(store, due_at("spent", t0 - min)).await;
    fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = 0 WHERE ID_ = ?", &[text(&spent.id)]).await;
    let undated = insert(store, due_at("undated", t0 - min)).await;
    fixture(store, "UPDATE ACT_RU_JOB SET DUEDATE_ = NULL WHERE ID_ = ?", &[text(&undated.id)]).await;
    let active = insert(store, of_instance("pi-active", "pi-active", t0 - min)).await;
    insert(store, of_instance("pi-suspended", "pi-suspended", t0 - min)).await;
    insert(store, of_instance("ex-gone", "pi-gone", t0 - min)).await;

    let rows = query(store, SEED_001_ACQUISITION, &[SqlValue::Timestamp(t0), SqlValue::Timestamp(t0)]).await;
    let seed: BTreeSet<String> = rows.iter().map(|r| str_of(&r[0])).collect();
    let want: BTreeSet<String> =
        [&due.id, &expired.id, &at_expiry.id, &undated.id, &active.id].into_iter().cloned().collect();
    assert_eq!(seed, want, "seed 001's query against the fixture");

    let taken = acquire(store, "n1", Some(t0), 100, LOCK).await;
    let took: BTreeSet<String> = ids(&taken).into_iter().collect();
    assert_eq!(took, seed, "job_acquire takes exactly what seed 001's query selects");
    assert_eq!(taken.jobs[0].job.id, undated.id, "a job without DUEDATE_ comes first");
    assert!(query(store, SEED_001_ACQUISITION, &[SqlValue::Timestamp(t0), SqlValue::Timestamp(t0)]).await.is_empty());
}

pub async fn timer_view_lists_the_timers(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let timer = insert(store, NewJob { job_type: JobType::Timer, ..due_at("t", t0 + secs(60)) }).await;
    insert(store, message("m")).await;
    let rows = query(store, "SELECT ID_, TYPE_, DUEDATE_ FROM ACT_RU_TIMER_JOB", &[]).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (str_of(&rows[0][0]), str_of(&rows[0][1]), ts_of(&rows[0][2])),
        (timer.id, "timer".to_string(), Some(t0 + secs(60)))
    );
}

pub async fn operator_sql_binds_and_decodes_values(store: &dyn Store) {
    let n = fixture(
        store,
        "INSERT INTO ACT_GE_BYTEARRAY (ID_, NAME_, BYTES_) VALUES (?, ?, ?)",
        &[text("ba-1"), text("blob"), SqlValue::Bytes(vec![0, 1, 2, 255])],
    )
    .await;
    assert_eq!(n, 1, "rows affected");
    let rows = query(
        store,
        "SELECT ID_, NAME_, BYTES_, REV_, DEPLOYMENT_ID_ FROM ACT_GE_BYTEARRAY WHERE ID_ = ?",
        &[text("ba-1")],
    )
    .await;
    assert_eq!(
        rows,
        vec![vec![text("ba-1"), text("blob"), SqlValue::Bytes(vec![0, 1, 2, 255]), SqlValue::Int(1), SqlValue::Null]]
    );

    let a = insert(store, message("op")).await;
    let b = insert(store, message("op")).await;
    assert_eq!(
        fixture(store, "UPDATE ACT_RU_JOB SET EXCLUSIVE_ = ? WHERE ID_ = ?", &[SqlValue::Bool(true), text(&a.id)])
            .await,
        1
    );
    assert!(must_get(store, &a.id).await.exclusive, "a bound bool sets a boolean column");
    let flag = query(store, "SELECT EXCLUSIVE_ FROM ACT_RU_JOB WHERE ID_ = ?", &[text(&a.id)]).await;
    assert_eq!(flag[0][0].as_i64(), Some(1));
    assert_eq!(
        fixture(store, "UPDATE ACT_RU_JOB SET RETRIES_ = RETRIES_ + 1 WHERE HANDLER_TYPE_ = ?", &[text("op")]).await,
        2
    );
    assert_eq!(
        fixture(store, "UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = ? WHERE ID_ = ?", &[SqlValue::Null, text(&b.id)]).await,
        1
    );
    assert_eq!(fixture(store, "DELETE FROM ACT_RU_JOB WHERE ID_ = ?", &[text("nothing")]).await, 0);
    let due = must_get(store, &a.id).await.duedate.unwrap();
    let at_or_before = 1 + i64::from(b.duedate.unwrap() <= due);
    let counted =
        scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE DUEDATE_ <= ?", &[SqlValue::Timestamp(due)]).await;
    assert_eq!(counted, at_or_before, "a bound instant compares as time");
    assert!(store.sql_query("SELECT NO_SUCH_COLUMN_ FROM ACT_RU_JOB", &[]).await.is_err());
    assert!(store.sql_execute("UPDATE NO_SUCH_TABLE SET X = 1", &[]).await.is_err());
}

/// Seed 004 §5.1: scheduler heartbeats (the seed's MySQL `NOW()` arithmetic, quotes restored).
pub const SEED_004_HEARTBEAT: &str = "SELECT SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, NOW() - LAST_CHECKIN_TIME AS HEARTBEAT_AGE_SEC FROM qrtz_scheduler_state WHERE SCHED_NAME = 'MyScheduler';";
/// Seed 004 §5.3: firings in flight.
pub const SEED_004_FIRED: &str = "SELECT ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_STATE, SCHED_TIME, ENTRY_TIME, (NOW() * 1000 - ENTRY_TIME) AS DURATION_MS FROM qrtz_fired_triggers WHERE SCHED_NAME = 'MyScheduler' AND FIRED_STATE IN ('ACQUIRED', 'EXECUTING') ORDER BY ENTRY_TIME ASC;";

fn number(v: &SqlValue) -> f64 {
    match v {
        SqlValue::Int(i) => *i as f64,
        SqlValue::Float(f) => *f,
        SqlValue::Text(s) => s.parse().unwrap_or_else(|_| panic!("expected a number, got {v:?}")),
        other => panic!("expected a number, got {other:?}"),
    }
}

/// Seed 004 §5's `NOW()` arithmetic means the same on both backends: `NOW() - ms_column` the
/// seconds since that epoch-ms instant, `NOW() * 1000` the epoch ms; and a bare `NOW()` compares
/// with the ACT_* times.
pub async fn seed_004_now_arithmetic_runs_verbatim(store: &dyn Store) {
    let t0 = now(store).await;
    let t0_ms = t0.as_millisecond();
    store
        .sql_execute(
            "INSERT INTO QRTZ_SCHEDULER_STATE (SCHED_NAME, INSTANCE_NAME, LAST_CHECKIN_TIME, CHECKIN_INTERVAL) VALUES ('MyScheduler', 'n1', ?, 7500)",
            &[SqlValue::Int(t0_ms - 5_000)],
        )
        .await
        .expect("a check-in 5 s ago");
    store
        .sql_execute(
            "INSERT INTO QRTZ_FIRED_TRIGGERS (SCHED_NAME, ENTRY_ID, TRIGGER_NAME, TRIGGER_GROUP, INSTANCE_NAME, FIRED_TIME, SCHED_TIME, PRIORITY, STATE) VALUES ('MyScheduler', 'e1', 't1', 'g1', 'n1', ?, ?, 5, 'EXECUTING')",
            &[SqlValue::Int(t0_ms - 30_000), SqlValue::Int(t0_ms - 30_000)],
        )
        .await
        .expect("a firing 30 s ago");
    let later = now(store).await;
    let elapsed = later.duration_since(t0).as_secs_f64();

    let hb = query(store, SEED_004_HEARTBEAT, &[]).await;
    assert_eq!(hb.len(), 1, "{hb:?}");
    let age = number(&hb[0][3]);
    assert!((5.0..=5.0 + elapsed + 1.0).contains(&age), "HEARTBEAT_AGE_SEC is seconds since the check-in: {age}");

    let fired = query(store, SEED_004_FIRED, &[]).await;
    assert_eq!(fired.len(), 1, "{fired:?}");
    let duration = number(&fired[0][7]);
    let most = 30_000.0 + (elapsed + 1.0) * 1000.0;
    assert!((29_000.0..=most).contains(&duration), "DURATION_MS is milliseconds since the firing: {duration}");

    let past = query(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE CREATE_TIME_ < NOW()", &[]).await;
    assert!(past[0][0].as_i64().is_some(), "a bare NOW() compares with the ACT_* times: {past:?}");
    insert(store, message("x")).await;
    let before = query(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE CREATE_TIME_ <= NOW()", &[]).await;
    assert_eq!(before[0][0].as_i64(), Some(1), "a job created before now is before NOW()");
}
