// graphile-worker (npm 0.17.x: 0.18 needs Node >= 22) on the drain, steady and timers workloads.
//   node driver.js --workload W --jobs N --concurrency C --url URL --deadline S
//                  [--rate R] [--spread S --lead L --pending P]     (other arguments are ignored)
// Settings (https://worker.graphile.org/docs/performance, "batching"): concurrency C (32) jobs at
// once in one process, localQueue.size 500 (the pool locks and fetches 500 jobs per query),
// completeJobBatchDelay 0 (completions of jobs finishing in the same tick share one query),
// failJobBatchDelay 0, pollInterval 1 s (the driver's existing setting; the default is 2 s).
// New jobs wake the workers through LISTEN/NOTIFY ('jobs:insert', sent by add_jobs at
// insertion); a job whose run_at is still in the future then is found by fetching again only
// (graphile-worker docs, pollInterval: "used ... for jobs scheduled in the future"). The local
// queue fetches again at once whenever it ran dry after a fetch that found jobs, and waits
// pollInterval after an empty fetch: with timers falling due densely (100,000 over 60 s) a fetch
// nearly always finds some and lateness is a fetch cycle (~0.1 s); with sparse ones (5,000 over
// 10 s) the chain breaks and lateness is ~U(0, pollInterval).
//
// drain:  N jobs {identifier "noop"} pre-enqueued with workerUtils.addJobs in chunks of 10,000,
//         then run(); done when the handler ran N times and _private_jobs is empty.
// steady: run() first; then every 10 ms one workerUtils.addJobs([{identifier "job", payload
//         {i, due_ms}}, ...]) of the jobs due (no runAt: due now, run_at = now()).
// timers: P pending timers (identifier "job", payload {due_ms, pending: true}, run_at
//         now + 24 h + i ms): timer 0 through workerUtils.addJobs with runAt, timers 1..P-1 by
//         INSERT … SELECT generate_series into graphile_worker._private_jobs (see PENDING_WAYS)
//         writing what add_jobs writes (timer 1 first, checked against timer 0 column by
//         column; then 2..P-1); then ANALYZE (as autovacuum would); then run(); then the N
//         through workerUtils.addJobs([{identifier "job", payload {i, due_ms}, runAt}], ...) in
//         due order, 1,000 per call.
// steady/timers are done when the handler ran N times and none of the N is left in _private_jobs.
"use strict";
const {
  args, params, version, emit, Record, measure, steadyEnqueue, timersEnqueue, sliced, scheduleResult, Pool,
} = require("../node/common.js");
const { run, makeWorkerUtils, Logger } = require("../node/node_modules/graphile-worker");
// Warnings and errors only: a log line per job (the default INFO level) is not a production setting.
const logger = new Logger(() => (level, message) => { if (level === "error" || level === "warning") console.error(message); });

const NAME = "graphile-worker";
const LOCAL_QUEUE = 500;
const POLL_MS = 1000;
const TIMER_CHUNK = 1000;
// The pending INSERT … SELECT in one statement: two slices on two connections at once were no
// faster (side by side, 999,999 rows: 6.1 s against 5.7-5.9 s on an idle machine, 9-12 s against
// 8.2-8.6 s on a loaded one), both sessions drawing ids from one identity sequence and appending
// them to the right edge of one primary key.
const PENDING_WAYS = 1;
const DAY_MS = 24 * 3600 * 1000;

function settings(concurrency) {
  return { concurrency, localQueue_size: LOCAL_QUEUE, completeJobBatchDelay: 0, failJobBatchDelay: 0, pollInterval_ms: POLL_MS, log_level: "warning" };
}

async function setup(a) {
  const concurrency = a.concurrency || 32;
  const pool = new Pool({ connectionString: a.url, max: concurrency + 4 });
  pool.on("error", (e) => console.error("pool error", e));
  pool.on("connect", (client) => client.on("error", (e) => console.error("pg client error", e)));
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  await utils.migrate();
  return { concurrency, pool, utils };
}

function start(pool, concurrency, taskList) {
  return run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: POLL_MS,
    taskList,
    preset: { worker: { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    logger,
  });
}

async function teardown({ runner, utils, pool }) {
  if (runner) await runner.stop();
  await utils.release();
  await pool.end();
}

async function drain(a) {
  const p = params(a);
  const { concurrency, pool, utils } = await setup(a);
  for (let i = 0; i < a.jobs; i += 10000) {
    const n = Math.min(10000, a.jobs - i);
    await utils.addJobs(Array.from({ length: n }, () => ({ identifier: "noop", payload: {} })));
  }
  let calls = 0;
  const t0 = Date.now();
  const deadlineAt = t0 + p.deadline * 1000;
  const runner = await start(pool, concurrency, { noop: async () => { calls++; } });
  const count = async () => a.jobs - Number((await pool.query("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0].n);
  const m = await measure({ n: a.jobs, deadlineAt, done: () => calls, committed: count, bad: () => null });
  const secs = (m.endAt - t0) / 1000;
  await teardown({ runner, utils, pool });
  return {
    jobs: a.jobs, completed: m.completed, partial: m.partial, seconds: +secs.toFixed(3), jobs_per_s: +(m.completed / secs).toFixed(1),
    settings: { ...settings(concurrency), deadline_s: p.deadline },
  };
}

// The task of steady and timers: record the start against the job's due time, nothing else.
function timedTask(rec) {
  return { job: async (payload) => { if (rec.begin(payload)) rec.end(); } };
}

async function steady(a) {
  const p = params(a);
  const { concurrency, pool, utils } = await setup(a);
  const rec = new Record(p.jobs);
  const w0 = Date.now();
  const deadlineAt = w0 + p.deadline * 1000;
  const runner = await start(pool, concurrency, timedTask(rec));
  const t0 = Date.now();
  const enq = steadyEnqueue({
    rec, rate: p.rate, t0, stopAt: deadlineAt,
    enqueue: (batch) => utils.addJobs(batch.map((j) => ({ identifier: "job", payload: j }))),
  });
  enq.catch((e) => { rec.bad = rec.bad || `enqueue failed: ${e.stack}`; });
  const left = "SELECT count(*) AS n FROM graphile_worker._private_jobs";
  const m = await measure({
    n: p.jobs, deadlineAt, done: () => rec.done, bad: () => rec.bad,
    committed: async () => rec.enqueued - Number((await pool.query(left)).rows[0].n),
  });
  const enqueued = await enq;
  await teardown({ runner, utils, pool });
  return {
    ...scheduleResult({ rec, m, from: t0, deadlineAt }), enqueued,
    settings: { ...settings(concurrency), rate: p.rate, deadline_s: p.deadline, enqueue: "workerUtils.addJobs every 10 ms" },
  };
}

// The SQL statement for pending timers $2..$3 (timer 1 alone, then 2..P-1 in PENDING_WAYS slices), writing what
// add_jobs writes for a job spec with only identifier, payload and run_at: job_queue_id NULL, the task's id, the payload's JSON text as
// JSON.stringify writes it, run_at, max_attempts 25, key NULL, priority 0, flags NULL (the other
// columns take their defaults, as in add_jobs).
const PENDING_SQL = `
INSERT INTO graphile_worker._private_jobs (job_queue_id, task_id, payload, run_at, max_attempts, key, priority, flags)
SELECT NULL, (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'job'),
       format('{"due_ms":%s,"pending":true}', $1::bigint + g)::json,
       'epoch'::timestamptz + ($1::bigint + g) * interval '1 millisecond',
       25, NULL, 0, NULL
FROM generate_series($2::int, $3::int) AS g`;

async function insertPending(pool, utils, P) {
  const base = Date.now() + DAY_MS;
  const t = Date.now();
  await utils.addJobs([{ identifier: "job", payload: { due_ms: base, pending: true }, runAt: new Date(base) }]);
  if (P > 1) await pool.query(PENDING_SQL, [base, 1, 1]);
  // The API's row (timer 0) and the SQL's timer 1, the only rows yet, must agree on every column but the identity,
  // the insertion timestamps and their own due time; and timer 0's due time must be what the
  // SQL would have written for g = 0. Checked before the other P - 2: with them, this query
  // (no index serves it) took 6 s over the 1,000,000 rows.
  const { rows } = await pool.query(`
    SELECT to_jsonb(j) - '{id,created_at,updated_at,payload,run_at}'::text[] AS cols, payload::text AS payload,
           (extract(epoch FROM run_at) * 1000)::bigint AS run_ms
    FROM graphile_worker._private_jobs j ORDER BY priority, run_at LIMIT 2`);
  const api = rows[0];
  if (api.payload !== `{"due_ms":${base},"pending":true}` || Number(api.run_ms) !== base) throw new Error(`pending check: API row ${JSON.stringify(api)}`);
  if (P > 1) {
    const sql = rows[1];
    if (JSON.stringify(api.cols) !== JSON.stringify(sql.cols) || sql.payload !== `{"due_ms":${base + 1},"pending":true}` || Number(sql.run_ms) !== base + 1)
      throw new Error(`pending check: API row ${JSON.stringify(api)} differs from SQL row ${JSON.stringify(sql)}`);
  }
  await sliced(pool, PENDING_SQL, base, 2, P - 1, PENDING_WAYS);
  const n = Number((await pool.query("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0].n);
  if (n !== P) throw new Error(`pending insert wrote ${n} rows, wanted ${P}`);
  return { base, secs: (Date.now() - t) / 1000 };
}

async function timers(a) {
  const p = params(a);
  const { concurrency, pool, utils } = await setup(a);
  const pend = await insertPending(pool, utils, p.pending);
  console.error(`graphile-worker: ${p.pending} pending timers in ${pend.secs.toFixed(1)} s`);
  await pool.query("ANALYZE graphile_worker._private_jobs"); // what autovacuum does after a bulk insert
  const rec = new Record(p.jobs);
  const w0 = Date.now();
  const deadlineAt = w0 + p.deadline * 1000;
  const runner = await start(pool, concurrency, timedTask(rec));
  const ins = timersEnqueue({
    rec, spread: p.spread, lead: p.lead, chunk: TIMER_CHUNK,
    enqueue: (batch) => utils.addJobs(batch.map((j) => ({ identifier: "job", payload: j, runAt: new Date(j.due_ms) }))),
  });
  ins.catch((e) => { rec.bad = rec.bad || `enqueue failed: ${e.stack}`; });
  // The N still in the table: run_at before the pending ones' (now + 24 h).
  const left = `SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE run_at < 'epoch'::timestamptz + ${pend.base} * interval '1 millisecond'`;
  const m = await measure({
    n: p.jobs, deadlineAt, done: () => rec.done, bad: () => rec.bad,
    committed: async () => rec.enqueued - Number((await pool.query(left)).rows[0].n),
  });
  const { T0, insert_s } = await ins;
  const pendingLeft = Number((await pool.query(`SELECT count(*) AS n FROM graphile_worker._private_jobs WHERE run_at >= 'epoch'::timestamptz + ${pend.base} * interval '1 millisecond'`)).rows[0].n);
  await teardown({ runner, utils, pool });
  if (rec.pendingSeen || pendingLeft !== p.pending) throw new Error(`pending timers touched: ${rec.pendingSeen} ran, ${pendingLeft} of ${p.pending} left`);
  return {
    ...scheduleResult({ rec, m, from: T0, deadlineAt }),
    settings: {
      ...settings(concurrency), spread_s: p.spread, lead_s: p.lead, pending: p.pending, deadline_s: p.deadline,
      pending_insert: `1 row by workerUtils.addJobs + INSERT … SELECT generate_series into graphile_worker._private_jobs: timer 1 first (columns checked equal to timer 0's), then the others ${PENDING_WAYS === 1 ? "in one statement" : `in ${PENDING_WAYS} slices on ${PENDING_WAYS} connections at once`}`,
      pending_insert_s: +pend.secs.toFixed(2), timers_insert: `workerUtils.addJobs with runAt, ${TIMER_CHUNK} per call`, timers_insert_s: +insert_s.toFixed(2),
    },
  };
}

const WORKLOADS = { drain, steady, timers }; // a new workload is a new function here

(async () => {
  const a = args();
  const head = { peer: NAME, version: version("graphile-worker"), workload: a.workload };
  const fn = WORKLOADS[a.workload];
  if (!fn) return emit({ ...head, error: "not yet implemented" });
  emit({ ...head, ...(await fn(a)) });
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
