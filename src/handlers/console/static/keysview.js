// The keys view (#/keys): the namespace's API keys (GET /keys) with their names, scopes, when each was created and
// last used, and whether it still works; Revoke (DELETE /keys/{id}, asked first) only for a key with the `keys` scope.

import { api, can, failed, setKey } from "./api.js";
import { app, confirmDialog, h, notify, show, stillShown, when } from "./dom.js";
import { rememberKeyNames } from "./names.js";

const STATES = { active: "active", revoked: "revoked", expired: "expired" };

function named(item) {
  return item.name || "unnamed";
}

async function revoke(item) {
  const own = item.key_id === app.me.key_id;
  const ok = await confirmDialog(`Revoke key ${named(item)}?`,
    `Key ${named(item)} (${item.key_id}) will read and write nothing from now on, and the OAuth grants it consented ` +
    `to end with it.${own ? " It is the key this console is open with: you will be asked for another." : ""} ` +
    "A revoked key cannot be restored; create a new one instead.",
    "Revoke");
  if (!ok) return;
  try {
    await api("DELETE", `/keys/${encodeURIComponent(item.key_id)}`);
  } catch (error) {
    failed(error);
    return;
  }
  if (own) setKey(null);
  notify(`Key ${named(item)} is revoked: it reads and writes nothing from now on.${own ? " Paste another key." : ""}`,
    "ok");
  app.route();
}

function row(item, mayRevoke) {
  const own = item.key_id === app.me.key_id;
  return h("tr", {},
    h("td", { "data-label": "Name" }, h("strong", { class: "key-name" }, named(item)),
      own ? h("span", { class: "meta" }, " (this key)") : null),
    h("td", { "data-label": "Key id" }, h("code", {}, item.key_id)),
    h("td", { class: "scopes", "data-label": "Scopes" }, item.scopes.join(", ")),
    h("td", { "data-label": "Created" }, when(item.created_at)),
    h("td", { class: "last-used", "data-label": "Last used" }, when(item.last_used_at)),
    h("td", { "data-label": "State" }, STATES[item.state] || item.state,
      item.expires_at && item.state === "active" ? h("span", { class: "meta" }, " until ", when(item.expires_at)) : null),
    mayRevoke && item.state === "active"
      ? h("td", { "data-label": "Action" }, h("button", { type: "button", class: "danger",
        "aria-label": `Revoke key ${named(item)}`, onclick: () => revoke(item) }, "Revoke"))
      : h("td", {}));
}

export async function keysView() {
  const shown = stillShown();
  let items;
  try {
    items = (await api("GET", "/keys")).json.items;
  } catch (error) {
    failed(error);
    return;
  }
  if (!shown()) return;
  rememberKeyNames(items);
  const mayRevoke = can("keys");
  const table = h("table", { class: "keys" },
    h("caption", {}, `The keys of namespace ${app.me.namespace}, oldest first`),
    h("thead", {}, h("tr", {}, ["Name", "Key id", "Scopes", "Created", "Last used", "State", "Action"].map((label) =>
      h("th", { scope: "col" }, label)))),
    h("tbody", {}, items.map((item) => row(item, mayRevoke))));
  show("Keys",
    h("p", { class: "hint" }, "Histories name each change by the key that made it. \"Last used\" is kept to the hour. " +
      "Scopes: read (list and read memories), write (change them), keys (revoke other keys)."),
    mayRevoke ? null : h("p", { class: "panel", id: "no-revoke" }, "This key may not revoke keys: only a key with the " +
      "keys scope may (agent-memory keys create --scopes read,write,keys). Any key may still be revoked from the " +
      "command line: agent-memory keys revoke <key id>."),
    table);
}
