// Shared by the npm peers' drivers: argument parsing, the JSON line, the workloads' schedules,
// the measured phase bounded by --deadline, and the lateness summary (README "Workloads").
"use strict";
const path = require("path");
const { Pool } = require("pg");

// Numeric arguments; every other `--key value` is kept as a string. Unknown arguments are
// accepted and ignored (README: a new workload must never break an old driver): `--key value`,
// `--key=value` and a bare `--flag` (followed by another `--...` or nothing) all parse, and a
// stray positional is skipped.
const NUMERIC = new Set(["jobs", "concurrency", "deadline", "rate", "spread", "lead", "pending"]);

function args() {
  const a = { workload: "drain", jobs: 100000, concurrency: 0, url: "" };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i++) {
    if (!v[i].startsWith("--")) continue;
    let k = v[i].slice(2);
    let val = true;
    const eq = k.indexOf("=");
    if (eq >= 0) { val = k.slice(eq + 1); k = k.slice(0, eq); }
    else if (i + 1 < v.length && !v[i + 1].startsWith("--")) val = v[++i];
    if (NUMERIC.has(k)) {
      const n = Number(val);
      if (!Number.isFinite(n)) throw new Error(`--${k} needs a number, got ${JSON.stringify(val)}`);
      a[k] = n;
    } else a[k] = val;
  }
  return a;
}

// The workloads' parameters with README's full-size values as defaults; the deadline defaults
// to README's rule for the workload (drain: none given, so 30 min as before).
function params(a) {
  const p = { jobs: a.jobs };
  if (a.workload === "steady") {
    p.rate = a.rate || 1000;
    p.deadline = a.deadline || p.jobs / p.rate + 10;
  } else if (a.workload === "timers") {
    p.spread = a.spread || 60;
    p.lead = a.lead ?? 10;
    p.pending = a.pending ?? 1000000;
    p.deadline = a.deadline || p.lead + p.spread + 10;
  } else {
    p.deadline = a.deadline || 1800;
  }
  return p;
}

function version(pkg) {
  return require(path.join(__dirname, "node_modules", pkg, "package.json")).version;
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function waitCount(pool, sql, target, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(sql);
    if (Number(rows[0].n) === target) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${sql} = ${target} (now ${rows[0].n})`);
    await sleep(5);
  }
}

async function waitUntil(pred, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(2);
  }
}

// Per-job record of the steady/timers workloads. Job i carries {i, due_ms} in its payload; the
// handler calls begin(payload) first thing (handler start = Date.now(), wall clock epoch ms, the
// clock PostgreSQL also reads) and end() when done. A job run twice (a retry) keeps its first
// start. A payload marked `pending` (the timers workload's 1-day-ahead timers) must never reach
// a handler: it is counted and the measured phase fails on it.
class Record {
  constructor(n) {
    this.n = n;
    this.due = new Float64Array(n).fill(NaN); // set by the schedule before the job is enqueued
    this.start = new Float64Array(n).fill(NaN);
    this.enqueued = 0; // jobs handed to the peer (enqueue call returned)
    this.started = 0;
    this.done = 0;
    this.pendingSeen = 0;
    this.bad = null;
  }
  begin(payload) {
    const now = Date.now();
    if (payload && payload.pending) { this.pendingSeen++; this.bad = `a pending timer ran: ${JSON.stringify(payload)}`; return false; }
    const i = payload && payload.i;
    if (!Number.isInteger(i) || i < 0 || i >= this.n) { this.bad = `unexpected payload ${JSON.stringify(payload)}`; return false; }
    if (Number.isNaN(this.start[i])) { this.start[i] = now; this.started++; }
    return true;
  }
  end() { this.done++; }
  // Lateness of every job: start − due, or deadline − due for a job not started by the deadline
  // (a lower bound; 0 for one not even due by then, which only a deadline shorter than the
  // schedule produces). Returns { values, late }: late = jobs not started by the deadline.
  lateness(deadlineAt) {
    const values = new Float64Array(this.n);
    let late = 0;
    for (let i = 0; i < this.n; i++) {
      const s = this.start[i];
      if (Number.isNaN(s) || s > deadlineAt) { late++; values[i] = Math.max(0, deadlineAt - this.due[i]); }
      else values[i] = s - this.due[i];
    }
    return { values, late };
  }
}

// README's lateness_hist buckets: [upper_ms, count], a value v falls in the first bucket with
// v <= upper (negative values, i.e. a start within the timestamp rounding of due, in the first).
const HIST_UPPERS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, null];

function latenessSummary(values) {
  const s = Float64Array.from(values).sort();
  const n = s.length;
  const round = (x) => Math.round(x * 10) / 10;
  const pct = (p) => (n ? round(s[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]) : null); // nearest rank
  const hist = HIST_UPPERS.map((u) => [u, 0]);
  let b = 0;
  for (let k = 0; k < n; k++) {
    while (HIST_UPPERS[b] !== null && s[k] > HIST_UPPERS[b]) b++;
    hist[b][1]++;
  }
  return { lateness_p50_ms: pct(50), lateness_p99_ms: pct(99), lateness_max_ms: n ? round(s[n - 1]) : null, lateness_hist: hist };
}

// The measured phase: until `rec.done` (handlers finished, in process) reaches n and then
// `committed()` (a SQL count of the completions the peer has committed) reaches n, or until
// `deadlineAt`. Returns { completed, endAt, partial }: endAt is the instant the last completion
// was seen committed, or deadlineAt. Throws as soon as a handler saw something it must not.
async function measure({ n, deadlineAt, done, committed, bad }) {
  while (Date.now() < deadlineAt) {
    if (bad()) throw new Error(bad());
    if (done() >= n) {
      const c = await committed();
      if (c >= n) return { completed: c, endAt: Date.now(), partial: false };
    }
    await sleep(5);
  }
  if (bad()) throw new Error(bad());
  const c = await committed();
  return { completed: c, endAt: deadlineAt, partial: c < n };
}

// steady: job i is due at t0 + i·1000/R ms and enqueued at that instant: every 10 ms the one
// enqueuer hands all jobs whose due time has come to `enqueue(list of {i, due_ms})` (one batch
// call, awaited; a slow call delays the next tick, it never overlaps). Stops at stopAt.
async function steadyEnqueue({ rec, rate, t0, stopAt, enqueue }) {
  const n = rec.n;
  for (let i = 0; i < n; i++) rec.due[i] = t0 + (i * 1000) / rate;
  let next = 0;
  let tick = t0;
  while (next < n && Date.now() < stopAt) {
    const now = Date.now();
    const upto = Math.min(n, Math.floor(((now - t0) * rate) / 1000) + 1);
    if (upto > next) {
      const batch = [];
      for (let i = next; i < upto; i++) batch.push({ i, due_ms: rec.due[i] });
      next = upto;
      await enqueue(batch);
      rec.enqueued = upto;
    }
    tick += 10;
    await sleep(tick - Date.now());
  }
  return next;
}

// timers: N timers due at T0 + i·spread/N (T0 = now + lead) inserted in due order by
// `enqueue(list of {i, due_ms})`, `chunk` per call, as fast as the peer takes them.
async function timersEnqueue({ rec, spread, lead, chunk, enqueue }) {
  const n = rec.n;
  const T0 = Date.now() + lead * 1000;
  for (let i = 0; i < n; i++) rec.due[i] = T0 + (i * spread * 1000) / n;
  const t = Date.now();
  for (let i = 0; i < n; i += chunk) {
    const batch = [];
    for (let k = i; k < Math.min(n, i + chunk); k++) batch.push({ i: k, due_ms: rec.due[k] });
    await enqueue(batch);
    rec.enqueued = Math.min(n, i + chunk);
  }
  return { T0, insert_s: (Date.now() - t) / 1000 };
}

// The timers' pending bulk insert: `sql` takes ($1 base ms, $2 first g, $3 last g) and is run
// for g in [from, to] split in `ways` contiguous slices, each on its own connection at once (the
// machine has 2 cores; one statement keeps one of them idle). Each slice is its own transaction.
async function sliced(pool, sql, base, from, to, ways = 2) {
  const n = to - from + 1;
  if (n <= 0) return;
  const per = Math.ceil(n / ways);
  const parts = [];
  for (let lo = from; lo <= to; lo += per) parts.push(pool.query(sql, [base, lo, Math.min(to, lo + per - 1)]));
  await Promise.all(parts);
}

// The JSON fields every steady/timers result carries.
function scheduleResult({ rec, m, from, deadlineAt }) {
  const secs = (m.endAt - from) / 1000;
  const { values, late } = rec.lateness(deadlineAt);
  return {
    jobs: rec.n, completed: m.completed, partial: m.partial || late > 0, not_started: late,
    seconds: +secs.toFixed(3), jobs_per_s: +(m.completed / secs).toFixed(1),
    ...latenessSummary(values),
  };
}

module.exports = {
  args, params, version, emit, sleep, waitCount, waitUntil, Record, HIST_UPPERS, latenessSummary,
  measure, steadyEnqueue, timersEnqueue, sliced, scheduleResult, Pool,
};
