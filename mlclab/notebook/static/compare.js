// mlclab compare: two graph viewers side by side (stacked when narrow), nodes matched between
// them (Python's `matches`), selection synced: a click in one pane selects its match in the
// other and centres it there. Each pane is the ordinary viewer (viewer.js) over a local model
// of its own; this module only joins them and the comparison's model (widget or page).

import { h } from "./dom.js";
import { localModel } from "./host.js";
import { render } from "./viewer.js";
import { hideTwin } from "./twin.js";
import { SIDES, paneState, syncSelection, syncFolding, forwardDrawn, shareGraphviz } from "./pair.js";

export function renderCompare({ model, el }) {
  const panes = {}, cleanups = [];
  const row = h("div", { class: "mlclab-compare-panes" });
  for (const side of SIDES) {
    const mount = h("div", { class: "mlclab-compare-mount" });
    const box = h("div", { class: `mlclab-compare-pane mlclab-compare-${side}`, "data-side": side },
      h("div", { class: "mlclab-compare-title", text: model.get(`${side}_name`) || side }), mount);
    row.append(box);
    panes[side] = localModel(paneState((name) => model.get(name), side));
    // A pane folds where the comparison has a kernel to lay it out (localModel says no).
    panes[side].set("live", !!model.get("live"));
    forwardDrawn(model, panes[side], side);
    panes[side].mount = mount;
  }
  const summary = h("div", { class: "mlclab-compare-summary", text: `${model.get("summary") || ""} · matched by ${model.get("method") || "value"}` });
  const legend = h("div", { class: "mlclab-compare-legend" },
    h("span", { class: "mlclab-compare-removed", text: "only left" }), " ",
    h("span", { class: "mlclab-compare-added", text: "only right" }), " ",
    h("span", { class: "mlclab-compare-changed", text: "changed" }));
  el.replaceChildren(h("div", { class: "mlclab-compare" }, summary, legend, row));

  cleanups.push(syncSelection(model, panes), syncFolding(model, panes), shareGraphviz(model, panes));
  for (const side of SIDES) cleanups.push(render({ model: panes[side], el: panes[side].mount }));
  hideTwin(model, el);
  return () => { for (const c of cleanups) if (typeof c === "function") c(); };
}

export default { render: renderCompare };
