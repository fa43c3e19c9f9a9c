//! The chaos suite (issue 3, docs/chaos.md): three real `kairos serve --chaos` nodes on a
//! PostgreSQL of its own, and a seeded random timeline of faults while they drain the jobs:
//! SIGKILL of a node (a replacement starts at once), SIGSTOP/SIGCONT of a node for longer than
//! its lease, a PostgreSQL restart mid-load, every database connection dropped at once
//! (`pg_terminate_backend`), and one node whose own clock runs three minutes ahead
//! (`--clock-skew PT3M`). At the end it checks, and explains every failure of:
//!
//! 1. no job lost: each job has exactly one `CHAOS_EFFECT` row and is gone from `ACT_RU_JOB` and
//!    the dead letters;
//! 2. transactional effects exactly once, and written by the attempt the job log says succeeded;
//! 3. side-effect duplicates (`CHAOS_SIDE_EFFECT`, autocommit) only for attempts whose lease was
//!    lost by a killed or paused node, or by a node cut off by a database fault — each one
//!    explained by an `abandoned`/`failed` `ACT_HI_JOB_LOG` row and a fault at that time;
//! 4. exclusive jobs (two keys) never overlap;
//! 5. no attempt of a timer started before its `DUEDATE_` (database clock), on any node;
//! 6. nothing stuck: no lease, no advisory lock left after recovery.
//!
//! Short form (the default, in CI; under ~90 s): 600 jobs, 3 kills, 1 pause, 1 PostgreSQL
//! restart, 1 dropped-connection fault, 1 skewed node.
//!
//! ```text
//! cargo test -p kairos-cli --test chaos -- --nocapture                               # short form
//! KAIROS_CHAOS_LONG=1 cargo test -p kairos-cli --test chaos -- --nocapture           # long form
//! KAIROS_CHAOS_SEED=12345 cargo test -p kairos-cli --test chaos -- --nocapture       # replay a seed
//! ```
//!
//! Long form (`KAIROS_CHAOS_LONG=1`, several minutes): 10,000 jobs, 20 kills, one PostgreSQL
//! restart, one paused node, one dropped-connection fault, one skewed node.
//!
//! Node logs are kept (and their directory printed) when the run fails, or always with
//! `KAIROS_CHAOS_KEEP_LOGS=1`.
//!
//! The suite starts its own PostgreSQL cluster (`KAIROS_PG_DIR=/tmp/kairos-chaos-pg
//! scripts/pg.sh start`, or `KAIROS_CHAOS_PG_DIR`), because it restarts it; it never touches the
//! server of `KAIROS_TEST_PG_URL`, and stops its own at the end. If that cluster cannot start
//! the test is skipped with a message, unless `KAIROS_REQUIRE_PG=1`.

mod chaos_support;
mod support;

use chaos_support::{
    ChaosPg, DEAD_AFTER_S, Expected, Fault, Form, Happened, LOCK_TIME_S, Rng, SideRun, chaos_node, count, plan, query,
    secs, text, ts,
};
use kairos::{Engine, EnqueueRequest, JobLogEntry, JobLogOutcome, Timestamp};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};
use support::node::{Node, all_log};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_faults_lose_nothing_and_duplicate_only_what_they_explain() {
    let form = Form::pick();
    let seed = match std::env::var("KAIROS_CHAOS_SEED") {
        Ok(s) => s.trim().parse::<u64>().expect("KAIROS_CHAOS_SEED must be an unsigned integer"),
        Err(_) => {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
                % 1_000_000_007
        }
    };
    eprintln!("chaos ({} form): seed {seed}  (replay: KAIROS_CHAOS_SEED={seed})", form.name);
    eprintln!("  {form:?}");
    let mut rng = Rng(seed);
    let begun = Instant::now();

    let pg = match ChaosPg::start() {
        Ok(pg) => pg,
        Err(e) => {
            if std::env::var("KAIROS_REQUIRE_PG").is_ok_and(|v| v == "1") {
                panic!("KAIROS_REQUIRE_PG=1 but the chaos PostgreSQL cannot start: {e}");
            }
            eprintln!("skipped: the chaos suite needs its own PostgreSQL and it cannot start: {e}");
            return;
        }
    };
    eprintln!("  chaos PostgreSQL at {} (data in {})", pg.url, pg.dir);

    // A fresh schema per run; those of earlier runs go.
    let admin = kairos::open_store(&pg.url).await.expect("connect to the chaos PostgreSQL");
    for row in query(&admin, "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'chaos\\_%'").await {
        let name = text(&row[0]);
        if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let _ = admin.sql_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"), &[]).await;
        }
    }
    let schema = format!("chaos_{seed}_{}", Timestamp::now().as_millisecond());
    admin.sql_execute(&format!("CREATE SCHEMA {schema}"), &[]).await.unwrap();
    let url = kairos_store_postgres::test_support::with_search_path(&pg.url, &schema);
    eprintln!("  schema {schema}");

    // The test's own engine only enqueues (executor off); it knows the handler's name so that
    // enqueue validation accepts the jobs, which run on the `kairos serve --chaos` nodes.
    let engine = Engine::builder(&url)
        .node_id("chaos-test")
        .executor_enabled(false)
        .handler("chaos", kairos::handler_fn(|_| async { Err("the test's engine never runs jobs".into()) }))
        .build()
        .await
        .unwrap();
    let store = engine.store().clone();
    store
        .sql_execute(
            "CREATE TABLE CHAOS_SIDE_EFFECT (JOB_ID VARCHAR(64) NOT NULL, ATTEMPT INT NOT NULL, \
             NODE VARCHAR(255) NOT NULL, AT_ TIMESTAMPTZ NOT NULL, NODE_NOW TIMESTAMPTZ)",
            &[],
        )
        .await
        .unwrap();
    store
        .sql_execute(
            "CREATE TABLE CHAOS_EFFECT (JOB_ID VARCHAR(64) PRIMARY KEY, NODE VARCHAR(255) NOT NULL, \
             ATTEMPT INT NOT NULL, AT_ TIMESTAMPTZ NOT NULL)",
            &[],
        )
        .await
        .unwrap();

    // ---- the jobs: ordinary, exclusive (2 keys), timers due while the faults happen ----------
    let db_now = ts(&query(&store, "SELECT CURRENT_TIMESTAMP").await[0][0]).unwrap();
    let mut reqs = Vec::with_capacity(form.jobs);
    let (mut n_excl, mut n_timer) = (0, 0);
    for i in 0..form.jobs {
        let roll = rng.below(100);
        let mut req = EnqueueRequest {
            handler: "chaos".into(),
            // 11 attempts, 1 s apart: no fault of the timeline can exhaust them.
            retry_cycle: Some("R10/PT1S".into()),
            ..Default::default()
        };
        if roll < 8 {
            req.exclusive_key = Some(format!("chaos-key-{}", i % 2));
            req.payload = Some(json!({ "ms": rng.range(20, 120), "i": i }));
            n_excl += 1;
        } else if roll < 20 {
            let ahead_ms = 3_000 + (rng.unit() * (form.span_s - 3.0) * 1000.0) as i64;
            req.due_date = Some(db_now + jiff::SignedDuration::from_millis(ahead_ms));
            req.payload = Some(json!({ "ms": rng.range(form.ms.0, form.ms.1), "i": i }));
            n_timer += 1;
        } else {
            req.payload = Some(json!({ "ms": rng.range(form.ms.0, form.ms.1), "i": i }));
        }
        reqs.push(req);
    }
    for chunk in reqs.chunks(2000) {
        engine.enqueue_many(chunk).await.unwrap();
    }
    let mut expected: HashMap<String, Expected> = HashMap::new();
    for row in query(&store, "SELECT ID_, DUEDATE_, EXCLUSIVE_KEY_, TYPE_ FROM ACT_RU_JOB").await {
        expected.insert(
            text(&row[0]),
            Expected {
                due: ts(&row[1]),
                exclusive: row[2].as_str().map(str::to_string),
                timer: text(&row[3]) == "timer",
            },
        );
    }
    assert_eq!(expected.len(), form.jobs, "every enqueued job is in ACT_RU_JOB before the nodes start");
    eprintln!(
        "  enqueued {} jobs: {n_excl} exclusive (2 keys), {n_timer} timers due within {}s",
        form.jobs, form.span_s
    );

    // ---- three nodes; slot 2 runs three minutes ahead -----------------------------------------
    let dir = tempfile::tempdir().unwrap();
    let skewed_slot = 2;
    let mut generation = [0u32; 3];
    let node_name = |slot: usize, generation: u32| {
        if slot == skewed_slot { format!("n{slot}-{generation}-skew") } else { format!("n{slot}-{generation}") }
    };
    let mut slots: Vec<Node> =
        (0..3).map(|s| chaos_node(&url, &node_name(s, 0), form.workers, s == skewed_slot, dir.path())).collect();
    let mut retired: Vec<Node> = Vec::new();
    let pause_s = (LOCK_TIME_S + DEAD_AFTER_S + 1) as f64;
    let timeline = plan(&form, &mut rng, pause_s);
    eprintln!("  fault plan (seconds after the nodes start):");
    for (t, f) in &timeline {
        eprintln!("    t={t:6.2}s {f:?}");
    }

    // ---- run the timeline -----------------------------------------------------------------
    let t0 = Instant::now();
    let mut happened: Vec<Happened> = Vec::new();
    let mut paused: Option<(usize, Timestamp)> = None;
    let mut killed_with_leases = 0;
    for (at, fault) in &timeline {
        let due = t0 + Duration::from_secs_f64(*at);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            tokio::time::sleep(wait).await;
        }
        let left = count(&store, "SELECT COUNT(*) FROM ACT_RU_JOB").await;
        let stamp = format!("[t={:6.2}s, {left} jobs left]", t0.elapsed().as_secs_f64());
        match fault {
            Fault::Kill => {
                let candidates: Vec<usize> = (0..3).filter(|s| paused.is_none_or(|(p, _)| p != *s)).collect();
                let slot = candidates[rng.below(candidates.len() as u64) as usize];
                let held = count(
                    &store,
                    &format!("SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ = '{}'", slots[slot].name),
                )
                .await;
                slots[slot].kill9();
                // Taken once the process is gone (reaped): an attempt it acquired in its last
                // milliseconds, while `kill` was being spawned, still started before this.
                let now = Timestamp::now();
                generation[slot] += 1;
                let next =
                    chaos_node(&url, &node_name(slot, generation[slot]), form.workers, slot == skewed_slot, dir.path());
                let old = std::mem::replace(&mut slots[slot], next);
                eprintln!("  {stamp} SIGKILL {} (held {held} leases); replacement {}", old.name, slots[slot].name);
                if held > 0 {
                    killed_with_leases += 1;
                }
                happened.push(Happened { fault: Fault::Kill, node: Some(old.name.clone()), from: now, to: now });
                retired.push(old);
            }
            Fault::Pause => {
                let slot = rng.below(3) as usize;
                let held = count(
                    &store,
                    &format!("SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ = '{}'", slots[slot].name),
                )
                .await;
                slots[slot].signal("-STOP");
                paused = Some((slot, Timestamp::now()));
                eprintln!("  {stamp} SIGSTOP {} (held {held} leases) for {pause_s}s", slots[slot].name);
            }
            Fault::Resume => {
                let (slot, from) = paused.take().expect("a paused node");
                slots[slot].signal("-CONT");
                eprintln!("  {stamp} SIGCONT {}", slots[slot].name);
                happened.push(Happened {
                    fault: Fault::Pause,
                    node: Some(slots[slot].name.clone()),
                    from,
                    to: Timestamp::now(),
                });
            }
            Fault::PgRestart => {
                let from = Timestamp::now();
                let down = pg.restart();
                eprintln!("  {stamp} PostgreSQL restarted (pg.sh stop + start: {})", secs(down));
                happened.push(Happened { fault: Fault::PgRestart, node: None, from, to: Timestamp::now() });
            }
            Fault::DropConnections => {
                let from = Timestamp::now();
                let rows = query(
                    &store,
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                )
                .await;
                eprintln!("  {stamp} dropped {} database connections (pg_terminate_backend)", rows.len());
                happened.push(Happened { fault: Fault::DropConnections, node: None, from, to: Timestamp::now() });
            }
        }
    }
    let timeline_took = t0.elapsed();

    // ---- drain ---------------------------------------------------------------------------
    let drain_start = Instant::now();
    loop {
        let left = count(&store, "SELECT COUNT(*) FROM ACT_RU_JOB").await;
        let dead = count(&store, "SELECT COUNT(*) FROM ACT_RU_DEADLETTER_JOB").await;
        if left == 0 || dead > 0 || drain_start.elapsed() > form.drain_limit {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let drained_at = t0.elapsed();
    eprintln!("  timeline done at {}, drained (or gave up) at {}", secs(timeline_took), secs(drained_at));

    // Nothing stuck while the nodes still run: no lease, no advisory lock held in the database.
    let mut failures: Vec<String> = Vec::new();
    let stuck = count(&store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE LOCK_OWNER_ IS NOT NULL").await;
    if stuck != 0 {
        failures.push(format!("{stuck} rows of ACT_RU_JOB still locked after recovery"));
    }
    let advisory_sql = "SELECT COUNT(*) FROM pg_locks l JOIN pg_database d ON l.database = d.oid \
                        WHERE d.datname = current_database() AND l.locktype = 'advisory' AND l.pid <> pg_backend_pid()";
    let mut advisory = count(&store, advisory_sql).await;
    for _ in 0..20 {
        if advisory == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        advisory = count(&store, advisory_sql).await;
    }
    if advisory != 0 {
        failures.push(format!("{advisory} advisory locks (exclusive keys) still held after the drain"));
    }

    for n in slots.iter_mut() {
        n.terminate();
    }
    for n in slots.iter().chain(retired.iter()) {
        let text = n.log_text().to_lowercase();
        for bad in ["deadlock detected", "panicked"] {
            if text.contains(bad) {
                failures.push(format!("node {} logged {bad:?} (see its log below)", n.name));
            }
        }
    }

    // ---- gather --------------------------------------------------------------------------
    let log = all_log(&store).await;
    let side = query(&store, "SELECT JOB_ID, ATTEMPT, NODE, AT_, NODE_NOW FROM CHAOS_SIDE_EFFECT").await;
    let effects = query(&store, "SELECT JOB_ID, NODE, ATTEMPT FROM CHAOS_EFFECT").await;
    let left: Vec<String> = query(&store, "SELECT ID_ FROM ACT_RU_JOB").await.iter().map(|r| text(&r[0])).collect();
    let dead: Vec<(String, String)> = query(&store, "SELECT ID_, EXCEPTION_MSG_ FROM ACT_RU_DEADLETTER_JOB")
        .await
        .iter()
        .map(|r| (text(&r[0]), text(&r[1])))
        .collect();

    let killed: HashMap<String, Timestamp> =
        happened.iter().filter(|h| h.fault == Fault::Kill).map(|h| (h.node.clone().unwrap(), h.from)).collect();
    let paused_nodes: Vec<&Happened> = happened.iter().filter(|h| h.fault == Fault::Pause).collect();
    let db_faults: Vec<&Happened> =
        happened.iter().filter(|h| matches!(h.fault, Fault::PgRestart | Fault::DropConnections)).collect();
    // Why an attempt other than the successful one could exist; None = unexplained.
    let margin = jiff::SignedDuration::from_secs((LOCK_TIME_S + DEAD_AFTER_S + 3) as i64);
    let explain = |node: &str, start: Option<Timestamp>, end: Option<Timestamp>| -> Option<&'static str> {
        let start = start?;
        let end = end.unwrap_or(start);
        // A killed node's last acquisition statement may still be running in its backend when
        // the process dies; the server finishes and commits it, so a lease can start (its
        // LOCK_TIME_ is read with clock_timestamp()) a moment after the death.
        if killed.get(node).is_some_and(|k| start <= *k + jiff::SignedDuration::from_secs(2)) {
            return Some("node killed (SIGKILL)");
        }
        if paused_nodes.iter().any(|p| p.node.as_deref() == Some(node) && start <= p.to) {
            return Some("node paused (SIGSTOP) past its lease");
        }
        if db_faults.iter().any(|w| start <= w.to + margin && end >= w.from - jiff::SignedDuration::from_secs(1)) {
            return Some("database fault (restart or dropped connections) cut the node off");
        }
        None
    };

    let mut by_job: BTreeMap<&str, Vec<&JobLogEntry>> = BTreeMap::new();
    for l in &log {
        by_job.entry(l.job_id.as_str()).or_default().push(l);
    }
    let effect_of: HashMap<String, (String, i64)> =
        effects.iter().map(|r| (text(&r[0]), (text(&r[1]), r[2].as_i64().unwrap_or(-1)))).collect();
    let mut side_of: HashMap<String, Vec<SideRun>> = HashMap::new();
    for r in &side {
        side_of.entry(text(&r[0])).or_default().push((r[1].as_i64().unwrap_or(-1), text(&r[2]), ts(&r[3]), ts(&r[4])));
    }

    // 1. No job lost.
    let mut lost = Vec::new();
    for id in expected.keys() {
        if !effect_of.contains_key(id) {
            lost.push(id.clone());
        }
    }
    if !lost.is_empty() || !left.is_empty() || !dead.is_empty() {
        failures.push(format!(
            "JOBS LOST: {} jobs have no CHAOS_EFFECT row (e.g. {:?}), {} still in ACT_RU_JOB after {} (e.g. {:?}), \
             {} in the dead letters (e.g. {:?}). Each job had 11 attempts, so a fault must have made a job's \
             success unrecordable or its attempts vanish",
            lost.len(),
            lost.iter().take(3).collect::<Vec<_>>(),
            left.len(),
            secs(form.drain_limit),
            left.iter().take(3).collect::<Vec<_>>(),
            dead.len(),
            dead.iter().take(3).collect::<Vec<_>>()
        ));
    }
    if effects.len() != expected.len() {
        failures.push(format!(
            "CHAOS_EFFECT holds {} rows for {} jobs (the unique key allows at most one per job)",
            effects.len(),
            expected.len()
        ));
    }

    // 2. Exactly once, by the attempt the log says succeeded; 3. duplicates explained.
    let mut causes: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let mut wrong = Vec::new();
    let mut duplicated_jobs = 0;
    for id in expected.keys() {
        let tries = by_job.get(id.as_str()).cloned().unwrap_or_default();
        let wins: Vec<_> = tries.iter().filter(|t| t.outcome == JobLogOutcome::Succeeded).collect();
        if wins.len() != 1 {
            wrong.push(format!("job {id}: {} succeeded attempts in ACT_HI_JOB_LOG: {tries:?}", wins.len()));
            continue;
        }
        let win = wins[0];
        let max_attempt = tries.iter().map(|t| t.attempt).max().unwrap_or(0);
        if win.attempt != max_attempt {
            wrong.push(format!(
                "job {id}: attempt {} succeeded but attempt {max_attempt} exists: a stale attempt completed after a take-over ({tries:?})",
                win.attempt
            ));
        }
        if let Some((node, attempt)) = effect_of.get(id.as_str())
            && (Some(node) != win.node.as_ref() || *attempt != i64::from(win.attempt))
        {
            wrong.push(format!(
                "job {id}: CHAOS_EFFECT was written by {node} attempt {attempt}, but the log says {:?} attempt {} succeeded: \
                 a completion that lost its lease was applied",
                win.node, win.attempt
            ));
        }
        // Every attempt that did not succeed needs a reason.
        for t in tries.iter().filter(|t| t.outcome != JobLogOutcome::Succeeded) {
            let node = t.node.clone().unwrap_or_default();
            match (t.outcome, explain(&node, t.start, t.end)) {
                // NotStarted: a lease taken ahead of the due date ran out before the handler
                // started (its start could not be marked); no retry was spent, but it still
                // needs a fault to explain it.
                (JobLogOutcome::Abandoned | JobLogOutcome::Failed | JobLogOutcome::NotStarted, Some(cause)) => {
                    *causes.entry(cause).or_default() += 1
                }
                _ => unexplained.push(format!(
                    "job {id} attempt {} on {node}: {:?} at {:?}..{:?} ({:?}) matches no kill, pause or database fault",
                    t.attempt, t.outcome, t.start, t.end, t.message
                )),
            }
        }
        let runs = side_of.get(id.as_str()).cloned().unwrap_or_default();
        let mut seen = HashSet::new();
        for (attempt, node, at, _) in &runs {
            if !seen.insert(*attempt) {
                wrong.push(format!(
                    "job {id}: two side effects for attempt {attempt}: two handlers ran under one lease"
                ));
            }
            if *attempt > i64::from(win.attempt) {
                wrong
                    .push(format!("job {id}: a handler ran (attempt {attempt} on {node}) after the job had succeeded"));
            }
            if *attempt != i64::from(win.attempt) {
                match tries.iter().find(|t| i64::from(t.attempt) == *attempt) {
                    Some(t) if t.node.as_deref() == Some(node.as_str()) => {}
                    Some(t) => wrong.push(format!(
                        "job {id}: attempt {attempt} ran on {node} but its lease belonged to {:?}",
                        t.node
                    )),
                    None => unexplained.push(format!(
                        "job {id}: side effect of attempt {attempt} on {node} at {at:?} has no ACT_HI_JOB_LOG row"
                    )),
                }
            }
        }
        if runs.len() > 1 {
            duplicated_jobs += 1;
        }
        if !runs.iter().any(|(a, _, _, _)| *a == i64::from(win.attempt)) {
            wrong.push(format!("job {id}: the successful attempt {} left no side-effect row", win.attempt));
        }
    }
    if !wrong.is_empty() {
        failures.push(format!(
            "EXACTLY-ONCE BROKEN ({}):\n    {}",
            wrong.len(),
            wrong.iter().take(10).cloned().collect::<Vec<_>>().join("\n    ")
        ));
    }
    if !unexplained.is_empty() {
        failures.push(format!(
            "UNEXPLAINED RE-RUNS ({}): attempts lost by a node that was neither killed, paused nor cut off by a \
             database fault:\n    {}",
            unexplained.len(),
            unexplained.iter().take(10).cloned().collect::<Vec<_>>().join("\n    ")
        ));
    }

    // 4. Exclusive jobs never overlap: successful attempts of one key, by their log intervals.
    let mut overlaps = Vec::new();
    let mut per_key: BTreeMap<&str, Vec<&JobLogEntry>> = BTreeMap::new();
    for l in log.iter().filter(|l| l.outcome == JobLogOutcome::Succeeded) {
        if let Some(k) = expected.get(&l.job_id).and_then(|e| e.exclusive.as_deref()) {
            per_key.entry(k).or_default().push(l);
        }
    }
    for (key, runs) in per_key.iter_mut() {
        runs.sort_by_key(|l| l.start);
        for w in runs.windows(2) {
            if w[1].start.unwrap() < w[0].end.unwrap() {
                overlaps.push(format!(
                    "key {key}: {:?} ran {:?}..{:?} while {:?} ran {:?}..{:?}",
                    w[0].job_id, w[0].start, w[0].end, w[1].job_id, w[1].start, w[1].end
                ));
            }
        }
    }
    if !overlaps.is_empty() {
        failures.push(format!(
            "EXCLUSIVE JOBS OVERLAPPED ({}):\n    {}",
            overlaps.len(),
            overlaps.iter().take(10).cloned().collect::<Vec<_>>().join("\n    ")
        ));
    }

    // 5. No timer early, by the database clock: neither the attempt's start in the log nor the
    //    handler's own side-effect row (written with the database's CURRENT_TIMESTAMP).
    let mut early = Vec::new();
    let mut lateness_ms: Vec<i64> = Vec::new();
    // A `not-started` row is a lease that ran out before its handler started: its start is the
    // acquisition's (ahead of the due date by design), no handler ran, so it is not a firing.
    for l in log.iter().filter(|l| l.outcome != JobLogOutcome::NotStarted) {
        if let (Some(start), Some(due)) = (l.start, expected.get(&l.job_id).and_then(|e| e.due)) {
            if start < due {
                early.push(format!(
                    "job {} attempt {} on {:?} started {start} before its due date {due}",
                    l.job_id, l.attempt, l.node
                ));
            }
            if expected[&l.job_id].timer && l.outcome == JobLogOutcome::Succeeded {
                lateness_ms.push(start.duration_since(due).as_millis() as i64);
            }
        }
    }
    for (id, runs) in &side_of {
        if let Some(due) = expected.get(id).and_then(|e| e.due) {
            for (attempt, node, at, _) in runs {
                if at.is_some_and(|at| at < due) {
                    early.push(format!(
                        "job {id} attempt {attempt}: handler on {node} ran at {at:?}, before its due date {due}"
                    ));
                }
            }
        }
    }
    if !early.is_empty() {
        failures.push(format!(
            "TIMERS FIRED EARLY ({}):\n    {}",
            early.len(),
            early.iter().take(10).cloned().collect::<Vec<_>>().join("\n    ")
        ));
    }

    // The faults must have happened for the run to prove anything.
    let skew_rows = side
        .iter()
        .filter(|r| text(&r[2]).ends_with("-skew"))
        .filter(|r| match (ts(&r[3]), ts(&r[4])) {
            (Some(at), Some(node_now)) => node_now.duration_since(at).as_secs() >= 170,
            _ => false,
        })
        .count();
    if skew_rows == 0 {
        failures
            .push("the skewed node ran no job with its clock 3 minutes ahead; the skew fault proved nothing".into());
    }
    let skew_timers = log
        .iter()
        .filter(|l| l.outcome == JobLogOutcome::Succeeded && l.node.as_deref().is_some_and(|n| n.ends_with("-skew")))
        .filter(|l| expected.get(&l.job_id).is_some_and(|e| e.timer))
        .count();
    let lease_lost_lines: usize = paused_nodes
        .iter()
        .filter_map(|p| slots.iter().chain(retired.iter()).find(|n| Some(&n.name) == p.node.as_ref()))
        .map(|n| n.log_text().lines().filter(|l| l.contains("lease") && !l.contains(" INFO ")).count())
        .sum();

    lateness_ms.sort_unstable();
    let pct = |p: f64| lateness_ms.get(((lateness_ms.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(0);
    eprintln!("chaos ({} form) seed {seed}: results", form.name);
    eprintln!(
        "  {} jobs, {} attempts logged, {} side-effect rows, {} effect rows",
        expected.len(),
        log.len(),
        side.len(),
        effects.len()
    );
    eprintln!("  jobs whose handler ran more than once: {duplicated_jobs}; re-run causes: {causes:?}");
    eprintln!("  kills that hit a node holding leases: {killed_with_leases}/{}", form.kills);
    eprintln!("  paused node's log lines (warnings) about its leases: {lease_lost_lines}");
    eprintln!("  skewed node: {skew_rows} attempts with its clock >=170 s ahead, {skew_timers} timers run there");
    eprintln!(
        "  timers: {} lateness p50 {} ms, p99 {} ms, max {} ms",
        lateness_ms.len(),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    eprintln!("  total {} (timeline {}, drained at {})", secs(begun.elapsed()), secs(timeline_took), secs(drained_at));
    if failures.is_empty() && std::env::var("KAIROS_CHAOS_KEEP_LOGS").is_ok_and(|v| v == "1") {
        eprintln!("node logs kept in {}", dir.keep().display());
        return;
    }
    if !failures.is_empty() {
        for n in slots.iter().chain(retired.iter()) {
            let text = n.log_text();
            let tail: Vec<&str> = text.lines().filter(|l| !l.contains(" INFO ")).collect();
            eprintln!("---- {} (warnings and errors, last 30) ----", n.name);
            for l in tail.iter().rev().take(30).rev() {
                eprintln!("{l}");
            }
        }
        let logs = dir.keep();
        eprintln!("node logs kept in {}", logs.display());
        panic!(
            "chaos ({} form) seed {seed} broke {} invariant(s) (replay: KAIROS_CHAOS_SEED={seed}; schema {schema} is kept):\n\n{}",
            form.name,
            failures.len(),
            failures.join("\n\n")
        );
    }
}
