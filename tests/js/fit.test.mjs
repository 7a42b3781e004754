// A column picture's fit and fold ladder in the browser (mlclab/notebook/static/fit.js), the
// rule of mlclab.viz.fit: run by node's own test runner (tests/test_viewer_js.py).
// tests/test_fit_rule.py runs the same functions on cases Python's Fit and choose answer, so
// the two definitions of "fits" cannot drift apart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { measureSvg, columnFit, improvedBy, chooseRung, MIN_LABEL_PX } from "../../mlclab/notebook/static/fit.js";

const svg = (wPt, hPt, fonts) => `<svg width="${wPt}pt" height="${hPt}pt" viewBox="0 0 ${wPt} ${hPt}">` +
  fonts.map((f) => `<text font-size="${f}">x</text>`).join("") + "</svg>";

test("a drawing is measured in px from Graphviz's points, its smallest text found", () => {
  const m = measureSvg(svg(600, 300, [14, 10.5, 12]));
  assert.equal(m.width, 800);
  assert.equal(m.height, 400);
  assert.equal(m.smallestText, 14);
  assert.throws(() => measureSvg("<svg width='10px'/>"), /not an SVG Graphviz wrote/);
});

test("a drawing fits when the column shows it with labels at least 9 px tall", () => {
  const m = measureSvg(svg(600, 300, [10.5]));              // 800 px wide, 14 px labels
  assert.equal(columnFit(m, 1000).scale, 1);                // never enlarged
  const narrow = columnFit(m, 560);                         // 0.7: labels 9.8 px
  assert.equal(narrow.readable, true);
  assert.equal(narrow.scale, 0.7);
  assert.equal(columnFit(m, 500).readable, false);          // 0.625: labels 8.75 px
  const tooNarrow = columnFit(m, 400);                      // 0.5 would make labels 7 px
  assert.equal(tooNarrow.readable, false);
  assert.equal(tooNarrow.scale, MIN_LABEL_PX / 14);         // shown at the readable minimum
});

test("the ladder stops at the first rung that fits, and skips rungs no smaller", async () => {
  const wide = columnFit(measureSvg(svg(1500, 300, [10.5])), 900);
  const lessWide = columnFit(measureSvg(svg(1400, 300, [10.5])), 900);
  const fits = columnFit(measureSvg(svg(600, 300, [10.5])), 900);
  assert.equal(improvedBy(wide, lessWide), false);          // both at the readable minimum
  const measured = [];
  const measure = (fitsOf) => async (k) => { measured.push(k); return fitsOf[k]; };
  const rungs = [{ nodes: 30 }, { nodes: 30 }, { nodes: 20 }, { nodes: 10 }];
  const got = await chooseRung(rungs, measure([wide, null, fits, lessWide]));
  assert.deepEqual(got, { index: 2, fit: fits });
  assert.deepEqual(measured, [0, 2]);                       // rung 1 skipped, rung 3 not needed
  // Nothing fits: the first stays (no later rung does better).
  measured.length = 0;
  assert.equal((await chooseRung(rungs.slice(0, 2), measure([wide, lessWide]))).index, 0);
  assert.deepEqual(measured, [0]);
});

test("a first look at a drawing too big to fit shows what matters, where most of it is", async () => {
  const { firstLook, anyShown } = await import("../../mlclab/notebook/static/fit.js");
  const box = { x: 0, y: 0, width: 1300, height: 1300 };
  // fits: the whole drawing, as fitBox
  assert.equal(firstLook({ x: 0, y: 0, width: 300, height: 300 }, [], 400, 400, { minK: 1 }).clipped, false);
  // the focus (a pass's changes) fits: it is fitted, not the middle of the frame
  const small = { x: 900, y: 500, width: 200, height: 100 };
  const z = firstLook(box, [small], 400, 400, { minK: 1 });
  assert.ok(anyShown([small], z, 400, 400));
  // too big a focus: the window with the most of it, not a lone node at the top
  const lone = { x: 40, y: 0, width: 80, height: 30 };
  const crowd = [0, 1, 2, 3].map((i) => ({ x: 1000, y: 600 + 50 * i, width: 80, height: 30 }));
  const w = firstLook(box, [lone, ...crowd], 400, 400, { minK: 1 });
  assert.equal(w.clipped, true);
  assert.equal(crowd.filter((b) => anyShown([b], w, 400, 400)).length, 4);
  assert.equal(anyShown([{ x: 0, y: 0, width: 10, height: 10 }], { k: 1, x: -50, y: 0 }, 400, 400), false);
});
