// The agent-memory console: a person's view of one namespace, through the service's own JSON API and nothing else.
// The API key lives in sessionStorage (gone with the tab), never in a URL; every read says `Prefer: no-stamp`, so
// looking at a memory is not counted as an agent using it.

const KEY_STORE = "agent-memory-key";
const RETRIES = 5;
let config = null;

// ---- DOM helpers: every text goes in as text, never as markup ----

function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const view = () => document.getElementById("view");

function show(title, ...content) {
  const main = view();
  main.replaceChildren(h("h1", {}, title), ...content);
  document.title = `${title} · agent-memory console`;
  main.focus();
}

// A message for the view the next navigation shows (a hash change clears whatever the last view said).
let flashed = null;

function flash(message, kind = "ok") {
  flashed = [message, kind];
}

function notify(message, kind = "info") {
  const notice = document.getElementById("notice");
  notice.hidden = !message;
  notice.className = `notice ${kind}`;
  notice.textContent = message || "";
}

function when(timestamp) {
  if (!timestamp) return h("span", { class: "meta" }, "never");
  const date = new Date(timestamp);
  return h("time", { datetime: timestamp, title: `${timestamp} (UTC)` }, date.toLocaleString());
}

function tags(list) {
  return list.length ? list.map((tag) => h("span", { class: "tag" }, tag)) : h("span", { class: "meta" }, "none");
}

function statusText(status) {
  return h("span", { class: `status-${status}` }, status);
}

// ---- the API ----

const key = () => sessionStorage.getItem(KEY_STORE);

class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

const HUMAN = {
  401: "This key is not valid (expired or revoked?). Paste another key.",
  403: "This key may only read: it cannot change memories.",
};

async function api(method, path, { body, ifMatch } = {}) {
  const headers = { Authorization: `Bearer ${key()}`, Accept: "application/json" };
  if (method === "GET") headers.Prefer = "no-stamp";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch !== undefined) headers["If-Match"] = `"${ifMatch}"`;
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
    });
    if (response.status === 503 && attempt < RETRIES) {
      const wait = Math.min(Number(response.headers.get("Retry-After")) || 1, 30);
      notify(`Storage is busy, retrying in ${wait} s…`, "error");
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    if (response.status === 503) notify("Storage is busy: it did not answer after several tries. Try again soon.", "error");
    else if (attempt > 1) notify("");
    const text = response.status === 204 ? "" : await response.text();
    const json = text ? JSON.parse(text) : null;
    if (response.ok) return { json, etag: response.headers.get("ETag") };
    if (response.status === 401) {
      sessionStorage.removeItem(KEY_STORE);
      notify(HUMAN[401], "error");
      route();
    } else if (response.status === 403) {
      notify(HUMAN[403], "error");
    }
    throw new ApiError(response.status, json);
  }
}

function failed(error) {
  if (!(error instanceof ApiError)) {
    notify(`Something went wrong: ${error.message}`, "error");
  } else if (![401, 403, 503].includes(error.status)) {
    notify(error.message, "error");
  }
}

// ---- the URL fragment: #/?query, #/memory/<id>, #/new ----

const FILTERS = ["status", "memory_type", "tag", "q", "sort", "limit", "offset"];

function parseHash() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  return { path: path || "/", params: new URLSearchParams(query) };
}

function listHash(params) {
  const kept = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) kept.set(name, value);
  }
  if (kept.get("offset") === "0") kept.delete("offset");
  const query = kept.toString();
  return `#/${query ? `?${query}` : ""}`;
}

// ---- views ----

function keyView() {
  document.getElementById("nav").hidden = true;
  const input = h("input", { type: "password", id: "key", name: "key", autocomplete: "off", spellcheck: "false",
    required: true, "aria-describedby": "key-hint" });
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY_STORE, input.value.trim());
    try {
      await api("GET", "/memories?limit=1");
      notify("");
      if (!location.hash || location.hash === "#") location.hash = "#/";
      else route();
    } catch (error) {
      failed(error);
    }
  } },
  h("label", { for: "key" }, "API key"),
  input,
  h("p", { class: "hint", id: "key-hint" },
    "A key of the namespace to look at (am_…). It stays in this tab only and is forgotten when you close it."),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Open")));
  show("Open your memories", form);
}

function select(id, label, options, value, extra = {}) {
  return [
    h("label", { for: id }, label),
    h("select", { id, name: id, ...extra },
      options.map(([optionValue, text]) => h("option", { value: optionValue, selected: optionValue === value }, text))),
  ];
}

async function listView(params) {
  const query = new URLSearchParams();
  for (const name of FILTERS) if (params.get(name)) query.set(name, params.get(name));
  const form = h("form", { class: "filters", role: "search", onsubmit: (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams(new FormData(event.target));
    chosen.delete("offset");
    location.hash = listHash(chosen);
  } },
  h("div", {}, ...select("status", "Status",
    [["", "active and invalid"], ...config.statuses.map((s) => [s, s])], params.get("status") || "")),
  h("div", {}, ...select("memory_type", "Type",
    [["", "any"], ...config.memory_types.map((t) => [t, t])], params.get("memory_type") || "")),
  h("div", {}, h("label", { for: "tag" }, "Tag"),
    h("input", { type: "text", id: "tag", name: "tag", list: "standard-tags", value: params.get("tag") || "",
      autocomplete: "off" })),
  h("div", {}, h("label", { for: "q" }, "Text contains"),
    h("input", { type: "search", id: "q", name: "q", value: params.get("q") || "" })),
  h("div", {}, ...select("sort", "Sort by", config.sorts.map((s) => [s, SORT_NAMES[s] || s]),
    params.get("sort") || "id")),
  h("div", {}, ...select("limit", "Per page",
    [10, 20, 50, 100].filter((n) => n <= config.max_limit).map((n) => [String(n), String(n)]),
    params.get("limit") || String(config.default_limit))),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Search"),
    h("button", { type: "button", onclick: () => { location.hash = "#/"; } }, "Clear")),
  h("datalist", { id: "standard-tags" }, config.standard_tags.map((tag) => h("option", { value: tag }))));
  const results = h("div", { id: "results" }, h("p", { class: "meta" }, "Loading…"));
  show("Memories", form, results);
  let page;
  try {
    page = (await api("GET", `/memories?${query}`)).json;
  } catch (error) {
    results.replaceChildren(h("p", { class: "field-error" }, error.message));
    if (error.status === 422) showFieldErrors(form, error.problem);
    failed(error);
    return;
  }
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  const current = Math.floor(page.offset / page.limit) + 1;
  const move = (offset) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(Math.max(0, offset)));
    location.hash = listHash(next);
  };
  const rows = page.items.map((memory) => h("tr", {},
    h("td", { "data-label": "Id" }, h("a", { href: `#/memory/${memory.id}` }, `#${memory.id}`)),
    h("td", { class: "content", "data-label": "Content" }, h("a", { href: `#/memory/${memory.id}` }, memory.content)),
    h("td", { "data-label": "Type" }, memory.memory_type),
    h("td", { "data-label": "Status" }, statusText(memory.status)),
    h("td", { "data-label": "Tags" }, tags(memory.tags)),
    h("td", { "data-label": "Updated" }, when(memory.updated_at))));
  results.replaceChildren(
    h("p", { class: "summary", id: "summary" },
      `${page.total} ${page.total === 1 ? "memory" : "memories"} · page ${current} of ${pages}`),
    page.items.length
      ? h("table", {}, h("caption", { class: "meta" }, "Open a memory to see its history and change it."),
        h("thead", {}, h("tr", {}, ["Id", "Content", "Type", "Status", "Tags", "Updated"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows))
      : h("p", {}, "No memory matches."),
    h("nav", { class: "pager", "aria-label": "Pages" },
      h("button", { type: "button", disabled: page.offset === 0, onclick: () => move(page.offset - page.limit) }, "Previous page"),
      h("span", {}, `Page ${current} of ${pages}`),
      h("button", { type: "button", disabled: !page.has_more, onclick: () => move(page.offset + page.limit) }, "Next page")));
}

const SORT_NAMES = {
  id: "id (oldest first)",
  created_at: "created (newest first)",
  updated_at: "updated (newest first)",
  last_accessed_at: "last used by an agent",
};

function showFieldErrors(form, problem) {
  for (const old of form.querySelectorAll(".field-error")) old.remove();
  for (const error of problem.errors || []) {
    const name = error.field.split(/[.[]/)[0];
    const field = form.querySelector(`[name="${CSS.escape(name)}"]`);
    const message = h("p", { class: "field-error", id: `${name}-error` }, error.message);
    if (field) {
      field.setAttribute("aria-invalid", "true");
      field.setAttribute("aria-describedby", `${name}-error`);
      (field.closest("div") || field).after(message);
    } else {
      form.prepend(message);
    }
  }
  form.querySelector("[aria-invalid=true]")?.focus();
}

// ---- one memory: its fields, its actions, its history ----

async function memoryView(id) {
  show(`Memory #${id}`, h("p", { class: "meta" }, "Loading…"));
  let memory = null;
  let history;
  try {
    memory = (await api("GET", `/memories/${id}`)).json;
  } catch (error) {
    if (error.status !== 404) return failed(error);
  }
  try {
    history = (await api("GET", `/memories/${id}/history?limit=100`)).json;
  } catch (error) {
    if (error.status === 404) return show(`Memory #${id}`, h("p", {}, "There is no such memory (it may have been purged)."));
    return failed(error);
  }
  if (memory === null) {
    // Deleted: the record is no longer served, but its newest revision is the record as it is.
    const { revision, change, changed_at, key_id, ...record } = history.items[0];
    memory = { ...record, last_accessed_at: undefined };
  }
  renderMemory(memory, history);
}

function fields(memory) {
  const rows = [
    ["Content", memory.content],
    ["Tags", tags(memory.tags)],
    ["Type", memory.memory_type],
    ["Status", statusText(memory.status)],
    ["Version", memory.version],
    ["Created", when(memory.created_at)],
    ["Updated", when(memory.updated_at)],
  ];
  if (memory.last_accessed_at !== undefined) rows.push(["Last used by an agent", when(memory.last_accessed_at)]);
  return h("dl", { class: "fields" }, rows.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]));
}

function renderMemory(memory, history) {
  const actions = h("div", { class: "actions" });
  const deleted = memory.status === "deleted";
  if (!deleted) {
    actions.append(h("button", { type: "button", class: "primary", onclick: () => editView(memory) }, "Edit"));
    if (memory.status === "active") {
      actions.append(h("button", { type: "button", onclick: () => invalidate(memory) }, "Mark invalid"));
    }
    actions.append(h("button", { type: "button", class: "danger", onclick: () => remove(memory) }, "Delete"));
  } else {
    actions.append(h("button", { type: "button", class: "primary", onclick: () => restore(memory) }, "Restore"));
    actions.append(h("button", { type: "button", class: "danger", onclick: () => purge(memory) }, "Purge"));
  }
  show(`Memory #${memory.id}`, fields(memory), actions,
    h("h2", { id: "history" }, "History"), timeline(history),
    h("p", {}, h("a", { href: "#/" }, "Back to the list")));
}

function confirmDialog(title, text, confirmLabel) {
  return new Promise((resolve) => {
    const dialog = h("dialog", { "aria-labelledby": "dialog-title" },
      h("h2", { id: "dialog-title" }, title), h("p", {}, text),
      h("form", { method: "dialog", class: "actions" },
        h("button", { value: "cancel", type: "submit" }, "Cancel"),
        h("button", { value: "confirm", type: "submit", class: "danger" }, confirmLabel)));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

async function act(work, done) {
  try {
    await work();
    notify(done, "ok");
  } catch (error) {
    failed(error);
  }
  route();
}

function invalidate(memory) {
  act(() => api("PATCH", `/memories/${memory.id}`, { body: { status: "invalid" }, ifMatch: memory.version }),
    `Memory #${memory.id} is marked invalid: agents no longer get it as a belief, and it stays on record.`);
}

async function remove(memory) {
  const ok = await confirmDialog(`Delete memory #${memory.id}?`,
    `It disappears from every search. You can restore it for ${config.retention_days} days; after that it is ` +
    "purged for good. To keep it on record but stop agents trusting it, mark it invalid instead.", "Delete");
  if (ok) act(() => api("DELETE", `/memories/${memory.id}`), `Memory #${memory.id} is deleted; restorable for ${config.retention_days} days.`);
}

function restore(memory) {
  act(() => api("POST", `/memories/${memory.id}/restore`), `Memory #${memory.id} is restored.`);
}

async function purge(memory) {
  const ok = await confirmDialog(`Purge memory #${memory.id} for good?`,
    "Purging is final: the memory and its whole history are erased and cannot be restored.", "Purge for good");
  if (ok) {
    try {
      await api("DELETE", `/memories/${memory.id}?purge=true`);
      flash(`Memory #${memory.id} is purged.`);
      location.hash = "#/?status=deleted";
    } catch (error) {
      failed(error);
    }
  }
}

// ---- history: a timeline of what each change did ----

function words(text) {
  return text.split(/(\s+)/).filter((part) => part !== "");
}

function wordDiff(before, after) {
  const a = words(before);
  const b = words(after);
  const table = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { out.push(a[i]); i++; j++; }
    else if (table[i + 1][j] >= table[i][j + 1]) out.push(h("del", {}, a[i++]));
    else out.push(h("ins", {}, b[j++]));
  }
  while (i < a.length) out.push(h("del", {}, a[i++]));
  while (j < b.length) out.push(h("ins", {}, b[j++]));
  return h("p", { class: "diff" }, out);
}

function changes(before, after) {
  if (!before) return [h("p", { class: "diff" }, after.content), h("p", {}, "Tags: ", tags(after.tags))];
  const out = [];
  if (before.content !== after.content) out.push(h("p", { class: "meta" }, "Content:"), wordDiff(before.content, after.content));
  const added = after.tags.filter((tag) => !before.tags.includes(tag));
  const removed = before.tags.filter((tag) => !after.tags.includes(tag));
  if (added.length) out.push(h("p", {}, "Tags added: ", tags(added)));
  if (removed.length) out.push(h("p", {}, "Tags removed: ", tags(removed)));
  if (before.memory_type !== after.memory_type) out.push(h("p", {}, `Type: ${before.memory_type} → ${after.memory_type}`));
  if (before.status !== after.status) out.push(h("p", {}, "Status: ", statusText(before.status), " → ", statusText(after.status)));
  return out;
}

function timeline(history) {
  const items = history.items; // newest first
  return h("ol", { class: "timeline", "aria-label": "Changes, newest first" }, items.map((revision, index) =>
    h("li", {},
      h("p", {}, h("span", { class: "change" }, revision.change), " · ", when(revision.changed_at),
        h("span", { class: "meta" }, ` · version ${revision.version}`, revision.key_id ? ` · key ${revision.key_id}` : "")),
      changes(items[index + 1], revision))));
}

// ---- editing, with If-Match: a conflicting change is shown, never overwritten ----

function memoryForm(memory, submitLabel, onsubmit) {
  const standard = new Set(config.standard_tags);
  const chosen = new Set(memory.tags);
  const freeform = memory.tags.filter((tag) => !standard.has(tag));
  const form = h("form", { novalidate: true, onsubmit: (event) => { event.preventDefault(); onsubmit(form); } },
    h("div", {}, h("label", { for: "content" }, "Content"),
      h("textarea", { id: "content", name: "content", required: true, maxlength: config.content_max_chars }, memory.content)),
    h("fieldset", { class: "panel" }, h("legend", {}, "Standard tags"),
      h("div", { class: "tag-checks" }, config.standard_tags.map((tag) => h("label", {},
        h("input", { type: "checkbox", name: "standard_tag", value: tag, checked: chosen.has(tag) }), tag)))),
    h("div", {}, h("label", { for: "tags" }, "Other tags"),
      h("input", { type: "text", id: "tags", name: "tags", value: freeform.join(", "), autocomplete: "off",
        "aria-describedby": "tags-hint" }),
      h("p", { class: "hint", id: "tags-hint" }, "Separate with commas, e.g. project:apollo, family")),
    h("div", {}, ...select("memory_type", "Type", config.memory_types.map((t) => [t, t]), memory.memory_type)),
    h("div", {}, ...select("status", "Status", config.writable_statuses.map((s) => [s, s]), memory.status)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, submitLabel),
      h("button", { type: "button", onclick: () => route() }, "Cancel")));
  return form;
}

function readForm(form) {
  const data = new FormData(form);
  const freeform = String(data.get("tags") || "").split(",").map((tag) => tag.trim()).filter(Boolean);
  return {
    content: String(data.get("content") || ""),
    tags: [...data.getAll("standard_tag").map(String), ...freeform],
    memory_type: String(data.get("memory_type")),
    status: String(data.get("status")),
  };
}

function changedFields(base, edited) {
  const changed = {};
  for (const name of ["content", "memory_type", "status"]) if (edited[name] !== base[name]) changed[name] = edited[name];
  if (JSON.stringify([...edited.tags].sort()) !== JSON.stringify([...base.tags].sort())) changed.tags = edited.tags;
  return changed;
}

function editView(memory) {
  notify("");
  const form = memoryForm(memory, "Save", (submitted) => save(memory, readForm(submitted), submitted));
  show(`Edit memory #${memory.id}`, h("p", { class: "hint" }, `Editing version ${memory.version}.`), form);
}

async function save(base, edited, form) {
  const changed = changedFields(base, edited);
  if (!Object.keys(changed).length) return route();
  try {
    await api("PATCH", `/memories/${base.id}`, { body: changed, ifMatch: base.version });
    notify(`Memory #${base.id} is saved.`, "ok");
    route();
  } catch (error) {
    if (error.status === 412) return conflictView(base, changed);
    if (error.status === 422) return showFieldErrors(form, error.problem);
    failed(error);
  }
}

async function conflictView(base, changed) {
  notify("");
  let current;
  try {
    current = (await api("GET", `/memories/${base.id}`)).json;
  } catch (error) {
    return failed(error);
  }
  const reapply = async () => {
    try {
      await api("PATCH", `/memories/${base.id}`, { body: changed, ifMatch: current.version });
      notify(`Your changes are applied on top of version ${current.version}.`, "ok");
      route();
    } catch (error) {
      if (error.status === 412) return conflictView(current, changed);
      failed(error);
    }
  };
  const discard = () => {
    notify("Your changes are discarded.", "ok");
    route();
  };
  const mine = Object.entries(changed).map(([name, value]) =>
    h("li", {}, `${name}: `, Array.isArray(value) ? tags(value) : String(value)));
  show(`Memory #${base.id} changed while you edited it`,
    h("p", {}, `You edited version ${base.version}; it is now at version ${current.version}. Nothing was overwritten.`),
    h("h2", {}, "What changed in the meantime"),
    h("div", { class: "panel" }, changes(base, current).length ? changes(base, current) : h("p", {}, "Nothing visible.")),
    h("h2", {}, "Your changes"), h("ul", {}, mine),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: reapply }, "Re-apply my changes"),
      h("button", { type: "button", onclick: discard }, "Discard my changes")));
}

function newView() {
  const blank = { content: "", tags: [], memory_type: "fact", status: "active" };
  const form = memoryForm(blank, "Create", async (submitted) => {
    try {
      const created = (await api("POST", "/memories", { body: readForm(submitted) })).json;
      flash(`Memory #${created.id} is created.`);
      location.hash = `#/memory/${created.id}`;
    } catch (error) {
      if (error.status === 422) return showFieldErrors(submitted, error.problem);
      failed(error);
    }
  });
  show("New memory", form);
}

// ---- the router ----

async function route() {
  if (!key()) return keyView();
  const nav = document.getElementById("nav");
  nav.hidden = false;
  const match = /^am_([0-9a-f]{12})_/.exec(key());
  document.getElementById("who").textContent = match ? `key ${match[1]}` : "";
  const { path, params } = parseHash();
  const memory = /^\/memory\/([0-9]+)$/.exec(path);
  if (memory) return memoryView(memory[1]);
  if (path === "/new") return newView();
  return listView(params);
}

async function start() {
  config = await (await fetch("config.json", { cache: "no-store" })).json();
  document.getElementById("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    notify("The key is forgotten.", "ok");
    route();
  });
  window.addEventListener("hashchange", () => {
    notify(...(flashed || [""]));
    flashed = null;
    route();
  });
  route();
}

start();
