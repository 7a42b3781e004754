// The pass scrubber's controls (mlclab.notebook.scrubber): a slider over the passes of one
// build, step buttons and the arrow keys, "skip unchanged passes", a pass finder that filters
// the pass list by name, and a legend of what the current pass did. The passes share one
// stable layout (each view's `geometry.frame`): switching keeps the zoom, so a node that
// stays stays on the same pixels. Where a pass is laid out anew (a new frame), the pan that
// keeps the most shared nodes in place is chosen, and the scrubber says the picture changed.

import { h, boxOf, parseSvg } from "./dom.js";
import { keepInPlace } from "./vm.js";
import { looksOf } from "./paint.js";

// The passes, in order: the model's `passes` ({view, name, changed, seconds}), or one
// per view when a viewer gives none.
export function passesOf(model) {
  const given = model.get("passes");
  if (Array.isArray(given) && given.length) return given;
  return Object.keys(model.get("views") || {}).map((view) => ({ view, name: view, changed: true }));
}

// The passes the slider and the arrow keys go through: all, or (skip) the input and those
// that changed the program, plus the one shown now.
export function stops(passes, skip, current) {
  return passes.filter((p, k) => !skip || k === 0 || p.changed || p.view === current);
}

// The view `d` stops before (-1) or after (+1) `current`, or null at either end.
export function stepFrom(passes, skip, current, d) {
  const list = stops(passes, skip, current).map((p) => p.view);
  const at = list.indexOf(current);
  const next = list[(at < 0 ? 0 : at) + d];
  return next === undefined ? null : next;
}

// Passes whose name holds `query` (case-insensitive; every pass for an empty query).
export function findPasses(passes, query) {
  const q = (query || "").trim().toLowerCase();
  return q ? passes.filter((p) => p.name.toLowerCase().includes(q) || p.view.toLowerCase().includes(q)) : passes;
}

// Whether two view models are drawn in the same stable layout.
export function sameFrame(a, b) {
  const fa = a && a.geometry && a.geometry.frame, fb = b && b.geometry && b.geometry.frame;
  return !!fa && fa === fb;
}

// Before a switch: where the drawing's nodes are on screen (the selected one first), to line
// the next drawing up on those it shares. `elements`: node id -> its SVG elements.
export function anchorsBefore(view, elements, selected, canvasRect, limit = 400) {
  const ids = [...elements.keys()];
  if (selected && elements.has(selected)) ids.unshift(selected);
  const out = [], nodes = view.nodes || {};
  for (const id of new Set(ids)) {
    const node = nodes[id];
    if (!node) continue;
    const r = elements.get(id)[0].getBoundingClientRect();
    out.push({ id, value: node.value || "", sx: r.left + r.width / 2 - canvasRect.left, sy: r.top + r.height / 2 - canvasRect.top });
    if (out.length >= limit) break;
  }
  return out;
}

// After it: every anchor the new drawing holds (matched by value, a node holding none by its
// id, as mlclab.viz.stable_layout matches them), with that node's id there.
export function anchorsIn(anchors, view) {
  const nodes = (view && view.nodes) || {}, byValue = new Map();
  for (const [id, n] of Object.entries(nodes)) if (n.value && !byValue.has(n.value)) byValue.set(n.value, id);
  const out = [];
  for (const a of anchors || []) {
    const id = a.value ? byValue.get(a.value) : (nodes[a.id] && !nodes[a.id].value ? a.id : undefined);
    if (id) out.push({ ...a, id });
  }
  return out;
}

// The pan (at scale k) that keeps the most shared nodes on their pixels: each one proposes
// the pan that puts it back (`hits`: anchors with their `box` in the new drawing), and the one
// most others agree with within `tol` px wins, the earliest (the selected node) on a tie. In
// one stable layout they all agree; across two layouts as many as the layouts allow.
export function bestPan(hits, k, tol = 3) {
  const pans = hits.map((a) => keepInPlace(a.box, a.sx, a.sy, k));
  let best = null;
  for (const p of pans) {
    const n = pans.filter((q) => Math.abs(q.x - p.x) <= tol && Math.abs(q.y - p.y) <= tol).length;
    if (!best || n > best.kept) best = { zoom: p, kept: n, total: pans.length };
  }
  return best;
}

// How many `hits` sit within `tol` px of where they were, at `zoom`.
export function keptCount(hits, zoom, tol = 3) {
  return hits.filter((a) => Math.abs((a.box.x + a.box.width / 2) * zoom.k + zoom.x - a.sx) <= tol
    && Math.abs((a.box.y + a.box.height / 2) * zoom.k + zoom.y - a.sy) <= tol).length;
}

// What the scrubber says where a picture is redrawn: at the first pass of a new layout, and
// on any step between two layouts, with how many shared nodes kept their place.
export function layoutNote(view, kept) {
  const fresh = !!(view && view.geometry && view.geometry.new_layout);
  const count = kept && kept.total ? `${kept.kept} of ${kept.total} nodes shared with the pass before kept their place` : "";
  if (fresh) return `new layout: this pass rewrote most of the program${count ? ` (${count})` : ""}`;
  return kept ? `another layout than the pass before${count ? `: ${count}` : ""}` : "";
}

// What a switch keeps (viewer.js): the drawing left and where its nodes were on screen.
export function frameBefore(state) {
  const { model, lastView, index, ui } = state;
  if (!model.get("scrub") || !lastView) return null;
  return { from: lastView, anchors: anchorsBefore(lastView, index.elements, model.get("selected_node"), ui.canvas.getBoundingClientRect()) };
}

// The anchors the new drawing holds, with their boxes there (at most `limit`: each box is a
// getBBox, the costliest part of a step).
function hitsOf(state, frame, view, limit = Infinity) {
  const out = [];
  for (const a of anchorsIn(frame.anchors, view)) {
    const els = state.index.elements.get(a.id), box = els && boxOf(els[0]);
    if (box) out.push({ ...a, box });
    if (out.length >= limit) break;
  }
  return out;
}

// The zoom that puts the new drawing where the old one was: the scale kept, the pan that
// keeps the most shared nodes in place (null: none shared). In one stable layout every
// shared node agrees, so the first (the selected one) is enough.
export function keptFrame(state, view) {
  if (!state.frame) return null;
  const hits = hitsOf(state, state.frame, view, sameFrame(state.frame.from, view) ? 1 : Infinity);
  const best = bestPan(hits, state.zoom.k);
  return best && best.zoom;
}

// Once the drawing is placed: the note on the layout, the pass list scrolled to the pass
// shown, the next pass parsed ahead.
export function scrubberPlaced(state, view) {
  noteLayout(state, view);
  const list = state.ui.scrub && state.ui.scrub.list, active = list && list.querySelector(".mlclab-active");
  if (active && list.scrollHeight > list.clientHeight) list.scrollTop = active.offsetTop - list.offsetTop - list.clientHeight / 2;
  parseNeighbours(state);
}

// The scrubber's note on the layout (see layoutNote).
function noteLayout(state, view) {
  const frame = state.frame;
  state.frame = null;
  const note = state.ui.scrub && state.ui.scrub.note;
  if (!note) return;
  let kept = null;
  if (frame && !sameFrame(frame.from, view)) {
    const hits = hitsOf(state, frame, view);
    kept = { kept: keptCount(hits, state.zoom), total: hits.length };
  }
  note.textContent = layoutNote(view, kept);
  note.hidden = !note.textContent;
}

// While the student looks at a pass, the next one in the direction they step (a button, the
// arrow keys) is parsed (and sanitized: dom.js parseSvg) in idle time, so that step only swaps
// the drawing in. Only when the page has time to spare: a held arrow key is never slowed.
// `state.parsed`: view name -> { view, svg }, used once (drawing it marks it).
function parseNeighbours(state) {
  const { model } = state;
  if (!model.get("scrub") || !globalThis.requestIdleCallback) return;
  const current = model.get("view"), passes = passesOf(model);
  const at = passes.findIndex((p) => p.view === current), was = passes.findIndex((p) => p.view === state.shownPass);
  state.direction = was < 0 || at === was ? state.direction || 1 : Math.sign(at - was);
  state.shownPass = current;
  requestIdleCallback(function parse(deadline) {
    if (model.get("view") !== current) return;
    const name = stepFrom(passes, !!model.get("skip_unchanged"), current, state.direction);
    const view = name && state.viewOf(name), svg = view && view.geometry && view.geometry.svg;
    if (!svg || (state.parsed && state.parsed.has(name))) return;
    // About 1 ms per 20 kB of SVG on a slow machine: wait for a longer idle period if need be.
    if (deadline.timeRemaining() < Math.min(45, svg.length / 20000)) { requestIdleCallback(parse); return; }
    state.parsed = new Map([[name, { view, svg: parseSvg(svg) }]]);
  });
}

// The drawing of `view` parsed ahead of time (used once), else parsed now.
export function takeParsed(state, name, view) {
  const hit = state.parsed && state.parsed.get(name);
  if (hit && hit.view === view) { state.parsed.delete(name); return hit.svg; }
  return parseSvg((view.geometry || {}).svg);
}

// The marks a pass can make, as the drawing paints them: the `diff` overlay's looks, from the
// view model's style table (mlclab.viz.overlays; paint.js paints them). A comparison's
// "changed" is not a pass's.
export function marksOf(view) {
  return looksOf(view, "diff").filter((m) => m.value !== "changed")
    .map((m) => ({ change: m.value, text: m.legend || m.value, color: m.stroke, fill: m.fill || "#ffffff", dashed: !!m.dashed }));
}

// How many nodes of `view` each mark holds (its `diff` layer): a node's own mark, and what a
// folded node holds inside (its entry's `counts`, mlclab.viz.overlays).
export function markCounts(view) {
  const layer = ((view && view.overlays) || {}).diff || {};
  const out = {};
  for (const e of Object.values(layer)) {
    if (e && e.change) out[e.change] = (out[e.change] || 0) + 1;
    else if (e && e.counts) for (const [c, n] of Object.entries(e.counts)) out[c] = (out[c] || 0) + n;
  }
  return out;
}

// The pass in one line: what it did to the program's values (the marks' counts), else what
// it changed that no mark shows (`pass.form`, from the kernel: its kernels, weights, form),
// else that it changed nothing.
export function passSummary(pass, view) {
  if (!pass || pass.name === "input") return "the program as it came in";
  if (!pass.changed) return "changed nothing";
  const counts = markCounts(view);
  const known = marksOf(view), named = new Set(known.map((m) => m.change));
  // In the table's order; a mark the view has no look for is still counted, by its name.
  const all = [...known, ...Object.keys(counts).filter((c) => !named.has(c)).map((c) => ({ change: c, text: c }))];
  const marks = all.filter((m) => counts[m.change]).map((m) => `${counts[m.change]} ${m.text}`);
  if (marks.length) return marks.join(", ");
  return pass.form ? `${pass.form}; no value added, removed or recomputed` : "changed the program's text only";
}

function legend(view, stable) {
  const counts = markCounts(view);
  const items = marksOf(view).map((m) => {
    const swatch = h("span", { class: "mlclab-swatch" });
    swatch.style.borderColor = m.color; swatch.style.background = m.fill;
    if (m.dashed) swatch.style.borderStyle = "dashed";
    const item = h("span", { class: "mlclab-legend-item", "data-change": m.change }, swatch,
      h("span", { text: `${m.text} ${counts[m.change] || 0}` }));
    item.classList.toggle("mlclab-none", !counts[m.change]);
    return item;
  });
  const group = h("span", { class: "mlclab-swatch mlclab-swatch-group" });
  items.push(h("span", { class: "mlclab-legend-item" }, group, h("span", { text: "fused group" })));
  if (!stable) items.push(h("span", { class: "mlclab-muted", text: "laid out pass by pass (Graphviz could not pin the layout)" }));
  return items;
}

// The first call builds the scrubber's row under the toolbar (its finder keeps focus across
// redraws); every call redraws the slider, the pass list and the legend.
export function drawScrubber(state, save, view) {
  const { model, ui, el } = state;
  const passes = passesOf(model), current = model.get("view");
  const skip = !!model.get("skip_unchanged");
  if (!ui.scrub) {
    const find = h("input", { class: "mlclab-pass-find", type: "search", placeholder: "find a pass…", "aria-label": "find a pass by name" });
    const skipBox = h("input", { type: "checkbox", class: "mlclab-skip" });
    const list = h("div", { class: "mlclab-pass-list", role: "listbox", "aria-label": "passes" });
    const marks = h("div", { class: "mlclab-legend" });
    const note = h("div", { class: "mlclab-layout-note", role: "status" });
    const summary = h("div", { class: "mlclab-pass-summary", role: "status" });
    note.hidden = true;
    ui.scrub = { find, skipBox, list, marks, note, summary };
    const row = h("div", { class: "mlclab-scrubber" }, summary,
      h("label", { class: "mlclab-skip-label" }, skipBox, h("span", { text: " skip unchanged passes" })),
      find, list, marks, note);
    el.querySelector(".mlclab-toolbar").after(row);
    find.addEventListener("input", () => drawScrubber(state, save, state.drawnView));
    find.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      const hit = findPasses(passesOf(model), find.value)[0];
      if (hit) save(model, { view: hit.view });
    });
    skipBox.addEventListener("change", () => save(model, { skip_unchanged: skipBox.checked }));
    model.on("change:skip_unchanged", () => drawScrubber(state, save, state.drawnView));
    // Left/right step through the passes wherever the viewer has focus but a text box.
    el.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
      const t = e.target;
      if (t && t.tagName === "INPUT" && t.type !== "checkbox") return;
      const next = stepFrom(passesOf(model), !!model.get("skip_unchanged"), model.get("view"), e.key === "ArrowLeft" ? -1 : 1);
      e.preventDefault();
      if (next) save(model, { view: next });
    });
  }
  const { find, skipBox, list, marks } = ui.scrub;
  skipBox.checked = skip;
  // The slider and the step buttons.
  const names = stops(passes, skip, current).map((p) => p.view);
  const at = Math.max(0, names.indexOf(current));
  const slider = h("input", { type: "range", class: "mlclab-scrub", min: "0", max: String(names.length - 1),
    value: String(at), "aria-label": "pass" });
  slider.addEventListener("input", () => save(model, { view: names[Number(slider.value)] }));
  const step = (d, text, title) => {
    const b = h("button", { type: "button", class: "mlclab-step", text, title });
    b.disabled = at + d < 0 || at + d >= names.length;
    b.addEventListener("click", () => save(model, { view: names[at + d] }));
    return b;
  };
  const pass = passes.find((p) => p.view === current);
  ui.viewButtons.replaceChildren(step(-1, "◀", "previous pass (←)"), slider, step(1, "▶", "next pass (→)"),
    h("span", { class: "mlclab-pass", text: `${current} (${at + 1}/${names.length})${pass && !pass.changed ? " · no change" : ""}` }));
  // The pass list, filtered by the finder: built again only when the filter changes what it
  // lists; a step only moves the highlight (scrolled to once placed: scrubberPlaced).
  const shown = findPasses(passes, find.value), listKey = shown.map((p) => p.view).join("\n");
  if (ui.scrub.listKey !== listKey) {
    ui.scrub.listKey = listKey;
    list.replaceChildren(...shown.map((p) => {
      const b = h("button", { type: "button", class: "mlclab-pass-item", "data-view": p.view, role: "option",
        title: p.changed ? "changed the program" : "changed nothing", text: p.view });
      b.classList.toggle("mlclab-unchanged", !p.changed);
      b.addEventListener("click", () => save(model, { view: p.view }));
      return b;
    }));
    if (!shown.length) list.replaceChildren(h("span", { class: "mlclab-muted", text: "no pass by that name" }));
  }
  for (const b of list.children) {
    if (!b.dataset.view) continue;
    b.classList.toggle("mlclab-active", b.dataset.view === current);
    b.setAttribute("aria-selected", String(b.dataset.view === current));
    // A pass drawn in a new layout is marked before the student gets there.
    const fresh = !!((state.viewOf(b.dataset.view) || {}).geometry || {}).new_layout;
    b.classList.toggle("mlclab-new-layout", fresh);
    if (fresh) b.title = "new layout: this pass rewrote most of the program";
  }
  state.drawnView = view;
  ui.scrub.summary.textContent = `${pass ? pass.name : current}: ${passSummary(pass, view)}`;
  marks.replaceChildren(...legend(view, model.get("stable") !== false));
}
