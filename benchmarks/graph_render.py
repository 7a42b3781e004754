"""How long mlclab takes to draw a graph, against the graph's size and shape (issue 10).

Shapes with fan-out, where one value feeds many others (what made Graphviz explode), at about
1x, 10x and 100x of lesson size:

- ``rnn``: an unrolled RNN, ``h = tanh(h @ w + x @ u + b)`` per step (w, u, x, b read by
  every step);
- ``sum``: ``x + x + ... + x`` (x read by every add of a long chain);
- ``residual``: ``h = relu(h @ w) + x`` per layer (w and x read by every layer).

For each: the graph's size, the DOT statements drawn (copies of shared values included), and
the time to parse, to lay out the whole graph, and to lay out what the notebook shows first
(the overview of a big graph). The graphs are built in Relax directly (what ``%%tinynn``
builds from the DSL, without compiling it), so only drawing is timed.

Imported PyTorch models (issue 12; skipped without torch): ``resnet18`` (torchvision's, on a
224x224 image) and ``transformer`` (one ``nn.TransformerEncoderLayer``, d_model 64, 16
tokens), imported once with ``mlclab.from_torch`` (not timed). Their first display is
``fn.graph()``, folded by module, to SVG; "viewer" is the viewer's first payload
(``notebook.graphs.view_payload``: the folded SVG, node records and texts).

    python benchmarks/graph_render.py [--repeat 3] [--shapes rnn sum residual resnet18
                                      transformer] [--budget 2]

Exits non-zero if a first display (parse + overview + layout, median) exceeds --budget s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

SIZES = {"rnn": (16, 64, 256), "sum": (100, 130, 1000), "residual": (8, 80, 400)}
MODELS = ("resnet18", "transformer")


def rnn_module(steps: int):
    from tvm import relax
    from tvm.relax import op as R

    def var(name, shape):
        return relax.Var(name, relax.TensorType(shape, "float32"))

    h0, x, w, u, b = var("h", (4, 16)), var("x", (4, 16)), var("w", (16, 16)), \
        var("u", (16, 16)), var("b", (16,))
    bb = relax.BlockBuilder()
    with bb.function("main", [h0, x, w, u, b]):
        with bb.dataflow():
            h = h0
            for _ in range(steps):
                hw = bb.emit(R.matmul(h, w))
                xu = bb.emit(R.matmul(x, u))
                s = bb.emit(R.add(hw, xu))
                h = bb.emit(R.tanh(bb.emit(R.add(s, b))))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def sum_module(terms: int):
    from tvm import relax
    from tvm.relax import op as R

    x = relax.Var("x", relax.TensorType((8,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            s = bb.emit(R.add(x, x))
            for _ in range(terms - 2):
                s = bb.emit(R.add(s, x))
            out = bb.emit_output(s)
        bb.emit_func_output(out)
    return bb.get()


def residual_module(layers: int):
    from tvm import relax
    from tvm.relax import op as R

    x = relax.Var("x", relax.TensorType((4, 16), "float32"))
    w = relax.Var("w", relax.TensorType((16, 16), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            h = x
            for _ in range(layers):
                h = bb.emit(R.add(bb.emit(R.nn.relu(bb.emit(R.matmul(h, w)))), x))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


MODULES = {"rnn": rnn_module, "sum": sum_module, "residual": residual_module}


def imported_model(name: str):
    """The ``from_torch`` function of one of :data:`MODELS`."""
    import torch

    import mlclab

    torch.manual_seed(0)
    if name == "resnet18":
        tv = mlclab.import_torchvision()
        return mlclab.from_torch(tv.models.resnet18(weights=None), torch.randn(1, 3, 224, 224))
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.0, batch_first=True)
    return mlclab.from_torch(layer, torch.randn(2, 16, 64))


def measure_model(name: str, repeat: int) -> dict:
    from mlclab.notebook.graphs import view_payload
    from mlclab.viz import DotPlotter
    from mlclab.viz.dot import svg_text

    fn = imported_model(name)
    times = {"parse": [], "full layout": [], "first display": [], "viewer": []}
    for _ in range(repeat):
        t0 = time.perf_counter()
        g = fn.graph(collapse=None).graph
        t1 = time.perf_counter()
        full = DotPlotter().digraph(g)
        svg_text(full, timeout=600)
        t2 = time.perf_counter()
        first = fn.graph()                           # folded by module
        first.svg()
        t3 = time.perf_counter()
        view_payload(fn, "dataflow")
        t4 = time.perf_counter()
        times["parse"].append(t1 - t0)
        times["full layout"].append(t2 - t1)
        times["first display"].append(t3 - t2)
        times["viewer"].append(t4 - t3)
    statements = full.source.count(" [shape=")
    return {"nodes": len(g), "edges": len(g.edges), "drawn": statements,
            "shown": len(first.graph), **{k: statistics.median(v) for k, v in times.items()}}


def measure(shape: str, size: int, repeat: int) -> dict:
    from mlclab.viz import DotPlotter, graph
    from mlclab.viz.dot import svg_text
    from mlclab.viz.overview import overview

    mod = MODULES[shape](size)
    times = {"parse": [], "full layout": [], "overview": [], "first display": []}
    for _ in range(repeat):
        t0 = time.perf_counter()
        g = graph(mod).graph
        t1 = time.perf_counter()
        full = DotPlotter().digraph(g)
        svg_text(full, timeout=600)
        t2 = time.perf_counter()
        first = overview(g)
        svg_text(DotPlotter().digraph(first), timeout=600)
        t3 = time.perf_counter()
        times["parse"].append(t1 - t0)
        times["full layout"].append(t2 - t1)
        times["overview"].append(t3 - t2)
        times["first display"].append(t1 - t0 + t3 - t2)
    statements = full.source.count(" [shape=")
    return {"nodes": len(g), "edges": len(g.edges), "drawn": statements, "shown": len(first),
            **{k: statistics.median(v) for k, v in times.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", default=[*SIZES, *MODELS],
                        choices=[*SIZES, *MODELS])
    parser.add_argument("--budget", type=float, default=2.0, help="seconds, first display")
    args = parser.parse_args(argv)
    print(f"median of {args.repeat} runs, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; times in seconds")
    print(f"{'shape':<12}{'size':>6}{'nodes':>7}{'edges':>7}{'drawn':>7}{'shown':>7}"
          f"{'parse':>8}{'full':>8}{'first':>8}{'viewer':>8}")
    worst = 0.0
    for shape in args.shapes:
        if shape in MODELS:
            try:
                import torch  # noqa: F401
            except ModuleNotFoundError:
                print(f"{shape:<12}  skipped: needs PyTorch (pip install 'mlclab[torch]')")
                continue
            rows = [("-", measure_model(shape, args.repeat))]
        else:
            rows = [(size, measure(shape, size, args.repeat)) for size in SIZES[shape]]
        for size, r in rows:
            worst = max(worst, r["first display"], r.get("viewer", 0.0))
            viewer = f"{r['viewer']:>8.2f}" if "viewer" in r else f"{'-':>8}"
            print(f"{shape:<12}{size:>6}{r['nodes']:>7}{r['edges']:>7}{r['drawn']:>7}"
                  f"{r['shown']:>7}{r['parse']:>8.2f}{r['full layout']:>8.2f}"
                  f"{r['first display']:>8.2f}{viewer}")
    print("drawn: DOT nodes incl. copies of shared values; shown: nodes of the first display; "
          "full: layout of the whole graph; first: parse + overview layout (models: fn.graph(), "
          "folded by module, to SVG); viewer: the viewer's first payload")
    verdict = "within" if worst <= args.budget else "OVER"
    print(f"slowest first display {worst:.2f} s: {verdict} the {args.budget:.1f} s budget")
    return 0 if worst <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
