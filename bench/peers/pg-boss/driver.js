// pg-boss (npm 10.x: 11+ needs Node >= 22) on the drain, steady and timers workloads.
//   node driver.js --workload W --jobs N --concurrency W --url URL --deadline S
//                  [--rate R] [--spread S --lead L --pending P]     (other arguments are ignored)
// Settings (pg-boss README/docs, "work()": batchSize fetches many jobs per poll and the handler
// receives them as an array, completed together): W workers (4) each boss.work() with
// batchSize 100 and pollingIntervalSeconds 0.5 (the minimum v10 accepts); pool max 10 (the
// default). v10 has no notify-on-insert: a worker sleeps (interval − time of its last fetch and
// handler) between fetches whether or not it found jobs, so this peer is poll-bound by design:
//   - throughput is capped at W × batchSize per interval = 4 × 100 / 0.5 s = 800 jobs/s;
//   - lateness (due → handler start) is ~U(0, 0.5 s) while it keeps up (the W workers start
//     together and poll in step), and grows without bound once the due rate exceeds 800/s
//     (steady at 1,000/s, timers at 100,000 / 60 s = 1,667/s), where the deadline cuts it off.
// Queues are created with the default 'standard' policy. Completed jobs stay in pgboss.job
// (state 'completed') until maintenance archives them, as in production.
//
// drain:  N jobs pre-enqueued with boss.insert([{name "noop", data {}}]) in chunks of 10,000;
//         done when N rows of queue "noop" are 'completed'.
// steady: workers first; then every 10 ms one boss.insert([{name "job", data {i, due_ms}}, ...])
//         of the jobs due (no startAfter: due now).
// timers: P pending timers (queue "job", data {due_ms, pending: true}, startAfter
//         now + 24 h + i ms): timer 0 through boss.insert with startAfter, timers 1..P-1 by
//         INSERT … SELECT generate_series into pgboss.job (2 slices on 2 connections at once)
//         written with boss.insert's own expressions (checked against timer 0, column by
//         column); then ANALYZE (as autovacuum would); then the workers; then the N
//         through boss.insert([{name "job", data {i, due_ms}, startAfter: Date}, ...]) in due
//         order, 1,000 per call.
// steady/timers are done when N rows of queue "job" are 'completed' (the pending stay 'created').
"use strict";
const {
  args, params, version, emit, Record, measure, steadyEnqueue, timersEnqueue, sliced, scheduleResult, Pool,
} = require("../node/common.js");
const PgBoss = require("../node/node_modules/pg-boss");

const NAME = "pg-boss";
const BATCH = 100;
const POLL_S = 0.5;
const POOL_MAX = 10;
const TIMER_CHUNK = 1000;
const PENDING_WAYS = 2; // the pending INSERT … SELECT in 2 slices on 2 connections at once
const DAY_MS = 24 * 3600 * 1000;

function settings(workers) {
  return { workers, batchSize: BATCH, pollingIntervalSeconds: POLL_S, pool_max: POOL_MAX, queue_policy: "standard" };
}

async function setup(a, queue) {
  const workers = a.concurrency || 4;
  const boss = new PgBoss({ connectionString: a.url, max: POOL_MAX, supervise: true, schedule: false });
  boss.on("error", (e) => console.error("pg-boss error", e));
  await boss.start();
  await boss.createQueue(queue);
  const pool = new Pool({ connectionString: a.url, max: 2 }); // the driver's own: counting, the pending insert
  pool.on("error", (e) => console.error("pool error", e));
  return { workers, boss, pool };
}

async function startWorkers(boss, queue, workers, handler) {
  for (let w = 0; w < workers; w++) await boss.work(queue, { batchSize: BATCH, pollingIntervalSeconds: POLL_S }, handler);
}

async function teardown({ boss, pool }) {
  await boss.stop({ graceful: false, wait: true, timeout: 5000 });
  await pool.end();
}

const countSql = (queue, extra = "") => `SELECT count(*) AS n FROM pgboss.job WHERE name = '${queue}' AND state = 'completed'${extra}`;

async function drain(a) {
  const p = params(a);
  const { workers, boss, pool } = await setup(a, "noop");
  for (let i = 0; i < a.jobs; i += 10000) {
    const n = Math.min(10000, a.jobs - i);
    await boss.insert(Array.from({ length: n }, () => ({ name: "noop", data: {} })));
  }
  let calls = 0;
  const t0 = Date.now();
  const deadlineAt = t0 + p.deadline * 1000;
  await startWorkers(boss, "noop", workers, async (jobs) => { calls += jobs.length; });
  const m = await measure({
    n: a.jobs, deadlineAt, done: () => calls, bad: () => null,
    committed: async () => Number((await pool.query(countSql("noop"))).rows[0].n),
  });
  const secs = (m.endAt - t0) / 1000;
  await teardown({ boss, pool });
  return {
    jobs: a.jobs, completed: m.completed, partial: m.partial, seconds: +secs.toFixed(3), jobs_per_s: +(m.completed / secs).toFixed(1),
    settings: { ...settings(workers), deadline_s: p.deadline },
  };
}

// The handler of steady and timers: record each job's start against its due time. A batch
// handler: all jobs of a fetch start at the handler's call.
function timedHandler(rec) {
  return async (jobs) => {
    for (const job of jobs) if (rec.begin(job.data)) rec.end();
  };
}

async function steady(a) {
  const p = params(a);
  const { workers, boss, pool } = await setup(a, "job");
  const rec = new Record(p.jobs);
  const w0 = Date.now();
  const deadlineAt = w0 + p.deadline * 1000;
  await startWorkers(boss, "job", workers, timedHandler(rec));
  const t0 = Date.now();
  const enq = steadyEnqueue({
    rec, rate: p.rate, t0, stopAt: deadlineAt,
    enqueue: (batch) => boss.insert(batch.map((j) => ({ name: "job", data: j }))),
  });
  enq.catch((e) => { rec.bad = rec.bad || `enqueue failed: ${e.stack}`; });
  const m = await measure({
    n: p.jobs, deadlineAt, done: () => rec.done, bad: () => rec.bad,
    committed: async () => Number((await pool.query(countSql("job"))).rows[0].n),
  });
  const enqueued = await enq;
  await teardown({ boss, pool });
  return {
    ...scheduleResult({ rec, m, from: t0, deadlineAt }), enqueued,
    settings: { ...settings(workers), rate: p.rate, deadline_s: p.deadline, enqueue: "boss.insert every 10 ms" },
  };
}

// The SQL statement for pending timers $2..$3 (1..P-1 in PENDING_WAYS slices): boss.insert's
// INSERT (plans.js insertJobs) with the job list replaced by generate_series and the
// constructor's defaults it reads (expireIn, keepUntil, retryLimit, retryDelay, retryBackoff) as
// this driver leaves them: unset (NULL), so the queue's settings or the built-in values apply.
const PENDING_SQL = `
INSERT INTO pgboss.job (id, name, data, priority, start_after, singleton_key, singleton_on, dead_letter,
                        expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
SELECT gen_random_uuid(), j.name, j.data, 0, j.start_after, NULL, NULL, q.dead_letter,
       CASE WHEN q.expire_seconds IS NOT NULL THEN q.expire_seconds * interval '1s' ELSE interval '15 minutes' END,
       j.start_after + CAST(COALESCE((q.retention_minutes * 60)::text, '14 days') AS interval),
       COALESCE(q.retry_limit, 2),
       CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(q.retry_delay, 1) ELSE COALESCE(q.retry_delay, 0) END,
       COALESCE(q.retry_backoff, false),
       q.policy
FROM (SELECT 'job'::text AS name,
             jsonb_build_object('due_ms', $1::bigint + g, 'pending', true) AS data,
             'epoch'::timestamptz + ($1::bigint + g) * interval '1 millisecond' AS start_after
      FROM generate_series($2::int, $3::int) AS g) j
JOIN pgboss.queue q ON j.name = q.name`;

async function insertPending(boss, pool, P) {
  const base = Date.now() + DAY_MS;
  const t = Date.now();
  await boss.insert([{ name: "job", data: { due_ms: base, pending: true }, startAfter: new Date(base) }]);
  await sliced(pool, PENDING_SQL, base, 1, P - 1, PENDING_WAYS);
  // The API's row (timer 0) and the SQL's timer 1 must agree on every column but the id, the
  // insertion timestamp and their own due time (data, start_after, keep_until = start_after +
  // the same retention); timer 0's due time must be what the SQL would have written for g = 0.
  const { rows } = await pool.query(`
    SELECT to_jsonb(j) - '{id,created_on,data,start_after,keep_until}'::text[] AS cols, data,
           (extract(epoch FROM start_after) * 1000)::bigint AS start_ms, keep_until - start_after AS keep
    FROM pgboss.job j WHERE name = 'job' AND (data->>'due_ms')::bigint IN ($1, $2) ORDER BY (data->>'due_ms')::bigint`,
  [base, base + 1]);
  const [api, sql] = rows;
  const same = (r, due) => r && JSON.stringify(r.data) === JSON.stringify({ due_ms: due, pending: true }) && Number(r.start_ms) === due;
  if (!same(api, base)) throw new Error(`pending check: API row ${JSON.stringify(api)}`);
  if (P > 1 && !(same(sql, base + 1) && JSON.stringify(api.cols) === JSON.stringify(sql.cols) && JSON.stringify(api.keep) === JSON.stringify(sql.keep)))
    throw new Error(`pending check: API row ${JSON.stringify(api)} differs from SQL row ${JSON.stringify(sql)}`);
  const n = Number((await pool.query("SELECT count(*) AS n FROM pgboss.job WHERE name = 'job'")).rows[0].n);
  if (n !== P) throw new Error(`pending insert wrote ${n} rows, wanted ${P}`);
  return { base, secs: (Date.now() - t) / 1000 };
}

async function timers(a) {
  const p = params(a);
  const { workers, boss, pool } = await setup(a, "job");
  const pend = await insertPending(boss, pool, p.pending);
  console.error(`pg-boss: ${p.pending} pending timers in ${pend.secs.toFixed(1)} s`);
  await pool.query("ANALYZE pgboss.job"); // what autovacuum does after a bulk insert
  const rec = new Record(p.jobs);
  const w0 = Date.now();
  const deadlineAt = w0 + p.deadline * 1000;
  await startWorkers(boss, "job", workers, timedHandler(rec));
  const ins = timersEnqueue({
    rec, spread: p.spread, lead: p.lead, chunk: TIMER_CHUNK,
    enqueue: (batch) => boss.insert(batch.map((j) => ({ name: "job", data: j, startAfter: new Date(j.due_ms) }))),
  });
  ins.catch((e) => { rec.bad = rec.bad || `enqueue failed: ${e.stack}`; });
  const m = await measure({
    n: p.jobs, deadlineAt, done: () => rec.done, bad: () => rec.bad,
    committed: async () => Number((await pool.query(countSql("job"))).rows[0].n),
  });
  const { T0, insert_s } = await ins;
  const pendingLeft = Number((await pool.query(
    `SELECT count(*) AS n FROM pgboss.job WHERE name = 'job' AND state = 'created' AND start_after >= 'epoch'::timestamptz + ${pend.base} * interval '1 millisecond'`)).rows[0].n);
  await teardown({ boss, pool });
  if (rec.pendingSeen || pendingLeft !== p.pending) throw new Error(`pending timers touched: ${rec.pendingSeen} ran, ${pendingLeft} of ${p.pending} left`);
  return {
    ...scheduleResult({ rec, m, from: T0, deadlineAt }),
    settings: {
      ...settings(workers), spread_s: p.spread, lead_s: p.lead, pending: p.pending, deadline_s: p.deadline,
      pending_insert: `1 row by boss.insert + INSERT … SELECT generate_series into pgboss.job (boss.insert's expressions) in ${PENDING_WAYS} slices on ${PENDING_WAYS} connections at once (columns checked equal)`,
      pending_insert_s: +pend.secs.toFixed(2), timers_insert: `boss.insert with startAfter, ${TIMER_CHUNK} per call`, timers_insert_s: +insert_s.toFixed(2),
    },
  };
}

const WORKLOADS = { drain, steady, timers }; // a new workload is a new function here

(async () => {
  const a = args();
  const head = { peer: NAME, version: version("pg-boss"), workload: a.workload };
  const fn = WORKLOADS[a.workload];
  if (!fn) return emit({ ...head, error: "not yet implemented" });
  emit({ ...head, ...(await fn(a)) });
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
