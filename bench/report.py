#!/usr/bin/env python3
"""Regenerates bench/REPORT.md and bench/charts/*.png from a results file.

    bench/.venv/bin/python bench/report.py [bench/results/FILE.jsonl ...]

With several files, a workload measured in a later file replaces that workload of the earlier
ones (a `bench/run --workloads process` re-measures one workload for every peer). Without
arguments: the newest run of every workload (not `--quick`), plus the runs after it that
measured some workloads again.

The results file holds one {"kind": "meta", ...} line, then one line per (peer, workload):
either a measurement {"peer","version","workload","jobs","seconds","jobs_per_s",
"completed"?,"partial"?,"lateness_p50_ms"?,"lateness_p99_ms"?,"lateness_max_ms"?,"lateness_hist"?,
"settings":{...}} or {"peer","workload","error"}; a last {"kind": "end", "total_s"} line when the
run finished.
Charts need matplotlib (in bench/.venv); without it the report says so and has no charts.
"""
import glob
import json
import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
CHARTS = os.path.join(BENCH, "charts")
FLOOR = "sqlfloor-batch100"
KAIROS = "kairos-pg"
PROCESS = "process"  # the BPMN workload: instances/s sync and async, its own table and chart


ALL_WORKLOADS = {"drain", "steady", "timers", "scheduler", PROCESS}


def read(path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    meta = next((l for l in lines if l.get("kind") == "meta"), {})
    return meta, lines


def default_files():
    """The newest full run and the partial runs after it (by the date in the file name: a
    checkout gives every file the same mtime)."""
    files = sorted(glob.glob(os.path.join(BENCH, "results", "*.jsonl")))
    files = [f for f in files if not read(f)[0].get("quick")]
    full = [i for i, f in enumerate(files) if ALL_WORKLOADS <= set(read(f)[0].get("workloads", []))]
    if not files:
        sys.exit("report.py: no results in bench/results/ (run bench/run first)")
    return files[full[-1]:] if full else files[-1:]


def fmt(x, digits=0):
    if x is None:
        return "—"
    return f"{x:,.{digits}f}"


def ratio(a, b):
    if not a or not b:
        return "—"
    r = a / b
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


def charts(results, workloads):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return [], f"charts not drawn: {e}"
    os.makedirs(CHARTS, exist_ok=True)
    made = []
    for w in workloads:
        if w == PROCESS:
            rows = process_rows([r for r in results if r["workload"] == w])
            if rows:
                made.append(process_chart(plt, w, rows))
            continue
        ok = [r for r in results if r["workload"] == w and not r.get("error") and r.get("jobs_per_s")]
        if not ok:
            continue
        ok.sort(key=lambda r: r["jobs_per_s"])
        late = [r for r in ok if r.get("lateness_hist")]
        if late:
            # A lateness workload runs at a fixed rate: its jobs/s says nothing, its distribution does.
            made.append(lateness_chart(plt, w, late))
            continue
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(ok) + 1.5))
        colors = ["#c0392b" if r["peer"].startswith("kairos") else "#7f8c8d" if r["peer"].startswith("sqlfloor")
                  else "#2980b9" for r in ok]
        bars = ax.barh([r["peer"] for r in ok], [r["jobs_per_s"] for r in ok], color=colors)
        ax.set_xscale("log")
        ax.set_xlabel("jobs/s (log scale)")
        ax.set_title(f"{w}: throughput ({ok[0]['jobs']:,} jobs)" if len({r['jobs'] for r in ok}) == 1
                     else f"{w}: throughput")
        for b, r in zip(bars, ok):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {r['jobs_per_s']:,.0f}", va="center", fontsize=8)
        ax.margins(x=0.2)
        fig.tight_layout()
        name = f"{w}-throughput.png"
        fig.savefig(os.path.join(CHARTS, name), dpi=100)
        plt.close(fig)
        made.append((w, "throughput", name))
    return made, None


def lateness_chart(plt, w, late):
    """A cumulative distribution of lateness per peer, from the drivers' histograms."""
    fig, ax = plt.subplots(figsize=(9, 5))
    for r in sorted(late, key=lambda r: r.get("lateness_p99_ms") or 0):
        total = sum(c for _, c in r["lateness_hist"]) or 1
        xs, ys, acc = [], [], 0
        for upper, count in r["lateness_hist"]:
            acc += count
            xs.append(upper if upper is not None else 100_000)
            ys.append(100.0 * acc / total)
        style = dict(linewidth=2.5, color="#c0392b" if r["peer"] == KAIROS else "#e67e22") \
            if r["peer"].startswith("kairos") else dict(linewidth=1.2)
        ax.plot(xs, ys, marker="o", markersize=3, label=r["peer"], **style)
    ax.set_xscale("log")
    ax.set_xlabel("lateness, due → start (ms, log scale; the last step is > 50 s)")
    ax.set_ylabel("% of jobs started within")
    ax.set_ylim(0, 101)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"{w}: lateness distribution (cumulative)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    name = f"{w}-lateness.png"
    fig.savefig(os.path.join(CHARTS, name), dpi=100)
    plt.close(fig)
    return (w, "lateness", name)


def process_rows(rows):
    """The measured rows of the `process` workload (a sync or an async figure), fastest sync first."""
    ok = [r for r in rows if not r.get("error") and
          (r.get("sync_instances_per_s") is not None or r.get("async_instances_per_s") is not None)]
    return sorted(ok, key=lambda r: -(r.get("sync_instances_per_s") or 0))


def in_memory(r):
    return bool((r.get("settings") or {}).get("in_memory"))


def runs_on(r):
    if in_memory(r):
        return "in memory ‡"
    store = (r.get("settings") or {}).get("store")
    return {"postgres": "PostgreSQL", "sqlite": "SQLite"}.get(store, store or "?")


def process_chart(plt, w, rows):
    """Instances/s, sync and async side by side per peer; the in-memory peers hatched and labelled."""
    from matplotlib.patches import Patch
    rows = list(reversed(rows))  # barh draws bottom-up: fastest sync on top
    fig, ax = plt.subplots(figsize=(9, 0.75 * len(rows) + 1.8))
    h = 0.38
    top = max(max(r.get("sync_instances_per_s") or 0, r.get("async_instances_per_s") or 0) for r in rows) or 1
    for y, r in enumerate(rows):
        for off, key, color in ((h / 2, "sync_instances_per_s", "#c0392b"), (-h / 2, "async_instances_per_s", "#e67e22")):
            v = r.get(key)
            if v is None:
                ax.text(0, y + off, " — (no async)", va="center", fontsize=8, color="#555")
                continue
            ax.barh(y + off, v, height=h, color=color, hatch="//" if in_memory(r) else None,
                    edgecolor="white" if in_memory(r) else color)
            ax.text(v + top * 0.01, y + off, f"{v:,.0f}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['peer']}\n(in memory)" if in_memory(r) else r["peer"] for r in rows], fontsize=9)
    ax.set_xlabel("process instances/s")
    ax.set_xlim(0, top * 1.15)
    n = {r.get("jobs") for r in rows}
    ax.set_title(f"{w}: start → service task → end" + (f" ({n.pop():,} instances)" if len(n) == 1 else ""))
    handles = [Patch(color="#c0392b", label="synchronous"), Patch(color="#e67e22", label="async (asyncBefore)")]
    if any(in_memory(r) for r in rows):
        handles.append(Patch(facecolor="#bbb", hatch="//", edgecolor="white", label="in memory: no store"))
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(handles))
    fig.tight_layout()
    name = f"{w}-instances.png"
    fig.savefig(os.path.join(CHARTS, name), dpi=100)
    plt.close(fig)
    return (w, "instances/s", name)


def process_section(rows):
    """The `process` workload's table: instances/s sync and async, and where each peer keeps its state."""
    out = []
    measured = process_rows(rows)
    kairos = next((r.get("sync_instances_per_s") for r in measured if r["peer"] == KAIROS), None)
    if measured:
        out.append("| peer | version | runs on | instances | sync instances/s | async instances/s "
                   "| kairos-pg ÷ peer (sync) |")
        out.append("|---|---|---|---:|---:|---:|---:|")
        for r in measured:
            name = f"**{r['peer']}**" if r["peer"].startswith("kairos") else r["peer"]
            done = fmt(r.get("completed", r.get("jobs")))
            if r.get("partial"):
                done = f"{done} of {fmt(r.get('jobs'))} †"
            asy = fmt(r.get("async_instances_per_s")) if r.get("async_instances_per_s") is not None else "— §"
            out.append(f"| {name} | {r.get('version', '?')} | {runs_on(r)} | {done} "
                       f"| {fmt(r.get('sync_instances_per_s'))} | {asy} "
                       f"| {ratio(kairos, r.get('sync_instances_per_s'))} |")
        out.append("")
        out.append("Every peer runs the same BPMN file, `bench/peers/process/service-sync.bpmn` (start → service task "
                   "`kairos:handler=\"log\"` → end; each binds the task to a no-op its own way, see its driver); "
                   "async runs `service-async.bpmn`, the same with `camunda:asyncBefore=\"true\"` on the task. "
                   "kairos writes every instance with full history to its store; async instances/s counts from the "
                   "first start until the last instance has ended.\n")
        mem = [r for r in measured if in_memory(r)]
        if mem:
            out.append("‡ **In memory**: " + ", ".join(r["peer"] for r in mem) + " keep the instance as objects in "
                       "the driver's process and write nothing: no store, no transaction, no history, nothing "
                       "survives a crash. Their instances/s is the cost of interpreting the model alone, not a durable "
                       "throughput like kairos' figures.\n")
            for r in mem:
                if r.get("cpu_s") and r.get("completed"):
                    out.append(f"- {r['peer']}: {1000 * r['cpu_s'] / r['completed']:.2f} ms of CPU per instance "
                               f"({r['completed'] / r['cpu_s']:,.0f} instances per CPU-second; the figure to trust "
                               "on a loaded machine)")
            out.append("")
        notes = [r for r in measured if r.get("async_instances_per_s") is None]
        if notes:
            out.append("§ no async figure:\n")
            for r in notes:
                out.append(f"- {r['peer']}: {r.get('async_note') or r.get('async_error') or 'not measured'}")
            out.append("")
        if any(r.get("partial") for r in measured):
            out.append("† stopped at the workload's deadline (see bench/README.md): instances/s is what it completed "
                       "in that time.\n")
        errs = [(r["peer"], r[k]) for r in measured for k in ("sync_error", "async_error") if r.get(k)]
        if errs:
            out.append("Variants that failed:\n")
            for peer, e in errs:
                e = e.strip().replace("\n", "\n    ")
                out.append(f"- **{peer}**:\n\n    {e}\n")
    unmeasured = sorted({r["peer"] for r in rows if r.get("error") == "not yet implemented"
                         or (not r.get("error") and r not in measured)})
    if unmeasured:
        out.append(f"Not part of this workload (job queues without a BPMN engine, or not yet implemented): "
                   f"{', '.join(unmeasured)}.\n")
    out.extend(not_run(rows))
    return out



def not_run(rows):
    """Report lines for a workload's peers that did not run: not applicable (with the reason),
    then failures quoting the driver's output."""
    out = []
    na = [r for r in rows if (r.get("error") or "").startswith("not applicable")]
    for r in na:
        out.append(f"- {r['peer']}: {r['error']}")
    if na:
        out.append("")
    failed = [r for r in rows if r.get("error") and r.get("error") != "not yet implemented"
              and not r["error"].startswith("not applicable")]
    if failed:
        out.append("Could not run:\n")
        for r in failed:
            err = r["error"].strip().replace("\n", "\n    ")
            out.append(f"- **{r['peer']}**:\n\n    {err}\n")
    return out

def main():
    paths = sys.argv[1:] or default_files()
    # Later files replace the workloads they measured; the first file's meta describes the run.
    meta, workloads, results, sources = {}, [], [], []
    end = None
    for path in paths:
        m_, lines = read(path)
        rs = [l for l in lines if l.get("kind") not in ("meta", "end")]
        measured = m_.get("workloads") or sorted({r["workload"] for r in rs})
        results = [r for r in results if r["workload"] not in measured] + rs
        workloads += [w for w in measured if w not in workloads]
        sources.append((path, m_, measured))
        if not meta:
            meta = m_
            end = next((l for l in lines if l.get("kind") == "end"), None)
    m = meta.get("machine", {})
    made, chart_note = charts(results, workloads)

    out = []
    out.append("# kairos beside the job queues people would pick instead\n")
    out.append("Generated by `bench/run` (see [README.md](README.md)) from "
               + ", ".join(f"`{os.path.relpath(p, BENCH)}`" for p, _, _ in sources) + "; do not edit by hand.\n")
    if meta.get("quick"):
        out.append("> **Smoke run (`--quick`)**: small N, figures dominated by start-up costs; not for comparison.\n")
    out.append(f"- Date: {meta.get('date', '?')} (kairos at `{meta.get('git', '?')}`)")
    for p, m_, measured in sources[1:]:
        out.append(f"- Workload{'s' if len(measured) > 1 else ''} {', '.join(f'`{w}`' for w in measured)} measured "
                   f"again on {m_.get('date', '?')} (kairos at `{m_.get('git', '?')}`, "
                   f"`{os.path.relpath(p, BENCH)}`): those sections are from that run")
    out.append(f"- Machine: {m.get('nproc', '?')} CPUs ({m.get('cpu', '?')}), {m.get('memory', '?')} memory, "
               f"Linux {m.get('kernel', '?')}; client and server on the same cores")
    pgs = meta.get("pg_settings", {})
    out.append(f"- PostgreSQL {meta.get('postgresql', '?')} (scripts/pg.sh settings: "
               + ", ".join(f"{k}={v}" for k, v in pgs.items()) + "), a fresh database per run")
    out.append(f"- Toolchains: {m.get('node')}, Python {m.get('python')}, {m.get('java')}, {m.get('rustc')}")
    if end:
        out.append(f"- The whole run took {end['total_s'] / 60:.1f} min, of which {meta.get('install_s', 0) / 60:.1f} "
                   "min installing and building")
    out.append("- Single runs, one after the other; expect ±15 % between runs.\n")

    for w in workloads:
        rows = [r for r in results if r["workload"] == w]
        ok = [r for r in rows if not r.get("error")]
        floor = next((r.get("jobs_per_s") for r in ok if r["peer"] == FLOOR), None)
        kairos = next((r.get("jobs_per_s") for r in ok if r["peer"] == KAIROS), None)
        out.append(f"## Workload `{w}`\n")
        if w == PROCESS:
            out.extend(process_section(rows))
            out.extend(f"![{w} {kind}](charts/{name})\n" for (cw, kind, name) in made if cw == w)
            continue
        if ok and all(r.get("jobs_per_s") is None for r in ok):
            pass
        measured = [r for r in ok if r.get("jobs_per_s") is not None]
        lateness = any(r.get("lateness_p99_ms") is not None for r in measured)
        k_p99 = next((r.get("lateness_p99_ms") for r in ok if r["peer"] == KAIROS), None)
        if measured:
            if lateness:
                out.append("| peer | version | jobs started | jobs/s | lateness p50 / p99 / max ms "
                           "| peer p99 ÷ kairos-pg p99 |")
                out.append("|---|---|---:|---:|---:|---:|")
            else:
                out.append("| peer | version | jobs | jobs/s | ÷ SQL floor | kairos-pg ÷ peer |")
                out.append("|---|---|---:|---:|---:|---:|")
            order = (lambda r: (r.get("lateness_p99_ms") is None, r.get("lateness_p99_ms") or 0)) if lateness \
                else (lambda r: -r["jobs_per_s"])
            for r in sorted(measured, key=order):
                name = f"**{r['peer']}**" if r["peer"].startswith("kairos") else r["peer"]
                jobs = fmt(r.get("completed", r.get("jobs")))
                if r.get("partial"):
                    jobs = f"{jobs} of {fmt(r.get('jobs'))} †"
                if lateness:
                    late = " / ".join(fmt(r.get(k), 1) for k in ("lateness_p50_ms", "lateness_p99_ms",
                                                                  "lateness_max_ms"))
                    if r.get("partial"):
                        late += " ≥"
                    out.append(f"| {name} | {r.get('version', '?')} | {jobs} | {fmt(r['jobs_per_s'])} | {late} "
                               f"| {ratio(r.get('lateness_p99_ms'), k_p99)} |")
                else:
                    out.append(f"| {name} | {r.get('version', '?')} | {jobs} | {fmt(r['jobs_per_s'])} "
                               f"| {ratio(r['jobs_per_s'], floor)} | {ratio(kairos, r['jobs_per_s'])} |")
            out.append("")
            if any(r.get("partial") for r in measured):
                out.append("† stopped at the workload's deadline (see bench/README.md): jobs/s is what it completed "
                           "in that time; lateness counts unstarted jobs at deadline − due, so it is a lower bound "
                           "(≥).\n")
            if lateness:
                out.append("Lateness is handler start − due (one machine, one clock). peer p99 ÷ kairos-pg p99 > 1 "
                           "means kairos on PostgreSQL started its jobs closer to their due time.\n")
            else:
                out.append(f"÷ SQL floor: the peer's jobs/s over `{FLOOR}` (pgbench replaying claim 100 + delete, "
                           "the physical limit here). kairos-pg ÷ peer > 1 means kairos on PostgreSQL is faster.\n")
        nyi = [r for r in ok if r.get("jobs_per_s") is None] + \
              [r for r in rows if r.get("error") == "not yet implemented"]
        nyi_names = sorted({r["peer"] for r in nyi})
        if nyi_names:
            out.append(f"Not yet implemented for this workload: {', '.join(nyi_names)}.\n")
        out.extend(not_run(rows))
        for (cw, kind, name) in made:
            if cw == w:
                out.append(f"![{w} {kind}](charts/{name})\n")

    out.append("## Settings of each peer\n")
    out.append("As each driver reported them (the driver's comments say why; bench/README.md has the list).\n")
    seen = set()
    for r in results:
        if r.get("settings") and r["peer"] not in seen:
            seen.add(r["peer"])
            s = ", ".join(f"{k}={v}" for k, v in r["settings"].items())
            out.append(f"- **{r['peer']}** {r.get('version', '')}: {s}")
    out.append("")
    extra = [r for r in results if not r.get("error") and (r.get("enqueue_per_s") or r.get("queue_wait_p50_ms"))]
    if extra:
        out.append("## Side figures\n")
        for r in extra:
            bits = []
            if r.get("enqueue_per_s"):
                bits.append(f"enqueue {fmt(r['enqueue_per_s'])} jobs/s")
            if r.get("queue_wait_p50_ms") is not None:
                bits.append(f"time queued before start p50 {fmt(r['queue_wait_p50_ms'], 1)} ms / "
                            f"p99 {fmt(r.get('queue_wait_p99_ms'), 1)} ms")
            out.append(f"- {r['peer']} ({r['workload']}): " + "; ".join(bits))
        out.append("")
    if chart_note:
        out.append(f"_{chart_note}_\n")
    open(os.path.join(BENCH, "REPORT.md"), "w").write("\n".join(out))
    print(f"report.py: wrote bench/REPORT.md from {', '.join(os.path.relpath(p, BENCH) for p in paths)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
