// Keyboard shortcuts for the common moves: `/` search, `j`/`k` move through the list, `e` edit, Ctrl+Enter save, `?`
// shows those the key may use. The single keys never fire while the person types in a field or a dialog is open.

import { can } from "./api.js";
import { app, h } from "./dom.js";

// Each with the scope it needs: a key is shown only what it may do (a read-only key edits nothing).
const HELP = [
  ["/", "Search: focus the text filter", "read"],
  ["j", "Next memory in the list", "read"],
  ["k", "Previous memory in the list", "read"],
  ["Enter", "Open the memory in focus", "read"],
  ["e", "Edit the memory open", "write"],
  ["Ctrl+Enter", "Save the memory being edited or created, from any of its fields (⌘+Enter on a Mac)", "write"],
  ["?", "Show these shortcuts", null],
];

// Save stays last in its form, where the fields it saves end and in the order a screen reader reads them: Ctrl+Enter
// (Cmd+Enter) saves from any field instead of some 17 Tabs past the standard tags.
export function saveButton(label) {
  return h("button", { type: "submit", class: "primary", "aria-keyshortcuts": "Control+Enter Meta+Enter",
    "aria-describedby": "save-hint" }, label);
}

export const saveHint = () => h("p", { class: "hint", id: "save-hint" }, "Ctrl+Enter (⌘+Enter on a Mac) saves from any field.");

export function savesOnCtrlEnter(form) {
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
    event.preventDefault();
    form.requestSubmit();
  });
  return form;
}

export function showShortcuts() {
  const dialog = h("dialog", { "aria-labelledby": "shortcuts-title", id: "shortcuts" },
    h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"),
    h("dl", { class: "fields" }, HELP.filter(([, , scope]) => !scope || can(scope))
      .map(([keyName, what]) => [h("dt", {}, h("kbd", {}, keyName)), h("dd", {}, what)])),
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
      location.hash = "#/memories";
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
