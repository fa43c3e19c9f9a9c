// The kairos console: one page over the node's own HTTP API (the same routes, roles and
// checks as every other client). No framework and no build step: every value from the API is
// put into the page as text (never as HTML), diagrams are drawn by the vendored bpmn-js
// viewer, and the page a person watches polls its data every few seconds.
"use strict";

const state = { me: null, csrf: null, timer: null, viewer: null };

// ---- the API -------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(method, path, body, opts = {}) {
  const headers = {};
  let payload = body;
  if (body !== undefined && !(body instanceof FormData)) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  if (method !== "GET" && state.csrf) headers["X-CSRF-Token"] = state.csrf;
  const res = await fetch(path, { method, headers, body: payload, credentials: "same-origin" });
  if (res.status === 401 && !opts.quiet401) { showLogin(); throw new ApiError(401, "log in first"); }
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
  if (!res.ok) {
    const msg = (json && json.error && json.error.message) || text || res.statusText;
    throw new ApiError(res.status, msg);
  }
  return opts.text ? text : json;
}

/// A total from a list route, or null when the caller may not see it.
async function total(path) {
  try { return (await api("GET", path)).total; } catch (e) { return null; }
}

// ---- building the page ---------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function table(headers, rows) {
  if (!rows.length) return h("p", { class: "muted" }, "None.");
  return h("table", {}, h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
}

/// Admin-only actions (deploy, delete, migrate, dead letters) are offered to admins only: an
/// operator would get a 403 for each (crates/server/src/authz.rs).
function isAdmin() { return !state.me || state.me.role === "admin"; }

function when(t) { return t ? new Date(t).toLocaleString() : "—"; }
function link(href, text) { return h("a", { href }, text); }
function main(...children) { const m = document.getElementById("main"); m.replaceChildren(...children); return m; }

function toast(message, bad) {
  const el = h("div", { class: bad ? "bad" : "" }, message);
  document.getElementById("toast").append(el);
  setTimeout(() => el.remove(), 5000);
}

/// Runs an action, says what happened, and redraws the page.
async function act(label, f) {
  try { await f(); toast(label); } catch (e) { toast(`${label} failed: ${e.message}`, true); }
  route();
}

function live(f, ms = 4000) {
  clearInterval(state.timer);
  state.timer = setInterval(() => { if (!document.hidden) f().catch(() => {}); }, ms);
}

// ---- login ---------------------------------------------------------------------------------

function showLogin(message) {
  clearInterval(state.timer);
  document.getElementById("who").replaceChildren();
  const err = h("p", { class: "error" }, message || "");
  const user = h("input", { id: "login-user", autocomplete: "username", required: true });
  const pass = h("input", { id: "login-password", type: "password", autocomplete: "current-password", required: true });
  const form = h("form", { class: "login", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const s = await api("POST", "/auth/login", { userId: user.value, password: pass.value }, { quiet401: true });
      state.me = s; state.csrf = s.csrfToken;
      showWho(); showNav(); route();
    } catch (e) { err.textContent = e.message; }
  } }, h("h1", {}, "Log in to kairos"), h("label", { for: "login-user" }, "User"), user,
    h("label", { for: "login-password" }, "Password"), pass, h("button", { class: "primary", type: "submit" }, "Log in"), err);
  main(form);
}

function showWho() {
  const me = state.me;
  const who = document.getElementById("who");
  if (!me || !me.userId) { who.replaceChildren(h("span", {}, "admin (no login)")); return; }
  const tenant = me.tenantId ? ` · tenant ${me.tenantId}` : "";
  who.replaceChildren(h("span", {}, `${me.userId} · ${me.role}${tenant}`), h("button", { onclick: async () => {
    await api("POST", "/auth/logout").catch(() => {});
    state.me = null; state.csrf = null; showLogin();
  } }, "Log out"));
}

// ---- pages ---------------------------------------------------------------------------------

async function overview() {
  const cards = h("div", { class: "cards" });
  const doctor = h("div");
  const nodes = h("div");
  const draw = async () => {
    const [instances, tasks, jobs, timers, dead, failing, triggers] = await Promise.all([
      total("/runtime/process-instances?size=0"), total("/runtime/tasks?size=0"), total("/management/jobs?size=0"),
      total("/management/timer-jobs?size=0"), total("/management/deadletter-jobs?size=0"),
      total("/management/jobs?withException=true&size=0"), total("/scheduler/triggers?size=0"),
    ]);
    const card = (label, n, href) => h("div", { class: "card", "data-card": label }, h("a", { href }, h("div", { class: "n" }, n === null ? "—" : n), h("div", { class: "muted" }, label)));
    cards.replaceChildren(card("running instances", instances, "#/instances"), card("open tasks", tasks, "#/tasks"),
      card("jobs", jobs, "#/jobs"), card("timers waiting", timers, "#/jobs/timers"), card("dead letters", dead, "#/jobs/dead"),
      card("failing jobs", failing, "#/jobs"), card("scheduler triggers", triggers, "#/scheduler"));
    try {
      const eng = await api("GET", "/management/engine");
      nodes.replaceChildren(table(["node", "state", "workers", "last heartbeat"], (eng.nodes || []).map((n) =>
        [n.id, n.alive ? "alive" : n.state, n.workers, `${when(n.lastHeartbeat)} (${n.heartbeatAgeSeconds}s ago)`])));
    } catch (_) { nodes.replaceChildren(); }
    try {
      const d = await api("GET", "/management/doctor");
      const worst = (d.findings || [])[0];
      doctor.replaceChildren(h("p", {}, "Worst finding: ", worst ? h("span", { class: `sev-${worst.severity}` }, `${worst.severity}: ${worst.title}`) : "none", " ", link("#/doctor", "all findings")));
    } catch (_) { doctor.replaceChildren(); }
  };
  main(h("h1", {}, "Overview"), cards, h("h2", {}, "Doctor"), doctor, h("h2", {}, "Nodes"), nodes);
  await draw();
  live(draw);
}

async function drawDiagram(container, xml) {
  container.replaceChildren();
  if (state.viewer) { state.viewer.destroy(); state.viewer = null; }
  const viewer = new window.BpmnJS({ container });
  state.viewer = viewer;
  await viewer.importXML(xml);
  viewer.get("canvas").zoom("fit-viewport");
  return viewer;
}

function countOverlays(viewer, stats) {
  const overlays = viewer.get("overlays");
  overlays.remove({ type: "kairos" });
  for (const s of stats) {
    const html = h("div", { class: "overlay" },
      s.instances ? h("span", { class: "badge tokens", title: "active tokens" }, s.instances) : null,
      s.jobs ? h("span", { class: "badge jobs", title: "jobs" }, s.jobs) : null,
      s.failedJobs ? h("span", { class: "badge dead", title: "dead letters" }, s.failedJobs) : null);
    try { overlays.add(s.id, "kairos", { position: { bottom: 8, left: -8 }, html }); } catch (_) { /* not drawn */ }
  }
}

async function definitions() {
  const list = await api("GET", "/repository/process-definitions?size=1000&sort=name");
  const drop = h("div", { class: "drop", id: "drop" }, "Drop BPMN or DMN files here to deploy them, or ",
    h("input", { type: "file", id: "deploy-file", multiple: true, onchange: (ev) => deploy(ev.target.files) }));
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => { ev.preventDefault(); drop.classList.remove("over"); deploy(ev.dataTransfer.files); });
  main(h("h1", {}, "Process definitions"), isAdmin() ? drop : null,
    table(["key", "name", "version", "id", "state"], list.data.map((d) =>
      [link(`#/definitions/${encodeURIComponent(d.id)}`, d.key), d.name || "", d.version, h("span", { class: "mono" }, d.id), d.suspended ? "suspended" : "active"])));
}

async function deploy(files) {
  if (!files || !files.length) return;
  const form = new FormData();
  for (const f of files) form.append("file", f, f.name);
  await act(`deployed ${[...files].map((f) => f.name).join(", ")}`, () => api("POST", "/repository/deployments", form));
}

async function definition(id) {
  const d = await api("GET", `/repository/process-definitions/${encodeURIComponent(id)}`);
  const xml = await api("GET", `/repository/process-definitions/${encodeURIComponent(id)}/resourcedata`, undefined, { text: true });
  const box = h("div", { class: "diagram", id: "diagram" });
  const instances = h("div");
  main(h("h1", {}, `${d.name || d.key} · version ${d.version}`), h("p", { class: "mono muted" }, d.id),
    h("div", { class: "row" }, h("span", { class: "badge tokens" }, "n"), "active tokens", h("span", { class: "badge jobs" }, "n"), "jobs",
      h("span", { class: "badge dead" }, "n"), "dead letters"), box, h("h2", {}, "Running instances"), instances);
  const viewer = await drawDiagram(box, xml);
  const draw = async () => {
    countOverlays(viewer, await api("GET", `/engine-rest/process-definition/${encodeURIComponent(id)}/statistics`));
    const all = await api("GET", `/runtime/process-instances?processDefinitionKey=${encodeURIComponent(d.key)}&size=1000`);
    instances.replaceChildren(table(["instance", "business key", "started", "state"], all.data.filter((i) => i.processDefinitionId === id).map((i) =>
      [link(`#/instances/${encodeURIComponent(i.id)}`, i.id), i.businessKey || "", when(i.startTime), i.suspended ? "suspended" : "active"])));
  };
  await draw();
  live(draw);
}

async function instances() {
  const all = await api("GET", "/runtime/process-instances?size=1000&sort=startTime&order=desc");
  main(h("h1", {}, "Running process instances"), table(["instance", "definition", "business key", "started", "state"], all.data.map((i) =>
    [link(`#/instances/${encodeURIComponent(i.id)}`, i.id), i.processDefinitionKey, i.businessKey || "", when(i.startTime), i.suspended ? "suspended" : "active"])));
}

async function instance(id) {
  const q = encodeURIComponent(id);
  const inst = await api("GET", `/runtime/process-instances/${q}`);
  const xml = await api("GET", `/repository/process-definitions/${encodeURIComponent(inst.processDefinitionId)}/resourcedata`, undefined, { text: true });
  const box = h("div", { class: "diagram", id: "diagram" });
  const parts = { tree: h("div"), vars: h("div"), tasks: h("div"), jobs: h("div"), log: h("div"), history: h("div") };
  const reason = h("input", { id: "delete-reason", placeholder: "reason", value: "deleted from the console" });
  // Migration (same activity ids): to another version of the key, the latest when none is chosen.
  const versions = await api("GET", `/repository/process-definitions?key=${encodeURIComponent(inst.processDefinitionKey)}&size=100&sort=version&order=desc`);
  const migrateTo = h("select", { id: "migrate-to", title: "migrate to version" }, h("option", { value: "" }, "latest version"),
    versions.data.filter((d) => d.id !== inst.processDefinitionId).map((d) => h("option", { value: d.id }, `version ${d.version}`)));
  const actions = h("div", { class: "row" },
    h("button", { onclick: () => act(inst.suspended ? "activated" : "suspended", () => api("PUT", `/runtime/process-instances/${q}`, { action: inst.suspended ? "activate" : "suspend" })) }, inst.suspended ? "Activate" : "Suspend"),
    isAdmin() ? [reason,
      h("button", { class: "danger", onclick: () => act("deleted", async () => {
        await api("DELETE", `/runtime/process-instances/${q}?deleteReason=${encodeURIComponent(reason.value)}`);
        location.hash = "#/instances";
      }) }, "Delete"),
      migrateTo,
      h("button", { id: "migrate", onclick: () => act("migrated", () => api("POST", `/runtime/process-instances/${q}/migrate`,
        migrateTo.value ? { toProcessDefinitionId: migrateTo.value } : {})) }, "Migrate")] : null);
  main(h("h1", {}, `Instance of ${inst.processDefinitionKey}`), h("p", { class: "mono muted" }, id, inst.businessKey ? ` · ${inst.businessKey}` : "", inst.suspended ? " · suspended" : ""),
    actions, box, h("h2", {}, "Tasks"), parts.tasks, h("h2", {}, "Variables"), parts.vars, h("h2", {}, "Jobs"), parts.jobs,
    h("h2", {}, "Execution tree"), parts.tree, h("h2", {}, "Job log"), parts.log, h("h2", {}, "History"), parts.history);
  const viewer = await drawDiagram(box, xml);
  const canvas = viewer.get("canvas");
  let marked = [];
  const draw = async () => {
    const [execs, hist, tasks, jobs, dead, log, vars] = await Promise.all([
      api("GET", `/runtime/executions?processInstanceId=${q}`), api("GET", `/history/historic-activity-instances?processInstanceId=${q}&size=1000`),
      api("GET", `/runtime/tasks?processInstanceId=${q}`), api("GET", `/management/jobs?processInstanceId=${q}`),
      api("GET", `/management/deadletter-jobs?processInstanceId=${q}`), api("GET", `/history/job-log?processInstanceId=${q}`),
      api("GET", `/runtime/process-instances/${q}/variables`)]);
    for (const [el, cls] of marked) { try { canvas.removeMarker(el, cls); } catch (_) { /* gone */ } }
    marked = [];
    const mark = (el, cls) => { try { canvas.addMarker(el, cls); marked.push([el, cls]); } catch (_) { /* not drawn */ } };
    for (const a of hist.data) if (a.endTime) mark(a.activityId, "k-done");
    const active = execs.data.filter((e) => e.activityId && e.isActive);
    for (const e of active) mark(e.activityId, "k-active");
    for (const j of dead.data) if (j.elementId) mark(j.elementId, "k-failed");
    parts.tree.replaceChildren(table(["execution", "parent", "activity", "flags"], execs.data.map((e) =>
      [h("span", { class: "mono" }, e.id), h("span", { class: "mono" }, e.parentId || ""), e.activityId || "",
        [e.isActive && "active", e.isConcurrent && "concurrent", e.isScope && "scope", e.isEventScope && "event scope", e.suspended && "suspended"].filter(Boolean).join(", ")])));
    parts.tasks.replaceChildren(table(["task", "assignee", "created", ""], tasks.data.map((t) => [t.name || t.taskDefinitionKey, t.assignee || "—", when(t.createTime), link("#/tasks", "tasklist")])));
    const asObject = Object.fromEntries((vars || []).map((v) => [v.name, v.value]));
    const editing = document.activeElement && document.activeElement.id === "variables";
    if (!editing) {
      const text = h("textarea", { id: "variables" }, JSON.stringify(asObject, null, 2));
      parts.vars.replaceChildren(text, h("div", { class: "row" }, h("button", { id: "save-variables", onclick: () => act("variables saved", async () => {
        let parsed;
        try { parsed = JSON.parse(text.value); } catch (e) { throw new Error(`not JSON: ${e.message}`); }
        await api("PUT", `/runtime/process-instances/${q}/variables`, parsed);
      }) }, "Save variables")));
    }
    parts.jobs.replaceChildren(jobTable([...jobs.data.map((j) => ({ ...j, dead: false })), ...dead.data.map((j) => ({ ...j, dead: true }))]));
    parts.log.replaceChildren(table(["job", "attempt", "outcome", "at", "message"], (log.data || []).map((l) =>
      [h("span", { class: "mono" }, l.jobId), l.attempt, l.outcome, when(l.end || l.start), l.message || ""])));
    parts.history.replaceChildren(table(["activity", "type", "started", "ended"], hist.data.map((a) => [a.activityName || a.activityId, a.activityType, when(a.startTime), when(a.endTime)])));
  };
  await draw();
  live(draw, 5000);
}

function jobTable(jobs, selectable) {
  const rows = jobs.map((j) => {
    const base = j.dead ? "/management/deadletter-jobs" : "/management/jobs";
    const id = encodeURIComponent(j.id);
    const mayAct = !j.dead || isAdmin();
    const buttons = h("div", { class: "row" },
      j.dead ? (mayAct ? h("button", { "data-action": "move", onclick: () => act("moved back", () => api("POST", `${base}/${id}`, { action: "move" })) }, "Move back") : null)
        : h("button", { onclick: () => act("executed", () => api("POST", `${base}/${id}`, { action: "execute" })) }, "Run now"),
      j.exceptionMessage ? h("button", { onclick: async () => {
        const text = await api("GET", `${base}/${id}/exception-stacktrace`, undefined, { text: true });
        document.getElementById("trace").replaceChildren(h("pre", {}, text));
      } }, "Stack trace") : null,
      mayAct ? h("button", { class: "danger", onclick: () => act("deleted", () => api("DELETE", `${base}/${id}${j.dead ? "" : "?force=true"}`)) }, "Delete") : null);
    return [selectable ? h("input", { type: "checkbox", class: "pick", value: j.id, "data-dead": j.dead ? "1" : "" }) : "",
      h("span", { class: "mono" }, j.id), j.dead ? "dead letter" : j.type, j.handlerType, j.elementId || "", when(j.dueDate), j.retries, j.exceptionMessage || "", buttons];
  });
  return h("div", {}, table(["", "job", "kind", "handler", "activity", "due", "retries", "exception", ""], rows), h("div", { id: "trace" }));
}

const jobFilters = { handlerType: "", processInstanceId: "", withException: false };

async function jobs(tab) {
  tab = tab || "jobs";
  const paths = { jobs: "/management/jobs", timers: "/management/timer-jobs", dead: "/management/deadletter-jobs" };
  const handler = h("input", { id: "filter-handler", placeholder: "handler", value: jobFilters.handlerType });
  const instance = h("input", { id: "filter-instance", placeholder: "process instance id", value: jobFilters.processInstanceId });
  const failing = h("input", { type: "checkbox", id: "filter-failing", checked: jobFilters.withException });
  const filters = h("form", { class: "row", onsubmit: (ev) => {
    ev.preventDefault();
    Object.assign(jobFilters, { handlerType: handler.value.trim(), processInstanceId: instance.value.trim(), withException: failing.checked });
    route();
  } }, handler, instance, h("label", {}, failing, " with an exception"), h("button", { type: "submit" }, "Filter"));
  const query = () => {
    const q = new URLSearchParams({ size: "500" });
    if (jobFilters.handlerType) q.set("handlerType", jobFilters.handlerType);
    if (jobFilters.processInstanceId) q.set("processInstanceId", jobFilters.processInstanceId);
    if (jobFilters.withException) q.set("withException", "true");
    return q.toString();
  };
  const tabs = h("div", { class: "tabs" }, Object.keys(paths).map((t) =>
    h("button", { class: t === tab ? "on" : "", onclick: () => { location.hash = `#/jobs/${t}`; } }, { jobs: "Jobs", timers: "Timers", dead: "Dead letters" }[t])));
  const body = h("div");
  const bulk = tab === "dead" && !isAdmin() ? h("div") : h("div", { class: "row" },
    tab === "dead" ? h("button", { id: "move-selected", onclick: () => many("moved back", (id) => api("POST", `/management/deadletter-jobs/${encodeURIComponent(id)}`, { action: "move" })) }, "Move selected back") : null,
    h("button", { class: "danger", onclick: () => many("deleted", (id, dead) => api("DELETE", dead ? `/management/deadletter-jobs/${encodeURIComponent(id)}` : `/management/jobs/${encodeURIComponent(id)}?force=true`)) }, "Delete selected"));
  main(h("h1", {}, "Jobs"), tabs, filters, bulk, body);
  const draw = async () => {
    const list = await api("GET", `${paths[tab]}?${query()}`);
    body.replaceChildren(jobTable(list.data.map((j) => ({ ...j, dead: tab === "dead" })), true));
  };
  await draw();
}

async function many(label, f) {
  const picked = [...document.querySelectorAll("input.pick:checked")];
  if (!picked.length) { toast("select some first", true); return; }
  await act(`${label}: ${picked.length}`, () => Promise.all(picked.map((p) => f(p.value, p.dataset.dead === "1"))));
}

/// The inputs of a task's form fields (from the model), and how to read them back as variables.
function formInputs(props) {
  const inputs = props.filter((p) => p.writable).map((p) => {
    const name = p.id;
    let input;
    if (p.type === "boolean") input = h("input", { type: "checkbox", name, checked: p.value === "true" });
    else if (p.type === "enum") input = h("select", { name }, p.enumValues.map((v) => h("option", { value: v.id, selected: v.id === p.value }, v.name || v.id)));
    else if (p.type === "long" || p.type === "double" || p.type === "integer") input = h("input", { type: "number", name, value: p.value ?? "", step: p.type === "double" ? "any" : "1" });
    else if (p.type === "date") input = h("input", { type: "date", name, value: p.value ?? "" });
    else input = h("input", { name, value: p.value ?? "" });
    if (p.required) input.required = true;
    return { p, input, row: h("label", { class: "row" }, h("span", {}, p.name || p.id, p.required ? " *" : ""), input) };
  });
  const read = () => {
    const out = {};
    for (const { p, input } of inputs) {
      if (p.type === "boolean") out[p.id] = input.checked;
      else if (input.value === "") { if (p.required) throw new Error(`${p.name || p.id} is required`); }
      else if (p.type === "long" || p.type === "integer") out[p.id] = parseInt(input.value, 10);
      else if (p.type === "double") out[p.id] = parseFloat(input.value);
      else out[p.id] = input.value;
    }
    return out;
  };
  return { rows: inputs.map((i) => i.row), read, empty: !inputs.length };
}

async function tasks() {
  const me = state.me && state.me.userId;
  const path = me ? `/runtime/tasks?candidateOrAssigned=${encodeURIComponent(me)}&size=500` : "/runtime/tasks?size=500";
  const list = await api("GET", path);
  const forms = await Promise.all(list.data.map((t) => api("GET", `/form/form-data?taskId=${encodeURIComponent(t.id)}`).catch(() => ({ formProperties: [] }))));
  const rows = list.data.map((t, i) => {
    const id = encodeURIComponent(t.id);
    const form = formInputs(forms[i].formProperties || []);
    const vars = h("textarea", { class: "complete-vars", placeholder: '{"approved": true}' });
    const mine = !t.assignee || t.assignee === me;
    return [h("div", {}, h("strong", {}, t.name || t.taskDefinitionKey), h("div", { class: "mono muted" }, link(`#/instances/${encodeURIComponent(t.processInstanceId)}`, t.processInstanceId))),
      t.assignee || "unclaimed", when(t.createTime),
      h("div", {}, h("div", { class: "row" },
        !t.assignee ? h("button", { class: "claim", onclick: () => act("claimed", () => api("POST", `/runtime/tasks/${id}`, { action: "claim", assignee: me || "admin" })) }, "Claim") : null,
        t.assignee ? h("button", { onclick: () => act("unclaimed", () => api("POST", `/runtime/tasks/${id}`, { action: "claim", assignee: null })) }, "Unclaim") : null),
      mine ? h("div", { class: "task-form" }, form.rows, form.empty ? vars : null, h("button", { class: "primary complete", onclick: () => act("completed", async () => {
        let variables = form.read();
        if (form.empty && vars.value.trim()) { try { variables = JSON.parse(vars.value); } catch (e) { throw new Error(`not JSON: ${e.message}`); } }
        await api("POST", `/runtime/tasks/${id}`, { action: "complete", variables });
      }) }, "Complete")) : null)];
  });
  main(h("h1", {}, me ? `Tasks of ${me} and their groups` : "Open tasks"), table(["task", "assignee", "created", ""], rows));
  live(async () => { const again = await api("GET", path); if (again.total !== list.total) route(); }, 5000);
}

async function scheduler() {
  const [triggers, calendars, jobsList] = await Promise.all([api("GET", "/scheduler/triggers?size=1000"),
    api("GET", "/scheduler/calendars").catch(() => []), api("GET", "/scheduler/jobs?size=1000")]);
  const groups = [...new Set(triggers.data.map((t) => t.group))];
  const tpath = (t) => `/scheduler/triggers/${encodeURIComponent(t.group)}/${encodeURIComponent(t.name)}`;
  main(h("h1", {}, "Scheduler"),
    table(["trigger", "job", "state", "next fire", "previous fire", ""], triggers.data.map((t) => [
      `${t.group}.${t.name}`, `${t.jobGroup}.${t.jobName}`, t.state, when(t.nextFireTime), when(t.previousFireTime),
      t.state === "PAUSED" ? h("button", { class: "resume", onclick: () => act("resumed", () => api("PUT", tpath(t), { action: "resume" })) }, "Resume")
        : h("button", { class: "pause", onclick: () => act("paused", () => api("PUT", tpath(t), { action: "pause" })) }, "Pause")])),
    h("h2", {}, "Jobs"),
    table(["job", "handler", "durable", "concurrent", "description"], jobsList.data.map((j) =>
      [`${j.group}.${j.name}`, j.handler, j.durable ? "yes" : "no", j.concurrent ? "yes" : "no", j.description || ""])),
    h("h2", {}, "Trigger groups"),
    table(["group", ""], groups.map((g) => [g, h("div", { class: "row" },
      h("button", { onclick: () => act(`paused ${g}`, () => api("PUT", `/scheduler/trigger-groups/${encodeURIComponent(g)}`, { action: "pause" })) }, "Pause group"),
      h("button", { onclick: () => act(`resumed ${g}`, () => api("PUT", `/scheduler/trigger-groups/${encodeURIComponent(g)}`, { action: "resume" })) }, "Resume group"))])),
    h("h2", {}, "Calendars"), table(["calendar"], (Array.isArray(calendars) ? calendars : calendars.data || []).map((c) => [typeof c === "string" ? c : c.name])));
}

async function consistency() {
  const [incidents, outbox] = await Promise.all([api("GET", "/incidents?size=200"), api("GET", "/outbox/events?size=200")]);
  const bindingsBox = h("div");
  const key = h("input", { id: "binding-key", placeholder: "TYPE:ID, e.g. ORDER:42" });
  const findBindings = async () => {
    const [type, ...rest] = key.value.split(":");
    const id = rest.join(":");
    if (!type || !id) { bindingsBox.replaceChildren(h("p", { class: "muted" }, "Give a business type and id.")); return; }
    const b = await api("GET", `/bindings?businessType=${encodeURIComponent(type)}&businessId=${encodeURIComponent(id)}`);
    const list = Array.isArray(b) ? b : b.data || [];
    bindingsBox.replaceChildren(table(["process type", "lifecycle", "status", "instance", "created"], list.map((x) =>
      [x.processType, x.lifecycleNo, x.bindingStatus, x.processInstanceId ? link(`#/instances/${encodeURIComponent(x.processInstanceId)}`, x.processInstanceId) : "", when(x.createdAt)])));
  };
  main(h("h1", {}, "Consistency"),
    h("h2", {}, "Incidents"), table(["status", "kind", "rule", "business record", "difference", "instance"], incidents.data.map((i) =>
      [i.status, i.kind, i.ruleId || "", `${i.businessType}:${i.businessId}`, i.difference || "", i.processInstanceId || ""])),
    h("h2", {}, "Outbox"), table(["event", "aggregate", "type", "status", "attempts", "next retry", "last error", ""], outbox.data.map((e) =>
      [h("span", { class: "mono" }, e.eventId), `${e.aggregateType}:${e.aggregateId}`, e.eventType, e.eventStatus, e.retryCount, when(e.nextRetryAt), e.lastError || "",
        e.eventStatus === "FAILED" ? h("button", { onclick: () => act("sent again", () => api("POST", `/outbox/events/${encodeURIComponent(e.eventId)}/retry`)) }, "Retry") : ""])),
    h("h2", {}, "Bindings"), h("div", { class: "row" }, key, h("button", { onclick: () => findBindings().catch((e) => toast(e.message, true)) }, "Find")), bindingsBox);
}

async function doctor() {
  const d = await api("GET", "/management/doctor");
  main(h("h1", {}, "Doctor"), h("p", { class: "muted" }, `checked ${when(d.checkedAt)} on ${d.node}`),
    table(["severity", "finding", "detail", "what to do"], (d.findings || []).map((f) =>
      [h("span", { class: `sev-${f.severity}` }, f.severity), f.title, f.detail || "", f.action || ""])));
}

// ---- routing -------------------------------------------------------------------------------

/// A user (not an operator) has their tasklist; the other pages ask for routes their role does
/// not reach, so they are not offered.
function mayOpen(page) {
  return !state.me || state.me.role !== "user" || page === "tasks";
}

function showNav() {
  for (const a of document.querySelectorAll("#nav a")) {
    a.hidden = !mayOpen(a.getAttribute("href").replace(/^#\/?/, "").split("/")[0]);
  }
}

async function route() {
  clearInterval(state.timer);
  const [page, arg] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.getAttribute("href") === `#/${page || ""}`);
  const pages = { "": overview, definitions: () => (arg ? definition(arg) : definitions()), instances: () => (arg ? instance(arg) : instances()),
    tasks, jobs: () => jobs(arg), scheduler, consistency, doctor };
  const f = pages[page || ""];
  try {
    if (!f) { main(h("p", {}, "No such page. "), link("#/", "Overview")); return; }
    if (!mayOpen(page || "")) {
      if (!page) { location.hash = "#/tasks"; return; }
      main(h("p", { class: "error" }, "Your role may not see this page: a user has their tasklist."), link("#/tasks", "Tasks"));
      return;
    }
    await f();
  } catch (e) {
    if (e.status !== 401) main(h("p", { class: "error" }, e.status === 403 ? `Your role may not see this page: ${e.message}` : e.message));
  }
}

async function start() {
  try {
    const s = await api("GET", "/auth/session", undefined, { quiet401: true });
    if (!s.authenticated) { showLogin(); return; }
    state.me = s;
    state.csrf = s.csrfToken;
  } catch (e) {
    main(h("p", { class: "error" }, e.message));
    return;
  }
  showWho();
  showNav();
  route();
}

window.addEventListener("hashchange", () => { if (state.me) route(); });
window.addEventListener("DOMContentLoaded", start);
