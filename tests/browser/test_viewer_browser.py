"""The graph viewer widget in a real JupyterLab + Chromium (no compiler involved)."""
import pathlib

import pytest

pytestmark = pytest.mark.browser


def test_viewer_click_search_views_collapse(page, run_all, screenshot):
    run_all("viewer.ipynb")
    viewer = page.locator(".mlclab-viewer").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    assert graph.locator("g.node").count() == 4

    # A student-typed label is text in the drawing, never markup.
    assert graph.locator("script").count() == 0
    assert "<script>alert(1)</script>" in graph.locator("g#main\\.w").text_content()

    # Validation marks: the divergent node is highlighted, the checked one marked ok.
    assert "mlclab-diverged" in graph.locator("g#main\\.mm").get_attribute("class")
    assert "mlclab-highlight" in graph.locator("g#main\\.mm").get_attribute("class")
    assert "mlclab-ok" in graph.locator("g#main\\.r").get_attribute("class")

    # Click -> details panel, and the kernel learns the selection (a Python-side dlink
    # rewrites the label below the viewer).
    viewer.locator("g#main\\.mm").click()
    details = viewer.locator(".mlclab-details")
    assert "relax.matmul" in details.text_content()
    assert "y: R.Tensor((2, 4)) = R.matmul(x, w)" in details.text_content()
    assert "differs from numpy, max abs err 0.5" in details.text_content()
    page.locator(".widget-label", has_text="picked: main.mm").wait_for()
    source_line = viewer.locator(".mlclab-source .mlclab-line-selected").text_content()
    assert source_line.strip().endswith("y = x @ w")
    assert "let %y" in viewer.locator(".mlclab-let .mlclab-line-selected").text_content()

    # Escape clears the selection (in the kernel too).
    page.keyboard.press("Escape")
    page.locator(".widget-label", has_text="picked: nothing").wait_for()
    viewer.locator("g#main\\.mm").click()
    page.locator(".widget-label", has_text="picked: main.mm").wait_for()

    # Hover lights up the node's DSL line and let binding.
    viewer.locator("g#main\\.r").hover()
    assert "relu(y)" in viewer.locator(".mlclab-source .mlclab-line-hover").text_content()
    assert "let %z" in viewer.locator(".mlclab-let .mlclab-line-hover").text_content()

    # Search by operator dims the rest.
    viewer.locator(".mlclab-search").fill("relu")
    assert viewer.locator("g.node.mlclab-match").count() == 1
    assert viewer.locator(".mlclab-matches").text_content() == "1 match"
    viewer.locator(".mlclab-search").fill("")

    # Collapsing the fused group: the kernel lays it out again with the group as one node.
    viewer.locator(".mlclab-collapse-all").click()
    folded = viewer.locator('g.node[id="collapsed:fused_matmul_relu"]')
    folded.wait_for()
    assert "fused_matmul_relu" in folded.text_content() and "2 nodes" in folded.text_content()
    assert viewer.locator("g#main\\.mm").count() == 0
    folded.click()                                    # a click on a folded group opens it
    viewer.locator("g#main\\.mm").wait_for()
    # Search zooms to its matches: the scale grows to show the one relu large.
    def scale():
        return viewer.locator("svg.mlclab-graph").evaluate(
            "el => new DOMMatrix(getComputedStyle(el).transform).a")
    fitted = scale()
    viewer.locator(".mlclab-search").fill("relu")
    page.wait_for_function("() => true")
    assert scale() > fitted * 1.1
    viewer.locator(".mlclab-search").fill("")

    # Switching views draws the other graph (the "let" one has no fused group).
    viewer.locator("button[data-view='let']").click()
    assert viewer.locator("button[data-view='let']").get_attribute("aria-selected") == "true"
    graph.wait_for()                                  # drawn by the kernel when first shown
    assert graph.count() == 1
    assert viewer.locator('g.cluster[id="cluster:fused_matmul_relu"]').count() == 0

    # Pan and zoom: a drag moves the drawing without selecting, the wheel and the buttons
    # scale it, "fit" brings it back.
    def transform():
        return viewer.locator("svg.mlclab-graph").evaluate(
            "el => new DOMMatrix(getComputedStyle(el).transform)")

    canvas = viewer.locator(".mlclab-canvas")
    box = canvas.bounding_box()
    start = transform()
    page.mouse.move(box["x"] + 20, box["y"] + 20)
    page.mouse.down()
    page.mouse.move(box["x"] + 80, box["y"] + 60, steps=5)
    page.mouse.up()
    moved = transform()
    assert (moved["e"] - start["e"], moved["f"] - start["f"]) == pytest.approx((60, 40), abs=1)
    # The drag did not change the selection.
    page.locator(".widget-label", has_text="picked: main.mm").wait_for()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    page.wait_for_function("() => true")
    assert transform()["a"] > moved["a"] * 1.2
    viewer.locator(".mlclab-zoom-out").click()
    viewer.locator(".mlclab-fit").click()
    assert transform()["a"] == pytest.approx(start["a"], rel=1e-3)
    # "svg" downloads the current view's drawing.
    with page.expect_download() as download:
        viewer.locator(".mlclab-save").click()
    assert download.value.suggested_filename == "let.svg"
    saved = pathlib.Path(download.value.path()).read_text()
    assert saved.startswith("<svg") and 'id="main.mm"' in saved and "<script" not in saved
    screenshot("viewer")
