// The memories ticked in the list: kept across searches, filters and pages until cleared or acted on (a person tidies
// what several searches found), each as it was last listed (its version is its If-Match); ticked one by one, a page
// at a time, or a range with shift-click.

import { h } from "./dom.js";

export const selected = new Map(); // id → the memory as last listed
let anchor = null; // the id last ticked or unticked: a shift-click sets every row from it to the one clicked

function tick(memory, on) {
  if (on) selected.set(memory.id, memory);
  else selected.delete(memory.id);
  const box = document.querySelector(`input.select-row[data-id="${memory.id}"]`);
  if (box) box.checked = on;
}

export function clearSelection() {
  selected.clear();
  anchor = null;
  for (const box of document.querySelectorAll("input.select-row, input.select-page")) box.checked = false;
}

// A page's checkboxes; `changed` runs after every change. A memory already selected is kept as this page lists it, the
// newer version.
export function selectionCells(page, changed) {
  for (const memory of page.items) if (selected.has(memory.id)) selected.set(memory.id, memory);
  const pageBox = () => document.querySelector("input.select-page");
  const settle = () => {
    const box = pageBox();
    if (box) box.checked = page.items.every((m) => selected.has(m.id));
    changed();
  };
  return {
    heading: h("th", { scope: "col" }, h("input", { type: "checkbox", class: "select-page",
      "aria-label": "Select every memory on this page",
      checked: page.items.length > 0 && page.items.every((m) => selected.has(m.id)), onchange: (event) => {
        for (const memory of page.items) tick(memory, event.target.checked);
        changed();
      } })),
    cell: (memory) => h("td", { class: "select" }, h("input", { type: "checkbox", class: "select-row",
      "data-id": memory.id, "aria-label": `Select memory #${memory.id}`, checked: selected.has(memory.id),
      // Shift-click would also select the page's text from the last click on.
      onmousedown: (event) => { if (event.shiftKey) event.preventDefault(); },
      onclick: (event) => {
        const on = event.target.checked;
        const ids = page.items.map((m) => m.id);
        const [from, to] = [ids.indexOf(anchor), ids.indexOf(memory.id)].sort((a, b) => a - b);
        const range = event.shiftKey && from !== -1 ? page.items.slice(from, to + 1) : [memory];
        for (const each of range) tick(each, on);
        anchor = memory.id;
        settle();
      } })),
  };
}
