// What every view shares: building elements (every text goes in as text, never as markup), showing a view, the
// notice, times, tags, dialogs and the console's state (its settings and the key it is opened with).

export const app = {
  config: null, // config.json: types, statuses, sorts, standard tags, retention window
  me: null, // GET /key: the key's id, name, namespace and scopes
  route: null, // the router, set by console.js
  guard: null, // a view with typed input sets it: () => true while something would be lost
  focusSearch: false, // the `/` shortcut from another view: the list focuses its search field once shown
  ticket: 0, // counts the router's views: a view whose data arrives after the next view began is not shown
  keyNames: null, // { of: the signed-in key's id, names: Map of key id -> name } (names.js), read once per key
};

// For a view that awaits its data: a check that it is still the view to show (the person did not move on meanwhile).
export function stillShown() {
  const ticket = app.ticket;
  return () => ticket === app.ticket;
}

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export const view = () => document.getElementById("view");

// A new view starts at the top of the page (not scrolled to where the last one was, nor to `main` under the header),
// with focus on its content for screen readers.
export function show(title, ...content) {
  const main = view();
  app.guard = null;
  main.replaceChildren(h("h1", {}, title), ...content.filter((part) => part !== null && part !== undefined));
  document.title = `${title} · agent-memory console`;
  main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

// A message for the view the next navigation shows (a hash change clears whatever the last view said).
let flashed = null;

export function flash(message, kind = "ok") {
  flashed = [message, kind];
}

export function takeFlash() {
  const message = flashed || [""];
  flashed = null;
  return message;
}

export function notify(message, kind = "info") {
  const notice = document.getElementById("notice");
  notice.hidden = !message;
  notice.className = `notice ${kind}`;
  notice.textContent = message || "";
}

export function when(timestamp) {
  if (!timestamp) return h("span", { class: "meta" }, "never");
  const date = new Date(timestamp);
  return h("time", { datetime: timestamp, title: `${timestamp} (UTC)` }, date.toLocaleString());
}

export const DAY_MS = 24 * 60 * 60 * 1000;

// "purged in 23 days" for a memory deleted at `deletedAt` (the retention window from config.json).
export function purgeCountdown(deletedAt) {
  const left = Math.ceil((Date.parse(deletedAt) + app.config.retention_days * DAY_MS - Date.now()) / DAY_MS);
  if (left <= 0) return "purged at the next sweep";
  return `purged in ${left} ${left === 1 ? "day" : "days"}`;
}

// `text` with every case-insensitive occurrence of `q` marked.
export function highlight(text, q) {
  if (!q) return text;
  const out = [];
  const lower = text.toLowerCase();
  const needle = q.toLowerCase();
  let at = 0;
  for (let found = lower.indexOf(needle); found !== -1; found = lower.indexOf(needle, at)) {
    out.push(text.slice(at, found), h("mark", {}, text.slice(found, found + needle.length)));
    at = found + needle.length;
  }
  out.push(text.slice(at));
  return out;
}

// Tags, each a link that filters the list by it.
export function tags(list, q = "") {
  if (!list.length) return h("span", { class: "meta" }, "none");
  return list.map((tag) => h("a", { class: "tag", href: `#/?tag=${encodeURIComponent(tag)}`,
    title: `Show the memories tagged ${tag}` }, highlight(tag, q)));
}

export function statusText(status) {
  return h("span", { class: `status-${status}` }, status);
}

// What marking memories invalid does, said wherever the console offers it (CONTRACT.md: recall's default status, and
// the session primer's, is active; retrieval without `status` leaves out only deleted memories; a read by id serves
// any memory not deleted). `many`: said of several memories.
export function invalidMeans(many = false) {
  const [it, stays] = many ? ["them", "each stays"] : ["it", "it stays"];
  return `Recall (and an agent's session primer) leaves ${it} out unless asked for invalid memories; a search ` +
    `without a status filter (search_memories, GET /memories) still lists ${it}, and ${stays} readable by its id.`;
}

export function activeMeans(many = false) {
  return `Recall (and an agent's session primer) returns ${many ? "them" : "it"} again.`;
}

// "key assistant agent (0123456789ab)" for a key whose name is known (the console's own, or any the namespace's
// list names: names.js), "key 0123456789ab" for any other.
export function keyName(keyId) {
  if (!keyId) return "an open server";
  const own = app.me && keyId === app.me.key_id ? app.me.name : null;
  const name = own || (app.keyNames?.of === app.me?.key_id ? app.keyNames?.names.get(keyId) : null);
  return name ? `key ${name} (${keyId})` : `key ${keyId}`;
}

// `text`: a sentence, or the elements to show (a bulk action lists the memories it touches).
export function confirmDialog(title, text, confirmLabel, cancelLabel = "Cancel") {
  return new Promise((resolve) => {
    const dialog = h("dialog", { "aria-labelledby": "dialog-title" },
      h("h2", { id: "dialog-title" }, title), Array.isArray(text) ? text : h("p", {}, text),
      h("form", { method: "dialog", class: "actions" },
        h("button", { value: "cancel", type: "submit" }, cancelLabel),
        h("button", { value: "confirm", type: "submit", class: "danger" }, confirmLabel)));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// Before typed input is lost: true when there is none, or the person chose to discard it.
export async function mayLeave() {
  if (!app.guard || !app.guard()) return true;
  const ok = await confirmDialog("Discard your changes?", "What you typed here is not saved yet and will be lost.",
    "Discard changes", "Keep editing");
  if (ok) app.guard = null;
  return ok;
}
