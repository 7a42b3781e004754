// Fitting and zooming: the arithmetic of the pan/zoom transform. Pure functions, no DOM.

// Below this many CSS pixels a label stops being readable: a column picture is never shrunk
// further (it folds, or scrolls in its own box). mlclab.viz.fit.MIN_TEXT_PX is the same number.
export const MIN_LABEL_PX = 9;
// The live viewer's floor is the same: its fit folds further or pans rather than shrink
// labels under it (a laptop's column is where students read it: issue 30).
export const VIEWER_MIN_LABEL_PX = MIN_LABEL_PX;
export const MAX_SCALE = 8;

// The smallest scale at which text of `fontSize` units stays VIEWER_MIN_LABEL_PX tall.
export function minScale(fontSize) {
  return fontSize > 0 ? VIEWER_MIN_LABEL_PX / fontSize : 0;
}

// The transform that shows box {x, y, width, height} (drawing units) in a canvas of cw x ch
// pixels: never above `maxK`, never below `minK`. When `minK` wins the box does not fit:
// `clipped` says so and the top of the box is shown, centred across.
export function fitBox(box, cw, ch, { minK = 0, maxK = 1, pad = 0 } = {}) {
  const w = Math.max(box.width, 1), h = Math.max(box.height, 1);
  const want = Math.min(maxK, (cw - 2 * pad) / w, (ch - 2 * pad) / h);
  const k = Math.max(minK, want);
  const clipped = k > want + 1e-9;
  const x = (cw - w * k) / 2 - box.x * k;
  const y = clipped ? pad - box.y * k : Math.max(pad, (ch - h * k) / 2) - box.y * k;
  return { k, x, y, clipped };
}

// The first look at a drawing `box` in a cw x ch canvas: all of it when it fits readably;
// else what matters, `boxes` (a pass's changes, the nodes drawn), fitted; else, at the
// readable scale, the window that shows the most of them (the topmost such): never the middle
// of a wide drawing, which can be empty space (a stable layout's frame holds every pass).
// Boxes in drawing units; never below `minK`.
export function firstLook(box, boxes, cw, ch, { minK = 0, maxK = 1, pad = 8 } = {}) {
  const whole = fitBox(box, cw, ch, { minK, maxK });
  const focus = boxes && boxes.length ? unionBox(boxes) : null;
  if (!whole.clipped || !focus) return whole;
  const z = fitBox(focus, cw, ch, { minK, maxK, pad });
  if (!z.clipped) return { ...z, clipped: true };
  // Windows whose left edge is a node's (so none is cut there), each from the top of what it
  // holds; the one holding the most nodes whole wins, the topmost on a tie.
  const k = z.k, w = (cw - 2 * pad) / k, hgt = (ch - 2 * pad) / k, some = boxes.slice(0, 300);
  let best = null;
  for (const b of some) {
    const left = b.x, across = some.filter((o) => o.x >= left && o.x + o.width <= left + w);
    if (!across.length) continue;
    const top = Math.min(...across.map((o) => o.y));
    const n = across.filter((o) => o.y + o.height <= top + hgt).length;
    if (!best || n > best.n || (n === best.n && top < best.top)) best = { n, left, top };
  }
  if (!best) return { ...z, clipped: true };
  return { k, x: pad - best.left * k, y: pad - best.top * k, clipped: true };
}

// Whether any of `boxes` (drawing units) shows in a cw x ch canvas at `zoom`.
export function anyShown(boxes, zoom, cw, ch) {
  return boxes.some((b) => b && (b.x + b.width) * zoom.k + zoom.x > 0 && b.x * zoom.k + zoom.x < cw
    && (b.y + b.height) * zoom.k + zoom.y > 0 && b.y * zoom.k + zoom.y < ch);
}

// The box holding every box of `boxes` (null for none).
export function unionBox(boxes) {
  const real = boxes.filter((b) => b && b.width >= 0 && b.height >= 0);
  if (!real.length) return null;
  const x0 = Math.min(...real.map((b) => b.x)), y0 = Math.min(...real.map((b) => b.y));
  const x1 = Math.max(...real.map((b) => b.x + b.width)), y1 = Math.max(...real.map((b) => b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

// Zoom by `factor` about canvas point (px, py), within [minK, MAX_SCALE].
export function zoomAt(zoom, factor, px, py, minK = 0.05) {
  const k = Math.min(MAX_SCALE, Math.max(minK, zoom.k * factor));
  return { k, x: px - (px - zoom.x) * (k / zoom.k), y: py - (py - zoom.y) * (k / zoom.k) };
}

// ------------------------------------------------------------------- a picture in a column
// The same rule as mlclab.viz.fit (Fit, choose), for drawings laid out in the browser where
// the kernel had no `dot` to measure them: a drawing is shown at most at its natural size, as
// wide as its column, never below the scale that keeps its smallest label MIN_LABEL_PX tall;
// when that does not fit, a further-folded rung of the ladder is drawn instead.
// tests/js/fit.test.mjs holds both to the same answers on the same SVGs.
const PX_PER_PT = 4 / 3;                 // Graphviz draws in points, CSS in px
const SVG_SIZE = /<svg width="([\d.]+)pt" height="([\d.]+)pt"/;
const FONT_SIZE = /font-size="([\d.]+)"/g;

// A Graphviz SVG's natural size and smallest text, in px, read from its text (as fit.py does).
export function measureSvg(text) {
  const size = SVG_SIZE.exec(text || "");
  if (!size) throw new Error("not an SVG Graphviz wrote (no width/height in points)");
  const fonts = [...text.matchAll(FONT_SIZE)].map((m) => parseFloat(m[1]));
  return { width: parseFloat(size[1]) * PX_PER_PT, height: parseFloat(size[2]) * PX_PER_PT,
    smallestText: fonts.length ? Math.min(...fonts) * PX_PER_PT : MIN_LABEL_PX };
}

// How a measured drawing fits a column `column` px wide (fit.py's Fit).
export function columnFit(m, column) {
  const minScale = Math.min(1, MIN_LABEL_PX / m.smallestText);
  const neededScale = m.width ? Math.min(1, column / m.width) : 1;
  const readable = neededScale >= minScale - 1e-9;
  return { ...m, column, minScale, neededScale, readable, scale: Math.max(neededScale, minScale) };
}

// Whether `other` (a further-folded drawing) is shown instead of `fit` (Fit.improved_by).
export function improvedBy(fit, other) {
  return other.scale > fit.scale || other.readable;
}

// The rung a column shows (fit.py's choose): `rungs` are {nodes, ...} folded more and more,
// `measure(k)` resolves to rung k's fit. The first readable rung, else the best; a rung with
// no fewer nodes than the one chosen is skipped unmeasured. Resolves to { index, fit }.
export async function chooseRung(rungs, measure) {
  let index = null, fit = null, nodes = null;
  for (let k = 0; k < rungs.length; k++) {
    if (fit) {
      if (fit.readable) break;
      if (rungs[k].nodes >= nodes) continue;
    }
    const candidate = await measure(k);
    if (!fit || improvedBy(fit, candidate)) { index = k; fit = candidate; nodes = rungs[k].nodes; }
  }
  return { index, fit };
}
