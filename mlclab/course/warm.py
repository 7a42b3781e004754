"""``python -m mlclab.course warm-cache LESSON.ipynb ... --to DIR``: fill a class's shared compile
cache once, so that no student's kernel compiles what the lessons compile.

Each lesson is run top to bottom in a fresh kernel whose user cache is ``DIR``
(``MLCLAB_CACHE_DIR``; no shared folder is read, so everything the lesson compiles lands there).
The students' kernels then read it first (``MLCLAB_SHARED_CACHE_DIR=DIR``, mounted read-only);
entries are keyed by mlclab's code, TVM and the CPU, so warm it with the image and on the kind
of machine the class runs on.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Warmed:
    """One lesson run: its time, the cells that raised unexpectedly, the entries it added."""

    lesson: Path
    seconds: float
    errors: int
    added: int

    def __str__(self) -> str:
        failed = f", {self.errors} cell(s) raised" if self.errors else ""
        return (f"{self.lesson.name}: {self.added} compiled program(s) in {self.seconds:.0f} s"
                f"{failed}")


def entries_in(folder: Path) -> int:
    """How many compiled programs the cache folder holds."""
    from ..api.disk_cache import DiskCache

    return len(DiskCache(folder).entries())


def warm(lessons: list, folder: Path, timeout_s: int = 900) -> list:
    """Run each lesson with ``folder`` as its cache; returns a :class:`Warmed` per lesson."""
    import nbformat
    from nbclient import NotebookClient

    folder = Path(folder).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MLCLAB_CACHE_DIR=str(folder))
    env.pop("MLCLAB_SHARED_CACHE_DIR", None)
    results = []
    for lesson in lessons:
        lesson = Path(lesson).resolve()
        nb = nbformat.read(lesson, as_version=4)
        before, start = entries_in(folder), time.perf_counter()
        NotebookClient(nb, kernel_name="python3", timeout=timeout_s, allow_errors=True,
                       resources={"metadata": {"path": str(lesson.parent)}}).execute(env=env)
        # (a cell tagged raises-exception shows an error on purpose)
        errors = sum(1 for cell in nb.cells if cell.cell_type == "code"
                     and "raises-exception" not in cell.get("metadata", {}).get("tags", [])
                     and any(out.get("output_type") == "error" for out in cell.get("outputs", [])))
        results.append(Warmed(lesson, time.perf_counter() - start, errors,
                              entries_in(folder) - before))
    return results
