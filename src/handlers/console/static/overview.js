// The overview, what opening the console shows: how many memories there are by status and type (each count a link to
// that list), and what was changed in the namespace lately, newest first, by which key (GET /changes), each change a
// link to its memory.

import { api, failed } from "./api.js";
import { app, h, keyName, show, statusText, stillShown, when } from "./dom.js";

const RECENT_DAYS = 7;
const ACTIVITY_PAGE = 20;
const PREVIEW_CHARS = 90;

const listOf = (status, type) => {
  const query = new URLSearchParams();
  if (status) query.set("status", status);
  if (type) query.set("memory_type", type);
  return `#/?${query}`;
};

// One count: the list's own `total` for that filter, asked at an offset past every page (2^63-1, the contract's
// largest): the store answers it from its exact totals per status and type alone (one small read, whatever the
// namespace's size), where a page of one would read the index until a match turned up.
const PAST_EVERY_PAGE = "9223372036854775807";

async function count(status, type) {
  const query = new URLSearchParams({ status, offset: PAST_EVERY_PAGE });
  if (type) query.set("memory_type", type);
  return (await api("GET", `/memories?${query}`, { quiet: true })).json.total;
}

function countLink(total, status, type) {
  const label = `${total} ${status}${type ? ` ${type}` : ""} ${total === 1 ? "memory" : "memories"}`;
  return h("td", { "data-status": status, "data-type": type, "data-label": type || "all types" },
    total ? h("a", { href: listOf(status, type), "aria-label": label }, String(total)) : h("span", { class: "meta", "aria-label": label }, "0"));
}

async function countsTable() {
  const { statuses, memory_types: types } = app.config;
  const totals = await Promise.all(statuses.map((status) => Promise.all(types.map((type) => count(status, type)))));
  const rows = statuses.map((status, s) => {
    const sum = totals[s].reduce((a, b) => a + b, 0);
    return h("tr", {}, h("th", { scope: "row" }, statusText(status)),
      ...types.map((type, t) => countLink(totals[s][t], status, type)), countLink(sum, status, ""));
  });
  return h("table", { id: "counts", class: "counts" },
    h("caption", { class: "meta" }, "Memories by status and type; each count opens that list."),
    h("thead", {}, h("tr", {}, h("td", {}), ...types.map((type) => h("th", { scope: "col" }, type)),
      h("th", { scope: "col" }, "all types"))),
    h("tbody", {}, rows));
}

function excerpt(content) {
  const line = content.split("\n", 1)[0].replace(/\s+/g, " ").trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, line.lastIndexOf(" ", PREVIEW_CHARS) + 1 || PREVIEW_CHARS)}…` : line;
}

function changeItem(revision) {
  const by = revision.change === "superseded" && revision.superseded_by
    ? [" by ", h("a", { href: `#/memory/${revision.superseded_by}` }, `#${revision.superseded_by}`)] : null;
  return h("li", { "data-id": revision.id },
    h("p", {}, h("a", { href: `#/memory/${revision.id}`, class: "id" }, `#${revision.id}`), " ",
      h("span", { class: "change" }, revision.change), by, " · ", when(revision.changed_at),
      h("span", { class: "meta" }, ` · ${keyName(revision.key_id)}`)),
    h("p", { class: "excerpt" }, excerpt(revision.content)));
}

async function activity(since, offset, list, more) {
  const query = new URLSearchParams({ since, limit: String(ACTIVITY_PAGE), offset: String(offset) });
  const page = (await api("GET", `/changes?${query}`)).json;
  list.append(...page.items.map(changeItem));
  more.hidden = !page.has_more;
  more.onclick = () => activity(since, offset + page.items.length, list, more).catch(failed);
  return page;
}

export async function overviewView() {
  const counts = h("div", { id: "count-panel" }, h("p", { class: "meta" }, "Loading…"));
  const list = h("ol", { id: "activity", class: "activity", "aria-label": "Changes, newest first" });
  const summary = h("p", { class: "meta", id: "activity-summary" }, "Loading…");
  const more = h("button", { type: "button", hidden: true }, "Show more changes");
  show("Overview", h("h2", {}, "Memories"), counts, h("h2", {}, `Changed in the last ${RECENT_DAYS} days`), summary, list, more);
  const shown = stillShown();
  const since = new Date(Date.now() - RECENT_DAYS * 24 * 60 * 60 * 1000).toISOString();
  const [table, page] = await Promise.allSettled([countsTable(), activity(since, 0, list, more)]);
  if (!shown()) return;
  if (table.status === "fulfilled") counts.replaceChildren(table.value);
  else { counts.replaceChildren(h("p", { class: "meta" }, "The counts could not be loaded.")); failed(table.reason); }
  if (page.status === "rejected") {
    summary.textContent = "The changes could not be loaded.";
    failed(page.reason);
    return;
  }
  const total = page.value.total;
  summary.textContent = total
    ? `${total} ${total === 1 ? "change" : "changes"} since ${new Date(since).toLocaleDateString()}, newest first.`
    : "Nothing was changed in these days.";
}
