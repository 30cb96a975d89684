// A memory changed while a person edited it: their edit merged field by field and tag by tag on top of the current
// version (never overwriting it), and where both changed the same field, the two side by side (the content diffed
// word by word) for them to choose, with no side chosen for them.

import { api, failed } from "./api.js";
import { app, h, keyName, notify, show } from "./dom.js";
import { discarded, dropDrafts, keptOn, namespace } from "./drafts.js";
import { showFieldErrors } from "./errors.js";
import { changes, wordDiff } from "./history.js";
import { saveButton, saveHint, savesOnCtrlEnter } from "./keys.js";

export const FIELDS = ["content", "memory_type", "status"];
const LABELS = { content: "Content", memory_type: "Type", status: "Status", tags: "Tags" };

export const sameTags = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

// What to send on top of `current` for the person's edit of `base`: only the fields they changed; tags they added or
// removed applied to the current tags; a field both sides changed (differently) is a conflict for them to decide.
export function merge(base, edited, current) {
  const body = {};
  const conflicts = [];
  for (const name of FIELDS) {
    if (edited[name] === base[name] || edited[name] === current[name]) continue;
    if (current[name] === base[name]) body[name] = edited[name];
    else conflicts.push({ name, theirs: current[name], mine: edited[name] });
  }
  const added = edited.tags.filter((tag) => !base.tags.includes(tag));
  const removed = base.tags.filter((tag) => !edited.tags.includes(tag));
  const merged = [...current.tags.filter((tag) => !removed.includes(tag)), ...added.filter((tag) => !current.tags.includes(tag))];
  if (!sameTags(merged, current.tags)) body.tags = merged;
  return { body, conflicts, added, removed };
}

async function changedBy(id, sinceVersion) {
  try {
    const history = (await api("GET", `/memories/${id}/history?limit=100`)).json.items;
    const keys = [...new Set(history.filter((r) => r.version > sinceVersion).map((r) => r.key_id))];
    return keys.map(keyName).join(" and ") || "another key";
  } catch (error) {
    if (error.status === 401) throw error; // the key stopped working: what was typed is kept (keptOn)
    return "another key";
  }
}

// Neither side is chosen for the person: either choice, made for them, would drop one side's change in one click.
function conflictChoice({ name, theirs, mine }, who) {
  const id = `choice-${name}`;
  const radios = [["theirs", `Keep theirs (${who})`, theirs], ["mine", "Use mine", mine]].map(([value, label, text]) =>
    h("label", { class: "choice" }, h("input", { type: "radio", name: id, value }), label,
      h("span", { class: "side" }, String(text))));
  const box = h("fieldset", { class: "panel conflict", "data-field": name },
    h("legend", {}, `${LABELS[name]}: you and ${who} both changed it`), h("div", { class: "sides" }, radios));
  if (name === "content") {
    const area = h("textarea", { id: "merged-content", name: "merged-content" });
    for (const radio of box.querySelectorAll("input[type=radio]")) {
      radio.addEventListener("change", () => { area.value = radio.value === "mine" ? mine : theirs; });
    }
    box.append(h("p", { class: "meta" }, "Theirs against yours, word by word (struck: only theirs; underlined: only yours):"),
      wordDiff(String(theirs), String(mine), { del: "only in theirs", ins: "only in yours" }),
      h("div", {}, h("label", { for: "merged-content" }, "Content to save (choose a side to start from, or write it)"), area));
  }
  return box;
}

// The fields both changed that the person has not decided yet (the content decided by writing it, too).
function undecided(form, conflicts) {
  const errors = [];
  for (const { name } of conflicts) {
    const picked = form.querySelector(`input[name="choice-${name}"]:checked`);
    if (name === "content" && !form.querySelector("#merged-content").value.trim()) {
      errors.push({ field: "merged-content", message: "Choose theirs or yours, or write the content to save." });
    } else if (name !== "content" && !picked) {
      errors.push({ field: `choice-${name}`, message: "Choose theirs or yours." });
    }
  }
  return errors;
}

function chosen(form, conflicts, current) {
  const body = {};
  for (const { name, mine } of conflicts) {
    const value = name === "content" ? form.querySelector("#merged-content").value
      : (form.querySelector(`input[name="choice-${name}"]:checked`)?.value === "mine" ? mine : current[name]);
    if (value !== current[name]) body[name] = value;
  }
  return body;
}

function mergedList(plan, current) {
  const items = [];
  for (const [name, value] of Object.entries(plan.body)) {
    if (name !== "tags") items.push(h("li", {}, `${LABELS[name]}: yours is applied (they did not change it).`));
  }
  if (plan.added.length || plan.removed.length) {
    const kept = current.tags.filter((tag) => !plan.removed.includes(tag));
    items.push(h("li", {}, `Tags: ${[plan.added.length ? `you added ${plan.added.join(", ")}` : "",
      plan.removed.length ? `you removed ${plan.removed.join(", ")}` : ""].filter(Boolean).join("; ")}; ` +
      `their tags are kept: ${kept.join(", ") || "none"}.`));
  }
  return items.length ? h("ul", {}, items) : h("p", {}, "Nothing else of yours to apply.");
}

// `gone(base, edited)`: the view of a memory deleted meanwhile (the editor's).
export async function conflictView(base, edited, gone) {
  notify("");
  const ns = namespace();
  let current;
  let who;
  try {
    current = (await api("GET", `/memories/${base.id}`)).json;
    who = await changedBy(base.id, base.version);
  } catch (error) {
    if (keptOn(error, ns, base, edited)) return undefined;
    if (error.status === 404) return gone(base, edited);
    return failed(error);
  }
  const plan = merge(base, edited, current);
  const form = savesOnCtrlEnter(h("form", { onsubmit: async (event) => {
    event.preventDefault();
    const errors = undecided(form, plan.conflicts);
    if (errors.length) return showFieldErrors(form, { errors });
    const body = { ...plan.body, ...chosen(form, plan.conflicts, current) };
    if (!Object.keys(body).length) {
      app.guard = null;
      dropDrafts(ns, base.id);
      notify("Nothing of yours differs from the current version.", "ok");
      return app.route();
    }
    try {
      // The version stored is the one the answer names: the merge is a new version on top of theirs.
      const saved = (await api("PATCH", `/memories/${base.id}`, { body, ifMatch: current.version })).json;
      app.guard = null;
      dropDrafts(ns, base.id);
      notify(`Your changes are merged and saved as version ${saved.version}.`, "ok");
      app.route();
    } catch (error) {
      if (keptOn(error, ns, current, { ...current, ...body })) return undefined;
      if (error.status === 412) return conflictView(current, { ...current, ...body }, gone);
      if (error.status === 404) return gone(current, { ...current, ...body });
      failed(error);
    }
  } },
  plan.conflicts.map((conflict) => conflictChoice(conflict, who)),
  h("div", { class: "actions" },
    saveButton("Save merged changes"),
    h("button", { type: "button", onclick: () => discarded(ns, base.id) }, "Discard my changes"),
    saveHint())));
  const theirs = changes(base, current);
  show(`Memory #${base.id} changed while you edited it`,
    h("p", {}, `You edited version ${base.version}; ${who} changed it since: it is now at version ${current.version}. `,
      "Nothing was overwritten."),
    h("h2", {}, `What ${who} changed`),
    h("div", { class: "panel" }, theirs.length ? theirs : h("p", {}, "Nothing visible.")),
    h("h2", {}, "Your changes, merged"), mergedList(plan, current),
    plan.conflicts.length ? h("h2", {}, "Choose where you both changed the same field") : null,
    form);
  app.guard = () => true;
}
