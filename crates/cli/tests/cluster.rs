//! The cluster on PostgreSQL with real `kairos serve` processes (issue: "Done means"):
//! contention without deadlocks, exclusive jobs that never overlap, and nodes killed with
//! SIGKILL whose jobs are finished elsewhere with nothing lost.
//!
//! These tests need `KAIROS_TEST_PG_URL` (scripts/test.sh starts a PostgreSQL); without it they
//! skip, unless `KAIROS_REQUIRE_PG=1`.

mod support;

use support::node::{Node, all_log};

use kairos::store::SqlValue;
use kairos::{Engine, EnqueueRequest, JobLogEntry, JobLogOutcome, Store};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fresh schema on the test PostgreSQL, as a store URL every node can use.
async fn fresh_pg_url() -> Option<String> {
    kairos_store_postgres::test_support::fresh_schema_url().await
}

/// The flags of a cluster node: short heartbeats so that a dead node is noticed in 2 s.
fn node(url: &str, name: &str, workers: u32, dir: &std::path::Path) -> Node {
    let flags: Vec<String> = ["--workers", &workers.to_string(), "--lock-time", "PT30S"]
        .into_iter()
        .chain(["--heartbeat-interval", "PT0.3S", "--dead-after", "PT2S", "--poll-interval", "PT0.2S"])
        .map(String::from)
        .collect();
    Node::start(url, name, dir, &flags)
}

async fn enqueuer(url: &str) -> Engine {
    Engine::builder(url).node_id("test-enqueuer").executor_enabled(false).build().await.unwrap()
}

async fn runtime_count(store: &Arc<dyn Store>) -> i64 {
    store.sql_query("SELECT COUNT(*) FROM ACT_RU_JOB", &[]).await.unwrap()[0][0].as_i64().unwrap()
}

async fn wait_drained(store: &Arc<dyn Store>, limit: Duration) {
    let start = Instant::now();
    while runtime_count(store).await > 0 {
        assert!(start.elapsed() < limit, "jobs not drained after {limit:?}: {} left", runtime_count(store).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn assert_no_db_conflicts(nodes: &[Node]) {
    for n in nodes {
        let text = n.log_text().to_lowercase();
        for bad in ["deadlock", "could not serialize", "serialization failure", "panicked"] {
            assert!(!text.contains(bad), "node {} logged {bad:?}:\n{}", n.name, n.log_text());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_nodes_contending_run_every_job_exactly_once() {
    let Some(url) = fresh_pg_url().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let e = enqueuer(&url).await;
    let reqs: Vec<_> = (0..2000)
        .map(|i| EnqueueRequest { handler: "log".into(), payload: Some(json!({ "i": i })), ..Default::default() })
        .collect();
    e.enqueue_many(&reqs).await.unwrap();
    let mut nodes: Vec<Node> = (0..4).map(|i| node(&url, &format!("n{i}"), 8, dir.path())).collect();
    wait_drained(e.store(), Duration::from_secs(120)).await;
    for n in &mut nodes {
        n.terminate();
    }
    assert_no_db_conflicts(&nodes);
    let log = all_log(e.store()).await;
    assert_eq!(log.len(), 2000, "one attempt per job");
    let ids: HashSet<_> = log.iter().map(|l| l.job_id.clone()).collect();
    assert_eq!(ids.len(), 2000, "every job ran exactly once");
    assert!(log.iter().all(|l| l.outcome == JobLogOutcome::Succeeded));
    let by_node: BTreeMap<_, usize> = log.iter().fold(BTreeMap::new(), |mut m, l| {
        *m.entry(l.node.clone().unwrap_or_default()).or_default() += 1;
        m
    });
    eprintln!("jobs per node: {by_node:?}");
    assert!(by_node.len() >= 2, "the work was shared: {by_node:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exclusive_jobs_of_one_key_never_overlap_across_four_nodes() {
    let Some(url) = fresh_pg_url().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let e = enqueuer(&url).await;
    let reqs: Vec<_> = (0..200)
        .map(|i| EnqueueRequest {
            handler: "sleep".into(),
            payload: Some(json!({ "ms": 5, "i": i })),
            exclusive_key: Some("invoice-7".into()),
            ..Default::default()
        })
        .collect();
    e.enqueue_many(&reqs).await.unwrap();
    let mut nodes: Vec<Node> = (0..4).map(|i| node(&url, &format!("x{i}"), 4, dir.path())).collect();
    wait_drained(e.store(), Duration::from_secs(180)).await;
    for n in &mut nodes {
        n.terminate();
    }
    assert_no_db_conflicts(&nodes);
    let mut log = all_log(e.store()).await;
    assert_eq!(log.len(), 200);
    log.sort_by_key(|l| l.start);
    let nodes_used: HashSet<_> = log.iter().map(|l| l.node.clone()).collect();
    eprintln!("exclusive jobs ran on {} nodes", nodes_used.len());
    for w in log.windows(2) {
        assert!(w[1].start.unwrap() >= w[0].end.unwrap(), "overlap:\n{:?}\n{:?}", w[0], w[1]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_killed_with_sigkill_lose_nothing_and_rerun_only_their_own_jobs() {
    let Some(url) = fresh_pg_url().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let e = enqueuer(&url).await;
    let reqs: Vec<_> = (0..2000)
        .map(|i| EnqueueRequest {
            handler: "sleep".into(),
            payload: Some(json!({ "ms": 60, "i": i })),
            ..Default::default()
        })
        .collect();
    e.enqueue_many(&reqs).await.unwrap();
    let store = e.store().clone();
    let mut next = 0;
    let mut spawn = |nodes: &mut Vec<Node>| {
        nodes.push(node(&url, &format!("k{next}"), 8, dir.path()));
        next += 1;
    };
    let mut nodes = Vec::new();
    for _ in 0..3 {
        spawn(&mut nodes);
    }
    let mut killed = Vec::new();
    for round in 0..3 {
        // Let work flow, then kill the node that is running jobs right now.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let running = store
            .sql_query("SELECT LOCK_OWNER_, COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ IS NOT NULL GROUP BY LOCK_OWNER_ ORDER BY 2 DESC", &[])
            .await
            .unwrap();
        let (victim, held) = running
            .iter()
            .filter_map(|r| Some((r[0].as_str()?.to_string(), r[1].as_i64()?)))
            .find(|(owner, _)| nodes.iter().any(|n: &Node| &n.name == owner))
            .expect("a live node is running jobs");
        let pos = nodes.iter().position(|n| n.name == victim).unwrap();
        let mut n = nodes.remove(pos);
        n.kill9();
        eprintln!("round {round}: killed {} (SIGKILL) while it held {held} leases", n.name);
        assert!(held > 0, "the kill must hit a node mid-job");
        killed.push(n.name.clone());
        spawn(&mut nodes);
    }
    wait_drained(&store, Duration::from_secs(240)).await;
    for n in &mut nodes {
        n.terminate();
    }
    let log = all_log(&store).await;
    let mut attempts: BTreeMap<String, Vec<&JobLogEntry>> = BTreeMap::new();
    for l in &log {
        attempts.entry(l.job_id.clone()).or_default().push(l);
    }
    assert_eq!(attempts.len(), 2000, "no job lost");
    let mut reruns = 0;
    for (job, tries) in &attempts {
        let last = tries.iter().max_by_key(|t| t.attempt).unwrap();
        assert_eq!(last.outcome, JobLogOutcome::Succeeded, "job {job} did not end in success: {tries:?}");
        let succeeded = tries.iter().filter(|t| t.outcome == JobLogOutcome::Succeeded).count();
        assert_eq!(succeeded, 1, "job {job} succeeded more than once: {tries:?}");
        for t in tries.iter().filter(|t| t.outcome != JobLogOutcome::Succeeded) {
            assert_eq!(t.outcome, JobLogOutcome::Abandoned, "{t:?}");
            let node = t.node.clone().unwrap_or_default();
            assert!(killed.contains(&node), "job {job} was re-run after an attempt on {node}, which was not killed");
            reruns += 1;
        }
    }
    eprintln!("killed {killed:?}; {reruns} attempts abandoned by killed nodes and re-run elsewhere");
    assert!(reruns > 0, "the kills hit no running job; the test proved nothing");
    let stuck = store.sql_query("SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ IS NOT NULL", &[]).await.unwrap();
    assert_eq!(stuck[0][0], SqlValue::Int(0));
}
