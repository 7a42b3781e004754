"""setuptools' build with one extra step: the WebAssembly Graphviz (js/vendor_graphviz.py) is
built into the package before its files are collected, so a wheel, an sdist's wheel and an
editable install all carry it where node/npm are present (pyproject.toml holds the rest)."""
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, str(Path(__file__).resolve().parent / "js"))
import vendor_graphviz  # noqa: E402  (js/ is not a package)


class BuildPyWithGraphviz(build_py):
    """``build_py`` that first builds the vendored WebAssembly Graphviz (or says why not)."""

    def run(self):
        try:
            print(f"mlclab: {vendor_graphviz.build()}", file=sys.stderr)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
            # npm there but failing (offline, say): the install goes on without the module, and
            # a display without `dot` says the module is missing. ./dev.sh setup fails instead.
            print(f"mlclab: WARNING: the WebAssembly Graphviz was not built: {err}",
                  file=sys.stderr)
        super().run()


setup(cmdclass={"build_py": BuildPyWithGraphviz})
