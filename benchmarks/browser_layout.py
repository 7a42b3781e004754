"""What laying graphs out in the browser costs where no ``dot`` program exists (issue 20).

The same DOT that a first display sends is laid out by Graphviz's ``dot`` program (the fast
path) and by the vendored WebAssembly Graphviz (mlclab/notebook/static/vendor/graphviz.js) in
node, the V8 engine Chromium runs it in; node loads the module once (its one-off cost, the
wasm compiled, and the first layout, in its baseline tier, are printed apart), then lays
each graph out ``--repeat`` times. Shapes: the
graph_render benchmark's RNN, sum and residual chains at lesson size and 10x (a big graph's
first display is its overview), and ResNet-18's first look when torch is installed.

    python benchmarks/browser_layout.py [--repeat 3]

Needs node and the built module (./dev.sh setup); says so and exits 0 without them.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_render import SIZES, residual_module, rnn_module, sum_module  # noqa: E402

NODE_RUNNER = """
const module = process.argv[1], repeat = +process.argv[3];
const sources = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
import(module).then(async (m) => {
  let t = performance.now();
  const g = await m.Graphviz.load();
  const out = { load_ms: performance.now() - t, layouts: {} };
  // A page's first layout runs in the wasm's baseline tier: timed apart, then all warmed once.
  const entries = Object.entries(sources);
  t = performance.now(); g.dot(entries[0][1]); out.first = [entries[0][0], performance.now() - t];
  for (const [, dot] of entries) g.dot(dot);
  for (const [name, dot] of entries) {
    const times = [];
    for (let i = 0; i < repeat; i++) {
      t = performance.now(); g.dot(dot); times.push(performance.now() - t);
    }
    out.layouts[name] = times;
  }
  console.log(JSON.stringify(out));
});
"""


def first_display_dot(mod) -> str:
    """The DOT of what ``fn.graph()`` shows first (the overview of a big graph)."""
    from mlclab.viz.views import graph

    return graph(mod).in_browser()[0]


def shapes() -> dict:
    makers = {"rnn": rnn_module, "sum": sum_module, "residual": residual_module}
    out = {f"{shape} {n}": first_display_dot(makers[shape](n))
           for shape, sizes in SIZES.items() for n in sizes[:2]}
    try:
        import mlclab

        mlclab.import_torchvision()
        import torch
        import torchvision

        model = torchvision.models.resnet18().eval()
        fn = mlclab.from_torch(model, torch.randn(1, 3, 224, 224))
        out["resnet18 first look"] = fn.graph().in_browser()[0]
    except ImportError as err:
        print(f"(resnet18 skipped: {err})")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from mlclab.notebook.browser_layout import MODULE, available
    from mlclab.viz.dot import dot_available, run_dot

    node = shutil.which("node")
    if node is None or not available() or not dot_available():
        print("needs node, dot and the built WebAssembly Graphviz (./dev.sh setup): skipped")
        return 0
    sources = shapes()
    with tempfile.TemporaryDirectory() as tmp:
        esm = Path(tmp) / "graphviz.mjs"
        esm.write_text(MODULE.read_text(encoding="utf-8"), encoding="utf-8")
        data = Path(tmp) / "sources.json"
        data.write_text(json.dumps(sources), encoding="utf-8")
        proc = subprocess.run([node, "-e", NODE_RUNNER, esm.as_uri(), str(data), str(args.repeat)],
                              capture_output=True, text=True, timeout=1800, check=True)
    wasm = json.loads(proc.stdout)
    print(f"WebAssembly Graphviz: module loaded and compiled in {wasm['load_ms']:.0f} ms, "
          f"then the first layout ({wasm['first'][0]}) {wasm['first'][1]:.0f} ms: once per page")
    print(f"{'graph':24} {'DOT kB':>7} {'dot s':>7} {'wasm s':>7} {'ratio':>6}")
    for name, dot in sources.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            run_dot(dot, "svg", timeout=600)
            times.append(time.perf_counter() - t)
        native = statistics.median(times)
        browser = statistics.median(wasm["layouts"][name]) / 1000
        print(f"{name:24} {len(dot) / 1024:7.0f} {native:7.3f} {browser:7.3f} "
              f"{browser / native:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
