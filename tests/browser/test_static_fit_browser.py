"""Issue 30: a static ``fn.graph()`` picture (no script) fits the column it is in: at a
laptop's 648 px column it shows its further-folded rung with labels at 9 px or more, at a
1,440 px window its first one; neither scrolls nor widens the page."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from test_drawing_scale import laptop_view  # noqa: E402

from mlclab.viz.fit import MIN_TEXT_PX  # noqa: E402

pytestmark = pytest.mark.browser

MEASURE = """() => {
  const shown = [...document.querySelectorAll('.mlclab-graph svg')]
    .filter(s => s.getBoundingClientRect().width > 0);
  const box = document.querySelector('.mlclab-graph');
  const svg = shown[0];
  const vb = svg.viewBox.baseVal;
  const fonts = [...svg.querySelectorAll('text')].map(t => parseFloat(t.getAttribute('font-size')));
  const scale = svg.getBoundingClientRect().width / vb.width;
  return {count: shown.length, nodes: svg.querySelectorAll('g.node:not(.mlclab-copy)').length,
          scrolls: box.scrollWidth > box.clientWidth + 1,
          page: document.documentElement.scrollWidth, window: window.innerWidth,
          label: Math.min(...fonts) * scale};
}"""


@pytest.mark.parametrize("column,nodes", [(648, 7), (1300, 13)])
def test_a_static_picture_fits_its_column_without_script(page, column, nodes, screenshot):
    html = laptop_view()._repr_mimebundle_()["text/html"]
    page.set_viewport_size({"width": column + 140, "height": 900})
    page.set_content(f'<body style="margin:0"><div style="width:{column}px;margin:0 70px">'
                     f"{html}</div></body>", wait_until="load")
    got = page.evaluate(MEASURE)
    assert got["count"] == 1 and got["nodes"] == nodes, got
    assert not got["scrolls"] and got["page"] <= got["window"], got
    assert got["label"] >= MIN_TEXT_PX - 0.05, got
    screenshot(f"static-fit-{column}")
