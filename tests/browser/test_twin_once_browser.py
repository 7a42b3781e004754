"""A viewer display is one picture in a front end that draws both of its outputs (the text/html
twin for exports and the widget): the widget hides the twin drawn before it, and a twin drawn
after the widget stands down (issue 20; what JupyterLab shows here is what VS Code and Colab
would show if they render both outputs in one document, which is not tested here)."""
import pytest

pytestmark = pytest.mark.browser


def test_each_display_shows_one_viewer_whatever_order_its_outputs_draw_in(page, run_all, run_cell):
    run_all("twin_once.ipynb")
    live = page.locator(".mlclab-viewer:not(.mlclab-fallback .mlclab-viewer)")
    live.locator("svg.mlclab-graph g.node").first.wait_for()
    twins = page.locator(".mlclab-fallback")
    assert twins.count() == 2
    # Both twins (before the widget and after it) are hidden; the widget is the one picture.
    for k in range(2):
        assert twins.nth(k).is_hidden()
    assert page.locator(".mlclab-viewer:visible").count() == 1
    # Run the second cell again now that the widget is on screen: its twin is drawn after the
    # widget, and stands down without building a second viewer.
    run_cell(2)
    again = page.locator(".jp-Cell").nth(2).locator(".mlclab-fallback")
    again.wait_for(state="attached")
    assert again.is_hidden() and again.locator(".mlclab-viewer").count() == 0
    assert again.locator(".mlclab-mount svg").count() == 1     # its static drawing, kept
    assert page.locator(".mlclab-viewer:visible").count() == 1
