// Where the drawing sits on the canvas: the zoom applied, the first look and fit (folding
// further where the drawing cannot fit readably, else what matters shown), a node kept on its
// pixels when the view changes (the selected node across views, a shared node across the
// passes of a scrubber drawn in one stable layout, a module opened where it was clicked), and
// never a blank pane.

import { boxOf, drawingBox } from "./dom.js";
import { currentView, save } from "./switcher.js";
import { keptFrame } from "./scrubber.js";
import { isViewModel, matchByValue, keepInPlace, layerOf, namespacesOf } from "./vm.js";
import { fitBox, unionBox, firstLook, anyShown } from "./fit.js";

export function applyZoom(state) {
  const { svg, zoom } = state;
  if (svg) svg.style.transform = `translate(${zoom.x}px, ${zoom.y}px) scale(${zoom.k})`;
  // Every zoom is worked out for an unscrolled canvas: drop any scroll the browser made.
  state.ui.canvas.scrollLeft = 0; state.ui.canvas.scrollTop = 0;
  // The "smallest readable size" note belongs to a fit; any other move takes it away.
  state.ui.clipNote.hidden = !(state.clipped && !state.userMoved);
  state.ui.clipNote.querySelector(".mlclab-fold-more").hidden = !state.model.get("live");
}

// Switching views (a pass of the scrubber): remember where the selected node is on screen...
export function keepSelected(state) {
  const id = state.model.get("selected_node");
  const els = id && state.index.elements.get(id);
  if (!els || !state.lastView) { state.keep = null; return; }
  const r = els[0].getBoundingClientRect(), c = state.ui.canvas.getBoundingClientRect();
  state.keep = { from: state.lastView, id, sx: r.left + r.width / 2 - c.left, sy: r.top + r.height / 2 - c.top, k: state.zoom.k };
}

// ...and put the node holding the same value there in the new drawing, selected.
export function placeKept(state) {
  const keep = state.keep, view = currentView(state.model);
  if (!keep || !isViewModel(view)) return false;
  state.keep = null;
  const id = matchByValue(keep.from, view, keep.id);
  const els = id && state.index.elements.get(id);
  const box = els && boxOf(els[0]);
  if (!box) return false;
  if (state.model.get("selected_node") !== id) save(state.model, { selected_node: id });
  state.zoom = keepInPlace(box, keep.sx, keep.sy, keep.k);
  state.userMoved = true;
  applyZoom(state);
  return true;
}

// A pass drawn in the same stable layout (scrubber.js): same zoom, a shared node on its pixels.
export function frameKept(state) {
  const zoom = keptFrame(state, currentView(state.model));
  if (!zoom) return false;
  state.zoom = zoom; state.userMoved = true; applyZoom(state);
  return true;
}

// What a first look shows when the whole drawing does not fit readably: a scrubber's pass,
// what it changed (its `diff` layer); else the nodes drawn (a stable layout's frame holds
// every pass's nodes, so the drawing's own box can be mostly empty). Boxes in drawing units.
function focusOf(state) {
  const view = currentView(state.model), diff = layerOf(view, "diff");
  const changed = Object.keys(diff).filter((id) => diff[id] && diff[id].change && state.index.elements.has(id));
  const ids = changed.length ? changed : [...state.index.elements.keys()];
  return ids.flatMap((id) => (state.index.elements.get(id) || []).slice(0, 1)).map(boxOf).filter(Boolean);
}

// Open modules of the drawing that folding would make smaller, the outermost drawn: what
// "fit" folds when the drawing cannot fit. Only modules: a fused group or a
// function drawn open is what the student is looking at (a comparison after FuseOps).
function foldable(state) {
  const spaces = namespacesOf(currentView(state.model));
  const open = (id) => spaces[id] && spaces[id].kind === "module" && !spaces[id].folded;
  return [...state.index.namespaces.keys()].filter((id) => open(id)
    && !(state.index.namespaces.has(spaces[id].parent) && open(spaces[id].parent)));
}

// Fit the drawing, never shrinking node labels below readable (fit.js). Where it cannot fit
// the canvas's width so, `fold` (the fit button) folds the open modules further (the kernel
// lays that out, and the new drawing is fitted again); meanwhile, where nothing folds, and at
// a first look (which leaves the kernel's fold state and what it laid out ahead alone), it
// shows what matters (focusOf) rather than the middle of the drawing.
export function fitView(state, { fold = false } = {}) {
  const { svg, ui, model } = state;
  if (!svg) return;
  const cw = ui.canvas.clientWidth, ch = ui.canvas.clientHeight;
  if (!cw || !ch) return;
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const box = drawingBox(svg);
  if (fold && box.width * state.minK > cw && model.get("live") && !model.get("scrub")) {
    const more = foldable(state);
    if (more.length) { save(model, { folded: [...new Set([...(model.get("folded") || []), ...more])] }); }
  }
  const focus = focusOf(state);
  const z = firstLook(box, focus, cw, ch, { minK: state.minK, maxK: 1 });
  // Graphviz's viewBox starts at the drawing's corner; the boxes of nodes are in its units.
  const shift = focus.length && z.clipped ? 0 : ((vb && vb.x) || 0) * z.k;
  state.zoom = { k: z.k, x: z.x - shift, y: z.y };
  state.clipped = z.clipped;
  state.userMoved = false;
  applyZoom(state);
}

// Never a blank pane: when a kept place (a pass's shared node, a kept selection) leaves
// fewer than 3 nodes of the drawing on the canvas, show what matters instead. (Only then: a
// scrubber keeps the nodes a pass shares on their pixels, even where its changes are
// elsewhere.)
export function ensureShown(state) {
  const { ui } = state;
  const boxes = [...state.index.elements.values()].map((els) => boxOf(els[0])).filter(Boolean);
  const cw = ui.canvas.clientWidth, ch = ui.canvas.clientHeight;
  const shown = boxes.filter((b) => anyShown([b], state.zoom, cw, ch)).length;
  if (!boxes.length || shown >= Math.min(3, boxes.length)) return;
  fitView(state);
}

// Zoom to elements (search hits, a jump target): their union, at a readable scale.
export function zoomTo(state, elements) {
  const { ui } = state;
  const box = unionBox(elements.map(boxOf));
  if (!box || !ui.canvas.clientWidth) return;
  const z = fitBox(box, ui.canvas.clientWidth, ui.canvas.clientHeight, { minK: state.minK, maxK: 1.5, pad: 24 });
  state.zoom = { k: z.k, x: z.x, y: z.y };
  state.userMoved = true;
  applyZoom(state);
}

// The smallest label font the drawing's nodes use, in drawing units.

// After a click opened a module: its box where the folded node was (its top under the
// pointer's height), at the same scale; false when nothing was opened.
export function placeOpened(state) {
  const opened = state.opened;
  const el = opened && state.index.namespaces.get(opened.ns);
  const box = el && boxOf(el);
  if (!box) return false;              // not drawn yet (the drawing before it, redrawn)
  state.opened = null;
  const { ui } = state, k = opened.k, cw = ui.canvas.clientWidth;
  // Centred where it was clicked, moved so that it is whole across; one wider than the canvas
  // from its left edge, where its name is.
  let x = opened.sx - (box.x + box.width / 2) * k;
  x = box.width * k + 16 > cw ? 8 - box.x * k
    : Math.max(8 - box.x * k, Math.min(cw - 8 - (box.x + box.width) * k, x));
  state.zoom = { k, x, y: Math.max(8, opened.sy - 40) - box.y * k };
  state.userMoved = true;
  applyZoom(state);
  return true;
}
