// Switching views: the view buttons, or a scrubber's pass slider; and the two helpers every
// part of the viewer uses to read and change the model.

import { h } from "./dom.js";

export const currentView = (model) => (model.get("views") || {})[model.get("view")] || {};

export function save(model, changes) {
  for (const [name, value] of Object.entries(changes)) model.set(name, value);
  model.save_changes();
}

// A scrubber's passes: a slider, the pass's name, and step buttons.
function drawSlider(state, names) {
  const { model, ui } = state;
  const at = Math.max(0, names.indexOf(model.get("view")));
  const slider = h("input", { type: "range", class: "mlclab-scrub", min: "0", max: String(names.length - 1),
    value: String(at), "aria-label": "pass" });
  slider.addEventListener("input", () => save(model, { view: names[Number(slider.value)] }));
  const step = (d, text) => {
    const b = h("button", { type: "button", class: "mlclab-step", text });
    b.disabled = at + d < 0 || at + d >= names.length;
    b.addEventListener("click", () => save(model, { view: names[at + d] }));
    return b;
  };
  ui.viewButtons.replaceChildren(step(-1, "◀"), slider, step(1, "▶"),
    h("span", { class: "mlclab-pass", text: `${model.get("view")} (${at + 1}/${names.length})` }));
}

export function drawViewButtons(state) {
  const { model, ui } = state;
  if (model.get("scrub")) { drawSlider(state, Object.keys(model.get("views") || {})); return; }
  ui.viewButtons.replaceChildren(...Object.keys(model.get("views") || {}).map((name) => {
    const b = h("button", { type: "button", class: "mlclab-view", role: "tab", "data-view": name, text: name });
    b.classList.toggle("mlclab-active", name === model.get("view"));
    b.setAttribute("aria-selected", String(name === model.get("view")));
    b.addEventListener("click", () => save(model, { view: name }));
    return b;
  }));
}

