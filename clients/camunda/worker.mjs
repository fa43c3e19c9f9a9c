// camunda-external-task-client-js against a kairos node, as its README's examples use it:
// subscribe to a topic, complete with process and local variables, fail with retries and a
// retry timeout (and see the task again), throw a BPMN error, extend a lock.
//
//   node worker.mjs http://127.0.0.1:PORT [expected-instances [api-token]]
//
// With a token, the client presents it as its README shows authentication: Camunda's
// BasicAuthInterceptor, the token as the password.
//
// One JSON line per step on stdout; exits 0 once every expected instance is done, non-zero
// on a surprise (an error from the engine, an unexpected variable, a timeout).
import { BasicAuthInterceptor, Client, Variables } from "camunda-external-task-client-js";

const base = process.argv[2];
const expected = Number(process.argv[3] ?? 3);
const token = process.argv[4];
const step = (o) => console.log(JSON.stringify(o));
const fail = (why) => {
  step({ step: "surprise", why: String(why) });
  process.exit(1);
};

const client = new Client({
  baseUrl: `${base}/engine-rest`,
  workerId: "js-worker",
  maxTasks: 5,
  lockDuration: 10000,
  asyncResponseTimeout: 5000,
  interval: 50,
  autoPoll: false,
  ...(token ? { interceptors: new BasicAuthInterceptor({ username: "demo", password: token }) } : {}),
});
client.on("poll:error", (e) => fail(`poll: ${e}`));
client.on("complete:error", (_t, e) => fail(`complete: ${e}`));
client.on("handleFailure:error", (_t, e) => fail(`handleFailure: ${e}`));
client.on("handleBpmnError:error", (_t, e) => fail(`handleBpmnError: ${e}`));
client.on("extendLock:error", (_t, e) => fail(`extendLock: ${e}`));

const failedOnce = new Set();
let done = 0;
const finish = () => {
  done += 1;
  if (done === expected) {
    step({ step: "done", instances: done });
    process.exit(0);
  }
};

client.subscribe("charge-card", async ({ task, taskService }) => {
  const kind = task.variables.get("kind");
  const amount = task.variables.get("amount");
  step({ step: "fetched", id: task.id, kind, amount, retries: task.retries, businessKey: task.businessKey });
  if (typeof amount !== "number") fail(`amount is ${typeof amount}`);
  if (kind === "declined") {
    const vars = new Variables().set("declineReason", "insufficient funds");
    await taskService.handleBpmnError(task, "CARD_DECLINED", "the card was declined", vars);
    step({ step: "bpmnError", id: task.id });
    return finish();
  }
  if (kind === "flaky" && !failedOnce.has(task.processInstanceId)) {
    failedOnce.add(task.processInstanceId);
    await taskService.handleFailure(task, {
      errorMessage: "payment gateway timed out",
      errorDetails: "Error: ETIMEDOUT\n    at charge (worker.mjs)",
      retries: task.retries ? task.retries - 1 : 2,
      retryTimeout: 1000,
    });
    step({ step: "failed", id: task.id });
    return;
  }
  await taskService.extendLock(task, 20000);
  const processVariables = new Variables();
  processVariables.set("charged", true);
  processVariables.set("receipt", { number: 42, lines: [amount] });
  processVariables.set("chargedBy", "js");
  const localVariables = new Variables();
  localVariables.set("winningDate", new Date("2026-01-02T03:04:05.678Z"));
  await taskService.complete(task, processVariables, localVariables);
  step({ step: "completed", id: task.id, kind, retried: failedOnce.has(task.processInstanceId) });
  finish();
});

setTimeout(() => fail("timed out"), 90000);
client.start();
