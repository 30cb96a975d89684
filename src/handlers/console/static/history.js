// A memory's history: a timeline of what each change did, with a word-level diff of the content.

import { h, keyName, statusText, tags, when } from "./dom.js";

function words(text) {
  return text.split(/(\s+)/).filter((part) => part !== "");
}

// The longest common subsequence of words, walked into runs: equal words as they are, each deleted run and each
// inserted run as one <del>/<ins> (a deleted run and the inserted one after it are apart, never run together).
function wordRuns(a, b) {
  const table = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const runs = [];
  const push = (kind, word) => {
    const last = runs[runs.length - 1];
    if (last && last.kind === kind) last.text += word;
    else runs.push({ kind, text: word });
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) { push("same", a[i]); i++; j++; }
    else if (j >= b.length || (i < a.length && table[i + 1][j] >= table[i][j + 1])) push("del", a[i++]);
    else push("ins", b[j++]);
  }
  return runs;
}

// `titles`: what a removed and an added run are called on hover (a conflict says whose side each is on).
export function wordDiff(before, after, titles = { del: "removed", ins: "added" }) {
  const out = [];
  for (const run of wordRuns(words(before), words(after))) {
    if (run.kind === "same") { out.push(run.text); continue; }
    const text = run.text.trim();
    if (!text) { out.push(run.text); continue; }
    if (out.length && !/\s$/.test(out[out.length - 1].textContent ?? out[out.length - 1])) out.push(" ");
    out.push(h(run.kind, { title: titles[run.kind] }, text));
    if (/\s$/.test(run.text)) out.push(" ");
  }
  return h("p", { class: "diff" }, out);
}

export function changes(before, after) {
  if (!before) return [h("p", { class: "diff" }, after.content), h("p", {}, "Tags: ", tags(after.tags))];
  const out = [];
  if (before.content !== after.content) out.push(h("p", { class: "meta" }, "Content:"), wordDiff(before.content, after.content));
  const added = after.tags.filter((tag) => !before.tags.includes(tag));
  const removed = before.tags.filter((tag) => !after.tags.includes(tag));
  if (added.length) out.push(h("p", {}, "Tags added: ", tags(added)));
  if (removed.length) out.push(h("p", {}, "Tags removed: ", tags(removed)));
  if (before.memory_type !== after.memory_type) out.push(h("p", {}, `Type: ${before.memory_type} → ${after.memory_type}`));
  if (before.status !== after.status) out.push(h("p", {}, "Status: ", statusText(before.status), " → ", statusText(after.status)));
  return out;
}

// A change `superseded` names the memory that superseded this one.
function supersededBy(revision) {
  if (revision.change !== "superseded" || !revision.superseded_by) return null;
  return [" by ", h("a", { href: `#/memory/${revision.superseded_by}` }, `#${revision.superseded_by}`)];
}

// `items` newest first; `restorable(revision, index)` gives the "restore this version" control of an older revision.
export function timeline(items, restorable = () => null) {
  return h("ol", { class: "timeline", "aria-label": "Changes, newest first" }, items.map((revision, index) =>
    h("li", {},
      h("p", {}, h("span", { class: "change" }, revision.change), supersededBy(revision), " · ", when(revision.changed_at),
        h("span", { class: "meta" }, ` · version ${revision.version} · by ${keyName(revision.key_id)}`)),
      changes(items[index + 1], revision),
      restorable(revision, index))));
}
