"""The pass scrubber in a real Chromium: in JupyterLab (the widget, the kernel told which pass)
and in an ``nbconvert --to html`` export opened from disk with the network cut. Scrubbing across
FuseOps keeps every node that stays on its pixels, and marks what the pass did; a pass laid out
anew says so and keeps the nodes it shares in place."""
import os
import pathlib
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from test_saved_viewer_browser import offline

from mlclab.backend.passes import build_passes
from mlclab.notebook.page import unpacked_state

pytestmark = pytest.mark.browser

NOTEBOOK = pathlib.Path(__file__).parent / "notebooks" / "scrubber.ipynb"

# Screen centre of every drawn node, by node id, relative to the canvas.
POSITIONS = """v => { const out = {}, c = v.querySelector('.mlclab-canvas').getBoundingClientRect();
  for (const g of v.querySelectorAll('svg.mlclab-graph g.node[id]')) {
    const r = g.getBoundingClientRect();
    out[g.id] = [r.left + r.width / 2 - c.left, r.top + r.height / 2 - c.top];
  }
  return out; }"""

# The smallest label on screen, in CSS px: font size (drawing units) times the zoom.
SMALLEST_TEXT = """v => { const svg = v.querySelector('svg.mlclab-graph');
  const k = new DOMMatrix(getComputedStyle(svg).transform).a;
  const sizes = [...svg.querySelectorAll('g.node text')]
    .map(t => parseFloat(t.getAttribute('font-size')));
  return Math.min(...sizes) * k; }"""


def viewer_of(page):
    # In JupyterLab the widget hides its text/html twin: the visible one.
    return page.locator(".mlclab-viewer:visible").first


def scrub_to(page, viewer, name):
    """Arrow keys on the canvas until the pass label names ``name``."""
    viewer.locator(".mlclab-canvas").focus()
    for _ in range(30):
        if name in viewer.locator(".mlclab-pass").text_content():
            return
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(60)
    at = viewer.locator('.mlclab-pass').text_content()
    raise AssertionError(f"never reached {name}: at {at}")


def check_scrub(page, viewer):
    viewer.locator("svg.mlclab-graph g.node").first.wait_for()
    viewer.locator('g.node[id="mlp:h"]').click()
    selected = viewer.locator("g.node.mlclab-selected").bounding_box()
    before = viewer.evaluate(POSITIONS)
    scrub_to(page, viewer, "FuseOps")
    viewer.locator("g.node.mlclab-selected").wait_for()
    after_sel = viewer.locator("g.node.mlclab-selected").bounding_box()
    # The value of h is selected in the fused drawing, on the same pixels...
    for pos, size in (("x", "width"), ("y", "height")):
        assert abs(after_sel[pos] + after_sel[size] / 2 - selected[pos] - selected[size] / 2) < 3
    # ...and so is every other node that is still there (the stable layout, not only the selection).
    after = viewer.evaluate(POSITIONS)
    shared = [nid for nid in before if nid in after]
    assert len(shared) >= 3
    for nid in shared:
        moved = max(abs(a - b) for a, b in zip(before[nid], after[nid]))
        assert moved < 3, (nid, before[nid], after[nid])
    # What FuseOps did is marked: the fused group outlined, its members in amber, the legend counts.
    assert viewer.locator('g.cluster[id*="fused"]').count() >= 1
    assert viewer.locator('g.node [stroke="#d97706"]').count() >= 1
    legend = viewer.locator('.mlclab-legend-item[data-change="grouped"]').text_content()
    assert int(legend.split()[-1]) >= 1
    # Unchanged passes are skipped; the toggle brings them back into the slider.
    changed_only = viewer.locator(".mlclab-pass").text_content()
    viewer.locator(".mlclab-skip").uncheck()
    every = viewer.locator(".mlclab-pass").text_content()
    assert int(every.split("/")[-1].rstrip(")")) > int(changed_only.split("/")[-1].rstrip(")"))
    # A pass is found by name: the list filters, Enter goes there.
    viewer.locator(".mlclab-pass-find").fill("legal")
    assert viewer.locator(".mlclab-pass-item").count() == 1
    viewer.locator(".mlclab-pass-find").press("Enter")
    assert "LegalizeOps" in viewer.locator(".mlclab-pass").text_content()
    # Left goes back.
    viewer.locator(".mlclab-canvas").focus()
    page.keyboard.press("ArrowLeft")
    assert "LegalizeOps" not in viewer.locator(".mlclab-pass").text_content()


def check_fits(page, viewer):
    """No graph wider than its column; no label under 9 px once fitted."""
    viewer.locator(".mlclab-fit").click()
    box = viewer.bounding_box()
    column = viewer.evaluate("v => v.parentElement.getBoundingClientRect().width")
    assert box["width"] <= column + 1
    canvas = viewer.locator(".mlclab-canvas").bounding_box()
    assert canvas["x"] + canvas["width"] <= box["x"] + box["width"] + 1
    assert viewer.evaluate(SMALLEST_TEXT) >= 9 - 0.05


def test_scrubbing_across_fuseops_in_jupyterlab_keeps_nodes_in_place(page, run_all, screenshot):
    page.set_viewport_size({"width": 1100, "height": 900})
    run_all("scrubber.ipynb")
    viewer = viewer_of(page)
    check_scrub(page, viewer)
    scrub_to(page, viewer, "FuseOps")
    # the kernel's step: the input is step 0, then every pass of the build in order
    step = 1 + [p.info.name for p in build_passes("llvm")].index("FuseOps")
    page.locator(".widget-label", has_text=f"kernel: {step} · FuseOps").wait_for()
    check_fits(page, viewer)
    screenshot("scrubber-lab-fuseops")


@pytest.mark.parametrize("store", [False, True])
def test_an_exported_scrubber_scrubs_without_a_kernel(page, tmp_path, store, screenshot):
    nb = tmp_path / "scrubber.ipynb"
    nb.write_text(NOTEBOOK.read_text())
    pythonpath = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute",
                    f"--ExecutePreprocessor.store_widget_state={store}", str(nb)],
                   check=True, capture_output=True, timeout=300, env=env)
    offline(page)     # nbconvert's own page asks for require.js and MathJax: refused, not needed
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"file://{tmp_path / 'scrubber.html'}")
    viewer = page.locator(".mlclab-viewer").first
    check_scrub(page, viewer)
    check_fits(page, viewer)
    screenshot(f"scrubber-export-{'stored' if store else 'plain'}")
    state = unpacked_state((tmp_path / "scrubber.html").read_text(encoding="utf-8"))
    assert len(state["views"]) == len(state["passes"]) > 20


def test_a_pass_laid_out_anew_says_so_and_keeps_the_nodes_it_shares_in_place(page, tmp_path,
                                                                              screenshot):
    # A made-up build (tests/test_scrubber.py): its third pass lowers most of the program.
    from test_scrubber import made_up_build

    from mlclab.notebook.scrubber import PassScrubber

    steps = made_up_build()
    views = {name: steps.view(k, full=True) for k, (name, _) in enumerate(steps.steps)}
    path = PassScrubber(views, scrub=True, passes=steps.passes()).save(tmp_path / "anew.html")
    offline(page)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"file://{path}")
    viewer = page.locator(".mlclab-viewer").first
    note = viewer.locator(".mlclab-layout-note")
    # The pass list marks where the picture will be redrawn, before the student gets there.
    assert viewer.locator(".mlclab-pass-item.mlclab-new-layout").all_text_contents() == ["2 · p1"]
    scrub_to(page, viewer, "1 · p0")
    expect(note).to_be_hidden()
    before = viewer.evaluate(POSITIONS)
    scrub_to(page, viewer, "2 · p1")
    # Said at that step, with how many of the nodes it shares kept their place: a and b, as the
    # pan is chosen for all of them (both layouts put b right under a).
    expect(note).to_have_text("new layout: this pass rewrote most of the program "
                              "(2 of 2 nodes shared with the pass before kept their place)")
    after = viewer.evaluate(POSITIONS)
    for nid in ("f:a", "f:b"):
        moved = max(abs(x - y) for x, y in zip(before[nid], after[nid]))
        assert moved < 3, (nid, before[nid], after[nid])
    screenshot("scrubber-new-layout")
    # The next pass shares the new layout: nothing to say; going back across the boundary is.
    scrub_to(page, viewer, "3 · p2")
    expect(note).to_be_hidden()
    viewer.locator(".mlclab-pass-item", has_text="1 · p0").click()
    expect(note).to_have_text(re.compile(r"^another layout than the pass before: 2 of 2 "))
