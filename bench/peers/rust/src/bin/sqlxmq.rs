//! sqlxmq (crates.io 0.6.0) on the drain, steady and timers workloads.
//! Settings (the crate's README: JobRunnerOptions::set_concurrency(min, max); the runner fetches
//! more jobs when fewer than `min` run, up to `max`): concurrency min C/2, max C (C = 32), keep
//! alive on, each job completes itself (current_job.complete()), pool of C + 4 connections.
//! Schema: the crate's own migrations/*.up.sql, applied in order from the crate's source as cargo
//! unpacked it (~/.cargo/registry/src/*/sqlxmq-0.6.0/migrations).
//! Enqueue: the crate's mq_insert(mq_new_t[]) SQL function, the batch form of what
//! JobBuilder::spawn calls with one row, with JobBuilder's defaults (retries 4, backoff 1 s,
//! channel '', not ordered); the steady/timers rows are checked against one spawned through
//! JobBuilder (set_json, set_delay).
//! drain: N jobs pre-enqueued in chunks of 10,000.
//! steady: every 10 ms, the jobs whose due time has come in one mq_insert (delay 0).
//! timers: the pending timers by one INSERT … SELECT generate_series into mq_payloads and
//! mq_msgs writing what mq_insert writes (checked against rows spawned through JobBuilder), with
//! time-ordered ids; the N timers by mq_insert of 10,000 rows per call. sqlxmq schedules by delay (attempt_at = now() + delay): each row's delay
//! is `due − now()` computed in the same statement, so attempt_at is exactly the due instant.
//! The runner sleeps until the earliest attempt_at (mq_poll's wait_time) or a NOTIFY.
use kairos_bench_rust_peers::{self as kb, args, emit, measured, wait_count, wait_until, Timer};
use sqlxmq::{job, CurrentJob, JobRegistry, JobRunnerHandle};
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static CALLS: AtomicU64 = AtomicU64::new(0);
const CHUNK: usize = 10_000;

#[job]
async fn noop(mut current_job: CurrentJob) -> Result<(), Box<dyn Error + Send + Sync + 'static>> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    current_job.complete().await?;
    Ok(())
}

#[job]
async fn tick(mut current_job: CurrentJob) -> Result<(), Box<dyn Error + Send + Sync + 'static>> {
    let t: Timer = current_job.json()?.ok_or("no payload")?;
    kb::job_started(t.i, t.due_ms);
    current_job.complete().await?;
    kb::job_done();
    Ok(())
}

fn migrations() -> Vec<std::path::PathBuf> {
    let home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let src = std::path::Path::new(&home).join("registry").join("src");
    for reg in std::fs::read_dir(&src).expect("cargo registry src") {
        let dir = reg.expect("entry").path().join("sqlxmq-0.6.0").join("migrations");
        if dir.is_dir() {
            let mut ups: Vec<_> = std::fs::read_dir(&dir)
                .expect("migrations")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.to_string_lossy().ends_with(".up.sql"))
                .collect();
            ups.sort();
            return ups;
        }
    }
    panic!("sqlxmq-0.6.0/migrations not found under {}", src.display());
}

async fn setup(a: &kb::Args) -> sqlx::PgPool {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(a.concurrency as u32 + 4)
        .connect(&a.url)
        .await
        .expect("connect");
    for m in migrations() {
        let sql = std::fs::read_to_string(&m).expect("read migration");
        sqlx::raw_sql(&sql).execute(&pool).await.unwrap_or_else(|e| panic!("{}: {e}", m.display()));
    }
    pool
}

async fn runner(a: &kb::Args, pool: &sqlx::PgPool) -> JobRunnerHandle {
    JobRegistry::new(&[noop, tick])
        .runner(pool)
        .set_concurrency((a.concurrency / 2).max(1), a.concurrency)
        .set_keep_alive(true)
        .run()
        .await
        .expect("runner")
}

fn settings(a: &kb::Args) -> serde_json::Value {
    serde_json::json!({"min_concurrency": (a.concurrency / 2).max(1), "max_concurrency": a.concurrency,
        "keep_alive": true, "pool_max": a.concurrency + 4, "deadline_s": a.deadline})
}

async fn drain(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    let name = noop.name();
    let te = Instant::now();
    let mut i = 0;
    while i < a.jobs {
        let n = (a.jobs - i).min(CHUNK as u64) as i32;
        sqlx::query(
            "SELECT mq_insert(ARRAY(SELECT ROW(gen_random_uuid(), interval '0', 4, interval '1 second', '', '', \
             NULL::interval, false, $2::text, NULL::text, NULL::bytea)::mq_new_t FROM generate_series(1, $1)))",
        )
        .bind(n)
        .bind(name)
        .execute(&pool)
        .await
        .expect("mq_insert");
        i += n as u64;
    }
    let enqueue_per_s = (a.jobs as f64 / te.elapsed().as_secs_f64()).round();
    let t = Instant::now();
    let deadline = a.deadline_at(t);
    let runner = runner(a, &pool).await;
    wait_until(|| CALLS.load(Ordering::Relaxed) >= a.jobs, deadline).await;
    // Completed jobs are deleted; the nil-id row is sqlxmq's own sentinel.
    let left =
        wait_count(&pool, "SELECT count(*) FROM mq_msgs WHERE id <> '00000000-0000-0000-0000-000000000000'", 0, deadline).await;
    let secs = t.elapsed().as_secs_f64();
    drop(runner);
    kb::with(measured(a.jobs, a.jobs - left as u64, secs, settings(a)), serde_json::json!({"enqueue_per_s": enqueue_per_s}))
}

/// mq_insert of Timer payloads ($2 JSON texts) due at $3 (epoch ms; NULL = no delay), with
/// JobBuilder's defaults; the delay is `due − now()`, now() being the one mq_insert uses.
const INSERT_SQL: &str = "SELECT mq_insert(ARRAY(SELECT ROW(gen_random_uuid(), \
     COALESCE(GREATEST(timestamptz 'epoch' + d * interval '1 millisecond' - now(), interval '0'), interval '0'), \
     4, interval '1 second', '', '', NULL::interval, false, $1::text, p, NULL::bytea)::mq_new_t \
     FROM unnest($2::text[], $3::bigint[]) AS u(p, d)))";

async fn insert(pool: &sqlx::PgPool, timers: &[Timer], delayed: bool) {
    let payloads: Vec<String> = timers.iter().map(|t| serde_json::to_string(t).expect("json")).collect();
    let dues: Vec<Option<i64>> = timers.iter().map(|t| delayed.then_some(t.due_ms)).collect();
    sqlx::query(INSERT_SQL).bind(tick.name()).bind(&payloads).bind(&dues).execute(pool).await.expect("mq_insert");
}

/// Checks that INSERT_SQL writes the rows JobBuilder::spawn writes (but id and times), then
/// deletes both.
async fn check_insert_path(pool: &sqlx::PgPool) {
    let t = Timer { i: 0, due_ms: kb::now_ms() as i64 + kb::DAY_MS };
    let api = tick.builder().set_json(&t).expect("json").set_delay(Duration::from_secs(86_400)).spawn(pool).await.expect("spawn");
    insert(pool, &[t], true).await;
    let api = api.to_string();
    let sql: String = sqlx::query_scalar("SELECT id::text FROM mq_msgs WHERE id::text <> $1 AND id <> uuid_nil()")
        .bind(&api).fetch_one(pool).await.expect("probe");
    kb::same_row(pool, "mq_msgs", "id", &api, &sql, &["id", "created_at", "attempt_at"]).await;
    kb::same_row(pool, "mq_payloads", "id", &api, &sql, &["id"]).await;
    sqlx::query("SELECT mq_delete(ARRAY[$1, $2]::uuid[])").bind(&api).bind(&sql).execute(pool).await.expect("delete probes");
}

async fn steady(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    check_insert_path(&pool).await;
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _runner = runner(a, &pool).await;
    let t0 = kb::now_ms().ceil() as i64;
    let dues = kb::steady_dues(a.jobs, a.rate, t0);
    kb::track(dues.clone());
    kb::spawn_progress("steady");
    let mut pacer = kb::Pacer::new(dues, deadline);
    while let Some(r) = pacer.next().await {
        let batch: Vec<Timer> = r.map(|i| Timer { i, due_ms: pacer.due(i) }).collect();
        insert(&pool, &batch, false).await;
    }
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    kb::assert_no_pending_ran();
    kb::lateness_result(t0 as f64, kb::instant_ms(deadline.expect("deadline")), kb::with(settings(a), serde_json::json!({
        "rate": a.rate, "enqueue": "mq_insert per 10 ms tick, delay 0"})))
}

/// The pending timers j in [$3, $4] (due `$1 + j` ms, task name $2), written by one statement
/// straight into the two tables with what mq_insert (the crate's SQL function behind
/// JobBuilder::spawn) writes for an unordered message with JobBuilder's defaults: the payload row
/// (name, payload_json::jsonb, no bytes) and the message row with attempts = retries 4 + 1,
/// retry_backoff 1 s, channel '' / args '', no commit interval, after_message_id NULL, and
/// attempt_at by mq_insert's own expression now() + delay + '0', delay = due − now().
/// mq_insert built an array of 100,000 composite values per call and unnested it twice:
/// without it the 1,000,000 rows took 15-20 % less time here (side by side, 3 times). mq_insert
/// also NOTIFYs 'mq' and 'mq_' || channel; nobody listens yet (the runner starts after).
/// Their ids are time-ordered UUIDv7s (48-bit ms time, then the counter j), which an
/// application may give (JobBuilder::new_with_id): random v4 ids, spawn's default, make the
/// same insert about twice as slow here (every row lands on a random page of both primary keys).
const PENDING_SQL: &str = r#"
    WITH t AS (SELECT lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') AS h),
    p AS (INSERT INTO mq_payloads (id, name, payload_json, payload_bytes)
          SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(j), 12, '0'))::uuid, $2::text,
                 format('{"i":%s,"due_ms":%s}', j, $1::bigint + j)::jsonb, NULL::bytea
          FROM generate_series($3::bigint, $4::bigint) j, t)
    INSERT INTO mq_msgs (id, attempt_at, attempts, retry_backoff, channel_name, channel_args, commit_interval, after_message_id)
    SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(j), 12, '0'))::uuid,
           now() + (timestamptz 'epoch' + ($1::bigint + j) * interval '1 millisecond' - now()) + COALESCE(NULL::interval, interval '0'),
           4 + 1, interval '1 second', '', '', NULL::interval, NULL::uuid
    FROM generate_series($3::bigint, $4::bigint) j, t"#;

async fn insert_pending_rows(pool: &sqlx::PgPool, base: i64, from: u64, to: u64) {
    sqlx::query(PENDING_SQL).bind(base).bind(tick.name()).bind(from as i64).bind(to as i64)
        .execute(pool).await.expect("pending insert");
}

/// The P pending timers (due `now + 24 h + j ms`) by PENDING_SQL, after checking on timer 0 that
/// it writes the rows JobBuilder::spawn writes with a one-day delay (but id, created_at and
/// attempt_at, which spawn can only give as "now + 86,400 s"); the probes are then deleted.
async fn insert_pending(a: &kb::Args, pool: &sqlx::PgPool) -> f64 {
    let base = kb::now_ms() as i64 + kb::DAY_MS;
    let probe = Timer { i: 0, due_ms: base };
    let api = tick.builder().set_json(&probe).expect("json").set_delay(Duration::from_secs(86_400)).spawn(pool).await.expect("spawn");
    insert_pending_rows(pool, base, 0, 0).await;
    let api = api.to_string();
    let sql: String = sqlx::query_scalar("SELECT id::text FROM mq_msgs WHERE id::text <> $1 AND id <> uuid_nil()")
        .bind(&api).fetch_one(pool).await.expect("probe");
    kb::same_row(pool, "mq_msgs", "id", &api, &sql, &["id", "created_at", "attempt_at"]).await;
    kb::same_row(pool, "mq_payloads", "id", &api, &sql, &["id"]).await;
    let due: bool = sqlx::query_scalar("SELECT attempt_at = timestamptz 'epoch' + $2::bigint * interval '1 millisecond' FROM mq_msgs WHERE id::text = $1")
        .bind(&sql).bind(base).fetch_one(pool).await.expect("probe attempt_at");
    assert!(due, "the SQL probe's attempt_at is not its due instant");
    sqlx::query("SELECT mq_delete(ARRAY[$1, $2]::uuid[])").bind(&api).bind(&sql).execute(pool).await.expect("delete probes");
    let t = Instant::now();
    if a.pending > 0 {
        insert_pending_rows(pool, base, 0, a.pending - 1).await;
    }
    t.elapsed().as_secs_f64()
}

async fn timers(a: &kb::Args) -> serde_json::Value {
    let pool = setup(a).await;
    check_insert_path(&pool).await;
    let pending_s = insert_pending(a, &pool).await;
    let start = Instant::now();
    let deadline = a.deadline_at(start);
    let _runner = runner(a, &pool).await;
    let ti = kb::now_ms();
    let t0 = (ti + a.lead * 1000.0).ceil() as i64;
    let dues = kb::timer_dues(a.jobs, a.spread, t0);
    kb::track(dues.clone());
    kb::spawn_progress("timers");
    let all: Vec<Timer> = dues.iter().enumerate().map(|(i, d)| Timer { i: i as u64, due_ms: *d }).collect();
    for chunk in all.chunks(CHUNK) {
        insert(&pool, chunk, true).await;
    }
    let enqueue_s = (kb::now_ms() - ti) / 1000.0;
    wait_until(|| kb::done_count() >= a.jobs, deadline).await;
    let deadline_ms = kb::instant_ms(deadline.expect("deadline"));
    kb::assert_no_pending_ran();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM mq_msgs WHERE attempt_at > now() + interval '1 hour'")
        .fetch_one(&pool).await.expect("pending left");
    assert_eq!(left as u64, a.pending, "pending timers missing");
    kb::with(
        kb::lateness_result(t0 as f64, deadline_ms, kb::with(settings(a), serde_json::json!({
            "spread_s": a.spread, "lead_s": a.lead, "pending": a.pending,
            "pending_path": "one INSERT … SELECT generate_series into mq_payloads + mq_msgs writing what mq_insert \
                (the crate's batch SQL function) writes for an unordered message (checked against spawn's rows), \
                time-ordered UUIDv7 ids (spawn draws random v4)",
            "enqueue": "mq_insert, 10,000 rows per call, delay = due − now() of the inserting statement (sqlxmq has delays, not instants)"}))),
        kb::timers_side_figures(pending_s, enqueue_s, a.jobs, left),
    )
}

#[tokio::main]
async fn main() {
    let a = args(32);
    let r = match a.workload.as_str() {
        "drain" => Some(drain(&a).await),
        "steady" => Some(steady(&a).await),
        "timers" => Some(timers(&a).await),
        _ => None,
    };
    emit("sqlxmq", "0.6.0", &a.workload, r);
    std::process::exit(0);
}
