"""An imported model's modules in the viewer, in a real JupyterLab + Chromium (issue 12)."""
import pytest

pytestmark = pytest.mark.browser

FOLDED = 'g.node[id="collapsed:fn:TransformerEncoderLayer/module:{}"]'


def open_viewer(page, run_all, notebook):
    """Run ``notebook``; its first viewer and its graph, once drawn."""
    run_all(notebook)
    viewer = page.locator(".mlclab-viewer").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    return viewer, graph


def test_modules_open_on_click_fold_by_name_and_open_to_search_hits(page, run_all, screenshot):
    viewer, graph = open_viewer(page, run_all, "modules.ipynb")
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


LAYER = 'g.node[id="collapsed:fn:TransformerEncoder/module:{}"]'


def test_the_fused_view_of_a_stack_of_layers_folds_and_opens_by_layer(page, run_all, screenshot):
    # Each layer calls the same fused functions; each call sits in its own layer's module, so
    # the fused view first shows the three layers folded and a click opens one layer only.
    viewer, graph = open_viewer(page, run_all, "fused_modules.ipynb")
    for k in range(3):
        layer = viewer.locator(LAYER.format(f"layers.{k}"))
        assert "TransformerEncoderLayer" in layer.text_content()
    assert graph.locator("g.node").count() <= 6

    viewer.locator(LAYER.format("layers.1")).click()
    page.locator(".widget-label", has_text="layers.1").wait_for()
    viewer.locator(LAYER.format("layers.1")).wait_for(state="detached")
    # Layer 1's own modules are folded inside it; layers 0 and 2 stay one box each.
    viewer.locator(LAYER.format("layers.1.self_attn")).wait_for()
    assert viewer.locator(LAYER.format("layers.0")).count() == 1
    assert viewer.locator(LAYER.format("layers.2")).count() == 1
    assert viewer.locator("svg.mlclab-graph g.node").count() <= 25
    screenshot("fused-modules")
