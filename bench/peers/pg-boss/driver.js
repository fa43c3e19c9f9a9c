// pg-boss (npm 10.x: 11+ needs Node >= 22) on the drain workload.
//   node driver.js --workload drain --jobs N --concurrency W --url URL
// Settings (pg-boss README/docs, "work()": batchSize fetches many jobs per poll and the handler
// receives them as an array, completed together): W workers (4) each boss.work() with
// batchSize 100 and pollingIntervalSeconds 0.5 (the minimum v10 accepts); pool max 10 (the
// default). v10 has no notify-on-insert: a worker that finds its batch empty sleeps a poll
// interval, so this peer is poll-bound by design. Jobs are pre-enqueued with boss.insert in
// chunks of 10,000 into a queue created with the default 'standard' policy. Completed jobs stay
// in pgboss.job (state 'completed') until maintenance archives them, as in production.
"use strict";
const { args, version, emit, waitCount, Pool } = require("../node/common.js");
const PgBoss = require("../node/node_modules/pg-boss");

const NAME = "pg-boss";
const BATCH = 100;
const POLL_S = 0.5;

async function drain(a) {
  const workers = a.concurrency || 4;
  const boss = new PgBoss({ connectionString: a.url, max: 10, supervise: true, schedule: false });
  boss.on("error", (e) => console.error("pg-boss error", e));
  await boss.start();
  await boss.createQueue("noop");
  for (let i = 0; i < a.jobs; i += 10000) {
    const n = Math.min(10000, a.jobs - i);
    await boss.insert(Array.from({ length: n }, () => ({ name: "noop", data: {} })));
  }
  const pool = new Pool({ connectionString: a.url, max: 1 });
  let calls = 0;
  const t0 = process.hrtime.bigint();
  for (let w = 0; w < workers; w++) {
    await boss.work("noop", { batchSize: BATCH, pollingIntervalSeconds: POLL_S }, async (jobs) => { calls += jobs.length; });
  }
  await waitCount(pool, "SELECT count(*) AS n FROM pgboss.job WHERE name = 'noop' AND state = 'completed'", a.jobs, 30 * 60 * 1000);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  await boss.stop({ graceful: false, wait: true, timeout: 5000 });
  await pool.end();
  return {
    jobs: calls, seconds: +secs.toFixed(3), jobs_per_s: +(calls / secs).toFixed(1),
    settings: { workers, batchSize: BATCH, pollingIntervalSeconds: POLL_S, pool_max: 10, queue_policy: "standard" },
  };
}

const WORKLOADS = { drain }; // a new workload is a new function here

(async () => {
  const a = args();
  const head = { peer: NAME, version: version("pg-boss"), workload: a.workload };
  const fn = WORKLOADS[a.workload];
  if (!fn) return emit({ ...head, error: "not yet implemented" });
  emit({ ...head, ...(await fn(a)) });
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
