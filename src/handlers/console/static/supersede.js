// What replaced a memory, and what may replace one (CONTRACT.md, Keeping memories true). An invalid memory names the
// memory that superseded it, read from the history its view already loaded; an active one is flagged when a newer
// memory close in meaning (GET /memories/{id}/related) may replace it, with one action to supersede it. Only the
// memory view asks related, once (and the JSON view, for the model's id): a list never asks it row by row.

import { api, can } from "./api.js";
import { confirmDialog, h, invalidMeans, keyName, when } from "./dom.js";

const RELATED_LIMIT = 3;
const EXCERPT_CHARS = 200;

// The revision that superseded an invalid memory, when that is why it is invalid now: walking its history (newest
// first) back to the last change that left it anything but invalid. A person who marked it active, then invalid
// again, made it invalid in their own words.
export function supersededRevision(memory, revisions) {
  if (memory.status !== "invalid") return null;
  for (const revision of revisions) {
    if (revision.change === "superseded") return revision;
    if (revision.status !== "invalid") return null;
  }
  return null;
}

export function supersededPanel(memory, revisions) {
  const revision = supersededRevision(memory, revisions);
  if (!revision) return null;
  const by = revision.superseded_by;
  return h("p", { class: "panel", id: "superseded" }, "Superseded by ", h("a", { href: `#/memory/${by}` }, `#${by}`),
    " on ", when(revision.changed_at), ` (${keyName(revision.key_id)}).`);
}

const newerThan = (memory) => (item) => item.memory.created_at > memory.created_at;

function excerpt(content) {
  return content.length > EXCERPT_CHARS ? `${content.slice(0, EXCERPT_CHARS).trimEnd()}…` : content;
}

// `act(work, done)` runs a change and shows the memory again (the memory view's own).
function flag(memory, { memory: newer, similarity }, act) {
  const supersede = async () => {
    const ok = await confirmDialog(`Supersede memory #${memory.id} by #${newer.id}?`,
      `Memory #${memory.id} becomes invalid, and its history says that #${newer.id} superseded it. ${invalidMeans()} ` +
      "You can mark it active again.", `Supersede by #${newer.id}`);
    if (ok) {
      act(() => api("POST", `/memories/${newer.id}/supersede`, { body: { ids: [memory.id] } }),
        `Memory #${memory.id} is superseded by #${newer.id}: it is invalid now.`);
    }
  };
  return h("div", { class: "panel flag" },
    h("p", {}, h("a", { href: `#/memory/${newer.id}` }, `#${newer.id}`),
      `, newer and closely related (similarity ${similarity.toFixed(2)}), may replace this one:`),
    h("blockquote", {}, excerpt(newer.content)),
    can("write") ? h("div", { class: "actions" },
      h("button", { type: "button", onclick: supersede }, `Supersede by #${newer.id}`)) : null);
}

// A person reads whether a memory is searchable by meaning (it has its vector), never a model's id.
const searchable = (waiting) => (waiting ? "waiting to be made searchable by meaning" : "searchable by meaning");

// The place of the flag in the memory view, filled when related answers: nothing when the memory is not active, waits
// for its vector or has no newer related memory. `data-related` says what the answer was (none, newer, waiting).
// `meaning` (not for a deleted memory) is told whether the memory is searchable by meaning, from the same answer.
export function mayReplace(memory, shown, act, meaning = null) {
  const slot = h("div", { id: "may-replace", role: "status" });
  if (memory.status === "deleted") {
    slot.dataset.related = "none";
    return slot;
  }
  api("GET", `/memories/${memory.id}/related?limit=${RELATED_LIMIT}`, { quiet: true }).then(({ json }) => {
    if (!shown()) return;
    if (meaning) meaning.textContent = searchable(json.waiting);
    const newer = memory.status === "active" ? json.items.find(newerThan(memory)) : undefined;
    if (newer) slot.replaceChildren(flag(memory, newer, act));
    slot.dataset.related = json.waiting ? "waiting" : (newer ? "newer" : "none");
  }, () => {
    // The flag is a hint: when related cannot answer, the memory is shown as it is, without one.
    if (!shown()) return;
    slot.dataset.related = "failed";
    if (meaning) meaning.textContent = "not known just now";
  });
  return slot;
}

// The JSON view's note of the embedding model: its id, for whoever reads the record as an agent gets it.
export function searchModel(memory, shown) {
  const note = h("p", { class: "hint", id: "search-model" });
  api("GET", `/memories/${memory.id}/related?limit=1`, { quiet: true }).then(({ json }) => {
    if (shown()) note.textContent = `Search by meaning: ${searchable(json.waiting)} (embedding model ${json.model}).`;
  }, () => {}); // a note: without an answer, the record is shown as it is
  return note;
}
