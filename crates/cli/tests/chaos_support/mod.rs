//! The chaos suite's harness (`tests/chaos.rs`, docs/chaos.md): the size of a run, a seeded
//! random number generator, the suite's own PostgreSQL, its nodes, the fault timeline, and
//! database helpers that retry through the faults.

use crate::support::node::Node;
use kairos::store::SqlValue;
use kairos::{Store, Timestamp};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const PG_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/pg.sh");

/// Node settings: short leases so faults are noticed within seconds.
pub const LOCK_TIME_S: u64 = 6;
pub const DEAD_AFTER_S: u64 = 2;
pub const SKEW: &str = "PT3M";

/// The size of a run.
#[derive(Debug, Clone)]
pub struct Form {
    pub name: &'static str,
    pub jobs: usize,
    pub kills: usize,
    pub pauses: usize,
    pub pg_restarts: usize,
    pub drops: usize,
    /// Faults happen between 2 s and this many seconds after the nodes start.
    pub span_s: f64,
    pub workers: u32,
    /// Handler sleep of an ordinary job, uniform in this range (ms).
    pub ms: (u64, u64),
    pub drain_limit: Duration,
}

impl Form {
    pub fn pick() -> Form {
        if std::env::var("KAIROS_CHAOS_LONG").is_ok_and(|v| v == "1") {
            Form {
                name: "long",
                jobs: 10_000,
                kills: 20,
                pauses: 1,
                pg_restarts: 1,
                drops: 1,
                span_s: 170.0,
                workers: 8,
                ms: (100, 800),
                drain_limit: Duration::from_secs(900),
            }
        } else {
            Form {
                name: "short",
                jobs: 600,
                kills: 3,
                pauses: 1,
                pg_restarts: 1,
                drops: 1,
                span_s: 28.0,
                workers: 4,
                ms: (200, 1200),
                drain_limit: Duration::from_secs(120),
            }
        }
    }
}

/// splitmix64: enough randomness for a replayable timeline, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

// ----- the suite's own PostgreSQL ------------------------------------------------------------

pub struct ChaosPg {
    pub dir: String,
    pub url: String,
}

impl ChaosPg {
    pub fn pg_sh(dir: &str, cmd: &str) -> Result<String, String> {
        let out = Command::new("bash")
            .arg(PG_SH)
            .arg(cmd)
            .env("KAIROS_PG_DIR", dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {PG_SH}: {e}"))?;
        if !out.status.success() {
            return Err(format!("pg.sh {cmd} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn start() -> Result<ChaosPg, String> {
        let dir = std::env::var("KAIROS_CHAOS_PG_DIR").unwrap_or_else(|_| "/tmp/kairos-chaos-pg".into());
        let out = Self::pg_sh(&dir, "start")?;
        let url = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("export KAIROS_TEST_PG_URL="))
            .ok_or_else(|| format!("pg.sh start printed no URL: {out:?}"))?
            .to_string();
        Ok(ChaosPg { dir, url })
    }

    /// Stops the server (fast shutdown: every session is cut) and starts it again on the same
    /// port; returns how long it was down.
    pub fn restart(&self) -> Duration {
        let t = Instant::now();
        Self::pg_sh(&self.dir, "stop").expect("stop the chaos PostgreSQL");
        let out = Self::pg_sh(&self.dir, "start").expect("start the chaos PostgreSQL again");
        assert!(
            out.contains(&self.url),
            "the chaos PostgreSQL came back on another port ({out}); the nodes cannot follow it"
        );
        t.elapsed()
    }
}

impl Drop for ChaosPg {
    fn drop(&mut self) {
        let _ = Self::pg_sh(&self.dir, "stop");
    }
}

// ----- nodes ---------------------------------------------------------------------------------

/// One `kairos serve --chaos` process in one of the three slots.
pub fn chaos_node(url: &str, name: &str, workers: u32, skewed: bool, dir: &std::path::Path) -> Node {
    let mut flags: Vec<String> = vec![
        "--chaos".into(),
        "--workers".into(),
        workers.to_string(),
        "--lock-time".into(),
        format!("PT{LOCK_TIME_S}S"),
        "--heartbeat-interval".into(),
        "PT0.3S".into(),
        "--dead-after".into(),
        format!("PT{DEAD_AFTER_S}S"),
        "--poll-interval".into(),
        "PT0.2S".into(),
        "--shutdown-grace".into(),
        "PT5S".into(),
    ];
    if skewed {
        flags.extend(["--clock-skew".to_string(), SKEW.to_string()]);
    }
    Node::start(url, name, dir, &flags)
}

// ----- the fault timeline --------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Kill,
    Pause,
    Resume,
    PgRestart,
    DropConnections,
}

/// What happened, on the machine's clock (the database's clock too: it runs here).
#[derive(Debug, Clone)]
pub struct Happened {
    pub fault: Fault,
    pub node: Option<String>,
    pub from: Timestamp,
    pub to: Timestamp,
}

pub fn plan(form: &Form, rng: &mut Rng, pause_s: f64) -> Vec<(f64, Fault)> {
    let span = form.span_s;
    let mut at = |lo: f64, hi: f64| lo + rng.unit() * (hi - lo);
    let mut events = Vec::new();
    for _ in 0..form.kills {
        events.push((at(2.0, span), Fault::Kill));
    }
    for _ in 0..form.pauses {
        let t = at(2.0, (span - pause_s).max(2.5));
        events.push((t, Fault::Pause));
        events.push((t + pause_s, Fault::Resume));
    }
    for _ in 0..form.pg_restarts {
        events.push((at(0.25 * span, 0.75 * span), Fault::PgRestart));
    }
    for _ in 0..form.drops {
        events.push((at(2.0, span), Fault::DropConnections));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    events
}

// ----- database helpers (retrying: the database itself is one of the faults) ----------------

pub async fn query(store: &Arc<dyn Store>, sql: &str) -> Vec<Vec<SqlValue>> {
    let start = Instant::now();
    loop {
        match store.sql_query(sql, &[]).await {
            Ok(rows) => return rows,
            Err(e) if start.elapsed() < Duration::from_secs(60) => {
                eprintln!("  (test query failed, retrying: {e})");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(e) => panic!("{sql}: {e}"),
        }
    }
}

pub async fn count(store: &Arc<dyn Store>, sql: &str) -> i64 {
    query(store, sql).await[0][0].as_i64().unwrap_or(-1)
}

pub fn ts(v: &SqlValue) -> Option<Timestamp> {
    match v {
        SqlValue::Timestamp(t) => Some(*t),
        SqlValue::Text(s) => s.parse().ok(),
        _ => None,
    }
}

pub fn text(v: &SqlValue) -> String {
    v.as_str().map(str::to_string).unwrap_or_default()
}

/// A job as enqueued: its due date (DB clock) and exclusive key.
#[derive(Debug, Clone)]
pub struct Expected {
    pub due: Option<Timestamp>,
    pub exclusive: Option<String>,
    pub timer: bool,
}

/// One `CHAOS_SIDE_EFFECT` row of a job: attempt, node, `AT_` (database clock), `NODE_NOW`.
pub type SideRun = (i64, String, Option<Timestamp>, Option<Timestamp>);

pub fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}
