// Switching views: the view buttons, or a scrubber's controls (scrubber.js); and the two helpers every
// part of the viewer uses to read and change the model.

import { h } from "./dom.js";
import { drawScrubber } from "./scrubber.js";

// Views the kernel sent one at a time (a `view` message, viewer.py `_put_view`): syncing the
// whole `views` trait would send every view drawn so far again. A `views` change from the
// kernel holds all of them, so it drops these.
const sentViews = new WeakMap();

// What the kernel did not send again because it equals this front end's last drawing of the
// view (`same`: viewer.py `view_message`) is taken from that drawing.
export function receiveView(model, msg) {
  if (!msg || msg.event !== "view" || typeof msg.name !== "string" || !msg.view) return false;
  const view = { ...msg.view }, previous = viewNamed(model, msg.name);
  for (const key of Array.isArray(msg.same) ? msg.same : []) if (key in previous) view[key] = previous[key];
  sentViews.set(model, { ...(sentViews.get(model) || {}), [msg.name]: view });
  return true;
}

export function dropSentViews(model) { sentViews.delete(model); }

export const viewNamed = (model, name) => {
  const sent = sentViews.get(model);
  return (sent && sent[name]) || (model.get("views") || {})[name] || {};
};

export const currentView = (model) => viewNamed(model, model.get("view"));

export function save(model, changes) {
  for (const [name, value] of Object.entries(changes)) model.set(name, value);
  model.save_changes();
}

export function drawViewButtons(state) {
  const { model, ui } = state;
  if (model.get("scrub")) { drawScrubber(state, save, currentView(model)); return; }
  ui.viewButtons.replaceChildren(...Object.keys(model.get("views") || {}).map((name) => {
    const b = h("button", { type: "button", class: "mlclab-view", role: "tab", "data-view": name, text: name });
    b.classList.toggle("mlclab-active", name === model.get("view"));
    b.setAttribute("aria-selected", String(name === model.get("view")));
    b.addEventListener("click", () => save(model, { view: name }));
    return b;
  }));
}

