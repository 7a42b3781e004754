"""An imported model's modules in the viewer, in a real JupyterLab + Chromium (issue 12)."""
import pytest

pytestmark = pytest.mark.browser

FOLDED = 'g.node[id="collapsed:fn:TransformerEncoderLayer/module:{}"]'


def test_modules_open_on_click_fold_by_name_and_open_to_search_hits(page, run_all, screenshot):
    run_all("modules.ipynb")
    viewer = page.locator(".mlclab-viewer").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    banner = viewer.locator(".mlclab-overview")
    assert "overview:" in banner.text_content() and "3 folded" in banner.text_content()
    attention = viewer.locator(FOLDED.format("self_attn"))
    assert "MultiheadAttention" in attention.text_content()
    drawn = graph.locator("g.node").count()

    # A click on a folded module opens it: the kernel draws the view again.
    attention.click()
    page.locator(".widget-label", has_text="open: self_attn").wait_for()
    viewer.locator(FOLDED.format("self_attn")).wait_for(state="detached")
    assert viewer.locator("svg.mlclab-graph g.node").count() > drawn + 20
    label = viewer.locator("g.cluster text", has_text="self_attn · MultiheadAttention")
    assert label.count() == 1

    # A click on the open module's name folds it again.
    label.click()
    page.locator(".widget-label", has_text="open: ").filter(has_not_text="self_attn").wait_for()
    viewer.locator(FOLDED.format("self_attn")).wait_for()

    # Search matches module paths (a folded module by what it holds); Enter opens to them.
    search = viewer.locator(".mlclab-search")
    search.fill("linear1")
    assert viewer.locator("g.node.mlclab-match").count() == 1
    search.press("Enter")
    page.locator(".widget-label", has_text="open: linear1").wait_for()
    viewer.locator(FOLDED.format("linear1")).wait_for(state="detached")
    assert viewer.locator("g.node.mlclab-match").count() >= 3            # its operators
    assert viewer.locator(".mlclab-matches").text_content().endswith("matches")

    # "fold all" goes back to the first look.
    viewer.locator(".mlclab-fold-modules").click()
    viewer.locator(FOLDED.format("linear1")).wait_for()
    screenshot("modules")
