"""fn.profile's displays in a real JupyterLab + Chromium (issue 15): the kernel table, the
inline roofline SVG with a dot and an escaped tooltip per kernel, and the fused view of the
viewer coloured by time with the numbers in the node details."""
import re

import pytest

pytestmark = pytest.mark.browser


def test_profile_table_roofline_and_coloured_fused_view(page, run_all, screenshot):
    run_all("profile.ipynb")
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    prof_cell = cells.filter(has_text="mlp.profile(").first
    printed = prof_cell.locator(".jp-OutputArea-output pre", has_text="kernels:").text_content()
    kernels = re.search(r"kernels: (.+)", printed).group(1).strip().split(", ")
    assert len(kernels) == 2

    # The table: one row per kernel, each with its name and a share; the shares add up.
    display = prof_cell.locator(".mlclab-profile")
    display.wait_for()
    rows = display.locator("table tr")
    assert rows.count() == 1 + len(kernels)
    assert rows.first.locator("th").nth(3).text_content() == "share"
    names, shares = [], []
    for i in range(1, rows.count()):
        tds = rows.nth(i).locator("td")
        names.append(tds.nth(0).locator("code").text_content())  # its rule is below it
        shares.append(float(re.fullmatch(r"([\d.]+)%", tds.nth(3).text_content().strip()).group(1)))
    assert sorted(names) == sorted(kernels)
    assert all(s > 0 for s in shares) and sum(shares) == pytest.approx(100, abs=0.5)

    # The roofline: inline SVG (its nodes reachable, unlike an image/svg+xml output), one dot
    # per kernel, each with a tooltip naming it; the labels are text, never markup.
    roof = display.locator("svg.mlclab-roofline")
    assert roof.count() == 1 and roof.is_visible()
    dots = roof.locator("circle.mlclab-kernel")
    assert dots.count() == len(kernels)
    tips = [dots.nth(i).locator("title").text_content() for i in range(dots.count())]
    assert sorted(t.split(":")[0] for t in tips) == sorted(kernels)
    assert all("GFLOP/s" in t and "of roof" in t for t in tips)
    assert roof.locator("polyline title").text_content().startswith("roofs:")
    assert display.locator("script, img, iframe").count() == 0
    assert roof.locator("title *").count() == 0                   # tooltips are plain text

    # Hostile labels (a hand-made profile in the last cell) arrive as text, in the table and
    # in the roofline's tooltip, and nothing of them runs.
    bad = '<img src=x onerror="alert(1)">'
    hostile = cells.filter(has_text="hostile = Profile(").first.locator(".mlclab-profile")
    hostile.wait_for()
    assert hostile.locator("img, script").count() == 0
    name = hostile.locator("table tr").nth(1).locator("td").first.locator("code")
    assert name.get_attribute("title") == bad                  # a long name is cut, whole here
    assert bad.startswith(name.text_content().rstrip("…"))
    assert hostile.locator("circle.mlclab-kernel title").text_content().startswith(bad + ":")

    # The viewer's fused view: the kernels' nodes are filled with the heat colour, and a
    # node's details carry its time.
    # The live widget; its text/html twin above it (for exports) is hidden once it draws.
    viewer_cell = cells.filter(has_text="mlp.viewer(").first
    viewer = viewer_cell.locator(".mlclab-viewer:not(.mlclab-fallback .mlclab-viewer)")
    graph = viewer.locator("svg.mlclab-graph")
    graph.wait_for()
    assert viewer.locator("button[data-view='fused']").get_attribute("aria-selected") == "true"
    assert viewer.locator("g.cluster").count() >= 1
    fills = graph.locator("g.node").evaluate_all(
        """nodes => nodes.map(n => {
            const shape = n.querySelector('polygon, ellipse, path');
            return [n.id, shape ? shape.getAttribute('fill') : null];
        })""")
    coloured = [nid for nid, fill in fills if fill and re.fullmatch(r"#ff[0-9a-f]{4}", fill)
                and fill != "#ffffff"]
    assert coloured, fills
    # The kernel's time is shown once, on the fused group's output; its members name the kernel
    # whose time that is. The first coloured node may be a member: find the output.
    details = viewer.locator(".mlclab-details")
    told = {}
    for nid in coloured:
        graph.locator(f"g.node[id='{nid}']").click()
        told[nid] = text = details.text_content()
        assert nid in text
        if re.search(r"profile.*: [\d.]+ (s|ms|µs|ns) \(\d+% of kernel time\)", text):
            break
        assert re.search(r"profile.*part of fused kernel .*the kernel's time, [\d.]+ "
                         r"(s|ms|µs|ns) \(\d+%\)", text), text
    else:
        raise AssertionError(f"no coloured node shows its kernel's time: {told}")
    assert "GFLOP/s" in text
    assert viewer_cell.locator(".mlclab-fallback").is_hidden()
    # "jump to hottest kernel" selects the node of the largest share.
    viewer.locator(".mlclab-jump").click()
    hottest = viewer.locator("g.node.mlclab-selected")
    hottest.wait_for()
    assert hottest.get_attribute("id") in coloured
    assert any(name in text for name in kernels)
    viewer.scroll_into_view_if_needed()
    screenshot("profile-fused")
    prof_cell.scroll_into_view_if_needed()
    screenshot("profile")
