// Switching views: the view buttons, or a scrubber's controls (scrubber.js); and the two helpers every
// part of the viewer uses to read and change the model.

import { h } from "./dom.js";
import { drawScrubber } from "./scrubber.js";

export const currentView = (model) => (model.get("views") || {})[model.get("view")] || {};

export function save(model, changes) {
  for (const [name, value] of Object.entries(changes)) model.set(name, value);
  model.save_changes();
}

export function drawViewButtons(state) {
  const { model, ui } = state;
  if (model.get("scrub")) { drawScrubber(state, save); return; }
  ui.viewButtons.replaceChildren(...Object.keys(model.get("views") || {}).map((name) => {
    const b = h("button", { type: "button", class: "mlclab-view", role: "tab", "data-view": name, text: name });
    b.classList.toggle("mlclab-active", name === model.get("view"));
    b.setAttribute("aria-selected", String(name === model.get("view")));
    b.addEventListener("click", () => save(model, { view: name }));
    return b;
  }));
}

