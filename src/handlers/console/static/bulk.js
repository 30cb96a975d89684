// Select many, act once: rows (or all N matching the filter) marked invalid or active, deleted, restored, tagged or
// untagged, after one confirmation that says how many (and what the change does), with progress, and a summary of
// what failed and why. Each memory is its own request with its own If-Match (the contract has no bulk endpoint), a
// few at a time.

import { api, can, failed } from "./api.js";
import { activeMeans, app, confirmDialog, h, invalidMeans, show } from "./dom.js";
import { FILTERS, listHash } from "./list.js";

const AT_ONCE = 4;
const PAGE = 100;
const selected = new Map(); // id → the memory as listed (its version is its If-Match)
let selectionFilter = "";

// Every memory the filter matches, page by page, read without stamping.
export async function everyMatch(params, progress = () => {}) {
  const query = new URLSearchParams();
  for (const name of FILTERS) if (params.get(name) && !["limit", "offset"].includes(name)) query.set(name, params.get(name));
  query.set("limit", String(PAGE));
  const found = [];
  for (let offset = 0; ; offset += PAGE) {
    query.set("offset", String(offset));
    const page = (await api("GET", `/memories?${query}`)).json;
    found.push(...page.items);
    progress(found.length, page.total);
    if (!page.has_more) return found;
  }
}

const ACTIONS = {
  invalid: { label: "Mark invalid", verb: "marked invalid",
    request: (m) => (m.status === "active" ? ["PATCH", `/memories/${m.id}`, { body: { status: "invalid" }, ifMatch: m.version }] : null) },
  active: { label: "Mark active", verb: "marked active",
    request: (m) => (m.status === "invalid" ? ["PATCH", `/memories/${m.id}`, { body: { status: "active" }, ifMatch: m.version }] : null) },
  delete: { label: "Delete", verb: "deleted",
    request: (m) => (m.status !== "deleted" ? ["DELETE", `/memories/${m.id}`, {}] : null) },
  restore: { label: "Restore", verb: "restored",
    request: (m) => (m.status === "deleted" ? ["POST", `/memories/${m.id}/restore`, {}] : null) },
  tag: { label: "Add tag", verb: "tagged",
    request: (m, tag) => (m.status !== "deleted" && !m.tags.includes(tag)
      ? ["PATCH", `/memories/${m.id}`, { body: { tags: [...m.tags, tag] }, ifMatch: m.version }] : null) },
  untag: { label: "Remove tag", verb: "untagged",
    request: (m, tag) => (m.status !== "deleted" && m.tags.includes(tag)
      ? ["PATCH", `/memories/${m.id}`, { body: { tags: m.tags.filter((t) => t !== tag) }, ifMatch: m.version }] : null) },
};

async function runAll(memories, action, tag, progress) {
  const outcome = { done: 0, skipped: 0, failed: [] };
  const queue = [...memories];
  const worker = async () => {
    for (let memory = queue.shift(); memory; memory = queue.shift()) {
      const request = ACTIONS[action].request(memory, tag);
      if (!request) outcome.skipped++;
      else {
        try {
          await api(request[0], request[1], { ...request[2], quiet: true });
          outcome.done++;
        } catch (error) {
          outcome.failed.push({ id: memory.id, status: error.status, detail: error.status === 412
            ? "it changed since the list was read; open it and try again" : error.message });
        }
      }
      // Those finished, not those begun: the first answer of four under way is 1 of N, not 4.
      progress(outcome.done + outcome.skipped + outcome.failed.length, memories.length);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return outcome;
}

async function act(action, params) {
  const tagInput = document.getElementById("bulk-tag");
  const tag = tagInput ? tagInput.value.trim().toLowerCase() : "";
  if ((action === "tag" || action === "untag") && !tag) {
    tagInput.setAttribute("aria-invalid", "true");
    tagInput.focus();
    return;
  }
  const memories = [...selected.values()];
  const what = `${memories.length} ${memories.length === 1 ? "memory" : "memories"}`;
  const title = { invalid: `Mark ${what} invalid?`, active: `Mark ${what} active?`, delete: `Delete ${what}?`,
    restore: `Restore ${what}?`, tag: `Add the tag ${tag} to ${what}?`, untag: `Remove the tag ${tag} from ${what}?` }[action];
  const means = { invalid: `${invalidMeans(true)} `, active: `${activeMeans(true)} ` }[action] || "";
  const ok = await confirmDialog(title, action === "delete"
    ? `They disappear from every search; each stays restorable for ${app.config.retention_days} days.`
    : `${means}Each memory is changed on its own, with the version the list showed: one changed meanwhile is left alone.`,
  ACTIONS[action].label);
  if (!ok) return;
  const progress = h("progress", { max: memories.length, value: 0, "aria-label": "Progress" });
  const status = h("p", { role: "status" }, `0 of ${memories.length}`);
  show(`${ACTIONS[action].label}: ${what}`, status, progress);
  const outcome = await runAll(memories, action, tag, (n, total) => {
    progress.value = n;
    status.textContent = `${n} of ${total}`;
  });
  selected.clear();
  show(`${ACTIONS[action].label}: ${what}`,
    h("p", { role: "status", id: "bulk-summary" }, `${outcome.done} ${ACTIONS[action].verb}, ${outcome.skipped} left as they were ` +
      `(nothing to change), ${outcome.failed.length} failed.`),
    outcome.failed.length ? h("ul", { id: "bulk-failures" }, outcome.failed.map((f) =>
      h("li", {}, h("a", { href: `#/memory/${f.id}` }, `#${f.id}`), `: ${f.detail}${f.status ? ` (HTTP ${f.status})` : ""}`))) : null,
    h("p", {}, h("a", { href: listHash(params), onclick: (event) => {
      if (location.hash !== listHash(params)) return; // the list's address is still the address: show it again
      event.preventDefault();
      app.route();
    } }, "Back to the list")));
}

function toolbar(page, params) {
  const count = h("span", { id: "selected-count" });
  const all = h("button", { type: "button", class: "link", onclick: async () => {
    all.disabled = true;
    let found;
    try {
      found = await everyMatch(params, (n, total) => { count.textContent = `Reading ${n} of ${total}…`; });
    } catch (error) {
      all.disabled = false;
      refresh();
      return failed(error);
    }
    for (const memory of found) selected.set(memory.id, memory);
    for (const box of document.querySelectorAll("input.select-row")) box.checked = true;
    refresh();
  } }, `Select all ${page.total} matching this filter`);
  const buttons = Object.entries(ACTIONS).map(([action, { label }]) =>
    h("button", { type: "button", "data-action": action, onclick: () => act(action, params) }, label));
  const bar = h("div", { class: "bulk panel", role: "region", "aria-label": "Selected memories", hidden: true },
    count, all, h("div", { class: "actions" }, buttons.slice(0, 4),
      h("label", { for: "bulk-tag", class: "inline" }, "Tag to add or remove"),
      h("input", { type: "text", id: "bulk-tag", list: "standard-tags", autocomplete: "off", size: 14 }),
      buttons.slice(4)));
  const refresh = () => {
    bar.hidden = selected.size === 0;
    count.textContent = `${selected.size} selected`;
    all.hidden = selected.size >= page.total;
  };
  bar.refresh = refresh;
  return bar;
}

// The list's hooks: a checkbox per row and one for the page, and the bar of actions.
export function bulkHooks() {
  if (!can("write")) return {};
  let bar = null;
  return {
    bar: (page, params) => {
      const filter = listHash(new URLSearchParams([...params].filter(([name]) => name !== "offset")));
      if (filter !== selectionFilter) { selected.clear(); selectionFilter = filter; } // another filter: a new selection
      bar = toolbar(page, params);
      return bar;
    },
    table: (page) => ({
      heading: h("th", { scope: "col" }, h("input", { type: "checkbox", class: "select-page", "aria-label": "Select every memory on this page",
        checked: page.items.length > 0 && page.items.every((m) => selected.has(m.id)), onchange: (event) => {
          for (const memory of page.items) {
            if (event.target.checked) selected.set(memory.id, memory); else selected.delete(memory.id);
          }
          for (const box of document.querySelectorAll("input.select-row")) box.checked = event.target.checked;
          bar.refresh();
        } })),
      cell: (memory) => h("td", { class: "select" }, h("input", { type: "checkbox", class: "select-row",
        "aria-label": `Select memory #${memory.id}`, checked: selected.has(memory.id), onchange: (event) => {
          if (event.target.checked) selected.set(memory.id, memory); else selected.delete(memory.id);
          bar.refresh();
        } })),
    }),
    done: () => bar?.refresh(),
  };
}
