"""A lesson as an otter-grader assignment.

    python -m mlclab.course make LESSON.ipynb OUTDIR   # OUTDIR/dist/{student,autograder}/

``make`` writes otter's assignment format from the lesson's own cells: each exercise becomes a
question whose prompt is the starter cell, whose solution is the ``%%solution`` body, and whose one
**hidden** test is the same ``mlclab.exercise(key).check()`` the student runs (so otter's own
``otter run`` / Gradescope path gives the same verdicts). ``otter assign`` then builds the student
notebook (no solution) and the autograder zip. Grading that counts is mlclab.course.grading: the
submission in a sandbox, its answers checked in a clean process, never otter's tests in the
student's namespace.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_raw_cell

SOLUTION_HEADING = re.compile(r"^#+ .*Solution.*$", re.M | re.S)
EXERCISE_KEY = re.compile(r"mlclab\.exercise\(\"([0-9A][0-9]-[a-z-]+)\"\)")


def _raw(text: str):
    return new_raw_cell(text)


def _test_cell(key: str):
    return new_code_cell(
        '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
        "import mlclab\n"
        f'result = mlclab.exercise("{key}").check(namespace=globals())\n'
        "assert result.passed, result.message\n")


def assignment_notebook(lesson: Path):
    """The lesson in otter's assignment format: one question per exercise."""
    nb = nbformat.read(lesson, as_version=4)
    cells, keys = [], []
    config = {"name": lesson.stem, "init_cell": False, "check_all_cell": False,
              "export_cell": False, "run_tests": False, "generate": {}, "requirements": None}
    settings = "\n".join(f"{k}: {json.dumps(v)}" for k, v in config.items())
    cells.append(_raw("# ASSIGNMENT CONFIG\n" + settings))
    pending = None
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        found = EXERCISE_KEY.findall(cell.source) if cell.cell_type == "code" else []
        keys.extend(found)
        if "exercise" in tags:
            if not keys:
                raise ValueError(f"{lesson.name}: an exercise cell before any "
                                 "mlclab.exercise(...) handle")
            pending = keys[-1]
            cells += [_raw(f"# BEGIN QUESTION\nname: {pending}\npoints: 1"),
                      _raw("# BEGIN PROMPT"), new_code_cell(cell.source), _raw("# END PROMPT")]
            continue
        if "solution" in tags:
            if pending is None:
                raise ValueError(f"{lesson.name}: a solution cell without an exercise cell "
                                 "before it")
            body = cell.source.partition("\n")[2]
            # Otter strips solutions line by line inside a code cell: the markers make the
            # whole body go.
            solution = new_code_cell(f"# BEGIN SOLUTION NO PROMPT\n{body.rstrip()}\n# END SOLUTION")
            cells += [_raw("# BEGIN SOLUTION"), solution, _raw("# END SOLUTION"),
                      _raw("# BEGIN TESTS"), _test_cell(pending), _raw("# END TESTS"),
                      _raw("# END QUESTION")]
            pending = None
            continue
        if cell.cell_type == "markdown" and SOLUTION_HEADING.search(cell.source):
            # The heading (and what follows it) announces a solution the student version no
            # longer has.
            kept = SOLUTION_HEADING.split(cell.source)[0].rstrip()
            if not kept:
                continue
            cell = nbformat.from_dict({**cell, "source": kept})
        cells.append(cell)
    if not keys:
        raise ValueError(f"{lesson.name} has no mlclab.exercise(...) to grade")
    out = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    return out


def make(lesson: Path, outdir: Path) -> Path:
    """Write OUTDIR/LESSON (the assignment source) and run ``otter assign`` on it."""
    from otter.assign import main as otter_assign

    outdir.mkdir(parents=True, exist_ok=True)
    source = outdir / "source" / lesson.name
    source.parent.mkdir(exist_ok=True)
    nbformat.write(assignment_notebook(lesson), source)
    # The lessons read files next to them (glossary links): keep the lesson's own directory as cwd.
    otter_assign(str(source), str(outdir / "dist"), no_pdfs=True, no_run_tests=True)
    student = outdir / "dist" / "student" / lesson.name
    nb = nbformat.read(student, as_version=4)
    # What is left of a solution cell in the student version is an empty cell, and otter adds a
    # grader.check cell per question for an otter.Notebook the lesson does not make (the
    # lesson's own check cell is the live check): drop both, so the notebook runs top to bottom.
    nb.cells = [c for c in nb.cells if c.cell_type != "code" or
                (c.source.strip() and not c.source.strip().startswith("grader.check("))]
    nbformat.write(nb, student)
    return outdir / "dist"

