"""Each lesson's peak memory and time in a fresh kernel, and the compile cache cold vs warm.

    python benchmarks/lesson_memory.py [LESSON.ipynb ...] [--torch-at-import] [--mlclab-first]
                                       [--cache cold|warm|off]

Runs every lesson (default: all of lessons/) top to bottom with nbclient in a fresh kernel and
prints the kernel's peak resident memory (its VmHWM, read after every cell, so the cell that
set the peak is named), its memory after the first cell, and the lesson's wall time. Budgets
(issue 29): every lesson <= 1 GB (Binder guarantees 1 GB), a lesson without a model <= 700 MB
(a lesson "has a model" when its code brings a PyTorch module in: ``MODEL_CODE``; lessons are
found by glob, so renamed or merged ones are measured under their new names).

A lesson whose first cell imports ``tvm`` before ``mlclab`` gets torch with TVM (mlclab can
keep torch out of TVM's import only once it is imported itself, ``tvm_setup.defer_torch``);
``--mlclab-first`` runs each lesson with ``import mlclab`` put before its first cell, in memory
(the lesson files are not changed), to show what that order saves. ``--torch-at-import`` runs
the kernels with ``MLCLAB_TVM_IMPORTS_TORCH=1`` (TVM-FFI's own behaviour: torch imported with
TVM), the figure before issue 29. ``--cache cold`` runs each
lesson with an empty disk cache folder, ``warm`` runs it twice into one folder and reports the
second run (a restarted kernel), ``off`` (the default) without a disk cache. Lessons run one
after another; the load average is printed beside the figures, which are only comparable
within one run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
GB = 1024
BUDGET_MODEL_MB, BUDGET_PLAIN_MB = 1 * GB, 700
#: what a lesson that brings a PyTorch model in runs (read from its code, so a renumbered or
#: merged lesson keeps its budget): mlclab's importer, TVM's, torchvision, its own nn.Module
MODEL_CODE = re.compile(r"\bfrom_torch\(|\bfrom_exported_program\(|\bfrom_fx\(|"
                        r"\bimport_torchvision\(|\bnn\.Module\b")


def uses_a_model(path: Path) -> bool:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return any(cell.cell_type == "code" and MODEL_CODE.search(cell.source) for cell in nb.cells)


def budget_mb(path: Path) -> int:
    """Issue 29's budget: 1 GB for a lesson with a PyTorch model, 700 MB for the others."""
    return BUDGET_MODEL_MB if uses_a_model(path) else BUDGET_PLAIN_MB


def status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


# Prepended with --cache: the seconds spent in mlclab's builds or loading them from disk (a
# program's and its traced build's), summed. (It imports mlclab first, so torch stays out.)
TIME_BUILDS = """
import time as _time
import mlclab.api.build as _build
_build.BUILD_SECONDS = 0.0
_compiled = _build._compiled
def _timed(*args, **kwargs):
    start = _time.perf_counter()
    try:
        return _compiled(*args, **kwargs)
    finally:
        _build.BUILD_SECONDS += _time.perf_counter() - start
_build._compiled = _timed
"""


def run_lesson(path: Path, env: dict, timeout_s: int = 900, mlclab_first: bool = False,
               cells: bool = False, timed_builds: bool = False) -> dict:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    if mlclab_first:
        nb.cells.insert(0, nbformat.v4.new_code_cell("import mlclab"))
    if timed_builds:
        nb.cells.insert(0, nbformat.v4.new_code_cell(TIME_BUILDS))
    # what the disk cache saw: hits are programs a restarted kernel did not compile
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json, sys\n"
        "if 'mlclab' in sys.modules:\n"
        "    info = sys.modules['mlclab'].cache_info()['disk'] or {}\n"
        "    info['build_s'] = getattr(sys.modules['mlclab.api.build'], 'BUILD_SECONDS', None)\n"
        "    print('CACHE', json.dumps(info))"))
    client = NotebookClient(nb, kernel_name="python3", timeout=timeout_s, allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    peaks, errors, first = [], 0, None
    start = time.perf_counter()
    with client.setup_kernel(env=env):
        pid = client.km.provisioner.process.pid
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
            errors += not expected and any(o.get("output_type") == "error"
                                           for o in cell.get("outputs", []))
            peaks.append((status_mb(pid, "VmHWM"), index))
            if cells:
                print(f"  cell {index:3d}: peak {peaks[-1][0]:6.0f} MB, now "
                      f"{status_mb(pid, 'VmRSS'):6.0f} MB  {cell.source.splitlines()[:1]}",
                      flush=True)
            if first is None:
                first = status_mb(pid, "VmRSS")
    seconds = time.perf_counter() - start
    disk = None
    for out in nb.cells[-1].get("outputs", []):
        if out.get("name") == "stdout" and out["text"].startswith("CACHE "):
            disk = json.loads(out["text"][len("CACHE "):])
    peak, _ = max(peaks)
    cell = next(i for p, i in peaks if p == peak)        # the first cell that reached it
    return {"peak": peak, "cell": cell, "first": first, "seconds": seconds, "errors": errors,
            "disk": disk}


def _disk(info) -> str:
    if not info or "hits" not in info:
        return "-"
    built = "" if info.get("build_s") is None else f", {info['build_s']:.1f} s in builds"
    return f"{info['hits']}/{info['misses']}/{info['writes']}{built}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*", type=Path)
    ap.add_argument("--torch-at-import", action="store_true")
    ap.add_argument("--mlclab-first", action="store_true")
    ap.add_argument("--cells", action="store_true", help="print each cell's memory")
    ap.add_argument("--cache", choices=["off", "cold", "warm"], default="off")
    args = ap.parse_args()
    lessons = args.lessons or sorted(LESSONS.glob("[0-9A][0-9]-*.ipynb"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    if args.torch_at_import:
        env["MLCLAB_TVM_IMPORTS_TORCH"] = "1"
    print(f"# {len(lessons)} lessons, torch at TVM's import: {args.torch_at_import}, "
          f"mlclab imported first: {args.mlclab_first}, disk cache: {args.cache}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'lesson':46} {'peak MB':>8} {'at cell':>7} {'after cell 1':>12} {'seconds':>8} "
          f"{'budget':>7}  errors  disk cache (hits/misses/writes)")
    over = 0
    for lesson in lessons:
        budget = budget_mb(lesson)
        runs = []
        with tempfile.TemporaryDirectory() as folder:
            env["MLCLAB_CACHE_DIR"] = "off" if args.cache == "off" else folder
            if args.cache == "warm":       # the same folder twice: cold, then a restart
                runs.append(("cold", run_lesson(lesson, env, mlclab_first=args.mlclab_first,
                                                timed_builds=True)))
            runs.append(("warm" if args.cache == "warm" else "",
                         run_lesson(lesson, env, mlclab_first=args.mlclab_first,
                                    cells=args.cells, timed_builds=args.cache != "off")))
        for label, result in runs:
            flag = "" if result["peak"] <= budget else "  OVER"
            over += bool(flag)
            name = f"{lesson.name[:40]} {label}" if label else lesson.name[:46]
            print(f"{name:46} {result['peak']:8.0f} {result['cell']:7d} "
                  f"{result['first']:12.0f} {result['seconds']:8.1f} {budget:7d}  "
                  f"{result['errors']}{flag}  {_disk(result['disk'])}  "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
