// One memory: its fields, what the key may do with it, its full record as JSON, and its history.

import { api, can, failed } from "./api.js";
import { activeMeans, app, confirmDialog, flash, h, invalidMeans, notify, show, statusText, stillShown, tags, when } from "./dom.js";
import { editView, memoryDraft } from "./edit.js";
import { timeline } from "./history.js";
import { deletedPanel, load } from "./record.js";
import { mayReplace, searchModel, supersededPanel } from "./supersede.js";

const EDITABLE = ["content", "tags", "memory_type", "status"];

export async function memoryView(id) {
  show(`Memory #${id}`, h("p", { class: "meta" }, "Loading…"));
  const shown = stillShown();
  let found;
  try {
    found = await load(id);
  } catch (error) {
    return shown() ? failed(error) : undefined;
  }
  if (!shown()) return undefined;
  if (!found) return show(`Memory #${id}`, h("p", {}, "There is no such memory (it may have been purged)."));
  renderMemory(found.memory, found.history);
}

// `meaning`: where the memory view says whether the memory is searchable by meaning (supersede.js fills it).
function fields(memory, meaning) {
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
  if (meaning) rows.push(["Search by meaning", meaning]);
  return h("dl", { class: "fields" }, rows.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]));
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    notify(`Copied ${what}: ${text}`, "ok");
  } catch {
    notify(`Copy it by hand: ${text}`, "info");
  }
}

function actions(memory) {
  const bar = h("div", { class: "actions" });
  if (can("write")) {
    if (memory.status !== "deleted") {
      bar.append(h("button", { type: "button", class: "primary", id: "edit", onclick: () => editView(memory) }, "Edit"));
      const [status, label] = memory.status === "active" ? ["invalid", "Mark invalid"] : ["active", "Mark active"];
      bar.append(h("button", { type: "button", "aria-describedby": "status-hint", onclick: () => setStatus(memory, status) }, label));
      bar.append(h("button", { type: "button", class: "danger", onclick: () => remove(memory) }, "Delete"));
    } else {
      bar.append(h("button", { type: "button", class: "primary", onclick: () => restore(memory) }, "Restore"));
      bar.append(h("button", { type: "button", class: "danger", onclick: () => purge(memory) }, "Purge"));
    }
  }
  bar.append(
    h("button", { type: "button", onclick: () => copy(String(memory.id), "the id") }, "Copy id"),
    h("button", { type: "button", onclick: () => copy(new URL(`/memories/${memory.id}`, location.href).href, "the API URL") }, "Copy API URL"),
    h("a", { href: `#/memory/${memory.id}/json`, class: "button" }, "Full record as JSON"));
  return bar;
}

// What Mark invalid would do to an active memory, or what being invalid does (and Mark active would undo).
function statusHint(memory) {
  if (memory.status === "active" && can("write")) {
    return h("p", { class: "hint", id: "status-hint" }, `Mark invalid: wrong or outdated, kept on record. ${invalidMeans()}`);
  }
  if (memory.status !== "invalid") return null;
  return h("p", { class: "hint", id: "status-hint" }, `Invalid: ${invalidMeans()}`, can("write") ? " Mark active undoes it." : "");
}

function renderMemory(memory, history) {
  const readOnly = can("write") ? null : h("p", { class: "hint" }, "This key may only read: it cannot change memories.");
  const meaning = memory.status === "deleted" ? null : h("span", { id: "meaning" }, "being checked…");
  show(`Memory #${memory.id}`, memoryDraft(memory), deletedPanel(history.items[0]), supersededPanel(memory, history.items),
    fields(memory, meaning), actions(memory), statusHint(memory), readOnly, mayReplace(memory, stillShown(), act, meaning),
    h("h2", { id: "history" }, "History"), timeline(history.items, (revision, index) => rollback(memory, revision, index)),
    h("p", {}, h("a", { href: "#/memories" }, "Back to the list")));
}

// "Restore this version": a new revision with that version's content, tags, type and status, through PATCH with
// If-Match (a concurrent change is not overwritten), sending only the fields that differ.
function rollback(memory, revision, index) {
  if (index === 0 || !can("write") || memory.status === "deleted") return null;
  const body = {};
  for (const name of EDITABLE) {
    const value = revision[name];
    if (name === "status" && !app.config.writable_statuses.includes(value)) continue;
    if (JSON.stringify(value) !== JSON.stringify(memory[name])) body[name] = value;
  }
  if (!Object.keys(body).length) return null;
  return h("button", { type: "button", class: "link", onclick: async () => {
    const ok = await confirmDialog(`Restore version ${revision.version}?`,
      `Memory #${memory.id} gets that version's ${Object.keys(body).join(", ").replace("memory_type", "type")} back, as a new version.`,
      "Restore this version");
    if (ok) act(() => api("PATCH", `/memories/${memory.id}`, { body, ifMatch: memory.version }),
      `Memory #${memory.id} is back to what version ${revision.version} said.`);
  } }, `Restore version ${revision.version}`);
}

export function jsonView(id) {
  show(`Memory #${id} as JSON`, h("p", { class: "meta" }, "Loading…"));
  const shown = stillShown();
  load(id).then((found) => {
    if (!shown()) return;
    if (!found) return show(`Memory #${id} as JSON`, h("p", {}, "There is no such memory (it may have been purged)."));
    show(`Memory #${id} as JSON`,
      h("p", { class: "hint" }, "The record exactly as an agent gets it (read without stamping it as used)."),
      h("pre", { class: "json", tabindex: "0", "aria-label": "The record as JSON" }, JSON.stringify(found.memory, null, 2)),
      found.memory.status === "deleted" ? null : searchModel(found.memory, shown),
      h("p", {}, h("a", { href: `#/memory/${id}` }, `Back to memory #${id}`)));
  }, failed);
}

async function act(work, done) {
  try {
    await work();
    notify(done, "ok");
  } catch (error) {
    if (error.status === 412) notify("The memory changed meanwhile: look at its new version and try again.", "error");
    else failed(error);
  }
  app.route();
}

function setStatus(memory, status) {
  act(() => api("PATCH", `/memories/${memory.id}`, { body: { status }, ifMatch: memory.version }), status === "invalid"
    ? `Memory #${memory.id} is marked invalid. ${invalidMeans()}`
    : `Memory #${memory.id} is active again. ${activeMeans()}`);
}

async function remove(memory) {
  const days = app.config.retention_days;
  const ok = await confirmDialog(`Delete memory #${memory.id}?`,
    `It disappears from every search. You can restore it for ${days} days; after that it is ` +
    "purged for good. To keep it on record but out of recall, mark it invalid instead.", "Delete");
  if (ok) act(() => api("DELETE", `/memories/${memory.id}`), `Memory #${memory.id} is deleted; restorable for ${days} days.`);
}

export function restore(memory) {
  act(() => api("POST", `/memories/${memory.id}/restore`), `Memory #${memory.id} is restored.`);
}

async function purge(memory) {
  const ok = await confirmDialog(`Purge memory #${memory.id} for good?`,
    "Purging is final: the memory and its whole history are erased and cannot be restored.", "Purge for good");
  if (!ok) return;
  try {
    await api("DELETE", `/memories/${memory.id}?purge=true`);
    flash(`Memory #${memory.id} is purged.`);
    location.hash = "#/?status=deleted";
  } catch (error) {
    failed(error);
  }
}
