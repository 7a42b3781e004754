// mlclab graph viewer: an anywidget front end (plain ES module, no build step, no network).
//
// Python sends, per view, the SVG that Graphviz laid out plus a JSON record per node; this
// module only adds interaction on top of that SVG: pan/zoom, click to select (synced back to
// the kernel as `selected_node`), hover to light up the node's DSL line and let binding,
// view switching, collapsing clusters (fused groups), search by operator, and per-node
// validation marks. Every string from Python reaches the page through textContent or a
// sanitized SVG document, never through innerHTML.

const SVG_NS = "http://www.w3.org/2000/svg";

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

function contains(outer, inner) {
  return outer && inner && inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 &&
    inner.x + inner.width <= outer.x + outer.width + 0.5 &&
    inner.y + inner.height <= outer.y + outer.height + 0.5;
}

function render({ model, el }) {
  el.classList.add("mlclab-viewer");

  // ----------------------------------------------------------------- layout
  const viewButtons = h("div", { class: "mlclab-views", role: "tablist" });
  const search = h("input", { class: "mlclab-search", type: "search", placeholder: "search operator…", "aria-label": "search operator" });
  const matches = h("span", { class: "mlclab-matches" });
  const collapseAll = h("button", { class: "mlclab-collapse-all", type: "button", text: "collapse groups" });
  const zoomIn = h("button", { class: "mlclab-zoom-in", type: "button", title: "zoom in", text: "+" });
  const zoomOut = h("button", { class: "mlclab-zoom-out", type: "button", title: "zoom out", text: "−" });
  const fit = h("button", { class: "mlclab-fit", type: "button", title: "fit to view", text: "fit" });
  const save = h("button", { class: "mlclab-save", type: "button", title: "download this view as SVG", text: "svg" });
  const toolbar = h("div", { class: "mlclab-toolbar" }, viewButtons, search, matches, collapseAll, zoomOut, zoomIn, fit, save);

  const canvas = h("div", { class: "mlclab-canvas", tabindex: "0", "aria-label": "graph: drag to pan, wheel to zoom, click a node, Escape to clear" });
  const details = h("div", { class: "mlclab-details" });
  const sourcePane = h("pre", { class: "mlclab-source", "aria-label": "DSL source" });
  const letPane = h("pre", { class: "mlclab-let", "aria-label": "let binding" });
  const side = h("div", { class: "mlclab-side" },
    h("div", { class: "mlclab-heading", text: "node" }), details,
    h("div", { class: "mlclab-heading", text: "DSL source" }), sourcePane,
    h("div", { class: "mlclab-heading", text: "let binding (A-normal form)" }), letPane);
  el.append(toolbar, h("div", { class: "mlclab-body" }, canvas, side));

  // ----------------------------------------------------------------- state
  let svg = null;               // the <svg> of the current view
  let nodeEls = new Map();      // node id -> <g class="node">
  let nameToId = new Map();     // Graphviz node name (its <title>) -> node id
  let clusters = [];            // [{name, g, box, members:Set(id), placeholder}]
  let zoom = { x: 0, y: 0, k: 1 };

  const nodes = () => ((model.get("views") || {})[model.get("view")] || {}).nodes || {};
  const lineDivs = (pre) => [...pre.children];

  function fillLines(pre, text) {
    pre.replaceChildren(...(text || "").split("\n").map((line, i) =>
      h("div", { class: "mlclab-line", "data-line": String(i + 1) },
        h("span", { class: "mlclab-lineno", text: String(i + 1).padStart(3) + " " }),
        h("span", { text: line || " " }))));
  }

  function markLine(pre, lineno, cls) {
    for (const div of lineDivs(pre)) div.classList.toggle(cls, Number(div.dataset.line) === lineno);
    const hit = pre.querySelector(`.${cls}`);
    if (!hit) return;
    // Scroll the pane, never the notebook around it (scrollIntoView would move both).
    const r = hit.getBoundingClientRect(), p = pre.getBoundingClientRect();
    if (r.top < p.top) pre.scrollTop -= p.top - r.top;
    else if (r.bottom > p.bottom) pre.scrollTop += r.bottom - p.bottom;
  }

  function applyZoom() {
    if (svg) svg.style.transform = `translate(${zoom.x}px, ${zoom.y}px) scale(${zoom.k})`;
  }

  function fitView() {
    if (!svg) return;
    const w = parseFloat(svg.getAttribute("width")) || svg.viewBox.baseVal.width || 1;
    const hgt = parseFloat(svg.getAttribute("height")) || svg.viewBox.baseVal.height || 1;
    const cw = canvas.clientWidth || 600, ch = canvas.clientHeight || 400;
    const k = Math.min(1, cw / w, ch / hgt);
    zoom = { k, x: (cw - w * k) / 2, y: Math.max(0, (ch - hgt * k) / 2) };
    applyZoom();
  }

  function zoomAt(factor, px, py) {
    const k = Math.min(8, Math.max(0.1, zoom.k * factor));
    zoom.x = px - (px - zoom.x) * (k / zoom.k);
    zoom.y = py - (py - zoom.y) * (k / zoom.k);
    zoom.k = k;
    applyZoom();
  }

  // ----------------------------------------------------------------- details panel
  function row(key, value) {
    if (value === undefined || value === null || value === "") return null;
    return h("tr", {}, h("th", { text: key }), h("td", { text: String(value) }));
  }

  function showDetails(id) {
    const info = nodes()[id];
    if (!id || !info) {
      details.replaceChildren(h("div", { class: "mlclab-hint", text: "click a node to see its details" }));
      return;
    }
    const attrs = Object.entries(info.attrs || {}).map(([k, v]) => `${k}=${v}`).join(", ");
    const note = (model.get("annotations") || {})[id];
    const table = h("table", {},
      row("node", id),
      row("operator", info.op),
      row("kind", info.kind),
      row("attributes", attrs),
      row("type", info.type || [info.shape, info.dtype].filter(Boolean).join(" ")),
      row("binding", info.binding),
      row("DSL variable", info.dsl_name),
      row("DSL line", info.line ? `${info.line}: ${info.source_line || ""}` : ""),
      row("TVMScript", info.script || ""),
      row("check", note ? note.text : ""));
    details.replaceChildren(h("div", { class: "mlclab-details-title", text: info.label || id }), table);
  }

  // ----------------------------------------------------------------- marks on nodes
  function refreshMarks() {
    const selected = model.get("selected_node");
    const highlight = new Set(model.get("highlight") || []);
    const notes = model.get("annotations") || {};
    const query = (model.get("search") || "").trim().toLowerCase();
    let count = 0;
    for (const [id, g] of nodeEls) {
      const info = nodes()[id] || {};
      const hay = `${info.op || ""} ${info.label || ""}`.toLowerCase();
      const hit = query !== "" && hay.includes(query);
      if (hit) count += 1;
      g.classList.toggle("mlclab-selected", id === selected);
      g.classList.toggle("mlclab-highlight", highlight.has(id));
      g.classList.toggle("mlclab-match", hit);
      g.classList.toggle("mlclab-dim", query !== "" && !hit);
      const status = (notes[id] || {}).status;
      g.classList.toggle("mlclab-ok", status === "ok");
      g.classList.toggle("mlclab-diverged", status === "diverged");
    }
    matches.textContent = query ? `${count} match${count === 1 ? "" : "es"}` : "";
    const info = nodes()[selected];
    markLine(sourcePane, info ? info.line : null, "mlclab-line-selected");
    markLine(letPane, info ? info.let_line : null, "mlclab-line-selected");
    showDetails(selected);
  }

  function hover(id) {
    const info = id ? nodes()[id] : null;
    for (const [nid, g] of nodeEls) g.classList.toggle("mlclab-hover", nid === id);
    markLine(sourcePane, info ? info.line : null, "mlclab-line-hover");
    markLine(letPane, info ? info.let_line : null, "mlclab-line-hover");
  }

  // ----------------------------------------------------------------- collapsing clusters
  function edgeEnds(g) {
    // Graphviz titles edges "tail->head" (or "tail--head"), with optional ":port".
    const [tail, head] = titleOf(g).split(/->|--/).map((s) => (s || "").split(":")[0]);
    return [nameToId.get(tail), nameToId.get(head)];
  }

  function refreshCollapse() {
    const collapsed = new Set(model.get("collapsed") || []);
    const hidden = new Set();
    for (const c of clusters) {
      const on = collapsed.has(c.name);
      if (on) measure(c);
      c.g.classList.toggle("mlclab-collapsed", on);
      if (c.placeholder) c.placeholder.style.display = on ? "" : "none";
      if (on) for (const id of c.members) hidden.add(id);
    }
    for (const [id, g] of nodeEls) g.style.display = hidden.has(id) ? "none" : "";
    if (!svg) return;
    for (const g of svg.querySelectorAll("g.edge")) {
      const [a, b] = edgeEnds(g);
      g.style.display = hidden.has(a) && hidden.has(b) ? "none" : "";
    }
    collapseAll.textContent = collapsed.size ? "expand groups" : "collapse groups";
  }

  function toggleCluster(name) {
    const collapsed = new Set(model.get("collapsed") || []);
    collapsed.has(name) ? collapsed.delete(name) : collapsed.add(name);
    model.set("collapsed", [...collapsed]);
    model.save_changes();
  }

  // Geometry is measured when first needed, not when drawn: a viewer inside a hidden tab has
  // no layout yet (getBBox answers zeros there).
  function measure(c) {
    if (c.placeholder) return;
    c.box = boxOf(c.g);
    if (!c.box || !c.box.width) return;
    const box = c.box;
    c.members = new Set([...nodeEls].filter(([, g]) => contains(box, boxOf(g))).map(([id]) => id));
    // A collapsed cluster is drawn as one box with the group's name and size; the edges into
    // and out of the group keep pointing at it because they end inside its area.
    const ph = document.createElementNS(SVG_NS, "g");
    ph.setAttribute("class", "mlclab-placeholder");
    ph.dataset.cluster = c.name;
    const rect = document.createElementNS(SVG_NS, "rect");
    for (const [k, v] of Object.entries({ x: box.x, y: box.y, width: box.width, height: box.height, rx: 6 })) rect.setAttribute(k, v);
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("text-anchor", "middle");
    const n = c.members.size;
    // Two lines (name, size): a group's name is often wider than its box.
    [c.label, `(${n} node${n === 1 ? "" : "s"})`].forEach((line, i) => {
      const span = document.createElementNS(SVG_NS, "tspan");
      span.setAttribute("x", box.x + box.width / 2);
      span.setAttribute("y", box.y + box.height / 2 + (i === 0 ? -3 : 12));
      span.textContent = line;
      label.append(span);
    });
    ph.append(rect, label);
    ph.style.display = "none";
    ph.addEventListener("click", () => toggleCluster(c.name));
    (c.g.parentNode || svg).append(ph);
    c.placeholder = ph;
  }

  function buildClusters() {
    const known = ((model.get("views") || {})[model.get("view")] || {}).clusters || {};
    clusters = [...svg.querySelectorAll("g.cluster")].map((g) => {
      // mlclab's plotter ids clusters "cluster:<model id>"; plain Graphviz names them by title.
      const name = g.id.startsWith("cluster:") ? g.id.slice("cluster:".length) : titleOf(g).replace(/^cluster_?/, "");
      const info = known[name] || {};
      const c = { name, kind: info.kind || "", label: info.label || name, g, box: null, members: new Set(), placeholder: null };
      // Clicking a cluster's label folds it.
      const handle = g.querySelector(":scope > text") || g;
      handle.classList.add("mlclab-cluster-handle");
      handle.addEventListener("click", () => toggleCluster(c.name));
      return c;
    });
    collapseAll.disabled = foldable().length === 0;
  }

  // "collapse groups" folds fused groups and other inner clusters, not whole functions.
  const foldable = () => clusters.filter((c) => c.kind !== "function");

  // ----------------------------------------------------------------- drawing a view
  function drawViewButtons() {
    const views = Object.keys(model.get("views") || {});
    viewButtons.replaceChildren(...views.map((name) => {
      const b = h("button", { type: "button", class: "mlclab-view", role: "tab", "data-view": name, text: name });
      b.classList.toggle("mlclab-active", name === model.get("view"));
      b.setAttribute("aria-selected", String(name === model.get("view")));
      b.addEventListener("click", () => { model.set("view", name); model.save_changes(); });
      return b;
    }));
  }

  function draw() {
    drawViewButtons();
    const view = (model.get("views") || {})[model.get("view")] || {};
    fillLines(letPane, view.let_text !== undefined ? view.let_text : model.get("let_text"));
    svg = parseSvg(view.svg);
    nodeEls = new Map();
    nameToId = new Map();
    if (!svg) {
      // A pending view is being drawn by the kernel; "views" changes again when it is ready.
      const why = view.pending ? "drawing…" : view.error ? `this view could not be drawn: ${view.error}`
        : view.svg ? "this graph could not be read" : "no graph for this view";
      canvas.replaceChildren(h("div", { class: view.error ? "mlclab-hint mlclab-view-error" : "mlclab-hint", text: why }));
      refreshMarks();
      return;
    }
    svg.classList.add("mlclab-graph");
    // Graphviz sizes the drawing in pt; size it in CSS px from its viewBox instead, so the
    // scale arithmetic of zoom and fit works in one unit.
    const vb = svg.viewBox && svg.viewBox.baseVal;
    if (vb && vb.width) {
      svg.setAttribute("width", vb.width);
      svg.setAttribute("height", vb.height);
    }
    canvas.replaceChildren(svg);
    const known = view.nodes || {};
    for (const g of svg.querySelectorAll("g.node")) {
      // The plotter gives each node's <g> the node id; fall back to the Graphviz name.
      const id = known[g.id] ? g.id : titleOf(g);
      nodeEls.set(id, g);
      nameToId.set(titleOf(g), id);
      g.dataset.node = id;
      g.addEventListener("mouseenter", () => hover(id));
      g.addEventListener("mouseleave", () => hover(null));
    }
    buildClusters();
    refreshCollapse();
    refreshMarks();
    requestAnimationFrame(fitView);
  }

  // ----------------------------------------------------------------- events
  // One pointer handler does both: a press that moves pans the graph, one that does not is a
  // click on whatever node it landed on (or clears the selection on the background).
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, zx: zoom.x, zy: zoom.y, moved: false, target: e.target };
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) { drag.moved = true; canvas.setPointerCapture(e.pointerId); canvas.classList.add("mlclab-panning"); }
    zoom.x = drag.zx + dx; zoom.y = drag.zy + dy;
    applyZoom();
  });
  const endDrag = (e) => {
    if (!drag) return;
    const { moved, target } = drag;
    drag = null;
    canvas.classList.remove("mlclab-panning");
    if (moved || e.type !== "pointerup") return;
    if (target.closest && target.closest(".mlclab-cluster-handle, .mlclab-placeholder")) return;
    const g = target.closest ? target.closest("g.node") : null;
    // Only nodes the model describes can be selected (Python checks the id it receives).
    model.set("selected_node", g && nodes()[g.dataset.node] ? g.dataset.node : "");
    model.save_changes();
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  zoomIn.addEventListener("click", () => zoomAt(1.25, canvas.clientWidth / 2, canvas.clientHeight / 2));
  zoomOut.addEventListener("click", () => zoomAt(0.8, canvas.clientWidth / 2, canvas.clientHeight / 2));
  fit.addEventListener("click", fitView);
  save.addEventListener("click", () => {
    // The drawing as Graphviz made it (no pan/zoom transform, no marks), saved locally.
    const view = (model.get("views") || {})[model.get("view")] || {};
    if (!view.svg) return;
    const url = URL.createObjectURL(new Blob([view.svg], { type: "image/svg+xml" }));
    const a = h("a", { href: url, download: `${model.get("view") || "graph"}.svg` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  el.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && e.target !== search && model.get("selected_node")) {
      model.set("selected_node", "");
      model.save_changes();
    }
  });
  search.addEventListener("input", () => { model.set("search", search.value); model.save_changes(); });
  search.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { search.value = ""; model.set("search", ""); model.save_changes(); }
  });
  collapseAll.addEventListener("click", () => {
    const any = (model.get("collapsed") || []).length > 0;
    model.set("collapsed", any ? [] : foldable().map((c) => c.name));
    model.save_changes();
  });

  // The first time the canvas gets a size (a viewer drawn inside a hidden tab has none), fit.
  let sized = false;
  const resize = new ResizeObserver(() => {
    if (!sized && canvas.clientWidth > 0) { sized = true; fitView(); }
  });
  resize.observe(canvas);

  const onSource = () => { fillLines(sourcePane, model.get("source")); refreshMarks(); };
  const onLet = draw;
  const onSearch = () => {
    if (search.value !== model.get("search")) search.value = model.get("search");
    refreshMarks();
  };
  const handlers = {
    views: draw, view: draw, selected_node: refreshMarks, highlight: refreshMarks,
    annotations: refreshMarks, search: onSearch, collapsed: refreshCollapse,
    source: onSource, let_text: onLet,
  };
  for (const [name, fn] of Object.entries(handlers)) model.on(`change:${name}`, fn);

  fillLines(sourcePane, model.get("source"));
  search.value = model.get("search") || "";
  draw();

  return () => {
    resize.disconnect();
    for (const [name, fn] of Object.entries(handlers)) model.off(`change:${name}`, fn);
  };
}

export default { render };
