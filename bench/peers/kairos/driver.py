#!/usr/bin/env python3
"""kairos itself, through `kairos bench jobs` (the release binary, target/release/kairos).

    driver.py --store postgres|sqlite --workload drain|steady|timers|process|scheduler --jobs N --concurrency W --url URL
              [--deadline S] [--rate R] [--spread S --lead L --pending P]

Settings: W executor workers (256 by default), the engine's default acquisition batch (512; an
acquisition takes the free workers plus room in the node's local queue, 1,024 at most) and completion
batch (512), enqueue in transactions of 10,000. Every attempt writes its job-log row
(ACT_HI_JOB_LOG), as in production. Each workload is one phase of `kairos bench jobs` (`--phases`).
On SQLite the store is a fresh file under /tmp (WAL mode, as kairos opens it); --url is ignored.

`process` runs `kairos bench process` twice on the same store (each with --reset): --mode sync,
then --mode async (asyncBefore on the service task, the job run by W executor workers), with 16
starts in flight (PROCESS_STARTERS, as concurrent requests to a server) and full history. It
deploys its compiled-in model, crates/cli/src/bench/service-sync.bpmn; the driver checks that it is
byte for byte bench/peers/process/service-sync.bpmn, the file the other peers run (the async file
is that one with camunda:asyncBefore="true", as the command derives it), and says so in settings.
--deadline bounds each variant (--timeout of the command, plus 20 s for the starts here).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
KAIROS = os.path.join(REPO, "target", "release", "kairos")


def version():
    out = subprocess.run([KAIROS, "--version"], capture_output=True, text=True).stdout.strip()
    return out.split()[-1] if out else "?"


def bench(a, db, *phase_args):
    """Runs `kairos bench jobs` with the standard settings plus `phase_args`; its JSON report."""
    cmd = [KAIROS, "--db", db, "bench", "jobs", "--workers", str(a.concurrency), "--reset", *phase_args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(p.stderr[-4000:])
    if p.returncode != 0:
        raise SystemExit(f"kairos bench jobs failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


def settings(a, **extra):
    return {"workers": a.concurrency, "acquire_batch": "engine default (512, capped by free workers + local queue)",
            "prefetch": "engine default (1024)",
            "completion_batch": "engine default (512)", "job_log": "on", "store": a.store, **extra}


def drain(a, db):
    r = bench(a, db, "--phases", "drain", "--jobs", str(a.jobs), "--timeout", f"PT{a.deadline}S")
    return {
        "jobs": r["jobs"], "completed": r["jobs"], "partial": False,
        "seconds": round(r["jobs"] / max(r["drain_per_s"], 1), 3), "jobs_per_s": r["drain_per_s"],
        "enqueue_per_s": r["enqueue_per_s"],
        # On a drain every job is due before the workers start, so "due -> start" is the time spent
        # queued, not timer lateness: reported apart, not in the lateness columns.
        "queue_wait_p50_ms": r.get("drain_lateness_p50_ms"), "queue_wait_p99_ms": r.get("drain_lateness_p99_ms"),
        "settings": settings(a, enqueue_chunk=10000),
    }


def lateness(r, n):
    """The driver protocol's fields from one of the bench's lateness sections."""
    return {"jobs": n, "completed": r["completed"], "partial": r["partial"],
            "seconds": round(r["completed"] / max(r["per_s"], 1), 3), "jobs_per_s": r["per_s"],
            "lateness_p50_ms": r["p50_ms"], "lateness_p99_ms": r["p99_ms"], "lateness_max_ms": r["max_ms"],
            "lateness_hist": r["hist"]}


def steady(a, db):
    slack = max(a.deadline - round(a.jobs / a.rate), 1)
    r = bench(a, db, "--phases", "steady", "--steady-jobs", str(a.jobs), "--rate", str(a.rate),
              "--slack", f"PT{slack}S")
    return {**lateness(r["steady"], a.jobs),
            "settings": settings(a, rate=a.rate, enqueue="enqueue_many of the jobs due in each 10 ms tick, "
                                                         "dueDate = t0 + i/R")}


def timers(a, db):
    slack = max(a.deadline - a.lead - a.spread, 1)
    r = bench(a, db, "--phases", "timers", "--timers", str(a.jobs), "--timers-pending", str(a.pending),
              "--spread", f"PT{a.spread}S", "--lead", f"PT{a.lead}S", "--slack", f"PT{slack}S")
    return {**lateness(r["timer"], a.jobs),
            "settings": settings(a, pending=a.pending, spread_s=a.spread, lead_s=a.lead,
                                 enqueue="pending: enqueue_many in transactions of 10,000 (dueIn P1D); timers: "
                                         "enqueue_many in transactions of 1,000 with dueDate, in due order")}


# The model the other peers run; `kairos bench process` compiles in these very files
# (`include_str!` in crates/cli/src/bench/process.rs), so every peer runs the same BPMN.
PROCESS_MODEL = "bench/peers/process/service-sync.bpmn"
PROCESS_STARTERS = 16  # sync starts in flight at once, as concurrent requests to a server (the CLI default)


def bench_process(a, db, mode):
    """One `kairos bench process` run: its JSON report, or {"error": ...} (the other variant still runs)."""
    cmd = [KAIROS, "--db", db, "bench", "process", "--instances", str(a.jobs), "--mode", mode,
           "--workers", str(a.concurrency), "--concurrency", str(PROCESS_STARTERS),
           "--timeout", f"PT{a.deadline}S", "--reset"]
    sys.stderr.write("$ " + " ".join(cmd) + "\n")
    try:
        # --timeout bounds the wait for the last instance; the starts themselves are bounded here.
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.deadline + 20)
    except subprocess.TimeoutExpired:
        return {"error": f"{mode}: not done {a.deadline + 20} s after the start (deadline {a.deadline} s)"}
    sys.stderr.write(p.stderr[-4000:])
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": f"{mode}: kairos bench process exited {p.returncode}: {p.stderr.strip()[-1500:]}"}
    return json.loads(lines[-1])


def process(a, db):
    """The `process` workload: start -> service task (log) -> end, sync then async (asyncBefore)."""
    sync, asyn = bench_process(a, db, "sync"), bench_process(a, db, "async")
    if sync.get("error") and asyn.get("error"):
        raise SystemExit(f"{sync['error']}\n{asyn['error']}")

    def figures(r):
        if r.get("error"):
            return None, None, None
        done = r.get("completed", r.get("instances", a.jobs))
        return r.get("instances_per_s"), done, r.get("seconds")

    s_ips, s_done, s_sec = figures(sync)
    a_ips, a_done, a_sec = figures(asyn)
    out = {
        "jobs": a.jobs, "completed": s_done, "partial": bool(sync.get("partial") or asyn.get("partial")),
        "seconds": s_sec, "jobs_per_s": s_ips, "sync_instances_per_s": s_ips,
        "async_instances_per_s": a_ips, "async_seconds": a_sec, "async_completed": a_done,
        "settings": {
            "store": a.store, "in_memory": False, "history": sync.get("history") or asyn.get("history") or "full",
            "bpmn": PROCESS_MODEL + " (compiled into kairos bench process)",
            "async": "the same file with camunda:asyncBefore=\"true\" on the service task (service-async.bpmn): "
                     "the start commits a job, the executor runs the task and the end",
            "service_task": "kairos:handler=\"log\", the built-in handler",
            "sync_starters": PROCESS_STARTERS, "workers": a.concurrency,
            "measure": "sync: from the first start until every instance has ended; async: from the first start until "
                       "every instance has ended (ACT_HI_PROCINST.END_TIME_ set)",
        },
    }
    for mode, r in (("sync", sync), ("async", asyn)):
        if r.get("error"):
            out[f"{mode}_error"] = r["error"]
    return out


class NotApplicable(Exception):
    """The workload does not apply to this store: reported as {"error": "not applicable: ..."}."""


SCHEDULER_WORKERS = 512


def scheduler(a, db):
    """The `scheduler` workload (issue 5): N one-shot simple triggers of one job, due over the spread
    starting lead s after they are stored; fires/s and lateness (the firing's work starting minus
    its trigger's fire time), through `kairos bench scheduler`."""
    if a.store != "postgres":
        raise NotApplicable("issue 5 measures the scheduler on PostgreSQL, beside Quartz's clustered JDBC "
                            "JobStore; `kairos bench scheduler --db sqlite://…` measures SQLite by hand")
    slack = max(a.deadline - a.lead - a.spread, 1)
    # A firing is two jobs (trigger job, work job) and a job taken ahead of its due date holds a
    # worker until then: `kairos bench scheduler`'s default of 512 workers, not the peer's 256.
    workers = max(a.concurrency, SCHEDULER_WORKERS)
    cmd = [KAIROS, "--db", db, "bench", "scheduler", "--triggers", str(a.jobs), "--spread", f"PT{a.spread}S",
           "--lead", f"PT{a.lead}S", "--workers", str(workers), "--timeout", f"PT{slack}S", "--reset"]
    sys.stderr.write("$ " + " ".join(cmd) + "\n")
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(p.stderr[-4000:])
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise SystemExit(f"kairos bench scheduler failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    r = json.loads(lines[-1])
    return {**lateness(r["fired"], a.jobs),
            "settings": settings(a, spread_s=a.spread, lead_s=a.lead, store_s=r.get("store_s"), workers=workers,
                                 triggers="one durable job; N SimpleTriggers (repeatCount 0, misfire fireNow), "
                                          "stored by Scheduler::schedule_many 2,000 at a time (multi-row inserts) while the "
                                          "executor runs, in fire-time order; each firing = a quartz-trigger job + a quartz-job job")}


WORKLOADS = {"drain": drain, "steady": steady, "timers": timers, "process": process,
             "scheduler": scheduler}  # a new workload: a function here


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default="postgres", choices=["postgres", "sqlite"])
    ap.add_argument("--workload", default="drain")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--url", default="")
    ap.add_argument("--deadline", type=int, default=600)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--spread", type=int, default=60)
    ap.add_argument("--lead", type=int, default=10)
    ap.add_argument("--pending", type=int, default=1_000_000)
    a, _ = ap.parse_known_args()  # another workload's arguments are ignored
    peer = "kairos-" + ("pg" if a.store == "postgres" else "sqlite")
    head = {"peer": peer, "version": version(), "workload": a.workload}
    fn = WORKLOADS.get(a.workload)
    if fn is None:
        print(json.dumps({**head, "error": "not yet implemented"}))
        return
    tmp = None
    if a.store == "sqlite":
        tmp = tempfile.mkdtemp(prefix="kairos-bench-sqlite-")
        db = "sqlite://" + os.path.join(tmp, "bench.db")
    else:
        db = a.url
    try:
        print(json.dumps({**head, **fn(a, db)}))
    except NotApplicable as e:
        print(json.dumps({**head, "error": f"not applicable: {e}"}))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
