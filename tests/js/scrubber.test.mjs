// The pass scrubber's pure parts (static/scrubber.js), run by node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";
import { passesOf, stops, stepFrom, findPasses, sameFrame, markCounts, anchorIn } from "../../mlclab/notebook/static/scrubber.js";

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

test("the next drawing is lined up on the first anchor whose value it still holds", () => {
  const anchors = [{ id: "main:lv1", value: "v1", sx: 10, sy: 20 }, { id: "main:h", value: "vh", sx: 30, sy: 40 }];
  const view = { nodes: { "fused/gv": { value: "vh" }, "main:x": { value: "vx" } } };
  assert.deepEqual(anchorIn(anchors, view), { id: "fused/gv", value: "vh", sx: 30, sy: 40 });
  assert.equal(anchorIn(anchors, { nodes: { "main:x": { value: "vx" } } }), null);
});
