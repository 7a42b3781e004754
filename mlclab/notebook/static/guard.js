// The live half of a composite display (a %%tinynn cell, a compiled function, a validation
// report: ipywidgets boxes of tabs, texts and graph viewers) stands its text/html twin down
// (twin.js), whatever its tabs hold: this widget draws nothing and does only that.

import { hideTwin } from "./twin.js";

function renderGuard({ model, el }) {
  el.classList.add("mlclab-twin-guard");
  hideTwin(model, el);
}

export default { render: renderGuard };
