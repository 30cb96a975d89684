// The agent-memory console: a person's view of one namespace, through the service's own JSON API and nothing else.
// This module routes the address (#/ the overview, #/memories and #/?query the list, #/memory/<id>,
// #/memory/<id>/json, #/new, #/ask?query=...), says in
// the header whose memories these are and what the key may do, keeps typed input from being lost, and answers
// keyboard shortcuts.

import { api, can, failed, key, setKey } from "./api.js";
import { app, h, mayLeave, notify, show, stillShown, takeFlash } from "./dom.js";
import { newView } from "./edit.js";
import { listView } from "./list.js";
import { jsonView, memoryView } from "./memory.js";
import { shortcuts, showShortcuts } from "./keys.js";
import { bulkHooks } from "./bulk.js";
import { exportPanel } from "./export.js";
import { askView } from "./ask.js";
import { overviewView } from "./overview.js";
import { keysView } from "./keysview.js";
import { loadKeyNames } from "./names.js";

function parseHash() {
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  return { path: path || "/", params: new URLSearchParams(query) };
}

function keyView() {
  document.getElementById("nav").hidden = true;
  const input = h("input", { type: "password", id: "key", name: "key", autocomplete: "off", spellcheck: "false",
    required: true, "aria-describedby": "key-hint" });
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    setKey(input.value.trim());
    try {
      await whoAmI();
      notify("");
      if (!location.hash || location.hash === "#") location.hash = "#/";
      else route();
    } catch (error) {
      failed(error);
    }
  } },
  h("label", { for: "key" }, "API key"),
  input,
  h("p", { class: "hint", id: "key-hint" },
    "A key of the namespace to look at (am_…). It stays in this tab only and is forgotten when you close it."),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Open")));
  show("Open your memories", form);
}

// The key's id, name, namespace and scopes (GET /key), once per key.
async function whoAmI() {
  if (!app.me) app.me = (await api("GET", "/key")).json;
  return app.me;
}

function header() {
  const me = app.me;
  document.getElementById("nav").hidden = false;
  document.getElementById("new-link").hidden = !can("write");
  document.getElementById("ask-link").hidden = !can("read");
  document.getElementById("keys-link").hidden = !can("read");
  const name = me.key_id ? (me.name ? `${me.name} (${me.key_id})` : me.key_id) : "open server";
  document.getElementById("who").replaceChildren(
    h("span", {}, "Namespace ", h("strong", {}, me.namespace)),
    h("span", {}, " · key ", h("strong", {}, name)),
    h("span", {}, " · may ", h("strong", {}, me.scopes.join(", ").replace(/, ([^,]*)$/, " and $1") || "nothing")));
}

export async function route() {
  app.ticket++;
  const current = stillShown(); // a route begun meanwhile (a click while this one waited) renders instead
  if (!key()) return keyView();
  try {
    await whoAmI();
  } catch (error) {
    if (key() && current()) failed(error);
    return undefined;
  }
  if (!current()) return undefined;
  header();
  await loadKeyNames(); // once per key: every view names the keys in its histories
  if (!current()) return undefined;
  const { path, params } = parseHash();
  const memory = /^\/memory\/([0-9]+)(\/json)?$/.exec(path);
  if (memory) return memory[2] ? jsonView(memory[1]) : memoryView(memory[1]);
  if (path === "/new" && can("write")) return newView();
  if (!can("read")) return show("Memories", h("p", {}, "This key may only write: it cannot list or read memories."));
  if (path === "/ask") return askView(params);
  if (path === "/keys") return keysView();
  // A bare #/ is the overview; the list is #/memories, and a filtered list keeps its old address (#/?status=invalid).
  if (path === "/" && !params.toString()) return overviewView();
  return listView(params, { ...bulkHooks(), tools: exportPanel });
}

// In-app navigation asks before typed input is lost: the address goes back until the person chooses.
let here = location.href;

async function navigated() {
  if (app.guard && app.guard()) {
    const wanted = location.href;
    history.replaceState(null, "", here);
    if (!(await mayLeave())) return;
    here = wanted;
    history.replaceState(null, "", wanted);
  }
  here = location.href;
  notify(...takeFlash());
  route();
}

async function start() {
  app.route = route;
  app.config = await (await fetch("config.json", { cache: "no-store" })).json();
  document.getElementById("forget").addEventListener("click", async () => {
    if (!(await mayLeave())) return;
    setKey(null);
    notify("The key is forgotten.", "ok");
    route();
  });
  window.addEventListener("hashchange", navigated);
  // Leaving the page (reload, another address, closing the tab) with typed input: the browser's own question.
  window.addEventListener("beforeunload", (event) => {
    if (app.guard && app.guard()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
  document.getElementById("help").addEventListener("click", showShortcuts);
  shortcuts();
  route();
}

start();
