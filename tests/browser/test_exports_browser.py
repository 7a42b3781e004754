"""Every display mlclab makes in a notebook keeps a picture in an ``nbconvert --to html
--execute`` export, with stored widget state (nbconvert's default: the widget's output wins
over a text/html beside it, and offline its JavaScript cannot load) and without, opened in
Chromium with the network cut (issue 20: "exports go blank"). Each display that holds a
widget is two outputs, its text/html twin and the widget (``widgets.show_twinned``,
``viewer.TwinDisplay``); the rest are HTML alone. One cell per display kind; each must show a
visible, non-empty drawing, table or text, and a graph's labels at least 9 px tall.

Each lesson exported with stored widget state gets the same check, by a rule that needs no
list of its displays (:func:`blank_widget_cells`): every cell holding a widget shows a visible
mlclab picture beside it (twelve lessons execute in about 3.5 minutes here)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from test_saved_viewer_browser import SOURCE, offline

pytestmark = pytest.mark.browser

SETUP = f"""import numpy as np
import mlclab
from mlclab.notebook.scrubber import pass_scrubber
%load_ext mlclab
fn = mlclab.compile({SOURCE!r})['main']
x, w = np.ones(4, 'float32'), np.full(4, 0.5, 'float32')"""

TINYNN = """def twice(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32]):
    d = a @ b
    return relu(d + d)"""

# Display kind -> (cell source, what it must show: "graph" or a selector of its table/text).
KINDS = {
    "function": ("fn", "graph"),
    "validation": ("mlclab.validate(fn, x, w)", "graph"),
    "tinynn": ("%%tinynn --show graph relax validate\n" + TINYNN, "graph"),
    "tinynn-text": ("%%tinynn --show relax validate\n" + TINYNN, "pre.mlclab-text"),
    "viewer": ("fn.viewer()", "graph"),
    "scrubber": ("pass_scrubber(fn)", "graph"),
    "compare": ("mlclab.compare(fn, (fn, 'FuseOps'))", "graph"),
    "graph": ("fn.graph()", "graph"),
    "step": ("fn.pipeline().step('FuseOps')", "graph"),
    "diff": ("fn.pipeline().diff('FuseOps')", "graph"),
    "pipeline": ("fn.pipeline()", "table"),
    "profile": ("prof = fn.profile(x, w, repeat=1)\nprof", "table"),
    "profile-compare": ("mlclab.compare_profiles(prof, prof)", "table"),
    "exercise": ("mlclab.exercise('01-mse').check('def mse(a: Tensor[(4,), f32]):\\n"
                 "    return a\\n')", ".mlclab-exercise"),
}


def notebook(sources) -> dict:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": s} for s in sources]
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}}}


def export(path, store: bool) -> str:
    """``jupyter nbconvert --to html --execute`` of the notebook at ``path``; the HTML's path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    f"--ExecutePreprocessor.store_widget_state={store}", str(path)],
                   check=True, capture_output=True, timeout=900, env=env)
    return str(path.with_suffix(".html"))


# What one cell's outputs show, measured in the page: the visible graphs (their node count
# and their smallest drawn label), tables and texts with their size.
MEASURE = """(cell, want) => {
  const outs = cell.querySelector('.jp-Cell-outputWrapper, .jp-OutputArea');
  const seen = (el) => { const r = el.getBoundingClientRect();
                         return r.width > 0 && r.height > 0 && el.checkVisibility(); };
  const graphs = [...outs.querySelectorAll('svg')].filter(s => seen(s) && s.querySelector('g.node'))
    .map(s => { const labels = [...s.querySelectorAll('g.node text')].filter(seen)
                  .map(t => t.getBoundingClientRect().height);
                return {nodes: s.querySelectorAll('g.node').length, labels: labels.length,
                        smallest: labels.length ? Math.min(...labels) : 0}; });
  const other = want === 'graph' ? [] : [...outs.querySelectorAll(want)].filter(seen)
    .map(el => ({text: el.textContent.trim().length,
                 area: el.getBoundingClientRect().width * el.getBoundingClientRect().height}));
  return {graphs, other};
}"""


def blank_kinds(page, kinds) -> dict:
    """Display kind -> why its cell shows no picture (empty: every kind shows one)."""
    cells = page.locator(".jp-Cell.jp-CodeCell")
    bad = {}
    for k, (kind, (_, want)) in enumerate(kinds.items(), start=1):
        cell = cells.nth(k)
        if want == "graph":        # an interactive twin draws its graph once its state is unpacked
            try:
                cell.locator("svg g.node >> visible=true").first.wait_for(timeout=30_000)
            except Exception:
                pass
        got = cell.evaluate(MEASURE, want)
        if want == "graph":
            drawn = [g for g in got["graphs"] if g["nodes"] and g["labels"]]
            if not drawn:
                bad[kind] = f"no visible graph: {got}"
            elif min(g["smallest"] for g in drawn) < 9 - 0.05:
                bad[kind] = f"labels under 9 px: {drawn}"
        elif not any(o["text"] and o["area"] > 0 for o in got["other"]):
            bad[kind] = f"no visible {want}: {got}"
    return bad


@pytest.mark.parametrize("store", [True, False], ids=["stored-widget-state", "no-widget-state"])
def test_every_display_keeps_a_picture_in_an_offline_export(page, tmp_path, store, screenshot):
    nb = tmp_path / "displays.ipynb"
    nb.write_text(json.dumps(notebook([SETUP, *(src for src, _ in KINDS.values())])))
    html = export(nb, store)
    text = open(html, encoding="utf-8").read()
    assert ("application/vnd.jupyter.widget-state+json" in text) == store
    offline(page)          # nbconvert's page asks for require.js, MathJax, the widget manager
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"file://{html}")
    assert blank_kinds(page, KINDS) == {}
    # One picture per display: a twin is never drawn twice (no live widget offline either).
    assert page.locator(".mlclab-fallback[hidden]").count() == 0
    screenshot(f"export-every-display-{'stored' if store else 'plain'}")


LESSONS_DIR = pathlib.Path(__file__).resolve().parents[2] / "lessons"
LESSONS = sorted(LESSONS_DIR.glob("[0-9A][0-9]-*.ipynb"))

# Cells whose outputs hold a widget (offline, with stored state: an empty box) and no visible
# mlclab picture beside it: a graph with nodes, a table or a text, with an area.
BLANK_WIDGET_CELLS = """() => [...document.querySelectorAll('.jp-Cell.jp-CodeCell')]
.map((cell, k) => {
  if (!cell.querySelector('script[type="application/vnd.jupyter.widget-view+json"]')) return null;
  const seen = (el) => { const r = el.getBoundingClientRect();
                         return r.width > 0 && r.height > 0 && el.checkVisibility(); };
  const shown = [...cell.querySelectorAll('.mlclab-fallback svg, .mlclab-fallback table, '
                                          + '.mlclab-fallback pre')]
    .some(el => seen(el) && (el.querySelector('g.node') || el.textContent.trim()));
  const input = cell.querySelector('.jp-InputArea').textContent.trim();
  return shown ? null : `cell ${k}: ${input.slice(0, 80)}`;
}).filter(Boolean)"""


# Cells showing a graph whose smallest drawn label is under 9 px: [cell, px].
SMALL_LABEL_CELLS = """() => [...document.querySelectorAll('.jp-Cell.jp-CodeCell')]
.map((cell, k) => {
  const px = [...cell.querySelectorAll('svg g.node text')].filter(t => t.checkVisibility())
    .map(t => t.getBoundingClientRect().height).filter(h => h > 0);
  return px.length && Math.min(...px) < 8.95 ? [k, Math.min(...px)] : null;
}).filter(Boolean)"""


def blank_widget_cells(page) -> list:
    """The cells of the page (an export) that hold a widget but show no mlclab picture."""
    page.wait_for_timeout(1500)            # twins unpack their state (DecompressionStream)
    return page.evaluate(BLANK_WIDGET_CELLS)


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_a_lesson_exported_with_widget_state_has_no_blank_display(page, tmp_path, lesson):
    shutil.copytree(lesson.parent, tmp_path / "lessons")
    html = export(tmp_path / "lessons" / lesson.name, store=True)
    offline(page)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"file://{html}")
    assert blank_widget_cells(page) == []
    # A twin's graph is fitted as the live one is: JupyterLab's rule for pictures in HTML
    # output (max-width: 100%) shrank the viewer under its readable fit (5.3 px, lesson 3).
    assert page.evaluate(SMALL_LABEL_CELLS) == []


def test_each_composite_display_is_one_picture_live(page, run_all, screenshot):
    """Live in JupyterLab the same displays show their widget only: each twin is hidden by its
    TwinGuard, whatever the tabs hold (the report's twin holds a viewer page of its own)."""
    run_all("composite.ipynb")
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    for k, live in ((1, ".mlclab-tabs"), (2, ".mlclab-viewer"), (3, ".mlclab-tabs")):
        cell = cells.nth(k)
        cell.locator(f"{live} >> visible=true").first.wait_for(timeout=60_000)
        twins = cell.locator(".mlclab-fallback")
        assert twins.count() >= 1
        assert cell.locator(".mlclab-fallback:visible").count() == 0, k
    # One viewer each on screen (the report's twin may have drawn its own before the widget
    # loaded, as a viewer's twin may: hidden since).
    assert cells.nth(1).locator(".mlclab-viewer:visible").count() == 1
    assert cells.nth(2).locator(".mlclab-viewer:visible").count() == 1
    assert cells.nth(3).locator(".mlclab-viewer").count() == 0
    screenshot("composite-displays-live")
