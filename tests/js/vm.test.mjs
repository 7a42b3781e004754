// The viewer's pure parts, run by node's own test runner (tests/test_viewer_js.py runs this).
import { test } from "node:test";
import assert from "node:assert/strict";
import { searchHits, anchoredLine, namespaceChain, clickFold, collapsible, revealFolds,
  layerOf, overlaySummary, isViewModel, matchByValue, keepInPlace } from "../../mlclab/notebook/static/vm.js";
import { fitBox, unionBox, minScale, zoomAt, VIEWER_MIN_LABEL_PX } from "../../mlclab/notebook/static/fit.js";
import { localModel } from "../../mlclab/notebook/static/host.js";

// A view model as mlclab.viz.view_model.build makes it: main calls g, both bind y; layer1 folded.
const ns = (id, kind, parent, extra = {}) => ({ id, kind, label: id, parent, path: null, detail: "", folded: false,
  collapse: kind !== "module" && kind !== "function", nodes: 1, ops: 1, ...extra });
const VIEW = {
  schema: "mlclab.view-model", version: 1, name: "main", view: "dataflow", layout: "dataflow",
  nodes: {
    "main:y": { id: "main:y", label: "exp", name: "y", anchors: { let: 2, relax: 3 }, namespace: "fn:main", folded: null },
    "g:y": { id: "g:y", label: "log", name: "y", anchors: { let: 7, relax: 7 }, namespace: "fn:g", folded: null },
    "collapsed:fn:main/module:layer1": { id: "collapsed:fn:main/module:layer1", label: "layer1", namespace: "fn:main", anchors: {},
      folded: { namespace: "fn:main/module:layer1", kind: "module", label: "layer1 · Sequential", nodes: 9, ops: 4, path: "layer1", cls: "Sequential" } },
  },
  edges: [],
  namespaces: {
    "fn:main": ns("fn:main", "function", null), "fn:g": ns("fn:g", "function", null),
    "fn:main/module:layer1": ns("fn:main/module:layer1", "module", "fn:main", { path: "layer1", folded: true }),
    "fn:main/module:layer1.0": ns("fn:main/module:layer1.0", "module", "fn:main/module:layer1", { path: "layer1.0", folded: true }),
    "fused_exp": ns("fused_exp", "fused", "fn:main"),
  },
  texts: { let: "def @main(%x) {\n  let %y = exp(%x);\n  @g(%y)\n}\n\ndef @g(%a) {\n  log(%a)\n}", relax: "a\nb\ny = R.exp(x)\nc\nd\ne\ny = R.log(a)" },
  overlays: {
    search: { "main:y": { text: "exp y" }, "g:y": { text: "log y" }, "collapsed:fn:main/module:layer1": { text: "conv2d layer1.0.conv1" } },
    profile: { "collapsed:fn:main/module:layer1": { share: 0.41, text: "41 % of time", hottest: "main:lv7", reveal: ["fn:main", "fn:main/module:layer1", "fn:main/module:layer1.0"] } },
  },
  geometry: { svg: "", copies: {} },
};

test("a view model is recognised by its schema and version", () => {
  assert.ok(isViewModel(VIEW));
  assert.ok(!isViewModel({ pending: true }));
  assert.ok(!isViewModel({ ...VIEW, version: 2 }));
});

test("each y links to its own function's line in every text (the multi-function case)", () => {
  assert.equal(anchoredLine(VIEW, "main:y", "let"), "let %y = exp(%x);");
  assert.equal(anchoredLine(VIEW, "g:y", "let"), "log(%a)");
  assert.equal(anchoredLine(VIEW, "main:y", "relax"), "y = R.exp(x)");
  assert.equal(anchoredLine(VIEW, "g:y", "relax"), "y = R.log(a)");
  assert.equal(anchoredLine(VIEW, "collapsed:fn:main/module:layer1", "let"), "");
});

test("search reads the search layer; a folded module matches what it holds", () => {
  assert.deepEqual(searchHits(VIEW, "LOG"), ["g:y"]);
  assert.deepEqual(searchHits(VIEW, "layer1.0"), ["collapsed:fn:main/module:layer1"]);
  assert.deepEqual(searchHits(VIEW, "  "), []);
});

test("namespaces form one hierarchy", () => {
  assert.deepEqual(namespaceChain(VIEW, "fn:main/module:layer1.0"), ["fn:main", "fn:main/module:layer1", "fn:main/module:layer1.0"]);
});

test("a click on a folded module opens it; on an open module's label folds it and what it holds", () => {
  assert.deepEqual(clickFold(VIEW, { open_modules: [], folded: [] }, { node: "collapsed:fn:main/module:layer1" }), { open_modules: ["layer1"] });
  assert.deepEqual(clickFold(VIEW, { open_modules: ["layer1", "layer1.0"], folded: [] }, { namespace: "fn:main/module:layer1" }), { open_modules: [] });
  // A fused group folds by its id, and a click on its folded node opens it again.
  assert.deepEqual(clickFold(VIEW, { open_modules: [], folded: [] }, { namespace: "fused_exp" }), { folded: ["fused_exp"] });
  const folded = { ...VIEW, nodes: { n: { id: "n", folded: { namespace: "fused_exp", kind: "fused" } } } };
  assert.deepEqual(clickFold(folded, { open_modules: [], folded: ["fused_exp"] }, { node: "n" }), { folded: [] });
  // The function being shown and plain nodes do not fold.
  assert.equal(clickFold(VIEW, { open_modules: [], folded: [] }, { namespace: "fn:main" }), null);
  assert.equal(clickFold(VIEW, { open_modules: [], folded: [] }, { node: "g:y" }), null);
});

test("collapse groups folds inner namespaces, not modules or the functions", () => {
  assert.deepEqual(collapsible(VIEW), ["fused_exp"]);
});

test("jump to hottest opens the modules on its way", () => {
  const entry = layerOf(VIEW, "profile")["collapsed:fn:main/module:layer1"];
  assert.deepEqual(revealFolds(VIEW, entry.reveal, { open_modules: ["x"], folded: ["fused_exp"] }),
    { open_modules: ["x", "layer1", "layer1.0"], folded: ["fused_exp"] });
});

test("overlays are layers: the summary lists each, validation takes the widget's annotations too", () => {
  const extra = { "g:y": { status: "diverged", text: "differs" }, "nope": { status: "ok", text: "x" } };
  assert.deepEqual(Object.keys(layerOf(VIEW, "validation", extra)), ["g:y"]);
  assert.deepEqual(overlaySummary(VIEW, "collapsed:fn:main/module:layer1").map((o) => o.text), ["41 % of time"]);
  assert.deepEqual(overlaySummary(VIEW, "g:y", extra).map((o) => o.layer), ["validation"]);
});

test("fit never shrinks labels below the readable size; it shows the top instead", () => {
  const k = minScale(10);
  assert.equal(k * 10, VIEWER_MIN_LABEL_PX);
  const small = fitBox({ x: 0, y: 0, width: 200, height: 100 }, 600, 400, { minK: k });
  assert.deepEqual(small, { k: 1, x: 200, y: 150, clipped: false });
  const big = fitBox({ x: 0, y: 0, width: 6000, height: 8000 }, 600, 400, { minK: k });
  assert.equal(big.k, k);
  assert.ok(big.clipped);
  assert.equal(big.y, 0);
});

test("search zoom fits the union of the matches", () => {
  const box = unionBox([{ x: 10, y: 10, width: 20, height: 20 }, { x: 100, y: 50, width: 10, height: 10 }, null]);
  assert.deepEqual(box, { x: 10, y: 10, width: 100, height: 50 });
  const z = fitBox(box, 400, 300, { maxK: 1.5, pad: 20 });
  assert.ok(Math.abs(z.x + box.x * z.k - (400 - box.width * z.k) / 2) < 1e-9);
  assert.equal(unionBox([]), null);
});

test("zoom keeps the point under the cursor still and stays in range", () => {
  const z = zoomAt({ k: 1, x: 0, y: 0 }, 2, 100, 50);
  assert.deepEqual(z, { k: 2, x: -100, y: -50 });
  assert.equal(zoomAt({ k: 7, x: 0, y: 0 }, 4, 0, 0).k, 8);
});

test("the local model of a saved page answers like an anywidget model", () => {
  const m = localModel({ view: "dataflow", search: "" });
  const seen = [];
  m.on("change:search", () => seen.push(m.get("search")));
  m.set("search", "relu");
  assert.deepEqual(seen, []);
  m.save_changes();
  assert.deepEqual(seen, ["relu"]);
  assert.equal(m.get("live"), false);
});

test("a scrubbed node is matched across passes by its value id", () => {
  const before = { nodes: { "main:lv": { id: "main:lv", value: "main:y" }, "main:x": { id: "main:x", value: "main:x" } } };
  const after = { nodes: { "main:lv1": { id: "main:lv1", value: "main:y" }, "main:x": { id: "main:x", value: "main:x" } } };
  assert.equal(matchByValue(before, after, "main:lv"), "main:lv1");
  assert.equal(matchByValue(before, after, "main:x"), "main:x");
  assert.equal(matchByValue(before, { nodes: {} }, "main:lv"), null);
  assert.equal(matchByValue(before, after, ""), null);
});

test("keeping a node in place puts its centre back on the same screen point", () => {
  const z = keepInPlace({ x: 100, y: 40, width: 20, height: 10 }, 300, 200, 2);
  assert.deepEqual(z, { k: 2, x: 300 - 110 * 2, y: 200 - 45 * 2 });
});
