"""Compare any two (mlclab.compare) in a real Chromium: a click on a node in one pane selects
and centres its match in the other, in JupyterLab (the widget, the kernel told) and in a file
saved with ``save("x.html")`` opened from disk with the network cut."""
import pytest

import mlclab
from test_saved_viewer_browser import offline

pytestmark = pytest.mark.browser

SOURCE = ("def mlp(x: Tensor[(2, 8), f32], w: Tensor[(4, 8), f32], b: Tensor[(4,), f32]):\n"
          "    h = relu(linear(x, w, b))\n"
          "    return softmax(h, axis=-1)\n")
# After FuseOps the relu that defines h sits in the fused group, under the group's name.
H_LEFT, H_RIGHT = "mlp:h", "mlp:fused_NT_matmul_add_relu/gv"


def pane(page, side):
    # In JupyterLab the widget hides its text/html twin, which is drawn too: the visible one.
    return page.locator(f".mlclab-compare-{side}:visible")


def node(page, side, nid):
    return pane(page, side).locator(f'g.node[id="{nid}"]')


def centred(page, side, nid):
    box = node(page, side, nid).bounding_box()
    canvas = pane(page, side).locator(".mlclab-canvas").bounding_box()
    return (abs(box["x"] + box["width"] / 2 - (canvas["x"] + canvas["width"] / 2)) < 3
            and abs(box["y"] + box["height"] / 2 - (canvas["y"] + canvas["height"] / 2)) < 3)


def check_sync(page):
    node(page, "left", H_LEFT).wait_for()
    summary = page.locator(".mlclab-compare-summary:visible").text_content()
    assert "matched" in summary and "only left" in summary and "only right" in summary
    # What FuseOps removed is outlined on the left only.
    assert pane(page, "left").locator("g.node.mlclab-removed").count() >= 1
    assert pane(page, "right").locator("g.node.mlclab-removed").count() == 0
    node(page, "left", H_LEFT).click()
    assert "mlclab-selected" in node(page, "right", H_RIGHT).get_attribute("class")
    assert centred(page, "right", H_RIGHT)
    # And back: a click on the right selects the match on the left.
    node(page, "right", "mlp:gv").click()
    assert "mlclab-selected" in node(page, "left", "mlp:gv").get_attribute("class")
    assert "mlclab-selected" not in node(page, "left", H_LEFT).get_attribute("class")


def test_compare_in_jupyterlab_syncs_selection_and_tells_the_kernel(page, run_all, screenshot):
    run_all("compare.ipynb")
    node(page, "left", H_LEFT).wait_for()
    node(page, "left", H_LEFT).click()
    page.locator(".widget-label", has_text=f"right: {H_RIGHT}").wait_for()
    check_sync(page)
    page.locator(".widget-label", has_text="right: mlp:gv").wait_for()
    # A node with no match (FuseOps folded the transposed matmul into NT_matmul) stays
    # selected; the other side, and the kernel, have nothing selected.
    node(page, "left", "mlp:lv1").click()
    page.locator(".widget-label", has_text="right: nothing").wait_for()
    page.wait_for_timeout(300)                 # any echo from the kernel has come back
    assert "mlclab-selected" in node(page, "left", "mlp:lv1").get_attribute("class")
    assert pane(page, "right").locator("g.node.mlclab-selected").count() == 0
    # The widget hides its text/html twin: one comparison on screen.
    assert page.locator(".mlclab-compare:visible").count() == 1
    screenshot("compare-lab")


def test_a_saved_comparison_opens_from_disk_offline_and_stacks_when_narrow(page, tmp_path,
                                                                            screenshot):
    fn = mlclab.compile(SOURCE)["mlp"]
    path = mlclab.compare(fn, (fn, "FuseOps")).save(tmp_path / "cmp.html")
    asked = offline(page)
    page.goto(f"file://{path}")
    check_sync(page)
    wide = [pane(page, s).bounding_box() for s in ("left", "right")]
    assert wide[1]["x"] > wide[0]["x"] + wide[0]["width"] - 1      # side by side
    page.set_viewport_size({"width": 700, "height": 1000})
    page.wait_for_timeout(100)
    narrow = [pane(page, s).bounding_box() for s in ("left", "right")]
    assert narrow[1]["y"] >= narrow[0]["y"] + narrow[0]["height"] - 1   # stacked
    assert asked == []
    screenshot("compare-saved")
