"""A lesson becomes an otter-grader assignment whose hidden test is the lesson's own exercise check,
and a submission is graded here without Docker: a right one scores full marks, a wrong one zero.

End to end, in a subprocess per command (the commands students and instructors run): make the
assignment from appendix A1, fill the student notebook's exercise cell twice, grade both.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "lessons" / "A1-adts-and-pattern-matching.ipynb"

RIGHT = '''@mlclab.function
def numbers_sum(tag: Tensor[(), i32], x: Tensor[(), i32], y: Tensor[(), i32]):
    return where(tag == 0, x - x, where(tag == 2, x + y, x))
'''
WRONG = '''@mlclab.function
def numbers_sum(tag: Tensor[(), i32], x: Tensor[(), i32], y: Tensor[(), i32]):
    return where(tag == 2, x + y, x)
'''


def course(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "mlclab.course", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def submission(student: Path, answer: str, path: Path) -> Path:
    nb = nbformat.read(student, as_version=4)
    (cell,) = [c for c in nb.cells if "def numbers_sum" in c.source
               and "otter_answer_cell" in c.metadata.get("tags", [])]
    cell.source = answer
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def assignment(tmp_path_factory):
    out = tmp_path_factory.mktemp("assignment")
    course("make", LESSON, out / "a", cwd=out)
    return out, out / "a" / "dist"


def test_the_student_version_has_the_starter_and_no_solution_or_test(assignment):
    _, dist = assignment
    text = (dist / "student" / LESSON.name).read_text()
    assert "it is only right for Single" in text          # the starter
    assert "pair_or_single" not in text and "%%solution" not in text
    assert "hidden" not in text and "BEGIN" not in text
    assert "grader.check" not in text           # no otter.Notebook: the lesson's own check cell
    (zipped,) = (dist / "autograder").glob("*.zip")
    import zipfile
    test = zipfile.ZipFile(zipped).read("tests/A1-numbers-sum.py").decode()
    assert "'hidden': True" in test and "mlclab.exercise('A1-numbers-sum').check" in test


@pytest.mark.parametrize("answer, score", [(RIGHT, 1.0), (WRONG, 0.0)], ids=["right", "wrong"])
def test_a_submission_is_graded_locally(assignment, answer, score):
    out, dist = assignment
    (zipped,) = (dist / "autograder").glob("*.zip")
    graded = submission(dist / "student" / LESSON.name, answer, out / f"sub-{score}.ipynb")
    printed = course("grade", zipped, graded, out / f"results-{score}", cwd=out)
    result = json.loads(printed[printed.index("{\n"):])
    assert result["scores"] == {"A1-numbers-sum": score}
    assert result["possible"] == 1.0


def test_every_lesson_makes_a_student_notebook_of_its_own_cells(tmp_path):
    """Each student notebook's code cells are the lesson's own (solutions out, no otter
    grader.check cell needing an init cell the lessons do not have): since every lesson runs
    untouched in tests/test_lessons.py, so does every student notebook. Appendix A1's is run
    below."""
    script = (
        "import sys, pathlib, nbformat\n"
        "from mlclab.course.assignment import make\n"
        "for lesson in sorted(pathlib.Path(sys.argv[1]).glob('[0-9A][0-9]-*.ipynb')):\n"
        "    dist = make(lesson, pathlib.Path(sys.argv[2]) / lesson.stem)\n"
        "    student = nbformat.read(dist / 'student' / lesson.name, as_version=4)\n"
        "    own = {c.source.strip() for c in nbformat.read(lesson, as_version=4).cells}\n"
        "    foreign = [c.source[:80] for c in student.cells\n"
        "               if c.cell_type == 'code' and c.source.strip() not in own]\n"
        "    print(lesson.name, foreign)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, ROOT / "lessons", tmp_path], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.endswith(".ipynb []") or "[" in line]
    # Every lesson there is (lessons are added: the count is the folder's, never a number).
    lessons = list((ROOT / "lessons").glob("[0-9A][0-9]-*.ipynb"))
    assert len([line for line in lines if line.endswith("[]")]) == len(lessons) >= 12, done.stdout


def test_the_student_notebook_runs_top_to_bottom(assignment):
    _, dist = assignment
    script = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=300, kernel_name='python3').execute()\n"   # raises on an error
        "print('ran', sum(c.cell_type == 'code' for c in nb.cells))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, dist / "student" / LESSON.name], env=env,
                          capture_output=True, text=True, timeout=600, cwd=dist / "student")
    assert done.returncode == 0 and done.stdout.startswith("ran"), done.stderr[-3000:]
