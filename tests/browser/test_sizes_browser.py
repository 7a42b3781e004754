"""Static pictures at real size in a real JupyterLab + Chromium at a 1,100 px window (issue 20):
no graph wider than its output area, no label under 9 px as shown, the profile's table and
roofline inside their output, and the roofline's axes readable in the dark theme."""
import pytest

pytestmark = pytest.mark.browser

from mlclab.viz.fit import MIN_TEXT_PX  # noqa: E402

# For each fitted graph: its width, its output area's, and its smallest text as drawn (font
# size in viewBox units times the px each unit is drawn at).
MEASURE_GRAPHS = """() => [...document.querySelectorAll('.jp-OutputArea-output .mlclab-graph svg')]
  .map(svg => {
    const area = svg.closest('.jp-OutputArea-output');
    const box = svg.getBoundingClientRect();
    const unit = box.width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')]
      .map(t => parseFloat(t.getAttribute('font-size')) * unit);
    return {width: box.width, area: area.clientWidth, text: Math.min(...sizes),
            labels: [...svg.querySelectorAll('g.node title')].map(t => t.textContent).length};
})"""


def test_graphs_and_profile_fit_their_outputs_in_a_1100px_window(page, run_all, screenshot):
    # The conditions: a 1,100 px window with the file browser closed, a 953 px output
    # area. (With it open the area is 668 px: pictures then stop shrinking at 9 px text and
    # scroll sideways.)
    page.set_viewport_size({"width": 1100, "height": 900})
    run_all("sizes.ipynb")
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.wait_for_function(
        "() => document.querySelector('.jp-OutputArea-output').clientWidth > 900")
    graphs = page.evaluate(MEASURE_GRAPHS)
    assert len(graphs) == 4, graphs           # lesson 3's three, lesson 8's coloured fused graph
    for g in graphs:
        assert g["width"] <= g["area"] + 0.5, g
        assert g["text"] >= MIN_TEXT_PX - 0.05, g
        assert g["labels"] > 0
    print("\ngraphs (width px, output px, smallest text px):",
          [(round(g["width"]), g["area"], round(g["text"], 1)) for g in graphs])

    pictures = page.locator(".jp-OutputArea-output .mlclab-graph")
    pictures.nth(1).scroll_into_view_if_needed()
    screenshot("sizes-cnn")
    pictures.nth(3).scroll_into_view_if_needed()
    screenshot("sizes-fused-profile")

    # The profile: its table and roofline inside the output area, nothing cut.
    prof = page.locator(".mlclab-profile").first
    prof.scroll_into_view_if_needed()
    sizes = prof.evaluate("""p => {
        const area = p.closest('.jp-OutputArea-output').clientWidth;
        const t = p.querySelector('table');
        const table = t.getBoundingClientRect().width;
        const hidden = t.parentElement.scrollWidth - t.parentElement.clientWidth;
        const roof = p.querySelector('svg.mlclab-roofline').getBoundingClientRect().width;
        return {area, table, roof, hidden, scroll: p.scrollWidth - p.clientWidth};
    }""")
    print("profile:", sizes)
    assert sizes["table"] <= sizes["area"] and sizes["roof"] <= sizes["area"], sizes
    assert sizes["scroll"] <= 0 and sizes["hidden"] <= 0, sizes      # no column behind a scrollbar
    assert prof.locator("svg.mlclab-roofline text.mlclab-kernel-label").count() == 2
    screenshot("sizes-light")

    # Dark theme: the roofline's axis labels and the table's text are light on dark.
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)
    luminance = prof.evaluate("""p => {
        const lum = (c) => {
          const [r, g, b] = c.match(/\\d+/g).map(Number);
          return (r + g + b) / 3;
        };
        const axis = getComputedStyle(p.querySelector('svg.mlclab-roofline text')).fill;
        const cell = getComputedStyle(p.querySelector('td')).color;
        const plot = getComputedStyle(p.querySelector('svg.mlclab-roofline rect')).fill;
        return {axis: lum(axis), cell: lum(cell), plot: lum(plot)};
    }""")
    print("dark theme luminance:", luminance)
    assert luminance["axis"] > 150 and luminance["cell"] > 150, luminance
    assert luminance["plot"] < 100, luminance
    prof.scroll_into_view_if_needed()
    screenshot("sizes-dark")
