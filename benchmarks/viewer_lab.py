"""The viewer's first display and module folding timed in a real JupyterLab (issue 20).

Starts an isolated JupyterLab (the browser tests' harness, tests/browser/conftest.py) and drives
Chromium through Playwright. A notebook builds the model (not timed), then, ``--repeat`` times,
each timed in the page with ``performance.now()`` from the event to the new drawing painted:

- first display: from running the ``fn.viewer()`` cell until the widget's graph is drawn
  (kernel: view model and Graphviz; comm; browser: parse and draw);
- cold clicks, while the kernel's background layouts (notebook/fold_layouts.py) still run:
  open the first module of ``CLICKS`` right after the first display, then the second right
  after that drawing;
- warm clicks, after a student has looked for ``--think`` seconds (the background is done):
  open the other modules, then close each again by its label.

Each row gives the median and the worst of the repetitions, and the machine's load average
(1 min) is printed with them: the machine is shared, so compare runs made together
(``--code`` times another checkout of mlclab in the same harness, for interleaved before/after
runs). ``--probe`` also logs, in the kernel, when each click arrived, what the layouts did
(laid out at the click, waited for the background, or ready) and when the answer left, so a
slow click says where its milliseconds went.

    python benchmarks/viewer_lab.py resnet50|bert [--repeat 5] [--probe] [--code DIR]
    (or viewer_interaction.py --lab resnet50|bert)

Needs /usr/bin/chromium. Issue 20's targets: interactions under 100 ms, first display under 1 s.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]

BUILD = {
    "resnet50": (
        "tv = mlclab.import_torchvision()\ntorch.manual_seed(0)\n"
        "fn = mlclab.from_torch(tv.models.resnet50(weights=None).eval(), "
        "torch.randn(1, 3, 224, 224))"),
    "bert": (
        "mlclab.import_torchvision()\nfrom transformers import BertConfig, BertModel\n"
        "torch.manual_seed(0)\n"
        "m = BertModel(BertConfig(attn_implementation='eager')).eval()\n"
        "fn = mlclab.from_torch(m, torch.randint(0, 30522, (1, 128)))"),
}

# What a student clicks, per model: module paths opened in turn (each inside the one before
# where nested), the first two cold, the others warm; then closed again innermost first.
CLICKS = {"resnet50": ["layer3", "layer3.2", "layer1", "layer4"],
          "bert": ["encoder", "encoder.layer.5", "encoder.layer.5.attention", "embeddings"]}

# The kernel side of --probe: timestamps (ms since the epoch, as the page's) of each click's
# arrival and answer, and of every layout with the thread that made it.
PROBE = r'''
import threading, time
import mlclab.notebook.fold_layouts as _fl, mlclab.notebook.viewer as _vw, mlclab.viz.dot as _dot
PROBE = []
def _mark(what, **kw):
    PROBE.append([time.time() * 1000, threading.current_thread().name, what, kw])
def _wrap_init(init):
    def wrapped(self, layout, *a, **k):
        def timed(view, fold):
            _mark("layout", open=sorted(fold.open_modules or ()))
            try:
                return layout(view, fold)
            finally:
                _mark("layout done")
        init(self, timed, *a, **k)
    return wrapped
_fl.FoldLayouts.__init__ = _wrap_init(_fl.FoldLayouts.__init__)
def _wrap(name, before, after):
    f = getattr(_vw.GraphViewer, name)
    def wrapped(self, *a, **k):
        _mark(before, open=list(self.open_modules))
        try:
            return f(self, *a, **k)
        finally:
            _mark(after)
    setattr(_vw.GraphViewer, name, wrapped)
_wrap("_load", "click", "answer sent")
_run_dot = _dot.run_dot
def _timed_dot(*a, **k):
    _mark("dot")
    try:
        return _run_dot(*a, **k)
    finally:
        _mark("dot done")
_dot.run_dot = _timed_dot
'''


def notebook(model: str, code: str = "", probe: bool = False, setup: str = "") -> dict:
    def cell(src):
        return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                "source": src}
    path = f"import sys\nsys.path.insert(0, {code!r})\n" if code else ""
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": [cell(path + "import torch\nimport mlclab\nimport mlclab.notebook\n"
                           + (PROBE if probe else "") + setup + "\n" + BUILD[model]),
                      cell("viewer = fn.viewer()\nviewer"),
                      cell("import json\nprint('PROBE' + json.dumps(PROBE))\nPROBE.clear()"
                           if probe else "")]}


# In the page: run cell `index`, resolve with [ms until the live widget's graph is drawn,
# epoch ms of the start].
FIRST_DISPLAY = """async (index) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  nb.activeCellIndex = index;
  const t0 = performance.now();
  window.jupyterapp.commands.execute('notebook:run-cell');
  const drawn = () => [...document.querySelectorAll('.mlclab-viewer')].some(
      (v) => !v.closest('.mlclab-fallback') && v.querySelector('svg.mlclab-graph g.node'));
  while (!drawn()) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => requestAnimationFrame(() => r()));
  return [performance.now() - t0, performance.timeOrigin + t0];
}"""

# In the page: click what `selector` finds in the live widget (the pointer on it `aim` ms
# before, as a hand homes in on a target; 0: a click out of nowhere); resolve with [ms from the
# click until `done` (a selector) is there and `selector` is gone, painted; epoch ms of it].
CLICK_UNTIL = """async ([selector, done, aim]) => {
  const v = [...document.querySelectorAll('.mlclab-viewer')]
    .find((x) => !x.closest('.mlclab-fallback'));
  const target = v.querySelector(selector);
  if (!target) throw new Error('nothing to click: ' + selector);
  if (aim) {
    target.dispatchEvent(new MouseEvent('mouseenter', {bubbles: false}));
    await new Promise((r) => setTimeout(r, aim));
  }
  const t0 = performance.now();
  target.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0}));
  target.dispatchEvent(new PointerEvent('pointerup', {bubbles: true, button: 0}));
  target.dispatchEvent(new MouseEvent('click', {bubbles: true, button: 0}));
  while (!(v.querySelector(done) && !v.querySelector(selector)))
    await new Promise((r) => setTimeout(r, 2));
  await new Promise((r) => requestAnimationFrame(() => r()));
  return [performance.now() - t0, performance.timeOrigin + t0];
}"""

# The page side of --probe: epoch ms at which each message over 50 kB (a view model) arrived.
WS_PROBE = """(() => {
  window.__big = [];
  const Real = window.WebSocket;
  window.WebSocket = class extends Real {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', (e) => {
        const n = e.data.byteLength || e.data.size || e.data.length || 0;
        if (n > 50000) window.__big.push(performance.timeOrigin + performance.now());
      });
    }
  };
})()"""

def _selectors(path: str) -> tuple:
    node = f'g.node[id$={json.dumps("/module:" + path)}][id^="collapsed:"]'
    cluster = f'g.cluster[id$={json.dumps("/module:" + path)}]'
    return node, cluster


def _open(page, path, aim=0):
    return page.evaluate(CLICK_UNTIL, [*_selectors(path), aim])


def _close(page, path):
    node, cluster = _selectors(path)
    return page.evaluate(CLICK_UNTIL, [f"{cluster} .mlclab-cluster-handle", node, 0])


def session(page, paths, think: float, probe: bool, aim: int) -> dict:
    """One repetition: first display, two cold opens, the warm opens and closes; each entry
    [ms, epoch ms of the event], plus the load and (``probe``) the kernel's log."""
    time.sleep(2 * think)             # the previous display's background layouts are done
    out = {"load": os.getloadavg()[0], "first display": page.evaluate(FIRST_DISPLAY, 1)}
    out["cold"] = [_open(page, paths[0], aim), _open(page, paths[1], aim)]
    out["warm open"], out["warm close"] = [], []
    for path in paths[2:]:
        time.sleep(think)
        out["warm open"].append(_open(page, path, aim))
    for path in reversed(paths):
        time.sleep(think)
        out["warm close"].append(_close(page, path))
    if probe:
        from tests.browser.conftest import RUN_CELL

        text = page.evaluate(RUN_CELL, 2)
        out["probe"] = json.loads(text[text.index("PROBE") + 5:].strip())
        out["arrivals"] = page.evaluate("() => window.__big.splice(0)")
    return out


@contextlib.contextmanager
def lab_page(nb: dict, width: int, init_script: str = ""):
    """A Chromium page ``width`` px wide on a fresh, isolated JupyterLab (the browser tests'
    harness) with notebook ``nb`` open and run once; ``init_script`` runs in the page first."""
    sys.path.insert(0, str(REPO))
    from playwright.sync_api import sync_playwright
    from tests.browser.conftest import CHROMIUM, _run_all, _serve

    with tempfile.TemporaryDirectory() as tmp:
        server = _serve(pathlib.Path(tmp), "jupyterlab", "LabApp", "lab/tree",
                        "--LabApp.news_url=None",
                        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate")
        lab = next(server)
        try:
            (lab.root / "bench.ipynb").write_text(json.dumps(nb))
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path=str(CHROMIUM), args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run"])
                page = b.new_page(viewport={"width": width, "height": 900})
                if init_script:
                    page.add_init_script(init_script)
                _run_all(page, lab, "bench.ipynb")
                yield page
                b.close()
        finally:
            next(server, None)


def run(model: str, repeat: int = 5, think: float = 1.5, probe: bool = False, code: str = "",
        shot: str = "", setup: str = "", aim: int = 0) -> dict:
    """Timings in ms (see the module docstring): ``{row: [median, worst]}``, the loads and
    each repetition's raw times. ``code``: the checkout of mlclab the kernel imports (default
    this one); ``shot``: a screenshot name (test-artifacts/) taken at the end; ``setup``: code
    the first cell runs before the build (an experiment's setting); ``aim``: ms the pointer
    rests on a module before it is clicked open."""
    paths = CLICKS[model]
    with lab_page(notebook(model, code, probe, setup), 1100,
                  WS_PROBE if probe else "") as page:   # when each layout reaches the page
        if probe:
            from tests.browser.conftest import RUN_CELL

            page.evaluate(RUN_CELL, 2)          # the build's own log, not timed
        runs = [session(page, paths, think, probe, aim) for _ in range(repeat)]
        if shot:
            (REPO / "test-artifacts").mkdir(exist_ok=True)
            page.screenshot(path=str(REPO / "test-artifacts" / f"{shot}.png"))
    return summary(runs, paths)


def summary(runs: list, paths: list) -> dict:
    def row(values):
        return [statistics.median(values), max(values)]
    out = {
        "first display: run cell -> graph drawn": row([r["first display"][0] for r in runs]),
        f"cold: open {paths[0]} right after first display": row([r["cold"][0][0] for r in runs]),
        f"cold: open {paths[1]} right after that": row([r["cold"][1][0] for r in runs]),
        "warm: open a module after looking": row([t for r in runs for t, _ in r["warm open"]]),
        "warm: close a module by its label": row([t for r in runs for t, _ in r["warm close"]]),
        "load average (1 min) per repetition": [round(r["load"], 1) for r in runs],
        "cold opens per repetition": [[round(t) for t, _ in r["cold"]] for r in runs],
    }
    if "probe" in runs[0]:
        out["where the cold clicks' ms went"] = [where(r, k) for r in runs for k in (0, 1)]
    return out


def where(rep: dict, k: int) -> str:
    """One cold click, from the kernel's log: ms from the click until the kernel took it up,
    laying out (at the click: "here", or waited for the background: "waited", or "ready"),
    until the answer left, until it reached the page and until it was painted; how many
    layouts the background started around it."""
    ms, t0 = rep["cold"][k]
    log = [e for e in rep["probe"] if e[0] >= t0]
    click = next((e for e in log if e[2] == "click"), None)
    sent = next((e for e in log if e[2] == "answer sent" and click and e[0] >= click[0]), None)
    if click is None or sent is None:
        return f"{ms:.0f} ms: no kernel log"
    here = [e for e in log if e[2] == "layout" and e[1] == click[1] and click[0] <= e[0] <= sent[0]]
    behind = [e for e in rep["probe"] if e[2] == "layout" and e[1] != click[1]
              and e[0] <= sent[0] and e[0] >= t0 - 2000]
    how = "here" if here else ("waited" if sent[0] - click[0] > 5 else "ready")
    came = next((t for t in rep.get("arrivals", ()) if t >= sent[0] - 5), t0 + ms)
    return (f"{ms:.0f} ms = {click[0] - t0:.0f} to the kernel + {sent[0] - click[0]:.0f} "
            f"({how}) + {came - sent[0]:.0f} to the page + {t0 + ms - came:.0f} drawing; "
            f"background layouts started since 2 s before: {len(behind)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted(BUILD), nargs="?", default="resnet50")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--think", type=float, default=1.5)
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--code", default="", help="another mlclab checkout for the kernel to import")
    ap.add_argument("--aim", type=int, default=0,
                    help="ms the pointer rests on a module before clicking it (0: no pointer)")
    ap.add_argument("--setup", default="", help="code the kernel runs before the build")
    ap.add_argument("--json", default="", help="also write the results here")
    args = ap.parse_args(argv)
    out = run(args.model, args.repeat, args.think, args.probe, args.code, setup=args.setup,
              aim=args.aim)
    print(f"{args.model}, {args.code or REPO}, pointer on a module {args.aim} ms before its click")
    for k, v in out.items():
        if isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
            print(f"{k:55s} median {v[0]:.0f} ms, worst {v[1]:.0f} ms")
        elif k.startswith("where"):
            print(k + ":\n  " + "\n  ".join(v))
        else:
            print(f"{k:55s} {v}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
