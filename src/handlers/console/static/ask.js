// Ask: recall (GET /recall), memories ranked by how well they answer a question in plain words, each with its score
// and the parts it is made of (on hover, and on focus for the keyboard). Reads say `Prefer: no-stamp` as every read.

import { api, failed } from "./api.js";
import { h, show, statusText, stillShown, tags, when } from "./dom.js";
import { preview } from "./list.js";

const PARTS = { lexical: "words", semantic: "meaning", recency: "recency", use: "use by agents", type: "type",
  newer: "newer version" };

function parts(item, weights) {
  const rows = Object.entries(item.parts).map(([name, value]) => h("span", { class: "part" },
    `${PARTS[name] || name}: ${value.toFixed(2)}`, weights?.[name] !== undefined ? ` × weight ${weights[name]}` : ""));
  return h("span", { class: "parts", role: "tooltip", id: `parts-${item.memory.id}` }, rows);
}

function result(item, answer) {
  const memory = item.memory;
  return h("li", { class: "answer", "data-id": memory.id },
    h("p", {}, h("a", { href: `#/memory/${memory.id}`, class: "id" }, `#${memory.id}`), " ",
      h("span", { class: "score", tabindex: "0", "aria-describedby": `parts-${memory.id}`,
        title: Object.entries(item.parts).map(([name, value]) => `${PARTS[name] || name} ${value.toFixed(2)}`).join(" · ") },
      `score ${item.score.toFixed(3)}`), parts(item, answer.ranking?.weights),
      h("span", { class: "meta" }, ` · ${memory.memory_type} · `), statusText(memory.status)),
    h("p", { class: "content" }, preview(memory.content, "")),
    h("p", { class: "meta" }, tags(memory.tags), " · updated ", when(memory.updated_at)));
}

export async function askView(params) {
  const query = params.get("query") || "";
  const input = h("input", { type: "search", id: "query", name: "query", value: query, maxlength: 1000, required: true,
    "aria-describedby": "query-hint" });
  const form = h("form", { role: "search", onsubmit: (event) => {
    event.preventDefault();
    const asked = input.value.trim();
    if (asked) location.hash = `#/ask?${new URLSearchParams({ query: asked })}`;
  } },
  h("label", { for: "query" }, "Ask in plain words"), input,
  h("p", { class: "hint", id: "query-hint" }, "e.g. what does the user eat? Memories come ranked by recall: meaning, " +
    "words, recency, use, type and newer versions; hover or focus a score to see its parts."),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Ask")));
  const results = h("div", { id: "results" });
  show("Ask", form, results);
  if (!query) return;
  results.replaceChildren(h("p", { class: "meta" }, "Recalling…"));
  const shown = stillShown();
  let answer;
  try {
    answer = (await api("GET", `/recall?${new URLSearchParams({ query, limit: "20" })}`)).json;
  } catch (error) {
    if (!shown()) return undefined;
    results.replaceChildren(h("p", { class: "meta" }, "No answer."));
    return failed(error);
  }
  if (!shown()) return undefined;
  const by = answer.ranking?.model ? ` by ${answer.ranking.model}` : "";
  const note = answer.ranking && !answer.ranking.semantic ? " (without meaning: the model did not answer)" : "";
  results.replaceChildren(
    h("p", { class: "summary", id: "summary" }, `${answer.total} ${answer.total === 1 ? "memory" : "memories"} ranked${by}` +
      `${answer.total > answer.items.length ? `, the best ${answer.items.length} shown` : ""}${note}.`),
    answer.items.length ? h("ol", { class: "answers" }, answer.items.map((item) => result(item, answer)))
      : h("p", {}, "No memory to rank."));
}
