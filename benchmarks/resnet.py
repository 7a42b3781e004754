"""ResNet-18 through mlclab against PyTorch eager, on 1 and 2 threads (issue 14).

    python benchmarks/resnet.py [--quick] [--threads N]

torchvision's ``resnet18(weights=None)`` (eval mode, seed 0, batch 1, 224x224) goes through
``mlclab.from_torch`` (torch.export, TVM's importer, mlclab's pipeline: batch norm folded,
convolutions in the NCHW[x]c layout) and is called the way a student calls it, with an
ordinary numpy array; each thread count runs in a process of its own (TVM's
thread pool is sized once per process), where PyTorch gets the same count.  Calls of the two
are timed interleaved (``timing.interleave``) and compared by their medians; the goal is
mlclab <= 2x PyTorch.  Also printed: the compile time (goal < 10 s), the largest difference
from PyTorch's output (a wrong result fails the run; a missed goal does not) and the
slowest kernels of one call, each timed in place by ``mlclab.inspect.profile``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

GOAL = 2.0               # mlclab / PyTorch eager, per thread count
COMPILE_GOAL = 10.0      # seconds
TOLERANCE = 1e-4         # largest absolute difference from PyTorch's logits
TOP = 15                 # kernels listed


def measure(threads: int, quick: bool) -> int:
    """This process's run at ``threads`` threads; prints its table, returns the exit code."""
    import numpy as np
    import torch

    import mlclab
    from mlclab import tvm_setup
    from timing import interleave

    torch.set_num_threads(threads)
    mlclab.import_torchvision()
    from torchvision.models import resnet18

    torch.manual_seed(0)
    model = resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    tvm_setup.tvm()  # TVM's import (seconds, once per process) is not compile time
    started = time.perf_counter()
    fn = mlclab.from_torch(model, x)     # torch.export, TVM's importer, mlclab's build
    compile_s = time.perf_counter() - started
    # What a student passes: an ordinary numpy array (numpy aligns it to 16 bytes only).
    image = x.numpy().copy()

    with torch.inference_mode():
        want = model(x).numpy()
        got = fn(image)
        error = float(np.abs(got - want).max())
        rounds = 7 if quick else 41
        (mine, theirs), k = interleave([lambda: fn(image), lambda: model(x)], rounds=rounds,
                                       warmup=3)
    ratio = mine / theirs
    print(f"threads {threads} (TVM {os.environ.get('TVM_NUM_THREADS')}, torch "
          f"{torch.get_num_threads()}); pipeline "
          f"{'mlclab' if fn.program.optimized else fn.build_record.fallbacks}; "
          f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"  mlclab {mine:8.2f} ms   PyTorch eager {theirs:8.2f} ms   ratio {ratio:5.2f}x   "
          f"goal <= {GOAL:g}x: {'ok' if ratio <= GOAL else 'MISSED'}   ({k} interleaved rounds)")
    print(f"  compile {compile_s:5.2f} s (mlclab.from_torch: export, import, build)   goal < "
          f"{COMPILE_GOAL:g} s: {'ok' if compile_s < COMPILE_GOAL else 'MISSED'}")
    print(f"  max |mlclab - PyTorch| = {error:.2e}  "
          f"({'ok' if error <= TOLERANCE else 'WRONG'}, tolerance {TOLERANCE:g})")

    prof = fn.profile(image, repeat=3 if quick else 5)
    kernels = prof.by_time()
    print(f"  kernels: {len(kernels)} calls, {prof.total_seconds * 1e3:.2f} ms in kernels "
          f"(each timed warm by time_evaluator), whole call {prof.call_seconds * 1e3:.2f} ms; "
          f"slowest {min(TOP, len(kernels))}:")
    module_at = {info.span.lineno: info.module for info in fn.bindings.values()}
    for kernel in kernels[:TOP]:
        modules = sorted({module_at[line] for line in kernel.lines if module_at.get(line)})
        print(f"    {kernel.seconds * 1e3:7.3f} ms {prof.share(kernel):6.1%} "
              f"{kernel.gflops:7.1f} GFLOP/s  {kernel.name:40} {', '.join(modules)}")
    return 0 if error <= TOLERANCE and fn.program.optimized else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--threads", type=int, help="run only this thread count, in this "
                        "process (TVM_NUM_THREADS must match)")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed (pip install 'mlclab[torch]'): skipped")
        return 0
    if args.threads:
        return measure(args.threads, args.quick)
    worst = 0
    for threads in (1, 2):
        env = dict(os.environ, TVM_NUM_THREADS=str(threads))
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")        # as run_all.py (PyTorch's pool)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent),
                                                          env.get("PYTHONPATH")]))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--threads", str(threads)]
        sys.stdout.flush()
        worst = max(worst, subprocess.run(cmd + (["--quick"] if args.quick else []),
                                          env=env).returncode)
    return worst


if __name__ == "__main__":
    sys.exit(main())
