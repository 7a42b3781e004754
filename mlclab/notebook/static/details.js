// The details pane: what the view model says about the selected node, as a table.

import { h } from "./dom.js";
import { nodesOf, anchoredLine, overlaySummary } from "./vm.js";

function row(key, value) {
  if (value === undefined || value === null || value === "") return null;
  return h("tr", {}, h("th", { text: key }), h("td", { text: String(value) }));
}

// Fill `pane` with node `id` of `view` (its overlays too; `extra`: the widget's annotations).
export function showDetails(pane, view, id, extra) {
  const info = nodesOf(view)[id];
  if (!id || !info) {
    pane.replaceChildren(h("div", { class: "mlclab-hint", text: "click a node to see its details" }));
    return;
  }
  const source = info.source || {}, f = info.folded;
  const attrs = Object.entries(info.attrs || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  const table = h("table", {},
    row("node", id),
    row("operator", info.kind === "param" || f ? "" : info.label),
    row("kind", f ? `folded ${f.kind}` : info.kind),
    row("attributes", attrs),
    row("type", info.type),
    row("binding", info.name),
    row("module", source.module || (f && f.path) || ""),
    row("PyTorch op", source.origin),
    row("holds", f ? `${f.cls || f.label}: ${f.ops} operators, ${f.nodes} nodes` : ""),
    row("DSL variable", source.dsl_name),
    row("DSL line", info.line ? `${info.line}: ${source.source_line || ""}` : ""),
    row("TVMScript", anchoredLine(view, id, "relax")),
    ...overlaySummary(view, id, extra).map((o) => row(o.layer, o.text)));
  pane.replaceChildren(h("div", { class: "mlclab-details-title", text: info.label }), table);
}
