// Key names for every place a key id is shown (histories, deleted-by, "changed by", the overview): the namespace's
// keys (GET /keys) read once per signed-in key and kept for the session. A key that may not list keys (no `read`), or
// a list that could not be read, leaves every other key as its short id (dom.js keyName).

import { api, can } from "./api.js";
import { app } from "./dom.js";

// Read the names once per key; a later call for the same key costs nothing. Never fails a view.
export async function loadKeyNames() {
  const me = app.me;
  if (!me || !me.key_id || app.keyNames?.of === me.key_id) return;
  const names = new Map();
  if (can("read")) {
    try {
      for (const item of (await api("GET", "/keys", { quiet: true })).json.items) {
        if (item.name) names.set(item.key_id, item.name);
      }
    } catch {
      // The ids stay as they are: a name is a help, not something to stop the console for.
    }
  }
  if (app.me === me) app.keyNames = { of: me.key_id, names };
}

// The keys view read them afresh: keep what it read, so names are as current as the list.
export function rememberKeyNames(items) {
  if (!app.me?.key_id) return;
  app.keyNames = { of: app.me.key_id, names: new Map(items.filter((item) => item.name).map((item) => [item.key_id, item.name])) };
}
