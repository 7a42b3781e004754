// A display's two pictures, one shown: every viewer display is its text/html twin
// (mlclab.notebook.page: static drawing + packed state + this front end, for exports and
// pages without a kernel) and then its widget. A front end that draws both shows one.

// A live viewer hides its text/html twin (mlclab.notebook.page), drawn in the output above it
// for exports and pages without a kernel, so a front end that shows both outputs shows one
// picture. It looks in the document and in its own root (an output in a shadow root), and
// marks itself so that a twin drawn after it (`drawnLive`) stands down too.
export function hideTwin(model, el) {
  const uid = model.get("uid");
  if (!uid || !model.get("live") || typeof document === "undefined") return;
  if (el) el.dataset.mlclabLive = uid;
  const roots = new Set([document, el && el.getRootNode ? el.getRootNode() : document]);
  for (const root of roots) {
    for (const twin of root.querySelectorAll(".mlclab-fallback[data-mlclab-for]")) {
      if (twin.dataset.mlclabFor === uid) twin.hidden = true;
    }
  }
}

// Whether a live widget already draws the display this twin (its `.mlclab-fallback` root)
// stands for: then the twin stays hidden and draws nothing (`hideTwin` marks the widget).
export function drawnLive(root) {
  const uid = root.dataset.mlclabFor;
  if (!uid || typeof document === "undefined") return false;
  for (const r of new Set([document, root.getRootNode()])) {
    for (const el of r.querySelectorAll("[data-mlclab-live]")) if (el.dataset.mlclabLive === uid) return true;
  }
  return false;
}
