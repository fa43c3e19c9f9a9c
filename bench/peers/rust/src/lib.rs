//! Shared by the Rust peers' drivers: the standard arguments, the clock, the steady pacer, the
//! lateness tracker of the steady/timers workloads and the one JSON line (see bench/README.md,
//! "The driver protocol" and "Workloads").
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub struct Args {
    pub workload: String,
    pub jobs: u64,
    pub concurrency: usize,
    pub url: String,
    /// Seconds from the workers' start; None (drain without --deadline) = unbounded.
    pub deadline: Option<f64>,
    /// steady: jobs per second.
    pub rate: f64,
    /// timers: the N timers are due over `spread` seconds, from `lead` seconds after their
    /// insertion starts, with `pending` further timers due a day ahead.
    pub spread: f64,
    pub lead: f64,
    pub pending: u64,
}

/// `--key value` or `--key=value`; a `--flag` followed by another `--option` (or nothing) is
/// a flag. Unknown keys and stray words are ignored (README: a new workload never breaks an old
/// driver).
pub fn args(default_concurrency: usize) -> Args {
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut m: HashMap<String, String> = HashMap::new();
    let mut k = 0;
    while k < v.len() {
        match v[k].strip_prefix("--") {
            Some(key) => {
                if let Some((key, val)) = key.split_once('=') {
                    m.insert(key.to_string(), val.to_string());
                    k += 1;
                } else if k + 1 < v.len() && !v[k + 1].starts_with("--") {
                    m.insert(key.to_string(), v[k + 1].clone());
                    k += 2;
                } else {
                    m.insert(key.to_string(), String::new());
                    k += 1;
                }
            }
            None => k += 1,
        }
    }
    let num = |key: &str, default: f64| m.get(key).and_then(|s| s.parse::<f64>().ok()).unwrap_or(default);
    let workload = m.get("workload").cloned().unwrap_or_else(|| "drain".into());
    let jobs = m.get("jobs").and_then(|s| s.parse().ok()).unwrap_or(100_000u64);
    let rate = num("rate", 1000.0).max(0.001);
    let (spread, lead) = (num("spread", 60.0), num("lead", 10.0));
    let default_deadline = match workload.as_str() {
        "steady" => Some(jobs as f64 / rate + 10.0),
        "timers" => Some(lead + spread + 10.0),
        _ => None,
    };
    Args {
        workload,
        jobs,
        concurrency: m.get("concurrency").and_then(|s| s.parse().ok()).filter(|c| *c > 0).unwrap_or(default_concurrency),
        url: m.get("url").cloned().expect("--url URL"),
        deadline: m.get("deadline").and_then(|s| s.parse::<f64>().ok()).filter(|d| *d > 0.0).or(default_deadline),
        rate,
        spread,
        lead,
        pending: m.get("pending").and_then(|s| s.parse().ok()).unwrap_or(1_000_000),
    }
}

impl Args {
    /// The instant the measured phase must stop, given the workers' start.
    pub fn deadline_at(&self, start: Instant) -> Option<Instant> {
        self.deadline.map(|d| start + Duration::from_secs_f64(d))
    }
}

/// Wall clock, epoch milliseconds (sub-millisecond part kept).
pub fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs_f64() * 1000.0
}

/// Wall-clock epoch ms of a monotonic instant (for the deadline).
pub fn instant_ms(at: Instant) -> f64 {
    let now = Instant::now();
    if at >= now {
        now_ms() + (at - now).as_secs_f64() * 1000.0
    } else {
        now_ms() - (now - at).as_secs_f64() * 1000.0
    }
}

/// Prints the result line; `result` is None for a workload this driver does not implement.
pub fn emit(peer: &str, version: &str, workload: &str, result: Option<serde_json::Value>) {
    let mut o = serde_json::json!({"peer": peer, "version": version, "workload": workload});
    match result {
        Some(serde_json::Value::Object(r)) => o.as_object_mut().unwrap().extend(r),
        _ => {
            o["error"] = "not yet implemented".into();
        }
    }
    println!("{o}");
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The drain result: `completed` of `jobs` in `secs` (partial when the deadline stopped it).
pub fn measured(jobs: u64, completed: u64, secs: f64, settings: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "jobs": jobs, "completed": completed, "partial": completed < jobs, "seconds": r3(secs),
        "jobs_per_s": (completed as f64 / secs * 10.0).round() / 10.0, "settings": settings,
    })
}

/// Polls `sql` (a single count) until it equals `target` or `deadline` passes; returns the last
/// count read.
pub async fn wait_count(pool: &sqlx::PgPool, sql: &str, target: i64, deadline: Option<Instant>) -> i64 {
    loop {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(pool).await.expect("count");
        if n == target || deadline.is_some_and(|d| Instant::now() >= d) {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Sleeps in 2 ms steps until `done()` or the deadline; true when `done()`.
pub async fn wait_until(done: impl Fn() -> bool, deadline: Option<Instant>) -> bool {
    loop {
        if done() {
            return true;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// steady / timers
// ---------------------------------------------------------------------------------------------

/// What a steady/timers job carries: its index among the N and its due instant (epoch ms).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Timer {
    pub i: u64,
    pub due_ms: i64,
}

/// Due instants of the steady workload: job i at `t0 + i/R` (whole ms).
pub fn steady_dues(n: u64, rate: f64, t0_ms: i64) -> Vec<i64> {
    (0..n).map(|i| t0_ms + (i as f64 * 1000.0 / rate).floor() as i64).collect()
}

/// Due instants of the timers workload: timer i at `T0 + i·spread/N` (whole ms).
pub fn timer_dues(n: u64, spread_s: f64, t0_ms: i64) -> Vec<i64> {
    (0..n).map(|i| t0_ms + (i as f64 * spread_s * 1000.0 / n as f64).floor() as i64).collect()
}

/// A pending timer: due a day ahead, `now + 24 h + j ms`.
pub const DAY_MS: i64 = 86_400_000;

/// The steady enqueuer's clock: every 10 ms, the range of jobs whose due time has come.
pub struct Pacer {
    dues: Vec<i64>,
    sent: usize,
    deadline: Option<Instant>,
    tick: tokio::time::Interval,
}

impl Pacer {
    pub fn new(dues: Vec<i64>, deadline: Option<Instant>) -> Self {
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        Pacer { dues, sent: 0, deadline, tick }
    }

    /// At the next 10 ms tick (at once the first time, or when a batch call overran a tick)
    /// with a job due, the batch of all jobs due by then (indices); None once all were handed
    /// out or the deadline passed.
    pub async fn next(&mut self) -> Option<std::ops::Range<u64>> {
        loop {
            if self.sent >= self.dues.len() || self.deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            self.tick.tick().await;
            let now = now_ms();
            let from = self.sent;
            while self.sent < self.dues.len() && (self.dues[self.sent] as f64) <= now {
                self.sent += 1;
            }
            if self.sent > from {
                return Some(from as u64..self.sent as u64);
            }
        }
    }

    pub fn due(&self, i: u64) -> i64 {
        self.dues[i as usize]
    }
}

const UNSET: u64 = u64::MAX;
static TRACKER: OnceLock<Tracker> = OnceLock::new();
/// Handler starts of pending timers (due more than an hour ahead): must stay 0.
static PENDING_RAN: AtomicU64 = AtomicU64::new(0);
/// Handler starts of a job before its tracker existed or outside the N: must stay 0.
static STRAY: AtomicU64 = AtomicU64::new(0);

/// Lateness of the N tracked jobs, recorded by the handlers.
pub struct Tracker {
    dues: Vec<i64>,
    late: Vec<AtomicU64>, // f64 bits of start − due (ms); UNSET until the first start
    dup: AtomicU64,
    done: AtomicU64,
    last_done_ms: AtomicU64, // f64 bits (positive, so u64 order = f64 order)
}

/// Installs the tracker of the N jobs (their due instants) before any of them is enqueued.
pub fn track(dues: Vec<i64>) {
    let late = (0..dues.len()).map(|_| AtomicU64::new(UNSET)).collect();
    let t = Tracker { dues, late, dup: AtomicU64::new(0), done: AtomicU64::new(0), last_done_ms: AtomicU64::new(0) };
    if TRACKER.set(t).is_err() {
        panic!("tracker installed twice");
    }
}

/// Called first thing in a handler. A pending timer (due > 1 h ahead) is counted, never
/// tracked: the driver fails if any ran.
pub fn job_started(i: u64, due_ms: i64) {
    let start = now_ms();
    if due_ms as f64 - start > 3_600_000.0 {
        PENDING_RAN.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let Some(t) = TRACKER.get() else {
        STRAY.fetch_add(1, Ordering::Relaxed);
        return;
    };
    match t.late.get(i as usize) {
        Some(slot) if t.dues[i as usize] == due_ms => {
            let v = (start - due_ms as f64).to_bits();
            if slot.compare_exchange(UNSET, v, Ordering::Relaxed, Ordering::Relaxed).is_err() {
                t.dup.fetch_add(1, Ordering::Relaxed);
            }
        }
        _ => {
            STRAY.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Called when a handler has finished its job.
pub fn job_done() {
    if let Some(t) = TRACKER.get() {
        t.done.fetch_add(1, Ordering::Relaxed);
        t.last_done_ms.fetch_max(now_ms().to_bits(), Ordering::Relaxed);
    }
}

/// Logs to stderr once a second what the tracker saw (for a human watching a run).
pub fn spawn_progress(label: &'static str) {
    tokio::spawn(async move {
        let t = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Some(tr) = TRACKER.get() {
                let started = tr.late.iter().filter(|s| s.load(Ordering::Relaxed) != UNSET).count();
                eprintln!("{label} {:>5.1}s started {started} done {}", t.elapsed().as_secs_f64(), tr.done.load(Ordering::Relaxed));
            }
        }
    });
}

/// Jobs whose handler finished (duplicates included).
pub fn done_count() -> u64 {
    TRACKER.get().map_or(0, |t| t.done.load(Ordering::Relaxed))
}

pub fn pending_ran() -> u64 {
    PENDING_RAN.load(Ordering::Relaxed)
}

/// Fails the driver (non-zero exit, message on stderr) if a pending timer or a stray job ran.
pub fn assert_no_pending_ran() {
    let (p, s) = (pending_ran(), STRAY.load(Ordering::Relaxed));
    if p > 0 || s > 0 {
        eprintln!("FAILED: {p} pending timer(s) (due a day ahead) ran, {s} unexpected job start(s)");
        std::process::exit(1);
    }
}

pub const HIST_UPPERS: [u64; 15] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

/// The steady/timers result. `t0_ms` is the first due instant (steady's t0, timers' T0),
/// `deadline_ms` the wall-clock deadline: jobs not started by it count with `deadline − due`.
/// jobs/s = completed ÷ (last completion − t0), or completed ÷ (deadline − t0) when partial.
pub fn lateness_result(t0_ms: f64, deadline_ms: f64, settings: serde_json::Value) -> serde_json::Value {
    let t = TRACKER.get().expect("tracker");
    let n = t.dues.len() as u64;
    let mut started = 0u64;
    let mut late: Vec<f64> = t
        .late
        .iter()
        .zip(&t.dues)
        .map(|(slot, due)| match slot.load(Ordering::Relaxed) {
            UNSET => (deadline_ms - *due as f64).max(0.0),
            bits => {
                started += 1;
                f64::from_bits(bits)
            }
        })
        .collect();
    late.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| -> Option<f64> {
        if late.is_empty() {
            return None;
        }
        let k = ((p / 100.0 * late.len() as f64).ceil() as usize).clamp(1, late.len()) - 1;
        Some(r3(late[k]))
    };
    let mut hist: Vec<serde_json::Value> = Vec::new();
    let mut k = 0;
    for up in HIST_UPPERS {
        let from = k;
        while k < late.len() && late[k] <= up as f64 {
            k += 1;
        }
        hist.push(serde_json::json!([up, k - from]));
    }
    hist.push(serde_json::json!([null, late.len() - k]));
    let done = t.done.load(Ordering::Relaxed).min(n);
    let partial = done < n || started < n;
    let end = if partial { deadline_ms } else { f64::from_bits(t.last_done_ms.load(Ordering::Relaxed)) };
    let secs = ((end - t0_ms) / 1000.0).max(1e-3);
    serde_json::json!({
        "jobs": n, "completed": done, "partial": partial, "started": started,
        "seconds": r3(secs), "jobs_per_s": (done as f64 / secs * 10.0).round() / 10.0,
        "lateness_p50_ms": pct(50.0), "lateness_p99_ms": pct(99.0), "lateness_max_ms": late.last().map(|x| r3(*x)),
        "lateness_hist": hist, "early": late.iter().filter(|x| **x < 0.0).count(),
        "duplicates": t.dup.load(Ordering::Relaxed), "settings": settings,
    })
}

/// Merges `extra` (an object) into `v` (an object).
/// The timers workload's side figures, the same for every driver: how long the pending rows and
/// the N timers took to insert, and how many pending rows are left (must be all of them).
pub fn timers_side_figures(pending_s: f64, enqueue_s: f64, jobs: u64, pending_left: i64) -> serde_json::Value {
    serde_json::json!({"pending_insert_s": (pending_s * 1000.0).round() / 1000.0,
        "enqueue_s": (enqueue_s * 1000.0).round() / 1000.0, "enqueue_per_s": (jobs as f64 / enqueue_s).round(),
        "pending_left": pending_left})
}

pub fn with(mut v: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    if let (Some(o), serde_json::Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    v
}

/// Compares two rows of `table` (by `key` = a / b) on every column but `skip`; panics with
/// both rows when they differ. Used to check that a bulk SQL insert writes what the API does.
pub async fn same_row(pool: &sqlx::PgPool, table: &str, key: &str, a: &str, b: &str, skip: &[&str]) {
    let sql = format!(
        "SELECT (SELECT to_jsonb(t) - $3::text[] FROM {table} t WHERE {key}::text = $1), \
                (SELECT to_jsonb(t) - $3::text[] FROM {table} t WHERE {key}::text = $2)"
    );
    let skip: Vec<String> = skip.iter().map(|s| s.to_string()).collect();
    let (x, y): (Option<serde_json::Value>, Option<serde_json::Value>) =
        sqlx::query_as(&sql).bind(a).bind(b).bind(&skip).fetch_one(pool).await.expect("compare rows");
    if x.is_none() || x != y {
        panic!("bulk SQL row differs from the API's row in {table}:\n  api: {x:?}\n  sql: {y:?}");
    }
}

/// A transaction for a bulk insert of pending rows with the tables' triggers off while it runs
/// (`SET LOCAL session_replication_role = replica`, what pg_restore --disable-triggers does;
/// superuser only, which the benchmark's role is): row triggers that do nothing for the rows
/// inserted (a NOTIFY sent only for a row due now, a foreign-key check of a column left NULL)
/// then cost nothing. The caller states why its peer's triggers change nothing for its rows, and
/// checks a row of this path against one the peer's API wrote (`same_row`). The flag says
/// whether the triggers are off (false: not a superuser, the insert runs with them).
pub async fn triggers_off_tx(pool: &sqlx::PgPool) -> (sqlx::Transaction<'static, sqlx::Postgres>, bool) {
    let superuser: bool = sqlx::query_scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        .fetch_one(pool)
        .await
        .expect("rolsuper");
    let mut tx = pool.begin().await.expect("begin");
    if superuser {
        sqlx::query("SET LOCAL session_replication_role = replica").execute(&mut *tx).await.expect("triggers off");
    }
    (tx, superuser)
}
