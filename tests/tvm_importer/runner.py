"""Run TVM's importer cases in a few crash-isolated worker processes, and report.

    PYTHONPATH=. python -m tests.tvm_importer.runner                   # all cases: counts, failures
    PYTHONPATH=. python -m tests.tvm_importer.runner --write-refusals  # also rewrite the list

Each worker (``worker.py``) imports torch and mlclab once and runs many cases; a case that
kills its worker is a ``crash`` (the signal is named), one that outlives ``timeout`` seconds is
a ``hang`` (its worker is killed); either way a new worker takes the next case.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFUSALS = Path(__file__).with_name("expected_refusals.txt")
OUTCOMES = ("pass", "both refuse", "refusal", "wrong", "unclear", "crash", "hang")
STARTUP_TIMEOUT = 600.0
#: Seconds one case may take. The slowest of the 397 takes ~15 s alone on a 2-core machine;
#: the margin is for a machine busy with other work.
TIMEOUT = 90.0
_DIED = object()


class _Worker:
    def __init__(self):
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = dict(os.environ, PYTHONPATH=path)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.tvm_importer.worker"], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True)
        ready = self._read(STARTUP_TIMEOUT)
        self.ready = ready if isinstance(ready, dict) else None

    def _read(self, timeout: float):
        """The worker's next reply; None on timeout, ``_DIED`` if it closed its end (died)."""
        readable, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not readable:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else _DIED

    def run(self, case_id: str, timeout: float) -> dict:
        start = time.monotonic()
        self.proc.stdin.write((case_id + "\n").encode())
        self.proc.stdin.flush()
        result = self._read(timeout)
        if result is None:
            self.kill()
            return {"id": case_id, "outcome": "hang", "error": f"no answer in {timeout:.0f} s"}
        if result is not _DIED:
            result["seconds"] = round(time.monotonic() - start, 2)
            return result
        code = self.proc.wait()
        name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
        return {"id": case_id, "outcome": "crash", "error": f"the worker died: {name}"}

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def run_cases(case_ids, workers: int = 2, timeout: float = TIMEOUT, progress=None) -> dict:
    """``{case_id: result}`` for every id, each result a dict with ``outcome`` (one of
    ``OUTCOMES``) and, unless it passed, ``error``."""
    todo: queue.Queue = queue.Queue()
    for case_id in case_ids:
        todo.put(case_id)
    results: dict = {}

    def drive():
        worker = None
        try:
            while True:
                try:
                    case_id = todo.get_nowait()
                except queue.Empty:
                    return
                if worker is None:
                    worker = _Worker()
                    if worker.ready is None:
                        worker.kill()
                        raise RuntimeError("a TVM-importer worker did not start "
                                           "(run python -m tests.tvm_importer.worker --case ID)")
                results[case_id] = worker.run(case_id, timeout)
                if progress:
                    progress(case_id, results[case_id])
                if results[case_id]["outcome"] in ("crash", "hang"):
                    worker.kill()
                    worker = None
        finally:
            if worker is not None:
                worker.kill()

    threads = [threading.Thread(target=drive) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    missing = [c for c in case_ids if c not in results]
    if missing:
        raise RuntimeError(f"{len(missing)} cases got no result (a worker failed to start)")
    return results


def read_refusals(path: Path = REFUSALS) -> dict:
    """``{case_id: reason}`` from the expected-refusals list (``id reason``, ``#`` comments)."""
    listed = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            case_id, _, reason = line.partition(" ")
            listed[case_id] = reason.strip()
    return listed


def write_refusals(results: dict, path: Path = REFUSALS) -> int:
    """Rewrite the list as exactly the cases that refuse now; the reason is the error's line."""
    refused = sorted((c, r["error"]) for c, r in results.items() if r["outcome"] == "refusal")
    header = ("# TVM importer cases mlclab refuses, with the error it gives (one line each).\n"
              "# tests/test_tvm_importer_suite.py fails if a listed case passes (remove it) or an\n"
              "# unlisted case refuses. Regenerate: "
              "PYTHONPATH=. python -m tests.tvm_importer.runner --write-refusals\n")
    path.write_text(header + "".join(f"{c} {reason}\n" for c, reason in refused))
    return len(refused)


def summary(results: dict) -> str:
    counts = {o: 0 for o in OUTCOMES}
    for r in results.values():
        counts[r["outcome"]] += 1
    lines = [", ".join(f"{n} {o}" for o, n in counts.items()) + f" (of {len(results)})"]
    for outcome in ("crash", "hang", "wrong", "unclear", "refusal"):
        for case_id, r in sorted(results.items()):
            if r["outcome"] == outcome:
                lines.append(f"  {outcome:8} {case_id}: {r.get('phase', '')}: {r['error'][:200]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-refusals", action="store_true",
                        help=f"rewrite {REFUSALS.name} with the cases that refuse now")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also save every result here")
    parser.add_argument("cases", nargs="*", help="case ids (default: all)")
    ns = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.tvm_importer.worker import _load_cases
    ids = ns.cases or list(_load_cases())
    results = run_cases(ids, workers=ns.workers,
                        progress=lambda c, r: print(f"{r['outcome']:8} {c}", file=sys.stderr))
    print(summary(results))
    if ns.json:
        ns.json.write_text(json.dumps(results, indent=1))
    if ns.write_refusals:
        print(f"wrote {write_refusals(results)} refusals to {REFUSALS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
