// Layout in the browser (mlclab/notebook/static/layout.js), its parts that need no DOM, run by
// node's own test runner (tests/test_viewer_js.py runs this). The WebAssembly Graphviz itself
// is run by tests/test_browser_layout.py (node) and tests/browser/ (Chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { awaitingLayout, layOutDot, loadGraphviz, graphvizSource } from "../../mlclab/notebook/static/layout.js";

// A widget model as anywidget gives one: traits, change events, messages to the kernel.
function widgetModel(traits, kernel) {
  const handlers = new Map();
  const model = {
    get: (name) => traits[name],
    on: (event, fn) => handlers.set(event, [...(handlers.get(event) || []), fn]),
    off: (event, fn) => handlers.set(event, (handlers.get(event) || []).filter((f) => f !== fn)),
  };
  if (kernel) {
    model.send = (msg) => kernel(msg, (name, value) => {
      traits[name] = value;
      for (const fn of handlers.get(`change:${name}`) || []) fn();
    });
  }
  return { model, handlers };
}

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

test("the module is taken from the model when sent, else asked of the kernel once", async () => {
  assert.equal(await graphvizSource(widgetModel({ graphviz_wasm: "module text" }).model, null), "module text");
  const asked = [];
  const { model, handlers } = widgetModel({ graphviz_wasm: "" }, (msg, set) => {
    asked.push(msg);
    setTimeout(() => set("graphviz_wasm", "sent by the kernel"), 5);
  });
  assert.equal(await graphvizSource(model, null), "sent by the kernel");
  assert.deepEqual(asked, [{ event: "graphviz" }]);
  assert.equal(handlers.get("change:graphviz_wasm").length, 0);    // stopped listening
});

test("a page with no kernel and no module says the module was not sent", async () => {
  await assert.rejects(graphvizSource(widgetModel({ graphviz_wasm: "" }).model, null), /no WebAssembly Graphviz was sent/);
});

test("a module getter is asked only when no Graphviz is loaded, and its failure is said", async () => {
  const cache = (globalThis.__mlclabGraphviz ||= {});
  cache.loading = null;
  let asked = 0;
  await assert.rejects(loadGraphviz(() => { asked += 1; return Promise.resolve(""); }), /no WebAssembly Graphviz was sent/);
  assert.equal(asked, 1);
  const loaded = Promise.resolve({ dot: () => "<svg/>" });
  cache.loading = loaded;
  assert.equal(loadGraphviz(() => { asked += 1; return "unused"; }), loaded);
  assert.equal(asked, 1);
  cache.loading = null;
});
