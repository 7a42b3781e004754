"""Grading at class scale: N generated submissions of appendix A1's assignment graded by one
``python -m mlclab.course grade`` call, in parallel, each in its own sandbox.

    python benchmarks/grading.py [--n 100] [--workers W]
                                 [--cell-timeout 30] [--cpu-s 75] [--timeout 400]

The submissions cycle through right, wrong, untouched, crashing (the kernel exits), looping
(a cell that ignores the interrupt: its kernel killed at the CPU limit, which a busy machine
does not bring closer the way it does a wall-clock limit), memory-hungry (8 GiB asked for,
then a right answer) and every malicious trick of tests/test_grading.py (a faked check, forged
answers, a saboteur that plants startup files, writes into the package and deletes what it can
reach). Prints submissions per minute with the machine and its load, and fails if any
submission's score is not the one its answer deserves (so none moved another's).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_grading import LESSON, KEY, RIGHT, SUBMISSIONS, WRONG, fill  # noqa: E402

KINDS = {
    **SUBMISSIONS,
    "crashing": (RIGHT + "\nimport os\nos._exit(1)\n", 0.0),
    "raising": (RIGHT + "raise RuntimeError('a broken cell after the answer')\n", 1.0),
    "memory-hungry": ("import numpy as np\ntry:\n    hog = np.ones((1 << 30, 8))    # 64 GiB\n"
                      "except MemoryError:\n    pass\n" + RIGHT, 1.0),
    "wrong-2": (WRONG, 0.0),
}


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    return f"{cpu}; {len(os.sched_getaffinity(0))} CPUs usable; Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None)
    # The test's limits (tests/test_grading.py): they hold on a machine loaded 5x over.
    parser.add_argument("--cell-timeout", type=float, default=30.0)
    parser.add_argument("--cpu-s", type=int, default=75)
    parser.add_argument("--timeout", type=float, default=400.0)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    course = [sys.executable, "-m", "mlclab.course"]
    with tempfile.TemporaryDirectory(prefix="mlclab-grading-bench-") as tmp:
        out = Path(tmp)
        subprocess.run([*course, "make", str(LESSON), str(out / "a")], env=env, check=True,
                       capture_output=True)
        student = out / "a" / "dist" / "student" / LESSON.name
        (zipped,) = (out / "a" / "dist" / "autograder").glob("*.zip")
        subs = out / "submissions"
        subs.mkdir()
        names = sorted(KINDS)
        expected = {}
        for i in range(args.n):
            kind = names[i % len(names)]
            answer, score = KINDS[kind]
            fill(student, answer, subs / f"{i:03d}-{kind}.ipynb")
            expected[f"{i:03d}-{kind}.ipynb"] = score
        load_before = os.getloadavg()
        start = time.perf_counter()
        cmd = [*course, "grade", str(zipped), str(subs), str(out / "graded"),
               "--cell-timeout", str(args.cell_timeout), "--cpu-s", str(args.cpu_s),
               "--timeout", str(args.timeout)]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        load_after = os.getloadavg()
        if done.returncode:
            print(done.stderr[-3000:])
            return 1
        graded = out / "graded"
        rows = {row["file"]: float(row[KEY]) for row in csv.DictReader(open(graded / "grades.csv"))}
        moved = {name: (rows.get(name), want) for name, want in expected.items()
                 if rows.get(name) != want}
        for name in moved:
            result = json.loads((graded / "results" / name.replace(".ipynb", ".json")).read_text())
            print(f"{name}: {result['tests'][0]['output']} {result['output']}")
            log = (graded / "logs" / name.replace(".ipynb", ".log")).read_text()
            print("\n".join(line for line in log.splitlines()
                            if line.startswith(("[sandbox]", "#"))))
        workers = (graded / "grading.json").read_text()
    print(f"machine: {machine()}")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}")
    print(f"grading settings: {' '.join(workers.split())}")
    print(f"{args.n} submissions ({len(KINDS)} kinds) graded in {seconds:.0f} s: "
          f"{60 * args.n / seconds:.1f} submissions per minute")
    if moved:
        print(f"WRONG SCORES (got, deserved): {moved}")
        return 1
    print("every submission scored what its answer deserves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
