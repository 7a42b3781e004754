"""What the build record costs and saves on a big model (issue 19).

    python benchmarks/build_record.py [--model resnet50|resnet18]

torchvision's model (``weights=None``, eval, seed 0, batch 1, 224x224) goes through
``mlclab.from_torch``. Printed: the compile with the pass instrument on against the same
compile without it (interleaved, medians), the views that read the record
(``fn.pipeline()``, the ``tir`` text, the fused view, one profile run), and the process's
resident memory with the record held and after dropping it. Goals: the record adds no
measurable compile time (ratio <= 1.1) and a view returns in under a second.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

COMPILE_RATIO_GOAL = 1.1
VIEW_GOAL = 1.0          # seconds


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50", choices=("resnet50", "resnet18"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import mlclab

    mlclab.import_torchvision()
    import torch
    import torchvision
    import tvm

    from mlclab.api.build import build_executable
    from mlclab.backend.passes import build_passes, resolve_target

    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)(weights=None).eval()
    start = time.perf_counter()
    fn = mlclab.from_torch(model, torch.randn(1, 3, 224, 224))
    print(f"{args.model}: from_torch {time.perf_counter() - start:.1f} s; "
          f"passes {fn.build_record.seconds:.2f} s; whole pipeline: {fn.program.optimized}")

    failed = False
    for what, view in (("pipeline()", fn.pipeline), ("text('tir')", lambda: fn.text("tir")),
                       ("graph('fused')", lambda: fn.graph("fused")),
                       ("profile(repeat=1)", lambda: fn.profile(repeat=1))):
        start = time.perf_counter()
        view()
        seconds = time.perf_counter() - start
        goal = what.startswith("profile") or seconds <= VIEW_GOAL
        failed |= not goal
        print(f"  {what:18} {seconds:6.2f} s{'' if goal else '  MISSED'}")

    gc.collect()
    held = rss_mb()
    fn.program.built.record = None
    gc.collect()
    print(f"  resident memory {held:.0f} MB with the record, {rss_mb():.0f} MB without")

    mod, target = fn.mod, resolve_target("llvm")
    pipeline = tvm.transform.Sequential(build_passes("llvm"))
    recorded, plain = [], []
    for _ in range(args.rounds):        # interleaved
        start = time.perf_counter()
        build_executable(mod, "llvm")
        recorded.append(time.perf_counter() - start)
        start = time.perf_counter()
        tvm.compile(mod, target=target, relax_pipeline=pipeline)
        plain.append(time.perf_counter() - start)
        gc.collect()
    ratio = statistics.median(recorded) / statistics.median(plain)
    failed |= ratio > COMPILE_RATIO_GOAL
    print(f"  compile recorded {statistics.median(recorded):.1f} s, unrecorded "
          f"{statistics.median(plain):.1f} s: {ratio:.2f}x "
          f"(goal <= {COMPILE_RATIO_GOAL}x{'' if ratio <= COMPILE_RATIO_GOAL else ', MISSED'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
