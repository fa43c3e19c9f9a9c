// graphile-worker (npm 0.17.x: 0.18 needs Node >= 22) on the drain workload.
//   node driver.js --workload drain --jobs N --concurrency C --url URL
// Settings (https://worker.graphile.org/docs/performance, "batching"): concurrency C (32) jobs at
// once in one process, localQueue.size 500 (the pool locks and fetches 500 jobs per query),
// completeJobBatchDelay 0 (completions of jobs finishing in the same tick share one query),
// failJobBatchDelay 0. Jobs are pre-enqueued with workerUtils.addJobs in chunks of 10,000.
"use strict";
const { args, version, emit, waitCount, waitUntil, Pool } = require("../node/common.js");
const { run, makeWorkerUtils, Logger } = require("../node/node_modules/graphile-worker");
// Warnings and errors only: a log line per job (the default INFO level) is not a production setting.
const logger = new Logger(() => (level, message) => { if (level === "error" || level === "warning") console.error(message); });

const NAME = "graphile-worker";
const LOCAL_QUEUE = 500;

async function drain(a) {
  const concurrency = a.concurrency || 32;
  const pool = new Pool({ connectionString: a.url, max: concurrency + 4 });
  pool.on("error", (e) => console.error("pool error", e));
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  await utils.migrate();
  for (let i = 0; i < a.jobs; i += 10000) {
    const n = Math.min(10000, a.jobs - i);
    await utils.addJobs(Array.from({ length: n }, () => ({ identifier: "noop", payload: {} })));
  }
  let calls = 0;
  const t0 = process.hrtime.bigint();
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: { noop: async () => { calls++; } },
    preset: { worker: { localQueue: { size: LOCAL_QUEUE }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    logger,
  });
  await waitUntil(() => calls >= a.jobs, 30 * 60 * 1000, "handler calls");
  await waitCount(pool, "SELECT count(*) AS n FROM graphile_worker._private_jobs", 0, 60000);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  await runner.stop();
  await utils.release();
  await pool.end();
  return {
    jobs: calls, seconds: +secs.toFixed(3), jobs_per_s: +(calls / secs).toFixed(1),
    settings: { concurrency, localQueue_size: LOCAL_QUEUE, completeJobBatchDelay: 0, failJobBatchDelay: 0, pollInterval_ms: 1000, log_level: "warning" },
  };
}

const WORKLOADS = { drain }; // a new workload is a new function here

(async () => {
  const a = args();
  const head = { peer: NAME, version: version("graphile-worker"), workload: a.workload };
  const fn = WORKLOADS[a.workload];
  if (!fn) return emit({ ...head, error: "not yet implemented" });
  emit({ ...head, ...(await fn(a)) });
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
