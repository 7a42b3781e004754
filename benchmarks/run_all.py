"""Every mlclab benchmark, one command:

    python benchmarks/run_all.py [--quick]

Each benchmark runs in its own process (a clean thread pool, no warm caches shared between
them) and prints its own table; this script adds what a reader needs to judge the figures:
the CPU, the core count, the BLAS numpy uses and the machine's load average around the run
-- on a shared 2-core VM a busy neighbour can move a median severalfold.

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are dropped for the benchmark processes only: some
machines here set them to dodge bugs in older OpenBLAS builds, and they slow a current
numpy down, which would flatter mlclab.  Tests and CI keep them.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (script, what it measures); scripts that are not there yet are reported and skipped.
BENCHMARKS = [
    ("kernels.py", "mlclab vs numpy and PyTorch eager through the public call path"),
    ("compile_latency.py", "compile latency and cache hits"),
    ("graph_render.py", "drawing time against graph size, for fan-out shapes"),
    ("browser_layout.py", "layout by the WebAssembly Graphviz (no dot) against the dot program"),
    ("scale.py", "each stage's time against program depth"),
    ("torch_import.py", "from_torch's stages against model depth"),
    ("resnet.py", "ResNet-18 through mlclab vs PyTorch eager, 1 and 2 threads"),
    ("zoo.py", "a model zoo vs PyTorch eager, torch.compile and ONNX Runtime, 1 and 2 threads"),
    ("hub_load.py", "a class on a real JupyterHub: 4, 8 and 16 simulated students run lesson 01"),
    ("llm.py", "GPT-2 small's prefill and decode tokens/s vs PyTorch eager, torch.compile and "
               "ONNX Runtime, 1 and 2 threads"),
]
DROPPED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def describe_machine(env) -> str:
    probe = (
        "import numpy, tvm\n"
        "from mlclab.backend.passes import resolve_target\n"
        "from mlclab.backend.schedules import vector_lanes\n"
        "t = resolve_target('llvm')\n"
        "cfg = numpy.show_config(mode='dicts')['Build Dependencies']['blas']\n"
        "print(f\"target {t.attrs.get('mcpu', 'generic')} ({vector_lanes(t)} float32 lanes); \"\n"
        "      f\"TVM {tvm.__version__}, numpy {numpy.__version__} with \"\n"
        "      f\"{cfg.get('name')} {cfg.get('version')}\")\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, cwd=HERE.parent)
    return out.stdout.strip() or f"(machine probe failed: {out.stderr.strip()[-300:]})"


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="run every mlclab benchmark")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run with few rounds (figures are not meaningful)")
    args = parser.parse_args(argv)

    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # PyTorch's workers: see kernels.py
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))

    print(f"mlclab benchmarks -- {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    print(f"{platform.machine()}, {os.cpu_count()} cores, "
          f"TVM_NUM_THREADS={env['TVM_NUM_THREADS']}, "
          f"TVM_THREAD_POOL_SPIN_COUNT="
          f"{env.get('TVM_THREAD_POOL_SPIN_COUNT', 'unset (mlclab.tvm_setup.POOL_SPIN_COUNT)')}")
    print(describe_machine(env))
    dropped = [k for k in DROPPED if k in os.environ]
    if dropped:
        print(f"unset for the benchmarks: {', '.join(dropped)}")
    print(f"load average before: {load()}")

    failed = []
    for script, what in BENCHMARKS:
        path = HERE / script
        print(f"\n== {script}: {what}")
        if not path.exists():
            print("   (not present in this checkout: skipped)")
            continue
        quick = args.quick and script in ("kernels.py", "scale.py", "torch_import.py", "resnet.py",
                                              "zoo.py", "hub_load.py", "llm.py")
        cmd = [sys.executable, str(path)] + (["--quick"] if quick else [])
        sys.stdout.flush()
        started = time.perf_counter()
        rc = subprocess.run(cmd, env=env, cwd=HERE.parent).returncode
        print(f"   ({time.perf_counter() - started:.1f} s, exit {rc})")
        if rc != 0:
            failed.append(script)
    print(f"\nload average after: {load()}")
    if failed:
        print(f"goals missed or errors in: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
