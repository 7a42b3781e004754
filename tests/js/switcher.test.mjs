// The views a viewer reads (static/switcher.js): the `views` trait, and the views the kernel
// sent one at a time (a `view` message) so that a new pass does not re-send every other.
import { test } from "node:test";
import assert from "node:assert/strict";
import { currentView, receiveView, dropSentViews } from "../../mlclab/notebook/static/switcher.js";
import { localModel } from "../../mlclab/notebook/static/host.js";

const PENDING = { pending: true };

test("a view sent alone is the one drawn, until the kernel's whole views trait comes again", () => {
  const model = localModel({ views: { a: { nodes: { x: {} } }, b: PENDING }, view: "b" });
  assert.deepEqual(currentView(model), PENDING);
  assert.ok(receiveView(model, { event: "view", name: "b", view: { nodes: { y: {} } } }));
  assert.deepEqual(currentView(model), { nodes: { y: {} } });
  model.set("view", "a");
  assert.deepEqual(currentView(model), { nodes: { x: {} } });
  // The kernel syncs every view (a folding changed): what it sends wins.
  model.set("views", { a: PENDING, b: { nodes: { z: {} } } });
  dropSentViews(model);
  model.set("view", "b");
  assert.deepEqual(currentView(model), { nodes: { z: {} } });
});

test("other messages are not views", () => {
  const model = localModel({ views: { a: PENDING }, view: "a" });
  assert.equal(receiveView(model, { event: "drawn", view: "a" }), false);
  assert.equal(receiveView(model, { event: "view", name: 3, view: {} }), false);
  assert.equal(receiveView(model, null), false);
  assert.deepEqual(currentView(model), PENDING);
});

test("what a fold left as it was is taken from the view's last drawing", () => {
  const texts = { let: "let %x = ..." };
  const model = localModel({ views: { a: { nodes: { x: {} }, texts, namespaces: { n: {} } } }, view: "a" });
  assert.ok(receiveView(model, { event: "view", name: "a", view: { nodes: { y: {} } }, same: ["texts", "namespaces", "overlays"] }));
  // Named but absent before (overlays): not made up.
  assert.deepEqual(currentView(model), { nodes: { y: {} }, texts, namespaces: { n: {} } });
  // The next fold's message builds on the drawing the last message made.
  receiveView(model, { event: "view", name: "a", view: { nodes: { z: {} }, namespaces: { m: {} } }, same: ["texts"] });
  assert.deepEqual(currentView(model), { nodes: { z: {} }, texts, namespaces: { m: {} } });
});
