"""A class of two on a real JupyterHub (benchmarks/hub_load.py's smoke run, about a minute).

The hub (jupyterhub from the ``hub`` extra), its proxy (configurable-http-proxy, installed by
``./dev.sh setup`` into build/hub-proxy/; the run installs it itself if it is missing), and
two simulated students who log in through the Hub REST API, start their servers, open lesson
01 and run its first five code cells over the kernel websocket. Nothing is skipped: a missing
part is a failure. Everything listens on 127.0.0.1 and is stopped at the end.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CELLS = 5


def test_two_students_run_lesson_01_through_the_hub(tmp_path):
    out = tmp_path / "hub.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "hub_load.py"), "--students", "2",
         "--lesson", "01", "--cells", str(CELLS), "--spawn-timeout", "150",
         "--cell-timeout", "150", "--min-free-gb", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=420, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run,) = json.loads(out.read_text())
    assert run["failures"] == [] and run["failed_students"] == 0
    assert run["wrong_password_refused"], "the hub took a wrong password"
    for student in run["student_detail"]:
        assert [c["index"] for c in student["cells"]] == list(range(CELLS)), student
        assert all(c["status"] == "ok" for c in student["cells"]), student
        assert student["login_s"] > 0 and student["spawn_s"] > 0 and student["kernel_s"] > 0
    assert run["cells_run"] == 2 * CELLS
    assert 0 < run["cell_p50_s"] <= run["cell_p95_s"]
    # Each student's server and kernel were measured, and mlclab's kernel is not tiny.
    assert run["student_peak_pss_mb"]["median"] > 100
    assert run["peak_pss_mb"] > run["hub_proxy_pss_mb"] > 0
    assert run["leftover_processes"] == [], "processes of the hub outlived it"
    assert "students" in done.stdout and "cell p95" in done.stdout
