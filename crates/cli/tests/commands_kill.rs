//! The command worker killed with SIGKILL between the engine's effect and the write-back to
//! the business row (SPEC C6): after a restart the command converges — exactly one instance
//! for a start, one completion for a task. `KAIROS_FAULT_COMMAND_PAUSE_MS` holds the worker
//! inside that window long enough to kill it there.
//!
//! Needs `KAIROS_TEST_PG_URL`; skips without it unless `KAIROS_REQUIRE_PG=1`.

mod support;

use kairos::Engine;
use kairos::commands::table::{self, NewCommand, Status};
use kairos::process::StartRequest;
use kairos::store::Sql;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::node::{Node, free_port};

const APPROVE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="approve" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// `kairos serve` with the command worker on `business`, a one-second command lease, and
/// the fault pause when `pause_ms` is given.
fn serve(db: &str, business: &str, name: &str, dir: &Path, pause_ms: Option<u64>) -> Node {
    let log = dir.join(format!("{name}.log"));
    let out = std::fs::File::create(&log).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_kairos"));
    c.args(["serve", "--db", db, "--node-id", name, "--listen"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .args(["--business-db", business, "--command-lease", "PT1S", "--no-executor"])
        .env_remove("KAIROS_FAULT_COMMAND_PAUSE_MS")
        .env("RUST_LOG", "info")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null());
    if let Some(ms) = pause_ms {
        c.env("KAIROS_FAULT_COMMAND_PAUSE_MS", ms.to_string());
    }
    Node { name: name.into(), child: c.spawn().expect("start kairos serve"), log }
}

struct Setup {
    db: String,
    business_url: String,
    engine: Engine,
    business: Arc<dyn Sql>,
    dir: tempfile::TempDir,
}

async fn setup() -> Option<Setup> {
    let db = kairos_store_postgres::test_support::fresh_schema_url().await?;
    let business_url = kairos_store_postgres::test_support::fresh_schema_url().await?;
    let engine = Engine::builder(&db).node_id("test").executor_enabled(false).build().await.unwrap();
    engine.processes().deploy("approve.bpmn", APPROVE).await.unwrap();
    let business = kairos::business::connect(&business_url).await.unwrap();
    table::schema(business.as_ref()).await.unwrap();
    Some(Setup { db, business_url, engine, business, dir: tempfile::tempdir().unwrap() })
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

async fn wait_for<F: std::future::Future<Output = bool>>(what: &str, node: &Node, mut f: impl FnMut() -> F) {
    let start = Instant::now();
    while !f().await {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} did not happen:\n{}", node.log_text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn status(s: &Setup, id: &str) -> table::Command {
    table::get(s.business.as_ref(), id).await.unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_killed_before_its_write_back_converges_to_one_instance() {
    let Some(s) = setup().await else { return };
    submit(&s, "k-start", table::START_PROCESS, json!({"processDefinitionKey": "approve", "businessKey": "o-1"})).await;
    let mut a = serve(&s.db, &s.business_url, "a", s.dir.path(), Some(60_000));
    // The instance exists and the row is still PROCESSING: inside the window.
    let p = s.engine.processes();
    wait_for("the start", &a, || async { !p.instances(Some("o-1"), None, None).await.unwrap().is_empty() }).await;
    assert_eq!(status(&s, "k-start").await.status, Status::Processing, "killed before the write-back");
    a.kill9();
    let mut b = serve(&s.db, &s.business_url, "b", s.dir.path(), None);
    wait_for("the write-back", &b, || async { status(&s, "k-start").await.status == Status::Succeeded }).await;
    b.terminate();
    let c = status(&s, "k-start").await;
    let instances = p.instances(Some("o-1"), None, None).await.unwrap();
    assert_eq!(instances.len(), 1, "exactly one instance");
    assert_eq!(c.process_instance_id.as_deref(), Some(instances[0].id.as_str()));
    assert_eq!(c.attempts, 2, "a's run and b's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_killed_before_its_write_back_converges_to_one_completion() {
    let Some(s) = setup().await else { return };
    let p = s.engine.processes();
    let pi =
        p.start(StartRequest { process_definition_key: Some("approve".into()), ..Default::default() }).await.unwrap();
    let task = p.tasks(Some(&pi.id), None, None, None).await.unwrap()[0].id.clone();
    submit(&s, "k-done", table::COMPLETE_TASK, json!({"taskId": task})).await;
    let mut a = serve(&s.db, &s.business_url, "a", s.dir.path(), Some(60_000));
    wait_for("the completion", &a, || async { p.task(&task).await.is_err() }).await;
    assert_eq!(status(&s, "k-done").await.status, Status::Processing, "killed before the write-back");
    a.kill9();
    let mut b = serve(&s.db, &s.business_url, "b", s.dir.path(), None);
    wait_for("the write-back", &b, || async { status(&s, "k-done").await.status == Status::Succeeded }).await;
    b.terminate();
    let c = status(&s, "k-done").await;
    assert_eq!(c.result_code.as_deref(), Some("COMPLETED"), "{c:?}");
    assert_eq!(p.historic_tasks(Some(&pi.id), Some(true), 0, 10).await.unwrap().1, 1, "one completion");
}
