"""Opening a module in a real JupyterLab answers from a layout the kernel made while the student
looked at the drawing (issue 20): the front end says when a view is drawn, the kernel lays out
the states one click away, and a click on a folded module draws the prepared layout.

The time from the click to the new drawing is printed (``performance.now()`` in the page), not
asserted: timing belongs to benchmarks/viewer_lab.py."""
import pytest

pytestmark = pytest.mark.browser

FOLDED = 'g.node[id="collapsed:fn:TransformerEncoderLayer/module:{}"]'
CLUSTER = 'g.cluster[id="cluster:fn:TransformerEncoderLayer/module:{}"]'

# Click the folded module's node; resolve with ms until its cluster is drawn in its place.
OPEN = """async ([node, cluster]) => {
  const v = [...document.querySelectorAll('.mlclab-viewer')]
    .find((x) => !x.closest('.mlclab-fallback'));
  const g = v.querySelector(node);
  const t0 = performance.now();
  g.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, button: 0}));
  g.dispatchEvent(new PointerEvent('pointerup', {bubbles: true, button: 0}));
  while (!(v.querySelector(cluster) && !v.querySelector(node))) {
    await new Promise((r) => setTimeout(r, 2));
  }
  await new Promise((r) => requestAnimationFrame(() => r()));
  return performance.now() - t0;
}"""


def test_a_module_opens_from_the_layout_made_while_the_student_looked(page, run_all, run_cell,
                                                                       screenshot):
    page.set_viewport_size({"width": 1100, "height": 900})
    run_all("fold_ahead.ipynb")
    viewer = page.locator(".mlclab-viewer:not(.mlclab-fallback .mlclab-viewer)").first
    viewer.locator("svg.mlclab-graph g.node").first.wait_for()
    # Three folded modules drawn: the three "open one" states laid out in the background.
    ready = run_cell(2)
    assert "ready: True 3" in ready, ready

    ms = page.evaluate(OPEN, [FOLDED.format("self_attn"), CLUSTER.format("self_attn")])
    print(f"\nopen self_attn: {ms:.0f} ms from click to drawing")
    after = run_cell(3)
    # The click's state was laid out once, in the background before it: the prepared one was drawn.
    assert "after the click: 1 ['self_attn']" in after, after
    label = viewer.locator("g.cluster text", has_text="self_attn · MultiheadAttention")
    assert label.count() == 1
    assert viewer.locator("svg.mlclab-graph g.node").count() > 20
    screenshot("fold-ahead-open")
