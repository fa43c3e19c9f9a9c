#!/usr/bin/env python3
"""procrastinate (PyPI 3.10.0) on the drain workload; runs in bench/.venv.

    driver.py --workload drain --jobs N --concurrency C --url URL

Settings (procrastinate docs, "Launch a worker" / WorkerOptions): one worker process with
concurrency C (16) asyncio sub-workers, listen_notify on (the default: new jobs wake the
worker), fetch_job_polling_interval 5 s (the default; unused while jobs are queued),
delete_jobs "successful" (finished rows are removed, as a queue under load would run it),
PsycopgConnector with a pool of C + 2 connections. wait=False: the worker returns when the
queue is empty, which ends the measurement. Jobs are pre-enqueued with batch_defer_async in
chunks of 10,000.
"""
import argparse, asyncio, json, logging, time
from importlib.metadata import version as pkg_version

import procrastinate

NAME = "procrastinate"


async def drain(a):
    conc = a.concurrency or 16
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(
        conninfo=a.url, min_size=1, max_size=conc + 2))
    calls = 0

    @app.task(name="noop")
    async def noop():
        nonlocal calls
        calls += 1

    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        for i in range(0, a.jobs, 10000):
            await noop.batch_defer_async(*([{}] * min(10000, a.jobs - i)))
        t0 = time.perf_counter()
        await app.run_worker_async(concurrency=conc, wait=False, delete_jobs="successful",
                                   install_signal_handlers=False)
        secs = time.perf_counter() - t0
    return {"jobs": calls, "seconds": round(secs, 3), "jobs_per_s": round(calls / secs, 1),
            "settings": {"concurrency": conc, "listen_notify": True, "fetch_job_polling_interval_s": 5,
                         "delete_jobs": "successful", "pool_max": conc + 2, "worker_processes": 1}}


WORKLOADS = {"drain": drain}  # a new workload is a new function here


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="drain")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--concurrency", type=int, default=0)
    ap.add_argument("--url", required=True)
    a = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    head = {"peer": NAME, "version": pkg_version("procrastinate"), "workload": a.workload}
    fn = WORKLOADS.get(a.workload)
    if fn is None:
        print(json.dumps({**head, "error": "not yet implemented"}))
        return
    print(json.dumps({**head, **asyncio.run(fn(a))}), flush=True)


if __name__ == "__main__":
    main()
