"""Grading submissions: each notebook run in a sandbox, its answers checked in a clean process,
many at once.

    python -m mlclab.course grade AUTOGRADER.zip SUBMISSION.ipynb|FOLDER [OUTDIR]

For each submission: mlclab.course.sandbox runs it (its own uid, folders and limits) and hands
out its answers as data; mlclab.course.checker judges them (another uid, no student code);
the score is the points of each passed question. The autograder zip (otter's, from ``make``) is
read once, here, for its questions and points; no sandbox ever gets its path. Inputs are drawn
from a salt chosen for this grading run, so a live check's inputs are not the graded ones.

OUTDIR gets grades.csv (one row per submission: each question's score, total, possible),
results/NAME.json (Gradescope's results format: score, and a test per question with its
feedback) and logs/NAME.log (what the sandbox and the checker printed).
"""
from __future__ import annotations

import ast
import csv
import json
import os
import queue
import re
import secrets
import shutil
import sys
import tempfile
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import sandbox
from .spec import PASSED

MAX_ANSWERS = 64 << 20
_MARK = "MLCLAB-RESULTS "


@dataclass
class Graded:
    name: str
    scores: dict                   # question -> points scored
    possible: dict                 # question -> points possible
    feedback: dict                 # question -> what the check said
    notes: list = field(default_factory=list)
    seconds: float = 0.0           # the notebook's run in its sandbox

    @property
    def total(self) -> float:
        return sum(self.scores.values())


def questions(autograder: Path) -> dict:
    """{question: points} from otter's autograder zip (its tests/*.py, read as literals)."""
    found = {}
    with zipfile.ZipFile(autograder) as zipped:
        for name in sorted(zipped.namelist()):
            if not re.fullmatch(r"tests/[^/]+\.py", name):
                continue
            tree = ast.parse(zipped.read(name).decode("utf-8"))
            for node in tree.body:
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "test"
                                                        for t in node.targets):
                    test = ast.literal_eval(node.value)
                    found[str(test["name"])] = float(test.get("points", 1) or 1)
    if not found:
        raise ValueError(f"{autograder}: no tests/*.py in this autograder zip (was it made by "
                         "python -m mlclab.course make?)")
    from .catalog import EXERCISES
    unknown = sorted(set(found) - set(EXERCISES))
    if unknown:
        raise ValueError(f"{autograder}: questions {', '.join(unknown)} are not mlclab exercises")
    return found


def cpu_quota() -> int:
    """Whole CPUs this process may use: its affinity, capped by its cgroup's CPU quota (the
    tightest along the cgroup's path, as ``mlclab.threads()`` reads it), rounded down."""
    from ..threadpool import affinity_count, cgroup_quota

    count, quota = affinity_count(), cgroup_quota()
    if quota is not None:
        count = min(count, int(quota))
    return max(1, count)


def feedback_text(status: str, message: str) -> str:
    """A check's verdict as plain text for a grade book: no Markdown backticks."""
    message = message.replace("`", "")
    return f"{status.upper()}: {message if message.endswith(('.', '?', '!')) else message + '.'}"


def grade_one(submission: Path, points: dict, salt: int, slot: int, work: Path, log: Path,
              limits: sandbox.Limits, shared_cache: Optional[Path] = None) -> Graded:
    keys = list(points)
    notes = []
    uid = sandbox.isolated_uid(slot)
    box = work / f"slot{slot}"
    env = sandbox.make_box(box, uid, shared_cache)
    notebook = box / "work" / "submission.ipynb"
    shutil.copyfile(submission, notebook)
    if uid is not None:
        os.chown(notebook, uid, uid)
    answers_path = box / "out" / sandbox.ANSWERS
    argv = [sys.executable, "-m", "mlclab.course.sandbox", str(answers_path), str(salt),
            str(limits.cell_s), str(limits.cpu_s), str(limits.memory_mb), str(notebook), *keys]
    log.write_text(f"# {submission.name}: sandbox ({sandbox.isolation()} isolation, uid "
                   f"{uid if uid is not None else os.getuid()})\n")
    run, _ = sandbox.launch(argv, box, env, uid, log, limits.total_s)
    with open(log, "a") as f:
        f.write(f"# the notebook's run took {run.seconds:.1f} s (exit code {run.returncode})\n")
    if run.stopped:
        notes.append(run.stopped)
    elif run.returncode == sandbox.KERNEL_DIED:
        notes.append("the kernel died (the CPU or memory limit, or the notebook ended it)")
    elif run.returncode:
        notes.append(f"the notebook's run ended with code {run.returncode} (a limit?)")
    answers = sandbox.read_own_file(answers_path, uid, MAX_ANSWERS)
    shutil.rmtree(box, ignore_errors=True)
    results = check(answers, keys, salt, slot, work, log, limits, shared_cache)
    scores, feedback = {}, {}
    for key in keys:
        result = results.get(key) or {"status": "failed", "message": "the check gave no verdict"}
        scores[key] = points[key] if result.get("status") == PASSED else 0.0
        text = feedback_text(str(result.get("status")), str(result.get("message", "")))
        feedback[key] = text + (f" ({'; '.join(notes)})" if notes and scores[key] == 0 else "")
    return Graded(submission.name, scores, dict(points), feedback, notes, run.seconds)


def check(answers: Optional[bytes], keys: list, salt: int, slot: int, work: Path, log: Path,
          limits: sandbox.Limits, shared_cache: Optional[Path] = None) -> dict:
    """The checker process, as another uid than the submission's, on the answers as data."""
    uid = sandbox.isolated_uid(slot, offset=1000)
    box = work / f"check{slot}"
    env = sandbox.make_box(box, uid, shared_cache)
    path = box / "out" / sandbox.ANSWERS
    path.write_bytes(answers or b"null")
    if uid is not None:
        os.chown(path, uid, uid)
    with open(log, "a") as f:
        f.write(f"\n# checker (uid {uid if uid is not None else os.getuid()})\n")
    argv = [sys.executable, "-m", "mlclab.course.checker", str(path), str(salt),
            str(limits.cpu_s), str(limits.memory_mb), *keys]
    run, out = sandbox.launch(argv, box, env, uid, log, limits.total_s)
    shutil.rmtree(box, ignore_errors=True)
    for line in reversed(out.decode("utf-8", "replace").splitlines()):
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    why = run.stopped or f"it exited with code {run.returncode}"
    failed = {"status": "failed", "message": f"the checker could not finish ({why})"}
    return {key: dict(failed) for key in keys}


def grade(autograder: Path, submissions: list, outdir: Path, workers: Optional[int] = None,
          limits: Optional[sandbox.Limits] = None, progress: bool = True,
          shared_cache: Optional[Path] = None) -> list:
    """Grade every submission, ``workers`` at a time; writes OUTDIR's CSV, results and logs.
    ``shared_cache``: a class's compile cache (``warm-cache``) the runs read, mounted read-only;
    where that cannot be guaranteed it is not used, and grading.json and stderr say why."""
    points = questions(autograder)
    limits = limits or sandbox.Limits()
    refused = None
    if shared_cache is not None:
        shared_cache = Path(shared_cache).expanduser().resolve()
        refused = sandbox.shared_cache_refused(shared_cache)
        if refused:
            print(f"grade: not reading the shared compile cache: {refused}", file=sys.stderr)
            shared_cache = None
    workers = max(1, min(workers or cpu_quota(), len(submissions)))
    salt = secrets.randbelow(2**31)
    outdir.mkdir(parents=True, exist_ok=True)
    for sub in ("results", "logs"):
        (outdir / sub).mkdir(exist_ok=True)
    slots: queue.Queue = queue.Queue()
    for slot in range(workers):
        slots.put(slot)
    names = _unique_names(submissions)
    graded: dict = {}
    bar = _progress(len(submissions), progress)
    lock = threading.Lock()

    with tempfile.TemporaryDirectory(prefix="mlclab-grade-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o711)          # boxes inside are reachable only by their own uid

        def one(submission: Path) -> None:
            slot = slots.get()
            try:
                name = names[submission]
                try:
                    result = grade_one(submission, points, salt, slot, work,
                                       outdir / "logs" / f"{name}.log", limits, shared_cache)
                except Exception as exc:   # one broken submission never stops the others
                    result = Graded(submission.name, {k: 0.0 for k in points}, dict(points),
                                    {k: f"NOT GRADED: {type(exc).__name__}: {exc}" for k in points},
                                    [f"grading failed: {exc}"])
                write_results(result, outdir / "results" / f"{name}.json")
                with lock:
                    graded[submission] = result
                    bar.update(1)
            finally:
                slots.put(slot)

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, submissions))
    bar.close()
    rows = [graded[s] for s in submissions]
    write_csv(rows, list(points), outdir / "grades.csv")
    (outdir / "grading.json").write_text(json.dumps(
        {"salt": salt, "workers": workers, "limits": limits.__dict__,
         "isolation": sandbox.isolation(),
         "shared_cache": str(shared_cache) if shared_cache else None,
         "shared_cache_refused": refused}, indent=2))
    return rows


def _unique_names(submissions: list) -> dict:
    names, seen = {}, set()
    for path in submissions:
        stem, n = Path(path).stem, 1
        name = stem
        while name in seen:
            n += 1
            name = f"{stem}-{n}"
        seen.add(name)
        names[path] = name
    return names


def _progress(total: int, shown: bool):
    from tqdm import tqdm      # otter-grader's dependency
    return tqdm(total=total, unit="submission", desc="grading", file=sys.stderr, disable=not shown)


def write_results(result: Graded, path: Path) -> None:
    """Gradescope's results.json: the score and one test per question with its feedback."""
    tests = [{"name": key, "score": result.scores[key], "max_score": result.possible[key],
              "output": result.feedback[key], "visibility": "visible"} for key in result.scores]
    path.write_text(json.dumps({"score": result.total, "execution_time": round(result.seconds, 1),
                                "tests": tests, "output": "; ".join(result.notes)}, indent=2))


def write_csv(rows: list, keys: list, path: Path) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["file", *keys, "total", "possible"])
        for row in rows:
            out.writerow([row.name, *(row.scores[k] for k in keys), row.total,
                          sum(row.possible.values())])
