"""Build the WebAssembly Graphviz that mlclab ships in its wheel (issue 20).

Where no ``dot`` program is installed, the viewer and ``fn.graph()`` lay graphs out in the
browser with Graphviz compiled to WebAssembly: the npm package ``@hpcc-js/wasm-graphviz``
(one ES module, the wasm inlined, no imports; Apache-2.0, Graphviz inside is EPL-1.0). This
installs it exactly as ``package-lock.json`` pins it (``npm ci --omit=dev``: the lock's
devDependencies are ESLint, which only ``./dev.sh setup`` installs, and which a rebuild in a
checkout that has it installs again) and copies it, with its
licence and Graphviz's notice, to ``mlclab/notebook/static/vendor/``: a build product, never
committed. ``setup.py`` runs it before every ``build_py`` (wheel, sdist-to-wheel, editable
install), ``./dev.sh setup`` and ``binder/postBuild`` run it too.

Without npm it says so and builds nothing: mlclab still works where ``dot`` exists, and
where it does not the picture says what is missing. A copy built from the same lock file is
kept (no network, no npm run).

    python js/vendor_graphviz.py           # build if missing or stale
    python js/vendor_graphviz.py --check   # exit 1 unless built from the current lock file
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

JS = Path(__file__).resolve().parent
ROOT = JS.parent
VENDOR = ROOT / "mlclab" / "notebook" / "static" / "vendor"
PACKAGE = "@hpcc-js/wasm-graphviz"
MODULE = "graphviz.js"
LICENCE = "LICENSE-hpcc-js-wasm-graphviz.txt"
NOTICE = "NOTICE-graphviz.txt"
# The installed package's one module (the wasm is inlined in it, base91-encoded).
DIST = Path("node_modules") / PACKAGE / "dist" / "index.js"
_SOURCE_MAP = re.compile(r"\n?//# sourceMappingURL=\S*\s*$")


def lock_digest() -> str:
    """What the vendored file was built from: the lock file's sha256 (first 16 hex)."""
    return hashlib.sha256((JS / "package-lock.json").read_bytes()).hexdigest()[:16]


def header(version: str) -> str:
    return (f"/*! mlclab vendored {PACKAGE} {version} (Apache-2.0; {LICENCE}). Graphviz inside "
            f"is EPL-1.0: {NOTICE}. Built by js/vendor_graphviz.py from js/package-lock.json "
            f"lock:{lock_digest()}. A build product: do not edit, do not commit. */\n")


def is_current() -> bool:
    """Whether the vendored module, its licence and notice are there, built from this lock."""
    module = VENDOR / MODULE
    if not all((VENDOR / name).is_file() for name in (MODULE, LICENCE, NOTICE)):
        return False
    with module.open(encoding="utf-8") as f:
        first = f.readline()
    return f"lock:{lock_digest()}" in first


def build(npm: str | None = None) -> str:
    """Build the vendored module unless it is current. Returns what happened, one line; raises
    ``RuntimeError`` when npm is there but fails."""
    if is_current():
        return f"WebAssembly Graphviz is up to date in {VENDOR.relative_to(ROOT)}"
    npm = npm or shutil.which("npm")
    if npm is None:
        return ("npm was not found, so the WebAssembly Graphviz was not built: mlclab draws graphs "
                "with Graphviz's `dot` program where it is installed, and says what is missing "
                "where it is not (install Node.js with npm and reinstall mlclab to build it)")
    # npm ci empties node_modules first: where ./dev.sh setup installed ESLint, install it again
    # rather than leave a checkout whose lint test fails after a rebuild.
    keep_dev = (JS / "node_modules" / ".bin" / "eslint").exists()
    omit = [] if keep_dev else ["--omit=dev"]
    proc = subprocess.run([npm, "ci", *omit, "--ignore-scripts", "--no-audit", "--no-fund"],
                          cwd=JS, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"`npm ci` in {JS} failed ({proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    installed = JS / "node_modules" / PACKAGE
    version = json.loads((installed / "package.json").read_text(encoding="utf-8"))["version"]
    module = _SOURCE_MAP.sub("\n", (JS / DIST).read_text(encoding="utf-8"))
    if re.search(r"^\s*import\s|\bimport\(", module, re.M):
        raise RuntimeError(f"{PACKAGE} {version} imports other modules: mlclab inlines it as "
                           f"one module, so it must stand alone")
    VENDOR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(installed / "LICENSE", VENDOR / LICENCE)
    shutil.copyfile(JS / NOTICE, VENDOR / NOTICE)
    # Written last: its header is what says the build is complete.
    (VENDOR / MODULE).write_text(header(version) + module, encoding="utf-8")
    return f"built {PACKAGE} {version} into {VENDOR.relative_to(ROOT)} ({len(module) // 1024} KB)"


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        ok = is_current()
        print("current" if ok else f"missing or stale: run python {Path(__file__).name}")
        return 0 if ok else 1
    print(f"mlclab: {build()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
