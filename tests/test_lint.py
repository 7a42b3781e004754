"""The linters CI runs (issue 30): ``ruff check .`` from the repository root, with
pyproject.toml's [tool.ruff] rules, and ESLint on the JavaScript the package ships
(mlclab/notebook/static/*.js, with js/eslint.config.js), must find nothing.

ruff is in the ``dev`` extra and ESLint in js/package.json's devDependencies, both installed by
``./dev.sh setup``, so ``./dev.sh test`` runs them: a machine without them fails here rather
than skipping the lint.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ESLINT = ROOT / "js" / "node_modules" / "eslint" / "bin" / "eslint.js"
STATIC = "mlclab/notebook/static"


def ruff(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_the_repository_is_lint_clean():
    done = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check . found:\n{done.stdout}{done.stderr}"


def test_no_file_is_exempt_from_the_line_length():
    # Long lines are wrapped, not hidden: pyproject.toml's per-file-ignores are for the import
    # order of mlclab/__init__.py and the benchmarks' timed lambdas, never for E501.
    done = ruff("check", "--no-cache", "--output-format", "concise", "--select", "E501",
                "--config", "lint.per-file-ignores = {}", ".")
    assert done.returncode == 0, f"lines over 100 characters:\n{done.stdout}{done.stderr}"


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


def eslint(*args, stdin=None):
    # The installed script itself, not npx: npx would fetch a missing eslint from the registry.
    node = shutil.which("node")
    assert node, "ESLint needs Node.js: ./dev.sh setup installs it (apt-get install npm)"
    assert ESLINT.is_file(), f"{ESLINT.relative_to(ROOT)} is missing: run ./dev.sh setup"
    return subprocess.run([node, str(ESLINT), "--config", "js/eslint.config.js", *args],
                          cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300)


def test_the_shipped_javascript_is_lint_clean():
    done = eslint("--max-warnings", "0", STATIC)
    assert done.returncode == 0, f"eslint {STATIC} found:\n{done.stdout}{done.stderr}"


def test_eslint_reads_every_shipped_module_and_its_rules():
    # Every module in static/ is linted, the vendored Graphviz (a build product) is not.
    listed = json.loads(eslint("--format", "json", STATIC).stdout)
    linted = sorted(Path(f["filePath"]).relative_to(ROOT).as_posix() for f in listed)
    assert linted == sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / STATIC).glob("*.js"))
    # A module as ESLint sees one there: the browser's globals, ES modules, and the rules chosen
    # beyond the recommended set.
    source = ("export function f(items) {\n"
              "  if (items.length == 0) return name;\n"             # eqeqeq, window.name
              "  return items.map((x) => { x + 1; }) + missing;\n"  # no return; no-undef
              "}\n"
              "document.body.append(new ResizeObserver(() => {}));\n")   # browser globals: fine
    done = eslint("--format", "json", "--stdin", "--stdin-filename", f"{STATIC}/_lint_probe.js",
                  stdin=source)
    found = sorted(m["ruleId"] for f in json.loads(done.stdout) for m in f["messages"])
    assert found == ["array-callback-return", "eqeqeq", "no-restricted-globals", "no-undef"], \
        done.stdout + done.stderr
