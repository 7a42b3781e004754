"""The README's first command, `./dev.sh lab`, really opens the lessons in JupyterLab.

(The second, `./dev.sh test`, is what runs this file.) Set-up is idempotent, so running it
again here costs only pip's "already satisfied" checks.
"""
import os
import pathlib
import signal
import socket
import subprocess
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dev_sh_lab_serves_the_lessons(tmp_path):
    port = free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "IPYTHONDIR": str(tmp_path / "ipython")}
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(["./dev.sh", "lab", "--no-browser", "--ip=127.0.0.1",
                                 f"--port={port}", "--port-retries=0",
                                 "--IdentityProvider.token=quickstart"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/api/contents",
                                             headers={"Authorization": "token quickstart"})
                with urllib.request.urlopen(req, timeout=5) as resp:
                    status = resp.status
                    listing = resp.read().decode()
                break
            except OSError:
                time.sleep(1)
        assert status == 200, f"JupyterLab did not answer:\n{log.read_text()[-3000:]}"
        assert "01-why-deep-learning-compilers.ipynb" in listing   # rooted at lessons/
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
