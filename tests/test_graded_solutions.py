"""Every exercise of the catalog is graded right on the graded path: the lesson's own solution
PASSES and its untouched starter does not (with a message saying why).

Faithful and fast: per exercise, one kernel (nbclient, as mlclab.course.sandbox runs a submission)
executes the lesson's cells up to that exercise's cell (an exercise before it in the same lesson
runs as its starter left it), then the solution cell's body (tag
``solution``, without its ``%%solution`` line) in place of the exercise cell, then
``mlclab.course.export.answers`` in that kernel, as the sandbox's export does. The names the
solution defined are then removed and the untouched exercise cell runs, and the answers are
exported again. Each record is judged here with ``mlclab.course.checker.judge``, the clean
process's own function (no sandbox: its limits are tests/test_grading.py's subject). The cells
after the exercise (the live check, the discussion) are not run.

The lessons are enumerated from the catalog (``mlclab.course.catalog.EXERCISES``): an exercise
added to the catalog is covered here with no change, and one whose lesson cannot be found, or
whose ``submit`` kind cannot carry its answer out, fails with the exercise's key. Lessons 9 and
7 run their cells up to the exercise like the others (torch and the model's import; the naive
matmul's timing), no substitute: run alone, one lesson's kernel took 3-32 s (lesson 9, ResNet-18,
the most), and the whole test (15 lessons, before lesson 11 was merged into 8) 120 s with three
kernels at once on 2 cores at load average 6.
"""
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from mlclab.course.catalog import EXERCISES
from mlclab.course.checker import judge
from mlclab.course.spec import PASSED

ROOT = Path(__file__).resolve().parents[1]
SALT = 271828          # a graded run's salt: not the live check's inputs
MARK = "MLCLAB-ANSWERS "
CELL_TIMEOUT_S = 300


def lesson_of(key: str) -> Path:
    found = sorted((ROOT / "lessons").glob(f"{key.split('-')[0]}-*.ipynb"))
    assert len(found) == 1, f"{key}: one lesson lessons/{key.split('-')[0]}-*.ipynb, found {found}"
    return found[0]


def exercise_cells(nb, key: str):
    """(index of the exercise cell, the solution's body) for the exercise ``key``: the exercise
    cell is the first tagged ``exercise`` after the cell that names the key."""
    calls = re.compile(rf"exercise\(\s*[\"']{key}[\"']")
    named = next((i for i, c in enumerate(nb.cells)
                  if c.cell_type == "code" and calls.search(c.source)), None)
    assert named is not None, f"{key}: no cell of {nb_name(nb)} calls mlclab.exercise({key!r})"
    tagged = [i for i, c in enumerate(nb.cells)
              if i >= named and "exercise" in c.get("metadata", {}).get("tags", [])]
    assert tagged, f"{key}: no cell tagged `exercise` after mlclab.exercise({key!r})"
    solution = next((c for c in nb.cells[tagged[0]:]
                     if "solution" in c.get("metadata", {}).get("tags", [])), None)
    assert solution is not None, f"{key}: no cell tagged `solution` after its exercise cell"
    first, _, body = solution.source.partition("\n")
    assert first.strip() == "%%solution", f"{key}: the solution cell starts with {first!r}"
    return tagged[0], body


def nb_name(nb) -> str:
    return nb.metadata.get("title", "the lesson")


def export_cell(keys: list) -> str:
    return ("import json as __json, mlclab.course.export as __export\n"
            f"print({MARK!r} + __json.dumps(__export.answers({keys!r}, {SALT}, globals())))")


def graded_records(lesson: Path, key: str) -> tuple:
    """The answers the solution of exercise ``key`` and its starter hand in, as the export writes
    them."""
    nb = nbformat.read(lesson, as_version=4)
    keys = [key]
    at, solution = exercise_cells(nb, key)
    cells = [c for c in nb.cells[:at] if c.cell_type == "code"]
    run = [*cells,
           new_code_cell("__before = set(globals())"),
           new_code_cell(solution),
           new_code_cell(export_cell(keys)),
           # Back to the state before the exercise cell: the starter runs where the solution did.
           new_code_cell("for __name in set(globals()) - __before - {'__before'}:\n"
                         "    if not __name.startswith('_'):\n"
                         "        del globals()[__name]"),
           new_code_cell(nb.cells[at].source),
           new_code_cell(export_cell(keys))]
    nb.cells = run
    NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT_S,
                   resources={"metadata": {"path": str(lesson.parent)}}).execute()
    solved, starter = (_printed(nb.cells[index]) for index in (len(cells) + 2, len(run) - 1))
    return solved, starter


def _printed(cell) -> dict:
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    line = next(line for line in text.splitlines() if line.startswith(MARK))
    return json.loads(line[len(MARK):])


KEYS = sorted(EXERCISES)
WORKERS = 3    # kernels at once: most of a lesson's time is its kernel waiting on imports


@pytest.fixture(scope="module")
def graded():
    """{key: (solved, starter)}, every exercise's kernel run side by side (a lesson with two
    exercises runs twice, each time up to one of them)."""
    def run(key):
        return key, graded_records(lesson_of(key), key)

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(pool.map(run, KEYS))


@pytest.fixture(params=KEYS)
def graded_exercise(request, graded):
    return request.param, graded[request.param]


def test_every_exercise_has_its_lesson():
    assert EXERCISES
    for key in EXERCISES:
        lesson_of(key)


def test_the_solution_passes_and_the_starter_does_not(graded_exercise):
    key, (solved, starter) = graded_exercise
    exercise = EXERCISES[key]
    record = solved.get(key)
    assert isinstance(record, dict) and "kind" in record, \
        f"{key}: the solution's graded run handed in no answer of kind " \
        f"{exercise.submitted_as!r}: {record}"
    assert record["kind"] == exercise.submitted_as, (key, record["kind"])
    result = judge(exercise, json.loads(json.dumps(record)), SALT)
    assert result.status == PASSED, (f"{key}: the lesson's solution is graded "
                                     f"{result.status}: {result.message}")
    untouched = judge(exercise, json.loads(json.dumps(starter.get(key))), SALT)
    assert untouched.status != PASSED, f"{key}: the untouched starter is graded passed"
    assert untouched.message.strip(), f"{key}: the starter's verdict says nothing"
