"""Real size where no Graphviz ``dot`` exists (issue 20), in a real Chromium at a 1,100 px
window: the kernel cannot measure a layout it does not make, so it sends every rung of the fold
ladder and the page walks it by fit.py's rule in its real column. In JupyterLab: the live
viewer keeps labels readable and folds more through its kernel; a ``%%tinynn`` cell draws one
picture (its twin hidden); ``fn.graph()`` is folded to fit. In ``nbconvert --to html
--execute`` exports, with and without stored widget state: the ``%%tinynn`` graph is laid out
by the browser, offline, the text kept for renderers without script."""
import subprocess
import sys

import pytest
from test_browser_layout import export_without_dot, without_dot_env
from test_drawing_scale import WIDE
from test_saved_viewer_browser import offline

from mlclab.notebook.browser_layout import available
from mlclab.notebook.page import carried_graphviz

pytestmark = [pytest.mark.browser,
              pytest.mark.needs(available(), "the WebAssembly Graphviz (built with npm)")]

# Every node label of the drawings under `root`, as drawn: its height on screen in px.
LABELS = """root => [...root.querySelectorAll('svg g.node text')]
  .map(t => t.getBoundingClientRect().height).filter(h => h > 0)"""


def check_column_picture(output, folded=True):
    """A picture laid out in the browser: no label under 9 px, and no wider than its output
    area (one with nothing left to fold is at the readable minimum in a box that scrolls)."""
    svg = output.locator("svg.mlclab-browser-layout")
    svg.wait_for(timeout=60_000)
    area = output.bounding_box()["width"] + 1
    assert output.locator(".mlclab-graph").bounding_box()["width"] <= area
    if folded:
        assert svg.bounding_box()["width"] <= area
    labels = output.evaluate(LABELS)
    assert labels and min(labels) >= 9 - 0.05, labels
    return svg


def test_jupyterlab_without_dot_fits_and_folds_like_dot(page, run_all, run_cell, screenshot):
    page.set_viewport_size({"width": 1100, "height": 900})
    run_all("nodot_fit.ipynb")
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    # The live viewer of a graph taller than its canvas: readable labels, "fold more", which
    # the kernel lays out again (as DOT) and the browser draws.
    tall = cells.nth(1).locator(".mlclab-viewer:visible")
    tall.locator("svg.mlclab-graph g.node").first.wait_for(timeout=60_000)
    page.wait_for_timeout(300)                        # the fit runs on the next frame
    assert min(tall.evaluate(LABELS)) >= 9 - 0.05
    note = tall.locator(".mlclab-clip-note")
    assert note.is_visible()
    note.locator(".mlclab-fold-more").click()
    tall.locator('g.node[id="collapsed:fused_chain"]').wait_for(timeout=60_000)
    # Its twin above it carries the WebAssembly Graphviz: the kernel never sent a second copy.
    assert "module sent to the live viewer: 0" in run_cell(5)
    # The %%tinynn cell: one picture (its text/html twin hidden by the widget's viewer).
    tinynn = cells.nth(2)
    nodes = tinynn.locator(".mlclab-tabs .mlclab-viewer svg.mlclab-graph g.node")
    nodes.first.wait_for(timeout=60_000)
    assert tinynn.locator(".mlclab-fallback").first.is_hidden()
    assert tinynn.locator(".mlclab-viewer:visible").count() == 1
    # A cell whose graph tab is not the first: its viewer is made (hidden) all the same, and
    # hides the twin.
    later = cells.nth(5)
    later.locator(".mlclab-tabs").wait_for()
    later.locator(".mlclab-fallback").first.wait_for(state="hidden")
    assert later.locator(".mlclab-viewer:visible").count() == 0
    # fn.graph(): 14 parameters side by side do not fit 953 px readably: folded in the page.
    picture = cells.nth(3).locator(".jp-OutputArea-output").first
    check_column_picture(picture)
    assert "each called function folded" in picture.locator(".mlclab-fit-note").first.text_content()
    assert picture.locator('g.node[id="collapsed:fn:wide"]').count() == 1
    screenshot("nodot-jupyterlab-fit")


def test_a_wide_column_shows_the_graph_unfolded(page, tmp_path):
    """The rung is chosen in the column the picture really has: 1,100 px folds WIDE, a 4,000
    px page shows all of it (the kernel assumes a 940 px column; the page measures)."""
    env = without_dot_env(tmp_path)
    script = ("import sys, mlclab\nfrom mlclab.notebook.page import document\n"
              "graph = mlclab.compile(sys.argv[1])['main'].graph()\n"
              "html = graph._repr_mimebundle_()['text/html']\n"
              "open(sys.argv[2], 'w', encoding='utf-8').write(document(html, 'wide'))\n")
    path = tmp_path / "wide.html"
    subprocess.run([sys.executable, "-c", script, WIDE, str(path)], check=True, env=env,
                   capture_output=True, timeout=300, cwd=tmp_path)
    offline(page)
    rungs = {}
    for width in (1100, 4000):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path.as_uri())
        body = page.locator(".mlclab-mount").first
        check_column_picture(body)
        rungs[width] = body.get_attribute("data-rung")
    assert rungs == {1100: "1", 4000: "0"}


TINYNN = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": "%load_ext mlclab"},
              {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": "%%tinynn --show graph tree relax\n" + WIDE}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("store", [True, False])
def test_a_tinynn_cell_exported_without_dot_shows_its_graphs_laid_out(page, tmp_path, store,
                                                                     screenshot):
    text = export_without_dot(TINYNN, tmp_path / "tinynn.ipynb", store)
    # One WebAssembly Graphviz for the cell's pictures; the graphs as text for no script.
    assert carried_graphviz(text) and text.count("mlclab vendored @hpcc-js/wasm-graphviz") == 1
    assert "Call concat" in text
    asked = offline(page)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"file://{tmp_path / 'tinynn.html'}")
    cell = page.locator(".mlclab-cell").first
    pictures = cell.locator(".mlclab-mount")
    assert pictures.count() == 4                  # graph and tree, of wide and of main
    # Tabs other than the first are closed <details>: laid out for a 940 px column meanwhile.
    cell.locator("details").evaluate_all("ds => ds.forEach(d => { d.open = true; })")
    for k in range(4):
        check_column_picture(pictures.nth(k), folded=False)
    # main's graph (wide's 14 parameters side by side), folded to fit the column.
    main = cell.locator(".mlclab-mount", has_text="each called function folded").first
    check_column_picture(main)
    assert all("wasm" not in url and "graphviz" not in url for url in asked)
    screenshot(f"nodot-tinynn-export-{'stored' if store else 'plain'}")


def test_a_viewer_whose_page_has_no_module_asks_its_kernel(page, run_all, run_cell):
    """Colab shows each output in a frame of its own, so the twin carrying the WebAssembly
    Graphviz is not on the widget's page: the widget asks its kernel, which sends it then (and
    only then: a widget beside its twin never gets a second copy)."""
    run_all("nodot_alone.ipynb")
    viewer = page.locator(".mlclab-viewer:visible")
    viewer.locator("svg.mlclab-graph g.node").first.wait_for(timeout=60_000)
    assert page.locator("script.mlclab-graphviz").count() == 0
    assert "sent: True" in run_cell(3)
    viewer.locator('g.node[id="g:y"]').click()
    assert "R.log(a)" in viewer.locator(".mlclab-details").text_content()
