// Flowable's JavaScript external worker client, used as its README shows, against a kairos
// node: node worker.mjs BASE_URL [TOKEN]
//
// The test (crates/server/tests/clients_flowable.rs) has started instances of the `payment`
// model whose `case` variable says what this worker does with each job:
//   ok      → success with typed variables
//   flaky   → failure with retries 2 and retryTimeout PT1S, then success when seen again
//   decline → BPMN error CARD_DECLINED, caught by the model's boundary event
// One JSON line per step; exit 1 on anything unexpected or after 60 s.
import { ExternalWorkerClient } from "@flowable-oss/external-worker-client";

const [base, token] = process.argv.slice(2);
const say = (o) => console.log(JSON.stringify(o));
const fail = (why) => { say({ step: "error", why: String(why) }); process.exit(1); };
setTimeout(() => fail("not done within 60 s"), 60_000).unref();

const client = new ExternalWorkerClient({
    flowableHost: base,
    workerId: "js-worker",
    ...(token ? { auth: { token } } : {}),
});

const want = new Set(["ok", "flaky", "decline"]);
const seen = {};
let subscription;

subscription = client.subscribe({
    topic: "charge-card",
    lockDuration: "PT30S",
    numberOfTasks: 5,
    waitPeriodSeconds: 1,
    callbackHandler(job, result) {
        const vars = Object.fromEntries(job.variables.map((v) => [v.name, v]));
        const kase = vars.case?.value;
        if (vars.amount?.type !== "integer") fail(`amount arrived as ${JSON.stringify(vars.amount)}`);
        if (job.lockOwner !== "js-worker") fail(`lockOwner ${job.lockOwner}`);
        if (!(new Date(job.lockExpirationTime) > new Date())) fail(`lockExpirationTime ${job.lockExpirationTime}`);
        seen[kase] = (seen[kase] || 0) + 1;
        say({ step: "acquired", case: kase, job: job.id, processInstanceId: job.processInstanceId, retries: job.retries, elementId: job.elementId, time: Date.now() });
        let out;
        if (kase === "ok") {
            out = result.success()
                .variable("receipt", `R-${vars.amount.value}`, "string")
                .variable("charged", vars.amount.value, "integer")
                .variable("chargedAt", "2026-12-01T10:00:00.000Z", "date");
            want.delete("ok");
        } else if (kase === "flaky" && seen.flaky === 1) {
            out = result.failure().errorMessage("card service unavailable").errorDetails("503 from the card service").retries(2).retryTimeout("PT1S");
            say({ step: "failed", case: kase, time: Date.now() });
        } else if (kase === "flaky") {
            if (job.retries !== 2) fail(`the failed job came back with retries ${job.retries}, not 2`);
            out = result.success().variable("attempts", seen.flaky, "integer");
            want.delete("flaky");
        } else if (kase === "decline") {
            out = result.bpmnError().errorCode("CARD_DECLINED").variable("reason", "insufficient funds", "string");
            want.delete("decline");
        } else {
            fail(`unexpected case ${kase}`);
        }
        if (want.size === 0) {
            // Let the client send this last result, then stop polling.
            setTimeout(() => { subscription.unsubscribe(); say({ step: "done", seen }); }, 500);
        }
        return out;
    },
});
