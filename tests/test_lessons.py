"""The course: every lesson is well formed, and executes top to bottom as it would on Binder.

Two kinds of test:

* Static checks on the committed notebooks (milliseconds): no outputs, a python3 kernelspec, goals
  up front, an exercise checked with ``mlclab.exercise``, each exercise cell followed by a solution
  in a collapsed ``%%solution`` cell (which does not run) under a "Solution" heading; and the
  binder/ files pinned and complete.
* Execution: a fresh virtualenv is built from binder/requirements.txt, binder/postBuild is run in it
  (installing mlclab from this checkout, as repo2docker does), and every lesson is executed there
  twice with nbclient: untouched, as a student opens it (every exercise check must report a
  failure with a message, and never stop the run), and with each solution put in its exercise
  cell (every check must pass). Each run must finish without an error, within TIME_LIMIT_S, and
  every cell tagged raises-exception must really raise.

Set MLCLAB_LESSONS_PYTHON=/path/to/python to execute the lessons with an existing environment
instead of building a fresh one (quicker while writing a lesson; CI always builds the fresh one).
The executed notebooks land in test-artifacts/lessons/ for inspection.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS_DIR = ROOT / "lessons"
BINDER = ROOT / "binder"
# The arc's lessons are numbered 01, 02, ...; the appendices (A1, A2, ...) are taken aside from it
# (Relay's ADTs, generated IR boilerplate), and run and grade like the others.
NUMBERED = sorted(LESSONS_DIR.glob("[0-9][0-9]-*.ipynb"))
APPENDICES = sorted(LESSONS_DIR.glob("A[0-9]-*.ipynb"))
LESSONS = NUMBERED + APPENDICES
ARTIFACTS = ROOT / "test-artifacts" / "lessons"
TIME_LIMIT_S = 120
# On this machine PyTorch's CPU index is unreachable (only PyPI is), so the install below drops
# that one line; pip's configuration here serves torch==2.13.0+cpu, the same CPU build the pin
# names, from a local copy of the wheel. Everything else resolves exactly as on Binder. That is the
# one difference.
TORCH_CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
# What repo2docker's base environment holds before binder/requirements.txt goes in (see the file).
REPO2DOCKER_BASE = ROOT / "tests" / "lessons_support" / "repo2docker-base.txt"


def read(path: Path):
    return nbformat.read(path, as_version=4)


def lesson_ids():
    return [p.stem for p in LESSONS]


# ------------------------------------------------------------------------------ static checks
def test_lessons_numbered_in_order():
    numbers = [int(p.name[:2]) for p in NUMBERED]
    assert numbers == list(range(1, len(numbers) + 1)), [p.name for p in NUMBERED]
    assert len(numbers) >= 12, [p.name for p in NUMBERED]
    appendices = [p.name[:2] for p in APPENDICES]
    assert appendices == [f"A{i}" for i in range(1, len(appendices) + 1)], appendices
    assert len(appendices) >= 2, appendices


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_title_and_exercise_keys_carry_the_file_number(path):
    """Renumbering a lesson renumbers its title and its exercises: `# Lesson 8 — ...` in
    08-*.ipynb with exercises "08-...", `# Appendix A1 — ...` in A1-*.ipynb with "A1-..."."""
    prefix = path.name[:2]
    label = f"Appendix {prefix}" if prefix.startswith("A") else f"Lesson {int(prefix)}"
    assert read(path).cells[0].source.startswith(f"# {label} — "), read(path).cells[0].source[:80]
    keys = exercise_keys(path)
    assert keys and all(key.startswith(prefix + "-") for key in keys), keys


def test_the_course_index_lists_every_lesson():
    index = (LESSONS_DIR / "README.md").read_text(encoding="utf-8")
    assert not [p.name for p in LESSONS if f"({p.name})" not in index]


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_committed_without_outputs(path):
    nb = read(path)
    nbformat.validate(nb)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has outputs"
            assert cell.execution_count is None, f"cell {index} has an execution count"


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_python3_kernelspec(path):
    assert read(path).metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_goals_up_front(path):
    first = read(path).cells[0]
    assert first.cell_type == "markdown"
    assert re.match(r"# (Lesson \d+|Appendix A\d) — ", first.source), first.source[:80]
    assert "**Goals.**" in first.source


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_exercise_with_hidden_solution_checked_by_mlclab(path):
    cells = read(path).cells
    assert any(c.cell_type == "markdown" and re.search(r"^## .*Exercise", c.source, re.M)
               for c in cells)
    hidden = [i for i, c in enumerate(cells)
              if c.cell_type == "code" and c.metadata.get("jupyter", {}).get("source_hidden")]
    assert hidden, "no collapsed solution cell"
    for i in hidden:
        heading = cells[i - 1]
        assert heading.cell_type == "markdown" \
            and re.search(r"^#+ .*Solution", heading.source, re.M), (
                f"hidden cell {i} is not announced by a Solution heading")
    # The student's check goes through mlclab.exercise, whose reference is not in the notebook.
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert re.search(r"mlclab\.exercise\(\"[0-9A][0-9]-", code)
    assert "%load_ext mlclab" in code, "%%solution needs the extension"


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_each_exercise_cell_has_a_solution_that_does_not_run(path):
    code_cells = [c for c in read(path).cells if c.cell_type == "code"]
    tags = [c.metadata.get("tags", []) for c in code_cells]
    order = ["exercise" if "exercise" in t else "solution"
             for t in tags if {"exercise", "solution"} & set(t)]
    assert order and order == ["exercise", "solution"] * (len(order) // 2), order
    for cell, cell_tags in zip(code_cells, tags):
        if "solution" in cell_tags:
            assert cell.source.startswith("%%solution\n"), "a solution must not run under Run All"
            assert cell.metadata.get("jupyter", {}).get("source_hidden")


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_no_error_cell_without_tag(path):
    """Only raises-exception is used to allow an error, and only on code cells."""
    for cell in read(path).cells:
        tags = cell.metadata.get("tags", [])
        assert set(tags) <= {"raises-exception", "solution", "exercise"}, tags
        if "raises-exception" in tags:
            assert cell.cell_type == "code"


def test_glossary_english_and_chinese():
    text = (LESSONS_DIR / "glossary.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) >= 25
    for row in rows:
        assert re.search(r"[\u4e00-\u9fff]", row), f"no Chinese term in: {row}"


def markdown_sources():
    for path in LESSONS:
        yield path, "\n".join(c.source for c in read(path).cells if c.cell_type == "markdown")
    for path in (LESSONS_DIR / "README.md", LESSONS_DIR / "glossary.md"):
        yield path, path.read_text(encoding="utf-8")


def test_relative_links_resolve():
    """Links between lessons, to the glossary and to docs/ point at files that exist."""
    broken = []
    for path, text in markdown_sources():
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(f"{path.name}: {target}")
    assert not broken, broken


# Phrases in a lesson's prose that state a fact about the compiler or the machine (a count of
# passes, kernels, groups, buffers or cores; a step number; a speed or work ratio). Such a number
# must be printed by a cell, never typed: a typed one goes stale when the pipeline changes (the
# pipeline lesson once said "23 passes" when there were 25). Small numbers written as words count
# too.
_COUNT = (r"(?:\d[\d,]*(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
          r"|twenty[- ]?\w*)")
STATED_FACTS = [
    rf"\b{_COUNT}\s+(?:\w+\s+)?(?:passes|kernels?|fused groups|groups?|PrimFuncs?|loop nests?|"
    r"intermediate buffers?|buffers|temporar(?:y|ies)|cores?|threads|trials?|design spaces?|"
    r"rounds?|schedules)\b",
    r"\bsteps? \d+\b",
    r"\b\d+(?:\.\d+)?\s*[x×]\s+(?:faster|slower|more|fewer|less|apart)\b",
    rf"\b{_COUNT}\s+times\s+(?:more|fewer|faster|slower|less|as)\b",
    r"\btwice as\b",
    r"\b\d+-core\b",
    r"\b\d[\d.,]*\s*[MG]?\s*FLOPs\b",
    r"\ba (?:tenth|half|third|quarter) of the (?:work|time)\b",
]
# Numbers that are definitions, not facts the system could contradict: (lesson, phrase, why).
DEFINITIONS = {
    ("01", "three passes"): "numpy's three operators, one pass over memory each",
    ("08", "three passes"): "the same: three numpy operators",
    ("01", "3 FLOPs"): "multiply, add, max: the formula relu(a * b + c) itself",
    ("08", "3 FLOPs"): "the same formula (section 6's self-check compares it with the profiler)",
    ("08", "2.25× faster"): "36 / 16 written out beside it, and the cell below prints it",
    ("08", "two kernels"): "the program was written with two results, one kernel each",
}


def stated_facts():
    for path in LESSONS:
        lesson = path.name[:2]
        for index, cell in enumerate(read(path).cells):
            if cell.cell_type != "markdown":
                continue
            for pattern in STATED_FACTS:
                for match in re.finditer(pattern, cell.source, re.I):
                    yield lesson, index, match.group(0)


def test_prose_numbers_about_the_compiler_are_printed_by_cells():
    """A count, step number or ratio in a lesson's prose is printed by a cell, or a definition."""
    typed = [f"lesson {lesson} cell {index}: {phrase!r}" for lesson, index, phrase in stated_facts()
             if (lesson, re.sub(r"\s+", " ", phrase)) not in DEFINITIONS]
    assert not typed, ("print these from a cell (or list a definition in DEFINITIONS): "
                       + "; ".join(typed))


def test_the_fact_scanner_finds_typed_facts():
    """The scanner catches phrases lessons once typed, so the test above cannot pass vacuously."""
    stale = ["which of the 23 passes will change it?", "FoldBatchNorm (step 3) scales",
             "about **ten times\nmore arithmetic**", "doing a tenth of the work",
             "On this 2-core machine",
             "allocates two temporaries", "the chain is 2.7x faster", "FuseOps made 3 fused groups",
             "MetaSchedule measured 32 trials", "three design spaces", "2,177,364 schedules"]
    for text in stale:
        assert any(re.search(p, text, re.I) for p in STATED_FACTS), text


def requirement_lines() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_binder_requirements_pinned_with_cpu_torch():
    lines = requirement_lines()
    assert TORCH_CPU_INDEX in lines
    packages = [line for line in lines if not line.startswith("--")]
    unpinned = [line for line in packages
                if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[^=<>~!,\s]+", line)]
    assert not unpinned, unpinned
    assert "torch==2.13.0+cpu" in packages
    names = {re.split(r"[=\[]", line)[0].lower() for line in packages}
    assert {"apache-tvm", "numpy", "graphviz", "ipywidgets", "anywidget", "scikit-learn",
            "ipykernel"} <= names
    # JupyterLab is upgraded over repo2docker's base; Notebook 7 must move with it (see the file).
    assert {"jupyterlab", "notebook"} <= names


def test_binder_postbuild_apt_runtime():
    post_build = BINDER / "postBuild"
    text = post_build.read_text()
    assert text.startswith("#!/bin/bash")
    assert re.search(r"^set -e$", text, re.M)
    assert re.search(r"pip install .*\s\.$", text, re.M)
    assert os.access(post_build, os.X_OK)
    assert "graphviz" in (BINDER / "apt.txt").read_text().split()
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


# ------------------------------------------------------------------------------ execution
def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                    f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def lesson_python(tmp_path_factory) -> Path:
    """A Binder-like environment: fresh virtualenv + binder/requirements.txt + binder/postBuild."""
    existing = os.environ.get("MLCLAB_LESSONS_PYTHON")
    if existing:
        return Path(existing)
    venv = tmp_path_factory.mktemp("binder") / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    requirements = venv.parent / "requirements.txt"
    requirements.write_text("\n".join(line for line in requirement_lines()
                                      if line != TORCH_CPU_INDEX) + "\n")
    # --no-compile: skip byte-compiling torch's and TVM's thousands of modules up front (a third of
    # the install time here); Python compiles what the lessons import on first use, as it would
    # anyway. pip's cache (its default location) is reused between runs for anything fetched over
    # the network.
    # repo2docker's base environment first (JupyterLab, Notebook, jupyterhub-singleuser), as Binder
    # and a z2jh image have it, so `pip check` below sees a pin that conflicts with it.
    run([python, "-m", "pip", "install", "--quiet", "--no-compile", "-r", REPO2DOCKER_BASE],
        timeout=1800)
    run([python, "-m", "pip", "install", "--quiet", "--no-compile", "-r", requirements],
        timeout=1800)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    run(["bash", BINDER / "postBuild"], cwd=ROOT, env=env, timeout=900)
    run([python, "-m", "pip", "check"], env=env)
    return python


EXECUTION_TESTS = {"test_lesson_executes_top_to_bottom",
                   "test_untouched_exercises_fail_with_a_message", "test_solved_exercises_pass"}


UNTOUCHED_TESTS = {"test_lesson_executes_top_to_bottom",
                   "test_untouched_exercises_fail_with_a_message",
                   "test_lessons_ran_in_the_binder_environment"}


@pytest.fixture(scope="module")
def lesson_runs(request, lesson_python, tmp_path_factory) -> dict:
    """The selected lessons (all of them unless -k narrows it), executed untouched and solved; the
    two runs go side by side (2 cores: most of a lesson is single-threaded compilation), and their
    timings are the lessons' own business: every verdict a lesson prints allows for the noise it
    measured."""
    names = {item: getattr(item, "originalname", None) for item in request.session.items}
    selected = {item.callspec.params["path"] for item, name in names.items()
                if name in EXECUTION_TESTS and hasattr(item, "callspec")}
    lessons = sorted(selected) or LESSONS
    modes = {"untouched": [], "solved": ["--with-solutions"]}
    if not any(name == "test_solved_exercises_pass" for name in names.values()):
        modes.pop("solved")
    if not any(name in UNTOUCHED_TESTS for name in names.values()):
        modes.pop("untouched")
    # mlclab must come from the install; with MLCLAB_LESSONS_PYTHON, PYTHONPATH may point at a
    # checkout.
    env = dict(os.environ) if os.environ.get("MLCLAB_LESSONS_PYTHON") else \
        {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # Results go to this run's own directory: another test run on the same machine may be executing
    # lessons too, and only the executed notebooks (for people to inspect) share test-artifacts/.
    out = tmp_path_factory.mktemp("lesson-results")
    running = {mode: subprocess.Popen(
        [lesson_python, ROOT / "tests" / "lessons_support" / "execute_lessons.py", *options,
         out / f"{mode}.json", ARTIFACTS, *lessons],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for mode, options in modes.items()}
    results = {}
    for mode, process in running.items():
        try:
            stdout, stderr = process.communicate(timeout=len(lessons) * 900)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        if process.returncode != 0:
            pytest.fail(f"the lesson runner ({mode}) failed:\n{stdout[-3000:]}\n{stderr[-3000:]}")
        results[mode] = json.loads((out / f"{mode}.json").read_text())
    return results


@pytest.fixture(scope="module")
def executed(lesson_runs) -> dict:
    """Every lesson as a student opens it: the exercise cells hold their starters."""
    return lesson_runs["untouched"]


@pytest.fixture(scope="module")
def solved(lesson_runs) -> dict:
    """Every lesson with each solution written into its exercise cell."""
    return lesson_runs["solved"]


def test_lessons_ran_in_the_binder_environment(executed):
    env = executed["environment"]
    assert env["python"].startswith("3.11"), "binder/runtime.txt pins Python 3.11"
    assert env["torch"].endswith("+cpu"), "Binder installs PyTorch's CPU build"
    assert env["mlclab"] is not None, "postBuild did not install mlclab"
    if not os.environ.get("MLCLAB_LESSONS_PYTHON"):
        assert Path(env["prefix"]) != Path(sys.prefix), "lessons ran in the development venv"


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_lesson_executes_top_to_bottom(executed, path):
    outcome = executed["lessons"][path.name]
    assert outcome["error"] is None, outcome["error"]
    assert outcome["silent_raises_cells"] == [], "cells tagged raises-exception that did not raise"
    assert outcome["seconds"] < TIME_LIMIT_S, f"{path.name} took {outcome['seconds']:.0f} s"


def exercise_keys(path: Path) -> list[str]:
    code = "\n".join(c.source for c in read(path).cells if c.cell_type == "code")
    return re.findall(r"mlclab\.exercise\(\"([0-9A][0-9]-[a-z-]+)\"\)", code)


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_untouched_exercises_fail_with_a_message(executed, path):
    """Run All on a fresh notebook: every check runs, fails, and says why (it never raises)."""
    checks = executed["lessons"][path.name]["checks"]
    assert [c["exercise"] for c in checks] == exercise_keys(path)
    for check in checks:
        assert not check["passed"], check
        assert check["status"] in {"unchanged", "not run", "failed"}, check
        assert len(check["message"]) > 30, check


@pytest.mark.parametrize("path", LESSONS, ids=lesson_ids())
def test_solved_exercises_pass(solved, path):
    outcome = solved["lessons"][path.name]
    assert outcome["error"] is None, outcome["error"]
    assert outcome["seconds"] < TIME_LIMIT_S, f"{path.name} took {outcome['seconds']:.0f} s"
    checks = outcome["checks"]
    assert [c["exercise"] for c in checks] == exercise_keys(path)
    assert all(c["passed"] for c in checks), [c for c in checks if not c["passed"]]


def test_visualizer_doc_lists_the_passes_mlclab_compiles_with():
    """docs/visualizer.md's pipeline listing is the real pass list (lesson 8 prints the same)."""
    from mlclab.backend.passes import build_passes
    text = (ROOT / "docs" / "visualizer.md").read_text(encoding="utf-8")
    listing = re.search(r"```\n( 0 .*?)```", text, re.S).group(1)
    numbered = sorted((int(n), name) for n, name in re.findall(r"(\d+) ([\w.]+)", listing))
    assert [name for _, name in numbered] == [p.info.name for p in build_passes("llvm")]
