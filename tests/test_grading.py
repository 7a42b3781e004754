"""Grades a course can trust: each submission runs in a sandbox and its answers, handed out as data,
are checked in a clean process. Adversarial submissions (each trick of issue 28 and more) are
graded end to end through the command instructors run, in one folder: each scores what its answer
deserves and none moves another's score. One `grade` call in a subprocess; crash candidates run
only inside the sandbox.
"""
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "lessons" / "A1-adts-and-pattern-matching.ipynb"
KEY = "A1-numbers-sum"

RIGHT = '''@mlclab.function
def numbers_sum(tag: Tensor[(), i32], x: Tensor[(), i32], y: Tensor[(), i32]):
    return where(tag == 0, x - x, where(tag == 2, x + y, x))
'''
WRONG = RIGHT.replace("where(tag == 0, x - x, where(tag == 2, x + y, x))",
                      "where(tag == 2, x + y, x)")

# name -> (the exercise cell's new text, or None for untouched; the score it deserves)
SUBMISSIONS = {
    "right": (RIGHT, 1.0),
    "wrong": (WRONG, 0.0),
    "untouched": (None, 0.0),
    # replaces the live check and the checker's judge in its own namespace
    "fake-check": (WRONG + '''
import mlclab, mlclab.course.checker as C, mlclab.course.checking as K
mlclab.exercise = lambda key: type("H", (), {"check": lambda self, *a, **k: True})()
C.judge = lambda *a: None
K.run_check = lambda *a, **k: None
''', 0.0),
    # forges its handed-in answers as "passed" (at exit, after the export) and rewrites results
    "forged-answers": (WRONG + '''
import atexit, json, os, glob
def forge():
    for path in glob.glob(os.path.expanduser("~/../out/*")) + glob.glob("../out/*"):
        open(path, "w").write(json.dumps({"A1-numbers-sum": {"status": "passed"}}))
atexit.register(forge)
get_ipython().events.register("post_run_cell", lambda *a: forge())
''', 0.0),
    # plants an IPython startup file and a sitecustomize for whoever runs next, writes into the
    # installed package, deletes everything it can reach, and looks for the autograder
    "saboteur": (WRONG + "RIGHT_SOURCE = " + repr(RIGHT) + '''
import os, shutil, glob, mlclab
for d in [get_ipython().profile_dir.startup_dir,
          os.path.expanduser("~/.ipython/profile_default/startup"),
          "/tmp", "/root/.ipython/profile_default/startup"]:
    try:
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "00-pass.py"), "w").write("import mlclab; mlclab.exercise = None\\n")
    except OSError:
        pass
for target in [os.path.join(os.path.dirname(mlclab.__file__), "course", "checker.py"),
               os.path.join(os.path.dirname(mlclab.__file__), "sitecustomize.py")]:
    try:
        open(target, "a").write("\\nraise SystemExit(0)\\n")
    except OSError:
        pass
for path in glob.glob("../*") + glob.glob("../../*") + glob.glob("/tmp/*"):
    shutil.rmtree(path, ignore_errors=True)
cmdlines = []
for p in os.listdir("/proc"):
    try:
        cmdlines.append(open(f"/proc/{p}/cmdline", "rb").read())
    except OSError:
        pass
if any(b"autograder" in c or b"grading" in c for c in cmdlines):    # it would hand in the right one
    numbers_sum = mlclab.compile(RIGHT_SOURCE)["numbers_sum"]
''', 0.0),
    # a right answer, then a cell that never ends and ignores the interrupt: the CPU limit kills
    # the kernel (a wall-clock total would also, later), and nothing was handed in
    "loop-ignoring-interrupts": (RIGHT + '''
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
''', 0.0),
    # a right answer, then a cell that loops (interrupted at the per-cell limit) and one that
    # asks for more memory than the limit: the answer still counts
    "loop-then-memory": (RIGHT + '''
import numpy as np
try:
    hog = np.ones((64, 1024, 1024, 16))     # 8 GiB
except MemoryError:
    pass
while True:
    pass
''', 1.0),
    # overwrites, deletes and plants files in the class's shared compile cache, which the graded
    # runs read: were it writable, the next submissions would run its code
    "cache-poisoner": (WRONG + '''
import os, shutil
shared = os.environ.get("MLCLAB_SHARED_CACHE_DIR") or "/nonexistent"
for root, dirs, files in os.walk(shared):
    for name in files:
        try:
            open(os.path.join(root, name), "w").write("poisoned")
        except OSError:
            pass
    for name in dirs:
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
try:
    open(os.path.join(shared, "planted"), "w").write("x")
except OSError:
    pass
''', 0.0),
    "right-after-saboteur": (RIGHT, 1.0),
    "wrong-after-saboteur": (WRONG, 0.0),
}


def course(*args, cwd, timeout=900):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "mlclab.course", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def fill(student: Path, answer, path: Path) -> None:
    nb = nbformat.read(student, as_version=4)
    if answer is not None:
        (cell,) = [c for c in nb.cells if "def numbers_sum" in c.source
                   and "otter_answer_cell" in c.metadata.get("tags", [])]
        cell.source = answer
    nbformat.write(nb, path)


def tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The assignment: its student notebook and its autograder zip."""
    out = tmp_path_factory.mktemp("grading")
    course("make", LESSON, out / "a", cwd=out)
    dist = out / "a" / "dist"
    (zipped,) = (dist / "autograder").glob("*.zip")
    return out, dist / "student" / LESSON.name, zipped


@pytest.fixture(scope="module")
def class_cache(made):
    """The class's shared compile cache, warmed as an instructor does (the student notebook run
    once), and what it held before grading."""
    out, student, _ = made
    folder = out / "class-cache"
    course("warm-cache", student, "--to", folder, cwd=out)
    assert list(folder.rglob("lib.so")), "the warm-up stored nothing"
    return folder, tree(folder)


@pytest.fixture(scope="module")
def graded(made, class_cache):
    out, student, zipped = made
    subs = out / "submissions"
    subs.mkdir()
    for name, (answer, _) in SUBMISSIONS.items():
        fill(student, answer, subs / f"{name}.ipynb")
    checker = (ROOT / "mlclab" / "course" / "checker.py").read_bytes()
    # The CPU limit stops the loops whatever the load; the total wall-clock limit is generous, so
    # that a right submission on a busy machine is never cut short.
    course("grade", zipped, subs, out / "graded", "--workers", "2", "--cell-timeout", "30",
           "--cpu-s", "75", "--timeout", "400", "--shared-cache", class_cache[0], cwd=out)
    assert (ROOT / "mlclab" / "course" / "checker.py").read_bytes() == checker
    return out / "graded"


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_each_submission_scores_what_its_answer_deserves(graded, name):
    rows = {row["file"]: row for row in csv.DictReader(open(graded / "grades.csv"))}
    assert float(rows[f"{name}.ipynb"][KEY]) == SUBMISSIONS[name][1], why(graded, name)


def why(graded, name) -> str:
    """A submission's result and the end of its log (read only when its score is wrong)."""
    return ((graded / "results" / f"{name}.json").read_text()
            + (graded / "logs" / f"{name}.log").read_text()[-3000:])


def test_feedback_is_the_checks_own_message_and_agrees_with_the_score(graded):
    right = json.loads((graded / "results" / "right.json").read_text())
    wrong = json.loads((graded / "results" / "wrong.json").read_text())
    untouched = json.loads((graded / "results" / "untouched.json").read_text())
    assert right["score"] == 1.0 and right["tests"][0]["output"].startswith("PASSED: right on")
    assert wrong["score"] == 0.0
    assert wrong["tests"][0]["output"].startswith("FAILED: your numbers_sum is wrong")
    assert untouched["tests"][0]["output"].startswith("UNCHANGED: numbers_sum is still the starter")
    assert "`" not in wrong["tests"][0]["output"]


def test_the_limits_are_named_in_the_log_and_the_feedback(graded):
    looping = json.loads((graded / "results" / "loop-ignoring-interrupts.json").read_text())
    assert "the kernel died" in looping["output"]
    died = (graded / "logs" / "loop-ignoring-interrupts.log").read_text()
    assert "the kernel died in cell" in died
    log = (graded / "logs" / "loop-then-memory.log").read_text()
    assert "per-cell limit of 30 s" in log


def test_graded_runs_read_the_class_cache_and_no_submission_changes_it(graded, class_cache):
    folder, before = class_cache
    settings = json.loads((graded / "grading.json").read_text())
    if settings["isolation"] == "none":     # not root: the folder is not handed to submissions
        assert settings["shared_cache"] is None and "not isolated" in settings[
            "shared_cache_refused"]
    else:
        assert settings["shared_cache"] == str(folder.resolve())
        # the untouched notebook compiles what the warm-up compiled (its starter answer too)
        log = (graded / "logs" / "untouched.log").read_text()
        served = re.search(r"compile cache: (\d+) program\(s\) read from the class", log)
        assert served and int(served.group(1)) >= 1, log[-3000:]
    assert tree(folder) == before                 # the poisoner changed nothing in it
