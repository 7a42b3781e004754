// Where the drawing sits on the canvas: the zoom applied, and a node kept on its pixels when
// the view changes (the selected node across views, a shared node across the passes of a
// scrubber drawn in one stable layout).

import { boxOf } from "./dom.js";
import { currentView, save } from "./switcher.js";
import { keptFrame } from "./scrubber.js";
import { isViewModel, matchByValue, keepInPlace } from "./vm.js";

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
