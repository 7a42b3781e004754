"""Where a zoo model's time goes inside a real call, kernel by kernel, against ONNX Runtime's
operators (issue 32): which of mlclab's kernels lose to which of ONNX Runtime's.

    python benchmarks/zoo_kernels.py --models resnet18d,resnet50 [--threads 1,2] [--rounds 25]

``fn.profile()`` times each kernel hot (back-to-back repeats of it alone), which hides what a
kernel pays in a real call: weights that come from memory because the model's other weights
evicted them, an input its producer left in a farther cache.  Here both runtimes are timed
inside whole calls, alternating call by call in one process so they see the same moments of
a shared machine: mlclab's kernels by a VM instrument (a timestamp before and after each
kernel), ONNX Runtime's operators by its own profiler (``enable_profiling``), each runtime in
turns of at least ``zoo.TURN_S`` after ``zoo.SETTLE_S`` idle with the turn's first call
untimed, as the zoo times them
(``turn``).  Each kernel's time is the fastest of its timed calls after the first three:
on a machine shared with other processes a kernel's time is its own plus any preemption
that landed in it (a 4 ms time slice in a 1 ms kernel), and calls repeat with a period that
can land one on the same kernel round after round, so a median can still hold it; the
minimum does not.  The convolutions are paired in
execution order when both runtimes have the same number of them (one kernel per ``Conv``
node, as in the ResNets); the rest are summed by kind.  Each (model, threads) runs in a
process of its own (TVM's thread pool is sized once per process), with the zoo's model and
ONNX export.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import zoo  # noqa: E402

RESULT = "ZOO-KERNELS "     # the line a child process reports its measurement on
SKIPPED = 3                 # first rounds not counted (first touches, ONNX Runtime's arenas)

# Kinds, from mlclab's kernel names and ONNX Runtime's operator types.
KINDS = (("conv", ("conv2d", "Conv")), ("pool", ("pool", "Pool")),
         ("matmul", ("matmul", "Gemm", "MatMul")),
         ("layout", ("layout_transform", "Reorder")))


def kind(name: str) -> str:
    """``conv``, ``pool``, ``matmul``, ``layout`` or ``other`` for a kernel name of mlclab's or
    an operator type of ONNX Runtime's."""
    for label, marks in KINDS:
        if any(mark in name for mark in marks):
            return label
    return "other"


def by_kind(rows) -> dict:
    """``{kind: microseconds}`` summed over ``rows`` of ``(name, microseconds)``."""
    sums: dict = {}
    for name, us in rows:
        sums[kind(name)] = sums.get(kind(name), 0.0) + us
    return sums


def fastest(runs) -> list:
    """``[(name, least microseconds)]`` of per-round lists ``[(name, seconds)]`` that all
    hold the same names in the same order (the first ``SKIPPED`` rounds dropped)."""
    counted = runs[SKIPPED:] if len(runs) > SKIPPED else runs
    names = [n for n, _ in counted[0]]
    if any([n for n, _ in run] != names for run in counted):
        raise RuntimeError("the kernels of one call changed from one round to the next")
    return [(n, 1e6 * min(run[i][1] for run in counted))
            for i, n in enumerate(names)]


def turn(seconds: float = zoo.TURN_S, settle: float = zoo.SETTLE_S):
    """A runtime's turn, as the zoo's: after ``settle`` seconds idle, call numbers 0, 1, ...
    for at least ``seconds`` and two calls, call 0 untimed.  Alternating single calls at
    two threads timed the first ~5 ms of each of mlclab's calls at about one thread's speed
    (the other runtime's workers still awake on the second core: ResNet-18d's first six
    convolutions 2x ONNX Runtime's, its later ones even).  Turns without the idle still
    did: ONNX Runtime's worker spins ~30 ms after its turn, and ResNet-18d's calls right
    after it took, by position in mlclab's turn, 41.9, 18.3, then 9.6-10.1 ms (medians of
    25 turns, 2 threads, load 2.0; after 0.2 s idle 9.6-9.9 from the first) -- a 50 ms turn
    then timed only the second, its kernels at up to one thread's speed."""
    import time

    time.sleep(settle)
    start, call = time.perf_counter(), 0
    while call < 2 or time.perf_counter() - start < seconds:
        yield call
        call += 1


def measure(name: str, threads: int, rounds: int) -> dict:
    import io
    import time

    import numpy as np
    import onnxruntime as ort
    import torch
    import tvm
    from tvm import relax

    import mlclab

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, inputs = zoo.MODELS[name].build()
    model.eval()
    arrays = [x.numpy().copy() for x in inputs]
    fn = mlclab.from_torch(model, *inputs)
    fn(*arrays)
    device = tvm.cpu(0)
    vm = relax.VirtualMachine(fn.executable, device=device)
    stamps: list = []

    def instrument(func, symbol, before, ret, *args):
        if not str(symbol).startswith("vm."):
            stamps.append((str(symbol), time.perf_counter()))
        return 0

    vm.set_instrument(instrument)
    entry, tensors = vm[fn.name], [tvm.runtime.tensor(a, device) for a in arrays]

    buffer = io.BytesIO()
    torch.onnx.export(model, inputs, buffer, dynamo=False, opset_version=17)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = ort.InferenceSession(buffer.getvalue(), options,
                                   providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
    ours, timed = [], []    # mlclab's timed calls; whether each ONNX Runtime run is timed
    for _ in range(rounds):
        for call in turn():
            stamps.clear()
            entry(*tensors)
            if call:
                ours.append([(stamps[i][0], stamps[i + 1][1] - stamps[i][1])
                             for i in range(0, len(stamps), 2)])
        for call in turn():
            session.run(None, feeds)
            timed.append(call > 0)
    events = json.loads(Path(session.end_profiling()).read_text())
    nodes = [(f"{e['args'].get('op_name', '?')} {e['name'][:-len('_kernel_time')]}",
              e["dur"] / 1e6) for e in events
             if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_run = len(nodes) // len(timed)
    theirs = [nodes[k * per_run:(k + 1) * per_run] for k, kept in enumerate(timed) if kept]
    return {"model": name, "threads": threads, "load": os.getloadavg()[0],
            "mlclab": fastest(ours), "onnxruntime": fastest(theirs),
            "same_output": bool(np.allclose(fn(*arrays), session.run(None, feeds)[0],
                                            rtol=1e-3, atol=1e-4))}


def report(result: dict) -> str:
    """The comparison as text: totals, sums by kind, and the convolutions paired."""
    ours, theirs = result["mlclab"], result["onnxruntime"]
    total_ours, total_theirs = sum(t for _, t in ours), sum(t for _, t in theirs)
    lines = [f"{result['model']}, {result['threads']} thread(s), load {result['load']:.1f}: "
             f"mlclab's kernels {total_ours:.0f} us, ONNX Runtime's operators "
             f"{total_theirs:.0f} us ({total_ours / total_theirs:.3f}x)"]
    mine, other = by_kind(ours), by_kind(theirs)
    for label in sorted(set(mine) | set(other), key=lambda k: -mine.get(k, 0.0)):
        a, b = mine.get(label, 0.0), other.get(label, 0.0)
        lines.append(f"  {label:7} {a:9.0f} {b:9.0f}  {a - b:+8.0f} us")
    convs = [r for r in ours if kind(r[0]) == "conv"]
    their_convs = [r for r in theirs if kind(r[0]) == "conv"]
    if convs and len(convs) == len(their_convs):
        lines.append("  convolutions in execution order (mlclab, ONNX Runtime, difference):")
        for (a_name, a), (b_name, b) in zip(convs, their_convs):
            lines.append(f"    {a:8.0f} {b:8.0f} {a - b:+7.0f}  {a_name[:40]:40} {b_name}")
    else:
        lines.append(f"  ({len(convs)} convolution kernels against {len(their_convs)} Conv "
                     "operators: not paired)")
    return "\n".join(lines)


def _child(name: str, threads: int, rounds: int) -> dict:
    return zoo.run_child(Path(__file__), RESULT, name, threads, ["--rounds", str(rounds)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18d,resnet50",
                        help="comma-separated zoo names (benchmarks/zoo.py --list)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=25, help="turns of each runtime")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process's model
    args = parser.parse_args(argv)
    if args.rounds <= SKIPPED:
        parser.error(f"--rounds: more than {SKIPPED} (the first {SKIPPED} are not counted)")
    if args.one:
        result = measure(args.one, int(args.threads), args.rounds)
        print(RESULT + json.dumps(result), flush=True)
        return 0
    unknown = [n for n in args.models.split(",") if n not in zoo.MODELS]
    if unknown:
        parser.error(f"--models: unknown {', '.join(unknown)} (see zoo.py --list)")
    for name in args.models.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            result = _child(name, threads, args.rounds)
            print(result["error"] if "error" in result else report(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
