"""Where ``mlclab.from_torch``'s compile time goes, stage by stage (issue 21: every zoo model
compiles, first call included, in under 10 s on an idle 2-core machine).

    python benchmarks/compile_stages.py resnet50 densenet121 bert-base
    python benchmarks/zoo.py --compile-only --models resnet50,densenet121

Each model is compiled in a process of its own (a fresh TVM, so no kernel is cached from an
earlier model).  The stages are timed by wrapping the functions that do them, here in the
benchmark only: torch.export, TVM's ``from_exported_program``, mlclab's index checks, each
pass of the Relax pipeline (the build record's own timings), the schedule rules' attempts
(kept and thrown away), TIR lowering, LLVM code generation, and at the first call the VM's
setup (where TVM's LLVM module JIT-compiles its machine code) and the run itself.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

RESULT = "STAGES-RESULT "
TARGET_SECONDS = 10.0          # from_torch plus the first call, per model
DEFAULT = ["resnet50", "densenet121", "efficientnet-b0", "bert-base", "vit-b16"]


class _Clock:
    """Seconds and calls per stage name, from wrapped functions."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.cpu = defaultdict(float)       # CPU seconds of this process (all its threads)
        self.calls = defaultdict(int)
        self.patches = []

        self.linking = False      # inside the final TIR lowering and code generation

    def wrap(self, owner, attr: str, stage):
        """Time ``owner.attr`` as ``stage`` (a name, or a function of the clock giving one)."""
        original = getattr(owner, attr)

        def timed(*args, **kwargs):
            name = stage(self) if callable(stage) else stage
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.cpu[name] += time.process_time() - cpu
                self.calls[name] += 1

        setattr(owner, attr, timed)
        self.patches.append((owner, attr, original))


def _instrument(clock: _Clock):
    import tvm.relax.vm_build
    import tvm.runtime.vm

    import mlclab.frontend.pytorch as pytorch
    from mlclab.backend.schedules.rule import CPURule
    from mlclab.frontend.torch_convert import RecordingImporter

    clock.wrap(pytorch, "export", "torch.export")
    clock.wrap(RecordingImporter, "translate", "from_exported_program")
    clock.wrap(pytorch, "guard_indices", "index checks")
    clock.wrap(sys.modules["tvm.tirx.build"], "codegen_build",
               lambda c: "LLVM codegen" if c.linking else "LLVM codegen inside passes")
    link = tvm.relax.vm_build._vmlink

    def linking(*args, **kwargs):
        clock.linking = True
        try:
            return link(*args, **kwargs)
        finally:
            clock.linking = False

    tvm.relax.vm_build._vmlink = linking
    clock.wrap(tvm.relax.vm_build, "_vmlink", "TIR lowering + LLVM codegen")
    clock.wrap(tvm.runtime.vm.VirtualMachine, "_setup_device", "first call: VM setup (LLVM JIT)")

    try_schedule = CPURule.try_schedule

    def attempt(self, func, lanes):
        start, cpu = time.perf_counter(), time.process_time()
        sch, reason = try_schedule(self, func, lanes)
        kept = "kept" if sch is not None else "thrown away"
        clock.seconds[f"schedule attempts {kept}"] += time.perf_counter() - start
        clock.cpu[f"schedule attempts {kept}"] += time.process_time() - cpu
        clock.calls[f"schedule attempts {kept}"] += 1
        return sch, reason

    CPURule.try_schedule = attempt


def measure(name: str) -> dict:
    """Compile zoo model ``name`` once, in this process, and return its stage times."""
    import numpy as np

    import mlclab
    import zoo

    model, inputs = zoo.MODELS[name].build()
    mlclab.compile("def warm(a: Tensor[(2, 3), f32]):\n    return a + a\n")  # TVM's first use
    clock = _Clock()
    _instrument(clock)
    start, cpu_start = time.perf_counter(), time.process_time()
    fn = mlclab.from_torch(model, *inputs)
    built = time.perf_counter()
    fn(*[np.asarray(x) for x in inputs])
    called, cpu_end = time.perf_counter(), time.process_time()
    record = fn.build_record
    passes = [(r.name, r.seconds) for r in record.runs]
    from tvm import tirx
    final = record.final
    kernels = [f for _, f in final.functions_items() if isinstance(f, tirx.PrimFunc)]
    return {"model": name, "from_torch": built - start, "first_call": called - built,
            "cpu": cpu_end - cpu_start,
            "optimized": bool(record.optimized), "passes": passes, "kernels": len(kernels),
            "stages": dict(clock.seconds), "stages_cpu": dict(clock.cpu),
            "calls": dict(clock.calls),
            "load": os.getloadavg()[0]}


def report(result: dict) -> str:
    """The stages of one model's compile: wall seconds, and CPU seconds where timed (the
    machine is shared: CPU time is what a loaded machine does not inflate)."""
    wall, cpu, calls = result["stages"], result.get("stages_cpu", {}), result["calls"]
    total = result["from_torch"] + result["first_call"]
    relax = sum(sec for _, sec in result["passes"])
    rows = [
        ("torch.export", "torch.export"),
        ("from_exported_program (+ mlclab's translation fixes)", "from_exported_program"),
        ("index checks (guard_indices)", "index checks"),
        ("Relax pipeline (the build record's passes)", None),
        ("  schedule attempts kept", "schedule attempts kept"),
        ("  schedule attempts thrown away", "schedule attempts thrown away"),
        ("  LLVM codegen inside passes (FoldConstant)", "LLVM codegen inside passes"),
        ("TIR lowering + LLVM codegen (after the pipeline)", "TIR lowering + LLVM codegen"),
        ("  of which LLVM codegen", "LLVM codegen"),
        ("first call: VM setup (LLVM JIT)", "first call: VM setup (LLVM JIT)"),
    ]
    lines = [f"== {result['model']}: {total:.1f} s = from_torch {result['from_torch']:.1f} s + "
             f"first call {result['first_call']:.1f} s; CPU {result['cpu']:.1f} s "
             f"({'under' if total < TARGET_SECONDS else 'OVER'} {TARGET_SECONDS:.0f} s; "
             f"{result['kernels']} kernels; mlclab's pipeline: {result['optimized']}; "
             f"load {result['load']:.1f})",
             f"  {'stage':<56s} {'wall':>7s} {'cpu':>7s} {'calls':>6s}"]
    for what, key in rows:
        if key is None:
            lines.append(f"  {what:<56s} {relax:7.2f}")
        else:
            lines.append(f"  {what:<56s} {wall.get(key, 0.0):7.2f} {cpu.get(key, 0.0):7.2f} "
                         f"{calls.get(key, 0):6d}")
    top = sorted(result["passes"], key=lambda p: -p[1])[:6]
    lines.append("  slowest passes (wall): " + ", ".join(f"{n} {sec:.2f} s" for n, sec in top))
    return "\n".join(lines)


def run_child(name: str, timeout: float = 1800) -> dict | None:
    """``measure(name)`` in a fresh process (the benchmark's own environment)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True,
                          text=True, timeout=timeout, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    print(f"== {name}: failed\n{proc.stderr[-2000:]}")
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=DEFAULT)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        with contextlib.redirect_stdout(sys.stderr):
            result = measure(args.child)
        print(RESULT + json.dumps(result))
        return
    over = []
    for name in args.models:
        result = run_child(name)
        if result is not None:
            print(report(result), flush=True)
            if result["from_torch"] + result["first_call"] >= TARGET_SECONDS:
                over.append(name)
    print(f"over {TARGET_SECONDS:.0f} s: {', '.join(over) or 'none'}")


if __name__ == "__main__":
    main()
