"""Fit at real size in JupyterLab (issue 20): a graph taller than the viewer is never shrunk
below readable labels; the viewer offers to fold more instead, and the kernel lays it out."""
import pytest

pytestmark = pytest.mark.browser


def test_fit_keeps_labels_readable_and_fold_more_folds(page, run_all, screenshot):
    run_all("tall.ipynb")
    viewer = page.locator(".mlclab-viewer:not(.mlclab-fallback .mlclab-viewer)").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    page.wait_for_timeout(300)                        # the fit runs on the next frame
    # Every node label at fit is at least 9 px tall on screen.
    heights = graph.locator("g.node text").evaluate_all(
        "ts => ts.map(t => t.getBoundingClientRect().height)")
    assert heights and min(heights) >= 9 - 0.05, heights
    note = viewer.locator(".mlclab-clip-note")
    assert note.is_visible() and "smallest readable size" in note.text_content()
    screenshot("fit-clipped")
    # "fold more": the fused group becomes one node, and the drawing fits again.
    note.locator(".mlclab-fold-more").click()
    viewer.locator('g.node[id="collapsed:fused_chain"]').wait_for()
    page.wait_for_timeout(300)
    assert viewer.locator('g.node[id="main:v3"]').count() == 0
    assert note.is_hidden()
