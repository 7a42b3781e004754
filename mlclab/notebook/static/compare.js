// mlclab compare: two graph viewers side by side (stacked when narrow), nodes matched between
// them (Python's `matches`), selection synced: a click in one pane selects its match in the
// other and centres it there. Each pane is the ordinary viewer (viewer.js) over a local model
// of its own; this module only joins them and the comparison's model (widget or page).

import { h } from "./dom.js";
import { localModel } from "./host.js";
import { render } from "./viewer.js";
import { hideTwin } from "./twin.js";
import { SIDES, paneState, syncSelection, syncFolding, forwardDrawn, shareGraphviz } from "./pair.js";

// What the comparison calls its sides: left and right side by side, top and bottom when the
// column is too narrow and the panes are stacked. `text` is Python's summary ("5 only left").
export function sideWords(text, stacked) {
  return stacked ? text.replace(/\bleft\b/g, "top").replace(/\bright\b/g, "bottom") : text;
}

export function renderCompare({ model, el }) {
  const panes = {}, cleanups = [], titles = {};
  const row = h("div", { class: "mlclab-compare-panes" });
  for (const side of SIDES) {
    const mount = h("div", { class: "mlclab-compare-mount" });
    titles[side] = h("div", { class: "mlclab-compare-title" });
    const box = h("div", { class: `mlclab-compare-pane mlclab-compare-${side}`, "data-side": side },
      titles[side], mount);
    row.append(box);
    panes[side] = localModel(paneState((name) => model.get(name), side));
    // A pane folds where the comparison has a kernel to lay it out (localModel says no).
    panes[side].set("live", !!model.get("live"));
    forwardDrawn(model, panes[side], side);
    panes[side].mount = mount;
  }
  const summary = h("div", { class: "mlclab-compare-summary" });
  const only = { left: h("span", { class: "mlclab-compare-removed" }), right: h("span", { class: "mlclab-compare-added" }) };
  const legend = h("div", { class: "mlclab-compare-legend" }, only.left, " ", only.right, " ",
    h("span", { class: "mlclab-compare-changed", text: "changed" }));
  el.replaceChildren(h("div", { class: "mlclab-compare" }, summary, legend, row));
  // Every word naming a side follows the panes' arrangement (flex-wrap stacks them).
  let stacked = null;
  const name = () => {
    const [a, b] = SIDES.map((side) => row.querySelector(`[data-side="${side}"]`).getBoundingClientRect());
    const now = b.top >= a.bottom - 1 && a.height > 0;
    if (now === stacked) return;
    stacked = now;
    for (const side of SIDES) titles[side].textContent = `${sideWords(side, stacked)}: ${model.get(`${side}_name`) || side}`;
    for (const side of SIDES) only[side].textContent = `only ${sideWords(side, stacked)}`;
    summary.textContent = sideWords(`${model.get("summary") || ""} · matched by ${model.get("method") || "value"}`, stacked);
  };
  name();
  const arranged = new ResizeObserver(name);
  arranged.observe(row);
  cleanups.push(() => arranged.disconnect());

  cleanups.push(syncSelection(model, panes), syncFolding(model, panes), shareGraphviz(model, panes));
  for (const side of SIDES) cleanups.push(render({ model: panes[side], el: panes[side].mount }));
  hideTwin(model, el);
  return () => { for (const c of cleanups) if (typeof c === "function") c(); };
}

export default { render: renderCompare };
