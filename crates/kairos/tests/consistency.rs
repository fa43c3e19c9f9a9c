//! Consistency with business data (SPEC C1, C3, C5; seed 002): engine commands inside the
//! caller's transaction, business bindings, the compare-and-set and the inbox, on both
//! backends. The business table is seed 002 §3's `asset_publish_apply`, in the engine's
//! database (the same-database case of §5).

mod common;
mod process_support;

use common::{Backend, Fixture, count_rows};
use kairos::business::{self, CasOutcome, CompareAndSet};
use kairos::process::{BindingRequest, StartRequest};
use kairos::store::SqlValue;
use kairos::{Engine, Store};
use process_support::vars;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Seed 002 §6.3's model: an approval with a timer (a job) and a withdrawal message (a
/// subscription) on its task, and the variables a submission carries.
const ASSET_PUBLISH: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <message id="m" name="withdraw"/>
  <process id="asset_publish" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="approve"/>
    <userTask id="approve" name="Approve"/>
    <boundaryEvent id="remind" attachedToRef="approve" cancelActivity="false">
      <timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f2" sourceRef="remind" targetRef="reminded"/>
    <endEvent id="reminded"/>
    <boundaryEvent id="withdrawn" attachedToRef="approve">
      <messageEventDefinition messageRef="m"/>
    </boundaryEvent>
    <sequenceFlow id="f3" sourceRef="withdrawn" targetRef="cancelled"/>
    <endEvent id="cancelled"/>
    <sequenceFlow id="f4" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// Every table a start writes to, with the caller's own.
const TABLES: &[&str] = &[
    "ACT_RU_EXECUTION",
    "ACT_RU_TASK",
    "ACT_RU_VARIABLE",
    "ACT_RU_JOB",
    "ACT_RU_EVENT_SUBSCR",
    "ACT_HI_PROCINST",
    "ACT_HI_ACTINST",
    "ACT_HI_TASKINST",
    "ACT_HI_VARINST",
    "business_process_binding",
    "KAIROS_REQUEST",
];

/// Runs `$body` with `$tx`, a caller's connection inside a transaction it opened on `$url`,
/// then commits (`$commit`) or rolls back; evaluates to the body's value.
macro_rules! in_caller_tx {
    ($backend:expr, $url:expr, $commit:expr, |$tx:ident| $body:block) => {
        match $backend {
            Backend::Sqlite => {
                use sqlx::Connection;
                let mut conn = sqlx::SqliteConnection::connect($url).await.unwrap();
                let mut t = conn.begin_with("BEGIN IMMEDIATE").await.unwrap();
                let out = {
                    let $tx: &mut sqlx::SqliteConnection = &mut *t;
                    $body
                };
                if $commit {
                    t.commit().await.unwrap()
                } else {
                    t.rollback().await.unwrap()
                }
                out
            }
            Backend::Postgres => {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect($url).await.unwrap();
                let mut t = conn.begin().await.unwrap();
                let out = {
                    let $tx: &mut sqlx::PgConnection = &mut *t;
                    $body
                };
                if $commit {
                    t.commit().await.unwrap()
                } else {
                    t.rollback().await.unwrap()
                }
                out
            }
        }
    };
}

/// Seed 002 §3's business table, with apply 1001 in DRAFT.
async fn apply_table(store: &Arc<dyn Store>) {
    store
        .sql_execute(
            "CREATE TABLE asset_publish_apply (id BIGINT PRIMARY KEY, approval_status VARCHAR(32) NOT NULL, \
             row_version BIGINT NOT NULL DEFAULT 0)",
            &[],
        )
        .await
        .unwrap();
    store
        .sql_execute("INSERT INTO asset_publish_apply (id, approval_status) VALUES (1001, 'DRAFT')", &[])
        .await
        .unwrap();
}

async fn setup(fx: &Fixture) -> (Engine, Arc<dyn Store>) {
    let engine = fx.engine("n1").executor_enabled(false).build().await.unwrap();
    let store = engine.store().clone();
    apply_table(&store).await;
    engine.processes().deploy("asset.bpmn", ASSET_PUBLISH).await.unwrap();
    (engine, store)
}

fn submit(apply: i64) -> CompareAndSet<'static> {
    CompareAndSet {
        table: "asset_publish_apply",
        id_column: "id",
        id: SqlValue::Int(apply),
        status_column: "approval_status",
        from: &["DRAFT"],
        to: "APPROVING",
        version_column: "row_version",
        version: 0,
        updated_column: None,
    }
}

fn start_for(apply: &str) -> StartRequest {
    StartRequest {
        process_definition_key: Some("asset_publish".into()),
        variables: vars(json!({"applicantId": "u-7", "riskLevel": "HIGH"})),
        request_id: Some(format!("submit-{apply}")),
        binding: Some(BindingRequest {
            business_type: "ASSET_PUBLISH".into(),
            business_id: apply.into(),
            process_type: "APPROVAL".into(),
            lifecycle: None,
        }),
        ..Default::default()
    }
}

async fn counts(store: &Arc<dyn Store>) -> Vec<(&'static str, i64)> {
    let mut out = Vec::new();
    for t in TABLES {
        out.push((*t, count_rows(store, t).await));
    }
    out
}

async fn status(store: &Arc<dyn Store>) -> String {
    let rows = store.sql_query("SELECT approval_status FROM asset_publish_apply WHERE id = 1001", &[]).await.unwrap();
    rows[0][0].as_str().unwrap().to_string()
}

/// Seed 002 §6.3: start + business update + failure → nothing of either; the same without the
/// failure → all of both. Every engine table a start touches is counted, not just the instance.
async fn a_start_in_the_callers_transaction_commits_or_rolls_back_with_it(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    let before = counts(&store).await;
    assert!(before.iter().all(|(_, n)| *n == 0), "{before:?}");

    // The fault: the caller's code fails after both writes; its transaction rolls back.
    let pi = in_caller_tx!(backend, &fx.url, false, |tx| {
        let w = engine.within(tx);
        assert_eq!(
            business::compare_and_set(w.session(), &submit(1001)).await.unwrap(),
            CasOutcome::Done { version: 1 }
        );
        let started = w.start(start_for("1001")).await.unwrap();
        assert!(!started.ended);
        started.id
    });
    let after_rollback = counts(&store).await;
    assert_eq!(after_rollback, before, "a rolled-back start leaves no engine row");
    assert_eq!(status(&store).await, "DRAFT", "and no business change");
    assert!(engine.processes().instance(&pi).await.is_err());

    // No fault: both commit.
    let pi = in_caller_tx!(backend, &fx.url, true, |tx| {
        let w = engine.within(tx);
        assert_eq!(
            business::compare_and_set(w.session(), &submit(1001)).await.unwrap(),
            CasOutcome::Done { version: 1 }
        );
        w.start(start_for("1001")).await.unwrap().id
    });
    assert_eq!(status(&store).await, "APPROVING");
    let committed: std::collections::HashMap<_, _> = counts(&store).await.into_iter().collect();
    for t in TABLES {
        assert!(committed[t] >= 1, "{t} has the start's row: {committed:?}");
    }
    let bindings = engine.processes().bindings("ASSET_PUBLISH", "1001").await.unwrap();
    assert_eq!(bindings.len(), 1);
    assert_eq!((bindings[0].process_instance_id.as_str(), bindings[0].lifecycle_no), (pi.as_str(), 1));
    assert_eq!(engine.processes().instance(&pi).await.unwrap().business_key.as_deref(), Some("1001"));
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Completing a task, correlating a message, setting variables and deleting an instance in the
/// caller's transaction: a rollback undoes each, a commit keeps it; a failing command leaves
/// the caller's transaction usable (its savepoint rolled back alone).
async fn task_message_variables_and_delete_follow_the_callers_transaction(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    let p = engine.processes();
    let a = p.start(start_for("1")).await.unwrap().id;
    let b = p.start(start_for("2")).await.unwrap().id;
    let task_a = p.tasks(Some(&a), None, None, None).await.unwrap()[0].id.clone();
    for commit in [false, true] {
        in_caller_tx!(backend, &fx.url, commit, |tx| {
            let w = engine.within(tx);
            // A command that fails inside the transaction changes nothing and spoils nothing.
            let missing = w.complete_task("no-such-task", Default::default(), None).await.unwrap_err();
            assert!(missing.to_string().contains("does not exist"), "{missing}");
            w.complete_task(&task_a, vars(json!({"approved": true})), Some("approve-1")).await.unwrap();
            w.set_variables(&b, vars(json!({"note": "seen"}))).await.unwrap();
            assert_eq!(w.message("withdraw", Some(&b), None, Default::default(), None).await.unwrap(), b);
        });
        let ended_a = p.instance(&a).await.unwrap().ended;
        let ended_b = p.instance(&b).await.unwrap().ended;
        assert_eq!((ended_a, ended_b), (commit, commit), "commit={commit}");
    }
    for id in ["1", "2"] {
        let bs = p.bindings("ASSET_PUBLISH", id).await.unwrap();
        assert_eq!(bs[0].binding_status, "ENDED", "the binding followed its instance's end");
        assert!(bs[0].ended_at.is_some());
    }
    let c = p.start(start_for("3")).await.unwrap().id;
    for commit in [false, true] {
        in_caller_tx!(backend, &fx.url, commit, |tx| {
            engine.within(tx).delete_instance(&c, "withdrawn by the applicant").await.unwrap();
        });
        assert_eq!(p.instance(&c).await.unwrap().ended, commit);
    }
    assert_eq!(p.bindings("ASSET_PUBLISH", "3").await.unwrap()[0].binding_status, "DELETED");
    assert_eq!(count_rows(&store, "ACT_RU_EXECUTION").await, 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

/// A binding allows one instance per lifecycle: a second start answers the first instance; a
/// resubmission after the end is the next lifecycle; a lifecycle that skips one is refused.
async fn a_binding_allows_one_instance_per_lifecycle(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, _store) = setup(&fx).await;
    let p = engine.processes();
    let plain = |lifecycle| StartRequest { request_id: None, ..with_lifecycle(lifecycle) };
    let first = p.start(plain(None)).await.unwrap();
    assert_eq!(p.start(plain(None)).await.unwrap().id, first.id, "the active lifecycle answers its instance");
    assert_eq!(p.start(plain(Some(1))).await.unwrap().id, first.id);
    let skip = p.start(plain(Some(3))).await.unwrap_err();
    assert!(skip.to_string().contains("the next one is 2"), "{skip}");
    let task = p.tasks(Some(&first.id), None, None, None).await.unwrap()[0].id.clone();
    p.complete_task(&task, Default::default()).await.unwrap();
    let second = p.start(plain(None)).await.unwrap();
    assert_ne!(second.id, first.id, "after the end, a resubmission is lifecycle 2");
    assert_eq!(p.start(plain(Some(1))).await.unwrap().id, first.id, "lifecycle 1 still answers its (ended) instance");
    let bs = p.bindings("ASSET_PUBLISH", "1001").await.unwrap();
    let seen: Vec<_> = bs.iter().map(|b| (b.lifecycle_no, b.binding_status.as_str())).collect();
    assert_eq!(seen, vec![(1, "ENDED"), (2, "ACTIVE")]);
    assert_eq!(p.binding_of(&second.id).await.unwrap().unwrap().lifecycle_no, 2);
    for (field, b) in [
        ("binding.businessType", BindingRequest { business_type: String::new(), ..binding(None) }),
        ("binding.businessId", BindingRequest { business_id: "x".repeat(65), ..binding(None) }),
        ("binding.lifecycle", BindingRequest { lifecycle: Some(0), ..binding(None) }),
    ] {
        let e = p.start(StartRequest { binding: Some(b), ..plain(None) }).await.unwrap_err();
        let kairos::Error::Process(pe) = &e else { panic!("{e:?}") };
        assert_eq!(pe.element_id.as_deref(), Some(field), "{e}");
    }
    assert_eq!(p.bindings("ASSET_PUBLISH", "1001").await.unwrap().len(), 2, "refused starts wrote nothing");
    // An instance that runs through in its start has its binding ENDED at once.
    let through = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
      <process id="through" isExecutable="true"><startEvent id="s"/><sequenceFlow id="f" sourceRef="s" targetRef="e"/>
      <endEvent id="e"/></process></definitions>"#;
    p.deploy("through.bpmn", through).await.unwrap();
    let req = StartRequest {
        process_definition_key: Some("through".into()),
        binding: Some(BindingRequest { process_type: String::new(), ..binding(None) }),
        ..Default::default()
    };
    let ran = p.start(req).await.unwrap();
    assert!(ran.ended);
    let b = p.binding_of(&ran.id).await.unwrap().unwrap();
    assert_eq!((b.process_type.as_str(), b.binding_status.as_str()), ("through", "ENDED"));
    assert_eq!(b.ended_at, ran.end_time);
    engine.shutdown(Duration::from_secs(5)).await;
}

fn binding(lifecycle: Option<i64>) -> BindingRequest {
    BindingRequest {
        business_type: "ASSET_PUBLISH".into(),
        business_id: "1001".into(),
        process_type: "APPROVAL".into(),
        lifecycle,
    }
}

fn with_lifecycle(lifecycle: Option<i64>) -> StartRequest {
    StartRequest { binding: Some(binding(lifecycle)), ..start_for("1001") }
}

/// Seed 002 §9: the four meanings of "0 rows updated", each told apart.
async fn compare_and_set_tells_done_from_already_done_not_allowed_and_stale(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    let db = store.as_ref();
    assert_eq!(business::compare_and_set(db, &submit(1001)).await.unwrap(), CasOutcome::Done { version: 1 });
    assert_eq!(business::compare_and_set(db, &submit(1001)).await.unwrap(), CasOutcome::AlreadyDone { version: 1 });
    let approve = CompareAndSet { from: &["APPROVING"], to: "APPROVED", version: 0, ..submit(1001) };
    assert_eq!(
        business::compare_and_set(db, &approve).await.unwrap(),
        CasOutcome::Stale { status: "APPROVING".into(), version: 1 }
    );
    let reopen = CompareAndSet { from: &["REJECTED"], to: "DRAFT", version: 1, ..submit(1001) };
    assert_eq!(
        business::compare_and_set(db, &reopen).await.unwrap(),
        CasOutcome::NotAllowed { status: "APPROVING".into(), version: 1 }
    );
    assert_eq!(business::compare_and_set(db, &submit(4040)).await.unwrap(), CasOutcome::NotFound);
    let hostile = CompareAndSet { table: "asset_publish_apply; DROP TABLE x", ..submit(1001) };
    let e = business::compare_and_set(db, &hostile).await.unwrap_err();
    assert!(e.to_string().contains("table"), "{e}");
    assert_eq!(status(&store).await, "APPROVING");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Seed 002 §15: the first delivery of an event to a consumer wins, every later one is told so;
/// inside a transaction that rolls back, the row goes with it (the effect was not applied).
async fn the_inbox_lets_the_first_delivery_win(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    let db = store.as_ref();
    assert!(business::inbox_first(db, "directory", "e-1", Some("OK")).await.unwrap());
    assert!(!business::inbox_first(db, "directory", "e-1", None).await.unwrap(), "a duplicate");
    assert!(business::inbox_first(db, "archive", "e-1", None).await.unwrap(), "another consumer");
    in_caller_tx!(backend, &fx.url, false, |tx| {
        assert!(business::inbox_first(engine.within(tx).session(), "directory", "e-2", None).await.unwrap());
    });
    assert!(business::inbox_first(db, "directory", "e-2", None).await.unwrap(), "the rolled-back row is gone");
    assert!(business::inbox_first(db, "", "e-3", None).await.is_err());
    assert!(business::inbox_first(db, "directory", &"e".repeat(65), None).await.is_err());
    assert_eq!(count_rows(&store, "inbox_message").await, 3);
    let racers: Vec<_> = (0..20)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { business::inbox_first(store.as_ref(), "racer", "e-9", None).await.unwrap() })
        })
        .collect();
    let mut firsts = 0;
    for r in racers {
        firsts += usize::from(r.await.unwrap());
    }
    assert_eq!(firsts, 1, "of concurrent deliveries exactly one is first");
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Concurrent starts for one binding (without requestIds), and separately with one requestId
/// (without a binding): exactly one instance each (the issue's 50, on PostgreSQL; SQLite too).
async fn fifty_concurrent_starts_make_one_instance(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    let engine = Arc::new(engine);
    let run = |req: StartRequest| {
        let e = engine.clone();
        tokio::spawn(async move { e.processes().start(req).await })
    };
    let by_binding: Vec<_> = (0..50).map(|_| run(StartRequest { request_id: None, ..start_for("77") })).collect();
    let mut ids = std::collections::BTreeSet::new();
    for h in by_binding {
        ids.insert(h.await.unwrap().unwrap().id);
    }
    assert_eq!(ids.len(), 1, "one binding, one instance: {ids:?}");
    let by_request: Vec<_> = (0..50)
        .map(|_| {
            run(StartRequest {
                process_definition_key: Some("asset_publish".into()),
                request_id: Some("one-click".into()),
                ..Default::default()
            })
        })
        .collect();
    let mut ids2 = std::collections::BTreeSet::new();
    for h in by_request {
        ids2.insert(h.await.unwrap().unwrap().id);
    }
    assert_eq!(ids2.len(), 1, "one requestId, one instance: {ids2:?}");
    assert_eq!(count_rows(&store, "ACT_HI_PROCINST").await, 2);
    assert_eq!(count_rows(&store, "business_process_binding").await, 1);
    Arc::try_unwrap(engine).ok().unwrap().shutdown(Duration::from_secs(5)).await;
}

/// Seed 002 §40: two users complete one task at once, each in a transaction that also writes
/// its approval record. One engine command succeeds; the other is refused (409) and its
/// transaction, record included, rolls back: one completion, one record.
async fn two_users_completing_one_task_leave_one_approval_record(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let (engine, store) = setup(&fx).await;
    store
        .sql_execute("CREATE TABLE approval_record (task_id VARCHAR(64) NOT NULL, user_id VARCHAR(64) NOT NULL)", &[])
        .await
        .unwrap();
    let pi = engine.processes().start(start_for("1001")).await.unwrap().id;
    let task = engine.processes().tasks(Some(&pi), None, None, None).await.unwrap()[0].id.clone();
    let engine = Arc::new(engine);
    let users: Vec<_> = ["legal", "finance"]
        .into_iter()
        .map(|user| {
            let (engine, task, url) = (engine.clone(), task.clone(), fx.url.clone());
            tokio::spawn(async move { approve(backend, &url, &engine, &task, user).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for u in users {
        outcomes.push(u.await.unwrap());
    }
    let won = outcomes.iter().filter(|o| o.is_ok()).count();
    assert_eq!(won, 1, "one completion wins: {outcomes:?}");
    let lost = outcomes.iter().find_map(|o| o.as_ref().err()).unwrap();
    assert!(lost.starts_with("conflict:"), "the loser is refused as a conflict (409): {lost}");
    assert!(lost.contains("already completed"), "and told why: {lost}");
    assert_eq!(count_rows(&store, "approval_record").await, 1, "the loser's record rolled back with it");
    let ended = store
        .sql_query(
            "SELECT COUNT(*) FROM ACT_HI_TASKINST WHERE ID_ = ? AND END_TIME_ IS NOT NULL",
            &[SqlValue::Text(task)],
        )
        .await
        .unwrap();
    assert_eq!(ended[0][0].as_i64(), Some(1));
    Arc::try_unwrap(engine).ok().unwrap().shutdown(Duration::from_secs(5)).await;
}

/// One user's approval: the record and the completion in one transaction, committed only when
/// the engine accepted the completion.
async fn approve(backend: Backend, url: &str, engine: &Engine, task: &str, user: &str) -> Result<(), String> {
    let record = "INSERT INTO approval_record (task_id, user_id) VALUES (?, ?)";
    let binds = [SqlValue::Text(task.into()), SqlValue::Text(user.into())];
    let write = kairos::store::Write::new(record, binds.to_vec()).expect(1);
    let done;
    let commit = |r: &Result<(), String>| r.is_ok();
    // The refusal's kind, then its message: "conflict: task … was already completed".
    let refused = |e: kairos::Error| match e {
        kairos::Error::Process(p) => format!("{:?}: {}", p.kind, p.message).to_lowercase(),
        other => other.to_string(),
    };
    match backend {
        Backend::Sqlite => {
            use sqlx::Connection;
            let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
            let mut t = conn.begin_with("BEGIN IMMEDIATE").await.unwrap();
            {
                let w = engine.within(&mut *t);
                w.session().write_all(std::slice::from_ref(&write)).await.unwrap();
                done = w.complete_task(task, Default::default(), None).await.map_err(refused);
            }
            if commit(&done) { t.commit().await.unwrap() } else { t.rollback().await.unwrap() }
        }
        Backend::Postgres => {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            let mut t = conn.begin().await.unwrap();
            {
                let w = engine.within(&mut *t);
                w.session().write_all(std::slice::from_ref(&write)).await.unwrap();
                done = w.complete_task(task, Default::default(), None).await.map_err(refused);
            }
            if commit(&done) { t.commit().await.unwrap() } else { t.rollback().await.unwrap() }
        }
    }
    done
}

/// A synchronous service task's handler runs inside the command; the write it stages joins the
/// caller's transaction (SPEC C1): gone with a rollback, there with the commit.
async fn a_service_tasks_staged_write_commits_with_the_callers_transaction(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    let engine = fx
        .engine("n1")
        .executor_enabled(false)
        .handler(
            "record-effect",
            kairos::handler_fn(|ctx| async move {
                let pi = ctx.process_instance_id.clone().unwrap_or_default();
                ctx.write_on_success("INSERT INTO handler_effect (instance_id) VALUES (?)", vec![SqlValue::Text(pi)]);
                Ok(None)
            }),
        )
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    store.sql_execute("CREATE TABLE handler_effect (instance_id VARCHAR(64) NOT NULL)", &[]).await.unwrap();
    let model = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
      <process id="effect" isExecutable="true"><startEvent id="s"/><sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
      <serviceTask id="t" activiti:class="record-effect"/><sequenceFlow id="f2" sourceRef="t" targetRef="w"/>
      <userTask id="w"/><sequenceFlow id="f3" sourceRef="w" targetRef="e"/><endEvent id="e"/></process></definitions>"#;
    engine.processes().deploy("effect.bpmn", model).await.unwrap();
    let req = || StartRequest { process_definition_key: Some("effect".into()), ..Default::default() };
    for commit in [false, true] {
        in_caller_tx!(backend, &fx.url, commit, |tx| {
            engine.within(tx).start(req()).await.unwrap();
        });
        assert_eq!(count_rows(&store, "handler_effect").await, i64::from(commit), "commit={commit}");
        assert_eq!(count_rows(&store, "ACT_RU_TASK").await, i64::from(commit));
    }
    engine.shutdown(Duration::from_secs(5)).await;
}

/// Seed 002 §40, the outbox rows in one database: the approval and its event commit together
/// (§11) — a failure before the commit leaves neither; a node that stops right after the commit,
/// before any publisher ran, loses nothing: the next node's publisher sends it, keyed by its id.
async fn an_outbox_event_commits_with_the_business_change_and_survives_the_node(backend: Backend) {
    let Some(fx) = Fixture::new(backend).await else { return };
    // The sink: records each delivery's Idempotency-Key.
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    let app = axum::Router::new().route(
        "/events",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let s = s.clone();
            async move {
                let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                s.lock().unwrap().push(key);
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let http = || {
        kairos::outbox::http::HttpSink::new(kairos::outbox::http::HttpSinkSettings {
            base_url: Some(format!("http://{addr}/events")),
            allow_hosts: vec!["127.0.0.1".into()],
            allow_private: true,
            ..Default::default()
        })
        .unwrap()
    };
    // The executor (and with it the publisher) off: a node that dies right after the commit.
    let first = fx.engine("n1").executor_enabled(false).sink("http", http()).build().await.unwrap();
    let store = first.store().clone();
    apply_table(&store).await;
    let event = |id: &str| kairos::outbox::NewEvent {
        event_id: id.into(),
        aggregate_type: "ASSET_PUBLISH_APPLY".into(),
        aggregate_id: "1001".into(),
        event_type: "ASSET_PUBLISH_REQUESTED".into(),
        payload_json: json!({"applyId": 1001}).to_string(),
        target: "http".into(),
        target_url: None,
        ordered: false,
        max_attempts: 3,
    };
    for (id, commit) in [("e-rolled-back", false), ("e-committed", true)] {
        in_caller_tx!(backend, &fx.url, commit, |tx| {
            let w = first.within(tx);
            let moved = business::compare_and_set(w.session(), &submit(1001)).await.unwrap();
            assert_eq!(moved, CasOutcome::Done { version: 1 });
            w.outbox_write(&event(id)).await.unwrap();
        });
    }
    assert_eq!(status(&store).await, "APPROVING");
    assert_eq!(count_rows(&store, "outbox_event").await, 1, "the rolled-back event never existed");
    first.shutdown(Duration::from_secs(5)).await;

    let second = fx.engine("n2").sink("http", http()).build().await.unwrap();
    second.start().await.unwrap();
    common::wait_until(Duration::from_secs(20), "the next node publishes the event", || async {
        second.outbox().get("e-committed").await.unwrap().is_some_and(|e| e.event_status == "PUBLISHED")
    })
    .await;
    assert_eq!(*seen.lock().unwrap(), vec!["e-committed".to_string()], "sent once, keyed by its id");
    second.shutdown(Duration::from_secs(5)).await;
}

on_both_backends!(
    a_start_in_the_callers_transaction_commits_or_rolls_back_with_it,
    task_message_variables_and_delete_follow_the_callers_transaction,
    a_binding_allows_one_instance_per_lifecycle,
    compare_and_set_tells_done_from_already_done_not_allowed_and_stale,
    the_inbox_lets_the_first_delivery_win,
    fifty_concurrent_starts_make_one_instance,
    two_users_completing_one_task_leave_one_approval_record,
    a_service_tasks_staged_write_commits_with_the_callers_transaction,
    an_outbox_event_commits_with_the_business_change_and_survives_the_node,
);
