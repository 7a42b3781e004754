// Graph layout in the browser, where the kernel had no Graphviz `dot` program
// (mlclab.notebook.browser_layout): the view model's geometry holds DOT instead of SVG, and
// Graphviz compiled to WebAssembly (the vendored @hpcc-js/wasm-graphviz, whose ES module
// source the kernel sends as `graphviz_wasm`) lays it out here. Nothing is fetched: the
// module is imported from its own text through a blob: URL.
//
// Two users: the viewer (viewer.js asks `awaitingLayout`, then `layOutView` and draws again)
// and `renderPicture` below, fn.graph()'s picture where scripts run (a page entry of bundle.py).

import { h, parseSvg, drawingBox, smallestFont } from "./dom.js";
import { minScale } from "./fit.js";

const PX_PER_PT = 4 / 3;   // Graphviz draws in points, CSS in px

// One Graphviz per page, shared by every viewer and picture on it (compiling the wasm costs
// a few hundred ms); a failed load is forgotten, so the next drawing tries again.
export function loadGraphviz(source) {
  const cache = (globalThis.__mlclabGraphviz ||= {});
  if (!cache.loading) {
    if (!source) return Promise.reject(new Error("no WebAssembly Graphviz was sent with this graph"));
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    cache.loading = import(url).then((m) => m.Graphviz.load())
      .finally(() => URL.revokeObjectURL(url));
    cache.loading.catch(() => { cache.loading = null; });
  }
  return cache.loading;
}

// Drawings already made on this page, by DOT: the kernel sends every view again when one
// changes (a fold, a view drawn), and those already laid out are not laid out twice.
const KEEP = 32;

function laidOut() {
  const cache = (globalThis.__mlclabGraphviz ||= {});
  return (cache.drawings ||= new Map());
}

// The SVG text of DOT `dot`, laid out by the WebAssembly Graphviz of `source`.
export async function layOutDot(dot, source) {
  const drawings = laidOut();
  if (drawings.has(dot)) return drawings.get(dot);
  const graphviz = await loadGraphviz(source);
  const svg = graphviz.dot(dot, "svg");
  drawings.set(dot, svg);
  if (drawings.size > KEEP) drawings.delete(drawings.keys().next().value);
  return svg;
}

// `svg` with the nodes `marks` names (id -> {change, colour, dash}: a comparison's unmatched
// nodes, mlclab.notebook.compare) outlined, as the kernel outlines those of dot's drawings.
export function outline(svg, marks) {
  if (!marks || !Object.keys(marks).length) return svg;
  const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
  for (const g of doc.querySelectorAll("g[id]")) {
    const mark = Object.prototype.hasOwnProperty.call(marks, g.id) ? marks[g.id] : null;
    if (!mark) continue;
    g.classList.add(`mlclab-${mark.change}`);
    for (const shape of g.children) {
      if (!["polygon", "ellipse", "path", "rect"].includes(shape.localName)) continue;
      shape.setAttribute("stroke", mark.colour);
      shape.setAttribute("stroke-width", "3");
      if (mark.dash) shape.setAttribute("stroke-dasharray", mark.dash);
    }
  }
  return new XMLSerializer().serializeToString(doc.documentElement);
}

// A view model whose drawing is still DOT to lay out here.
export function awaitingLayout(view) {
  const g = (view && view.geometry) || {};
  return !g.svg && typeof g.dot === "string" && g.dot !== "";
}

function failure(err, text) {
  return [h("div", { class: "mlclab-hint mlclab-view-error",
    text: `this graph could not be laid out in the browser: ${(err && err.message) || err}` }),
  h("pre", { class: "mlclab-text-fallback", text: text || "" })];
}

// Lay `view` out into `canvas`'s place: "laying out…" meanwhile, then the SVG is kept in the
// view's geometry (as if the kernel had sent it) and `then()` draws it; on failure the
// canvas says why and shows the graph as text.
export function layOutView(view, source, canvas, then) {
  const g = view.geometry;
  if (laidOut().has(g.dot)) { g.svg = outline(laidOut().get(g.dot), g.marks); then(); return; }
  canvas.replaceChildren(h("div", { class: "mlclab-hint", text: "laying the graph out in the browser (WebAssembly Graphviz)…" }));
  layOutDot(g.dot, source).then((svg) => { g.svg = outline(svg, g.marks); then(); },
    (err) => canvas.replaceChildren(...failure(err, g.text)));
}

// The banner's word that this drawing was laid out here, with the kernel's reason as its
// tooltip (a fallback is said where the student looks); nothing for dot's drawings.
export function layoutBadge(view) {
  const g = (view && view.geometry) || {};
  if (!g.dot) return [];
  return [h("span", { class: "mlclab-muted mlclab-browser-laid", title: g.note || "", text: " laid out in the browser (no Graphviz dot here) " })];
}

// Size a drawing for a notebook column as mlclab.viz.fit does for dot's SVG: its natural
// size at most, the column's width, never below the scale that keeps labels readable.
export function fitColumn(svg) {
  const box = drawingBox(svg);
  const width = box.width * PX_PER_PT, height = box.height * PX_PER_PT;
  const floor = Math.min(1, minScale(smallestFont(svg) * PX_PER_PT));
  svg.setAttribute("width", `${Math.round(width)}px`);
  svg.setAttribute("height", `${Math.round(height)}px`);
  svg.setAttribute("style", `width:100%;max-width:${Math.round(width)}px;height:auto;` +
    `min-width:${Math.round(width * floor)}px`);
  return svg;
}

// fn.graph()'s picture where scripts run: `model` holds `dot`, `note` (what was folded),
// `where` (that the browser laid it out), `text` and `graphviz_wasm`
// (mlclab.notebook.browser_layout.graph_html).
export function renderPicture({ model, el }) {
  const notes = [model.get("note"), model.get("where")].filter(Boolean);
  const caption = () => notes.map((text) => h("div", { class: "mlclab-fit-note", style: "font-size:12px;opacity:0.8", text }));
  el.replaceChildren(...caption(), h("div", { class: "mlclab-hint", text: "laying the graph out in the browser (WebAssembly Graphviz)…" }));
  layOutDot(model.get("dot"), model.get("graphviz_wasm")).then((text) => {
    const svg = parseSvg(text);
    if (!svg) throw new Error("Graphviz's SVG could not be read");
    svg.classList.add("mlclab-browser-layout");
    el.replaceChildren(...caption(), h("div", { class: "mlclab-graph", style: "max-width:100%;overflow-x:auto" }, fitColumn(svg)));
  }).catch((err) => el.replaceChildren(...caption(), ...failure(err, model.get("text"))));
}

export default { render: renderPicture };
