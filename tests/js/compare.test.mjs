// The comparison's join of two panes (mlclab/notebook/static/pair.js), run by node's own test
// runner (tests/test_viewer_js.py runs this): matching lookups and the synced selection.
import { test } from "node:test";
import assert from "node:assert/strict";
import { counterpart, paneState, selectIn, syncSelection } from "../../mlclab/notebook/static/pair.js";
import { localModel } from "../../mlclab/notebook/static/host.js";

const MATCHES = { "f:x": "f:x", "f:lv": "f:fused/lv", "f:h": "f:fused/gv" };

test("a node's counterpart is its match on either side, or nothing", () => {
  assert.equal(counterpart(MATCHES, "left", "f:lv"), "f:fused/lv");
  assert.equal(counterpart(MATCHES, "right", "f:fused/gv"), "f:h");
  assert.equal(counterpart(MATCHES, "left", "f:gone"), "");
  assert.equal(counterpart(MATCHES, "right", "f:new"), "");
  assert.equal(counterpart(MATCHES, "left", ""), "");
  // An inherited name is not a match.
  assert.equal(counterpart(MATCHES, "left", "toString"), "");
});

test("selecting asks for the match on the other side, centred there", () => {
  assert.deepEqual(selectIn(MATCHES, "left", "f:h"), { selected_left: "f:h", selected_right: "f:fused/gv", centre: "f:fused/gv" });
  assert.deepEqual(selectIn(MATCHES, "right", "f:new"), { selected_right: "f:new", selected_left: "", centre: "" });
});

test("a pane is one view of its side's view model, its selection the comparison's", () => {
  const data = { left: { nodes: {} }, left_name: "mlp · input", selected_left: "f:x", left_source: "def mlp(x):" };
  const s = paneState((n) => data[n], "left");
  assert.deepEqual(Object.keys(s.views), ["mlp · input"]);
  assert.equal(s.view, "mlp · input");
  assert.equal(s.selected_node, "f:x");
  assert.equal(s.scrub, false);
  assert.equal(s.source, "def mlp(x):");
});

function joined() {
  const model = localModel({ matches: MATCHES, selected_left: "", selected_right: "" });
  const panes = { left: localModel({ selected_node: "", centre: "" }), right: localModel({ selected_node: "", centre: "" }) };
  const unjoin = syncSelection(model, panes);
  return { model, panes, unjoin };
}

const click = (pane, id) => { pane.set("selected_node", id); pane.save_changes(); };

test("a click in one pane selects and centres its match in the other", () => {
  const { model, panes } = joined();
  click(panes.left, "f:lv");
  assert.equal(panes.right.get("selected_node"), "f:fused/lv");
  assert.equal(panes.right.get("centre"), "f:fused/lv");
  assert.equal(model.get("selected_left"), "f:lv");
  assert.equal(model.get("selected_right"), "f:fused/lv");
  click(panes.right, "f:fused/gv");
  assert.equal(panes.left.get("selected_node"), "f:h");
  assert.equal(panes.left.get("centre"), "f:h");
  assert.equal(model.get("selected_left"), "f:h");
});

test("a node with no match stays selected and clears the other pane", () => {
  const { model, panes } = joined();
  click(panes.left, "f:lv");
  click(panes.right, "f:new");
  assert.equal(panes.right.get("selected_node"), "f:new");
  assert.equal(panes.left.get("selected_node"), "");
  assert.equal(model.get("selected_right"), "f:new");
  assert.equal(model.get("selected_left"), "");
  click(panes.right, "");
  assert.equal(model.get("selected_right"), "");
});

test("the kernel's selection reaches its pane, and the other follows", () => {
  const { model, panes, unjoin } = joined();
  model.set("selected_left", "f:h");
  model.save_changes();
  assert.equal(panes.left.get("selected_node"), "f:h");
  assert.equal(panes.right.get("selected_node"), "f:fused/gv");
  assert.equal(model.get("selected_right"), "f:fused/gv");
  unjoin();
  click(panes.left, "f:x");
  assert.equal(panes.right.get("selected_node"), "f:fused/gv");
});

test("stacked panes are named top and bottom, side by side left and right", async () => {
  const { sideWords } = await import("../../mlclab/notebook/static/compare.js");
  assert.equal(sideWords("13 matched, 5 only left, 3 only right", true), "13 matched, 5 only top, 3 only bottom");
  assert.equal(sideWords("13 matched, 5 only left, 3 only right", false), "13 matched, 5 only left, 3 only right");
  assert.equal(sideWords("leftover", true), "leftover");
});
