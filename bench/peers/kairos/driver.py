#!/usr/bin/env python3
"""kairos itself, through `kairos bench jobs` (the release binary, target/release/kairos).

    driver.py --store postgres|sqlite --workload drain --jobs N --concurrency W --url URL

Settings: W executor workers (256 by default: an acquisition takes at most as many jobs as there
are free workers, so more workers means larger acquisition batches; the README's table shows 256
as the best on this 2-core machine), the engine's default acquisition batch (256) and completion
batch (512), enqueue in transactions of 10,000. Every attempt writes its job-log row
(ACT_HI_JOB_LOG), as in production. `--timers 0` skips the bench's own timer phase.
On SQLite the store is a fresh file under /tmp (WAL mode, as kairos opens it); --url is ignored.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
KAIROS = os.path.join(REPO, "target", "release", "kairos")


def version():
    out = subprocess.run([KAIROS, "--version"], capture_output=True, text=True).stdout.strip()
    return out.split()[-1] if out else "?"


def drain(a, db):
    cmd = [KAIROS, "--db", db, "bench", "jobs", "--jobs", str(a.jobs), "--workers", str(a.concurrency),
           "--timers", "0", "--reset"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(p.stderr[-4000:])
    if p.returncode != 0:
        raise SystemExit(f"kairos bench jobs failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    r = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    return {
        "jobs": r["jobs"], "seconds": round(r["jobs"] / max(r["drain_per_s"], 1), 3), "jobs_per_s": r["drain_per_s"],
        "enqueue_per_s": r["enqueue_per_s"],
        # On a drain every job is due before the workers start, so "due -> start" is the time spent
        # queued, not timer lateness: reported apart, not in the lateness columns.
        "queue_wait_p50_ms": r.get("drain_lateness_p50_ms"), "queue_wait_p99_ms": r.get("drain_lateness_p99_ms"),
        "settings": {"workers": a.concurrency, "acquire_batch": "engine default (256, capped by free workers)",
                     "completion_batch": "engine default (512)", "enqueue_chunk": 10000, "job_log": "on",
                     "store": a.store},
    }


WORKLOADS = {"drain": drain}  # a new workload is a new function here


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default="postgres", choices=["postgres", "sqlite"])
    ap.add_argument("--workload", default="drain")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--url", default="")
    a = ap.parse_args()
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
