// Two panes of a comparison (mlclab.notebook.compare), joined: pure functions of plain data,
// so `node --test` checks them without a browser.

export const SIDES = ["left", "right"];
export const otherSide = (side) => (side === "left" ? "right" : "left");

// The node of the other pane that matches node `id` of pane `side` (`matches`: left id ->
// right id, one to one), or "" when it has none.
export function counterpart(matches, side, id) {
  if (!id) return "";
  if (side === "left") return Object.prototype.hasOwnProperty.call(matches || {}, id) ? matches[id] : "";
  for (const [l, r] of Object.entries(matches || {})) if (r === id) return l;
  return "";
}

// The traits of one pane's viewer (static/viewer.js): its one view model, folded as the
// comparison's `fold_<side>` says, its node selected.
export function paneState(get, side) {
  const vm = get(side) || {};
  const name = get(`${side}_name`) || side;
  return {
    views: { [name]: vm }, view: name, source: get(`${side}_source`) || "", highlight: [], annotations: {},
    selected_node: get(`selected_${side}`) || "", search: "", uid: "", scrub: false, centre: "",
    graphviz_wasm: get("graphviz_wasm") || "", ...paneFolding(get(`fold_${side}`), name),
  };
}

// A side's `fold_<side>` ({open_modules, folded, full}) as a pane viewer's folding traits...
export function paneFolding(fold, name) {
  const f = fold || {};
  return { open_modules: f.open_modules || [], folded: f.folded || [], unfolded: f.full ? [name] : [] };
}

// ...and back: what a pane's folding clicks ask of the comparison.
export function foldOfPane(pane) {
  return { open_modules: pane.get("open_modules") || [], folded: pane.get("folded") || [],
    full: (pane.get("unfolded") || []).includes(pane.get("view")) };
}

// A pane's messages go through the comparison's comm, with its side: that it is drawn
// (viewer.js announceDrawn: the kernel then lays out the pairs of folds one click away,
// compare.py prefetch) or that it needs the WebAssembly Graphviz (layout.js graphvizSource).
// Nothing where the comparison has no kernel (a page's local model has no `send`).
export function forwardDrawn(model, pane, side) {
  if (typeof model.send === "function") pane.send = (content) => model.send({ ...content, side });
}

// The WebAssembly Graphviz a pane asked the kernel for (layout.js graphvizSource, through
// forwardDrawn's send) arrives as the comparison's `graphviz_wasm`: both panes get it.
export function shareGraphviz(model, panes) {
  const share = () => {
    const text = model.get("graphviz_wasm") || "";
    if (!text) return;
    for (const side of SIDES) { panes[side].set("graphviz_wasm", text); panes[side].save_changes(); }
  };
  model.on("change:graphviz_wasm", share);
  return () => model.off("change:graphviz_wasm", share);
}

// What selecting `id` in pane `side` asks of the comparison: the selection of both sides
// (the other one's the match, or nothing), and which node the other pane centres ("" none).
export function selectIn(matches, side, id) {
  const match = counterpart(matches, side, id);
  return { [`selected_${side}`]: id || "", [`selected_${otherSide(side)}`]: match, centre: match };
}

function set(model, changes) {
  for (const [name, value] of Object.entries(changes)) model.set(name, value);
  model.save_changes();
}

// Folding in a comparison: a pane's fold clicks go to the comparison's `fold_<side>` (the
// kernel opens the matching module on the other side and lays both out again); the kernel's
// new drawings and folds come back into the panes. Returns the function that unjoins them.
export function syncFolding(model, panes) {
  const off = [];
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  for (const side of SIDES) {
    const pane = panes[side];
    const onPane = () => {
      const want = foldOfPane(pane);
      if (!same(want, model.get(`fold_${side}`))) set(model, { [`fold_${side}`]: want });
    };
    const onModel = () => {
      const name = pane.get("view");
      const changes = paneFolding(model.get(`fold_${side}`), name);
      const vm = model.get(side) || {};
      if (vm !== (pane.get("views") || {})[name]) changes.views = { [name]: vm };
      for (const k of Object.keys(changes)) if (same(changes[k], pane.get(k))) delete changes[k];
      if (Object.keys(changes).length) set(pane, changes);
    };
    for (const ev of ["open_modules", "folded", "unfolded"]) pane.on(`change:${ev}`, onPane);
    for (const ev of [side, `fold_${side}`]) model.on(`change:${ev}`, onModel);
    off.push(() => {
      for (const ev of ["open_modules", "folded", "unfolded"]) pane.off(`change:${ev}`, onPane);
      for (const ev of [side, `fold_${side}`]) model.off(`change:${ev}`, onModel);
    });
  }
  return () => { for (const f of off) f(); };
}

// Join the comparison's `model` (selected_left/right, matches) and the two panes' models
// (`panes.left`, `panes.right`: each a viewer's selected_node and centre). A click in a pane
// selects its match in the other and centres it; the kernel's selection reaches the panes.
// Returns the function that unjoins them.
export function syncSelection(model, panes) {
  // The other pane's change must not come back: selecting a node with no match (the other
  // pane cleared) would clear itself.
  let syncing = false;
  const follow = (side, id) => {
    const want = selectIn(model.get("matches"), side, id), other = otherSide(side);
    if (panes[other].get("selected_node") !== want[`selected_${other}`]) {
      set(panes[other], { selected_node: want[`selected_${other}`], centre: want.centre });
    }
    if (model.get(`selected_${side}`) !== want[`selected_${side}`] || model.get(`selected_${other}`) !== want[`selected_${other}`]) {
      set(model, { [`selected_${side}`]: want[`selected_${side}`], [`selected_${other}`]: want[`selected_${other}`] });
    }
  };
  const apply = (side, id) => {
    if (syncing) return;
    syncing = true;
    try { follow(side, id); } finally { syncing = false; }
  };
  const off = [];
  for (const side of SIDES) {
    const pane = panes[side];
    const onPane = () => apply(side, pane.get("selected_node") || "");
    const onModel = () => {
      const id = model.get(`selected_${side}`) || "";
      if (pane.get("selected_node") !== id) set(pane, { selected_node: id, centre: id });
    };
    pane.on("change:selected_node", onPane);
    model.on(`change:selected_${side}`, onModel);
    off.push(() => { pane.off("change:selected_node", onPane); model.off(`change:selected_${side}`, onModel); });
  }
  return () => { for (const f of off) f(); };
}
