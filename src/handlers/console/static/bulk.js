// Select many, act once: the selected memories (rows, a page, all N matching the filter, gathered across searches)
// marked invalid or active, deleted, restored, purged, tagged or untagged, after one confirmation that says how many
// and lists them (and what the change does), with progress, and a summary of what failed and why, with Undo. Each
// memory is its own request with its own If-Match (the contract has no bulk endpoint), a few at a time. Only the
// actions that apply to the selection are offered: Restore and Purge for deleted memories, the others for the rest.

import { api, can, failed } from "./api.js";
import { activeMeans, app, confirmDialog, h, invalidMeans, show } from "./dom.js";
import { FILTERS, listHash } from "./list.js";
import { clearSelection, selected, selectionCells } from "./selection.js";

const AT_ONCE = 4;
const PAGE = 100;
const LISTED = 10; // a confirmation names this many memories, then "and N more"
let everyRead = ""; // the filter whose every match was read into the selection

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

const patch = (m, body, version) => ["PATCH", `/memories/${m.id}`, { body, ifMatch: version }];

// Each action: the request for one memory (none when there is nothing to change), and its undo from the memory as it
// was and the API's answer (the record's new version is the undo's If-Match). Deleted memories take only restore and
// purge; a purge has no undo.
const ACTIONS = {
  invalid: { label: "Mark invalid", verb: "marked invalid", undone: "marked active again",
    request: (m) => (m.status === "active" ? patch(m, { status: "invalid" }, m.version) : null),
    undo: (m, now) => patch(m, { status: "active" }, now.version) },
  active: { label: "Mark active", verb: "marked active", undone: "marked invalid again",
    request: (m) => (m.status === "invalid" ? patch(m, { status: "active" }, m.version) : null),
    undo: (m, now) => patch(m, { status: "invalid" }, now.version) },
  delete: { label: "Delete", verb: "deleted", undone: "restored",
    request: (m) => (m.status !== "deleted" ? ["DELETE", `/memories/${m.id}`, {}] : null),
    undo: (m) => ["POST", `/memories/${m.id}/restore`, {}] },
  restore: { label: "Restore", verb: "restored", undone: "deleted again",
    request: (m) => (m.status === "deleted" ? ["POST", `/memories/${m.id}/restore`, {}] : null),
    undo: (m) => ["DELETE", `/memories/${m.id}`, {}] },
  purge: { label: "Purge", verb: "purged", confirm: "Purge for good",
    request: (m) => (m.status === "deleted" ? ["DELETE", `/memories/${m.id}?purge=true`, {}] : null) },
  tag: { label: "Add tag", verb: "tagged", undone: "untagged again",
    request: (m, tag) => (m.status !== "deleted" && !m.tags.includes(tag) ? patch(m, { tags: [...m.tags, tag] }, m.version) : null),
    undo: (m, now) => patch(m, { tags: m.tags }, now.version) },
  untag: { label: "Remove tag", verb: "untagged", undone: "tagged again",
    request: (m, tag) => (m.status !== "deleted" && m.tags.includes(tag) ? patch(m, { tags: m.tags.filter((t) => t !== tag) }, m.version) : null),
    undo: (m, now) => patch(m, { tags: m.tags }, now.version) },
};
const TAGGING = ["tag", "untag"];

// Whether the action could change any of `memories` (a tag action: whatever the tag, any memory not deleted).
function applies(action, memories) {
  if (TAGGING.includes(action)) return memories.some((m) => m.status !== "deleted");
  return memories.some((m) => ACTIONS[action].request(m, ""));
}

// `requests`: [memory, request or null]; each answer kept for the undo.
async function runAll(requests, progress) {
  const outcome = { done: [], skipped: 0, failed: [] };
  const queue = [...requests];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [memory, request] = next;
      if (!request) outcome.skipped++;
      else {
        try {
          const answer = await api(request[0], request[1], { ...request[2], quiet: true });
          outcome.done.push([memory, answer.json]);
        } catch (error) {
          outcome.failed.push({ id: memory.id, status: error.status, detail: error.status === 412
            ? "it changed since the list was read; open it and try again" : error.message });
        }
      }
      // Those finished, not those begun: the first answer of four under way is 1 of N, not 4.
      progress(outcome.done.length + outcome.skipped + outcome.failed.length, requests.length);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return outcome;
}

// Runs `requests` under `title` with a progress bar; the outcome once every one has answered.
async function withProgress(title, requests) {
  const progress = h("progress", { max: requests.length, value: 0, "aria-label": "Progress" });
  const status = h("p", { role: "status" }, `0 of ${requests.length}`);
  show(title, status, progress);
  return runAll(requests, (n, total) => {
    progress.value = n;
    status.textContent = `${n} of ${total}`;
  });
}

function failures(outcome) {
  return outcome.failed.length ? h("ul", { id: "bulk-failures" }, outcome.failed.map((f) =>
    h("li", {}, h("a", { href: `#/memory/${f.id}` }, `#${f.id}`), `: ${f.detail}${f.status ? ` (HTTP ${f.status})` : ""}`))) : null;
}

function backLink(params) {
  return h("p", {}, h("a", { href: listHash(params), onclick: (event) => {
    if (location.hash !== listHash(params)) return; // the list's address is still the address: show it again
    event.preventDefault();
    app.route();
  } }, "Back to the list"));
}

// Undo: the reverse of each change that was made, each with the version the change gave it.
async function undo(action, title, outcome, params) {
  const spec = ACTIONS[action];
  const done = await withProgress(`Undo: ${title}`, outcome.done.map(([memory, now]) => [memory, spec.undo(memory, now)]));
  show(`Undo: ${title}`, h("p", { role: "status", id: "bulk-summary" },
    `Undone: ${done.done.length} ${spec.undone}, ${done.failed.length} failed.`), failures(done), backLink(params));
}

// "#12 The user prefers concise answers…": the memory's id and its first words.
function named(memory) {
  const words = memory.content.replace(/\s+/g, " ").trim();
  const cut = words.length > 60 ? `${words.slice(0, Math.max(words.lastIndexOf(" ", 60), 30))}…` : words;
  return h("li", {}, h("strong", {}, `#${memory.id}`), ` ${cut}`);
}

function touched(memories, changing) {
  const left = memories.length - changing;
  return [h("ul", { class: "touched" }, memories.slice(0, LISTED).map(named)),
    memories.length > LISTED ? h("p", { class: "meta" }, `and ${memories.length - LISTED} more`) : null,
  left ? h("p", {}, `${left} of them ${left === 1 ? "has" : "have"} nothing to change and ${left === 1 ? "is" : "are"} left as ${left === 1 ? "it is" : "they are"}.`) : null];
}

async function act(action, params) {
  const tagInput = document.getElementById("bulk-tag");
  const tag = tagInput ? tagInput.value.trim().toLowerCase() : "";
  if (TAGGING.includes(action) && !tag) {
    tagInput.setAttribute("aria-invalid", "true");
    tagInput.focus();
    return;
  }
  const memories = [...selected.values()];
  const requests = memories.map((m) => [m, ACTIONS[action].request(m, tag)]);
  const what = `${memories.length} ${memories.length === 1 ? "memory" : "memories"}`;
  const title = { invalid: `Mark ${what} invalid?`, active: `Mark ${what} active?`, delete: `Delete ${what}?`,
    restore: `Restore ${what}?`, purge: `Purge ${what} for good?`, tag: `Add the tag ${tag} to ${what}?`,
    untag: `Remove the tag ${tag} from ${what}?` }[action];
  const means = { invalid: `${invalidMeans(true)} `, active: `${activeMeans(true)} ` }[action] || "";
  const text = {
    delete: `They disappear from every search; each stays restorable for ${app.config.retention_days} days.`,
    purge: "Purging is final: each memory and its whole history are erased and cannot be restored.",
  }[action] || `${means}Each memory is changed on its own, with the version the list showed: one changed meanwhile is left alone.`;
  const ok = await confirmDialog(title, [h("p", {}, text), ...touched(memories, requests.filter(([, r]) => r).length)],
    ACTIONS[action].confirm || ACTIONS[action].label);
  if (!ok) return;
  const heading = `${ACTIONS[action].label}: ${what}`;
  const outcome = await withProgress(heading, requests);
  clearSelection();
  everyRead = "";
  const undoable = ACTIONS[action].undo && outcome.done.length;
  show(heading,
    h("p", { role: "status", id: "bulk-summary" }, `${outcome.done.length} ${ACTIONS[action].verb}, ${outcome.skipped} left as they were ` +
      `(nothing to change), ${outcome.failed.length} failed.`),
    failures(outcome),
    undoable ? h("p", {}, h("button", { type: "button", onclick: () => undo(action, heading, outcome, params) }, "Undo"),
      ` puts the ${outcome.done.length} back as they were.`) : null,
    backLink(params));
}

function toolbar(page, params) {
  const filter = listHash(new URLSearchParams([...params].filter(([name]) => !["offset", "limit"].includes(name))));
  const count = h("span", { id: "selected-count" });
  const elsewhere = h("span", { class: "meta" });
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
    for (const box of document.querySelectorAll("input.select-row, input.select-page")) box.checked = true;
    everyRead = filter;
    refresh();
  } }, `Select all ${page.total} matching this filter`);
  const clear = h("button", { type: "button", class: "link", onclick: () => {
    clearSelection();
    everyRead = "";
    refresh();
  } }, "Clear selection");
  const buttons = Object.entries(ACTIONS).map(([action, { label }]) =>
    h("button", { type: "button", "data-action": action, onclick: () => act(action, params) }, label));
  const tagging = h("span", { class: "actions" }, h("label", { for: "bulk-tag", class: "inline" }, "Tag to add or remove"),
    h("input", { type: "text", id: "bulk-tag", list: "standard-tags", autocomplete: "off", size: 14,
      placeholder: "tag" }), buttons.slice(5));
  const bar = h("div", { class: "bulk panel", role: "region", "aria-label": "Selected memories", hidden: true },
    h("p", {}, count, " ", elsewhere, " ", clear, " ", all), h("div", { class: "actions" }, buttons.slice(0, 5), tagging));
  const refresh = () => {
    const memories = [...selected.values()];
    const here = page.items.filter((m) => selected.has(m.id)).length;
    bar.hidden = selected.size === 0;
    count.textContent = `${selected.size} selected`;
    elsewhere.textContent = selected.size > here ? `(${selected.size - here} not on this page)` : "";
    all.hidden = everyRead === filter || (page.total <= page.items.length && here === page.items.length);
    for (const button of buttons) button.hidden = !applies(button.dataset.action, memories);
    tagging.hidden = !applies("tag", memories);
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
      bar = toolbar(page, params);
      return bar;
    },
    table: (page) => selectionCells(page, () => bar?.refresh()),
    done: () => bar?.refresh(),
  };
}
