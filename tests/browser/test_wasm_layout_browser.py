"""Graphs laid out by the browser where the kernel has no Graphviz ``dot`` (issue 20), in a real
Chromium: a viewer saved by a process with ``dot`` hidden from PATH opens from disk with the
network cut and draws every view with the WebAssembly Graphviz it carries; ``fn.graph()``'s
HTML draws itself fitted to its column; a saved comparison syncs and outlines its panes; and
the viewer and the graph in a real JupyterLab."""
import os
import subprocess
import sys
import textwrap

import pytest
from test_browser_layout import ROOT, export_without_dot, path_without_dot
from test_compare_browser import SOURCE as MLP
from test_compare_browser import check_sync
from test_saved_viewer_browser import NOTEBOOK, SOURCE, check_viewer, offline

from mlclab.notebook.browser_layout import available
from mlclab.notebook.page import carried_graphviz

pytestmark = [pytest.mark.browser,
              pytest.mark.needs(available(), "the WebAssembly Graphviz (built with npm)")]

SAVE = textwrap.dedent('''
    import shutil, sys
    import mlclab
    from mlclab.notebook.picture import graph_html
    from mlclab.notebook.page import document

    assert shutil.which("dot") is None
    fn = mlclab.compile(sys.argv[1])["main"]
    fn.viewer().save(sys.argv[2])
    open(sys.argv[3], "w", encoding="utf-8").write(document(graph_html(fn.graph()), "graph"))
    mlp = mlclab.compile(sys.argv[4])["mlp"]
    mlclab.compare(mlp, (mlp, "FuseOps")).save(sys.argv[5])
''')


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved viewer, fn.graph()'s HTML and a saved comparison, made by a Python that finds
    no ``dot``."""
    tmp = tmp_path_factory.mktemp("nodot")
    env = {**os.environ, "PATH": path_without_dot(tmp),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    viewer, picture, comparison = tmp / "model.html", tmp / "graph.html", tmp / "cmp.html"
    subprocess.run([sys.executable, "-c", SAVE, SOURCE, str(viewer), str(picture), MLP,
                    str(comparison)], check=True, capture_output=True, timeout=300, env=env,
                   cwd=tmp)
    return viewer, picture, comparison


def test_a_viewer_saved_without_dot_lays_itself_out_offline(page, saved, screenshot):
    viewer_path = saved[0]
    asked = offline(page)
    page.goto(f"file://{viewer_path}")
    # The same interactions as a viewer laid out by dot: select, details, let line, search.
    check_viewer(page, viewer_path)
    viewer = page.locator(".mlclab-viewer").first
    assert "laid out in the browser" in viewer.locator(".mlclab-overview").text_content()
    # Every view is laid out when shown (the fused graph after FuseOps too).
    viewer.locator("button[data-view='fused']").click()
    viewer.locator("svg.mlclab-graph g.node").first.wait_for()
    assert viewer.locator("svg.mlclab-graph g.cluster").count() >= 1
    assert asked == []
    screenshot("wasm-saved-viewer")


def test_fn_graph_html_without_dot_draws_itself_in_its_column(page, saved, screenshot):
    picture = saved[1]
    asked = offline(page)
    page.set_viewport_size({"width": 500, "height": 800})
    page.goto(f"file://{picture}")
    svg = page.locator("svg.mlclab-browser-layout")
    svg.wait_for()
    assert svg.locator("g.node").count() >= 5
    assert {'g:y', 'main:y'} <= set(svg.locator("g.node").evaluate_all("els => els.map(e => e.id)"))
    box, body = svg.bounding_box(), page.locator("body").bounding_box()
    assert box["width"] <= body["width"] + 1                   # fitted, not spilling over
    assert "laid out in your browser" in page.locator(".mlclab-fit-note").first.text_content()
    assert asked == []
    screenshot("wasm-graph-html")


def test_a_comparison_saved_without_dot_syncs_and_outlines_its_panes(page, saved, screenshot):
    asked = offline(page)
    page.goto(f"file://{saved[2]}")
    # Both panes laid out here; what FuseOps removed outlined on the left only; clicks synced.
    check_sync(page)
    assert asked == []
    screenshot("wasm-compare")


@pytest.mark.parametrize("store", [True, False])
def test_an_nbconvert_export_made_without_dot_keeps_a_working_picture(page, tmp_path, store):
    text = export_without_dot(NOTEBOOK, tmp_path / "viewer.ipynb", store)
    out = tmp_path / "viewer.html"
    # The twin carries the WebAssembly Graphviz beside its packed state, once: nothing to
    # fetch, and the widget's stored state holds no second copy (nothing asked for it).
    assert "mlclab vendored @hpcc-js/wasm-graphviz" in carried_graphviz(text)
    assert text.count("mlclab vendored @hpcc-js/wasm-graphviz") == 1
    asked = offline(page)
    page.goto(f"file://{out}")
    check_viewer(page, out)
    assert all("wasm" not in url and "graphviz" not in url for url in asked)


def test_jupyterlab_without_dot_draws_the_viewer_and_the_graph(page, run_all, screenshot):
    run_all("nodot.ipynb")
    # The viewer's output (the comparison's panes are viewers too).
    viewer = page.locator(".mlclab-viewer:visible:not(.mlclab-compare .mlclab-viewer)")
    viewer.locator("svg.mlclab-graph g.node").first.wait_for(timeout=60_000)
    assert viewer.count() == 1, "the widget and its twin both show"
    assert viewer.locator("g.node").count() >= 5
    viewer.locator('g.node[id="g:y"]').click()
    assert "R.log(a)" in viewer.locator(".mlclab-details").text_content()
    # A view the kernel draws on first look arrives as DOT too, and is laid out here.
    viewer.locator("button[data-view='tree']").click()
    viewer.locator("button[data-view='tree'].mlclab-active").wait_for()
    viewer.locator("svg.mlclab-graph g.node").first.wait_for(timeout=60_000)
    assert viewer.locator("svg.mlclab-graph g.node").count() >= 5
    picture = page.locator("svg.mlclab-browser-layout")
    picture.wait_for(timeout=60_000)
    assert picture.locator("g.node").count() >= 5
    # A live comparison: both panes laid out here, with the module its twin carries.
    compare = page.locator(".mlclab-compare:visible")
    for side in ("left", "right"):
        nodes = compare.locator(f".mlclab-compare-{side} svg.mlclab-graph g.node")
        nodes.first.wait_for(timeout=60_000)
    assert compare.count() == 1, "the comparison and its twin both show"
    screenshot("wasm-jupyterlab")
    compare.scroll_into_view_if_needed()
    screenshot("wasm-jupyterlab-compare")
