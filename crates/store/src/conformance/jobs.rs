//! Enqueue, read and list: the round trip of every column, due dates resolved by the database
//! clock, bulk insert, filters and paging.

use super::*;
use crate::{Backend, ErrorKind, JobFilter};
use kairos_core::Repeat;
use kairos_time::{IsoDuration, RepeatCycle};

pub async fn migrate_is_idempotent_and_db_now_moves_forward(store: &dyn Store) {
    assert!(matches!(store.backend(), Backend::Sqlite | Backend::Postgres));
    store.migrate().await.expect("migrate on an already migrated store must succeed");
    let a = now(store).await;
    let b = now(store).await;
    assert!(b >= a, "db_now went backwards: {a} then {b}");
}

pub async fn job_insert_round_trips_every_field(store: &dyn Store) {
    let before = now(store).await;
    let due = ms(before + SignedDuration::from_hours(1));
    let new = NewJob {
        id: new_id(),
        job_type: JobType::Timer,
        due: Due::At(due),
        exclusive: true,
        exclusive_key: Some("pi-1".into()),
        execution_id: Some("ex-1".into()),
        process_instance_id: Some("pi-1".into()),
        proc_def_id: Some("approval:3:42".into()),
        element_id: Some("remindTimer".into()),
        element_name: Some("Remind after an hour".into()),
        retries: 5,
        retry_cycle: Some("R5/PT10M".into()),
        repeat: Some("R3/PT1H".into()),
        handler_type: "timer-fire".into(),
        handler_cfg: Some(r#"{"activityId":"remindTimer","n":1}"#.into()),
        tenant_id: Some("acme".into()),
    };
    let stored = insert(store, new.clone()).await;
    let after = now(store).await;

    assert_eq!(stored.id, new.id);
    assert_eq!(stored.rev, 1, "REV_ of a new row");
    assert_eq!(stored.job_type, JobType::Timer);
    assert_eq!((stored.lock_owner.as_deref(), stored.lock_time, stored.lock_exp_time), (None, None, None));
    assert!(stored.exclusive);
    assert_eq!(stored.exclusive_key, new.exclusive_key);
    assert_eq!(stored.execution_id, new.execution_id);
    assert_eq!(stored.process_instance_id, new.process_instance_id);
    assert_eq!(stored.proc_def_id, new.proc_def_id);
    assert_eq!(stored.element_id, new.element_id);
    assert_eq!(stored.element_name, new.element_name);
    assert_eq!((&stored.scope_id, &stored.scope_type, &stored.scope_definition_id), (&None, &None, &None));
    assert_eq!(stored.retries, 5);
    assert_eq!(stored.attempts, 0, "no attempt started yet");
    assert_eq!((&stored.exception_stack_id, &stored.exception_msg), (&None, &None));
    assert_eq!(stored.duedate, Some(due));
    assert_eq!(stored.repeat, new.repeat);
    assert_eq!(stored.retry_cycle, new.retry_cycle);
    assert_eq!(stored.handler_type, new.handler_type);
    assert_eq!(stored.handler_cfg, new.handler_cfg);
    assert_eq!(stored.customvalues_id, None);
    assert_between("CREATE_TIME_", stored.create_time, before, after);
    assert_eq!(stored.tenant_id.as_deref(), Some("acme"));
    assert_eq!(get(store, &new.id).await, Some(stored), "job_get must return the row job_insert returned");

    // No tenant is stored as '' (Activiti's default) and read back as None.
    let plain = insert(store, message("log")).await;
    assert_eq!(plain.tenant_id, None);
    assert!(!plain.exclusive);
    assert_eq!(plain.job_type, JobType::Message);
    let rows = store
        .sql_query("SELECT TENANT_ID_ FROM ACT_RU_JOB WHERE ID_ = ?", &[text(&plain.id)])
        .await
        .expect("reading TENANT_ID_");
    assert_eq!(rows, vec![vec![text("")]], "a job without tenant has TENANT_ID_ ''");
    assert_eq!(must_get(store, &plain.id).await.tenant_id, None);
}

pub async fn job_insert_resolves_due_by_the_database_clock(store: &dyn Store) {
    let before = now(store).await;
    let at_now = insert(store, message("now")).await;
    let in_5m = insert(store, NewJob { due: Due::In(IsoDuration::parse("PT5M").unwrap()), ..message("later") }).await;
    let cycle = RepeatCycle::parse("R3/PT10S").unwrap();
    let first_fire =
        insert(store, NewJob { job_type: JobType::Timer, due: Due::Cycle(Repeat::Cycle(cycle)), ..message("tick") })
            .await;
    let after = now(store).await;

    let due = |j: &Job| j.duedate.unwrap_or_else(|| panic!("job {} has no DUEDATE_", j.id));
    assert_between("DUEDATE_ of Due::Now", due(&at_now), before, after);
    assert_eq!(due(&at_now), at_now.create_time, "Due::Now is the insert's own database instant");
    assert_between(
        "DUEDATE_ of Due::In(PT5M)",
        due(&in_5m),
        before + SignedDuration::from_mins(5),
        after + SignedDuration::from_mins(5),
    );
    assert_between("DUEDATE_ of R3/PT10S", due(&first_fire), before + secs(10), after + secs(10));

    // Instants are stored at millisecond precision.
    let precise: Timestamp = "2030-01-02T03:04:05.123400Z".parse().unwrap();
    let at = insert(store, due_at("at", precise)).await;
    assert_eq!(at.duedate, Some("2030-01-02T03:04:05.123Z".parse().unwrap()));
    assert_eq!(must_get(store, &at.id).await.duedate, at.duedate);

    // A cycle whose end date has passed can never fire: refused, nothing written.
    let ended = RepeatCycle::parse("R3/PT10M/2020-01-01T00:00:00Z").unwrap();
    let job = NewJob { job_type: JobType::Timer, due: Due::Cycle(Repeat::Cycle(ended)), ..message("never") };
    let e = store.job_insert(&job).await.expect_err("a cycle that never fires must be refused");
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert_eq!(get(store, &job.id).await, None);
}

pub async fn job_insert_refuses_a_duplicate_id(store: &dyn Store) {
    let job = message("dup");
    insert(store, job.clone()).await;
    let e = store.job_insert(&job).await.expect_err("a second insert with the same ID_");
    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");

    // A bulk insert is one transaction: one duplicate and nothing of the batch is written.
    let batch = vec![message("dup"), job.clone(), message("dup")];
    let e = store.job_insert_many(&batch).await.expect_err("a batch containing a taken ID_");
    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB", &[]).await, 1, "the failed batch left rows behind");
}

pub async fn job_insert_many_inserts_every_job_in_one_go(store: &dyn Store) {
    assert_eq!(store.job_insert_many(&[]).await.expect("empty bulk insert"), 0);
    let base = ms(now(store).await);
    let jobs: Vec<NewJob> = (0..1234i64)
        .map(|i| NewJob {
            due: if i % 2 == 0 { Due::At(base + millis(i)) } else { Due::Now },
            handler_type: format!("bulk-{}", i % 3),
            tenant_id: (i % 5 == 0).then(|| "acme".to_string()),
            handler_cfg: Some(format!(r#"{{"i":{i},"s":"quote \" and é"}}"#)),
            retries: 1 + (i % 4) as i32,
            ..message("bulk")
        })
        .collect();
    let n = store.job_insert_many(&jobs).await.expect("job_insert_many");
    assert_eq!(n, 1234);
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB", &[]).await, 1234);
    for i in [0usize, 1, 617, 1232, 1233] {
        let want = &jobs[i];
        let got = must_get(store, &want.id).await;
        assert_eq!(got.handler_type, want.handler_type, "job #{i}");
        assert_eq!(got.handler_cfg, want.handler_cfg, "job #{i}");
        assert_eq!(got.tenant_id, want.tenant_id, "job #{i}");
        assert_eq!(got.retries, want.retries, "job #{i}");
        assert_eq!((got.rev, got.attempts, got.job_type), (1, 0, JobType::Message), "job #{i}");
        match &want.due {
            Due::At(t) => assert_eq!(got.duedate, Some(*t), "job #{i}"),
            _ => assert_eq!(got.duedate, Some(got.create_time), "job #{i}: Due::Now"),
        }
    }
}

pub async fn job_get_answers_none_for_absent_jobs(store: &dyn Store) {
    for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        assert_eq!(store.job_get(table, "no-such-job").await.expect("job_get"), None, "{table:?}");
    }
    let j = insert(store, message("here")).await;
    assert_eq!(store.job_get(JobTable::DeadLetter, &j.id).await.expect("job_get"), None, "only in ACT_RU_JOB");
}

pub async fn job_list_filters_pages_and_counts(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let mk = |pi: Option<&str>, handler: &str, ty: JobType, offset: i64| NewJob {
        process_instance_id: pi.map(str::to_string),
        job_type: ty,
        ..due_at(handler, t0 - secs(offset))
    };
    let a = insert(store, mk(Some("p1"), "mail", JobType::Message, 5)).await;
    let b = insert(store, mk(Some("p1"), "mail", JobType::Timer, 4)).await;
    let c = insert(store, mk(Some("p2"), "sms", JobType::Message, 3)).await;
    let d = insert(store, mk(None, "mail", JobType::Message, 2)).await;
    let e = insert(store, mk(None, "sms", JobType::ExternalWorker, 1)).await;
    fixture(store, "UPDATE ACT_RU_JOB SET EXCEPTION_MSG_ = ? WHERE ID_ = ?", &[text("boom"), text(&d.id)]).await;

    let list = |f: JobFilter| async move { store.job_list(&f).await.expect("job_list") };
    let names = |p: &crate::Page<Job>| p.data.iter().map(|j| j.id.clone()).collect::<Vec<_>>();
    let id = |j: &Job| j.id.clone();

    let all = list(JobFilter::default()).await;
    assert_eq!(names(&all), vec![id(&a), id(&b), id(&c), id(&d), id(&e)], "ordered by DUEDATE_");
    assert_eq!((all.total, all.start, all.size), (5, 0, 5));

    let p1 = list(JobFilter { process_instance_id: Some("p1".into()), ..Default::default() }).await;
    assert_eq!((names(&p1), p1.total), (vec![id(&a), id(&b)], 2));
    let mail = list(JobFilter { handler_type: Some("mail".into()), ..Default::default() }).await;
    assert_eq!((names(&mail), mail.total), (vec![id(&a), id(&b), id(&d)], 3));
    let timers = list(JobFilter { job_type: Some(JobType::Timer), ..Default::default() }).await;
    assert_eq!(names(&timers), vec![id(&b)]);
    let failed = list(JobFilter { with_exception: Some(true), ..Default::default() }).await;
    assert_eq!((names(&failed), failed.total), (vec![id(&d)], 1));
    let clean = list(JobFilter { with_exception: Some(false), ..Default::default() }).await;
    assert_eq!(names(&clean), vec![id(&a), id(&b), id(&c), id(&e)]);
    let both = list(JobFilter {
        process_instance_id: Some("p1".into()),
        job_type: Some(JobType::Message),
        ..Default::default()
    })
    .await;
    assert_eq!(names(&both), vec![id(&a)]);

    let page = list(JobFilter { start: 1, size: 2, ..Default::default() }).await;
    assert_eq!(names(&page), vec![id(&b), id(&c)]);
    assert_eq!((page.total, page.start, page.size), (5, 1, 2), "size is the number of rows returned");
    let last = list(JobFilter { start: 4, size: 2, ..Default::default() }).await;
    assert_eq!((names(&last), last.total, last.size), (vec![id(&e)], 5, 1));
    let beyond = list(JobFilter { start: 10, size: 2, ..Default::default() }).await;
    assert_eq!((beyond.data.len(), beyond.total), (0, 5));

    let dead = list(JobFilter { table: JobTable::DeadLetter, ..Default::default() }).await;
    assert_eq!((dead.data.len(), dead.total), (0, 0));
    suspended_row(store, "suspended-1", t0).await;
    let suspended = list(JobFilter { table: JobTable::Suspended, ..Default::default() }).await;
    assert_eq!((names(&suspended), suspended.total), (vec!["suspended-1".to_string()], 1));
    let row = store.job_get(JobTable::Suspended, "suspended-1").await.expect("job_get").expect("the suspended row");
    assert_eq!(
        (row.job_type, row.handler_type.as_str(), row.duedate, row.tenant_id),
        (JobType::Timer, "remind", Some(t0), None)
    );
}

/// Every string of a job is checked against its ACT_RU_JOB column before anything is written:
/// one character over its width (counted in characters, as PostgreSQL's VARCHAR counts them) or
/// a NUL is an `Invalid` error naming the field, alike on both backends (SQLite would keep any
/// length; PostgreSQL answered with its raw 22001). A value that just fits is stored whole.
pub async fn job_insert_refuses_a_value_its_column_cannot_hold_naming_the_field(store: &dyn Store) {
    type Set = fn(&mut NewJob, String);
    let fields: [(&str, usize, Set); 11] = [
        ("id", 64, |j, v| j.id = v),
        ("executionId", 64, |j, v| j.execution_id = Some(v)),
        ("processInstanceId", 64, |j, v| j.process_instance_id = Some(v)),
        ("processDefinitionId", 64, |j, v| j.proc_def_id = Some(v)),
        ("elementId", 255, |j, v| j.element_id = Some(v)),
        ("elementName", 255, |j, v| j.element_name = Some(v)),
        ("exclusiveKey", 255, |j, v| j.exclusive_key = Some(v)),
        ("retryCycle", 255, |j, v| j.retry_cycle = Some(v)),
        ("repeat", 255, |j, v| j.repeat = Some(v)),
        ("handler", 255, |j, v| j.handler_type = v),
        ("tenantId", 255, |j, v| j.tenant_id = Some(v)),
    ];
    for (field, width, set) in fields {
        for bad in ["é".repeat(width + 1), "a\0b".to_string()] {
            let mut job = message("work");
            set(&mut job, bad.clone());
            let e = store.job_insert(&job).await.expect_err(field);
            assert_eq!(e.kind, ErrorKind::Invalid, "{field}: {e:?}");
            assert!(e.message.contains(field), "{field} is named: {}", e.message);
            let e = store.job_insert_many(&[message("ok"), job]).await.expect_err(field);
            assert_eq!(e.kind, ErrorKind::Invalid, "{field} in a batch: {e:?}");
        }
    }
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB", &[]).await, 0, "nothing written");
    // Multi-byte characters up to the width fit on both backends, and read back whole.
    let mut fits = message("work");
    fits.id = "é".repeat(64);
    fits.element_id = Some("ü".repeat(255));
    let stored = insert(store, fits.clone()).await;
    assert_eq!((stored.id, stored.element_id), (fits.id, fits.element_id));
}
