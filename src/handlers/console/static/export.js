// Export what you see: the current filter, read page by page without stamping (an export is not a use), as NDJSON in
// `agent-memory export`'s format (importable with `agent-memory import`), or as JSON or CSV for a spreadsheet. With
// the deleted ones too, everything is one download (as `agent-memory export --include-deleted`); each file is named
// by its namespace, filter and time (to the minute), so exports of two filters or at two times never share a name.

import { api } from "./api.js";
import { app, h } from "./dom.js";
import { everyMatch } from "./bulk.js";

// core/portable.py writes the characters that line-splitting tools break lines at as escapes.
const LINE_BREAKS = /[\u0085\u2028\u2029]/g;
const line = (value) => JSON.stringify(value).replace(LINE_BREAKS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
// The contract's timestamp spelling: six fraction digits.
const timestamp = () => new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

async function historyOf(id) {
  const items = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await api("GET", `/memories/${id}/history?limit=100&offset=${offset}`)).json;
    items.push(...page.items);
    if (!page.has_more) return items.reverse(); // oldest first, as the export writes it
  }
}

async function ndjsonLine(memory, withHistory) {
  const fields = { memory };
  const needsHistory = withHistory || memory.status === "deleted";
  const revisions = needsHistory ? await historyOf(memory.id) : null;
  if (memory.status === "deleted") {
    // The deletion is the newest revision; the status before it is the one a restore brings back.
    const [deletion, before] = revisions.slice(-2).reverse();
    fields.prior_status = before.status;
    fields.deleted_at = deletion.changed_at;
  }
  if (withHistory) fields.revisions = revisions;
  return line(fields);
}

const CSV_COLUMNS = ["id", "content", "tags", "memory_type", "status", "version", "created_at", "updated_at", "last_accessed_at"];

function csvCell(value) {
  let text = value === null || value === undefined ? "" : Array.isArray(value) ? value.join(" ") : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`; // a spreadsheet must not run a memory as a formula
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// The filter's matches, and with `withDeleted` its deleted matches too, in id order.
async function matches(params, withDeleted, progress) {
  const memories = await everyMatch(params, (n, total) => progress(`Reading ${n} of ${total}…`));
  if (!withDeleted) return memories;
  const deleted = new URLSearchParams(params);
  deleted.set("status", "deleted");
  memories.push(...await everyMatch(deleted, (n, total) => progress(`Reading the deleted ones: ${n} of ${total}…`)));
  return memories.sort((a, b) => a.id - b.id);
}

async function build(format, params, { withHistory, withDeleted }, progress) {
  const memories = await matches(params, withDeleted, progress);
  const count = memories.length;
  if (format === "json") return { count, parts: [JSON.stringify(memories, null, 2)] };
  if (format === "csv") {
    return { count, parts: [`${CSV_COLUMNS.join(",")}\r\n`, ...memories.map((m) => `${CSV_COLUMNS.map((c) => csvCell(m[c])).join(",")}\r\n`)] };
  }
  const header = { format: "agent-memory-export", version: 1, namespace: app.me.namespace, exported_at: timestamp(),
    include_deleted: params.get("status") === "deleted" || withDeleted, history: withHistory };
  const lines = [`${line(header)}\n`];
  for (const [index, memory] of memories.sort((a, b) => a.id - b.id).entries()) {
    lines.push(`${await ndjsonLine(memory, withHistory)}\n`);
    if (withHistory || memory.status === "deleted") progress(`Histories: ${index + 1} of ${memories.length}…`);
  }
  return { count, parts: lines };
}

const TYPES = { ndjson: "application/x-ndjson", json: "application/json", csv: "text/csv" };
const NAMED = [["status", "status"], ["memory_type", "type"], ["tag", "tag"], ["q", "text"]];

// agent-memory-<namespace>-<filter>-<UTC date and time>.<format>, e.g. …-tag-travel-2026-12-06-1530.csv.
function fileName(params, withDeleted, format) {
  const slug = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40);
  const filter = NAMED.filter(([name]) => params.get(name)).map(([name, word]) => `${word}-${slug(params.get(name))}`);
  if (withDeleted) filter.push(filter.length ? "with-deleted" : "everything");
  const when = new Date().toISOString().slice(0, 16).replace("T", "-").replace(":", "");
  return `agent-memory-${slug(app.me.namespace)}-${filter.join("-") || "active-and-invalid"}-${when}.${format}`;
}

export function exportPanel(params) {
  const status = h("p", { role: "status", class: "meta", id: "export-status" });
  const format = h("select", { id: "export-format", name: "export-format" },
    h("option", { value: "ndjson" }, "NDJSON (agent-memory import)"), h("option", { value: "json" }, "JSON"),
    h("option", { value: "csv" }, "CSV (spreadsheet)"));
  const history = h("input", { type: "checkbox", id: "export-history" });
  // Without a status filter the list shows active and invalid memories: the deleted ones can join the same file.
  const deleted = params.get("status") ? null : h("input", { type: "checkbox", id: "export-deleted" });
  const go = h("button", { type: "submit" }, "Download");
  const form = h("form", { class: "actions", onsubmit: async (event) => {
    event.preventDefault();
    go.disabled = true;
    try {
      const chosen = format.value;
      const withDeleted = Boolean(deleted?.checked);
      const { count, parts } = await build(chosen, params, { withHistory: history.checked && chosen === "ndjson", withDeleted },
        (text) => { status.textContent = text; });
      const url = URL.createObjectURL(new Blob(parts, { type: TYPES[chosen] }));
      const link = h("a", { href: url, download: fileName(params, withDeleted, chosen) });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = `Exported ${count} ${count === 1 ? "memory" : "memories"}.`;
    } catch (error) {
      status.textContent = `The export stopped: ${error.message}`;
    } finally {
      go.disabled = false;
    }
  } },
  h("label", { for: "export-format", class: "inline" }, "Format"), format,
  h("label", { class: "inline" }, history, " with history (NDJSON)"),
  deleted ? h("label", { class: "inline" }, deleted, " with the deleted ones") : null, go, status);
  return h("details", { class: "export" }, h("summary", {}, "Export what you see"), form);
}
