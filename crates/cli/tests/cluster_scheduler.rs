//! The scheduler on PostgreSQL with three real `kairos serve` nodes (issue 5, "Done means"):
//! every trigger fires every second; each fire time runs exactly once cluster-wide; a node
//! killed with SIGKILL mid-run loses nothing — the firings it was running re-run elsewhere when
//! their job requests recovery and go to the dead letters (never run twice) when it does not;
//! non-concurrent jobs never overlap.
//!
//! Default (CI): 100 triggers for 20 s. `KAIROS_SCHED_CLUSTER_LONG=1`: the form, 500
//! triggers for 60 s.

mod support;

use kairos::scheduler::{JobSpec, TriggerSpec};
use kairos::store::SqlValue;
use kairos::{Engine, JobLogOutcome};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::node::{Node, all_log};

fn node(url: &str, name: &str, dir: &std::path::Path) -> Node {
    let flags: Vec<String> = ["--workers", "32", "--lock-time", "PT30S"]
        .into_iter()
        .chain(["--heartbeat-interval", "PT0.3S", "--dead-after", "PT2S", "--poll-interval", "PT0.2S"])
        // The test's triggers repeat every half second, below the default minimum of 1 s.
        .chain(["--min-repeat-interval", "PT0.1S"])
        .map(String::from)
        .collect();
    Node::start(url, name, dir, &flags)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_fire_each_second_once_and_a_killed_node_loses_nothing() {
    let Some(url) = kairos_store_postgres::test_support::fresh_schema_url().await else { return };
    let long = std::env::var("KAIROS_SCHED_CLUSTER_LONG").is_ok_and(|v| v == "1");
    let (n, secs) = if long { (500, 60) } else { (100, 20) };
    let dir = tempfile::tempdir().unwrap();
    let admin = Engine::builder(url.clone())
        .node_id("test-admin")
        .executor_enabled(false)
        .min_repeat_interval(kairos::SignedDuration::from_millis(100))
        .build()
        .await
        .unwrap();
    let s = admin.scheduler();
    let store = admin.store().clone();
    let start = (store.db_now().await.unwrap() + jiff::SignedDuration::from_secs(4)).round(jiff::Unit::Second).unwrap();
    let end = start + jiff::SignedDuration::from_secs(secs);
    // Even jobs request recovery, odd ones do not; three more are non-concurrent and slow.
    let mut specs = Vec::new();
    for i in 0..n {
        let job: JobSpec = serde_json::from_value(json!({
            "name": format!("j{i:03}"), "handler": "sleep", "data": {"ms": 40}, "requestsRecovery": i % 2 == 0,
        }))
        .unwrap();
        s.add_job(&job).await.unwrap();
        specs.push(
            serde_json::from_value::<TriggerSpec>(json!({
                "name": format!("t{i:03}"), "jobName": format!("j{i:03}"), "startTime": start, "endTime": end,
                "cron": {"expression": "* * * * * ?"},
            }))
            .unwrap(),
        );
    }
    for i in 0..3 {
        let job: JobSpec = serde_json::from_value(json!({
            "name": format!("slow{i}"), "handler": "sleep", "data": {"ms": 1500}, "concurrent": false, "requestsRecovery": true,
        }))
        .unwrap();
        s.add_job(&job).await.unwrap();
        specs.push(
            serde_json::from_value::<TriggerSpec>(json!({
                "name": format!("slow{i}"), "jobName": format!("slow{i}"), "startTime": start, "endTime": end,
                "simple": {"interval": "PT0.5S"},
            }))
            .unwrap(),
        );
    }
    s.schedule_many(&specs).await.unwrap();

    let mut nodes: Vec<Node> = (0..3).map(|i| node(&url, &format!("q{i}"), dir.path())).collect();
    // A third of the way in, kill a node while it runs one of the slow (1.5 s) firings, so that
    // the kill surely lands mid-run: a node holding only 40 ms firings may finish them first.
    let kill_at = start + jiff::SignedDuration::from_secs(secs / 3);
    while store.db_now().await.unwrap() < kill_at {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let wait_limit = Instant::now() + Duration::from_secs(10);
    let (victim, running) = loop {
        let rows = store
            .sql_query(
                "SELECT LOCK_OWNER_, COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ IS NOT NULL AND HANDLER_TYPE_ = 'quartz-job' \
                 AND ELEMENT_ID_ LIKE 'slow%' GROUP BY LOCK_OWNER_ ORDER BY 2 DESC",
                &[],
            )
            .await
            .unwrap();
        if let Some(r) = rows.first() {
            break (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap_or(0));
        }
        assert!(Instant::now() < wait_limit, "no node ran a slow firing for 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let pos = nodes.iter().position(|x| x.name == victim).expect("the victim is one of ours");
    let mut dead = nodes.remove(pos);
    dead.kill9();
    eprintln!("killed {victim} (SIGKILL) while it ran {running} slow firings");

    // Until every trigger has fired its last time and all work is done.
    let limit = Instant::now() + Duration::from_secs(secs as u64 + 90);
    loop {
        let left = store
            .sql_query("SELECT (SELECT COUNT(*) FROM QRTZ_TRIGGERS) + (SELECT COUNT(*) FROM ACT_RU_JOB)", &[])
            .await
            .unwrap()[0][0]
            .as_i64()
            .unwrap();
        if left == 0 {
            break;
        }
        assert!(Instant::now() < limit, "{left} triggers and jobs left; node logs:\n{}", nodes[0].log_text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for x in &mut nodes {
        x.terminate();
    }

    let log = all_log(&store).await;
    let work: Vec<_> = log.iter().filter(|l| l.handler_type == "quartz-job").collect();
    // (job, scheduled fire time) → outcomes.
    let mut fires: BTreeMap<(String, i64), Vec<JobLogOutcome>> = BTreeMap::new();
    for l in &work {
        let key = (l.element_id.clone().unwrap_or_default(), l.duedate.map(|d| d.as_millisecond()).unwrap_or(0));
        fires.entry(key).or_default().push(l.outcome);
    }
    let dead_letters: BTreeSet<(String, i64)> = store
        .sql_query("SELECT ELEMENT_ID_, DUEDATE_ FROM ACT_RU_DEADLETTER_JOB WHERE HANDLER_TYPE_ = 'quartz-job'", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or_default().to_string(),
                r[1].as_timestamp().map(|t| t.as_millisecond()).unwrap_or(0),
            )
        })
        .collect();
    let mut reruns = 0;
    for ((job, due), outcomes) in &fires {
        let ok = outcomes.iter().filter(|o| **o == JobLogOutcome::Succeeded).count();
        assert!(ok <= 1, "{job} at {due} ran to success {ok} times: {outcomes:?}");
        if outcomes.contains(&JobLogOutcome::Abandoned) {
            reruns += 1;
        }
    }
    for i in 0..n {
        let job = format!("j{i:03}");
        let recovers = i % 2 == 0;
        let mut t = start;
        while t < end {
            let key = (job.clone(), t.as_millisecond());
            let ok = fires.get(&key).is_some_and(|o| o.contains(&JobLogOutcome::Succeeded));
            if recovers {
                assert!(ok, "{job} (requests recovery) did not run its fire time {t}: {:?}", fires.get(&key));
            } else {
                assert!(ok || dead_letters.contains(&key), "{job} lost its fire time {t}: {:?}", fires.get(&key));
            }
            t += jiff::SignedDuration::from_secs(1);
        }
    }
    // Non-concurrent jobs: no two successful runs of one job overlap.
    for i in 0..3 {
        let name = format!("slow{i}");
        let mut runs: Vec<_> = work
            .iter()
            .filter(|l| l.element_id.as_deref() == Some(name.as_str()) && l.outcome == JobLogOutcome::Succeeded)
            .map(|l| (l.start.unwrap(), l.end.unwrap()))
            .collect();
        runs.sort();
        assert!(runs.len() >= 3, "{name} ran {} times", runs.len());
        for pair in runs.windows(2) {
            assert!(pair[1].0 >= pair[0].1, "{name} overlapped: {:?} and {:?}", pair[0], pair[1]);
        }
    }
    eprintln!("{} firings, {reruns} abandoned by the killed node, {} dead letters", fires.len(), dead_letters.len());
    assert!(reruns > 0, "the kill hit no running firing; the test proved nothing");
    s.check_in().await.unwrap(); // sweeps the fired rows of dead-lettered firings
    let stuck = store.sql_query("SELECT COUNT(*) FROM QRTZ_FIRED_TRIGGERS", &[]).await.unwrap();
    assert_eq!(stuck[0][0], SqlValue::Int(0), "fired-trigger rows left behind");
}
