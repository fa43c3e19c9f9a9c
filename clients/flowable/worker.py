"""Flowable's Python external worker client, used as its README shows, against a kairos node:
python worker.py BASE_URL [TOKEN [basic]]

With TOKEN the client authenticates with it as a bearer token, or with `basic` as the password
of HTTP Basic credentials (requests' HTTPBasicAuth, as Flowable's README shows for a user).

Same cases as worker.mjs (see there), plus the REST client's list_jobs and get_job. One JSON
line per step; exit 1 on anything unexpected or after 60 s.
"""
import json
import sys
import threading
import time

from flowable.external_worker_client import ExternalWorkerClient
from flowable.external_worker_client.restclient import FlowableExternalWorkerRestClient

base = sys.argv[1]
token = sys.argv[2] if len(sys.argv) > 2 else None


class Bearer:
    def __init__(self, token):
        self.token = token

    def __call__(self, r):
        r.headers["Authorization"] = "Bearer " + self.token
        return r


if token and len(sys.argv) > 3 and sys.argv[3] == "basic":
    from requests.auth import HTTPBasicAuth
    auth = HTTPBasicAuth("admin", token)
else:
    auth = Bearer(token) if token else None
errors = []


def say(**o):
    print(json.dumps(o), flush=True)


def check(ok, why):
    if not ok:
        errors.append(why)
        say(step="error", why=why)


# The REST client: list and get, before any job is locked.
rest = FlowableExternalWorkerRestClient(base, "py-worker", auth=auth)
jobs = rest.list_jobs()
check(jobs.total == 3 and len(jobs.data) == 3, f"list_jobs: total {jobs.total}, {len(jobs.data)} jobs")
check(jobs.sort == "id" and jobs.order == "asc", f"list_jobs: sort {jobs.sort}, order {jobs.order}")
one = rest.get_job(jobs.data[0].id)
check(one.id == jobs.data[0].id and one.create_time is not None, f"get_job: {vars(one)}")
say(step="listed", total=jobs.total)

want = {"ok", "flaky", "decline"}
seen = {}
done = threading.Event()


def handle(job, result):
    variables = {v.name: v for v in job.variables}
    case = variables["case"].value
    check(variables["amount"].type == "integer", f"amount arrived as {vars(variables['amount'])}")
    check(job.lock_owner == "py-worker", f"lock_owner {job.lock_owner}")
    check(job.lock_expiration_time is not None, "no lock_expiration_time")
    seen[case] = seen.get(case, 0) + 1
    say(step="acquired", case=case, job=job.id, processInstanceId=job.process_instance_id, retries=job.retries,
        time=time.time())
    if case == "ok":
        want.discard("ok")
        out = result.success().variable_string("receipt", "R-%s" % variables["amount"].value) \
            .variable_int("charged", variables["amount"].value)
    elif case == "flaky" and seen["flaky"] == 1:
        say(step="failed", case=case, time=time.time())
        out = result.failure().error_message("card service unavailable").error_details("503").retries(2) \
            .retry_timeout("PT1S")
    elif case == "flaky":
        check(job.retries == 2, f"the failed job came back with retries {job.retries}, not 2")
        want.discard("flaky")
        out = result.success().variable_int("attempts", seen["flaky"])
    elif case == "decline":
        want.discard("decline")
        out = result.bpmn_error().error_code("CARD_DECLINED").variable_string("reason", "insufficient funds")
    else:
        check(False, f"unexpected case {case}")
        out = None
    if not want:
        threading.Timer(0.5, done.set).start()
    return out


client = ExternalWorkerClient(base, worker_id="py-worker", auth=auth)
subscription = client.subscribe("charge-card", handle, lock_duration="PT30S", wait_period_seconds=1, number_of_tasks=5)
finished = done.wait(60)
subscription.unsubscribe(5)
if not finished:
    check(False, "not done within 60 s")
say(step="done", seen=seen)
sys.exit(1 if errors else 0)
