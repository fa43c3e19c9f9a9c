// bpmn-engine (npm, pinned exactly in bench/peers/node/package.json; runs on Node >= 18) on the
// `process` workload.
//   node driver.js --workload process --jobs N [--deadline S] [--concurrency C]   (others ignored)
//
// IN MEMORY: bpmn-engine executes a definition as JavaScript objects and has no store; an
// application that wants durability saves `engine.getState()` itself. Nothing here touches
// PostgreSQL (--url is ignored) and the report says so ("in_memory": true in the settings).
//
// The BPMN is bench/peers/process/service-sync.bpmn, the very file kairos runs. How the service
// task is bound (bpmn-elements docs/Extension.md, the engine's `extensions` and `services`
// options): bpmn-moddle is given a small `kairos` descriptor (namespace urn:kairos:bpmn) so that
// `kairos:handler` parses into the service task's behaviour as `handler`; the extension
// `kairosHandler`, called for every activity when it is instantiated, gives each bpmn:ServiceTask
// with a handler a `behaviour.Service` that calls `environment.services[handler]` (here `log`, a
// no-op like kairos' built-in one) and completes the task. Without a Service, bpmn-engine stops the
// instance with "service not defined".
//
// Settings: the XML is parsed and serialized once (bpmn-moddle + moddle-context-serializer with
// bpmn-elements' types, bpmn-engine's documented `sourceContext` path, the engines' own
// dependencies at the versions package-lock.json pins), then per instance one `new Engine({
// sourceContext, services, extensions })` + `execute()`, done at its callback (engine.end), its
// state checked. One instance after another (--concurrency 1): Node runs JavaScript on one thread,
// and the flow here never waits on I/O, so instances in flight at once only interleave (the
// driver accepts --concurrency C to try that: 16 in flight measured the same as 1 here).
// The cost is the engine's own: every activity and flow has its smqp broker and messages; a start ->
// plain task -> end with no service and no extension costs the same ~5 ms of CPU per instance here.
//
// "async": bpmn-engine has no asynchronous continuation (camunda:asyncBefore is not in its
// model; no job executor), so async_instances_per_s is null with a note. The async file is still
// parsed at start-up to check that bpmn-engine accepts it.
"use strict";
const fs = require("fs");
const path = require("path");
const { args, version, emit } = require("../node/common.js");
// Bare specifiers resolved from bench/peers/node (so that the packages' "exports" maps apply).
const nodeRequire = require("module").createRequire(path.join(__dirname, "..", "node", "package.json"));
const { Engine } = nodeRequire("bpmn-engine");
const elements = nodeRequire("bpmn-elements");
const BpmnModdle = nodeRequire("bpmn-moddle");
const serializer = nodeRequire("moddle-context-serializer");

const NAME = "bpmn-engine";
const PROCESS_DIR = path.join(__dirname, "..", "process");
const SYNC_FILE = path.join(PROCESS_DIR, "service-sync.bpmn");
const ASYNC_FILE = path.join(PROCESS_DIR, "service-async.bpmn");

// The kairos extension attribute, for bpmn-moddle (moddle descriptor format).
const KAIROS_MODDLE = {
  name: "kairos",
  uri: "urn:kairos:bpmn",
  prefix: "kairos",
  xml: { tagAlias: "lowerCase" },
  types: [
    {
      name: "HandlerSupported",
      isAbstract: true,
      extends: ["bpmn:ServiceTask"],
      properties: [{ name: "handler", type: "String", isAttr: true }],
    },
  ],
};

let handled = 0;
const SERVICES = {
  // kairos' built-in `log` handler, as a no-op (the benchmark measures the engine).
  log(scope, callback) {
    handled++;
    callback(null);
  },
};

function HandlerService(activity) {
  this.type = "kairos:handler";
  this.activity = activity;
  this.handler = activity.behaviour.handler;
}
HandlerService.prototype.execute = function execute(executeMessage, callback) {
  const fn = this.activity.environment.services[this.handler];
  if (typeof fn !== "function") return callback(new Error(`no service for kairos:handler ${this.handler}`));
  fn({ id: this.activity.id, content: executeMessage.content }, (err, ...out) => callback(err, out));
};

const EXTENSIONS = {
  kairosHandler(activity) {
    if (activity.type === "bpmn:ServiceTask" && activity.behaviour.handler) activity.behaviour.Service = HandlerService;
  },
};

async function sourceContext(file) {
  const moddle = new BpmnModdle({ kairos: KAIROS_MODDLE });
  const ctx = await moddle.fromXML(fs.readFileSync(file, "utf8"));
  for (const w of ctx.warnings || []) console.error(`${path.basename(file)}: ${w.message}`);
  return serializer.Serializer(ctx, serializer.TypeResolver(elements));
}

function runOne(ctx, i) {
  return new Promise((resolve, reject) => {
    const engine = new Engine({ name: `instance-${i}`, sourceContext: ctx, services: SERVICES, extensions: EXTENSIONS });
    engine.execute((err, execution) => {
      if (err) return reject(err);
      // A definition that ran to its end has counters.completed 1 (a stopped or failed one has not).
      const completed = execution.definitions.map((d) => d.counters.completed);
      if (completed.some((c) => c !== 1)) return reject(new Error(`instance ${i} did not complete (${completed})`));
      resolve();
    });
  });
}

// Up to n instances, `concurrency` in flight, stopping at the deadline: {done, seconds, cpuS}.
async function runInstances(ctx, n, concurrency, deadlineS) {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const stop = t0 + deadlineS * 1000;
  let next = 0;
  let done = 0;
  async function loop() {
    while (next < n && performance.now() < stop) {
      await runOne(ctx, next++);
      done++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const cpu = process.cpuUsage(cpu0);
  return { done, seconds: (performance.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6 };
}

async function processWorkload(a) {
  const ctx = await sourceContext(SYNC_FILE);
  await runOne(await sourceContext(ASYNC_FILE), -1); // accepted; asyncBefore is ignored
  const concurrency = a.concurrency || 1;
  await runInstances(ctx, Math.min(200, a.jobs), concurrency, 10); // warm-up (JIT), not measured
  handled = 0;
  const { done, seconds, cpuS } = await runInstances(ctx, a.jobs, concurrency, a.deadline || 120);
  if (handled !== done) throw new Error(`the log service ran ${handled} times for ${done} instances`);
  const perS = Math.round((done / seconds) * 10) / 10;
  return {
    jobs: a.jobs, completed: done, partial: done < a.jobs, seconds: Math.round(seconds * 1000) / 1000,
    // CPU time of this process over the measured phase: the figure to trust on a loaded machine.
    cpu_s: Math.round(cpuS * 1000) / 1000,
    jobs_per_s: perS, sync_instances_per_s: perS, async_instances_per_s: null,
    async_note: "bpmn-engine has no asynchronous continuations (camunda:asyncBefore is ignored; no job executor): " +
      "no async figure",
    settings: {
      in_memory: true,
      persistence: "none: an engine is JavaScript objects; bpmn-engine has no store of its own",
      bpmn: "bench/peers/process/service-sync.bpmn",
      service_task: "a kairos moddle descriptor + an `extensions` entry giving each serviceTask a Service that " +
        "calls environment.services[kairos:handler] (`log`, no-op)",
      instances: "XML parsed once (sourceContext); per instance new Engine({sourceContext}) + execute() to engine.end",
      concurrency,
      bpmn_elements: version("bpmn-elements"),
    },
  };
}

const WORKLOADS = { process: processWorkload }; // a new workload: a function here
const JOB_WORKLOADS = new Set(["drain", "steady", "timers"]); // job-queue workloads: nothing to measure here

async function main() {
  const a = args();
  const head = { peer: NAME, version: version("bpmn-engine"), workload: a.workload };
  const fn = WORKLOADS[a.workload];
  if (!fn && JOB_WORKLOADS.has(a.workload)) {
    return emit({ ...head, error: "not applicable: an in-memory BPMN engine, not a job queue" });
  }
  if (!fn) return emit({ ...head, error: "not yet implemented" });
  emit({ ...head, ...(await fn(a)) });
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
