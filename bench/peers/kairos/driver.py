#!/usr/bin/env python3
"""kairos itself, through `kairos bench jobs` (the release binary, target/release/kairos).

    driver.py --store postgres|sqlite --workload drain|steady|timers --jobs N --concurrency W --url URL
              [--deadline S] [--rate R] [--spread S --lead L --pending P]

Settings: W executor workers (256 by default: an acquisition takes at most as many jobs as there
are free workers, so more workers means larger acquisition batches; the README's table shows 256
as the best on this 2-core machine), the engine's default acquisition batch (256) and completion
batch (512), enqueue in transactions of 10,000. Every attempt writes its job-log row
(ACT_HI_JOB_LOG), as in production. Each workload is one phase of `kairos bench jobs` (`--phases`).
On SQLite the store is a fresh file under /tmp (WAL mode, as kairos opens it); --url is ignored.
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
    return {"workers": a.concurrency, "acquire_batch": "engine default (256, capped by free workers)",
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


WORKLOADS = {"drain": drain, "steady": steady, "timers": timers}  # a new workload: a function here


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
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
