"""The viewer with no kernel, in a real Chromium with the network cut: a saved
``fn.viewer().save("model.html")`` opened from disk, and ``jupyter nbconvert --to html`` exports
with and without stored widget state (issue 20: exports must not go blank)."""
import json
import os
import subprocess
import sys

import pytest

import mlclab

pytestmark = pytest.mark.browser

SOURCE = '''def g(a: Tensor[(4,), f32]):
    y = log(a)
    return y

def main(x: Tensor[(4,), f32], w: Tensor[(4,), f32]):
    y = exp(x) * w
    return relu(g(y))
'''


def offline(page):
    """Every request but the file itself fails: the page must need nothing else."""
    asked = []

    def route(r):
        if r.request.url.startswith("file:"):
            return r.continue_()
        asked.append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    return asked


def check_viewer(page, at):
    viewer = page.locator(".mlclab-viewer").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    assert graph.locator("g.node").count() >= 5
    # A click selects: the details pane and the let line of that node, in its own function.
    viewer.locator('g.node[id="g:y"]').click()
    details = viewer.locator(".mlclab-details").text_content()
    assert "g:y" in details and "R.log(a)" in details
    assert "log(%a)" in viewer.locator(".mlclab-let .mlclab-line-selected").text_content()
    viewer.locator('g.node[id="main:y"]').click()
    # g:y sits below the fitted top (callee frames stack under their caller): the browser
    # scrolled the canvas to click it, and the viewer turned that scroll into a pan.
    assert viewer.locator(".mlclab-canvas").evaluate("c => [c.scrollLeft, c.scrollTop]") == [0, 0]
    selected = viewer.locator(".mlclab-let .mlclab-line-selected")
    assert "let %y = multiply(" in selected.text_content()
    # Search dims the rest and zooms to the hit: it lands in the middle of the canvas.
    viewer.locator(".mlclab-search").fill("relu")
    assert viewer.locator("g.node.mlclab-match").count() == 1
    hit = viewer.locator("g.node.mlclab-match").bounding_box()
    canvas = viewer.locator(".mlclab-canvas").bounding_box()
    assert abs(hit["x"] + hit["width"] / 2 - (canvas["x"] + canvas["width"] / 2)) < 3
    assert abs(hit["y"] + hit["height"] / 2 - (canvas["y"] + canvas["height"] / 2)) < 3
    # Folding needs a kernel: the page says so instead of offering buttons that do nothing.
    assert viewer.locator(".mlclab-collapse-all").is_disabled()
    assert viewer.locator(".mlclab-fold-more").is_hidden()


def test_a_saved_viewer_opens_from_disk_offline(page, tmp_path, screenshot):
    fn = mlclab.compile(SOURCE)["main"]
    path = fn.viewer().save(tmp_path / "model.html")
    asked = offline(page)
    page.goto(f"file://{path}")
    check_viewer(page, path)
    # Every view was drawn into the file.
    page.locator("button[data-view='fused']").click()
    page.locator(".mlclab-viewer svg.mlclab-graph g.node").first.wait_for()
    assert asked == []
    screenshot("saved-viewer")


NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": f"import mlclab\nfn = mlclab.compile({SOURCE!r})['main']\nfn.viewer()"}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("store", [True, False])
def test_an_nbconvert_export_keeps_a_working_picture(page, tmp_path, store):
    nb = tmp_path / "viewer.ipynb"
    nb.write_text(json.dumps(NOTEBOOK))
    pythonpath = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    f"--ExecutePreprocessor.store_widget_state={store}", str(nb)],
                   check=True, capture_output=True, timeout=300, env=env)
    out = tmp_path / "viewer.html"
    if store:
        assert "application/vnd.jupyter.widget-state+json" in out.read_text()
    offline(page)
    page.goto(f"file://{out}")
    check_viewer(page, out)


def test_a_saved_pass_scrubber_keeps_the_selected_value_in_place(page, tmp_path, screenshot):
    from mlclab.notebook.scrubber import pass_scrubber

    fn = mlclab.compile("def mlp(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], "
                        "b: Tensor[(4,), f32]):\n"
                        "    h = relu(linear(x, w, b))\n"
                        "    return softmax(h, axis=-1)\n")["mlp"]
    scrubber = pass_scrubber(fn)
    path = scrubber.save(tmp_path / "passes.html")
    offline(page)
    page.goto(f"file://{path}")
    viewer = page.locator(".mlclab-viewer").first
    viewer.locator("svg.mlclab-graph g.node").first.wait_for()
    first = scrubber.views["0 · input"]["nodes"]
    relu = next(n for n in first.values() if n["label"].endswith("relu"))
    viewer.locator(f'g.node[id="{relu["id"]}"]').click()
    before = viewer.locator("g.node.mlclab-selected").bounding_box()
    value = relu["value"]
    # Scrub to FuseOps: the node holding the same value is selected, at the same place.
    names = list(scrubber.views)
    viewer.locator(".mlclab-pass-item", has_text="FuseOps").click()
    assert "FuseOps" in viewer.locator(".mlclab-pass").text_content()
    selected = viewer.locator("g.node.mlclab-selected")
    selected.wait_for()
    fused_view = scrubber.views[next(n for n in names if "FuseOps" in n)]
    assert fused_view["nodes"][selected.get_attribute("id")]["value"] == value
    after = selected.bounding_box()
    assert abs((after["x"] + after["width"] / 2) - (before["x"] + before["width"] / 2)) < 3
    assert abs((after["y"] + after["height"] / 2) - (before["y"] + before["height"] / 2)) < 3
    # What the pass did is marked, and listed in the details.
    assert "grouped" in viewer.locator(".mlclab-details").text_content()
    screenshot("saved-scrubber")
    # A pass is found by name: Enter in the search box when no node matches.
    viewer.locator(".mlclab-search").fill("legalize")
    viewer.locator(".mlclab-search").press("Enter")
    assert "LegalizeOps" in viewer.locator(".mlclab-pass").text_content()
