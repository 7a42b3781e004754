// The pass scrubber's pure parts (static/scrubber.js), run by node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";
import { passesOf, stops, stepFrom, findPasses, sameFrame, markCounts, passSummary, anchorsIn, bestPan, keptCount, layoutNote } from "../../mlclab/notebook/static/scrubber.js";

const PASSES = [
  { view: "0 · input", name: "input", changed: true },
  { view: "1 · FuseTransposeMatmul", name: "FuseTransposeMatmul", changed: true },
  { view: "2 · DispatchSampling", name: "DispatchSampling", changed: false },
  { view: "3 · LegalizeOps", name: "LegalizeOps", changed: true },
  { view: "4 · FoldConstant", name: "FoldConstant", changed: false },
  { view: "5 · FuseOps", name: "FuseOps", changed: true },
];
const model = (traits) => ({ get: (k) => traits[k] });

test("the passes come from the model, or one per view when it gives none", () => {
  assert.equal(passesOf(model({ passes: PASSES })).length, 6);
  const plain = passesOf(model({ views: { a: {}, b: {} } }));
  assert.deepEqual(plain.map((p) => p.view), ["a", "b"]);
  assert.ok(plain.every((p) => p.changed));
});

test("skipping unchanged passes keeps the input and the pass shown now", () => {
  assert.deepEqual(stops(PASSES, true, "0 · input").map((p) => p.name), ["input", "FuseTransposeMatmul", "LegalizeOps", "FuseOps"]);
  assert.equal(stops(PASSES, false, "0 · input").length, 6);
  // On an unchanged pass (reached with the toggle off), it stays a stop.
  assert.ok(stops(PASSES, true, "4 · FoldConstant").some((p) => p.name === "FoldConstant"));
});

test("stepping goes to the next stop, and stops at either end", () => {
  assert.equal(stepFrom(PASSES, true, "1 · FuseTransposeMatmul", 1), "3 · LegalizeOps");
  assert.equal(stepFrom(PASSES, false, "1 · FuseTransposeMatmul", 1), "2 · DispatchSampling");
  assert.equal(stepFrom(PASSES, true, "3 · LegalizeOps", -1), "1 · FuseTransposeMatmul");
  assert.equal(stepFrom(PASSES, true, "5 · FuseOps", 1), null);
  assert.equal(stepFrom(PASSES, true, "0 · input", -1), null);
  assert.equal(stepFrom(PASSES, true, "4 · FoldConstant", 1), "5 · FuseOps");
});

test("a pass is found by any part of its name, ignoring case", () => {
  assert.deepEqual(findPasses(PASSES, "fuse").map((p) => p.name), ["FuseTransposeMatmul", "FuseOps"]);
  assert.deepEqual(findPasses(PASSES, " LEGAL ").map((p) => p.name), ["LegalizeOps"]);
  assert.equal(findPasses(PASSES, "").length, 6);
  assert.equal(findPasses(PASSES, "nothing like it").length, 0);
});

test("two drawings align only when they share a stable layout", () => {
  const a = { geometry: { frame: "f1" } }, b = { geometry: { frame: "f1" } }, c = { geometry: { frame: "f2" } };
  assert.ok(sameFrame(a, b));
  assert.ok(!sameFrame(a, c));
  assert.ok(!sameFrame({ geometry: {} }, { geometry: {} }));
  assert.ok(!sameFrame(null, a));
});

test("the legend counts each mark of the pass's diff layer", () => {
  const view = { overlays: { diff: { a: { change: "grouped" }, b: { change: "grouped" }, c: { change: "removed" } } } };
  assert.deepEqual(markCounts(view), { grouped: 2, removed: 1 });
  assert.deepEqual(markCounts({}), {});
});

test("a new drawing finds every anchor it shares, by value, else (no value) by id", () => {
  const anchors = [{ id: "main:lv1", value: "v1", sx: 10, sy: 20 }, { id: "main:h", value: "vh", sx: 30, sy: 40 },
    { id: "mod:layer1", value: "", sx: 50, sy: 60 }];
  const view = { nodes: { "fused/gv": { value: "vh" }, "main:x": { value: "vx" }, "mod:layer1": {} } };
  assert.deepEqual(anchorsIn(anchors, view).map((a) => [a.id, a.sx]), [["fused/gv", 30], ["mod:layer1", 50]]);
  assert.deepEqual(anchorsIn(anchors, { nodes: { "main:x": { value: "vx" } } }), []);
});

// An anchor at screen (sx, sy) whose node sits at drawing point (cx, cy) in the new drawing.
const hit = (sx, sy, cx, cy) => ({ sx, sy, box: { x: cx - 5, y: cy - 5, width: 10, height: 10 } });

test("the pan that keeps the most shared nodes in place wins over the first anchor's", () => {
  // The first node moved by (40, 0) in the new layout; three others moved together by (0, 100).
  const hits = [hit(10, 10, 50, 10), hit(100, 10, 100, 110), hit(200, 10, 200, 110), hit(300, 50, 300, 150)];
  const best = bestPan(hits, 1);
  assert.deepEqual(best.zoom, { k: 1, x: 0, y: -100 });
  assert.equal(best.kept, 3);
  assert.equal(best.total, 4);
  assert.equal(keptCount(hits, best.zoom), 3);
  // At another scale the pans scale too: the same three agree.
  assert.equal(bestPan(hits.map((h) => ({ ...h, sx: h.sx / 2, sy: h.sy / 2 })), 0.5).kept, 3);
});

test("on a tie the earliest anchor (the selected node) wins; nothing shared gives no pan", () => {
  const hits = [hit(10, 10, 50, 10), hit(100, 10, 100, 110)];
  assert.deepEqual(bestPan(hits, 1).zoom, { k: 1, x: -40, y: 0 });
  assert.equal(bestPan([], 1), null);
});

test("a pass laid out anew says so, with how many shared nodes kept their place", () => {
  const fresh = { geometry: { frame: "f2", new_layout: true } }, same = { geometry: { frame: "f1" } };
  assert.equal(layoutNote(fresh, { kept: 7, total: 8 }),
    "new layout: this pass rewrote most of the program (7 of 8 nodes shared with the pass before kept their place)");
  assert.equal(layoutNote(fresh, null), "new layout: this pass rewrote most of the program");
  assert.match(layoutNote(same, { kept: 1, total: 8 }), /^another layout than the pass before: 1 of 8/);
  assert.equal(layoutNote(same, null), "");
});

test("a pass is summed up in one line: its marks, counted inside folded modules, else what no mark shows", () => {
  const folded = { overlays: { diff: { "m:layer1": { text: "3 rewritten inside", counts: { rewritten: 3 } },
    "f:y": { change: "rewritten", text: "rewritten by X" } } } };
  assert.deepEqual(markCounts(folded), { rewritten: 4 });
  assert.equal(passSummary({ name: "LegalizeOps", changed: true, form: "changed 3 kernels (TensorIR)" }, folded), "4 rewritten");
  // a pass that changed only kernels, weights or form says so instead of zero counts
  assert.equal(passSummary({ name: "ScheduleCPU", changed: true, form: "changed 21 kernels (TensorIR)" }, { overlays: { diff: {} } }),
    "changed 21 kernels (TensorIR); no value added, removed or recomputed");
  assert.equal(passSummary({ name: "FoldConstant", changed: false }, {}), "changed nothing");
  assert.equal(passSummary({ name: "input", changed: true }, {}), "the program as it came in");
});
