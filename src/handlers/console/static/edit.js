// Editing and creating, always with If-Match: typed input is never lost without asking, a change made meanwhile is
// merged field by field (never overwritten), and a memory deleted meanwhile can be restored and edited on.

import { api, failed } from "./api.js";
import { app, flash, h, keyName, mayLeave, notify, show } from "./dom.js";
import { showFieldErrors } from "./errors.js";
import { changes } from "./history.js";
import { deletedPanel, load } from "./record.js";

const FIELDS = ["content", "memory_type", "status"];
const LABELS = { content: "Content", memory_type: "Type", status: "Status", tags: "Tags" };

function select(id, label, options, value) {
  return [h("label", { for: id }, label),
    h("select", { id, name: id }, options.map((o) => h("option", { value: o, selected: o === value }, o)))];
}

function memoryForm(memory, submitLabel, onsubmit, oncancel) {
  const config = app.config;
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
    h("div", {}, ...select("memory_type", "Type", config.memory_types, memory.memory_type)),
    h("div", {}, ...select("status", "Status", config.writable_statuses, memory.status)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, submitLabel),
      h("button", { type: "button", onclick: async () => { if (await mayLeave()) oncancel(); } }, "Cancel")));
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

const sameTags = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

function changedFields(base, edited) {
  const changed = {};
  for (const name of FIELDS) if (edited[name] !== base[name]) changed[name] = edited[name];
  if (!sameTags(edited.tags, base.tags)) changed.tags = edited.tags;
  return changed;
}

// The API checks the number of tags only once every tag is valid: the console says it with the other errors, first.
function withCount(problem, tags) {
  const errors = problem.errors || [];
  const count = new Set(tags.map((tag) => tag.trim().toLowerCase())).size;
  if (count <= 20 || errors.some((error) => error.field === "tags")) return problem;
  return { ...problem, errors: [{ field: "tags", message: `at most 20 tags: there are ${count}` }, ...errors] };
}

// Typed input is kept from being lost: the view asks before any navigation while the form differs from `base`.
function guarded(form, base) {
  app.guard = () => form.isConnected && Object.keys(changedFields(base, readForm(form))).length > 0;
}

export function editView(memory, draft = null) {
  notify("");
  const form = memoryForm(draft || memory, "Save", (submitted) => save(memory, readForm(submitted), submitted), () => app.route());
  show(`Edit memory #${memory.id}`, h("p", { class: "hint" }, `Editing version ${memory.version}.`), form);
  guarded(form, memory);
}

async function save(base, edited, form) {
  const changed = changedFields(base, edited);
  if (!Object.keys(changed).length) return app.route();
  try {
    await api("PATCH", `/memories/${base.id}`, { body: changed, ifMatch: base.version });
    app.guard = null;
    notify(`Memory #${base.id} is saved.`, "ok");
    app.route();
  } catch (error) {
    if (error.status === 412) return conflictView(base, edited);
    if (error.status === 404) return goneView(base, edited);
    if (error.status === 422) return showFieldErrors(form, withCount(error.problem, edited.tags), { tags: changed.tags });
    failed(error);
  }
}

// ---- a change made meanwhile: merged field by field and tag by tag ----

// What to send on top of `current` for the person's edit of `base`: only the fields they changed; tags they added or
// removed applied to the current tags; a field both sides changed (differently) is a conflict for them to decide.
export function merge(base, edited, current) {
  const body = {};
  const conflicts = [];
  for (const name of FIELDS) {
    if (edited[name] === base[name] || edited[name] === current[name]) continue;
    if (current[name] === base[name]) body[name] = edited[name];
    else conflicts.push({ name, theirs: current[name], mine: edited[name] });
  }
  const added = edited.tags.filter((tag) => !base.tags.includes(tag));
  const removed = base.tags.filter((tag) => !edited.tags.includes(tag));
  const merged = [...current.tags.filter((tag) => !removed.includes(tag)), ...added.filter((tag) => !current.tags.includes(tag))];
  if (!sameTags(merged, current.tags)) body.tags = merged;
  return { body, conflicts, added, removed };
}

async function changedBy(id, sinceVersion) {
  try {
    const history = (await api("GET", `/memories/${id}/history?limit=100`)).json.items;
    const keys = [...new Set(history.filter((r) => r.version > sinceVersion).map((r) => r.key_id))];
    return keys.map(keyName).join(" and ") || "another key";
  } catch {
    return "another key";
  }
}

function conflictChoice({ name, theirs, mine }, who) {
  const id = `choice-${name}`;
  const radios = [["theirs", `Keep theirs (${who})`, theirs], ["mine", "Use mine", mine]].map(([value, label, text]) =>
    h("label", { class: "choice" }, h("input", { type: "radio", name: id, value, checked: value === "theirs" }), label,
      h("span", { class: "side" }, String(text))));
  const box = h("fieldset", { class: "panel conflict", "data-field": name },
    h("legend", {}, `${LABELS[name]}: you and ${who} both changed it`), h("div", { class: "sides" }, radios));
  if (name === "content") {
    const area = h("textarea", { id: "merged-content", name: "merged-content" }, theirs);
    for (const radio of box.querySelectorAll("input[type=radio]")) {
      radio.addEventListener("change", () => { area.value = radio.value === "mine" ? mine : theirs; });
    }
    box.append(h("label", { for: "merged-content" }, "Content to save (edit it as you like)"), area);
  }
  return box;
}

function chosen(form, conflicts, current) {
  const body = {};
  for (const { name, mine } of conflicts) {
    const value = name === "content" ? form.querySelector("#merged-content").value
      : (form.querySelector(`input[name="choice-${name}"]:checked`)?.value === "mine" ? mine : current[name]);
    if (value !== current[name]) body[name] = value;
  }
  return body;
}

function mergedList(plan, current) {
  const items = [];
  for (const [name, value] of Object.entries(plan.body)) {
    if (name !== "tags") items.push(h("li", {}, `${LABELS[name]}: yours is applied (they did not change it).`));
  }
  if (plan.added.length || plan.removed.length) {
    const kept = current.tags.filter((tag) => !plan.removed.includes(tag));
    items.push(h("li", {}, `Tags: ${[plan.added.length ? `you added ${plan.added.join(", ")}` : "",
      plan.removed.length ? `you removed ${plan.removed.join(", ")}` : ""].filter(Boolean).join("; ")}; ` +
      `their tags are kept: ${kept.join(", ") || "none"}.`));
  }
  return items.length ? h("ul", {}, items) : h("p", {}, "Nothing else of yours to apply.");
}

async function conflictView(base, edited) {
  notify("");
  let current;
  try {
    current = (await api("GET", `/memories/${base.id}`)).json;
  } catch (error) {
    if (error.status === 404) return goneView(base, edited);
    return failed(error);
  }
  const who = await changedBy(base.id, base.version);
  const plan = merge(base, edited, current);
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const body = { ...plan.body, ...chosen(form, plan.conflicts, current) };
    if (!Object.keys(body).length) { app.guard = null; notify("Nothing of yours differs from the current version.", "ok"); return app.route(); }
    try {
      await api("PATCH", `/memories/${base.id}`, { body, ifMatch: current.version });
      app.guard = null;
      notify(`Your changes are merged into version ${current.version}.`, "ok");
      app.route();
    } catch (error) {
      if (error.status === 412) return conflictView(current, { ...current, ...body });
      if (error.status === 404) return goneView(current, { ...current, ...body });
      failed(error);
    }
  } },
  plan.conflicts.map((conflict) => conflictChoice(conflict, who)),
  h("div", { class: "actions" },
    h("button", { type: "submit", class: "primary" }, "Save merged changes"),
    h("button", { type: "button", onclick: () => { app.guard = null; notify("Your changes are discarded.", "ok"); app.route(); } },
      "Discard my changes")));
  const theirs = changes(base, current);
  show(`Memory #${base.id} changed while you edited it`,
    h("p", {}, `You edited version ${base.version}; ${who} changed it since: it is now at version ${current.version}. `,
      "Nothing was overwritten."),
    h("h2", {}, `What ${who} changed`),
    h("div", { class: "panel" }, theirs.length ? theirs : h("p", {}, "Nothing visible.")),
    h("h2", {}, "Your changes, merged"), mergedList(plan, current),
    plan.conflicts.length ? h("h2", {}, "Choose where you both changed the same field") : null,
    form);
  app.guard = () => true;
}

// ---- a memory deleted (or purged) while the person edited it ----

async function goneView(base, edited) {
  let found = null;
  try {
    found = await load(base.id);
  } catch (error) {
    return failed(error);
  }
  if (!found) {
    show(`Memory #${base.id} was purged while you edited it`,
      h("p", {}, "It cannot be restored. What you typed, to copy:"), h("pre", { class: "json", tabindex: "0" }, edited.content));
    return;
  }
  const again = async () => {
    try {
      const restored = (await api("POST", `/memories/${base.id}/restore`)).json;
      notify(`Memory #${base.id} is restored: your changes are still in the form; save them when ready.`, "ok");
      editView(restored, edited);
    } catch (error) {
      failed(error);
    }
  };
  show(`Memory #${base.id} was deleted while you edited it`, deletedPanel(found.history.items[0]),
    h("p", {}, "Your changes are not saved. Restore it to keep editing (your changes stay in the form), or discard them."),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: again }, "Restore and keep editing"),
      h("button", { type: "button", onclick: () => { app.guard = null; notify("Your changes are discarded.", "ok"); app.route(); } },
        "Discard my changes")));
  app.guard = () => true;
}

export function newView() {
  const blank = { content: "", tags: [], memory_type: "fact", status: "active" };
  const form = memoryForm(blank, "Create", async (submitted) => {
    const body = readForm(submitted);
    try {
      const created = (await api("POST", "/memories", { body })).json;
      app.guard = null;
      flash(`Memory #${created.id} is created.`);
      location.hash = `#/memory/${created.id}`;
    } catch (error) {
      if (error.status === 422) return showFieldErrors(submitted, withCount(error.problem, body.tags), { tags: body.tags });
      failed(error);
    }
  }, () => { location.hash = "#/"; });
  show("New memory", form);
  guarded(form, blank);
}
