#!/usr/bin/env python3
"""SpiffWorkflow (PyPI, pinned in bench/requirements.txt) on the `process` workload.

    driver.py --workload process --jobs N [--deadline S] [--concurrency C] [--url URL]

IN MEMORY: SpiffWorkflow is a library that runs a workflow as Python objects; it has no store of
its own (an application serializes `BpmnWorkflow` to its own database if it wants durability).
So nothing here touches PostgreSQL (--url is ignored), nothing is persisted, and the report says
so next to the figures ("in_memory": true in the settings).

The BPMN is bench/peers/process/service-sync.bpmn, the very file kairos runs. How the service
task is bound: SpiffWorkflow's documented extension point is `BpmnParser.OVERRIDE_PARSER_CLASSES`
(BPMN tag -> (TaskParser, TaskSpec)). Its default ServiceTask spec does nothing and returns None,
which leaves the task STARTED (waiting) forever, so an implementation is required. Ours:
`KairosServiceTaskParser` reads the task's `kairos:handler` attribute (namespace urn:kairos:bpmn)
into a `KairosServiceTask` spec, whose `_execute` calls HANDLERS[handler] (here `log`, a no-op
like kairos' built-in one) and returns True (task completed).

Settings: the spec is parsed once (as an application caches its specs), then per instance
`BpmnWorkflow(spec)` + `do_engine_steps()` runs start -> service task -> end to completion; the
instance must be `is_completed()`. One instance after another in this one process: SpiffWorkflow
is synchronous Python (GIL), so more threads would not add throughput (--concurrency ignored).

"async": SpiffWorkflow has no asynchronous continuation (`camunda:asyncBefore` is an attribute
it ignores; there is no job executor), so `async_instances_per_s` is null with a note. The async
file is still parsed at start-up to check that SpiffWorkflow accepts it.
"""
import argparse
import json
import os
import sys
import time

from SpiffWorkflow.bpmn.parser.BpmnParser import BpmnParser, full_tag
from SpiffWorkflow.bpmn.parser.TaskParser import TaskParser
from SpiffWorkflow.bpmn.specs.defaults import ServiceTask
from SpiffWorkflow.bpmn.workflow import BpmnWorkflow
from SpiffWorkflow.version import __version__ as SPIFF_VERSION

HERE = os.path.dirname(os.path.abspath(__file__))
PROCESS_DIR = os.path.join(os.path.dirname(HERE), "process")
SYNC_FILE = os.path.join(PROCESS_DIR, "service-sync.bpmn")
ASYNC_FILE = os.path.join(PROCESS_DIR, "service-async.bpmn")
PROCESS_ID = "kairosBenchService"
KAIROS_NS = "urn:kairos:bpmn"


def log_handler(task):
    """kairos' built-in `log` handler, as a no-op (the benchmark measures the engine)."""
    return None


HANDLERS = {"log": log_handler}


class KairosServiceTask(ServiceTask):
    """A bpmn:serviceTask that runs the handler named by kairos:handler."""

    def __init__(self, wf_spec, bpmn_id, handler=None, **kwargs):
        super().__init__(wf_spec, bpmn_id, **kwargs)
        self.handler = handler

    def _execute(self, task):
        HANDLERS[self.handler](task)
        return True  # completed; None would leave the task STARTED


class KairosServiceTaskParser(TaskParser):
    def create_task(self):
        handler = self.node.get(f"{{{KAIROS_NS}}}handler")
        if handler not in HANDLERS:
            raise ValueError(f"service task {self.bpmn_id}: no handler {handler!r}")
        return self.spec_class(self.spec, self.bpmn_id, handler=handler, **self.bpmn_attributes)


class KairosBpmnParser(BpmnParser):
    OVERRIDE_PARSER_CLASSES = {
        **BpmnParser.OVERRIDE_PARSER_CLASSES,
        full_tag("serviceTask"): (KairosServiceTaskParser, KairosServiceTask),
    }


def load_spec(path):
    parser = KairosBpmnParser()
    parser.add_bpmn_file(path)
    return parser.get_spec(PROCESS_ID)


def run_instances(spec, n, deadline_s):
    """Runs up to n instances one after another, stopping at the deadline; (completed, seconds, CPU s)."""
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    stop = t0 + deadline_s
    done = 0
    while done < n:
        wf = BpmnWorkflow(spec)
        wf.do_engine_steps()
        if not wf.is_completed():
            raise SystemExit(f"instance {done} did not complete: "
                             f"{[(t.task_spec.bpmn_id, t.state) for t in wf.get_tasks()]}")
        done += 1
        if (done & 63) == 0 and time.perf_counter() > stop:
            break
    return done, time.perf_counter() - t0, time.process_time() - cpu0


def process(a):
    spec = load_spec(SYNC_FILE)
    load_spec(ASYNC_FILE)  # accepted; asyncBefore is ignored (no asynchronous continuations)
    run_instances(spec, min(200, a.jobs), 10)  # warm-up, not measured
    done, seconds, cpu_s = run_instances(spec, a.jobs, a.deadline)
    per_s = round(done / seconds, 1)
    return {
        "jobs": a.jobs, "completed": done, "partial": done < a.jobs, "seconds": round(seconds, 3),
        # CPU time of this process over the measured phase: the figure to trust on a loaded machine.
        "cpu_s": round(cpu_s, 3),
        "jobs_per_s": per_s, "sync_instances_per_s": per_s, "async_instances_per_s": None,
        "async_note": "SpiffWorkflow has no asynchronous continuations (camunda:asyncBefore is ignored; no job "
                      "executor): no async figure",
        "settings": {
            "in_memory": True,
            "persistence": "none: workflows are Python objects; SpiffWorkflow has no store of its own",
            "bpmn": "bench/peers/process/service-sync.bpmn",
            "service_task": "BpmnParser.OVERRIDE_PARSER_CLASSES: serviceTask -> a TaskSpec calling the "
                            "kairos:handler (`log`, no-op)",
            "instances": "spec parsed once; per instance BpmnWorkflow(spec) + do_engine_steps(), one after another",
            "concurrency": 1,
        },
    }


WORKLOADS = {"process": process}  # a new workload: a function here
JOB_WORKLOADS = {"drain", "steady", "timers"}  # job-queue workloads: nothing to measure here


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="process")
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--url", default="")
    ap.add_argument("--deadline", type=float, default=120)
    a, _ = ap.parse_known_args()  # another workload's arguments are ignored
    head = {"peer": "spiffworkflow", "version": SPIFF_VERSION, "workload": a.workload}
    fn = WORKLOADS.get(a.workload)
    if fn is None and a.workload in JOB_WORKLOADS:
        print(json.dumps({**head, "error": "not applicable: an in-memory BPMN library, not a job queue"}))
        return
    if fn is None:
        print(json.dumps({**head, "error": "not yet implemented"}))
        return
    print(json.dumps({**head, **fn(a)}))


if __name__ == "__main__":
    sys.exit(main())
