"""Folding inside a comparison in a real JupyterLab (issue 20): both sides start with their
modules folded; a click on a folded module in one pane opens it in both (the kernel lays both
out again), the selection stays synced in the new drawings, and a click on the module's label
folds both again."""
import pytest

from test_compare_browser import pane

pytestmark = pytest.mark.browser

FOLDED = 'g.node[id="collapsed:fn:TransformerEncoderLayer/module:{}"]'
CLUSTER = 'g.cluster[id="cluster:fn:TransformerEncoderLayer/module:{}"]'
INSIDE_LEFT = "TransformerEncoderLayer:lv"
INSIDE_RIGHT = "TransformerEncoderLayer:fused_transpose_broadcast_to/lv"


def test_opening_a_module_in_one_pane_opens_it_in_both_and_selection_follows(page, run_all,
                                                                             screenshot):
    page.set_viewport_size({"width": 1100, "height": 900})
    run_all("compare_folding.ipynb")
    for side in ("left", "right"):
        pane(page, side).locator(FOLDED.format("self_attn")).wait_for()
        assert pane(page, side).locator(FOLDED.format("linear1")).count() == 1

    pane(page, "left").locator(FOLDED.format("self_attn")).click()
    page.locator(".widget-label", has_text="right open: self_attn").wait_for()
    for side in ("left", "right"):
        pane(page, side).locator(CLUSTER.format("self_attn")).wait_for()
        assert pane(page, side).locator(FOLDED.format("self_attn")).count() == 0
    # The panes fit their column: neither is wider than the output area.
    area = page.locator(".jp-OutputArea-output:has(.mlclab-compare:visible)").first.bounding_box()
    for side in ("left", "right"):
        box = pane(page, side).bounding_box()
        assert box["x"] >= area["x"] - 1
        assert box["x"] + box["width"] <= area["x"] + area["width"] + 1

    # A node drawn only now (the attention's first permute_dims), selected on the left: its
    # match on the right, inside a fused group there, follows.
    pane(page, "left").locator(f'g.node[id="{INSIDE_LEFT}"]').click()
    right = pane(page, "right").locator(f'g.node[id="{INSIDE_RIGHT}"]')
    assert "mlclab-selected" in right.get_attribute("class")
    right.scroll_into_view_if_needed()
    screenshot("compare-folding")

    # Its label folds it again, on both sides (the label may be panned out of the canvas, so
    # the click goes to it directly).
    handle = pane(page, "right").locator(f"{CLUSTER.format('self_attn')} .mlclab-cluster-handle")
    handle.first.dispatch_event("click")
    opened = page.locator(".widget-label", has_text="right open: ")
    opened.filter(has_not_text="self_attn").wait_for()
    for side in ("left", "right"):
        pane(page, side).locator(FOLDED.format("self_attn")).wait_for()
