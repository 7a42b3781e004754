"""Execute lesson notebooks top to bottom and report, per lesson, its time and its first error.

Run with the interpreter of the environment under test (the Binder-like virtualenv); the kernel is
that interpreter's own ``python3`` kernel, which this script checks before running any lesson.

    python execute_lessons.py [--with-solutions] RESULTS.json OUT_DIR LESSON.ipynb [LESSON...]

RESULTS.json maps each lesson's file name to ``{"seconds", "error", "silent_raises_cells",
"checks"}`` and records the environment's versions; ``checks`` lists what every exercise check
displayed (mlclab.course's JSON: exercise, status, passed, message). OUT_DIR receives the executed
notebooks for inspection (they are never written back into lessons/, which is committed without
outputs).

``--with-solutions`` runs each lesson as a student who solved it: every exercise cell (tag
``exercise``) is replaced by the body of its solution cell (tag ``solution``, the next one after
it, without its ``%%solution`` line), which is what the notebook tells a student to do.
"""
from __future__ import annotations

import json
import re
import sys
import time
from importlib import metadata
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

KERNEL = "python3"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours tracebacks; the report is read as plain text
EXERCISE_MIME = "application/vnd.mlclab.exercise+json"   # mlclab.course.result.MIME
# a hung cell fails the lesson instead of stalling CI; the 2-minute budget is checked by the test
CELL_TIMEOUT_S = 600


def kernel_prefix(workdir: Path) -> str:
    """sys.prefix as seen inside the kernel, so a kernelspec pointing elsewhere cannot go
    unnoticed."""
    probe = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.prefix)")])
    NotebookClient(probe, kernel_name=KERNEL, timeout=120,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return probe.cells[0].outputs[0]["text"].strip()


def silent_raises_cells(nb) -> list[int]:
    """Cells tagged raises-exception that did not raise: a tag must not hide a cell that is fine."""
    silent = []
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code" and "raises-exception" in tags:
            if not any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
                silent.append(index)
    return silent


def inject_solutions(nb) -> None:
    """Each exercise cell gets the body of the solution cell that follows it."""
    tagged = [(c, c.get("metadata", {}).get("tags", [])) for c in nb.cells if c.cell_type == "code"]
    pending = None
    for cell, tags in tagged:
        if "exercise" in tags:
            pending = cell
        elif "solution" in tags and pending is not None:
            first, _, body = cell.source.partition("\n")
            assert first.strip() == "%%solution", f"a solution cell starts with {first!r}"
            pending.source, pending = body, None


def check_results(nb) -> list[dict]:
    return [out["data"][EXERCISE_MIME] for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if EXERCISE_MIME in out.get("data", {})]


def execute(path: Path, out_dir: Path, with_solutions: bool = False) -> dict:
    nb = nbformat.read(path, as_version=4)
    if with_solutions:
        inject_solutions(nb)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=CELL_TIMEOUT_S,
                            resources={"metadata": {"path": str(path.parent)}})
    error = None
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        # The message quotes the failing cell's source and the traceback; keep its end, which says
        # what failed.
        error = ANSI.sub("", str(exc))[-4000:]
    except Exception as exc:  # a dead kernel or a timeout: still report the other lessons
        error = ANSI.sub("", f"{type(exc).__name__}: {exc}")[-4000:]
    seconds = time.perf_counter() - start
    nbformat.write(nb, out_dir / path.name)
    return {"seconds": round(seconds, 2), "error": error,
            "silent_raises_cells": silent_raises_cells(nb), "checks": check_results(nb)}


def versions() -> dict:
    names = ["apache-tvm", "torch", "numpy", "scikit-learn", "mlclab", "ipykernel", "nbclient"]
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return {"python": sys.version.split()[0], "prefix": sys.prefix, **found}


def main(argv: list[str]) -> int:
    with_solutions = "--with-solutions" in argv
    results_path, out_dir, *lessons = [a for a in argv if a != "--with-solutions"]
    out_dir_path = Path(out_dir) / ("solved" if with_solutions else "untouched")
    out_dir_path.mkdir(parents=True, exist_ok=True)
    paths = [Path(p).resolve() for p in lessons]
    prefix = kernel_prefix(paths[0].parent)
    if Path(prefix).resolve() != Path(sys.prefix).resolve():
        print(f"the {KERNEL} kernel runs in {prefix}, not in {sys.prefix}", file=sys.stderr)
        return 2
    results = {"environment": versions(), "lessons": {}}
    for path in paths:
        results["lessons"][path.name] = outcome = execute(path, out_dir_path, with_solutions)
        status = "ok" if outcome["error"] is None else "FAILED"
        print(f"{path.name}: {status} in {outcome['seconds']:.1f} s", flush=True)
    Path(results_path).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
