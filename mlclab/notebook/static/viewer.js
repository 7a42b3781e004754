// mlclab graph viewer: an anywidget front end (plain ES module, no build step, no network).
//
// Python sends, per view, the SVG that Graphviz laid out plus a JSON record per node (the
// graph model's Node.to_dict() with its let/TVMScript lines); this module only adds
// interaction on top of that SVG: pan/zoom, click to select (synced back to the kernel as
// `selected_node`), hover to light up the node's DSL line and let binding, view switching,
// folding clusters (fused groups) by the group Python gives each node, search by operator,
// binding name or module path, per-node validation marks, "draw all" for a big graph shown as
// an overview, and opening/folding an imported model's modules (Python lays each choice out
// again: the `open_modules` trait, read by the kernel's loader). Every
// string from Python reaches the page through textContent or a sanitized SVG document, never
// through innerHTML.
//
// The parts, top to bottom: DOM helpers, the SVG index (node ids <-> SVG elements), text
// panes, zoom, the details panel, marks, cluster folding, drawing a view, event wiring, and
// `render`, which builds one viewer's state and connects the parts.

const SVG_NS = "http://www.w3.org/2000/svg";
const COPY_ID = /^use\d+:(.*)$/; // a copy of a widely shared node, drawn at one of its readers

// ------------------------------------------------------------------- DOM helpers
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v);
  }
  for (const c of children) if (c) el.append(c);
  return el;
}

function svgEl(tag, attrs = {}) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

// Graphviz output is trusted to be well formed, but the trait could be set to anything from
// Python: drop active content before it enters the DOM (defence in depth; Python sanitizes too).
function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  for (const bad of [...svg.querySelectorAll("script, foreignObject, iframe, object, embed")]) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith("on")) el.removeAttribute(attr.name);
      else if ((name === "href" || name.endsWith(":href")) && !value.startsWith("#")) el.removeAttribute(attr.name);
    }
  }
  return document.importNode(svg, true);
}

function titleOf(g) {
  const t = g.querySelector(":scope > title");
  return t ? t.textContent : "";
}

// The bounding box of an element in the SVG's own user space (what the viewBox measures).
function boxOf(el) {
  try { return el.getBBox(); } catch (e) { return null; }
}

// ------------------------------------------------------------------- the model's data
const currentView = (model) => (model.get("views") || {})[model.get("view")] || {};
const nodesOf = (model) => currentView(model).nodes || {};
const labelOf = (info, id) => info.op || info.name || info.label || id;
// An imported model's view that folds modules: {open: [paths], folded: {node id: [paths]}}.
const modulesOf = (model) => currentView(model).modules || null;
const drawnWhole = (model) => (model.get("unfolded") || []).includes(model.get("view"));
const foldedModule = (info) => info && info.kind === "collapsed" && (info.attrs || {}).kind === "module";

// What search matches: operator, binding name, module path, and what a folded module holds
// (mlclab.notebook.viewer.search_text is the same on the Python side).
function searchText(info, inside) {
  const source = info.source || {}, attrs = info.attrs || {};
  return [info.op || "", info.name || info.label || "", source.module || "", attrs.module || "", ...(inside || [])].join(" ").toLowerCase();
}

function save(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

// ------------------------------------------------------------------- SVG index
// Which SVG elements draw which node: the plotter gives each node's <g> the node id (plain
// Graphviz drawings fall back to the node's name), and a copy of a shared node the id
// "use<k>:<node id>". Edges are titled "tail->head" by Graphviz node names.
function indexDrawing(svg, known) {
  const index = { elements: new Map(), nameToId: new Map(), copies: [], edges: [] };
  for (const g of svg.querySelectorAll("g.node")) {
    const copy = COPY_ID.exec(g.id);
    const id = known[g.id] ? g.id : copy && known[copy[1]] ? copy[1] : titleOf(g);
    if (!index.elements.has(id)) index.elements.set(id, []);
    index.elements.get(id).push(g);
    index.nameToId.set(titleOf(g), id);
    g.dataset.node = id;
    if (copy && id === copy[1]) index.copies.push({ g, name: titleOf(g) });
  }
  for (const g of svg.querySelectorAll("g.edge")) {
    const [tail, head] = titleOf(g).split(/->|--/).map((s) => (s || "").split(":")[0]);
    index.edges.push({ g, tail, head });
  }
  return index;
}

// ------------------------------------------------------------------- text panes
function fillLines(pre, text) {
  pre.replaceChildren(...(text || "").split("\n").map((line, i) =>
    h("div", { class: "mlclab-line", "data-line": String(i + 1) },
      h("span", { class: "mlclab-lineno", text: String(i + 1).padStart(3) + " " }),
      h("span", { text: line || " " }))));
}

function markLine(pre, lineno, cls) {
  for (const div of pre.children) div.classList.toggle(cls, Number(div.dataset.line) === lineno);
  const hit = pre.querySelector(`.${cls}`);
  if (!hit) return;
  // Scroll the pane, never the notebook around it (scrollIntoView would move both).
  const r = hit.getBoundingClientRect(), p = pre.getBoundingClientRect();
  if (r.top < p.top) pre.scrollTop -= p.top - r.top;
  else if (r.bottom > p.bottom) pre.scrollTop += r.bottom - p.bottom;
}

function markNodeLines(state, info, cls) {
  markLine(state.ui.sourcePane, info ? info.line : null, cls);
  markLine(state.ui.letPane, info ? info.let_line : null, cls);
}

// ------------------------------------------------------------------- zoom
function applyZoom(state) {
  const { svg, zoom } = state;
  if (svg) svg.style.transform = `translate(${zoom.x}px, ${zoom.y}px) scale(${zoom.k})`;
}

function fitView(state) {
  const { svg, ui } = state;
  if (!svg) return;
  const w = parseFloat(svg.getAttribute("width")) || svg.viewBox.baseVal.width || 1;
  const hgt = parseFloat(svg.getAttribute("height")) || svg.viewBox.baseVal.height || 1;
  const cw = ui.canvas.clientWidth || 600, ch = ui.canvas.clientHeight || 400;
  const k = Math.min(1, cw / w, ch / hgt);
  state.zoom = { k, x: (cw - w * k) / 2, y: Math.max(0, (ch - hgt * k) / 2) };
  applyZoom(state);
}

function zoomAt(state, factor, px, py) {
  const zoom = state.zoom;
  const k = Math.min(8, Math.max(0.1, zoom.k * factor));
  zoom.x = px - (px - zoom.x) * (k / zoom.k);
  zoom.y = py - (py - zoom.y) * (k / zoom.k);
  zoom.k = k;
  applyZoom(state);
}

// ------------------------------------------------------------------- details panel
function row(key, value) {
  if (value === undefined || value === null || value === "") return null;
  return h("tr", {}, h("th", { text: key }), h("td", { text: String(value) }));
}

function showDetails(state, id) {
  const { model, ui } = state;
  const info = nodesOf(model)[id];
  if (!id || !info) {
    ui.details.replaceChildren(h("div", { class: "mlclab-hint", text: "click a node to see its details" }));
    return;
  }
  const source = info.source || {};
  const attrs = Object.entries(info.attrs || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  const note = (model.get("annotations") || {})[id];
  const table = h("table", {},
    row("node", id),
    row("operator", info.kind === "param" ? "" : info.op),
    row("kind", info.kind),
    row("attributes", attrs),
    row("type", info.type),
    row("binding", info.name),
    row("module", source.module || (foldedModule(info) ? info.attrs.module : "")),
    row("PyTorch op", source.origin),
    row("holds", foldedModule(info) ? `${info.attrs.class || "module"}: ${info.attrs.ops} operators, ${info.attrs.nodes} nodes (click to open)` : ""),
    row("DSL variable", source.dsl_name),
    row("DSL line", info.line ? `${info.line}: ${source.source_line || ""}` : ""),
    row("TVMScript", info.script || ""),
    row("check", note ? note.text : ""),
    row("overlay", info.tooltip || ""));
  ui.details.replaceChildren(h("div", { class: "mlclab-details-title", text: labelOf(info, id) }), table);
}

// ------------------------------------------------------------------- marks on nodes
function refreshMarks(state) {
  const { model, ui } = state;
  const nodes = nodesOf(model);
  const selected = model.get("selected_node");
  const highlight = new Set(model.get("highlight") || []);
  const notes = model.get("annotations") || {};
  const query = (model.get("search") || "").trim().toLowerCase();
  const folded = (modulesOf(model) || {}).folded || {};
  let count = 0;
  for (const [id, gs] of state.index.elements) {
    const info = nodes[id] || {};
    const hit = query !== "" && searchText(info, folded[id]).includes(query);
    if (hit) count += 1;
    const status = (notes[id] || {}).status;
    for (const g of gs) {
      g.classList.toggle("mlclab-selected", id === selected);
      g.classList.toggle("mlclab-highlight", highlight.has(id));
      g.classList.toggle("mlclab-match", hit);
      g.classList.toggle("mlclab-dim", query !== "" && !hit);
      g.classList.toggle("mlclab-ok", status === "ok");
      g.classList.toggle("mlclab-diverged", status === "diverged");
    }
  }
  ui.matches.textContent = query ? `${count} match${count === 1 ? "" : "es"}` : "";
  markNodeLines(state, nodes[selected], "mlclab-line-selected");
  showDetails(state, selected);
}

function hover(state, id) {
  for (const [nid, gs] of state.index.elements) for (const g of gs) g.classList.toggle("mlclab-hover", nid === id);
  markNodeLines(state, id ? nodesOf(state.model)[id] : null, "mlclab-line-hover");
}

// ------------------------------------------------------------------- folding clusters
// A cluster's members are the nodes whose group (sent by Python) is the cluster or one of the
// clusters nested in it.
function clusterMembers(name, nodes, known) {
  const inside = (group) => {
    for (let g = group, seen = 0; g && seen < 64; g = (known[g] || {}).parent, seen++) if (g === name) return true;
    return false;
  };
  return new Set(Object.keys(nodes).filter((id) => inside(nodes[id].group)));
}

function buildClusters(state) {
  const view = currentView(state.model);
  const known = view.clusters || {};
  state.clusters = [...state.svg.querySelectorAll("g.cluster")].map((g) => {
    // mlclab's plotter ids clusters "cluster:<model id>"; plain Graphviz names them by title.
    const name = g.id.startsWith("cluster:") ? g.id.slice("cluster:".length) : titleOf(g).replace(/^cluster_?/, "");
    const info = known[name] || {};
    const c = { name, kind: info.kind || "", label: info.label || name, g, placeholder: null,
      path: info.path, members: clusterMembers(name, view.nodes || {}, known) };
    // Clicking a cluster's label folds it: a module of a module-folding view is laid out
    // again by Python, other clusters are covered here. (A cluster with a tooltip has its
    // label inside an <a>.)
    const handle = g.querySelector(":scope > text, :scope > g > a > text") || g;
    handle.classList.add("mlclab-cluster-handle");
    handle.addEventListener("click", () => {
      const modules = modulesOf(state.model);
      if (c.kind === "module" && modules && !drawnWhole(state.model) && (modules.open || []).includes(c.path)) foldModule(state.model, c.path);
      else toggleCluster(state, c.name);
    });
    return c;
  });
  state.ui.collapseAll.disabled = foldable(state).length === 0;
}

// "collapse groups" folds fused groups and other inner clusters, not whole functions, nor the
// modules of a view whose modules the kernel folds (clicks and "fold all" do that).
const foldable = (state) => state.clusters.filter((c) => c.kind !== "function"
  && !(c.kind === "module" && modulesOf(state.model) && !drawnWhole(state.model)));

// Modules: the open paths go to the kernel, which draws the view again.
function openModules(model, paths) {
  const open = (modulesOf(model) || {}).open || [];
  const wanted = [];
  for (const path of paths) {
    const parts = path.split(".");
    for (let k = 1; k <= parts.length; k++) wanted.push(parts.slice(0, k).join("."));
  }
  save(model, "open_modules", [...new Set([...open, ...wanted])]);
}

function foldModule(model, path) {
  const open = (modulesOf(model) || {}).open || [];
  save(model, "open_modules", open.filter((p) => p !== path && !p.startsWith(path + ".")));
}

// Enter in the search box opens the modules that hold what it matches.
function openToMatches(model) {
  const query = (model.get("search") || "").trim().toLowerCase();
  const folded = (modulesOf(model) || {}).folded || {};
  if (!query || drawnWhole(model)) return;
  const hits = [];
  for (const paths of Object.values(folded)) for (const p of paths) if (p.toLowerCase().includes(query)) hits.push(p);
  // Each hit opens with its ancestors, so its nodes show (and match).
  if (hits.length) openModules(model, hits);
}

function toggleCluster(state, name) {
  const collapsed = new Set(state.model.get("collapsed") || []);
  collapsed.has(name) ? collapsed.delete(name) : collapsed.add(name);
  save(state.model, "collapsed", [...collapsed]);
}

// A folded cluster is drawn as one box over its area, with the group's name and size; the
// edges into and out of the group keep pointing at it because they end inside that area.
// Made when first needed, not when drawn: a viewer inside a hidden tab has no layout yet
// (getBBox answers zeros there).
function placeholderFor(state, c) {
  if (c.placeholder) return c.placeholder;
  const box = boxOf(c.g);
  if (!box || !box.width) return null;
  const ph = svgEl("g", { class: "mlclab-placeholder" });
  ph.dataset.cluster = c.name;
  const rect = svgEl("rect", { x: box.x, y: box.y, width: box.width, height: box.height, rx: 6 });
  const label = svgEl("text", { "text-anchor": "middle" });
  const n = c.members.size;
  // Two lines (name, size): a group's name is often wider than its box.
  [c.label, `(${n} node${n === 1 ? "" : "s"})`].forEach((line, i) => {
    const span = svgEl("tspan", { x: box.x + box.width / 2, y: box.y + box.height / 2 + (i === 0 ? -3 : 12) });
    span.textContent = line;
    label.append(span);
  });
  ph.append(rect, label);
  ph.style.display = "none";
  ph.addEventListener("click", () => toggleCluster(state, c.name));
  (c.g.parentNode || state.svg).append(ph);
  c.placeholder = ph;
  return ph;
}

function refreshCollapse(state) {
  const collapsed = new Set(state.model.get("collapsed") || []);
  const hidden = new Set();
  for (const c of state.clusters) {
    const on = collapsed.has(c.name);
    const ph = on ? placeholderFor(state, c) : c.placeholder;
    c.g.classList.toggle("mlclab-collapsed", on);
    if (ph) ph.style.display = on ? "" : "none";
    if (on) for (const id of c.members) hidden.add(id);
  }
  const { index } = state;
  const hiddenNames = new Set();
  for (const [id, gs] of index.elements) for (const g of gs) {
    const isCopy = COPY_ID.test(g.id) && g.id !== id;
    if (!isCopy) {
      g.style.display = hidden.has(id) ? "none" : "";
      if (hidden.has(id)) hiddenNames.add(titleOf(g));
    }
  }
  // A copy of a shared node sits beside its one reader: it folds away with that reader.
  const readerOf = new Map(index.edges.map((e) => [e.tail, e.head]));
  for (const copy of index.copies) {
    const gone = hidden.has(index.nameToId.get(readerOf.get(copy.name)));
    copy.g.style.display = gone ? "none" : "";
    if (gone) hiddenNames.add(copy.name);
  }
  for (const e of index.edges) e.g.style.display = hiddenNames.has(e.tail) && hiddenNames.has(e.head) ? "none" : "";
  state.ui.collapseAll.textContent = collapsed.size ? "expand groups" : "collapse groups";
}

// ------------------------------------------------------------------- drawing a view
function drawViewButtons(state) {
  const { model, ui } = state;
  const views = Object.keys(model.get("views") || {});
  ui.viewButtons.replaceChildren(...views.map((name) => {
    const b = h("button", { type: "button", class: "mlclab-view", role: "tab", "data-view": name, text: name });
    b.classList.toggle("mlclab-active", name === model.get("view"));
    b.setAttribute("aria-selected", String(name === model.get("view")));
    b.addEventListener("click", () => save(model, "view", name));
    return b;
  }));
}

// A big graph comes as an overview first; the banner says so and draws the whole graph.
function drawBanner(state, view) {
  const { model, ui } = state;
  const shown = view.overview;
  if (view.modules) { drawModuleBanner(state, view); return; }
  if (!shown) { ui.banner.replaceChildren(); ui.banner.hidden = true; return; }
  const name = model.get("view");
  const asked = (model.get("unfolded") || []).includes(name);
  const button = h("button", { type: "button", class: "mlclab-unfold", text: asked ? "drawing…" : `draw all ${shown.total} nodes` });
  button.disabled = asked;
  button.addEventListener("click", () => save(model, "unfolded", [...(model.get("unfolded") || []), name]));
  ui.banner.replaceChildren(h("span", { text: `overview: ${shown.shown} of ${shown.total} nodes (groups folded, the start cut) ` }), button);
  ui.banner.hidden = false;
}

// An imported model: how much is folded, "fold all" (back to the first look) and "draw all".
function drawModuleBanner(state, view) {
  const { model, ui } = state;
  const name = model.get("view");
  const whole = drawnWhole(model);
  const shown = view.overview;
  const folded = Object.keys(view.modules.folded || {}).length;
  const text = whole || !shown ? "modules: every module drawn open; click a module's name to cover it "
    : `modules: ${shown.shown} of ${shown.total} nodes, ${folded} module${folded === 1 ? "" : "s"} folded; click one to open it, an open module's name to fold it `;
  const foldAll = h("button", { type: "button", class: "mlclab-fold-modules", text: "fold all" });
  foldAll.disabled = !whole && (view.modules.open || []).length === 0;
  foldAll.addEventListener("click", () => {
    model.set("unfolded", (model.get("unfolded") || []).filter((v) => v !== name));
    model.set("open_modules", []);
    model.save_changes();
  });
  const parts = [h("span", { text }), foldAll];
  if (shown && !whole) {
    const all = h("button", { type: "button", class: "mlclab-unfold", text: `draw all ${shown.total} nodes` });
    all.addEventListener("click", () => save(model, "unfolded", [...(model.get("unfolded") || []), name]));
    parts.push(all);
  }
  ui.banner.replaceChildren(...parts);
  ui.banner.hidden = false;
}

function drawEmpty(state, view) {
  const { ui } = state;
  if (view.text) {
    // Graphviz ran out of time: the graph as text, with the reason.
    ui.canvas.replaceChildren(h("div", { class: "mlclab-hint", text: view.note || "" }),
      h("pre", { class: "mlclab-text-fallback", text: view.text }));
    return;
  }
  // A pending view is being drawn by the kernel; "views" changes again when it is ready.
  const why = view.pending ? "drawing…" : view.error ? `this view could not be drawn: ${view.error}`
    : view.svg ? "this graph could not be read" : "no graph for this view";
  ui.canvas.replaceChildren(h("div", { class: view.error ? "mlclab-hint mlclab-view-error" : "mlclab-hint", text: why }));
}

function draw(state) {
  const { model, ui } = state;
  drawViewButtons(state);
  const view = currentView(model);
  drawBanner(state, view);
  fillLines(ui.letPane, view.let_text !== undefined ? view.let_text : model.get("let_text"));
  state.svg = parseSvg(view.svg);
  state.index = { elements: new Map(), nameToId: new Map(), copies: [], edges: [] };
  state.clusters = [];
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
  if (vb && vb.width) {
    svg.setAttribute("width", vb.width);
    svg.setAttribute("height", vb.height);
  }
  ui.canvas.replaceChildren(svg);
  state.index = indexDrawing(svg, view.nodes || {});
  for (const [id, gs] of state.index.elements) for (const g of gs) {
    g.addEventListener("mouseenter", () => hover(state, id));
    g.addEventListener("mouseleave", () => hover(state, null));
  }
  buildClusters(state);
  refreshCollapse(state);
  refreshMarks(state);
  requestAnimationFrame(() => fitView(state));
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
  el.append(toolbar, ui.banner, h("div", { class: "mlclab-body" }, ui.canvas, side));
  ui.banner.hidden = true;
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
    applyZoom(state);
  });
  const endDrag = (e) => {
    if (!drag) return;
    const { moved, target } = drag;
    drag = null;
    canvas.classList.remove("mlclab-panning");
    if (moved || e.type !== "pointerup") return;
    if (target.closest && target.closest(".mlclab-cluster-handle, .mlclab-placeholder")) return;
    const g = target.closest ? target.closest("g.node") : null;
    const info = g ? nodesOf(model)[g.dataset.node] : null;
    // A folded module opens (the kernel draws it again); it is not a node to select.
    if (foldedModule(info) && modulesOf(model)) { openModules(model, [info.attrs.module]); return; }
    // Only nodes the model describes can be selected (Python checks the id it receives).
    save(model, "selected_node", info ? g.dataset.node : "");
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoomAt(state, Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
}

function downloadSvg(model) {
  // The drawing as Graphviz made it (no pan/zoom transform, no marks), saved locally.
  const view = currentView(model);
  if (!view.svg) return;
  const url = URL.createObjectURL(new Blob([view.svg], { type: "image/svg+xml" }));
  const a = h("a", { href: url, download: `${model.get("view") || "graph"}.svg` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function bindToolbar(state) {
  const { model, ui, el } = state;
  const middle = () => [ui.canvas.clientWidth / 2, ui.canvas.clientHeight / 2];
  ui.zoomIn.addEventListener("click", () => zoomAt(state, 1.25, ...middle()));
  ui.zoomOut.addEventListener("click", () => zoomAt(state, 0.8, ...middle()));
  ui.fit.addEventListener("click", () => fitView(state));
  ui.save.addEventListener("click", () => downloadSvg(model));
  el.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && e.target !== ui.search && model.get("selected_node")) save(model, "selected_node", "");
  });
  ui.search.addEventListener("input", () => save(model, "search", ui.search.value));
  ui.search.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { ui.search.value = ""; save(model, "search", ""); }
    if (e.key === "Enter") openToMatches(model);
  });
  ui.collapseAll.addEventListener("click", () => {
    const any = (model.get("collapsed") || []).length > 0;
    save(model, "collapsed", any ? [] : foldable(state).map((c) => c.name));
  });
}

// Trait changes from the kernel -> what to redraw.
function bindModel(state) {
  const { model, ui } = state;
  const onSource = () => { fillLines(ui.sourcePane, model.get("source")); refreshMarks(state); };
  const onSearch = () => {
    if (ui.search.value !== model.get("search")) ui.search.value = model.get("search");
    refreshMarks(state);
  };
  const redraw = () => draw(state);
  const marks = () => refreshMarks(state);
  const handlers = {
    views: redraw, view: redraw, let_text: redraw, unfolded: () => drawBanner(state, currentView(model)),
    open_modules: () => drawBanner(state, currentView(model)),
    selected_node: marks, highlight: marks, annotations: marks, search: onSearch,
    collapsed: () => refreshCollapse(state), source: onSource,
  };
  for (const [name, fn] of Object.entries(handlers)) model.on(`change:${name}`, fn);
  return () => { for (const [name, fn] of Object.entries(handlers)) model.off(`change:${name}`, fn); };
}

function render({ model, el }) {
  const state = {
    model, el, ui: buildLayout(el),
    svg: null,                                     // the <svg> of the current view
    index: { elements: new Map(), nameToId: new Map(), copies: [], edges: [] },
    clusters: [],                                  // [{name, kind, label, g, members, placeholder}]
    zoom: { x: 0, y: 0, k: 1 },
  };
  bindPointer(state);
  bindToolbar(state);
  const unbind = bindModel(state);

  // The first time the canvas gets a size (a viewer drawn inside a hidden tab has none), fit.
  let sized = false;
  const resize = new ResizeObserver(() => {
    if (!sized && state.ui.canvas.clientWidth > 0) { sized = true; fitView(state); }
  });
  resize.observe(state.ui.canvas);

  fillLines(state.ui.sourcePane, model.get("source"));
  state.ui.search.value = model.get("search") || "";
  draw(state);

  return () => { resize.disconnect(); unbind(); };
}

export default { render };
