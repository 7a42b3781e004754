// Overlay paint: the one painter of every display's drawing (the live viewer, its twin, a saved
// page, a comparison's panes, the pass scrubber, a drawing laid out in the browser, a column
// picture). A view model's geometry is layout only; its `styles` (each overlay's look as it
// registered it once, mlclab.viz.overlays) say how its `overlays` are drawn. A picture made
// without JavaScript is painted by Graphviz from the same table (mlclab.viz.paint, whose
// node_paints resolves a node's paint exactly as nodePaints does here; tests/browser/
// test_paint_browser.py draws every look both ways and compares them).

import { idIndex } from "./dom.js";
import { layerOf } from "./vm.js";

// Graphviz's dash for style=dashed, as it writes it into SVG (mlclab.viz.paint.DASH).
export const DASH = "5,2";
const SHAPES = "polygon, ellipse, path, rect";
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

// Node id -> {classes, stroke?, width?, dashed?, fill?}: the layers of `view` (`extra`: the
// widget's annotations, joining the validation layer) in the style table's order, a later
// layer's look winning field by field; each marked value adds the class `mlclab-<value>`.
export function nodePaints(view, extra) {
  const table = (view && view.styles) || {};
  const out = {};
  for (const [name, style] of Object.entries(table)) {
    const layer = layerOf(view, name, name === "validation" ? extra : undefined);
    for (const [id, entry] of Object.entries(layer)) {
      if (!entry) continue;
      let paint = null;
      const key = style.key;
      if (key && entry[key] !== undefined && entry[key] !== null) {
        const value = String(entry[key]);
        const look = own(style.looks || {}, value) ? style.looks[value] : null;
        if (look) {
          paint = out[id] ||= { classes: [] };
          paint.classes.push(`mlclab-${value}`);
          for (const [k, v] of Object.entries(look)) if (k !== "legend") paint[k] = v;
        }
      }
      if (style.fill_key && entry[style.fill_key]) {
        paint = paint || (out[id] ||= { classes: [] });
        paint.fill = entry[style.fill_key];
      }
    }
  }
  return out;
}

// What painting changed on an element, to undo it before the next paint.
const WAS = "mlclabWas";

function restore(g) {
  const was = g.dataset[WAS];
  if (!was) return;
  const { classes, shapes } = JSON.parse(was);
  for (const c of classes) g.classList.remove(c);
  g.querySelectorAll(SHAPES).forEach((shape, k) => {
    for (const [attr, value] of Object.entries(shapes[k] || {})) {
      if (value === null) shape.removeAttribute(attr); else shape.setAttribute(attr, value);
    }
  });
  delete g.dataset[WAS];
}

// Paint one node's SVG group `g` with `paint` (a nodePaints value), undoing its last paint.
export function paintElement(g, paint) {
  restore(g);
  if (!paint) return;
  const shapes = [];
  for (const shape of g.querySelectorAll(SHAPES)) {
    const was = {};
    const set = (attr, value) => { if (!own(was, attr)) was[attr] = shape.getAttribute(attr); shape.setAttribute(attr, value); };
    if (paint.stroke) set("stroke", paint.stroke);
    if (paint.width) set("stroke-width", String(paint.width));
    if (paint.dashed) set("stroke-dasharray", DASH);
    // Graphviz fills only the inner periphery: an outer ring stays unfilled.
    const fill = shape.getAttribute("fill");
    if (paint.fill && fill && fill !== "none") set("fill", paint.fill);
    shapes.push(was);
  }
  const added = (paint.classes || []).filter((c) => !g.classList.contains(c));
  for (const c of added) g.classList.add(c);
  g.dataset[WAS] = JSON.stringify({ classes: added, shapes });
}

// Paint every node of a drawing: `elements`, node id -> its SVG groups (the node and the
// copies drawn at its readers: viewer.js indexDrawing), by `view`'s overlays and styles.
export function paintNodes(elements, view, extra) {
  const paints = nodePaints(view, extra);
  for (const [id, els] of elements) for (const g of els) paintElement(g, paints[id] || null);
}

// Paint a parsed <svg> whose node groups carry the node ids (a column picture, layout.js).
export function paintSvg(svg, view) {
  const ids = idIndex(svg);
  const paints = nodePaints(view);
  for (const [id, paint] of Object.entries(paints)) {
    const g = ids.get(id);
    if (g) paintElement(g, paint);
  }
  return svg;
}

// The looks of layer `name` as a legend lists them: [{value, legend, stroke, fill, dashed}].
export function looksOf(view, name) {
  const style = ((view && view.styles) || {})[name];
  return Object.entries((style && style.looks) || {}).map(([value, look]) => ({ value, ...look }));
}
