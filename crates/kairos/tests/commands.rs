//! The command worker (SPEC C6) against a business database of its own (a separate SQLite
//! file, or a separate PostgreSQL schema): a run repeated after the engine's effect committed
//! but the write-back did not converges — the same instance, no second completion — and a task
//! completed by someone else fails the command without completing anything else.

mod common;

use common::{Backend, Fixture};
use kairos::Engine;
use kairos::commands::table::{self, NewCommand, Status};
use kairos::commands::{Worker, WorkerConfig};
use kairos::process::StartRequest;
use kairos::store::Sql;
use serde_json::json;
use std::sync::Arc;

const APPROVE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:flowable="http://flowable.org/bpmn" targetNamespace="t">
  <process id="approve" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review" flowable:candidateUsers="alice,bob"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

struct Setup {
    engine: Arc<Engine>,
    business: Arc<dyn Sql>,
    worker: Worker,
    _fx: (Fixture, Fixture),
}

async fn setup(backend: Backend) -> Option<Setup> {
    let fx = Fixture::new(backend).await?;
    let biz = Fixture::new(backend).await?;
    let engine = Arc::new(fx.engine("n1").executor_enabled(false).build().await.unwrap());
    engine.processes().deploy("approve.bpmn", APPROVE).await.unwrap();
    let business = kairos::business::connect(&biz.url).await.unwrap();
    table::schema(business.as_ref()).await.unwrap();
    let worker = Worker::new(business.clone(), engine.clone(), WorkerConfig::new("w1"));
    Some(Setup { engine, business, worker, _fx: (fx, biz) })
}

async fn submit(s: &Setup, id: &str, kind: &str, payload: serde_json::Value) {
    let c = NewCommand {
        request_id: id.into(),
        command_type: kind.into(),
        business_type: "order".into(),
        business_id: "o-1".into(),
        lifecycle_no: Some(1),
        payload,
    };
    s.business.write_all(&[table::insert(s.business.as_ref(), &c)]).await.unwrap();
}

async fn row(s: &Setup, id: &str) -> table::Command {
    table::get(s.business.as_ref(), id).await.unwrap().unwrap()
}

async fn start_adopts_on_retry(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    submit(&s, "start-1", table::START_PROCESS, json!({"processDefinitionKey": "approve", "businessKey": "o-1"})).await;
    assert_eq!(s.worker.run_once().await.unwrap(), 1);
    let first = row(&s, "start-1").await;
    assert_eq!(first.status, Status::Succeeded, "{first:?}");
    let pi = first.process_instance_id.clone().expect("the instance written back");
    // The write-back lost: the row is PENDING again though the instance started.
    assert!(table::requeue(s.business.as_ref(), "start-1").await.unwrap());
    assert_eq!(s.worker.run_once().await.unwrap(), 1);
    let again = row(&s, "start-1").await;
    assert_eq!(again.status, Status::Succeeded, "{again:?}");
    assert_eq!(again.process_instance_id.as_deref(), Some(pi.as_str()), "the retry adopts the instance");
    let instances = s.engine.processes().instances(Some("o-1"), None, None).await.unwrap();
    assert_eq!(instances.len(), 1, "one instance for the business key");
}

async fn start_and_task(s: &Setup) -> String {
    let req = StartRequest { process_definition_key: Some("approve".into()), ..Default::default() };
    let pi = s.engine.processes().start(req).await.unwrap();
    let tasks = s.engine.processes().tasks(Some(&pi.id), None, None, None).await.unwrap();
    tasks[0].id.clone()
}

async fn finished_tasks(s: &Setup) -> u64 {
    s.engine.processes().historic_tasks(None, Some(true), 0, 100).await.unwrap().1
}

async fn complete_converges(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    let task = start_and_task(&s).await;
    let other = start_and_task(&s).await;
    submit(&s, "done-1", table::COMPLETE_TASK, json!({"taskId": task, "variables": {"ok": true}})).await;
    s.worker.run_once().await.unwrap();
    assert_eq!(row(&s, "done-1").await.status, Status::Succeeded);
    assert!(table::requeue(s.business.as_ref(), "done-1").await.unwrap());
    s.worker.run_once().await.unwrap();
    let again = row(&s, "done-1").await;
    assert_eq!(again.status, Status::Succeeded, "a repeated completion under its request id converges: {again:?}");
    assert_eq!(finished_tasks(&s).await, 1, "one completion");
    assert!(s.engine.processes().task(&other).await.is_ok(), "the other task is untouched");
}

async fn completed_by_someone_else_fails(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    let task = start_and_task(&s).await;
    s.engine.processes().complete_task(&task, Default::default()).await.unwrap();
    submit(&s, "late-1", table::COMPLETE_TASK, json!({"taskId": task})).await;
    s.worker.run_once().await.unwrap();
    let c = row(&s, "late-1").await;
    assert_eq!(c.status, Status::Failed);
    assert_eq!(c.result_code.as_deref(), Some("TASK_ALREADY_COMPLETED"));
    assert_eq!(finished_tasks(&s).await, 1);
}

async fn two_users_one_task(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    let task = start_and_task(&s).await;
    submit(&s, "u-a", table::COMPLETE_TASK, json!({"taskId": task, "userId": "alice"})).await;
    submit(&s, "u-b", table::COMPLETE_TASK, json!({"taskId": task, "userId": "bob"})).await;
    s.worker.run_once().await.unwrap();
    let (a, b) = (row(&s, "u-a").await, row(&s, "u-b").await);
    let mut statuses = [a.status.as_str(), b.status.as_str()];
    statuses.sort();
    assert_eq!(statuses, ["FAILED", "SUCCEEDED"], "{a:?} {b:?}");
    assert_eq!(finished_tasks(&s).await, 1, "one history record of a completion");
}

async fn a_user_not_offered_the_task_is_refused(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    let task = start_and_task(&s).await;
    submit(&s, "u-m", table::COMPLETE_TASK, json!({"taskId": task, "userId": "mallory"})).await;
    s.worker.run_once().await.unwrap();
    let c = row(&s, "u-m").await;
    assert_eq!(c.status, Status::Failed);
    assert_eq!(c.result_code.as_deref(), Some("NOT_ALLOWED"));
    assert_eq!(finished_tasks(&s).await, 0, "nothing completed");
}

async fn bad_payload_fails_naming_the_field(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    submit(&s, "bad-1", table::START_PROCESS, json!({"variables": 3})).await;
    s.worker.run_once().await.unwrap();
    let c = row(&s, "bad-1").await;
    assert_eq!(c.status, Status::Failed);
    assert_eq!(c.result_code.as_deref(), Some("INVALID_PAYLOAD"));
    assert!(c.last_error.unwrap().contains("processDefinitionKey"));
}

/// A worker whose commands run longer than its lease keeps renewing the leases of the whole
/// batch (the one running and the ones queued behind it): another worker polling meanwhile
/// takes none of them over, and each command runs once.
async fn a_slow_batch_keeps_its_leases(backend: Backend) {
    let Some(s) = setup(backend).await else { return };
    for id in ["o-1", "o-2"] {
        let c = NewCommand {
            request_id: format!("start-{id}"),
            command_type: table::START_PROCESS.into(),
            business_type: "order".into(),
            business_id: id.into(),
            lifecycle_no: Some(1),
            payload: json!({"processDefinitionKey": "approve", "businessKey": id}),
        };
        s.business.write_all(&[table::insert(s.business.as_ref(), &c)]).await.unwrap();
    }
    let mut slow = WorkerConfig::new("slow");
    slow.lease = kairos::SignedDuration::from_millis(300);
    slow.fault_pause = Some(std::time::Duration::from_millis(700));
    let slow = Worker::new(s.business.clone(), s.engine.clone(), slow);
    let running = tokio::spawn(async move { slow.run_once().await.unwrap() });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let other = Worker::new(s.business.clone(), s.engine.clone(), WorkerConfig::new("other"));
    assert_eq!(other.run_once().await.unwrap(), 0, "the slow worker's leases were renewed");
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(other.run_once().await.unwrap(), 0, "also the second command's, queued behind the first");
    assert_eq!(running.await.unwrap(), 2);
    for id in ["start-o-1", "start-o-2"] {
        let c = row(&s, id).await;
        assert_eq!((c.status, c.attempts), (Status::Succeeded, 1), "{c:?}");
    }
}

macro_rules! both {
    ($($name:ident),*) => {
        mod sqlite { $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Backend::Sqlite).await } )* }
        mod postgres { $( #[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(super::Backend::Postgres).await } )* }
    };
}
both!(
    a_slow_batch_keeps_its_leases,
    start_adopts_on_retry,
    complete_converges,
    completed_by_someone_else_fails,
    two_users_one_task,
    a_user_not_offered_the_task_is_refused,
    bad_payload_fails_naming_the_field
);
