// Fitting and zooming: the arithmetic of the pan/zoom transform. Pure functions, no DOM.

// Below this many CSS pixels a label stops being readable: fit never shrinks further (the
// student folds more, or pans).
export const MIN_LABEL_PX = 8;
export const MAX_SCALE = 8;

// The smallest scale at which text of `fontSize` units stays MIN_LABEL_PX tall.
export function minScale(fontSize) {
  return fontSize > 0 ? MIN_LABEL_PX / fontSize : 0;
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
