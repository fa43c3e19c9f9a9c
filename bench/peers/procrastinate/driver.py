#!/usr/bin/env python3
"""procrastinate (PyPI 3.10.0) on the drain, steady and timers workloads; runs in bench/.venv.

    driver.py --workload W --jobs N --concurrency C --url URL --deadline S
              [--rate R] [--spread S --lead L --pending P]      (other arguments are ignored)

Settings (procrastinate docs, "Launch a worker" / App.run_worker_async): one worker (one
process, one asyncio loop) with concurrency C (16) sub-workers, listen_notify on (the default:
an inserted job NOTIFYs and wakes the worker), fetch_job_polling_interval 5 s (the default; a job
whose scheduled_at is still in the future when its NOTIFY arrives is found by the next poll, so
the timers' lateness carries up to 5 s of it), delete_jobs "successful" (finished rows are
removed, as a queue under load would run it), PsycopgConnector with a pool of C + 2 connections
(the listener has a connection of its own). Logging at WARNING (a log line per job is not a
production setting).

drain:  N jobs of task "noop" pre-enqueued with Task.batch_defer_async in chunks of 10,000, then
        run_worker_async(wait=False): the worker returns once the queue is empty and every
        completion is committed, which ends the measurement (or --deadline does: then the rows
        left in procrastinate_jobs are the jobs not completed).
steady: the worker runs first (wait=True); one enqueuer (its own process and pool, as a
        producer would be, so it neither waits for nor delays the worker's event loop) calls,
        every 10 ms, Task.batch_defer_async({"i", "due_ms"}, ...) with the jobs whose due time
        t0 + i/R has come.
timers: P pending timers (task "timer", args {"due_ms", "pending": true}, scheduled_at
        now + 24 h + i ms): timer 0 through Task.configure(schedule_at=...).defer_async, timers
        1..P-1 by one INSERT … SELECT generate_series per slice (2 slices on 2 connections at
        once) into procrastinate_jobs plus the two procrastinate_events rows ("scheduled" at
        scheduled_at, "deferred" at now()) that the table's triggers write for an API insert,
        written by the same statement with the triggers off for that transaction
        (session_replication_role = replica: the triggers' row-by-row inserts and FK checks
        made it 4x slower; their NOTIFYs reach nobody, no worker is listening yet); checked
        column by column, events included, against timer 0 (timer 1 written and checked
        first, alone). Then ANALYZE (as autovacuum would after a bulk insert); then the worker
        starts; then the enqueuer process inserts the N timers due at T0 + i*spread/N (T0 =
        insertion start + lead) in due order, 1,000 per call: one Job per timer from
        Task.configure(schedule_at=due).make_new_job(i=, due_ms=), the 1,000 handed to
        App.job_manager.batch_defer_jobs_async, the call behind
        JobDeferrer.batch_defer_async (which gives a whole batch one schedule_at) - the same one
        procrastinate_defer_jobs_v1 statement. A pending timer reaching the handler fails the
        driver.
steady/timers lateness = handler start (time.time()) - due_ms; done when the handler ran N
times and none of the N is left in procrastinate_jobs.

What bounds the drain (checked, so that it is the peer's limit and not this driver's): the
worker fetches ONE job per query (procrastinate_fetch_job_v2: UPDATE … LIMIT 1 … SKIP LOCKED),
one fetch after another in its single event loop; every fetch and every finish is a
transaction of its own on a pool connection (psycopg_pool's check "" + BEGIN + the call +
COMMIT: 4 round trips, one WAL flush). Timing the calls: fetches take 85-93% of the wall time,
back to back; "no job" comes once, at the end (no poll waits); the pool keeps its connections
(5 sessions in the database for a whole drain).
Concurrency 1, 4, 16, 64 land in the same range (4 the best, 16 a bit behind), while two worker
processes drain ~2x as fast: the bound is one worker's serial fetch loop. With 1M pending
timers each fetch scans them all (no index serves `scheduled_at <= now()` in the
(priority, id) order; procrastinate issue #1242), ~0.3 s a fetch.
"""
import argparse, asyncio, datetime, json, logging, math, multiprocessing as mp, sys, time
from importlib.metadata import version as pkg_version

import psycopg
import procrastinate

NAME = "procrastinate"
DAY_MS = 86_400_000
DRAIN_CHUNK = 10_000
TIMER_CHUNK = 1_000
PENDING_WAYS = 2
POLL_S = 5.0  # fetch_job_polling_interval: procrastinate's default
HIST_UPPERS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, None]


def now_ms():
    return time.time() * 1000.0


def utc(ms):
    return datetime.datetime.fromtimestamp(ms / 1000.0, tz=datetime.timezone.utc)


def make_app(url, pool_max):
    return procrastinate.App(connector=procrastinate.PsycopgConnector(
        conninfo=url, min_size=1, max_size=pool_max))


def settings(conc, **extra):
    return {"concurrency": conc, "worker_processes": 1, "listen_notify": True,
            "fetch_job_polling_interval_s": POLL_S, "delete_jobs": "successful",
            "pool_max": conc + 2, **extra}


def start_worker(app, conc, wait):
    return asyncio.create_task(app.run_worker_async(
        concurrency=conc, wait=wait, delete_jobs="successful", listen_notify=True,
        fetch_job_polling_interval=POLL_S, install_signal_handlers=False))


async def stop_worker(task):
    if not task.done():
        task.cancel()  # procrastinate: cancelling run_worker_async stops the worker gracefully
    try:
        await task
    except asyncio.CancelledError:
        pass


async def scalar(app, sql):
    async with app.connector.pool.connection() as conn:
        return (await (await conn.execute(sql)).fetchone())[0]


# ---------------------------------------------------------------------------------------------
# drain
# ---------------------------------------------------------------------------------------------
async def drain(a):
    conc = a.concurrency or 16
    app = make_app(a.url, conc + 2)
    calls = 0

    @app.task(name="noop")
    async def noop():
        nonlocal calls
        calls += 1

    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        for i in range(0, a.jobs, DRAIN_CHUNK):
            await noop.batch_defer_async(*([{}] * min(DRAIN_CHUNK, a.jobs - i)))
        t0 = time.perf_counter()
        worker = start_worker(app, conc, wait=False)
        done, _ = await asyncio.wait({worker}, timeout=a.deadline)
        secs = time.perf_counter() - t0
        if worker in done:
            worker.result()  # (raises what the worker raised)
        left = await scalar(app, "SELECT count(*) FROM procrastinate_jobs")
        await stop_worker(worker)
    completed = a.jobs - left
    return {"jobs": a.jobs, "completed": completed, "partial": completed < a.jobs,
            "seconds": round(secs, 3), "jobs_per_s": round(completed / secs, 1), "handler_calls": calls,
            "settings": settings(conc, deadline_s=a.deadline, enqueue=f"Task.batch_defer_async, {DRAIN_CHUNK} per call")}


# ---------------------------------------------------------------------------------------------
# steady / timers: the record of the N jobs, the enqueuer process, the measured phase
# ---------------------------------------------------------------------------------------------
class Record:
    """Job i carries {i, due_ms}; the handler calls begin() first thing (handler start =
    time.time(), wall-clock epoch ms as PostgreSQL reads it). A job run twice keeps its first
    start. A payload marked pending must never reach a handler."""

    def __init__(self, n):
        self.n = n
        self.start = [None] * n
        self.started = 0
        self.done = 0
        self.pending_seen = 0
        self.bad = None

    def begin(self, kw):
        t = now_ms()
        if kw.get("pending"):
            self.pending_seen += 1
            self.bad = f"a pending timer ran: {kw}"
            return False
        i = kw.get("i")
        if not isinstance(i, int) or not 0 <= i < self.n:
            self.bad = f"unexpected payload {kw}"
            return False
        if self.start[i] is None:
            self.start[i] = t
            self.started += 1
        return True

    def lateness(self, due, deadline_at):
        """start - due per job, or deadline - due (a lower bound) for a job not started by the
        deadline; returns (values, not_started)."""
        vals, late = [], 0
        for i in range(self.n):
            s = self.start[i]
            if s is None or s > deadline_at:
                late += 1
                vals.append(deadline_at - due(i))
            else:
                vals.append(s - due(i))
        return vals, late


def lateness_summary(values):
    s = sorted(values)
    n = len(s)

    def pct(p):  # nearest rank
        return round(s[min(n - 1, max(0, math.ceil(p / 100 * n) - 1))], 1) if n else None

    hist = [[u, 0] for u in HIST_UPPERS]
    b = 0
    for v in s:
        while HIST_UPPERS[b] is not None and v > HIST_UPPERS[b]:
            b += 1
        hist[b][1] += 1
    return {"lateness_p50_ms": pct(50), "lateness_p99_ms": pct(99),
            "lateness_max_ms": round(s[-1], 1) if n else None, "lateness_hist": hist}


def timed_task(app, rec):
    @app.task(name="timer")
    async def timer(**kw):
        if rec.begin(kw):
            rec.done += 1
    return timer


def producer_main(kind, url, p, ready, go, shared):
    """The enqueuer process: `shared` = (t0_ms, enqueued, insert_s, stop_at_ms); t0_ms < 0 flags a
    failure."""
    logging.basicConfig(level=logging.WARNING)
    try:
        asyncio.run(_producer(kind, url, p, ready, go, shared))
    except BaseException:
        shared[0].value = -1.0
        raise


async def _producer(kind, url, p, ready, go, shared):
    t0v, enq, ins, stop = shared
    app = make_app(url, 2)

    @app.task(name="timer")
    async def timer(**kw):  # never run here: the enqueuer's handle on the task
        raise RuntimeError("not a worker")

    async with app.open_async():
        ready.set()
        go.wait()
        n = p["jobs"]
        if kind == "steady":
            # job i due at t0 + i*1000/R ms, enqueued at that instant: every 10 ms all jobs whose
            # due time has come, in one batch call (a slow call delays the next tick).
            rate, stop_at = p["rate"], stop.value
            t0 = now_ms()
            t0v.value = t0
            nxt, tick = 0, t0
            while nxt < n and now_ms() < stop_at:
                upto = min(n, int((now_ms() - t0) * rate / 1000) + 1)
                if upto > nxt:
                    await timer.batch_defer_async(
                        *[{"i": i, "due_ms": t0 + i * 1000.0 / rate} for i in range(nxt, upto)])
                    nxt = upto
                    enq.value = upto
                tick += 10
                await asyncio.sleep(max(0.0, (tick - now_ms()) / 1000))
        else:
            # the N timers due at T0 + i*spread/N (T0 = insertion start + lead), in due order
            t = now_ms()
            T0 = t + p["lead"] * 1000
            t0v.value = T0
            step = p["spread"] * 1000.0 / n
            for lo in range(0, n, TIMER_CHUNK):
                jobs = []
                for i in range(lo, min(n, lo + TIMER_CHUNK)):
                    due = T0 + i * step
                    jobs.append(timer.configure(schedule_at=utc(due)).make_new_job(i=i, due_ms=due))
                await app.job_manager.batch_defer_jobs_async(jobs)
                enq.value = lo + len(jobs)
            ins.value = (now_ms() - t) / 1000


class Producer:
    """Spawned (and its imports and pool opened) before the measured phase; go() starts it."""

    def __init__(self, kind, url, p):
        ctx = mp.get_context("spawn")
        self.ready, self._go = ctx.Event(), ctx.Event()
        self.t0 = ctx.Value("d", 0.0, lock=False)
        self.enqueued = ctx.Value("q", 0, lock=False)
        self.insert_s = ctx.Value("d", 0.0, lock=False)
        self.stop_at = ctx.Value("d", 0.0, lock=False)
        self.proc = ctx.Process(target=producer_main, daemon=True, args=(
            kind, url, p, self.ready, self._go, (self.t0, self.enqueued, self.insert_s, self.stop_at)))
        self.proc.start()

    async def wait_ready(self):
        while not self.ready.is_set():
            if not self.proc.is_alive():
                raise RuntimeError(f"enqueuer process died (exit {self.proc.exitcode})")
            await asyncio.sleep(0.01)

    async def go(self, stop_at=math.inf):
        self.stop_at.value = stop_at
        self._go.set()
        while self.t0.value == 0.0:
            await asyncio.sleep(0.001)
        if self.t0.value < 0:
            raise RuntimeError("enqueuer process failed")
        return self.t0.value

    def failed(self):
        return self.t0.value < 0 or (self.proc.exitcode not in (None, 0))

    def finish(self):
        if not self._go.is_set():
            self.proc.kill()
        self.proc.join(timeout=30)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


async def abort(prod, worker):
    """On a failure: the enqueuer killed, the worker cancelled (not waited for long)."""
    prod.proc.kill()
    if worker and not worker.done():
        worker.cancel()
        await asyncio.wait({worker}, timeout=10)


async def listening(app):
    """The worker registered, then 0.1 s for its listener to connect and LISTEN (a NOTIFY sent
    before would be missed until the next one, 10 ms later, or the 5 s poll)."""
    while not await scalar(app, "SELECT count(*) FROM procrastinate_workers"):
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.1)


async def measure(app, rec, prod, n, deadline_at, left_sql):
    """Until the handler ran n times and none of the n is left in the table (then the instant it
    was seen), or the deadline. Returns (completed, end_ms, partial)."""
    while now_ms() < deadline_at:
        if rec.bad:
            raise RuntimeError(rec.bad)
        if prod.failed():
            raise RuntimeError("enqueuer process failed")
        if rec.done >= n and prod.enqueued.value >= n:
            if await scalar(app, left_sql) == 0:
                return n, now_ms(), False
        await asyncio.sleep(0.005)
    if rec.bad:
        raise RuntimeError(rec.bad)
    enq = prod.enqueued.value
    completed = enq - await scalar(app, left_sql)
    return completed, deadline_at, completed < n


def schedule_result(rec, due, completed, end_ms, partial, frm, deadline_at):
    secs = (end_ms - frm) / 1000
    vals, late = rec.lateness(due, deadline_at)
    return {"jobs": rec.n, "completed": completed, "partial": partial or late > 0, "not_started": late,
            "seconds": round(secs, 3), "jobs_per_s": round(completed / secs, 1) if secs > 0 else None,
            **lateness_summary(vals)}


async def steady(a):
    conc = a.concurrency or 16
    p = {"jobs": a.jobs, "rate": a.rate}
    app = make_app(a.url, conc + 2)
    rec = Record(a.jobs)
    timed_task(app, rec)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        prod, worker = Producer("steady", a.url, p), None
        try:
            await prod.wait_ready()
            w0 = now_ms()  # the workers' start: the deadline counts from here
            deadline_at = w0 + a.deadline * 1000
            worker = start_worker(app, conc, wait=True)
            await listening(app)
            t0 = await prod.go(stop_at=deadline_at)
            completed, end_ms, partial = await measure(
                app, rec, prod, a.jobs, deadline_at, "SELECT count(*) FROM procrastinate_jobs")
            await stop_worker(worker)
        except BaseException:
            await abort(prod, worker)
            raise
        finally:
            prod.finish()
    return {**schedule_result(rec, lambda i: t0 + i * 1000.0 / a.rate, completed, end_ms, partial, t0, deadline_at),
            "enqueued": prod.enqueued.value,
            "settings": settings(conc, rate=a.rate, deadline_s=a.deadline,
                                 enqueue="Task.batch_defer_async every 10 ms, from a process of its own")}


PENDING_SQL = """
WITH j AS (
    INSERT INTO procrastinate_jobs (queue_name, task_name, priority, lock, queueing_lock, args, scheduled_at)
    SELECT 'default', 'timer', 0, NULL, NULL,
           jsonb_build_object('due_ms', %(base)s::bigint + g, 'pending', true),
           'epoch'::timestamptz + (%(base)s::bigint + g) * interval '1 millisecond'
    FROM generate_series(%(lo)s::int, %(hi)s::int) AS g ORDER BY g
    RETURNING id, scheduled_at)
INSERT INTO procrastinate_events (job_id, type, at)
SELECT j.id, e.type, CASE e.o WHEN 1 THEN j.scheduled_at ELSE now() END
FROM j CROSS JOIN (VALUES (1, 'scheduled'::procrastinate_job_event_type),
                          (2, 'deferred'::procrastinate_job_event_type)) AS e(o, type)
ORDER BY j.id, e.o"""

CHECK_SQL = """
SELECT to_jsonb(j) - '{id,args,scheduled_at}'::text[], args, (extract(epoch FROM scheduled_at) * 1000)::bigint,
       (SELECT jsonb_agg(jsonb_build_array(e.type, e.at = j.scheduled_at, abs(extract(epoch FROM e.at - now())) < 600)
                         ORDER BY e.id)
        FROM procrastinate_events e WHERE e.job_id = j.id)
FROM procrastinate_jobs j ORDER BY scheduled_at LIMIT 2"""


async def insert_pending(app, timer, url, P):
    base = int(now_ms()) + DAY_MS
    t = time.perf_counter()
    await timer.configure(schedule_at=utc(base)).defer_async(due_ms=base, pending=True)

    async def slice_(lo, hi):
        async with await psycopg.AsyncConnection.connect(url) as conn:
            async with conn.transaction():
                await conn.execute("SET LOCAL session_replication_role = replica")
                await conn.execute(PENDING_SQL, {"base": base, "lo": lo, "hi": hi})

    # The API's row (timer 0) and the SQL's timer 1, the only rows yet, must agree on every column
    # but the id and their own args/scheduled_at, and carry the same events (type, at =
    # scheduled_at?, at ~ now?). Checked before the other P - 2: with them, CHECK_SQL (no index
    # serves it) took 5 s over the 1,000,000 rows.
    if P > 1:
        await slice_(1, 1)
    async with app.connector.pool.connection() as conn:
        rows = await (await conn.execute(CHECK_SQL)).fetchall()
    api = rows[0]
    if api[1] != {"due_ms": base, "pending": True} or api[2] != base:
        raise RuntimeError(f"pending check: API row {api}")
    if P > 1:
        sql = rows[1]
        if api[0] != sql[0] or api[3] != sql[3] or sql[1] != {"due_ms": base + 1, "pending": True} or sql[2] != base + 1:
            raise RuntimeError(f"pending check: API row {api} differs from SQL row {sql}")
    if P > 2:
        per = math.ceil((P - 2) / PENDING_WAYS)
        await asyncio.gather(*[slice_(lo, min(P - 1, lo + per - 1)) for lo in range(2, P, per)])
    secs = time.perf_counter() - t
    async with app.connector.pool.connection() as conn:
        n, maxid = await (await conn.execute("SELECT count(*), max(id) FROM procrastinate_jobs")).fetchone()
        nev = (await (await conn.execute("SELECT count(*) FROM procrastinate_events")).fetchone())[0]
    if n != P or nev != 2 * P:
        raise RuntimeError(f"pending insert wrote {n} jobs and {nev} events, wanted {P} and {2 * P}")
    return base, maxid, secs


async def timers(a):
    conc = a.concurrency or 16
    P = max(1, a.pending)
    p = {"jobs": a.jobs, "spread": a.spread, "lead": a.lead}
    app = make_app(a.url, conc + 2)
    rec = Record(a.jobs)
    timer = timed_task(app, rec)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        prod, worker = Producer("timers", a.url, p), None
        try:
            base, maxid, pend_s = await insert_pending(app, timer, a.url, P)
            print(f"procrastinate: {P} pending timers in {pend_s:.1f} s", file=sys.stderr)
            async with app.connector.pool.connection() as conn:
                await conn.execute("ANALYZE procrastinate_jobs")
                await conn.execute("ANALYZE procrastinate_events")
            await prod.wait_ready()
            w0 = now_ms()
            deadline_at = w0 + a.deadline * 1000
            worker = start_worker(app, conc, wait=True)
            await listening(app)
            T0 = await prod.go()
            completed, end_ms, partial = await measure(
                app, rec, prod, a.jobs, deadline_at, f"SELECT count(*) FROM procrastinate_jobs WHERE id > {maxid}")
            await stop_worker(worker)
            pending_left = await scalar(
                app, f"SELECT count(*) FROM procrastinate_jobs WHERE id <= {maxid} AND status = 'todo'")
        except BaseException:
            await abort(prod, worker)
            raise
        finally:
            prod.finish()
    if rec.pending_seen or pending_left != P:
        raise RuntimeError(f"pending timers touched: {rec.pending_seen} ran, {pending_left} of {P} left")
    step = a.spread * 1000.0 / a.jobs
    return {**schedule_result(rec, lambda i: T0 + i * step, completed, end_ms, partial, T0, deadline_at),
            "settings": settings(
                conc, spread_s=a.spread, lead_s=a.lead, pending=P, deadline_s=a.deadline,
                pending_insert=f"1 row by Task.configure(schedule_at).defer_async + INSERT … SELECT generate_series into "
                               f"procrastinate_jobs with the 2 procrastinate_events rows its triggers write, triggers off "
                               f"(session_replication_role replica): timer 1 first (columns and events checked equal to timer 0's), "
                               f"then the others in {PENDING_WAYS} slices on {PENDING_WAYS} connections at once",
                pending_insert_s=round(pend_s, 2),
                timers_insert=f"Task.configure(schedule_at=due).make_new_job per timer, App.job_manager."
                              f"batch_defer_jobs_async {TIMER_CHUNK} per call, from a process of its own",
                timers_insert_s=round(prod.insert_s.value, 2))}


WORKLOADS = {"drain": drain, "steady": steady, "timers": timers}  # a new workload is a new function here


def main():
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--workload", default="drain")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--concurrency", type=int, default=0)
    ap.add_argument("--url", required=True)
    ap.add_argument("--deadline", type=float, default=0)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--spread", type=float, default=60)
    ap.add_argument("--lead", type=float, default=10)
    ap.add_argument("--pending", type=int, default=1_000_000)
    a, _unknown = ap.parse_known_args()  # unknown arguments are accepted and ignored
    if not a.deadline:  # README's rule per workload (drain: none given, so 30 min)
        a.deadline = {"steady": a.jobs / a.rate + 10, "timers": a.lead + a.spread + 10}.get(a.workload, 1800)
    logging.basicConfig(level=logging.WARNING)
    # "App is instantiated in the main Python module": a hint for apps whose tasks are imported
    # by module path; this driver's worker finds its tasks on the very App that registered them.
    logging.getLogger("procrastinate.blueprints").setLevel(logging.ERROR)
    head = {"peer": NAME, "version": pkg_version("procrastinate"), "workload": a.workload}
    fn = WORKLOADS.get(a.workload)
    if fn is None:
        print(json.dumps({**head, "error": "not yet implemented"}), flush=True)
        return
    print(json.dumps({**head, **asyncio.run(fn(a))}), flush=True)


if __name__ == "__main__":
    main()
