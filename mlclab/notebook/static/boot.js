// How a page without a kernel (a saved file, an export, a text/html twin, fn.graph()'s HTML)
// starts its front end: unless its widget already draws it, unpack the state it carries and
// render it over a local model. A module of its own, so that the join (bundle.py) gives every
// page what this needs by following these imports, whatever the page's entry imports.

import { localModel } from "./host.js";
import { unpackState, unpackFailed } from "./unpack.js";
import { drawnLive } from "./twin.js";

// `root`: the page's `.mlclab-fallback` (its static drawing in `.mlclab-mount`, its state in
// `script.mlclab-state`); `render`: the entry's render ({ model, el }).
export function bootPage(root, render) {
  const mount = root.querySelector(".mlclab-mount");
  if (drawnLive(root)) { root.hidden = true; return; }
  unpackState(root.querySelector("script.mlclab-state")).then((data) => {
    // Its widget drew meanwhile, or the twin holding it (a %%tinynn cell's) was hidden.
    if (root.hidden || drawnLive(root) || (root.parentElement && root.parentElement.closest(".mlclab-fallback[hidden]"))) return;
    mount.replaceChildren();
    render({ model: localModel(data), el: mount });
  }, (err) => unpackFailed(mount, err));
}
