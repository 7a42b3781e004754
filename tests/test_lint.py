"""The linter CI runs: ``ruff check .`` from the repository root, with pyproject.toml's
[tool.ruff] rules, must find nothing (issue 30).

ruff is in the ``dev`` extra, so ``./dev.sh test`` runs it: a machine without it fails here
rather than skipping the lint.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_the_repository_is_lint_clean():
    done = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check . found:\n{done.stdout}{done.stderr}"


def test_the_configuration_is_the_one_in_force():
    # A file under mlclab/ as ruff would see it: pyproject.toml's line length and rule choice.
    source = ("def f(xs):\n"
              "    fs = []\n"
              "    for x in xs:\n"
              "        fs.append(lambda: x)\n"
              "    return fs, zip(xs, xs)\n"
              f"y = '{'.' * 94}'\n"      # 100 characters: allowed
              f"y = '{'.' * 95}'\n")     # 101 characters: too long
    done = ruff("check", "--no-cache", "--output-format", "concise",
                "--stdin-filename", "mlclab/_lint_probe.py", "-", stdin=source)
    found = sorted(line.split()[1] for line in done.stdout.splitlines() if ".py:" in line)
    assert found == ["B023", "E501"], done.stdout + done.stderr   # B905 (zip) is ignored
    assert "_lint_probe.py:7:" in done.stdout
