"""Issue 30: a static ``fn.graph()`` picture (no script) fits the column it is in: at a
laptop's 648 px column it shows its further-folded rung with labels at 9 px or more, at a
1,440 px window its first one; neither scrolls nor widens the page. ResNet-18's and a small
BERT's pictures too (their constants folded into their readers, said in the caption)."""
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


@pytest.fixture(scope="module")
def models():
    """ResNet-18 and a small BERT (random weights), as the laptop test builds them."""
    import torch

    import mlclab

    tv = mlclab.import_torchvision()
    from transformers import BertConfig, BertModel      # after torchvision, as laptop.ipynb

    torch.manual_seed(0)
    resnet = mlclab.from_torch(tv.models.resnet18(weights=None).eval(),
                               torch.randn(1, 3, 224, 224))
    config = BertConfig(attn_implementation="eager", hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128, vocab_size=1000)
    bert = mlclab.from_torch(BertModel(config).eval(), torch.randint(0, 1000, (1, 16)))
    return {"resnet18": resnet, "bert": bert}


@pytest.mark.parametrize("window", [1100, 1440])
@pytest.mark.parametrize("name", ["resnet18", "bert"])
def test_a_models_static_picture_fits_a_laptops_column_at_9px(page, models, name, window,
                                                               screenshot):
    # A JupyterLab column at a 1,100 px window with the file browser open is 648 px; at
    # 1,440 px with it closed, about 1,300.
    column = 648 if window == 1100 else 1300
    html = models[name].graph()._repr_mimebundle_()["text/html"]
    page.set_viewport_size({"width": window, "height": 900})
    page.set_content(f'<body style="margin:0"><div style="width:{column}px;margin:0 70px">'
                     f"{html}</div></body>", wait_until="load")
    got = page.evaluate(MEASURE)
    assert got["count"] == 1 and got["nodes"] >= 10, got
    assert not got["scrolls"] and got["page"] <= got["window"], got
    assert got["label"] >= MIN_TEXT_PX - 0.05, got
    notes = page.evaluate("""() => [...document.querySelectorAll('.mlclab-fit-note')]
        .filter(n => n.getBoundingClientRect().width > 0).map(n => n.textContent)""")
    # What was folded is said over the picture; BERT's whole drawing fits a wide column.
    folded = name == "resnet18" or column == 648
    assert notes == (["constants folded into the operators that read them"] if folded else []) \
        or (folded and len(notes) == 1 and notes[0].startswith("Folded to fit the column: "
                                                               "constants folded")), notes
    screenshot(f"static-{name}-{window}")
