// The state a page or a notebook's text/html twin carries (mlclab.notebook.page): JSON,
// zlib-compressed and base64-encoded (as treescope does; a ResNet-50 view model shrinks about
// eight times), inflated here with the browser's own DecompressionStream. A browser without
// one keeps the static drawing and says why.

import { h } from "./dom.js";

export const PACKED = "zlib+base64";

export const NO_DECOMPRESSION = "this browser has no DecompressionStream (Chrome 80+, Firefox 113+, " +
  "Safari 16.4+ have it), so the interactive viewer cannot unpack its data: the static drawing is shown";

// The state held by <script class="mlclab-state">: plain JSON, or packed (data-encoding).
export async function unpackState(script) {
  const text = (script.textContent || "").trim();
  if (script.dataset.encoding !== PACKED) return JSON.parse(text);
  if (typeof DecompressionStream === "undefined") throw new Error(NO_DECOMPRESSION);
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  // "deflate" is the zlib format (header and checksum) that Python's zlib.compress writes.
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
}

// Where the state could not be read: a note above the static drawing, which stays.
export function unpackFailed(mount, err) {
  const why = err && err.message ? err.message : String(err);
  mount.prepend(h("div", { class: "mlclab-hint mlclab-unpack-error", text: `mlclab: ${why}` }));
}
