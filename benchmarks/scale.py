"""What each stage a student pays costs as programs get deeper (issue 10).

    python benchmarks/scale.py [--quick] [--timeout SECONDS] [--depths 1 10 100]

For several shapes of program -- an elementwise chain, stacked tanh layers, an unrolled
RNN, a long sum, residual layers -- at 1x, 10x and 100x a lesson-sized depth, this times
each stage on its own: parse + check (source -> typed program), the Relax build, the TVM
compile with mlclab's pipeline, ``fn.text`` in three styles, ``fn.graph().svg()``
(Graphviz) and the first display of a ``%%tinynn`` cell.  It prints a table, then the
growth 10x/1x and 100x/10x of every stage; a step of 10x in depth that costs more than
30x in time is flagged as worse than linear.

Every program runs in its own process, one stage after the other, and each stage is capped
at ``--timeout`` seconds: a stage that hangs is reported as ``>Ns``, one that kills the
process as ``crash``, one that raises by the exception's name; the process is restarted
without it, and the stages that need its result are reported as ``-``.
"""
from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# One lesson-sized layer of each shape; the program repeats it ``depth`` times.  1x is 4
# layers, about the depth of the lessons' MLP and RNN examples.
LESSON_DEPTH = 4
SHAPES = {
    "elementwise chain": ("h = tanh(h * 0.9 + 0.1)", ""),
    "stacked tanh layers": ("h = tanh(h @ w + b)", ""),
    "unrolled RNN": ("h = tanh(h @ w + x @ u + b)", ""),
    "residual layers": ("h = relu(h @ w) + x", ""),
    "long sum": (None, "x + x + ... + x, one expression"),
}
STAGES = ["parse+check", "relax build", "tvm compile", "text relax", "text relay", "text let",
          "graph svg", "cell display"]
# The stages each one needs the result of.
NEEDS = {"relax build": "parse+check", "tvm compile": "relax build"}
for _stage in STAGES[3:]:
    NEEDS[_stage] = "tvm compile"
# Importing mlclab, TVM and torch: seconds on a quiet machine, over a minute on a busy one.
IMPORT_TIMEOUT = 300
GROWTH_FLAG = 30  # a 10x deeper program taking 30x longer is not linear


def program(shape: str, depth: int) -> str:
    header = ("def f(x: Tensor[(8, 32), f32], w: Tensor[(32, 32), f32], u: Tensor[(32, 32), f32],"
              " b: Tensor[(32,), f32]) -> Tensor[(8, 32), f32]:\n")
    if shape == "long sum":
        return header + "    return " + " + ".join(["x"] * depth) + "\n"
    layer = SHAPES[shape][0]
    return header + "    h = x\n" + f"    {layer}\n" * depth + "    return h\n"


# ------------------------------------------------------------------------- child process
def child(source: str, stages: list[str]) -> None:
    """Run ``stages`` in order on ``source``, printing one JSON line per finished stage."""
    import mlclab
    import tvm
    from mlclab.frontend.parser import parse_program
    from mlclab.backend.builder import build_module
    from mlclab.backend.passes import build_passes, resolve_target

    state = {}

    def run(stage):
        if stage == "parse+check":
            state["typed"] = parse_program(source, "<scale>")
        elif stage == "relax build":
            state["mod"] = build_module(state["typed"]).mod
        elif stage == "tvm compile":
            passes = tvm.transform.Sequential(build_passes("llvm"))
            tvm.compile(state["mod"], target=resolve_target("llvm"), relax_pipeline=passes)
        elif stage.startswith("text "):
            state["fn"].text(stage.split()[1])
        elif stage == "graph svg":
            state["fn"].graph().svg()
        elif stage == "cell display":
            from mlclab.notebook.cell_display import CellDisplay
            from mlclab.notebook.magic import TinyNNMagics

            show = TinyNNMagics.class_traits()["show"].default()  # the magic's default views
            CellDisplay(state["fn"].program, show)._repr_mimebundle_()

    # A restarted process (after a stage hung) first redoes, untimed, what its stages need.
    setup = [s for s in STAGES if s not in stages and any(s in _chain(t) for t in stages)]
    for stage in setup:
        run(stage)
    if "tvm compile" in setup:
        state["fn"] = mlclab.compile(source, force=True)["f"]
    # The per-stage caps start here, after the imports (a loaded machine slows them
    # tenfold) and the untimed setup.
    print(json.dumps({"ready": True}), flush=True)
    failed = set()
    for stage in stages:
        start = time.perf_counter()
        if failed.intersection(_chain(stage)):
            result = "-"
        else:
            try:
                run(stage)
                result = time.perf_counter() - start
            except Exception as exc:  # reported in the table, never hides the other stages
                result = type(exc).__name__[:14]
        if stage == "tvm compile" and isinstance(result, float):
            # Untimed: the compiled function the views below are drawn from, through the
            # public API, so they see exactly what a student has.
            state["fn"] = mlclab.compile(source, force=True)["f"]
        if not isinstance(result, float):
            failed.add(stage)
        print(json.dumps({"stage": stage, "result": result}), flush=True)


def _chain(stage):
    out = []
    while stage in NEEDS:
        stage = NEEDS[stage]
        out.append(stage)
    return out


# ------------------------------------------------------------------------ parent process
def measure(source: str, timeout: float) -> dict:
    """{stage: seconds | '>Ns' | 'crash' | an exception's name | '-'} for one program."""
    results: dict = {}
    pending = list(STAGES)
    while pending:
        proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(pending)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
        proc.stdin.write(source)
        proc.stdin.close()
        deadline = time.monotonic() + IMPORT_TIMEOUT
        while pending:
            ready, _, _ = select.select([proc.stdout], [], [],
                                        max(0.0, deadline - time.monotonic()))
            line = proc.stdout.readline() if ready else None
            if line:
                done = json.loads(line)
                deadline = time.monotonic() + timeout
                if "ready" in done:
                    continue
                results[done["stage"]] = done["result"]
                pending.remove(done["stage"])
                continue
            stuck = pending.pop(0)
            if ready:  # end of output: the process died inside this stage
                proc.wait()
                results[stuck] = "crash" if proc.returncode else "-"
            else:
                proc.kill()
                proc.wait()
                results[stuck] = f">{timeout:g}s"
            # What needed the stuck stage cannot run; the rest gets a fresh process.
            for stage in list(pending):
                if stuck in _chain(stage):
                    results[stage] = "-"
                    pending.remove(stage)
            break
        proc.wait()
    return results


def cell(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


# Stages this fast are interactive whatever their ratio, and on a shared machine a
# millisecond stage can take several once (a GC pause, a busy neighbour): not flagged.
NOISE_FLOOR = 0.1


def growth(small, big) -> str:
    if isinstance(small, float) and isinstance(big, float):
        ratio = big / max(small, 1e-3)
        flag = ratio > GROWTH_FLAG and big > NOISE_FLOOR
        return f"{ratio:.1f}" + (" !" if flag else "")
    if isinstance(big, str) and big.startswith(">"):
        return "hang !"
    return "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1x and 10x only, 20 s cap")
    parser.add_argument("--timeout", type=float, default=None,
                        help="cap of each stage in seconds (default 60, 20 with --quick)")
    parser.add_argument("--depths", type=int, nargs="+", default=None,
                        help="multiples of the lesson depth (default 1 10 100)")
    parser.add_argument("--shapes", nargs="+", choices=list(SHAPES), default=list(SHAPES),
                        metavar="SHAPE", help=f"program shapes to run (default all: "
                        f"{', '.join(SHAPES)})")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(sys.stdin.read(), json.loads(args.child))
        return 0

    timeout = args.timeout or (20.0 if args.quick else 60.0)
    scales = args.depths or ([1, 10] if args.quick else [1, 10, 100])
    print(f"time of each stage in seconds, against depth (1x = {LESSON_DEPTH} layers); "
          f"cap {timeout:g} s per stage; '!' marks a 10x step costing over {GROWTH_FLAG}x "
          f"(of stages over {NOISE_FLOOR:g} s)")
    table, flagged = {}, []
    width = max(len(s) for s in STAGES)
    for shape in args.shapes:
        print(f"\n{shape}" + (f" ({SHAPES[shape][1]})" if SHAPES[shape][1] else
                              f": {SHAPES[shape][0]}"))
        print(f"  {'stage':<{width}}" + "".join(f"{f'{s}x':>15}" for s in scales)
              + "".join(f"{f'{b}x/{a}x':>12}" for a, b in zip(scales, scales[1:])))
        for scale in scales:
            table[shape, scale] = measure(program(shape, LESSON_DEPTH * scale), timeout)
        for stage in STAGES:
            row = [table[shape, s].get(stage, "-") for s in scales]
            ratios = [growth(a, b) for a, b in zip(row, row[1:])]
            print(f"  {stage:<{width}}" + "".join(f"{cell(v):>15}" for v in row)
                  + "".join(f"{r:>12}" for r in ratios))
            if any(r.endswith("!") for r in ratios):
                flagged.append(f"{shape}: {stage}")
    # Like the other benchmarks, a missed goal is the exit status, so run_all.py reports it.
    print(f"\nworse than linear: {'; '.join(flagged)}" if flagged
          else "\nevery stage grows about linearly")
    return 1 if flagged else 0


if __name__ == "__main__":
    os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    sys.exit(main())
