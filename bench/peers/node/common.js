// Shared by the npm peers' drivers: argument parsing, the JSON line, waiting on a SQL count.
"use strict";
const path = require("path");
const { Pool } = require("pg");

function args() {
  const a = { workload: "drain", jobs: 100000, concurrency: 0, url: "" };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const k = v[i].replace(/^--/, "");
    a[k] = ["jobs", "concurrency"].includes(k) ? Number(v[i + 1]) : v[i + 1];
  }
  return a;
}

function version(pkg) {
  return require(path.join(__dirname, "node_modules", pkg, "package.json")).version;
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function waitCount(pool, sql, target, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(sql);
    if (Number(rows[0].n) === target) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${sql} = ${target} (now ${rows[0].n})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function waitUntil(pred, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

module.exports = { args, version, emit, waitCount, waitUntil, Pool };
