"""One rule for "fits the column" (issue 20): ``mlclab.viz.fit`` (Fit, choose: what the kernel
decides where ``dot`` draws) and ``static/fit.js`` (measureSvg, columnFit, chooseRung: what the
page decides where it lays the graph out itself) give the same answers on the same drawings,
and a graph's fold ladder sent to the browser is the one ``GraphView.picture`` walks."""
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from needs import need

import mlclab
from mlclab.viz.fit import MIN_TEXT_PX, Fit, choose

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
FIT_JS = (ROOT / "mlclab" / "notebook" / "static" / "fit.js").as_uri()

# Reads the cases on stdin, answers each with fit.js's columnFit and chooseRung.
PROBE = """
import(process.argv[1]).then(async (fit) => {
  const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const out = [];
  for (const c of cases) {
    const fits = c.svgs.map((s) => fit.columnFit(fit.measureSvg(s), c.column));
    const chosen = await fit.chooseRung(c.nodes.map((n) => ({ nodes: n })), async (k) => fits[k]);
    out.push({ readable: fits.map((f) => f.readable), scale: fits.map((f) => f.scale),
               chosen: chosen.index, min: fit.MIN_LABEL_PX });
  }
  console.log(JSON.stringify(out));
});
"""


def _svg(width_pt, height_pt, fonts):
    return (f'<svg width="{width_pt}pt" height="{height_pt}pt" viewBox="0 0 1 1">'
            + "".join(f'<text font-size="{f}">x</text>' for f in fonts) + "</svg>")


def _python_answer(case):
    fits = [Fit(s, case["column"]) for s in case["svgs"]]
    chosen, _ = choose(zip(case["nodes"], range(len(fits))), lambda k: fits[k])
    return {"readable": [f.readable for f in fits], "scale": [f.scale for f in fits],
            "chosen": chosen, "min": MIN_TEXT_PX}


@pytest.mark.needs(NODE is not None, "node (>= 18)")
def test_python_and_the_browser_choose_the_same_rung_on_the_same_drawings():
    rng = random.Random(20)
    cases = []
    for _ in range(300):
        rungs = rng.randint(1, 4)
        cases.append({
            "column": rng.choice([300, 668, 940, 953, 1200]),
            "svgs": [_svg(round(rng.uniform(50, 3000), 2), round(rng.uniform(50, 3000), 2),
                          [round(rng.uniform(5, 20), 2) for _ in range(rng.randint(0, 3))])
                     for _ in range(rungs)],
            "nodes": sorted((rng.randint(3, 60) for _ in range(rungs)), reverse=True)})
    proc = subprocess.run([NODE, "-e", PROBE, FIT_JS], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    browser = json.loads(proc.stdout)
    for case, got in zip(cases, browser):
        want = _python_answer(case)
        assert got["readable"] == want["readable"], case
        assert got["chosen"] == want["chosen"], case
        assert got["min"] == want["min"]
        assert got["scale"] == pytest.approx(want["scale"]), case
    assert {g["chosen"] for g in browser} >= {0, 1, 2}   # the ladder is walked, not only rung 0


# Reads a ladder on stdin, lays each rung out with the vendored WebAssembly Graphviz and
# answers the rung chooseRung shows in a column of argv[3] px.
LADDER_PROBE = """
Promise.all([import(process.argv[1]), import(process.argv[2])]).then(async ([fit, wasm]) => {
  const ladder = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const graphviz = await wasm.Graphviz.load();
  const measure = async (k) =>
    fit.columnFit(fit.measureSvg(graphviz.dot(ladder[k].dot)), Number(process.argv[3]));
  console.log((await fit.chooseRung(ladder, measure)).index);
});
"""


@pytest.mark.needs(NODE is not None, "node (>= 18)")
def test_the_ladder_sent_to_the_browser_is_the_one_dot_walks_and_ends_on_the_same_rung(tmp_path):
    """A graph too wide for a column (test_drawing_scale's WIDE): the browser, laying out its
    ladder with the WebAssembly Graphviz, shows the rung the kernel shows with ``dot``."""
    from mlclab.notebook.browser_layout import MODULE, available
    from mlclab.viz.dot import dot_available
    from mlclab.viz.fit import COLUMN_PX
    from test_drawing_scale import WIDE

    need(available(), "the WebAssembly Graphviz (built with npm)")
    view = mlclab.compile(WIDE)["main"].graph()
    ladder = view.ladder()
    assert [r["nodes"] for r in ladder] == sorted((r["nodes"] for r in ladder), reverse=True)
    assert ladder[0]["note"] == "" and "each called function folded" in ladder[1]["note"]
    esm = tmp_path / "graphviz.mjs"                  # node reads static/ as CommonJS
    esm.write_text(MODULE.read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([NODE, "-e", LADDER_PROBE, FIT_JS, esm.as_uri(), str(COLUMN_PX)],
                          input=json.dumps(ladder), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    in_browser = int(proc.stdout.strip())
    assert in_browser >= 1                            # folded: the whole graph does not fit
    if dot_available():
        _, fit, note = view.picture()
        assert fit.readable and note == ladder[in_browser]["note"]
        assert view.plotter.digraph(view.drawn).source == ladder[in_browser]["dot"]
