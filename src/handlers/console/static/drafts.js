// What a person typed, kept across a sign-in: when the key stops working (revoked or expired) while they edit or create
// a memory, the draft waits in this tab's sessionStorage (gone with the tab, like the key, which it never holds),
// named by namespace, memory and the version the edit started from, until it is restored, discarded or saved.

import { can } from "./api.js";
import { app, h, notify } from "./dom.js";
import { changes } from "./history.js";

const PREFIX = "agent-memory-draft:";

// `id` a memory's id, or "new"; `base` the memory as the edit started from it (null for a new one); `edited` its fields.
export function keepDraft(namespace, id, base, edited) {
  const version = base ? base.version : 0;
  const draft = { namespace, id: String(id), version, base, edited, kept_at: new Date().toISOString() };
  try {
    sessionStorage.setItem(`${PREFIX}${namespace}:${id}:${version}`, JSON.stringify(draft));
  } catch {
    // A full or disabled storage: the key form still says the key is not valid; the draft cannot outlive the view.
  }
}

function kept(namespace, id) {
  const found = [];
  for (let index = 0; index < sessionStorage.length; index++) {
    const name = sessionStorage.key(index);
    if (!name?.startsWith(PREFIX)) continue;
    try {
      const draft = JSON.parse(sessionStorage.getItem(name));
      if (draft.namespace === namespace && draft.id === String(id)) found.push([name, draft]);
    } catch {
      found.push([name, null]); // unreadable: dropped with the others
    }
  }
  return found;
}

// The newest draft of memory `id` (or "new") in `namespace`, or null.
export function draftOf(namespace, id) {
  const drafts = kept(namespace, id).map(([, draft]) => draft).filter(Boolean);
  drafts.sort((a, b) => (a.kept_at < b.kept_at ? 1 : -1));
  return drafts[0] || null;
}

export function dropDrafts(namespace, id) {
  for (const [name] of kept(namespace, id)) sessionStorage.removeItem(name);
}

// The namespace of the signed-in key, read before a request: a 401 forgets the key (api.js), and with it `app.me`.
export const namespace = () => app.me?.namespace ?? "";

// A request refused for the key (revoked or expired: api.js shows the key form) keeps what was typed; true if it did.
export function keptOn(error, ns, base, edited) {
  if (error.status !== 401) return false;
  keepDraft(ns, base ? base.id : "new", base, edited);
  return true;
}

// "Discard my changes" after a conflict or a deletion: nothing of the edit stays, kept draft included.
export function discarded(ns, id) {
  app.guard = null;
  dropDrafts(ns, id);
  notify("Your changes are discarded.", "ok");
  app.route();
}

// The offer of a kept draft of memory `id` (or "new"), when the key may write: what it changes (a diff from the
// version it started from), Restore (`restore(draft)`, the draft leaving storage for the form) and Discard.
export function draftOffer(ns, id, restore) {
  const draft = can("write") ? draftOf(ns, id) : null;
  if (!draft) return null;
  const panel = h("section", { class: "panel draft", id: "draft", "aria-labelledby": "draft-title" },
    h("h2", { id: "draft-title" }, "You have unsaved changes from before signing in"),
    h("p", {}, "The key stopped working while you typed. Restore them to go on where you were, or discard them."),
    h("div", { class: "draft-changes" }, changes(draft.base, draft.edited)),
    h("div", { class: "actions" },
      h("button", { type: "button", class: "primary", onclick: () => { dropDrafts(ns, id); restore(draft); } }, "Restore"),
      h("button", { type: "button", onclick: () => {
        dropDrafts(ns, id);
        panel.remove();
        notify("Your unsaved changes are discarded.", "ok");
      } }, "Discard")));
  return panel;
}
