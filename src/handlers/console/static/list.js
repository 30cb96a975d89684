// The list: the filters (kept in the address), a page of memories with a short preview of each, pages.

import { api, failed } from "./api.js";
import { app, h, highlight, purgeCountdown, show, statusText, stillShown, tags, when } from "./dom.js";
import { showFieldErrors } from "./errors.js";

export const FILTERS = ["status", "memory_type", "tag", "q", "sort", "limit", "offset"];
const PREVIEW_CHARS = 140;
// The console's own defaults, not the API's (id order, 10 rows): the newest first, a desktop screen's worth at once.
export const DEFAULT_SORT = "created_at";
const PAGE_SIZE = 25;
const pageSize = () => String(Math.min(PAGE_SIZE, app.config.max_limit));

export const SORT_NAMES = {
  id: "id (oldest first)",
  created_at: "created (newest first)",
  updated_at: "updated (newest first)",
  last_accessed_at: "last used by an agent",
};
// The time column each sort shows, and the column headings a click sorts by.
const TIME_COLUMNS = { id: ["updated_at", "Updated"], created_at: ["created_at", "Created"],
  updated_at: ["updated_at", "Updated"], last_accessed_at: ["last_accessed_at", "Last used"] };

export function listHash(params) {
  const kept = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) kept.set(name, value);
  }
  if (kept.get("offset") === "0") kept.delete("offset");
  const query = kept.toString();
  return query ? `#/?${query}` : "#/memories"; // a bare #/ is the overview
}

// The first line, cut at a word near PREVIEW_CHARS; when the searched text is further on, the words around it.
export function preview(content, q) {
  const firstLine = content.split("\n", 1)[0];
  const at = q ? content.toLowerCase().indexOf(q.toLowerCase()) : -1;
  let start = 0;
  if (at >= 0 && at + q.length > Math.min(firstLine.length, PREVIEW_CHARS)) start = Math.max(0, content.lastIndexOf(" ", Math.max(0, at - 40)) + 1);
  const source = start ? content : firstLine;
  let end = Math.min(source.length, start + PREVIEW_CHARS);
  if (end < source.length) end = Math.max(source.lastIndexOf(" ", end), start + PREVIEW_CHARS / 2);
  const text = source.slice(start, end).replace(/\s+/g, " ").trim();
  return [start ? "…" : "", highlight(text, q), end < content.length ? "…" : ""];
}

function select(id, label, options, value, extra = {}) {
  return [
    h("label", { for: id }, label),
    h("select", { id, name: id, ...extra },
      options.map(([optionValue, text]) => h("option", { value: optionValue, selected: optionValue === value }, text))),
  ];
}

// A value the address holds but the list does not offer is shown as it is (and its error next to it).
function options(values, names, value) {
  const listed = values.map((v) => [v, names[v] || v]);
  return value && !values.includes(value) ? [...listed, [value, `${value} (not valid)`]] : listed;
}

// The usual page sizes, and the address's own when it is another (any whole number from 1 is served).
function perPage(value) {
  const sizes = [10, 25, 50, 100].filter((n) => n <= app.config.max_limit).map(String);
  if (!value || sizes.includes(value)) return sizes.map((n) => [n, n]);
  return [...sizes.map((n) => [n, n]), [value, /^[1-9][0-9]*$/.test(value) ? value : `${value} (not valid)`]];
}

function filterForm(params) {
  const config = app.config;
  const form = h("form", { class: "filters", role: "search", onsubmit: (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams(new FormData(event.target));
    chosen.delete("offset");
    location.hash = listHash(chosen);
  } },
  h("div", {}, ...select("status", "Status", [["", "active and invalid"],
    ...options(config.statuses, {}, params.get("status"))], params.get("status") || "")),
  h("div", {}, ...select("memory_type", "Type", [["", "any"],
    ...options(config.memory_types, {}, params.get("memory_type"))], params.get("memory_type") || "")),
  h("div", {}, h("label", { for: "tag" }, "Tag"),
    h("input", { type: "text", id: "tag", name: "tag", list: "standard-tags", value: params.get("tag") || "",
      autocomplete: "off" })),
  h("div", {}, h("label", { for: "q" }, "Text contains"),
    h("input", { type: "search", id: "q", name: "q", value: params.get("q") || "" })),
  h("div", {}, ...select("sort", "Sort by", options(config.sorts, SORT_NAMES, params.get("sort")),
    params.get("sort") || DEFAULT_SORT)),
  h("div", {}, ...select("limit", "Per page", perPage(params.get("limit")), params.get("limit") || pageSize())),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Search"),
    h("button", { type: "button", onclick: () => { location.hash = "#/memories"; } }, "Clear")),
  h("datalist", { id: "standard-tags" }, config.standard_tags.map((tag) => h("option", { value: tag }))));
  const set = FILTERS.filter((name) => !["sort", "limit", "offset"].includes(name) && params.get(name)).length;
  // On a phone the filters fold away (their summary says how many are set), so the list is on the first screen.
  const narrow = window.matchMedia("(max-width: 40rem)").matches;
  return [form, h("details", { class: "filter-panel", open: !narrow },
    h("summary", {}, set ? `Filters (${set} set)` : "Filters"), form)];
}

function sortHeading(sort, params, label, current) {
  const next = new URLSearchParams(params);
  next.set("sort", sort);
  next.delete("offset");
  return h("th", { scope: "col", "aria-sort": current === sort ? (sort === "id" ? "ascending" : "descending") : false },
    h("a", { href: listHash(next), class: "sort", title: `Sort by ${SORT_NAMES[sort]}` }, label,
      current === sort ? (sort === "id" ? " ▲" : " ▼") : ""));
}

// Deleted rows say when they were deleted and when they are purged (the history's newest revision says when).
async function deletionDates(items) {
  const deleted = items.filter((memory) => memory.status === "deleted");
  const found = await Promise.all(deleted.map((memory) =>
    api("GET", `/memories/${memory.id}/history?limit=1`, { quiet: true }).then((r) => r.json.items[0], () => null)));
  return new Map(deleted.map((memory, index) => [memory.id, found[index]]));
}

function deletedNote(revision) {
  if (!revision || revision.change !== "deleted") return null;
  return h("p", { class: "meta deleted-at" }, "on ", when(revision.changed_at), ` · ${purgeCountdown(revision.changed_at)}`);
}

// A click anywhere on a row opens its memory, but not one on what does its own (a link, a button, the checkbox's
// cell, which ticks the checkbox), with a modifier key, or that ends selecting text to copy.
function openRow(event) {
  if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  const cell = event.target.closest("td.select");
  if (cell) {
    if (event.target === cell) cell.querySelector("input")?.click();
    return;
  }
  if (event.target.closest("a, button, input, label") || String(window.getSelection())) return;
  const row = event.target.closest("tr[data-id]");
  if (row) location.hash = `#/memory/${row.dataset.id}`;
}

// A tag never breaks inside (`needs-review` on one line); one too long for its cell still may.
function rowTags(list, q) {
  const shown = tags(list, q);
  if (Array.isArray(shown)) for (const tag of shown) if (tag.textContent.length > 24) tag.classList.add("long");
  return shown;
}

export function rowsTable(page, params, deletions, extra = {}) {
  const sort = params.get("sort") || DEFAULT_SORT;
  const [field, label] = TIME_COLUMNS[sort] || TIME_COLUMNS.id;
  const q = params.get("q") || "";
  const rows = page.items.map((memory) => h("tr", { "data-id": memory.id },
    extra.cell ? extra.cell(memory) : null,
    h("td", { "data-label": "Id" }, h("a", { href: `#/memory/${memory.id}`, class: "id" }, `#${memory.id}`)),
    h("td", { class: "content", "data-label": "Content" }, preview(memory.content, q)),
    h("td", { "data-label": "Type" }, memory.memory_type),
    h("td", { "data-label": "Status" }, statusText(memory.status), deletedNote(deletions.get(memory.id))),
    h("td", { class: "tags", "data-label": "Tags" }, rowTags(memory.tags, q)),
    h("td", { "data-label": label }, when(memory[field]))));
  const others = Object.keys(SORT_NAMES).filter((s) => s !== sort).map((s) => {
    const next = new URLSearchParams(params);
    next.set("sort", s);
    next.delete("offset");
    return [" ", h("a", { href: listHash(next), class: "sort-link" }, SORT_NAMES[s])];
  });
  return h("table", {}, h("caption", { class: "meta" }, `Sorted by ${SORT_NAMES[sort] || sort}. Sort by:`, others),
    h("thead", {}, h("tr", {}, extra.heading || null, sortHeading("id", params, "Id", sort),
      h("th", { scope: "col" }, "Content"), h("th", { scope: "col" }, "Type"), h("th", { scope: "col" }, "Status"),
      h("th", { scope: "col" }, "Tags"), sortHeading(sort === "id" ? "updated_at" : sort, params, label, sort))),
    h("tbody", { onclick: openRow }, rows));
}

function pager(page, params) {
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  const current = Math.floor(page.offset / page.limit) + 1;
  const move = (offset) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(Math.max(0, offset)));
    location.hash = listHash(next);
  };
  const past = current > pages;
  return {
    summary: past
      ? `${page.total} ${page.total === 1 ? "memory" : "memories"} · past the last page (${pages})`
      : `${page.total} ${page.total === 1 ? "memory" : "memories"} · page ${current} of ${pages}`,
    past: past ? h("p", {}, "This page is past the end of the list. ",
      h("button", { type: "button", class: "link", onclick: () => move((pages - 1) * page.limit) }, `Go to page ${pages}`)) : null,
    nav: h("nav", { class: "pager", "aria-label": "Pages" },
      h("button", { type: "button", disabled: page.offset === 0, onclick: () => move(Math.min(page.offset - page.limit, (pages - 1) * page.limit)) }, "Previous page"),
      h("span", {}, past ? `Past page ${pages}` : `Page ${current} of ${pages}`),
      h("button", { type: "button", disabled: !page.has_more, onclick: () => move(page.offset + page.limit) }, "Next page")),
  };
}

// A text search that finds nothing: recall may still find memories by meaning ("job" for "works at Acme").
function askInstead(params) {
  const q = (params.get("q") || "").trim();
  return q ? [" ", h("a", { href: `#/ask?${new URLSearchParams({ query: q })}` }, "Ask by meaning instead")] : null;
}

const FILTER_WORDS = { status: (v) => `status ${v}`, memory_type: (v) => `type ${v}`, tag: (v) => `tag "${v}"`,
  q: (v) => `text contains "${v}"` };

// The list without `names` (and from its first page): the sort and the page size stay.
function without(params, names) {
  const next = new URLSearchParams(params);
  for (const name of [...names, "offset"]) next.delete(name);
  return listHash(next);
}

// Nothing matches: which filters are in force (a leftover tag filter is no longer silent), each removable, and all
// cleared in one click; and Ask's hint for a text search.
function emptyState(params) {
  const set = Object.keys(FILTER_WORDS).filter((name) => params.get(name));
  if (!set.length) return h("div", { id: "empty" }, h("p", {}, "No memory matches."));
  const go = (names) => () => { location.hash = without(params, names); };
  return h("div", { id: "empty" },
    h("p", {}, `No memory matches ${set.length === 1 ? "this filter" : "these filters"}:`),
    h("ul", { class: "in-force" }, set.map((name) => h("li", {}, FILTER_WORDS[name](params.get(name)), " ",
      h("button", { type: "button", class: "link", "aria-label": `Remove the filter ${FILTER_WORDS[name](params.get(name))}`,
        onclick: go([name]) }, "remove")))),
    h("p", {}, h("button", { type: "button", class: "primary", onclick: go(set) }, "Clear filters"), askInstead(params)));
}

export async function listView(params, hooks = {}) {
  const query = new URLSearchParams({ sort: DEFAULT_SORT, limit: pageSize() });
  for (const name of FILTERS) if (params.get(name)) query.set(name, params.get(name));
  const [form, panel] = filterForm(params);
  const results = h("div", { id: "results" }, h("p", { class: "meta" }, "Loading…"));
  show("Memories", panel, hooks.tools ? hooks.tools(params) : null, results);
  if (app.focusSearch) {
    app.focusSearch = false;
    panel.open = true;
    form.querySelector("#q").focus();
  }
  const shown = stillShown();
  let page;
  try {
    page = (await api("GET", `/memories?${query}`)).json;
  } catch (error) {
    if (!shown()) return undefined;
    if (error.status === 422) {
      panel.open = true;
      results.replaceChildren(h("p", { class: "meta" }, "Fix the filter above to see memories."));
      return showFieldErrors(form, error.problem);
    }
    results.replaceChildren(h("p", { class: "meta" }, "The list could not be loaded."));
    return failed(error);
  }
  const deletions = await deletionDates(page.items);
  if (!shown()) return undefined;
  const paging = pager(page, params);
  results.replaceChildren(...[
    h("p", { class: "summary", id: "summary" }, paging.summary),
    page.items.length ? rowsTable(page, params, deletions, hooks.table ? hooks.table(page) : {})
      : paging.past || emptyState(params),
    // After the rows it acts on: sticky at the bottom of the screen while rows further down are ticked.
    hooks.bar ? hooks.bar(page, params) : null,
    paging.nav].filter(Boolean));
  if (hooks.done) hooks.done(page);
}
