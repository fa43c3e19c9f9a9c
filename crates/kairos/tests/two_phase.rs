//! The opt-in two-phase commit (SPEC C11, seed 002 §21) across two real PostgreSQL databases:
//! a business row (`orders`) and a started instance commit together or not at all — also when
//! the coordinator process is SIGKILLed at each step of the protocol, or the business
//! database's connection is terminated there (`pg_terminate_backend`), once recovery has run.
//!
//! The coordinator is this test binary run again (`--exact child_coordinator`) with
//! `KAIROS_FAULT_TWO_PHASE_PAUSE=<step>`: it prints `paused at <step> … business_pid=N` and
//! waits for a line on stdin, so the test kills it (or the connection) exactly there.
//!
//! Needs `KAIROS_TEST_PG_URL` on a server with `max_prepared_transactions` > 0 (scripts/pg.sh
//! sets 64); without either it skips, unless `KAIROS_REQUIRE_PG=1`, where it fails saying which.

mod common;

use kairos::Engine;
use kairos::process::StartRequest;
use kairos::two_phase::{self, GID_PREFIX, RecoverySettings, State, Step};
use sqlx::PgPool;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const APPROVE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="approve" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

fn required() -> bool {
    std::env::var("KAIROS_REQUIRE_PG").is_ok_and(|v| v == "1")
}

/// Two fresh databases on the test server: kairos's (migrated, the model deployed) and the
/// business one (with `orders`).
struct Dbs {
    kairos_url: String,
    business_url: String,
    engine: Engine,
    business: PgPool,
}

async fn setup() -> Option<Dbs> {
    let Ok(base) = std::env::var("KAIROS_TEST_PG_URL") else {
        assert!(!required(), "KAIROS_REQUIRE_PG=1 but KAIROS_TEST_PG_URL is not set");
        eprintln!("skipped: KAIROS_TEST_PG_URL not set");
        return None;
    };
    let admin = PgPool::connect(&base).await.expect("connect to KAIROS_TEST_PG_URL");
    let (max,): (String,) = sqlx::query_as("SHOW max_prepared_transactions").fetch_one(&admin).await.unwrap();
    if max == "0" {
        assert!(
            !required(),
            "KAIROS_REQUIRE_PG=1 but the server of KAIROS_TEST_PG_URL has max_prepared_transactions = 0: the \
             two-phase tests need prepared transactions (scripts/pg.sh sets 64; restart a cluster made before)"
        );
        eprintln!("skipped: max_prepared_transactions = 0 on KAIROS_TEST_PG_URL's server");
        return None;
    }
    drop_stale_databases(&admin).await;
    let suffix = kairos::new_id().replace('-', "");
    let mut urls = vec![];
    for side in ["k", "b"] {
        let name = format!("kairos_tpc_{side}_{suffix}");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&admin).await.unwrap();
        let (head, tail) = base.split_once('?').map_or((base.as_str(), ""), |(h, t)| (h, t));
        let root = head.rsplit_once('/').unwrap().0;
        urls.push(if tail.is_empty() { format!("{root}/{name}") } else { format!("{root}/{name}?{tail}") });
    }
    admin.close().await;
    let engine = Engine::builder(urls[0].clone()).node_id("test").executor_enabled(false).build().await.unwrap();
    engine.processes().deploy("approve.bpmn", APPROVE).await.unwrap();
    let business = two_phase::connect_business(&urls[1]).await.unwrap();
    sqlx::query("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)").execute(&business).await.unwrap();
    Some(Dbs { kairos_url: urls[0].clone(), business_url: urls[1].clone(), engine, business })
}

/// Drops the databases of runs more than an hour old (a failed test leaves its two behind),
/// rolling back what they left prepared first (a database with a prepared transaction cannot be
/// dropped). Best effort: a concurrent run dropping the same one is not an error.
async fn drop_stale_databases(admin: &PgPool) {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT datname::TEXT FROM pg_database WHERE datname LIKE 'kairos\\_tpc\\_%'")
            .fetch_all(admin)
            .await
            .unwrap_or_default();
    let now_ms = i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis())
        .unwrap_or(i64::MAX);
    for (name,) in rows {
        // kairos_tpc_<side>_<uuid v7 without dashes>: its first 12 hex digits are the creation's ms.
        let created = name.get(13..25).and_then(|h| i64::from_str_radix(h, 16).ok());
        if created.is_none_or(|c| now_ms - c < 3_600_000) {
            continue;
        }
        drop_database(admin, &name).await;
    }
}

async fn drop_database(admin: &PgPool, name: &str) {
    let base = std::env::var("KAIROS_TEST_PG_URL").unwrap();
    let (head, tail) = base.split_once('?').map_or((base.as_str(), ""), |(h, t)| (h, t));
    let url = format!("{}/{name}{}{tail}", head.rsplit_once('/').unwrap().0, if tail.is_empty() { "" } else { "?" });
    if let Ok(pool) = PgPool::connect(&url).await {
        let gids: Vec<(String,)> =
            sqlx::query_as("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
                .fetch_all(&pool)
                .await
                .unwrap_or_default();
        for (gid,) in gids {
            if kairos_store_postgres::two_phase::check_gid(&gid).is_ok() {
                let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ROLLBACK PREPARED '{gid}'"))).execute(&pool).await;
            }
        }
        pool.close().await;
    }
    let _ =
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))).execute(admin).await;
}

impl Drop for Dbs {
    /// Drops both databases when the test ends (passed or not), from a thread of its own: a
    /// destructor cannot await.
    fn drop(&mut self) {
        let (Ok(base), names) =
            (std::env::var("KAIROS_TEST_PG_URL"), [db_name(&self.kairos_url), db_name(&self.business_url)])
        else {
            return;
        };
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(admin) = PgPool::connect(&base).await {
                    for name in names {
                        drop_database(&admin, &name).await;
                    }
                    admin.close().await;
                }
            });
        })
        .join();
    }
}

fn db_name(url: &str) -> String {
    let head = url.split_once('?').map_or(url, |(h, _)| h);
    head.rsplit_once('/').map(|(_, n)| n.to_string()).unwrap_or_default()
}

/// The business part and the engine part of one order, in one two-phase transaction.
async fn submit(engine: &Engine, business: &PgPool, order: &str) -> Result<two_phase::Committed, kairos::Error> {
    let mut tx = engine.two_phase(business)?.begin().await?;
    sqlx::query("INSERT INTO orders (id, status) VALUES ($1, 'APPROVING')")
        .bind(order)
        .execute(tx.business())
        .await
        .map_err(two_phase::business_error)?;
    tx.kairos()
        .start(StartRequest {
            process_definition_key: Some("approve".into()),
            business_key: Some(order.into()),
            ..Default::default()
        })
        .await?;
    tx.commit().await
}

impl Dbs {
    /// (business row, started instance) for `order`, as committed now.
    async fn sides(&self, order: &str) -> (bool, bool) {
        let (b,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM orders WHERE id = $1")
            .bind(order)
            .fetch_one(&self.business)
            .await
            .unwrap();
        let pool = self.engine.postgres_pool().unwrap();
        let (k,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM ACT_RU_EXECUTION e JOIN ACT_RU_TASK t ON t.PROC_INST_ID_ = e.ID_ \
             WHERE e.BUSINESS_KEY_ = $1 AND e.ID_ = e.PROC_INST_ID_",
        )
        .bind(order)
        .fetch_one(pool)
        .await
        .unwrap();
        assert!(b <= 1 && k <= 1, "order {order}: {b} business rows, {k} instances");
        (b == 1, k == 1)
    }

    /// Gids with kairos's prefix prepared on either database.
    async fn prepared(&self) -> Vec<String> {
        let l = self.engine.two_phase(&self.business).unwrap().list(true, 100).await.unwrap();
        l.prepared_business.into_iter().chain(l.prepared_kairos).map(|p| p.gid).collect()
    }

    async fn states(&self) -> Vec<&'static str> {
        let l = self.engine.two_phase(&self.business).unwrap().list(true, 100).await.unwrap();
        l.transactions.into_iter().map(|t| t.state).collect()
    }

    async fn recover(&self) -> two_phase::Recovered {
        self.engine.two_phase(&self.business).unwrap().recover(Duration::ZERO).await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_both_sides() {
    let Some(d) = setup().await else { return };
    let done = submit(&d.engine, &d.business, "o-1").await.unwrap();
    assert!(done.finished);
    assert_eq!(d.sides("o-1").await, (true, true));
    assert_eq!(d.states().await, vec![State::Committed.as_str()]);
    assert!(d.prepared().await.is_empty());
    assert!(d.recover().await.is_empty(), "nothing is left for recovery");
}

/// Twice as many concurrent global transactions as the kairos pool has connections (20) all
/// commit: none waits for a second connection of a pool while it holds one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_transactions_beyond_the_pool_size_all_commit() {
    let Some(d) = setup().await else { return };
    let engine =
        std::sync::Arc::new(Engine::builder(d.kairos_url.clone()).executor_enabled(false).build().await.unwrap());
    let mut all = tokio::task::JoinSet::new();
    for i in 0..40 {
        let (engine, business) = (engine.clone(), d.business.clone());
        all.spawn(async move { submit(&engine, &business, &format!("c-{i}")).await });
    }
    let deadline = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(done) = all.join_next().await {
            assert!(done.unwrap().unwrap().finished);
        }
    });
    deadline.await.expect("40 concurrent two-phase transactions did not finish in 60 s");
    for i in 0..40 {
        assert_eq!(d.sides(&format!("c-{i}")).await, (true, true), "c-{i}");
    }
    assert!(d.prepared().await.is_empty());
}

/// A failure before the decision — the business statement, or the engine command — leaves
/// neither side, and the row is closed ROLLED_BACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_before_the_decision_leaves_neither() {
    let Some(d) = setup().await else { return };
    submit(&d.engine, &d.business, "o-1").await.unwrap();
    // The same order again: the business INSERT fails on the primary key.
    let Err(e) = submit(&d.engine, &d.business, "o-1").await else { panic!("a duplicate order committed") };
    assert!(e.to_string().contains("business database"), "{e}");
    assert!(matches!(&e, kairos::Error::Store(s) if s.kind == kairos::store::ErrorKind::Conflict), "{e:?}");
    // An engine command that fails: an unknown definition.
    let mut tx = d.engine.two_phase(&d.business).unwrap().begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id, status) VALUES ('o-2', 'APPROVING')").execute(tx.business()).await.unwrap();
    let refused =
        tx.kairos().start(StartRequest { process_definition_key: Some("no-such".into()), ..Default::default() }).await;
    assert!(refused.is_err());
    tx.rollback().await.unwrap();
    assert_eq!(d.sides("o-2").await, (false, false));
    // A business statement that failed, its error ignored: PostgreSQL would answer the PREPARE
    // of the aborted transaction with a silent ROLLBACK; commit must not go on to the decision.
    let mut tx = d.engine.two_phase(&d.business).unwrap().begin().await.unwrap();
    let dup = sqlx::query("INSERT INTO orders (id, status) VALUES ('o-1', 'AGAIN')").execute(tx.business()).await;
    assert!(dup.is_err(), "o-1 exists");
    tx.kairos()
        .start(StartRequest {
            process_definition_key: Some("approve".into()),
            business_key: Some("o-3".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let e = tx.commit().await.expect_err("a transaction aborted by its own error committed");
    assert!(e.to_string().contains("rolled the transaction back instead"), "{e}");
    assert_eq!(d.sides("o-3").await, (false, false), "the engine side committed alone");
    // The duplicate's transaction was dropped before commit: its row waits for recovery.
    let mut states = d.states().await;
    states.sort();
    assert_eq!(states, vec!["COMMITTED", "PREPARING", "ROLLED_BACK", "ROLLED_BACK"]);
    let r = d.recover().await;
    assert_eq!(r.closed.len(), 1, "{r:?}");
    assert!(d.prepared().await.is_empty());
    assert_eq!(d.sides("o-1").await, (true, true));
}

/// A recovery that takes a slow coordinator's transaction as abandoned (grace 0) decides
/// rollback first; the coordinator's own decision is then refused and it rolls back too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_wins_against_a_slow_coordinator() {
    let Some(d) = setup().await else { return };
    let mut tx = d.engine.two_phase(&d.business).unwrap().begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id, status) VALUES ('o-1', 'APPROVING')").execute(tx.business()).await.unwrap();
    tx.kairos()
        .start(StartRequest {
            process_definition_key: Some("approve".into()),
            business_key: Some("o-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let r = d.recover().await;
    assert_eq!(r.closed, vec![tx.id().to_string()], "{r:?}");
    let e = tx.commit().await.expect_err("the coordinator committed after recovery rolled back");
    assert!(e.to_string().contains("rolled back by recovery"), "{e}");
    assert_eq!(d.sides("o-1").await, (false, false));
    assert!(d.prepared().await.is_empty(), "the coordinator rolled back what it had prepared");
    assert_eq!(d.states().await, vec!["ROLLED_BACK"]);
}

/// A prepared transaction with this kairos database's prefix and no log row is rolled back; one
/// of another kairos database (another namespace), or without the prefix, is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphans_are_rolled_back_and_foreign_gids_left_alone() {
    let Some(d) = setup().await else { return };
    let prefix = d.engine.two_phase(&d.business).unwrap().gid_prefix().await.unwrap();
    assert!(prefix.starts_with(GID_PREFIX) && prefix.len() > GID_PREFIX.len(), "{prefix}");
    let orphan = format!("{prefix}{}:b", kairos::new_id());
    // Another kairos database's (another namespace), and not kairos's at all.
    let other = format!("{GID_PREFIX}0123456789ab:{}:b", kairos::new_id());
    let foreign = format!("someone-else-{}", kairos::new_id());
    for (gid, order) in [(&orphan, "o-orphan"), (&other, "o-other"), (&foreign, "o-foreign")] {
        let mut tx = d.business.begin().await.unwrap();
        sqlx::query("INSERT INTO orders (id, status) VALUES ($1, 'X')").bind(order).execute(&mut *tx).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("PREPARE TRANSACTION '{gid}'; BEGIN")))
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    let r = d.recover().await;
    assert_eq!(r.orphans, vec![orphan.clone()], "{r:?}");
    assert!(d.prepared().await.is_empty());
    for gid in [&other, &foreign] {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM pg_prepared_xacts WHERE gid = $1")
            .bind(gid)
            .fetch_one(&d.business)
            .await
            .unwrap();
        assert_eq!(n, 1, "{gid}, not this kairos database's, was touched");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ROLLBACK PREPARED '{gid}'"))).execute(&d.business).await.unwrap();
    }
}

/// SQLite has no prepared transactions, and a business database must be PostgreSQL: both are
/// refused with errors that say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_and_non_postgres_business_urls_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("k.db").display());
    let engine = Engine::builder(url.clone()).executor_enabled(false).build().await.unwrap();
    let lazy = PgPool::connect_lazy("postgres://u:p@127.0.0.1:1/x").unwrap();
    let e = engine.two_phase(&lazy).expect_err("two-phase on SQLite");
    assert!(e.to_string().contains("needs a PostgreSQL kairos store"), "{e}");
    let e = Engine::builder(url)
        .two_phase_recovery(lazy, RecoverySettings::default())
        .build()
        .await
        .expect_err("recovery on SQLite");
    assert!(e.to_string().contains("needs a PostgreSQL kairos store"), "{e}");
    let e = two_phase::connect_business("sqlite://biz.db").await.expect_err("a SQLite business database");
    assert!(e.to_string().contains("\"sqlite://biz.db\" is not PostgreSQL"), "{e}");
    let e = two_phase::connect_business("mysql://u:secret@h/db").await.expect_err("a MySQL URL");
    assert!(e.to_string().contains("mysql://u:***@h/db") && !e.to_string().contains("secret"), "{e}");
}

/// How a test interrupts the coordinator at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    /// SIGKILL the coordinator process.
    Coordinator,
    /// `pg_terminate_backend` the business connection the transaction ran on, then let the
    /// coordinator go on.
    BusinessConnection,
    /// The business database refusing new connections (`ALLOW_CONNECTIONS false`) and its
    /// connection terminated, then the coordinator goes on; connections are allowed again
    /// once it has finished.
    BusinessDatabaseAway,
}

/// The child role: one order through the two-phase commit, pausing where
/// `KAIROS_FAULT_TWO_PHASE_PAUSE` says. Ignored (it is no test of its own): `interrupt` runs it
/// with `--include-ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the coordinator child of the kill tests, run by them"]
async fn child_coordinator() {
    let Ok(kairos_url) = std::env::var("KAIROS_TPC_KAIROS_URL") else { return };
    let business_url = std::env::var("KAIROS_TPC_BUSINESS_URL").unwrap();
    let order = std::env::var("KAIROS_TPC_ORDER").unwrap();
    let engine = Engine::builder(kairos_url).node_id("child").executor_enabled(false).build().await.unwrap();
    let business = two_phase::connect_business(&business_url).await.unwrap();
    match submit(&engine, &business, &order).await {
        Ok(c) => eprintln!("CHILD RESULT committed finished={}", c.finished),
        Err(e) => eprintln!("CHILD RESULT error {e}"),
    }
}

/// Runs the child to `step`, interrupts it by `kill`, and answers the child's last words (its
/// result line, when it lived to print one).
async fn interrupt(d: &Dbs, order: &str, step: Step, kill: Kill) -> Option<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_coordinator", "--include-ignored", "--nocapture", "--test-threads", "1"])
        .env("KAIROS_TPC_KAIROS_URL", &d.kairos_url)
        .env("KAIROS_TPC_BUSINESS_URL", &d.business_url)
        .env("KAIROS_TPC_ORDER", order)
        .env("KAIROS_FAULT_TWO_PHASE_PAUSE", step.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the coordinator child");
    let (lines, seen) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let wanted = format!("paused at {} ", step.as_str());
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = seen.recv_timeout(left).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the coordinator did not reach {}", step.as_str())
        });
        if line.contains(&wanted) {
            let pid = line.rsplit_once("business_pid=").unwrap().1.trim().parse::<i32>().unwrap();
            break pid;
        }
    };
    match kill {
        Kill::Coordinator => {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            None
        }
        Kill::BusinessConnection | Kill::BusinessDatabaseAway => {
            let admin = PgPool::connect(&std::env::var("KAIROS_TEST_PG_URL").unwrap()).await.unwrap();
            let alter = |allow: bool| {
                let sql = format!("ALTER DATABASE {} ALLOW_CONNECTIONS {allow}", db_name(&d.business_url));
                let admin = admin.clone();
                async move { sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&admin).await.unwrap() }
            };
            if kill == Kill::BusinessDatabaseAway {
                alter(false).await;
            }
            let (gone,): (bool,) =
                sqlx::query_as("SELECT pg_terminate_backend($1)").bind(pid).fetch_one(&d.business).await.unwrap();
            assert!(gone, "business backend {pid} was not there to terminate");
            child.stdin.take().unwrap().write_all(b"go on\n").unwrap();
            let status = child.wait().unwrap();
            if kill == Kill::BusinessDatabaseAway {
                alter(true).await;
            }
            admin.close().await;
            assert!(status.success(), "the coordinator child failed: {status}");
            let mut last = None;
            while let Ok(line) = seen.recv_timeout(Duration::from_secs(5)) {
                if let Some(r) = line.strip_prefix("CHILD RESULT ") {
                    last = Some(r.to_string());
                }
            }
            last
        }
    }
}

/// Every step × both ways to break it: after recovery, both sides committed or both rolled
/// back, and which one is what the log's decision says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_at_every_step_end_all_or_nothing() {
    let Some(d) = setup().await else { return };
    for kill in [Kill::Coordinator, Kill::BusinessConnection] {
        for step in Step::ALL {
            let order = format!("o-{kill:?}-{}", step.as_str());
            let said = interrupt(&d, &order, step, kill).await;
            let before = d.sides(&order).await;
            if kill == Kill::Coordinator {
                // Killed before its commits, nothing is visible; killed between them, only the
                // business side is — recovery must do the rest.
                let expected = (step == Step::BusinessCommitted, false);
                assert_eq!(before, expected, "{order}: before recovery");
            }
            let r = d.recover().await;
            let after = d.sides(&order).await;
            // The decision is recorded from `decided` on; a dead business connection before it
            // fails only the prepare it was needed for.
            let committed = match kill {
                Kill::Coordinator => matches!(step, Step::Decided | Step::BusinessCommitted),
                Kill::BusinessConnection | Kill::BusinessDatabaseAway => step != Step::BeforePrepare,
            };
            assert_eq!(after, (committed, committed), "{order}: after recovery {r:?}; the child said {said:?}");
            assert!(d.prepared().await.is_empty(), "{order}: still prepared after recovery");
            let open: Vec<_> = d
                .engine
                .two_phase(&d.business)
                .unwrap()
                .list(false, 100)
                .await
                .unwrap()
                .transactions
                .into_iter()
                .map(|t| (t.id, t.state))
                .collect();
            assert!(open.is_empty(), "{order}: rows left open {open:?}");
            eprintln!(
                "{order}: {} after recovery; child said {said:?}; recovery {r:?}",
                if committed { "committed" } else { "rolled back" }
            );
        }
    }
}

/// The business database away right after the decision: the coordinator cannot commit that
/// side, answers "committed, not finished", and recovery commits it once the database is back —
/// the kairos side committed meanwhile, the business row appears only then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_away_after_the_decision_is_finished_by_recovery() {
    let Some(d) = setup().await else { return };
    let said = interrupt(&d, "o-1", Step::Decided, Kill::BusinessDatabaseAway).await;
    assert_eq!(said.as_deref(), Some("committed finished=false"));
    assert_eq!(d.sides("o-1").await, (false, true), "the kairos side commits regardless");
    let open = d.engine.two_phase(&d.business).unwrap().list(false, 10).await.unwrap().transactions;
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].state, "COMMITTING");
    assert!(open[0].last_error.as_deref().is_some_and(|e| e.contains("COMMIT PREPARED")), "{open:?}");
    let r = d.recover().await;
    assert_eq!(r.committed.len(), 1, "{r:?}");
    assert_eq!(d.sides("o-1").await, (true, true));
    assert_eq!(d.states().await, vec!["COMMITTED"]);
}

/// The engine recovers on start: an in-doubt transaction left by a coordinator killed after its
/// decision is committed by an engine started with `two_phase_recovery`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_recovers_on_start() {
    let Some(d) = setup().await else { return };
    interrupt(&d, "o-1", Step::Decided, Kill::Coordinator).await;
    assert_eq!(d.sides("o-1").await, (false, false));
    // Retention zero: the loop deletes the row once it is COMMITTED.
    let settings =
        RecoverySettings { grace: Duration::ZERO, every: Duration::from_secs(3600), retention: Some(Duration::ZERO) };
    let node = Engine::builder(d.kairos_url.clone())
        .node_id("recoverer")
        .two_phase_recovery(d.business.clone(), settings)
        .build()
        .await
        .unwrap();
    node.start().await.unwrap();
    common::wait_until(Duration::from_secs(20), "the engine's recovery commits o-1", || async {
        d.sides("o-1").await == (true, true)
    })
    .await;
    common::wait_until(Duration::from_secs(20), "the loop deletes the final row", || async {
        d.states().await.is_empty()
    })
    .await;
    node.shutdown(Duration::from_secs(5)).await;
}

/// `kairos doctor` warns of a transaction in doubt for minutes, saying which way recovery will
/// finish it, and says nothing more once it is finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_reports_transactions_in_doubt() {
    let Some(d) = setup().await else { return };
    interrupt(&d, "o-1", Step::BothPrepared, Kill::Coordinator).await;
    interrupt(&d, "o-2", Step::Decided, Kill::Coordinator).await;
    let query = kairos::doctor::DoctorQuery::default();
    let report = kairos::doctor::diagnose(&d.engine, &query).await.unwrap();
    assert_eq!(report.with_code("two-phase-in-doubt").count(), 0, "fresh rows are not in doubt yet");
    // As if the coordinator had died ten minutes ago.
    sqlx::query("UPDATE KAIROS_TWO_PHASE SET UPDATE_TIME_ = UPDATE_TIME_ - INTERVAL '10 minutes'")
        .execute(d.engine.postgres_pool().unwrap())
        .await
        .unwrap();
    let report = kairos::doctor::diagnose(&d.engine, &query).await.unwrap();
    let found: Vec<_> = report.with_code("two-phase-in-doubt").collect();
    assert_eq!(found.len(), 2, "{report}");
    assert!(found.iter().any(|f| f.title.contains("PREPARING") && f.action.contains("rolls back")), "{report}");
    assert!(found.iter().any(|f| f.title.contains("COMMITTING") && f.action.contains("commits")), "{report}");
    assert!(report.worst() >= kairos::doctor::Severity::Warning, "a cron job alerting on the exit status sees it");
    d.recover().await;
    let report = kairos::doctor::diagnose(&d.engine, &query).await.unwrap();
    assert_eq!(report.with_code("two-phase-in-doubt").count(), 0, "{report}");
    assert_eq!(d.sides("o-1").await, (false, false));
    assert_eq!(d.sides("o-2").await, (true, true));
}
