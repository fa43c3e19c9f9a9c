//! A node killed with SIGKILL while it holds a job it took ahead of its due date (issue 14,
//! item 9): the handler never started, so the take-over spends no retry and a one-retry job runs
//! on the next node instead of dead-lettering unrun.

mod support;

use kairos::{Engine, EnqueueRequest, JobLogOutcome, JobTable};
use std::time::{Duration, Instant};
use support::Kairos;
use support::node::{Node, all_log};

fn flags(extra: &[&str]) -> Vec<String> {
    ["--heartbeat-interval", "PT0.3S", "--dead-after", "PT2S", "--poll-interval", "PT0.2S", "--lock-time", "PT5M"]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_during_the_lookahead_spends_no_retry_of_the_job_it_held() {
    let k = Kairos::new();
    let e = Engine::builder(&k.db).node_id("test-enqueuer").executor_enabled(false).build().await.unwrap();
    let job = e
        .enqueue(&EnqueueRequest {
            handler: "log".into(),
            due_in: Some("PT20S".into()),
            retries: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();

    // Node a takes the job a minute ahead, so it holds it for 20 s before it is due.
    let mut a = Node::start(&k.db, "a", k.dir.path(), &flags(&["--lookahead", "PT60S"]));
    let start = Instant::now();
    loop {
        let held = e.store().job_get(JobTable::Runtime, &job.id).await.unwrap().and_then(|j| j.lock_owner);
        if held.as_deref() == Some("a") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "node a did not take the job ahead:\n{}", a.log_text());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    a.kill9();

    // Node b declares a dead, takes the job over, and runs it when due.
    let mut b = Node::start(&k.db, "b", k.dir.path(), &flags(&[]));
    let start = Instant::now();
    let log = loop {
        let log = all_log(e.store()).await;
        if log.iter().any(|l| l.outcome == JobLogOutcome::Succeeded) {
            break log;
        }
        let dead = e.store().job_get(JobTable::DeadLetter, &job.id).await.unwrap();
        assert!(dead.is_none(), "the job dead-lettered unrun: {dead:?}\nlog: {log:?}");
        assert!(start.elapsed() < Duration::from_secs(60), "the job did not run on b:\n{}", b.log_text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    b.terminate();
    let outcomes: Vec<_> = log.iter().map(|l| (l.node.clone().unwrap_or_default(), l.outcome)).collect();
    assert_eq!(
        outcomes,
        vec![("a".to_string(), JobLogOutcome::NotStarted), ("b".to_string(), JobLogOutcome::Succeeded)],
        "a's attempt is logged as not started, b's ran"
    );
}
