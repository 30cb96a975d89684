// Ask: recall (GET /recall), memories ranked by how well they answer a question in plain words, with recall's filters
// (kept in the address, so a view reloads), more answers on demand, and for each answer why it was found, in words
// built from its score's parts, the numbers one click away. Reads say `Prefer: no-stamp` as every read.

import { api, failed } from "./api.js";
import { app, h, show, statusText, stillShown, tags, when } from "./dom.js";
import { showFieldErrors } from "./errors.js";
import { preview } from "./list.js";

const FIELDS = ["query", "status", "memory_type", "tag"];
const PAGE = 20;
const DEFAULT_STATUS = "active"; // recall's own default (CONTRACT.md)
const PART_NAMES = { lexical: "words", semantic: "meaning", recency: "recency", use: "use by agents", type: "type",
  newer: "newer version" };
// Words as recall's lexical part reads them (core.recall.lexical): Unicode word runs, an apostrophe inside a word kept.
const WORD = /[\p{L}\p{N}_]+(?:['\u2019][\p{L}\p{N}_]+)*/gu;

function askHash(params) {
  const kept = new URLSearchParams();
  for (const name of FIELDS) {
    const value = (params.get(name) || "").trim();
    if (value && !(name === "status" && value === DEFAULT_STATUS)) kept.set(name, value);
  }
  return `#/ask?${kept}`;
}

// Close enough to Snowball's English stemmer, which recall uses, to see "work" in "works" and "live" in "lived".
function stem(word) {
  const bare = word.replace(/['\u2019]s$/, "");
  const end = ["ing", "ed", "es", "s"].find((suffix) => bare.endsWith(suffix) && bare.length - suffix.length >= 3);
  const kept = end ? bare.slice(0, -end.length) : bare;
  return kept.length > 3 && kept.endsWith("e") ? kept.slice(0, -1) : kept;
}

// The question's words (as typed) that the memory's content or tags hold, recall's stop words left out as it leaves
// them out ("what", "does", "the"...: all of them when the question has nothing else).
function sharedWords(question, memory) {
  const stop = new Set(app.config.recall_stop_words || []);
  const typed = question.match(WORD) || [];
  const meant = typed.filter((word) => !stop.has(word.toLowerCase()));
  const text = [memory.content, ...memory.tags.map((tag) => tag.replace(/[-_.:]/g, " "))].join(" ").toLowerCase();
  const held = new Set((text.match(WORD) || []).map(stem));
  const found = new Map();
  for (const word of meant.length ? meant : typed) {
    const lower = word.toLowerCase();
    if (!found.has(lower) && held.has(stem(lower))) found.set(lower, word);
  }
  return [...found.values()];
}

// The semantic part is the share of the way from the model's floor (unrelated) to the same meaning: said in three steps.
function closeness(semantic) {
  if (semantic >= 0.5) return "close in meaning";
  return semantic >= 0.25 ? "somewhat close in meaning" : "loosely related in meaning";
}

// Why recall found a memory, from the parts that counted: a part at zero, or weighed at zero by this deployment,
// says nothing. The weights are the answer's own (ranking.weights).
function reasons(item, weights, question) {
  const { parts, memory } = item;
  const counted = (part) => parts[part] > 0 && (weights?.[part] ?? 1) > 0;
  const said = [];
  if (counted("lexical")) {
    const words = sharedWords(question, memory);
    said.push(words.length
      ? `matches the ${words.length === 1 ? "word" : "words"} ${words.map((word) => `'${word}'`).join(", ")}`
      : "shares words with the question");
  }
  if (counted("semantic")) said.push(closeness(parts.semantic));
  if (counted("recency") && parts.recency >= 0.5) said.push("recently changed"); // within one half-life
  if (counted("use")) said.push(parts.use >= 0.5 ? "recently used by agents" : "used by agents before");
  if (counted("type")) said.push(`its type (${memory.memory_type}) weighs in`);
  if (counted("newer")) said.push("a newer version of an older match, ranked above it");
  return said.length ? said.join("; ") : "only the filters: no part of its score counted";
}

function numbers(item, ranking) {
  const weights = ranking?.weights || {};
  return h("details", { class: "numbers" }, h("summary", {}, `Score ${item.score.toFixed(3)} in numbers`),
    h("dl", {}, Object.entries(item.parts).map(([name, value]) => [h("dt", {}, PART_NAMES[name] || name),
      h("dd", {}, String(value), weights[name] !== undefined ? ` × weight ${weights[name]}` : "")])),
    h("p", { class: "meta" }, "The score is the sum of each part times its weight; scores compare within one answer",
      ranking?.model ? `, ranked by the model ${ranking.model}.` : "."));
}

function result(item, answer, question) {
  const memory = item.memory;
  return h("li", { class: "answer", "data-id": memory.id },
    h("p", {}, h("a", { href: `#/memory/${memory.id}`, class: "id" }, `#${memory.id}`), " · ",
      h("span", { class: "type" }, memory.memory_type), " · ", statusText(memory.status)),
    h("p", { class: "content" }, preview(memory.content, "")),
    h("p", { class: "why" }, h("strong", {}, "Why: "), reasons(item, answer.ranking?.weights, question)),
    h("p", { class: "meta" }, tags(memory.tags), " · updated ", when(memory.updated_at)),
    numbers(item, answer.ranking));
}

function select(id, label, choices, value) {
  const listed = value && !choices.some(([option]) => option === value) ? [...choices, [value, `${value} (not valid)`]] : choices;
  return h("div", {}, h("label", { for: id }, label), h("select", { id, name: id },
    listed.map(([option, text]) => h("option", { value: option, selected: option === value }, text))));
}

// The filters; on a phone folded away unless one is set (its summary says how many), as the list's are.
function filterPanel(params) {
  const config = app.config;
  const set = ["memory_type", "tag"].filter((name) => params.get(name)).length +
    (params.get("status") && params.get("status") !== DEFAULT_STATUS ? 1 : 0);
  return h("details", { class: "filter-panel", open: set > 0 || !window.matchMedia("(max-width: 40rem)").matches },
    h("summary", {}, set ? `Filters (${set} set)` : "Filters"),
    h("div", { class: "filters ask-filters" },
      select("status", "Status", config.statuses.map((s) => [s, s]), params.get("status") || DEFAULT_STATUS),
      select("memory_type", "Type", [["", "any"], ...config.memory_types.map((t) => [t, t])], params.get("memory_type") || ""),
      h("div", {}, h("label", { for: "tag" }, "Tag"), h("input", { type: "text", id: "tag", name: "tag",
        list: "ask-tags", value: params.get("tag") || "", autocomplete: "off" }))));
}

function askForm(params) {
  const config = app.config;
  const form = h("form", { role: "search", onsubmit: (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams(new FormData(event.target));
    if (chosen.get("query").trim()) location.hash = askHash(chosen);
  } },
  h("label", { for: "query" }, "Ask in plain words"),
  h("input", { type: "search", id: "query", name: "query", value: params.get("query") || "", maxlength: 1000,
    required: true, "aria-describedby": "query-hint" }),
  h("p", { class: "hint", id: "query-hint" }, "e.g. what does the user eat? Memories come ranked by recall: meaning, " +
    "words, recency, use, type and newer versions; each says why it was found."),
  filterPanel(params),
  h("datalist", { id: "ask-tags" }, config.standard_tags.map((tag) => h("option", { value: tag }))),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Ask")));
  return form;
}

function summaryText(answer, shown) {
  const note = answer.ranking && !answer.ranking.semantic ? " (without meaning: the model did not answer)" : "";
  const told = shown < answer.total ? `, the best ${shown} shown` : answer.total ? ", all shown" : "";
  return `${answer.total} ${answer.total === 1 ? "memory" : "memories"} ranked${told}${note}.`;
}

// "Show more": the next page of the same ranking (the first answer's `as_of`), appended, none shown twice.
function pages(request, first, list, summary) {
  const seen = new Set(first.items.map((item) => item.memory.id));
  let next = first.offset + first.items.length;
  const more = h("button", { type: "button", onclick: async () => {
    more.disabled = true;
    let answer;
    try {
      answer = (await api("GET", `/recall?${new URLSearchParams({ ...request, offset: String(next), as_of: first.as_of })}`)).json;
    } catch (error) {
      more.disabled = false;
      return failed(error);
    }
    const added = answer.items.filter((item) => !seen.has(item.memory.id)).map((item) => {
      seen.add(item.memory.id);
      return result(item, answer, request.query);
    });
    list.append(...added);
    next = answer.offset + answer.items.length;
    summary.textContent = summaryText(answer, seen.size);
    if (added.length) added[0].querySelector("a.id").focus();
    if (answer.has_more && answer.items.length) more.disabled = false;
    else more.remove();
    return undefined;
  } }, "Show more");
  return first.has_more ? h("div", { class: "actions" }, more) : null;
}

export async function askView(params) {
  const form = askForm(params);
  const results = h("div", { id: "results" });
  show("Ask", form, results);
  const query = (params.get("query") || "").trim();
  if (!query) return undefined;
  const request = { query, limit: String(PAGE) };
  for (const name of FIELDS.slice(1)) if (params.get(name)) request[name] = params.get(name);
  results.replaceChildren(h("p", { class: "meta" }, "Recalling…"));
  const shown = stillShown();
  let answer;
  try {
    answer = (await api("GET", `/recall?${new URLSearchParams(request)}`)).json;
  } catch (error) {
    if (!shown()) return undefined;
    if (error.status === 422) {
      form.querySelector("details.filter-panel").open = true;
      results.replaceChildren(h("p", { class: "meta" }, "Fix the field above to ask."));
      return showFieldErrors(form, error.problem);
    }
    results.replaceChildren(h("p", { class: "meta" }, "No answer."));
    return failed(error);
  }
  if (!shown()) return undefined;
  const summary = h("p", { class: "summary", id: "summary" }, summaryText(answer, answer.items.length));
  const list = h("ol", { class: "answers" }, answer.items.map((item) => result(item, answer, query)));
  results.replaceChildren(summary, answer.items.length ? list : h("p", {}, "No memory to rank."),
    pages(request, answer, list, summary));
  return undefined;
}
