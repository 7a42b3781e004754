// Graph layout in the browser, where the kernel had no Graphviz `dot` program
// (mlclab.notebook.browser_layout): the view model's geometry holds DOT instead of SVG, and
// Graphviz compiled to WebAssembly (the vendored @hpcc-js/wasm-graphviz, one ES module) lays
// it out here. Nothing is fetched: the module is imported from its own text through a blob:
// URL. Its text travels once per output: a page or twin carries it beside its state
// (`script.mlclab-graphviz`); a live widget finds it on the page, or asks its kernel for it
// (the `graphviz_wasm` trait) only where the page has none (graphvizSource).
//
// Two users: the viewer (viewer.js asks `awaitingLayout`, then `layOutView` and draws again)
// and `renderPicture` below, a column picture (fn.graph(), a %%tinynn graph tab's static
// form) that walks down its fold ladder until it fits (fit.js's chooseRung, fit.py's rule).

import { h, parseSvg } from "./dom.js";
import { measureSvg, columnFit, chooseRung } from "./fit.js";
import { paintSvg } from "./paint.js";

// The width a picture fits when its column cannot be measured (hidden): fit.py's COLUMN_PX.
export const COLUMN_PX = 940;
const NOT_SENT = "no WebAssembly Graphviz was sent with this graph";
// How long a widget waits for its kernel to send the module before saying so.
const ASK_MS = 60_000;

// One Graphviz per page, shared by every viewer and picture on it (compiling the wasm costs
// a few hundred ms); a failed load is forgotten, so the next drawing tries again. `source`:
// the module's text, or a function resolving to it (asked only when none is loaded yet).
export function loadGraphviz(source) {
  const cache = (globalThis.__mlclabGraphviz ||= {});
  if (!cache.loading) {
    cache.loading = Promise.resolve(typeof source === "function" ? source() : source).then((text) => {
      if (!text) throw new Error(NOT_SENT);
      const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
      return import(url).then((m) => m.Graphviz.load()).finally(() => URL.revokeObjectURL(url));
    });
    cache.loading.catch(() => { cache.loading = null; });
  }
  return cache.loading;
}

// The module's text as a page carries it (mlclab.notebook.page), near `el` or anywhere in
// its document: any copy will do, it is the same module.
export function moduleOnPage(el) {
  if (typeof document === "undefined") return "";
  const roots = new Set([el && el.getRootNode ? el.getRootNode() : document, document]);
  for (const root of roots) {
    const script = root.querySelector && root.querySelector("script.mlclab-graphviz");
    if (script && script.textContent) return script.textContent;
  }
  return "";
}

// Where a viewer gets the module: sent already, on the page (its twin carries it), or asked
// of the kernel (a widget: {event: "graphviz"} sets the `graphviz_wasm` trait; a page's local
// model has no kernel to ask).
export function graphvizSource(model, el) {
  const sent = model.get("graphviz_wasm") || moduleOnPage(el);
  if (sent) return Promise.resolve(sent);
  if (typeof model.send !== "function") return Promise.reject(new Error(NOT_SENT));
  return new Promise((resolve, reject) => {
    const done = (fn, value) => { clearTimeout(timer); model.off("change:graphviz_wasm", arrived); fn(value); };
    const arrived = () => { const text = model.get("graphviz_wasm"); if (text) done(resolve, text); };
    const timer = setTimeout(() => done(reject, new Error(`${NOT_SENT} (the kernel did not answer)`)), ASK_MS);
    model.on("change:graphviz_wasm", arrived);
    model.send({ event: "graphviz" });
  });
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
  if (laidOut().has(g.dot)) { g.svg = laidOut().get(g.dot); then(); return; }
  canvas.replaceChildren(h("div", { class: "mlclab-hint", text: "laying the graph out in the browser (WebAssembly Graphviz)…" }));
  layOutDot(g.dot, source).then((svg) => { g.svg = svg; then(); },
    (err) => canvas.replaceChildren(...failure(err, g.text)));
}

// The banner's word that this drawing was laid out here, with the kernel's reason as its
// tooltip (a fallback is said where the student looks); nothing for dot's drawings.
export function layoutBadge(view) {
  const g = (view && view.geometry) || {};
  if (!g.dot) return [];
  return [h("span", { class: "mlclab-muted mlclab-browser-laid", title: g.note || "", text: " laid out in the browser (no Graphviz dot here) " })];
}

// Size a drawing for its column by `fit` (fit.js's columnFit): its natural size at most, the
// column's width, never below the scale that keeps labels readable (then it scrolls).
export function fitColumn(svg, fit) {
  const width = Math.round(fit.width);
  svg.setAttribute("width", `${Math.round(fit.width * fit.scale)}px`);
  svg.setAttribute("height", `${Math.round(fit.height * fit.scale)}px`);
  svg.setAttribute("style", `width:100%;max-width:${width}px;height:auto;` +
    `min-width:${Math.round(Math.min(width, fit.width * fit.minScale))}px`);
  return svg;
}

// The width a picture in `el` has: its column as laid out now (COLUMN_PX while hidden).
function columnOf(el) {
  const width = el.getBoundingClientRect ? el.getBoundingClientRect().width : 0;
  return width > 0 ? width : COLUMN_PX;
}

// A column picture where scripts run: `model` holds `ladder` ([{dot, note, nodes, overlays}], folded
// more and more; mlclab.viz.views.GraphView.ladder), `styles` (the overlays' looks), `where`
// (that the browser laid it out) and `text`; the module is on the page (mlclab.notebook.browser_layout.graph_html). The
// rungs are laid out in turn until one fits the column readably (chooseRung).
export function renderPicture({ model, el }) {
  const ladder = model.get("ladder") || [];
  const caption = (note) => [note, model.get("where")].filter(Boolean)
    .map((text) => h("div", { class: "mlclab-fit-note", style: "font-size:12px;opacity:0.8", text }));
  const source = () => moduleOnPage(el);
  el.replaceChildren(...caption(ladder.length ? ladder[0].note : ""),
    h("div", { class: "mlclab-hint", text: "laying the graph out in the browser (WebAssembly Graphviz)…" }));
  const column = columnOf(el);
  const svgs = [];
  const measure = (k) => layOutDot(ladder[k].dot, source).then((text) => { svgs[k] = text; return columnFit(measureSvg(text), column); });
  chooseRung(ladder, measure).then(({ index, fit }) => {
    if (index === null) throw new Error("no graph to lay out");
    const svg = parseSvg(svgs[index]);
    if (!svg) throw new Error("Graphviz's SVG could not be read");
    svg.classList.add("mlclab-browser-layout");
    // The rung's overlays by the style table, as every display paints them (paint.js).
    paintSvg(svg, { overlays: ladder[index].overlays || {}, styles: model.get("styles") || {} });
    el.dataset.rung = String(index);
    el.replaceChildren(...caption(ladder[index].note), h("div", { class: "mlclab-graph", style: "max-width:100%;overflow-x:auto" }, fitColumn(svg, fit)));
  }).catch((err) => el.replaceChildren(...caption(""), ...failure(err, model.get("text"))));
}

export default { render: renderPicture };
