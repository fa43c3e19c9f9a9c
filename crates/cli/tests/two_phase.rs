//! `kairos twophase list|recover` (SPEC C11) on real PostgreSQL: a global transaction left in
//! doubt after its decision — both sides prepared, the log COMMITTING, its coordinator gone — is
//! listed, left alone within the grace period, and committed on both sides by `recover`. Bad
//! input (a SQLite store, a SQLite business database, no business database) is refused with one
//! line, changing nothing.
//!
//! The kairos and business schemas are two schemas of one test database here, so each side's
//! prepared transactions are listed on both (pg_prepared_xacts is per database): recovery
//! finishes each once all the same.
//!
//! Needs `KAIROS_TEST_PG_URL` on a server with `max_prepared_transactions` > 0; skips without the
//! URL unless `KAIROS_REQUIRE_PG=1`.

mod support;

use kairos::Engine;
use kairos::process::StartRequest;
use kairos_store_postgres::two_phase as log;
use support::{Kairos, assert_one_line_error};

const APPROVE: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="approve" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="review"/>
    <userTask id="review" name="Review"/>
    <sequenceFlow id="f2" sourceRef="review" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;

/// A kairos schema with the model deployed, a business schema with `orders`, and one global
/// transaction in doubt after its decision: a coordinator that died right after recording
/// COMMITTING, its steps taken as `commit()` takes them.
struct InDoubt {
    db: String,
    business_url: String,
    kairos: sqlx::PgPool,
    business: sqlx::PgPool,
    id: String,
    gid_b: String,
    gid_k: String,
}

async fn in_doubt() -> Option<InDoubt> {
    let db = kairos_store_postgres::test_support::fresh_schema_url().await?;
    let business_url = kairos_store_postgres::test_support::fresh_schema_url().await.unwrap();
    let engine = Engine::builder(db.clone()).executor_enabled(false).build().await.unwrap();
    let kairos = engine.postgres_pool().unwrap().clone();
    let (max,): (String,) = sqlx::query_as("SHOW max_prepared_transactions").fetch_one(&kairos).await.unwrap();
    assert_ne!(max, "0", "the test server has max_prepared_transactions = 0 (scripts/pg.sh sets 64)");
    engine.processes().deploy("approve.bpmn", APPROVE).await.unwrap();
    let business = kairos::two_phase::connect_business(&business_url).await.unwrap();
    sqlx::query("CREATE TABLE orders (id TEXT PRIMARY KEY)").execute(&business).await.unwrap();

    let prefix = engine.two_phase(&business).unwrap().gid_prefix().await.unwrap();
    let id = kairos::new_id();
    let (gid_b, gid_k) = (format!("{prefix}{id}:b"), format!("{prefix}{id}:k"));
    log::log_begin(&kairos, &id, &gid_b, &gid_k, "gone").await.unwrap();
    let mut b = business.begin().await.unwrap();
    sqlx::query("INSERT INTO orders (id) VALUES ('o-1')").execute(&mut *b).await.unwrap();
    log::prepare(&mut b, &gid_b).await.unwrap();
    b.commit().await.unwrap();
    let mut k = kairos.begin().await.unwrap();
    engine
        .within(&mut *k)
        .start(StartRequest {
            process_definition_key: Some("approve".into()),
            business_key: Some("o-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    log::prepare(&mut k, &gid_k).await.unwrap();
    k.commit().await.unwrap();
    assert!(log::log_move(&kairos, &id, &[log::State::Preparing], log::State::Committing, None).await.unwrap());
    Some(InDoubt { db, business_url, kairos, business, id, gid_b, gid_k })
}

async fn count(pool: &sqlx::PgPool, sql: &'static str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql).fetch_one(pool).await.unwrap().0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_recover_a_transaction_left_in_doubt() {
    let Some(InDoubt { db, business_url, kairos, business, id, gid_b, gid_k }) = in_doubt().await else { return };
    let mut cli = Kairos::new();
    cli.db = db.clone();
    let biz = ["--business-db", business_url.as_str()];
    let listed = cli.json(&[&["twophase", "list"][..], &biz].concat());
    assert_eq!(listed["transactions"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["transactions"][0]["state"], "COMMITTING", "{listed}");
    let on_b: Vec<&str> =
        listed["preparedBusiness"].as_array().unwrap().iter().map(|p| p["gid"].as_str().unwrap()).collect();
    assert!(on_b.contains(&gid_b.as_str()) && on_b.contains(&gid_k.as_str()), "{listed}");
    let text = cli.ok(&[&["twophase", "list"][..], &biz].concat());
    assert!(text.contains(&id) && text.contains("COMMITTING"), "{text}");

    // Within the grace period (PT60S by default) nothing is touched.
    let untouched = cli.json(&[&["twophase", "recover"][..], &biz].concat());
    assert_eq!(untouched["committed"].as_array().unwrap().len(), 0, "{untouched}");
    assert_eq!(count(&business, "SELECT COUNT(*) FROM orders").await, 0);

    let done = cli.json(&[&["twophase", "recover", "--grace", "PT0S"][..], &biz].concat());
    let mut committed: Vec<&str> = done["committed"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    committed.sort();
    assert_eq!(committed, vec![gid_b.as_str(), gid_k.as_str()], "{done}");
    assert_eq!(done["closed"], serde_json::json!([id]), "{done}");
    assert_eq!(count(&business, "SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(count(&kairos, "SELECT COUNT(*) FROM ACT_RU_TASK").await, 1);
    let after = cli.json(&[&["twophase", "list", "--all"][..], &biz].concat());
    assert_eq!(after["transactions"][0]["state"], "COMMITTED", "{after}");
    assert_eq!(after["preparedBusiness"], serde_json::json!([]), "{after}");
}

/// `kairos serve --two-phase-recovery URL` recovers on start: the transaction in
/// doubt (its row aged past the grace period) is committed on both sides by the node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_recovers_with_two_phase_recovery() {
    let Some(d) = in_doubt().await else { return };
    sqlx::query("UPDATE KAIROS_TWO_PHASE SET UPDATE_TIME_ = UPDATE_TIME_ - INTERVAL '10 minutes'")
        .execute(&d.kairos)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flags: Vec<String> =
        ["--two-phase-recovery", &d.business_url, "--no-executor"].iter().map(|s| s.to_string()).collect();
    let mut node = support::node::Node::start(&d.db, "recoverer", dir.path(), &flags);
    // Recovery commits the business side, then the kairos side, then moves the log to
    // COMMITTED: wait for the last step, not the first, before looking at both sides.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (state,): (String,) = sqlx::query_as("SELECT STATE_ FROM KAIROS_TWO_PHASE WHERE ID_ = $1")
            .bind(&d.id)
            .fetch_one(&d.kairos)
            .await
            .unwrap();
        if state == "COMMITTED" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "serve did not recover ({state}); its log:\n{}", node.log_text());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    node.terminate();
    assert_eq!(count(&d.business, "SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(count(&d.kairos, "SELECT COUNT(*) FROM ACT_RU_TASK").await, 1);
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let cli = Kairos::new();
    let out = cli.run(&["twophase", "list"]);
    let line = assert_one_line_error(&out, 2, "no business database");
    assert!(line.contains("--business-db"), "{line}");
    let out = cli.run(&["twophase", "recover", "--business-db", "postgres://u:secret@127.0.0.1:1/x"]);
    let line = assert_one_line_error(&out, 2, "a SQLite store");
    assert!(line.contains("--db must be the PostgreSQL kairos database"), "{line}");
    assert!(!cli.path("kairos.db").exists(), "the refused command created the SQLite store");
    let out = cli.run(&["--db", "postgres://u:p@127.0.0.1:1/k", "twophase", "list", "--business-db", "sqlite://b.db"]);
    let line = assert_one_line_error(&out, 2, "a SQLite business database");
    assert!(line.contains("\"sqlite://b.db\" is not PostgreSQL"), "{line}");
    let out = cli.run(&["serve", "--no-executor", "--listen", "127.0.0.1:0", "--two-phase-recovery", "sqlite://b.db"]);
    let line = assert_one_line_error(&out, 2, "serve with a SQLite business database for recovery");
    assert!(line.contains("\"sqlite://b.db\" is not PostgreSQL"), "{line}");
    let out = cli.run(&[
        "--db",
        "postgres://u:p@127.0.0.1:1/k",
        "twophase",
        "recover",
        "--grace",
        "soon",
        "--business-db",
        "postgres://u:p@127.0.0.1:1/b",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
