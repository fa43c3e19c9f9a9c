// Drives the kairos console in a real headless Chromium (Debian's, through playwright-core):
// logs in, visits every page, deploys a file by the file input, sees the diagram and its
// counts, edits a variable, moves a dead letter back, pauses a trigger, then logs in as a user
// and completes a task from the tasklist. Fails on any console error or page error.
//
//   node console.mjs BASE_URL SCREENSHOT_DIR BPMN_FILE
// Prints one JSON line per step; exits non-zero on the first surprise.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";

const [base, shots, bpmnFile] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });
const executablePath = process.env.KAIROS_CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
const problems = [];
const step = (name, extra = {}) => console.log(JSON.stringify({ step: name, ...extra }));

async function fresh() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { context, page };
}

async function check(name, page) {
  if (problems.length) throw new Error(`${name}: ${problems.join("; ")}`);
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  step(name);
}

async function login(page, user, password) {
  const t0 = Date.now();
  await page.goto(base + "/");
  await page.waitForSelector("#login-user");
  step("login-form", { interactiveMs: Date.now() - t0 });
  await page.fill("#login-user", user);
  await page.fill("#login-password", password);
  await page.click("button[type=submit]");
  await page.waitForSelector(`#who >> text=${user}`);
}

try {
  // ---- an admin ----
  let { context, page } = await fresh();
  await login(page, "kermit", "kermit-password");
  await page.waitForSelector("[data-card='running instances'] .n");
  await page.waitForFunction(() => document.querySelector("[data-card='running instances'] .n").textContent !== "—");
  await check("overview", page);

  await page.goto(base + "/#/definitions");
  await page.waitForSelector("#deploy-file");
  await page.setInputFiles("#deploy-file", bpmnFile);
  await page.waitForSelector("#toast >> text=deployed");
  await page.waitForSelector("a >> text=dropped");
  await check("definitions", page);

  await page.click("a >> text=work");
  await page.waitForSelector("#diagram .djs-container svg");
  await page.waitForSelector(".badge.tokens >> nth=0");
  const tokens = await page.$$eval("#diagram .badge.tokens", (b) => b.map((x) => x.textContent));
  const dead = await page.$$eval("#diagram .badge.dead", (b) => b.map((x) => x.textContent));
  if (!tokens.length || !dead.length) throw new Error(`definition counts: tokens ${tokens}, dead letters ${dead}`);
  if (!(await page.$(".bjs-powered-by"))) throw new Error("the bpmn.io watermark is not shown");
  await check("definition", page, { tokens, dead });

  await page.click("table a >> nth=0");
  await page.waitForSelector("#diagram .djs-element.k-active");
  await page.waitForSelector("#variables");
  await page.fill("#variables", JSON.stringify({ amount: 42, note: "from the browser" }));
  await page.click("#save-variables");
  await page.waitForSelector("#toast >> text=variables saved");
  await check("instance", page);

  await page.goto(base + "/#/jobs/dead");
  await page.waitForSelector("button[data-action=move]");
  // Filters: a handler no job has shows none; clearing it shows them again.
  await page.fill("#filter-handler", "no-such-handler");
  await page.click("form.row button[type=submit]");
  await page.waitForSelector("main >> text=None.");
  await page.fill("#filter-handler", "");
  await page.click("form.row button[type=submit]");
  await page.waitForSelector("button[data-action=move]");
  const before = await page.$$eval("button[data-action=move]", (b) => b.length);
  await page.click("button[data-action=move] >> nth=0");
  await page.waitForSelector("#toast >> text=moved back");
  await page.waitForFunction((n) => document.querySelectorAll("button[data-action=move]").length === n - 1, before);
  await check("dead-letters", page);

  await page.goto(base + "/#/scheduler");
  await page.waitForSelector("button.pause");
  await page.click("button.pause >> nth=0");
  await page.waitForSelector("#toast >> text=paused");
  await page.waitForSelector("td >> text=PAUSED");
  await check("scheduler", page);

  for (const p of ["instances", "tasks", "jobs", "jobs/timers", "consistency", "doctor"]) {
    await page.goto(`${base}/#/${p}`);
    await page.waitForSelector("main h1");
    await check(`page-${p.replace("/", "-")}`, page);
  }
  await page.click("#who button");
  await page.waitForSelector("#login-user");
  await context.close();

  // ---- an operator: no admin actions offered (each would be a 403) ----
  ({ context, page } = await fresh());
  await login(page, "fozzie", "fozzie-password");
  await page.goto(base + "/#/definitions");
  await page.waitForSelector("main h1");
  if (await page.$("#deploy-file")) throw new Error("an operator is offered deploying");
  await page.goto(base + "/#/jobs/dead");
  await page.waitForSelector("main table");
  if (await page.$("button[data-action=move]")) throw new Error("an operator is offered moving dead letters");
  await check("operator", page);
  await page.click("#who button");
  await page.waitForSelector("#login-user");
  await context.close();

  // ---- a user: their tasklist ----
  ({ context, page } = await fresh());
  await login(page, "gonzo", "gonzo-password");
  await page.goto(base + "/#/tasks");
  await page.waitForSelector("button.claim");
  await page.click("button.claim >> nth=0");
  await page.waitForSelector("#toast >> text=claimed");
  await page.waitForSelector("button.complete");
  // The review task's form comes from its model (camunda:formField): a checkbox and a number.
  await page.check(".task-form input[name=approved] >> nth=0");
  await page.fill(".task-form input[name=amount] >> nth=0", "250");
  await page.click("button.complete >> nth=0");
  await page.waitForSelector("#toast >> text=completed");
  await check("tasklist", page);
  await page.goto(base + "/#/jobs");
  await page.waitForSelector("main >> text=Your role may not see this page");
  await check("user-forbidden", page);
  await context.close();
  step("done");
} catch (e) {
  console.log(JSON.stringify({ step: "failed", error: String(e && e.stack || e), problems }));
  await browser.close();
  process.exit(1);
}
await browser.close();
