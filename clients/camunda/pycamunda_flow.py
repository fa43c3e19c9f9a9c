"""pycamunda against a kairos node, the calls of its documentation's examples: deploy a model,
start instances by key, fetch and lock, complete with typed variables, fail with retries and a
retry timeout and fetch the task again, throw a BPMN error, extend and release a lock, list
external tasks and instances.

    python pycamunda_flow.py http://127.0.0.1:PORT model.bpmn

One JSON line per step; exits non-zero on a surprise.
"""

import json
import sys
import time

import pycamunda.deployment
import pycamunda.externaltask
import pycamunda.processdef
import pycamunda.processinst

url = sys.argv[1] + "/engine-rest"
model = sys.argv[2]
worker = "pycamunda-worker"


def step(**kw):
    print(json.dumps(kw, default=str), flush=True)


def expect(cond, why):
    if not cond:
        step(step="surprise", why=why)
        sys.exit(1)


create = pycamunda.deployment.Create(url=url, name="payment-pycamunda", enable_duplicate_filtering=True)
with open(model, "rb") as f:
    create.add_resource(f)
    deployment = create()
keys = [d.key for d in deployment.deployed_process_definitions.values()]
step(step="deployed", id=deployment.id_, keys=keys)
expect("payment" in keys, f"deployed {keys}")

instances = {}
for kind, amount in [("ok", 10), ("flaky", 20), ("declined", 999)]:
    start = pycamunda.processdef.StartInstance(url=url, key="payment", business_key=f"py-{kind}")
    start.add_variable(name="kind", value=kind)
    start.add_variable(name="amount", value=amount, type_="Integer")
    instance = start()
    instances[instance.id_] = kind
    step(step="started", id=instance.id_, kind=kind)

running = pycamunda.processinst.GetList(url=url, process_definition_key="payment")()
expect({i.id_ for i in running} >= set(instances), "the started instances are listed")


def fetch(max_tasks=10, timeout=5000):
    f = pycamunda.externaltask.FetchAndLock(url=url, worker_id=worker, max_tasks=max_tasks,
                                            async_response_timeout=timeout)
    f.add_topic(name="charge-card", lock_duration=10000)
    return f()


left = dict(instances)
failed = set()
unlocked = set()
deadline = time.monotonic() + 60
while left:
    expect(time.monotonic() < deadline, f"timed out with {left} left")
    for task in fetch():
        kind = instances.get(task.process_instance_id)
        if kind is None:
            continue
        step(step="fetched", id=task.id_, kind=kind, retries=task.retries, variables=sorted(task.variables or {}))
        expect(task.variables["amount"].value in (10, 20, 999), "amount is typed")
        if kind == "declined":
            err = pycamunda.externaltask.HandleBPMNError(url=url, id_=task.id_, worker_id=worker,
                                                         error_code="CARD_DECLINED", error_message="declined")
            err.add_variable(name="declineReason", value="insufficient funds")
            err()
            step(step="bpmnError", id=task.id_)
        elif kind == "flaky" and task.process_instance_id not in failed:
            failed.add(task.process_instance_id)
            pycamunda.externaltask.HandleFailure(url=url, id_=task.id_, worker_id=worker,
                                                 error_message="gateway timed out", error_details="ETIMEDOUT",
                                                 retries=2, retry_timeout=1000)()
            step(step="failed", id=task.id_)
            listed = pycamunda.externaltask.GetList(url=url, id_=task.id_)()
            expect(listed and listed[0].error_details == "ETIMEDOUT", f"error details listed: {listed}")
            continue
        elif task.process_instance_id not in unlocked:
            # Given back unworked: the next fetch gets it again at once.
            unlocked.add(task.process_instance_id)
            pycamunda.externaltask.Unlock(url=url, id_=task.id_)()
            step(step="unlocked", id=task.id_)
            continue
        else:
            pycamunda.externaltask.ExtendLock(url=url, id_=task.id_, new_duration=20000, worker_id=worker)()
            complete = pycamunda.externaltask.Complete(url=url, id_=task.id_, worker_id=worker)
            complete.add_variable(name="charged", value=True, type_="Boolean")
            complete.add_variable(name="chargedBy", value="pycamunda")
            complete()
            step(step="completed", id=task.id_, kind=kind)
        left.pop(task.process_instance_id, None)

count = pycamunda.externaltask.Count(url=url, topic_name="charge-card")()
step(step="done", open_external_tasks=count)
