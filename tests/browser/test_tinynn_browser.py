"""%%tinynn end to end in a real JupyterLab + Chromium: run all cells, then use the display."""
import pytest

pytestmark = pytest.mark.browser


def test_tinynn_cell_graph_validation_details_and_views(page, run_all, screenshot):
    run_all("tinynn.ipynb")

    # The bound function ran in the next cell.
    page.get_by_text("foo returned [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]").wait_for()

    display = page.locator(".mlclab-tabs").first
    tab_titles = display.locator(".lm-TabBar-tab")
    assert [t.strip() for t in tab_titles.all_text_contents()] == ["graph", "relax", "validate"]

    # The graph rendered, node ids from mlclab's graph model.
    viewer = display.locator(".mlclab-viewer").first
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    assert graph.locator("g.node").count() >= 5
    assert graph.locator("g.node[id='foo:d']").count() == 1

    # Clicking a node shows its details and selects its DSL line.
    graph.locator("g.node[id='foo:d']").click()
    details = viewer.locator(".mlclab-details")
    details.get_by_text("matmul", exact=False).first.wait_for()
    assert "foo:d" in details.text_content()
    assert "d = a @ b" in viewer.locator(".mlclab-source .mlclab-line-selected").text_content()

    # Hovering a node lights up its DSL line and its let binding.
    graph.locator("g.node[id='foo:e']").hover()
    assert "e = d + c" in viewer.locator(".mlclab-source .mlclab-line-hover").text_content()
    assert "let %e = add(%d, %c)" in viewer.locator(".mlclab-let .mlclab-line-hover").text_content()

    # Switching the viewer's views redraws the graph.
    viewer.locator("button[data-view='let']").click()
    assert viewer.locator("button[data-view='let']").get_attribute("aria-selected") == "true"
    graph.locator("g.node").first.wait_for()
    viewer.locator("button[data-view='tree']").click()
    assert viewer.locator("button[data-view='tree']").get_attribute("aria-selected") == "true"
    # After FuseOps: the fused group is a cluster that folds into one node (laid out again).
    viewer.locator("button[data-view='fused']").click()
    viewer.locator('g.cluster[id*="fused_"]').first.wait_for()
    viewer.locator(".mlclab-collapse-all").click()
    folded = viewer.locator('g.node[id^="collapsed:"]').first
    folded.wait_for()
    assert "fused_" in folded.text_content()
    screenshot("tinynn-fused-collapsed")
    viewer.locator(".mlclab-collapse-all").click()
    folded.wait_for(state="detached")
    viewer.locator("button[data-view='dataflow']").click()

    # Switching tabs: the Relax text, then the validation report with its badge.
    tab_titles.filter(has_text="relax").click()
    relax = display.locator(".mlclab-text").first
    relax.wait_for()
    assert "R.matmul" in relax.text_content()
    tab_titles.filter(has_text="validate").click()
    badge = display.locator(".mlclab-validation .mlclab-badge").first
    badge.wait_for()
    assert badge.text_content() == "pass"
    screenshot("tinynn-validate")
    tab_titles.filter(has_text="graph").click()
    graph.wait_for()
    screenshot("tinynn-graph")


def test_rejected_program_stops_run_all_with_a_compact_error(page, run_all, screenshot):
    run_all("error.ipynb", stops=True)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    error = cells.nth(1).locator(".jp-OutputArea-output").first
    text = error.text_content()
    # The prompt's number, the cell's line.
    assert "DSLError: <tinynn cell [2]>, line 3:" in text
    assert "return a @ b" in text and "^" in text
    assert "Traceback" not in text and "magic.py" not in text
    # Run All stopped at the failing cell: the next one never ran.
    assert cells.nth(2).locator(".jp-InputPrompt").text_content().strip() == "[ ]:"
    shown = cells.nth(2).text_content().replace('print("this cell must not run")', "")
    assert "this cell must not run" not in shown
    screenshot("tinynn-error")
