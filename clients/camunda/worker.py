"""camunda-external-task-client-python3 against a kairos node, as its README's example uses it:
a handler returning task.complete / task.failure (retries, retry timeout) / task.bpmn_error.

    python worker.py http://127.0.0.1:PORT [expected-instances [api-token]]

With a token, the client presents it as its README documents: `auth_basic`, the token as the
password.

One JSON line per step on stdout; exits 0 once every expected instance is done, non-zero on a
surprise. The worker's own loop (`subscribe`) never returns, so this program drives the same
`fetch_and_execute` rounds that `subscribe` does until its work is done.
"""

import json
import sys
import time

from camunda.external_task.external_task import ExternalTask, TaskResult
from camunda.external_task.external_task_worker import ExternalTaskWorker

base = sys.argv[1]
expected = int(sys.argv[2]) if len(sys.argv) > 2 else 3
config = {
    "maxTasks": 1,
    "lockDuration": 10000,
    "asyncResponseTimeout": 5000,
    "retries": 3,
    "retryTimeout": 1000,
    "sleepSeconds": 1,
}
if len(sys.argv) > 3:
    config["auth_basic"] = {"username": "demo", "password": sys.argv[3]}
failed_once = set()
done = 0


def step(**kw):
    print(json.dumps(kw), flush=True)


def surprise(why):
    step(step="surprise", why=str(why))
    sys.exit(1)


def handle(task: ExternalTask) -> TaskResult:
    global done
    kind = task.get_variable("kind")
    amount = task.get_variable("amount")
    step(step="fetched", id=task.get_task_id(), kind=kind, amount=amount, businessKey=task.get_business_key())
    if not isinstance(amount, int):
        surprise(f"amount is {amount!r}")
    if kind == "declined":
        done += 1
        return task.bpmn_error(error_code="CARD_DECLINED", error_message="the card was declined",
                               variables={"declineReason": "insufficient funds"})
    if kind == "flaky" and task.get_process_instance_id() not in failed_once:
        failed_once.add(task.get_process_instance_id())
        return task.failure(error_message="payment gateway timed out", error_details="Traceback: ETIMEDOUT",
                            max_retries=3, retry_timeout=1000)
    done += 1
    return task.complete({"charged": True, "chargedBy": "python", "receipt": {"value": json.dumps({"number": 7}), "type": "Json"}})


worker = ExternalTaskWorker(worker_id="python-worker", base_url=f"{base}/engine-rest", config=config)
deadline = time.monotonic() + 90
while done < expected:
    if time.monotonic() > deadline:
        surprise("timed out")
    try:
        worker.fetch_and_execute("charge-card", handle)
    except Exception as e:  # the library raises on an engine error
        surprise(e)
step(step="done", instances=done)
