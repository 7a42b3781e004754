// Layout in the browser (mlclab/notebook/static/layout.js), its parts that need no DOM, run by
// node's own test runner (tests/test_viewer_js.py runs this). The WebAssembly Graphviz itself
// is run by tests/test_browser_layout.py (node) and tests/browser/ (Chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitingLayout, layOutDot, loadGraphviz } from "../../mlclab/notebook/static/layout.js";

test("a view waits for the browser only when it has DOT and no SVG", () => {
  assert.equal(awaitingLayout({ geometry: { svg: "", dot: "digraph {}" } }), true);
  assert.equal(awaitingLayout({ geometry: { svg: "<svg/>", dot: "digraph {}" } }), false);
  assert.equal(awaitingLayout({ geometry: { svg: "", text: "a graph", note: "timed out" } }), false);
  assert.equal(awaitingLayout({ pending: true }), false);
  assert.equal(awaitingLayout(null), false);
});

test("without the module, loading says so, and a later call may still load it", async () => {
  await assert.rejects(loadGraphviz(""), /no WebAssembly Graphviz was sent/);
  await assert.rejects(loadGraphviz(undefined), /no WebAssembly Graphviz was sent/);
});

test("a drawing made once on the page is not laid out again", async () => {
  const drawings = ((globalThis.__mlclabGraphviz ||= {}).drawings ||= new Map());
  drawings.set("digraph { a }", "<svg>kept</svg>");
  // No module is given: only the kept drawing can answer.
  assert.equal(await layOutDot("digraph { a }", ""), "<svg>kept</svg>");
  await assert.rejects(layOutDot("digraph { b }", ""), /no WebAssembly Graphviz/);
});
