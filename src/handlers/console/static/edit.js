// Editing and creating, always with If-Match: typed input is never lost without asking (nor when the key stops working
// meanwhile: drafts.js keeps it for after the next sign-in), a change made meanwhile is merged field by field (never
// overwritten), and a memory deleted meanwhile can be restored and edited on.

import { api, failed } from "./api.js";
import { app, flash, h, mayLeave, notify, show } from "./dom.js";
import { discarded, draftOffer, dropDrafts, keptOn, namespace } from "./drafts.js";
import { showFieldErrors } from "./errors.js";
import { saveButton, saveHint, savesOnCtrlEnter } from "./keys.js";
import { conflictView, FIELDS, sameTags } from "./merge.js";
import { deletedPanel, load } from "./record.js";

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
    h("div", { class: "actions" }, saveButton(submitLabel),
      h("button", { type: "button", onclick: async () => { if (await mayLeave()) oncancel(); } }, "Cancel"),
      saveHint()));
  return savesOnCtrlEnter(form);
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

// A memory changed meanwhile: merged (merge.js), or said to be deleted meanwhile (below).
const conflict = (base, edited) => conflictView(base, edited, goneView);

// A memory's draft kept across a sign-in: into the form when the memory is still the version it started from, else
// through the merge, never over a newer version.
export function memoryDraft(memory) {
  return draftOffer(namespace(), memory.id, (draft) => (memory.status !== "deleted" && memory.version === draft.version
    ? editView(memory, draft.edited) : conflict(draft.base, draft.edited)));
}

async function save(base, edited, form) {
  const ns = namespace();
  const changed = changedFields(base, edited);
  if (!Object.keys(changed).length) return app.route();
  try {
    await api("PATCH", `/memories/${base.id}`, { body: changed, ifMatch: base.version });
    app.guard = null;
    dropDrafts(ns, base.id);
    notify(`Memory #${base.id} is saved.`, "ok");
    app.route();
  } catch (error) {
    if (keptOn(error, ns, base, edited)) return undefined;
    if (error.status === 412) return conflict(base, edited);
    if (error.status === 404) return goneView(base, edited);
    if (error.status === 422) return showFieldErrors(form, withCount(error.problem, edited.tags), { tags: changed.tags });
    failed(error);
  }
}

// ---- a memory deleted (or purged) while the person edited it ----

async function goneView(base, edited) {
  const ns = namespace();
  let found = null;
  try {
    found = await load(base.id);
  } catch (error) {
    return keptOn(error, ns, base, edited) ? undefined : failed(error);
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
      if (!keptOn(error, ns, base, edited)) failed(error);
    }
  };
  show(`Memory #${base.id} was deleted while you edited it`, deletedPanel(found.history.items[0]),
    h("p", {}, "Your changes are not saved. Restore it to keep editing (your changes stay in the form), or discard them."),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: again }, "Restore and keep editing"),
      h("button", { type: "button", onclick: () => discarded(ns, base.id) }, "Discard my changes")));
  app.guard = () => true;
}

export function newView(draft = null) {
  const ns = namespace();
  const blank = { content: "", tags: [], memory_type: "fact", status: "active" };
  const form = memoryForm(draft || blank, "Create", async (submitted) => {
    const body = readForm(submitted);
    try {
      const created = (await api("POST", "/memories", { body })).json;
      app.guard = null;
      dropDrafts(ns, "new");
      flash(`Memory #${created.id} is created.`);
      location.hash = `#/memory/${created.id}`;
    } catch (error) {
      if (keptOn(error, ns, null, body)) return undefined;
      if (error.status === 422) return showFieldErrors(submitted, withCount(error.problem, body.tags), { tags: body.tags });
      failed(error);
    }
  }, () => { location.hash = "#/memories"; });
  show("New memory", draft ? null : draftOffer(ns, "new", (kept) => newView(kept.edited)), form);
  guarded(form, blank);
}
