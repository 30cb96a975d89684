// Keyboard shortcuts for the common moves: `/` search, `j`/`k` move through the list, `e` edit, `?` shows them.
// They never fire while the person types in a field or a dialog is open.

import { app, h } from "./dom.js";

const HELP = [
  ["/", "Search: focus the text filter"],
  ["j", "Next memory in the list"],
  ["k", "Previous memory in the list"],
  ["Enter", "Open the memory in focus"],
  ["e", "Edit the memory open"],
  ["?", "Show these shortcuts"],
];

export function showShortcuts() {
  const dialog = h("dialog", { "aria-labelledby": "shortcuts-title", id: "shortcuts" },
    h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"),
    h("dl", { class: "fields" }, HELP.map(([keyName, what]) => [h("dt", {}, h("kbd", {}, keyName)), h("dd", {}, what)])),
    h("form", { method: "dialog", class: "actions" }, h("button", { type: "submit", class: "primary" }, "Close")));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function move(step) {
  const links = [...document.querySelectorAll("#results tbody a.id")];
  if (!links.length) return;
  const at = links.indexOf(document.activeElement);
  const next = links[Math.min(links.length - 1, Math.max(0, at === -1 ? (step > 0 ? 0 : links.length - 1) : at + step))];
  for (const row of document.querySelectorAll("#results tbody tr.current")) row.classList.remove("current");
  next.closest("tr").classList.add("current");
  next.focus();
}

const ACTIONS = {
  "/": () => {
    const q = document.getElementById("q");
    if (!q) {
      app.focusSearch = true; // the list focuses its search field once shown
      location.hash = "#/";
      return;
    }
    q.closest("details")?.setAttribute("open", "");
    q.focus();
  },
  j: () => move(1),
  k: () => move(-1),
  e: () => document.getElementById("edit")?.click(),
  "?": showShortcuts,
};

export function shortcuts() {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || document.querySelector("dialog[open]")) return;
    const action = ACTIONS[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}
