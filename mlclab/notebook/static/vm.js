// The view model, read (mlclab.viz.view_model; schema in docs/view-model.md). Pure functions of
// plain data: no DOM, so `node --test` checks them without a browser.

export const SCHEMA = "mlclab.view-model";
export const VERSION = 1;

// Whether `view` is a view model this viewer reads (a pending or failed view is not).
export function isViewModel(view) {
  return !!view && view.schema === SCHEMA && view.version === VERSION;
}

export const nodesOf = (view) => (view && view.nodes) || {};
export const namespacesOf = (view) => (view && view.namespaces) || {};

// Layer `name` of a view (node id -> entry); `extra` (the widget's annotations) joins the
// validation layer.
export function layerOf(view, name, extra) {
  const layer = { ...(((view && view.overlays) || {})[name] || {}) };
  if (name === "validation" && extra) {
    const nodes = nodesOf(view);
    for (const [id, entry] of Object.entries(extra)) if (nodes[id]) layer[id] = entry;
  }
  return layer;
}

// Node ids whose search text holds `query` (case-insensitive); none for an empty query.
export function searchHits(view, query) {
  const q = (query || "").trim().toLowerCase();
  if (!q) return [];
  const layer = layerOf(view, "search");
  return Object.keys(nodesOf(view)).filter((id) => ((layer[id] || {}).text || "").toLowerCase().includes(q));
}

// The line of text `style` that defines node `id` (1-based), or null.
export function anchorOf(view, id, style) {
  const node = nodesOf(view)[id];
  const line = node && node.anchors ? node.anchors[style] : undefined;
  return Number.isInteger(line) ? line : null;
}

// The text of `style` at node `id`'s anchor (trimmed), or "".
export function anchoredLine(view, id, style) {
  const line = anchorOf(view, id, style);
  const text = ((view && view.texts) || {})[style];
  if (!line || !text) return "";
  return (text.split("\n")[line - 1] || "").trim();
}

// A namespace and its ancestors, outermost first.
export function namespaceChain(view, id) {
  const spaces = namespacesOf(view), out = [];
  for (let ns = id, guard = 0; ns && spaces[ns] && guard < 256; ns = spaces[ns].parent, guard++) out.unshift(ns);
  return out;
}

// What a click asks for, as trait changes: {open_modules?, folded?} (the kernel lays the
// result out). A folded node opens its namespace; an open namespace's label folds it.
export function clickFold(view, state, target) {
  const spaces = namespacesOf(view);
  const open = state.open_modules || [], folded = state.folded || [];
  if (target.node) {
    const node = nodesOf(view)[target.node];
    const f = node && node.folded;
    if (!f) return null;
    if (folded.includes(f.namespace)) return { folded: folded.filter((n) => n !== f.namespace) };
    if (f.kind === "module" && f.path) return { open_modules: [...open, f.path] };
    return null;
  }
  const ns = spaces[target.namespace];
  if (!ns) return null;
  if (ns.kind === "module" && ns.path && open.includes(ns.path)) {
    return { open_modules: open.filter((p) => p !== ns.path && !p.startsWith(ns.path + ".")) };
  }
  if (ns.kind === "function" && ns.id === `fn:${view.name}`) return null;   // the function shown
  return { folded: [...folded.filter((n) => n !== ns.id), ns.id] };
}

// The namespaces "collapse groups" folds: those whose kind says so (mlclab.viz.namespaces;
// modules fold by level, the functions shown stay open).
export function collapsible(view) {
  return Object.values(namespacesOf(view)).filter((ns) => !ns.folded && ns.collapse).map((ns) => ns.id);
}

// What to open so node `id` of the whole graph shows: an overlay's `reveal` (namespace ids,
// outermost first) as trait changes.
export function revealFolds(view, reveal, state) {
  const spaces = namespacesOf(view);
  const paths = [], ids = new Set(reveal || []);
  for (const ns of reveal || []) if (spaces[ns] && spaces[ns].kind === "module" && spaces[ns].path) paths.push(spaces[ns].path);
  return {
    open_modules: [...new Set([...(state.open_modules || []), ...paths])],
    folded: (state.folded || []).filter((n) => !ids.has(n)),
  };
}

// The banner line of a folded view: how much it shows and how much is folded.
export function foldSummary(view) {
  const shown = view && view.overview;
  const folded = Object.values(nodesOf(view)).filter((n) => n.folded).length;
  if (!shown) return folded ? `${folded} folded` : "";
  return `${shown.shown} of ${shown.total} nodes, ${folded} folded`;
}

// The one-line summary of a node's overlays, for the details pane: "layer3 · 41 % of time".
export function overlaySummary(view, id, extra) {
  const parts = [];
  for (const name of Object.keys((view && view.overlays) || {})) {
    if (name === "search") continue;
    const entry = layerOf(view, name, extra)[id];
    if (entry && entry.text) parts.push({ layer: name, text: entry.text, hottest: entry.hottest || null, reveal: entry.reveal || null });
  }
  if (extra && !((view && view.overlays) || {}).validation) {
    const entry = layerOf(view, "validation", extra)[id];
    if (entry && entry.text) parts.push({ layer: "validation", text: entry.text, hottest: null, reveal: null });
  }
  return parts;
}

// Node `id` of view `from` in view `to`: the same id, else the node holding the same value
// (a pass renames bindings but keeps value ids), else null.
export function matchByValue(from, to, id) {
  const nodes = nodesOf(to);
  if (!id) return null;
  if (nodes[id]) return id;
  const value = (nodesOf(from)[id] || {}).value;
  if (!value) return null;
  const hit = Object.values(nodes).find((n) => n.value === value);
  return hit ? hit.id : null;
}

// Where `box` (drawing units) must go so that its centre lands on screen point (sx, sy) at
// scale k: the pan that keeps a node in place across views.
export function keepInPlace(box, sx, sy, k) {
  return { k, x: sx - (box.x + box.width / 2) * k, y: sy - (box.y + box.height / 2) * k };
}
