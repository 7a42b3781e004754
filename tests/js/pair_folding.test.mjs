// Folding in a comparison's panes (mlclab/notebook/static/pair.js), run by node's own test
// runner (tests/test_viewer_js.py runs this): a pane's fold click goes to the comparison's
// fold_<side>, the kernel's new drawing and folds come back into the pane, with no echo.
import { test } from "node:test";
import assert from "node:assert/strict";
import { paneState, paneFolding, foldOfPane, syncFolding, forwardDrawn, shareGraphviz } from "../../mlclab/notebook/static/pair.js";
import { localModel } from "../../mlclab/notebook/static/host.js";

const VM = (tag) => ({ schema: "mlclab.view-model", nodes: {}, tag });

function setup() {
  const data = {
    left: VM("l0"), right: VM("r0"), left_name: "input", right_name: "FuseOps",
    fold_left: { open_modules: [], folded: [], full: false }, fold_right: { open_modules: ["enc"], folded: [], full: false },
  };
  const model = localModel(data);
  const sent = [];
  model.on("change:fold_left", () => sent.push(["fold_left", model.get("fold_left")]));
  const panes = { left: localModel(paneState(model.get, "left")), right: localModel(paneState(model.get, "right")) };
  return { model, panes, sent, off: syncFolding(model, panes) };
}

test("a pane starts folded as its side's fold says", () => {
  const { panes } = setup();
  assert.deepEqual(panes.right.get("open_modules"), ["enc"]);
  assert.deepEqual(paneFolding({ full: true }, "input"), { open_modules: [], folded: [], unfolded: ["input"] });
});

test("opening a module in a pane asks the comparison, once", () => {
  const { panes, sent } = setup();
  panes.left.set("open_modules", ["enc"]);
  panes.left.save_changes();
  assert.deepEqual(sent, [["fold_left", { open_modules: ["enc"], folded: [], full: false }]]);
  assert.deepEqual(foldOfPane(panes.left), { open_modules: ["enc"], folded: [], full: false });
});

test("the kernel's new drawing and folds reach the pane without coming back", () => {
  const { model, panes, sent } = setup();
  let redraws = 0;
  panes.left.on("change:views", () => { redraws += 1; });
  model.set("left", VM("l1"));
  model.set("fold_left", { open_modules: ["enc", "enc.0"], folded: [], full: false });
  model.save_changes();
  assert.equal(panes.left.get("views").input.tag, "l1");
  assert.deepEqual(panes.left.get("open_modules"), ["enc", "enc.0"]);
  assert.ok(redraws >= 1);
  assert.deepEqual(sent.filter(([, f]) => f.open_modules.length === 0), []);
  assert.equal(model.get("fold_left").open_modules.length, 2);
});

test("unjoined, the panes and the comparison no longer follow each other", () => {
  const { model, panes, sent, off } = setup();
  off();
  panes.left.set("open_modules", ["x"]);
  panes.left.save_changes();
  model.set("left", VM("l2"));
  model.save_changes();
  assert.deepEqual(sent, []);
  assert.equal(panes.left.get("views").input.tag, "l0");
});

test("a pane's 'drawn' reaches the kernel through the comparison's comm, with its side", () => {
  const { model, panes } = setup();
  const sent = [];
  model.send = (content) => sent.push(content);
  forwardDrawn(model, panes.right, "right");
  panes.right.send({ event: "drawn", view: "FuseOps" });
  assert.deepEqual(sent, [{ event: "drawn", view: "FuseOps", side: "right" }]);
  // A page has no kernel: its panes get no `send`, so they announce nothing.
  const page = setup();
  forwardDrawn(page.model, page.panes.left, "left");
  assert.equal(typeof page.panes.left.send, "undefined");
});

test("a pane's request for the WebAssembly Graphviz reaches the kernel, and its answer both panes", () => {
  const { model, panes, off } = setup();
  off();
  const sent = [];
  model.send = (content) => sent.push(content);
  forwardDrawn(model, panes.left, "left");
  panes.left.send({ event: "graphviz" });
  assert.deepEqual(sent, [{ event: "graphviz", side: "left" }]);
  const heard = [];
  panes.right.on("change:graphviz_wasm", () => heard.push(panes.right.get("graphviz_wasm")));
  const stop = shareGraphviz(model, panes);
  model.set("graphviz_wasm", "/* module */");
  model.save_changes();
  assert.equal(panes.left.get("graphviz_wasm"), "/* module */");
  assert.deepEqual(heard, ["/* module */"]);
  stop();
  model.set("graphviz_wasm", "/* other */");
  model.save_changes();
  assert.equal(panes.left.get("graphviz_wasm"), "/* module */");
});
