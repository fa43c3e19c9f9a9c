//! SPEC J5 under contention: four nodes (separate stores, separate sessions) acquire exclusive
//! jobs of a few keys as fast as they can. At no moment may two unexpired leases exist on one
//! key, and the job log's intervals of one key must never overlap.

use jiff::SignedDuration;
use kairos_core::{Completion, EnqueueRequest, JobLogEntry, NewJob};
use kairos_store::{JobAcquireParams, JobCompletion, JobLogFilter, Store};
use kairos_store_postgres::PgStore;
use kairos_store_postgres::test_support::fresh_schema_url;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEYS: [&str; 3] = ["order-1", "order-2", "order-3"];
const JOBS_PER_KEY: usize = 120;
const PLAIN_JOBS: usize = 200;
const NODES: usize = 4;

fn job(exclusive_key: Option<&str>) -> NewJob {
    EnqueueRequest { handler: "work".into(), exclusive_key: exclusive_key.map(str::to_string), ..Default::default() }
        .validate(|_| true)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_never_hold_leases_on_one_exclusive_key_at_once() {
    let Some(url) = fresh_schema_url().await else { return };
    let mut stores = Vec::new();
    for _ in 0..NODES {
        stores.push(PgStore::connect_with(url.parse().unwrap(), 3).await.unwrap());
    }
    stores[0].migrate().await.unwrap();
    let mut jobs: Vec<NewJob> = Vec::new();
    for i in 0..JOBS_PER_KEY {
        for key in KEYS {
            jobs.push(job(Some(key)));
        }
        if i < PLAIN_JOBS {
            jobs.push(job(None));
        }
    }
    let total = jobs.len();
    stores[0].job_insert_many(&jobs).await.unwrap();

    // key -> (job, node) while a node holds a lease on it. An entry is removed just before the
    // completion is sent, so while it is present the lease is certainly live in the database.
    let holders: Arc<Mutex<HashMap<String, (String, String)>>> = Arc::default();
    let violations: Arc<Mutex<Vec<String>>> = Arc::default();
    let completed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut tasks = Vec::new();
    for (n, store) in stores.into_iter().enumerate() {
        let (holders, violations, completed) = (holders.clone(), violations.clone(), completed.clone());
        tasks.push(tokio::spawn(async move {
            let node = format!("node-{n}");
            while completed.load(std::sync::atomic::Ordering::SeqCst) < total {
                assert!(Instant::now() < deadline, "the drain did not finish in time");
                let params = JobAcquireParams {
                    node: node.clone(),
                    limit: 6,
                    lock_time: SignedDuration::from_mins(5),
                    now: None,
                    lookahead: SignedDuration::ZERO,
                };
                let got = store.job_acquire(&params).await.unwrap();
                let returned = Instant::now();
                if got.jobs.is_empty() {
                    tokio::task::yield_now().await;
                    continue;
                }
                for a in &got.jobs {
                    if let Some(key) = &a.job.exclusive_key {
                        let previous = holders.lock().unwrap().insert(key.clone(), (a.job.id.clone(), node.clone()));
                        if let Some((other, by)) = previous {
                            violations
                                .lock()
                                .unwrap()
                                .push(format!("{node} took {} of {key} while {by} held {other}", a.job.id));
                        }
                    }
                }
                tokio::task::yield_now().await;
                let mut batch = Vec::new();
                for a in &got.jobs {
                    if let Some(key) = &a.job.exclusive_key {
                        holders.lock().unwrap().remove(key);
                    }
                    let finished = got.db_now + SignedDuration::try_from(returned.elapsed()).unwrap();
                    batch.push(JobCompletion {
                        job_id: a.job.id.clone(),
                        node: node.clone(),
                        attempt: a.job.attempts,
                        started: got.db_now,
                        finished,
                        completion: Completion::Delete { log_message: None },
                        effects: Vec::new(),
                    });
                }
                let applied = store.job_complete_many(&batch).await.unwrap();
                assert!(applied.iter().all(|a| *a), "no lease may be lost here");
                completed.fetch_add(applied.len(), std::sync::atomic::Ordering::SeqCst);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let violations = violations.lock().unwrap().clone();
    assert!(
        violations.is_empty(),
        "{} overlapping leases, e.g. {:?}",
        violations.len(),
        &violations[..violations.len().min(5)]
    );

    let store = PgStore::connect(&url).await.unwrap();
    let log = store.job_log_list(&JobLogFilter { size: 10_000, ..Default::default() }).await.unwrap();
    assert_eq!(log.total as usize, total);
    for key in KEYS {
        let mut attempts: Vec<&JobLogEntry> =
            log.data.iter().filter(|e| e.exclusive_key.as_deref() == Some(key)).collect();
        assert_eq!(attempts.len(), JOBS_PER_KEY);
        attempts.sort_by_key(|e| (e.start, e.end));
        for pair in attempts.windows(2) {
            assert!(
                pair[1].start >= pair[0].end,
                "key {key}: {} ran {:?}..{:?} on {:?}, overlapping {} {:?}..{:?} on {:?}",
                pair[1].job_id,
                pair[1].start,
                pair[1].end,
                pair[1].node,
                pair[0].job_id,
                pair[0].start,
                pair[0].end,
                pair[0].node
            );
        }
    }
}
