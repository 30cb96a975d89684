// One memory as stored, shared by the memory view and the editor: loading it with its history, and what its
// deletion means. Neither imports the other, so the console's modules form no circle.

import { api } from "./api.js";
import { h, keyName, purgeCountdown, when } from "./dom.js";

// The memory and its history (newest first); a deleted memory is its newest revision. Null when there is none.
export async function load(id) {
  let memory = null;
  try {
    memory = (await api("GET", `/memories/${id}`)).json;
  } catch (error) {
    if (error.status !== 404) throw error;
  }
  let history;
  try {
    history = (await api("GET", `/memories/${id}/history?limit=100`)).json;
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
  if (memory === null) {
    // Deleted: the record is no longer served, but its newest revision is the record as it is.
    const { revision, change, changed_at, key_id, ...record } = history.items[0];
    memory = { ...record, last_accessed_at: undefined };
  }
  return { memory, history };
}

// When a deleted memory was deleted, by which key, and when it is purged.
export function deletedPanel(revision) {
  if (!revision || revision.change !== "deleted") return null;
  return h("p", { class: "panel", id: "deleted" }, "Deleted ", when(revision.changed_at), ` by ${keyName(revision.key_id)}; `,
    `${purgeCountdown(revision.changed_at)} unless restored.`);
}
