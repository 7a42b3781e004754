// DOM helpers. Every string from Python reaches the page through textContent or a sanitized
// SVG document, never through innerHTML.

export const SVG_NS = "http://www.w3.org/2000/svg";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v);
  }
  for (const c of children) if (c) el.append(c);
  return el;
}

// Graphviz output is trusted to be well formed, but the trait could be set to anything from
// Python: drop active content before it enters the DOM (defence in depth; Python sanitizes too).
// Whether `text` could hold what parseSvg removes: an element that runs or embeds something,
// an on* attribute, an href to anything but "#...", or entities declared in a DOCTYPE (their
// text is markup the parser expands, whatever it looked like in the source).
const RISKY = /<(script|foreignObject|iframe|object|embed)\b|\son[^\s=]*\s*=|href\s*=\s*(?!["']?#)|<!ENTITY|<!DOCTYPE[^>[]*\[/i;
export const mayHoldActiveContent = (text) => RISKY.test(text);

export function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  // Walking every attribute costs more than the parse: only when the text could hold
  // something to remove (a false alarm only costs the walk).
  if (!mayHoldActiveContent(text)) return document.importNode(svg, true);
  for (const bad of [...svg.querySelectorAll("script, foreignObject, iframe, object, embed")]) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith("on")) el.removeAttribute(attr.name);
      else if ((name === "href" || name.endsWith(":href")) && !value.startsWith("#")) el.removeAttribute(attr.name);
    }
  }
  return document.importNode(svg, true);
}

// The bounding box of an element in the root SVG's user space (what the viewBox measures):
// its own box moved by the transforms of the groups around it (Graphviz translates the whole
// drawing), not by the pan/zoom the viewer puts on the <svg> itself.
export function boxOf(el) {
  try {
    const b = el.getBBox(), m = el.getCTM();
    if (!m) return b;
    return { x: m.a * b.x + m.e, y: m.d * b.y + m.f, width: m.a * b.width, height: m.d * b.height };
  } catch { return null; }
}

// An element of `svg` by its id (ids hold ':' and '/', so no CSS selector).
export function byId(svg, id) {
  for (const el of svg.querySelectorAll("[id]")) if (el.id === id) return el;
  return null;
}

// All elements of `svg` with an id, by id: one pass instead of one query per node.
export function idIndex(svg) {
  const out = new Map();
  for (const el of svg.querySelectorAll("[id]")) if (!out.has(el.id)) out.set(el.id, el);
  return out;
}

// The text panes: one div per line, so a line can be marked and scrolled to.
export function fillLines(pre, text) {
  pre.replaceChildren(...(text || "").split("\n").map((line, i) =>
    h("div", { class: "mlclab-line", "data-line": String(i + 1) },
      h("span", { class: "mlclab-lineno", text: String(i + 1).padStart(3) + " " }),
      h("span", { text: line || " " }))));
}

// `fillLines` once the page is idle, then `then()` (a scrubber step draws its graph first: a
// pass's let text is hundreds of lines); the pane is dimmed until then, and a newer call for
// the same pane replaces a pending one.
const pendingFills = new WeakMap();
export function fillLinesSoon(pre, text, then) {
  const token = {}, idle = globalThis.requestIdleCallback || ((fn) => setTimeout(fn, 0));
  pendingFills.set(pre, token);
  pre.classList.add("mlclab-stale");
  idle(function fill(deadline) {
    if (pendingFills.get(pre) !== token) return;
    // About 1 ms per 100 lines: wait for a long enough idle period (a held arrow key first).
    if (deadline && deadline.timeRemaining() < Math.min(45, text.length / 4000)) { idle(fill); return; }
    pendingFills.delete(pre);
    fillLines(pre, text);
    pre.classList.remove("mlclab-stale");
    if (then) then();
  });
}

// Line `lineno` marked with `cls` (and scrolled to), the line marked before unmarked: line k
// is the pane's k-th child (fillLines), so no scan of every line.
export function markLine(pre, lineno, cls) {
  for (const div of pre.querySelectorAll(`:scope > .${cls}`)) div.classList.remove(cls);
  const at = Number.isInteger(lineno) ? pre.children[lineno - 1] : null;
  const hit = at && Number(at.dataset.line) === lineno ? at : null;
  if (!hit) return;
  hit.classList.add(cls);
  // Scroll the pane, never the notebook around it (scrollIntoView would move both).
  const r = hit.getBoundingClientRect(), p = pre.getBoundingClientRect();
  if (r.top < p.top) pre.scrollTop -= p.top - r.top;
  else if (r.bottom > p.bottom) pre.scrollTop += r.bottom - p.bottom;
}

// Save `text` as a local file called `name` (nothing leaves the machine).
export function download(text, name, type) {
  if (!text) return;
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// The drawing's own size (its viewBox, else its width and height), for fitting.
export function drawingBox(svg) {
  const vb = svg.viewBox && svg.viewBox.baseVal;
  return { x: 0, y: 0, width: (vb && vb.width) || parseFloat(svg.getAttribute("width")) || 1,
    height: (vb && vb.height) || parseFloat(svg.getAttribute("height")) || 1 };
}

// The smallest node label's font size in the drawing (14 if none says), for the readable minimum.
export function smallestFont(svg) {
  let min = Infinity;
  for (const t of svg.querySelectorAll("g.node text[font-size]")) {
    const size = parseFloat(t.getAttribute("font-size"));
    if (size > 0) min = Math.min(min, size);
  }
  return Number.isFinite(min) ? min : 14;
}
