// mlclab graph viewer: an anywidget front end (ES modules, no build tool, no network).
//
// Python sends, per view, a view model (mlclab.viz.view_model, docs/view-model.md): nodes,
// edges, namespaces, texts with each node's anchors, overlay layers, and Graphviz's SVG for
// the geometry. Everything is looked up by the ids the model gives; the SVG is never read for
// meaning. This module wires the DOM: pan/zoom, click to select (synced back as
// `selected_node`), hover to light up the node's DSL and let lines, view switching, folding
// (asked of the kernel, which lays it out: `open_modules`, `folded`), search that zooms to its
// matches, overlay marks, "draw all", "jump to hottest kernel".

import { h, boxOf, idIndex, fillLines, fillLinesSoon, markLine, download,
  smallestFont } from "./dom.js";
import { showDetails } from "./details.js";
import { currentView, viewNamed, save, drawViewButtons, receiveView, dropSentViews } from "./switcher.js";
import { frameBefore, scrubberPlaced, takeParsed } from "./scrubber.js";
import { applyZoom, keepSelected, placeKept, frameKept, fitView, ensureShown, zoomTo, placeOpened } from "./place.js";
import { zoomAt, minScale } from "./fit.js";
import { hideTwin } from "./twin.js";
import { isViewModel, nodesOf, namespacesOf, layerOf, searchHits, anchorOf,
  clickFold, collapsible, revealFolds, foldSummary, keepInPlace } from "./vm.js";
import { awaitingLayout, layOutView, layoutBadge, graphvizSource } from "./layout.js";
import { paintNodes } from "./paint.js";

// ------------------------------------------------------------------- width
// Below this width (the viewer's own, px) the side panel goes under the graph (viewer.css):
// a laptop's notebook column with the file browser open is about 650 px.
export const NARROW_PX = 760;
// Above this one the panes are taller: a wide column has room for more of the graph.
export const WIDE_PX = 1150;

const drawnWhole = (model) => (model.get("unfolded") || []).includes(model.get("view"));

// ------------------------------------------------------------------- the drawing's index
// Node id -> its SVG elements (the node, and copies drawn at readers), by the ids the model
// names; edges and namespaces likewise.
function indexDrawing(svg, view) {
  const ids = idIndex(svg);
  const index = { elements: new Map(), copies: [], edges: [], namespaces: new Map() };
  for (const id of Object.keys(nodesOf(view))) {
    const el = ids.get(id);
    if (el) { index.elements.set(id, [el]); el.dataset.node = id; }
  }
  for (const [svgId, copy] of Object.entries((view.geometry || {}).copies || {})) {
    const el = ids.get(svgId);
    if (!el || !index.elements.has(copy.node)) continue;
    el.dataset.node = copy.node;
    index.elements.get(copy.node).push(el);
    index.copies.push({ el, ...copy });
  }
  (view.edges || []).forEach((e, k) => {
    const el = ids.get(`edge:${k}`);
    if (el) index.edges.push({ el, ...e });
  });
  for (const ns of Object.keys(namespacesOf(view))) {
    const el = ids.get(`cluster:${ns}`);
    if (el) index.namespaces.set(ns, el);
  }
  return index;
}

// ------------------------------------------------------------------- marks on nodes
function markNodeLines(state, id, cls) {
  const view = currentView(state.model);
  const info = id ? nodesOf(view)[id] : null;
  markLine(state.ui.sourcePane, info ? info.line : null, cls);
  markLine(state.ui.letPane, id ? anchorOf(view, id, "let") : null, cls);
}

function refreshMarks(state) {
  const { model, ui } = state;
  const view = currentView(model);
  const selected = model.get("selected_node");
  const highlight = new Set(model.get("highlight") || []);
  const annotations = model.get("annotations");
  // The overlays' looks (paint.js), painted again only when the view or its annotations change.
  if (state.painted.index !== state.index || state.painted.annotations !== annotations) {
    paintNodes(state.index.elements, view, annotations);
    state.painted = { index: state.index, annotations };
  }
  const query = (model.get("search") || "").trim();
  const hits = new Set(searchHits(view, query));
  for (const [id, els] of state.index.elements) {
    for (const g of els) {
      g.classList.toggle("mlclab-selected", id === selected);
      g.classList.toggle("mlclab-highlight", highlight.has(id));
      g.classList.toggle("mlclab-match", hits.has(id));
      g.classList.toggle("mlclab-dim", query !== "" && !hits.has(id));
    }
  }
  ui.matches.textContent = query ? `${hits.size} match${hits.size === 1 ? "" : "es"}` : "";
  markNodeLines(state, selected, "mlclab-line-selected");
  showDetails(ui.details, view, selected, model.get("annotations"));
  return hits;
}

function hover(state, id) {
  for (const [nid, els] of state.index.elements) for (const g of els) g.classList.toggle("mlclab-hover", nid === id);
  markNodeLines(state, id, "mlclab-line-hover");
}

// ------------------------------------------------------------------- folding (by the kernel)
function foldState(model) {
  return { open_modules: model.get("open_modules") || [], folded: model.get("folded") || [] };
}

function askFold(state, target, at) {
  const { model } = state;
  if (!model.get("live")) return false;
  const view = currentView(model);
  const change = clickFold(view, foldState(model), target);
  if (!change) return false;
  // A folded module opened where it was clicked: the next drawing keeps its box there.
  const folded = target.node && (nodesOf(view)[target.node] || {}).folded;
  state.opened = folded && change.open_modules && at ? { ns: folded.namespace, ...at, k: state.zoom.k } : null;
  save(model, change);
  return true;
}

// The pointer is on something a click would fold or open: the kernel lays that state out
// next among the ones it makes ahead (notebook/fold_layouts.py, FoldLayouts.prefer).
function announceHover(state, target) {
  const { model } = state;
  if (!model.get("live") || typeof model.send !== "function") return;
  const change = clickFold(currentView(model), foldState(model), target);
  if (change) model.send({ event: "hover", view: model.get("view"), ...foldState(model), ...change });
}

function bindNamespaces(state) {
  for (const [ns, g] of state.index.namespaces) {
    // Clicking a namespace's label folds it (a cluster with a tooltip has its label in an <a>).
    const handle = g.querySelector(":scope > text, :scope > g > a > text");
    if (!handle) continue;
    handle.classList.add("mlclab-cluster-handle");
    handle.addEventListener("click", () => askFold(state, { namespace: ns }));
    handle.addEventListener("mouseenter", () => announceHover(state, { namespace: ns }));
  }
}

// The hottest node of the profile layer, and what to open to reach it.
function hottest(view) {
  const layer = layerOf(view, "profile");
  let best = null;
  for (const [id, e] of Object.entries(layer)) if (!best || (e.share || 0) > (best.entry.share || 0)) best = { id, entry: e };
  if (!best) return null;
  const target = best.entry.hottest || best.id;
  return { id: target, reveal: best.entry.reveal || [], label: best.entry.kernel || (nodesOf(view)[best.id] || {}).label, share: best.entry.share || 0 };
}

function jumpToHottest(state) {
  const { model } = state;
  const view = currentView(model);
  const hot = hottest(view);
  if (!hot) return;
  state.jump = hot.id;
  if (nodesOf(view)[hot.id]) { finishJump(state); return; }
  if (model.get("live")) save(model, revealFolds(view, hot.reveal, foldState(model)));
}

function finishJump(state) {
  const id = state.jump;
  const els = state.index.elements.get(id);
  if (!els) return;
  state.jump = null;
  save(state.model, { selected_node: id });
  zoomTo(state, els.slice(0, 1));
}

// ------------------------------------------------------------------- the banner
function drawBanner(state, view) {
  const { model, ui } = state;
  const name = model.get("view");
  const parts = [];
  const summary = foldSummary(view);
  const whole = drawnWhole(model);
  if (summary) parts.push(h("span", { text: `overview: ${summary} ` }));
  const live = model.get("live");
  if (live && (summary || whole || (model.get("open_modules") || []).length || (model.get("folded") || []).length)) {
    const foldAll = h("button", { type: "button", class: "mlclab-fold-modules", text: "fold all" });
    foldAll.addEventListener("click", () => save(model, {
      unfolded: (model.get("unfolded") || []).filter((v) => v !== name), open_modules: [], folded: [] }));
    parts.push(foldAll);
  }
  if (view.overview && !whole && live) {
    const all = h("button", { type: "button", class: "mlclab-unfold", text: `draw all ${view.overview.total} nodes` });
    all.addEventListener("click", () => save(model, { unfolded: [...(model.get("unfolded") || []), name] }));
    parts.push(all);
  }
  const hot = hottest(view);
  if (hot) {
    const jump = h("button", { type: "button", class: "mlclab-jump", text: `jump to hottest kernel (${Math.round(100 * hot.share)} %)` });
    jump.disabled = !live && !nodesOf(view)[hot.id];
    jump.addEventListener("click", () => jumpToHottest(state));
    parts.push(jump);
  }
  parts.push(...layoutBadge(view));
  if (!live && Object.keys(namespacesOf(view)).length) parts.push(h("span", { class: "mlclab-muted", text: " (folding is laid out by a running kernel)" }));
  ui.banner.replaceChildren(...parts);
  ui.banner.hidden = parts.length === 0;
}

// ------------------------------------------------------------------- drawing a view
function drawEmpty(state, view) {
  const { ui } = state;
  const geometry = view.geometry || {};
  if (geometry.text) {
    // Graphviz ran out of time: the graph as text, with the reason.
    ui.canvas.replaceChildren(h("div", { class: "mlclab-hint", text: geometry.note || "" }),
      h("pre", { class: "mlclab-text-fallback", text: geometry.text }));
    return;
  }
  // A pending view is being drawn by the kernel; "views" changes again when it is ready.
  const why = view.pending ? "drawing…" : view.error ? `this view could not be drawn: ${view.error}`
    : geometry.svg ? "this graph could not be read" : "no graph for this view";
  ui.canvas.replaceChildren(h("div", { class: view.error ? "mlclab-hint mlclab-view-error" : "mlclab-hint", text: why }));
}

function draw(state) {
  const { model, ui } = state;
  drawViewButtons(state);
  const view = currentView(model);
  drawBanner(state, view);
  // A fold redraws the same program: its let text (thousands of lines) is filled in once.
  const letText = (view.texts || {}).let || "";
  // A scrubber's next pass: its let text once the graph is on screen.
  if (letText !== state.letText && model.get("scrub") && state.letText !== null) {
    fillLinesSoon(ui.letPane, letText, () => markNodeLines(state, model.get("selected_node"), "mlclab-line-selected"));
  } else if (letText !== state.letText) fillLines(ui.letPane, letText);
  state.letText = letText;
  state.svg = isViewModel(view) ? takeParsed(state, model.get("view"), view) : null;
  state.index = { elements: new Map(), copies: [], edges: [], namespaces: new Map() };
  ui.collapseAll.disabled = !model.get("live") || !isViewModel(view) || collapsible(view).length === 0 && !(model.get("folded") || []).length;
  if (!state.svg && isViewModel(view) && awaitingLayout(view)) {
    // No `dot` where the kernel ran: the browser lays this view out (layout.js), then draws it.
    layOutView(view, () => graphvizSource(model, ui.canvas), ui.canvas, () => { if (currentView(model) === view) draw(state); });
    return;
  }
  if (!state.svg) {
    drawEmpty(state, view);
    refreshMarks(state);
    return;
  }
  const svg = state.svg;
  svg.classList.add("mlclab-graph");
  // Graphviz sizes the drawing in pt; size it in CSS px from its viewBox instead, so the
  // scale arithmetic of zoom and fit works in one unit.
  const vb = svg.viewBox && svg.viewBox.baseVal;
  if (vb && vb.width) { svg.setAttribute("width", vb.width); svg.setAttribute("height", vb.height); }
  ui.canvas.replaceChildren(svg);
  state.index = indexDrawing(svg, view);
  state.minK = minScale(smallestFont(svg));
  for (const [id, els] of state.index.elements) for (const g of els) {
    g.addEventListener("mouseenter", () => { hover(state, id); announceHover(state, { node: id }); });
    g.addEventListener("mouseleave", () => hover(state, null));
  }
  bindNamespaces(state);
  ui.collapseAll.textContent = (model.get("folded") || []).length ? "expand groups" : "collapse groups";
  refreshMarks(state);
  // The same drawing placed before, again (its traits synced after it came as a message):
  // where it was. (A drawing laid out in the browser is drawn twice, placed once.)
  const same = view === state.placedView;
  requestAnimationFrame(() => {
    state.placedView = view;
    if (same) applyZoom(state);
    else if (!placeOpened(state) && !placeKept(state) && !frameKept(state)) {
      const hits = searchHits(view, model.get("search"));
      // A search that opened modules: the new drawing goes to its matches.
      if (hits.length) zoomTo(state, hits.flatMap((id) => (state.index.elements.get(id) || []).slice(0, 1)));
      else fitView(state);
    }
    ensureShown(state);
    scrubberPlaced(state, view);
    if (state.jump) finishJump(state);
    announceDrawn(model);
  });
}

// Tell the kernel a view is on screen: it lays out the next clicks' fold states meanwhile
// (notebook/fold_layouts.py). A page without a kernel has no `send`.
function announceDrawn(model) {
  if (model.get("live") && typeof model.send === "function") model.send({ event: "drawn", view: model.get("view") });
}

// ------------------------------------------------------------------- the viewer's parts
function buildLayout(el) {
  const ui = {
    viewButtons: h("div", { class: "mlclab-views", role: "tablist" }),
    search: h("input", { class: "mlclab-search", type: "search", placeholder: "search op, name, module…", "aria-label": "search operator, binding name or module path (Enter opens the modules that hold it)" }),
    matches: h("span", { class: "mlclab-matches" }),
    collapseAll: h("button", { class: "mlclab-collapse-all", type: "button", text: "collapse groups" }),
    zoomIn: h("button", { class: "mlclab-zoom-in", type: "button", title: "zoom in", text: "+" }),
    zoomOut: h("button", { class: "mlclab-zoom-out", type: "button", title: "zoom out", text: "−" }),
    fit: h("button", { class: "mlclab-fit", type: "button", title: "fit to view", text: "fit" }),
    save: h("button", { class: "mlclab-save", type: "button", title: "download this view as SVG", text: "svg" }),
    banner: h("div", { class: "mlclab-overview" }),
    clipNote: h("div", { class: "mlclab-clip-note" }, h("span", { text: "shown at the smallest readable size: drag to pan, or " }),
      h("button", { type: "button", class: "mlclab-fold-more", text: "fold more" })),
    canvas: h("div", { class: "mlclab-canvas", tabindex: "0", "aria-label": "graph: drag to pan, wheel to zoom, click a node, Escape to clear" }),
    details: h("div", { class: "mlclab-details" }),
    sourcePane: h("pre", { class: "mlclab-source", "aria-label": "DSL source" }),
    letPane: h("pre", { class: "mlclab-let", "aria-label": "let binding" }),
  };
  const toolbar = h("div", { class: "mlclab-toolbar" }, ui.viewButtons, ui.search, ui.matches,
    ui.collapseAll, ui.zoomOut, ui.zoomIn, ui.fit, ui.save);
  const side = h("div", { class: "mlclab-side" },
    h("div", { class: "mlclab-heading", text: "node" }), ui.details,
    h("div", { class: "mlclab-heading", text: "DSL source" }), ui.sourcePane,
    h("div", { class: "mlclab-heading", text: "let binding (A-normal form)" }), ui.letPane);
  el.classList.add("mlclab-viewer");
  const stage = h("div", { class: "mlclab-stage" }, ui.canvas, ui.clipNote);
  el.append(toolbar, ui.banner, h("div", { class: "mlclab-body" }, stage, side));
  ui.banner.hidden = true;
  ui.clipNote.hidden = true;
  return ui;
}

// One pointer handler does both: a press that moves pans the graph, one that does not is a
// click on whatever node it landed on (or clears the selection on the background).
function bindPointer(state) {
  const { model, ui } = state;
  const canvas = ui.canvas;
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, zx: state.zoom.x, zy: state.zoom.y, moved: false, target: e.target };
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) { drag.moved = true; canvas.setPointerCapture(e.pointerId); canvas.classList.add("mlclab-panning"); }
    state.zoom.x = drag.zx + dx; state.zoom.y = drag.zy + dy;
    state.userMoved = true;
    applyZoom(state);
  });
  const endDrag = (e) => {
    if (!drag) return;
    const { moved, target } = drag;
    drag = null;
    canvas.classList.remove("mlclab-panning");
    if (moved || e.type !== "pointerup") return;
    if (target.closest && target.closest(".mlclab-cluster-handle")) return;
    const g = target.closest ? target.closest("[data-node]") : null;
    const id = g ? g.dataset.node : "";
    // A folded namespace opens (the kernel draws it again); it is not a node to select.
    const c = canvas.getBoundingClientRect();
    if (id && askFold(state, { node: id }, { sx: e.clientX - c.left, sy: e.clientY - c.top })) return;
    // Only nodes the model describes can be selected (Python checks the id it receives).
    save(model, { selected_node: nodesOf(currentView(model))[id] ? id : "" });
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  // overflow:hidden still scrolls when the browser brings a clipped node into view (find in
  // page, focus, scrollIntoView): that scroll becomes a pan, so the zoom arithmetic holds.
  canvas.addEventListener("scroll", () => {
    if (!canvas.scrollLeft && !canvas.scrollTop) return;
    state.zoom.x -= canvas.scrollLeft; state.zoom.y -= canvas.scrollTop; state.userMoved = true; applyZoom(state);
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    state.zoom = zoomAt(state.zoom, Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    state.userMoved = true;
    applyZoom(state);
  }, { passive: false });
}

function bindToolbar(state) {
  const { model, ui, el } = state;
  const middle = () => [ui.canvas.clientWidth / 2, ui.canvas.clientHeight / 2];
  const zoomBy = (f) => { state.zoom = zoomAt(state.zoom, f, ...middle()); state.userMoved = true; applyZoom(state); };
  ui.zoomIn.addEventListener("click", () => zoomBy(1.25));
  ui.zoomOut.addEventListener("click", () => zoomBy(0.8));
  ui.fit.addEventListener("click", () => fitView(state, { fold: true }));
  // The drawing as Graphviz made it (no pan/zoom transform, no marks), saved locally.
  ui.save.addEventListener("click", () => download((currentView(model).geometry || {}).svg,
    `${model.get("view") || "graph"}.svg`, "image/svg+xml"));
  el.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && e.target !== ui.search && model.get("selected_node")) save(model, { selected_node: "" });
  });
  ui.search.addEventListener("input", () => save(model, { search: ui.search.value }));
  ui.search.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { ui.search.value = ""; save(model, { search: "" }); }
    if (e.key === "Enter") openToMatches(state);
  });
  // Rather than shrink labels past readable, fold: the groups first, then every module level.
  ui.clipNote.querySelector(".mlclab-fold-more").addEventListener("click", () => {
    const view = currentView(model), groups = collapsible(view);
    if (groups.length) save(model, { folded: [...(model.get("folded") || []), ...groups] });
    else save(model, { open_modules: [], unfolded: (model.get("unfolded") || []).filter((v) => v !== model.get("view")) });
  });
  ui.collapseAll.addEventListener("click", () => {
    const any = (model.get("folded") || []).length > 0;
    save(model, { folded: any ? [] : collapsible(currentView(model)) });
  });
}

// Enter in the search box opens the folded modules that hold what it matches; in a
// scrubber with no node matching, it goes to the first pass whose name matches.
function openToMatches(state) {
  const { model } = state;
  const view = currentView(model);
  const q0 = (model.get("search") || "").trim().toLowerCase();
  if (model.get("scrub") && q0 && !searchHits(view, q0).length) {
    const pass = Object.keys(model.get("views") || {}).find((name) => name.toLowerCase().includes(q0));
    if (pass) save(model, { view: pass, search: "" });
    return;
  }
  if (!model.get("live")) return;
  const paths = searchHits(view, model.get("search")).map((id) => (nodesOf(view)[id] || {}).folded)
    .filter((f) => f && f.kind === "module" && f.path).map((f) => f.path);
  const q = (model.get("search") || "").trim().toLowerCase();
  // The deepest module path inside that matches, so the hit itself shows.
  const inner = Object.values(namespacesOf(view)).filter((ns) => ns.kind === "module" && ns.path
    && ns.path.toLowerCase().includes(q)).map((ns) => ns.path);
  const wanted = inner.length ? inner : paths;
  if (wanted.length) save(model, { open_modules: [...new Set([...(model.get("open_modules") || []), ...wanted])] });
}

// Trait changes from the kernel -> what to redraw.
function bindModel(state) {
  const { model, ui } = state;
  const onSource = () => { fillLines(ui.sourcePane, model.get("source")); refreshMarks(state); };
  const onSearch = () => {
    if (ui.search.value !== model.get("search")) ui.search.value = model.get("search");
    const hits = refreshMarks(state);
    // Search zooms to its matches; clearing it fits the whole drawing again.
    if (hits.size) zoomTo(state, [...hits].flatMap((id) => (state.index.elements.get(id) || []).slice(0, 1)));
    else if (!(model.get("search") || "").trim()) fitView(state);
  };
  const redraw = () => { const v = currentView(model); draw(state); if (isViewModel(v)) state.lastView = v; };
  const switchView = () => { keepSelected(state); state.frame = frameBefore(state); redraw(); };
  const marks = () => refreshMarks(state);
  // A comparison's other pane: its node put in the middle at the current scale.
  const centre = () => { const els = state.index.elements.get(model.get("centre")), box = els && boxOf(els[0]);
    if (box) { state.zoom = keepInPlace(box, ui.canvas.clientWidth / 2, ui.canvas.clientHeight / 2, state.zoom.k); state.userMoved = true; applyZoom(state); } };
  const banner = () => drawBanner(state, currentView(model));
  const fromKernel = () => { dropSentViews(model); redraw(); };
  const handlers = {
    views: fromKernel, view: switchView, unfolded: banner, open_modules: banner, folded: banner,
    selected_node: marks, highlight: marks, annotations: marks, search: onSearch, source: onSource, centre,
  };
  // One view drawn by the kernel (viewer.py `_put_view`).
  const oneView = (msg) => { if (receiveView(model, msg)) redraw(); };
  for (const [name, fn] of Object.entries(handlers)) model.on(`change:${name}`, fn);
  model.on("msg:custom", oneView);
  return () => { for (const [name, fn] of Object.entries(handlers)) model.off(`change:${name}`, fn); model.off("msg:custom", oneView); };
}

export function render({ model, el }) {
  const state = {
    model, el, ui: buildLayout(el),
    svg: null,                                     // the <svg> of the current view
    index: { elements: new Map(), copies: [], edges: [], namespaces: new Map() },
    zoom: { x: 0, y: 0, k: 1 },
    minK: 0,                                       // fit's floor: labels stay readable
    userMoved: false,                              // panned/zoomed since the last fit
    jump: null,                                    // a node to select once it is drawn
    opened: null,                                  // a module opened by a click, kept in view
    placedView: null,                              // the view model placed last
    keep: null,                                    // a node to keep in place across views
    lastView: null,                                // the view model drawn last
    letText: null,                                 // the let text the pane holds
    parsed: null,                                  // drawings parsed ahead (scrubber.js)
    painted: {},                                   // the drawing and annotations painted
    viewOf: (name) => viewNamed(model, name),
  };
  bindPointer(state);
  bindToolbar(state);
  const unbind = bindModel(state);

  // Refit when the canvas changes size (a window resize, a viewer first shown in a hidden
  // tab), unless the student has moved the drawing since.
  const resize = new ResizeObserver(() => { if (!state.userMoved) fitView(state); });
  resize.observe(state.ui.canvas);
  const width = new ResizeObserver(() => {
    const w = el.clientWidth;
    if (!w) return;
    el.classList.toggle("mlclab-narrow", w < NARROW_PX);
    el.classList.toggle("mlclab-wide", w >= WIDE_PX);
  });
  width.observe(el);

  hideTwin(model, el);
  fillLines(state.ui.sourcePane, model.get("source"));
  state.ui.search.value = model.get("search") || "";
  draw(state);
  if (isViewModel(currentView(model))) state.lastView = currentView(model);

  return () => { resize.disconnect(); width.disconnect(); unbind(); };
}

export default { render };
