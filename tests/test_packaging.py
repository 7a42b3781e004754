"""What a fresh machine installs (``./dev.sh test``: ``pip install -e .[dev,lessons]``) is what the
code and the tests import, and every version is written once."""
import ast
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def declared() -> set:
    """Distributions pyproject.toml names in any extra, and what the installed ones require
    (the zoo extra's packages are not installed by ./dev.sh: its benchmark skips without them)."""
    extras = PROJECT["optional-dependencies"]
    # every extra counts: a benchmark's packages are declared in the extra it runs with (zoo)
    names = {_name(r) for r in PROJECT["dependencies"]
             + [r for group in extras.values() for r in group]} - {"mlclab"}
    for name in list(names):
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" not in requirement:
                names.add(_name(requirement))
    return names


def third_party_imports() -> dict:
    """Top-level module -> a file importing it, over mlclab/, tests/ and benchmarks/."""
    # the repository's own modules (js/vendor_graphviz.py: the build step tests import), and
    # its test and benchmark folders as packages
    local = {p.stem for d in ("tests", "benchmarks", "js") for p in (ROOT / d).glob("**/*.py")
             if "node_modules" not in p.parts} \
        | {"tests", "benchmarks"}
    found = {}
    for folder in ("mlclab", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                           [node.module] if isinstance(node, ast.ImportFrom) and not node.level
                           and node.module else [])
                for module in modules:
                    top = module.split(".")[0]
                    if top not in sys.stdlib_module_names and top != "mlclab" \
                            and top not in local:
                        found.setdefault(top, path.relative_to(ROOT))
    return found


def test_every_imported_package_is_declared():
    distributions = metadata.packages_distributions()
    have = declared()
    missing = {module: str(where) for module, where in third_party_imports().items()
               if not {_name(d) for d in distributions.get(module, [module])} & have}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_the_type_marker_ships_with_the_package():
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["mlclab"]
    assert (ROOT / "mlclab" / "py.typed").is_file()


def test_torchs_exact_version_is_written_once():
    """binder/requirements.txt pins it; dev.sh reads it from there; pyproject.toml only says the
    oldest version supported, and the lessons extra reuses the torch extra."""
    pins = re.findall(r"^torch==(\S+)", (ROOT / "binder" / "requirements.txt").read_text(), re.M)
    assert len(pins) == 1
    dev_sh = (ROOT / "dev.sh").read_text()
    assert "torch==" not in dev_sh.replace("^\\(torch==", "")
    assert "binder/requirements.txt" in dev_sh
    extras = PROJECT["optional-dependencies"]
    assert not any("==" in r for r in extras["torch"])
    assert "mlclab[torch]" in extras["lessons"]
    assert not {_name(r) for r in extras["torch"]} & {_name(r) for r in extras["lessons"]}
