"""How long mlclab takes to draw a big graph: a 1,000-node Relax function to SVG.

The target (issue 3): at most 2 s for 1,000 nodes, parse + DOT + Graphviz layout + SVG.
The graph is a residual network in Relax (each block: matmul, add bias, relu, add the skip
connection), so it has fan-out and long edges like real models, not just a chain.

    python benchmarks/graph_render.py [--nodes 1000] [--repeat 5]

Prints the median and min of each phase; exits non-zero if the median total exceeds --budget.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time


def residual_module(nodes: int):
    """A Relax ``main`` with about ``nodes`` graph nodes (params, constants and bindings)."""
    import numpy as np
    from tvm import relax
    from tvm.relax import op as R

    width = 16
    x = relax.Var("x", relax.TensorType((4, width), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = x
            count = 1
            block = 0
            while count + 6 <= nodes:
                w = relax.const(np.full((width, width), 0.01, "float32"))
                b = relax.const(np.zeros(width, "float32"))
                m = bb.emit(R.matmul(h, w), f"mm{block}")
                a = bb.emit(R.add(m, b), f"bias{block}")
                r = bb.emit(R.nn.relu(a), f"act{block}")
                h = bb.emit(R.add(r, h), f"res{block}")
                count += 6                         # 2 constants + 4 bindings
                block += 1
            while count < nodes:
                h = bb.emit(R.negative(h))
                count += 1
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()


def measure(nodes: int, repeat: int):
    from mlclab.viz import DataflowParser, DotPlotter

    mod = residual_module(nodes)
    phases = {"parse": [], "dot source": [], "layout+svg": [], "total": [], "cpu": []}
    size = 0
    for _ in range(repeat):
        # CPU time (this process + the dot child) next to wall time: on a shared machine the
        # wall time mostly measures the neighbours.
        c0 = time.process_time() + _children_cpu()
        t0 = time.perf_counter()
        graph = DataflowParser().parse(mod)
        t1 = time.perf_counter()
        digraph = DotPlotter().digraph(graph)
        source = digraph.source
        t2 = time.perf_counter()
        svg = digraph.pipe(format="svg", encoding="utf-8")
        t3 = time.perf_counter()
        c1 = time.process_time() + _children_cpu()
        size = len(graph.nodes)
        for key, value in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t3 - t0, c1 - c0)):
            phases[key].append(value)
        assert "<svg" in svg and len(source) > 0
    return size, phases


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds, median total")
    args = parser.parse_args(argv)
    size, phases = measure(args.nodes, args.repeat)
    print(f"graph: {size} nodes, {args.repeat} runs, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for key, values in phases.items():
        print(f"  {key:<11} median {statistics.median(values) * 1000:8.1f} ms   "
              f"min {min(values) * 1000:8.1f} ms")
    total = statistics.median(phases["total"])
    verdict = "within" if total <= args.budget else "OVER"
    print(f"{verdict} the {args.budget:.1f} s budget")
    return 0 if total <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
