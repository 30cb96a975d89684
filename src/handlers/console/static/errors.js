// The API's 422 words next to the field they are about: once each, the rule about the whole field before the ones
// about one item ("at most 20 tags" before "tag 3 ..."), naming the tag that is wrong, and gone once the field is
// changed (with its `aria-invalid`), so neither focus nor a screen reader stays on a field already fixed.

import { h } from "./dom.js";

function itemOf(field) {
  const match = /\[(\d+)\]/.exec(field);
  return match ? Number(match[1]) : null;
}

function clear(field) {
  field.removeAttribute("aria-invalid");
  const describedBy = (field.getAttribute("aria-describedby") || "").split(" ").filter((id) => !id.endsWith("-error"));
  if (describedBy.length) field.setAttribute("aria-describedby", describedBy.join(" "));
  else field.removeAttribute("aria-describedby");
  document.getElementById(`${field.name}-error`)?.remove();
}

// `values` maps a list field's name to the values the request sent, so an item's error can name it.
export function showFieldErrors(form, problem, values = {}) {
  for (const old of form.querySelectorAll(".field-error")) old.remove();
  for (const field of form.querySelectorAll("[aria-invalid]")) clear(field);
  const byName = new Map();
  const errors = [...(problem.errors || [])].sort((a, b) => (itemOf(a.field) !== null) - (itemOf(b.field) !== null));
  for (const error of errors) {
    const name = error.field.replace(/^(query|body)\./, "").split(/[.[]/)[0];
    const item = itemOf(error.field);
    const text = item !== null && values[name] ? `"${values[name][item]}" ${error.message}` : error.message;
    if (!byName.has(name)) byName.set(name, []);
    if (!byName.get(name).includes(text)) byName.get(name).push(text);
  }
  for (const [name, messages] of byName) {
    const field = form.querySelector(`[name="${CSS.escape(name === "tags" && !form.querySelector('[name="tags"]') ? "tag" : name)}"]`);
    const message = h("div", { class: "field-error", id: `${name}-error` }, messages.map((text) => h("p", {}, text)));
    if (!field) { form.prepend(message); continue; }
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", [field.getAttribute("aria-describedby"), `${name}-error`].filter(Boolean).join(" "));
    const holder = field.closest("div");
    if (holder) holder.append(message);
    else field.after(message);
    const fix = () => { clear(field); field.removeEventListener("input", fix); field.removeEventListener("change", fix); };
    field.addEventListener("input", fix);
    field.addEventListener("change", fix);
  }
  form.querySelector("[aria-invalid=true]")?.focus();
}
