"""A comparison's first display and module folding timed in a real JupyterLab (issue 20).

``mlclab.compare(fn, (fn, "FuseOps"))`` (the model before and after FuseOps, side by side) in the
harness of ``viewer_lab.py`` (an isolated JupyterLab, Chromium through Playwright): first display
until both panes are drawn; each module opened by a click on the left pane until it draws it
open, painted (the right follows, its counterpart module opened: its new drawing arrives in the
same message), then closed by its label. Every repetition runs the comparison's cell again (a
new comparison, nothing laid out), so the first click of each is cold; the others come after
``think`` seconds (warm: laid out ahead). Medians and worst over the repetitions, and the
machine's load average before/after.

    python benchmarks/compare_lab.py resnet50|bert [--repeat 3]

Needs /usr/bin/chromium. Issue 20's targets: interactions under 100 ms, first display under 1 s.
"""
from __future__ import annotations

import json
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from viewer_lab import BUILD, CLICKS, REPO, _selectors, lab_page  # noqa: E402

COMPARE_CELL = "cmp = mlclab.compare(fn, (fn, 'FuseOps'))\ncmp"


def notebook(model: str, display: str = COMPARE_CELL) -> dict:
    def cell(src):
        return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                "source": src}
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": [cell("import torch\nimport mlclab\nimport mlclab.notebook\n" + BUILD[model]),
                      cell(display)]}


# The viewer's measurements (viewer_lab.py) for a comparison: both panes of the live one.
COMPARE_DISPLAY = """async (index) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const old = new Set(document.querySelectorAll('.mlclab-compare'));
  nb.activeCellIndex = index;
  const t0 = performance.now();
  window.jupyterapp.commands.execute('notebook:run-cell');
  const drawn = () => [...document.querySelectorAll('.mlclab-compare')].some((c) =>
      !old.has(c) && !c.closest('.mlclab-fallback') &&
      c.querySelectorAll('.mlclab-compare-pane svg.mlclab-graph g.node').length &&
      [...c.querySelectorAll('.mlclab-compare-pane')]
        .every((p) => p.querySelector('svg.mlclab-graph g.node')));
  while (!drawn()) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => requestAnimationFrame(() => r()));
  return performance.now() - t0;
}"""

# Done when the left pane draws the module as `done` says, painted. The right pane's new drawing
# (if it changed: the right side need not have the same module, a fused program's module boxes
# differ) comes in the same kernel message and is drawn in the same task (pair.js syncFolding).
COMPARE_CLICK_UNTIL = """async ([selector, done]) => {
  const c = [...document.querySelectorAll('.mlclab-compare')]
    .filter((x) => !x.closest('.mlclab-fallback')).pop();
  const left = c.querySelector('.mlclab-compare-left');
  const target = left.querySelector(selector);
  if (!target) throw new Error('nothing to click: ' + selector);
  const t0 = performance.now();
  (window.mlclabClicks = window.mlclabClicks || []).push(performance.timeOrigin + t0);
  target.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0}));
  target.dispatchEvent(new PointerEvent('pointerup', {bubbles: true, button: 0}));
  target.dispatchEvent(new MouseEvent('click', {bubbles: true, button: 0}));
  while (!(left.querySelector(done) && !left.querySelector(selector))) {
    if (performance.now() - t0 > 30000) throw new Error('not drawn in 30 s: ' + done);
    await new Promise((r) => setTimeout(r, 2));
  }
  await new Promise((r) => requestAnimationFrame(() => r()));
  return performance.now() - t0;
}"""


def _interleave(cold: list, warm: list) -> list:
    """The opens of each repetition in click order: its cold one, then its warm ones."""
    per = len(warm) // max(len(cold), 1)
    return [x for k, c in enumerate(cold) for x in [c, *warm[k * per:(k + 1) * per]]]


def load() -> str:
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


# --probe: the kernel logs when it began and ended answering each fold (epoch ms, as the
# page's click times), to split a click into waiting, kernel and transport + drawing.
PROBE_CELL = """import json as _json, time as _time
import mlclab.notebook.compare as _compare
_compare.CompareViewer._unprobed = getattr(_compare.CompareViewer, "_unprobed",
                                           _compare.CompareViewer._on_fold)
def _probed(self, change, _path={path!r}):
    t0 = _time.time() * 1000
    self._unprobed(change)
    with open(_path, "a") as f:
        f.write(_json.dumps([t0, _time.time() * 1000]) + "\\n")
_compare.CompareViewer._on_fold = _probed
"""


def run_compare(model: str, repeat: int = 3, think: float = 1.5, probe: bool = False) -> dict:
    """The comparison's timings in ms, see the module docstring."""
    firsts, cold, warm, closes = [], [], [], []
    loads = [load()]
    log = pathlib.Path(tempfile.mkdtemp()) / "probe.jsonl"
    cell = (PROBE_CELL.format(path=str(log)) if probe else "") + COMPARE_CELL
    with lab_page(notebook(model, cell), 1400) as page:
        for _ in range(repeat):
            time.sleep(2 * think)      # the last comparison's background layouts end
            firsts.append(page.evaluate(COMPARE_DISPLAY, 1))
            paths = CLICKS[model]
            for k, path in enumerate(paths):
                if k:
                    time.sleep(think)
                node, cluster = _selectors(path)
                (warm if k else cold).append(page.evaluate(COMPARE_CLICK_UNTIL, [node, cluster]))
            for path in reversed(paths):
                time.sleep(think)
                node, cluster = _selectors(path)
                closes.append(page.evaluate(COMPARE_CLICK_UNTIL,
                                            [f"{cluster} .mlclab-cluster-handle", node]))
        (REPO / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(REPO / "test-artifacts" / f"compare-lab-{model}.png"))
        clicks = page.evaluate("window.mlclabClicks || []")
    loads.append(load())

    def stat(xs):
        return f"median {statistics.median(xs):.0f} ms, worst {max(xs):.0f} ms (n={len(xs)})"
    return {"first display: run cell -> both panes drawn": stat(firsts),
            "open a module, cold (right after first display)": stat(cold),
            "open a module, warm (after looking)": stat(warm),
            "close a module by its label": stat(closes),
            "modules opened (left pane; right follows)": ", ".join(CLICKS[model]),
            "every open, in order, each repetition": [round(x) for x in _interleave(cold, warm)],
            "every close (reverse order), each repetition": [round(x) for x in closes],
            "load average (1/5/15 min) before; after": "; ".join(loads),
            **(split(clicks, log) if probe else {})}


def split(clicks: list, log: pathlib.Path) -> dict:
    """--probe: each open's time split into the wait before the kernel answers it, the
    kernel's answer and the rest (the message to the page and its drawing)."""
    answers = [json.loads(line) for line in log.read_text().splitlines()]
    rows = []
    for at in clicks:
        a = next((x for x in answers if x[0] >= at - 5), None)
        rows.append("-" if a is None else f"{a[0] - at:.0f}+{a[1] - a[0]:.0f}")
    return {"each click: ms until the kernel began + its answer, in click order": rows}


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", choices=sorted(BUILD), default="resnet50")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--probe", action="store_true", help="split each click's time")
    args = ap.parse_args()
    for k, v in run_compare(args.model, args.repeat, probe=args.probe).items():
        print(f"{k:55s} {v}")
