"""The viewer's front end as one ES module: its source files joined, not built.

``static/*.js`` are ES modules that import their siblings (``import { h } from "./dom.js"``),
so node's own test runner can test each without a browser. anywidget loads one module, so
this joins them: each file once, dependencies first, with its sibling imports and the
``export`` keywords taken out (every file declares distinct top-level names; a clash is a
syntax error the JS tests catch). No tool, no build step, nothing generated is committed:
the join happens at import time, from the files in the package.
"""
from __future__ import annotations

import functools
import pathlib
import re

STATIC = pathlib.Path(__file__).parent / "static"
ENTRY = "viewer.js"
# What only a page (no kernel) runs: its boot, joined with whatever it imports that the entry
# does not (its local model, the state's unpacking, the twin check), so no page misses one.
PAGE_BOOT = "boot.js"

_IMPORT = re.compile(r'^import\s+\{[^}]*\}\s+from\s+"\./([\w-]+\.js)";[ \t]*\n', re.M)
_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?function|const|let|class)", re.M)
_DEFAULT = re.compile(r"^export default (\{[^}]*\});[ \t]*$", re.M)


def _order(name: str, seen: list) -> list:
    """``name`` after the modules it imports (each once), depth first."""
    if name in seen:
        return seen
    text = (STATIC / name).read_text(encoding="utf-8")
    for dep in _IMPORT.findall(text):
        if not (STATIC / dep).is_file():
            raise FileNotFoundError(f"{name} imports ./{dep}, which is not in {STATIC}")
        _order(dep, seen)
    seen.append(name)
    return seen


@functools.cache
def bundle(standalone: bool = False, entry: str = ENTRY) -> str:
    """The viewer as one ES module (``export default { render }``), or with ``standalone``
    a classic script for a saved HTML page that defines ``mlclabViewer`` and ``bootPage``
    (``static/boot.js`` and every module it imports). ``entry``: the front end's top module
    (``viewer.js``; ``compare.js`` for two panes; ``layout.js`` for ``fn.graph()``'s picture)."""
    parts = []
    order = _order(entry, [])
    if standalone:
        order = _order(PAGE_BOOT, order)
    for name in order:
        text = _EXPORT.sub("", _IMPORT.sub("", (STATIC / name).read_text(encoding="utf-8")))
        if name != entry:
            text = _DEFAULT.sub("", text)
        elif standalone:
            text = _DEFAULT.sub(r"const mlclabViewer = \1;", text)
        parts.append(f"// ---- {name}\n{text}")
    return "\n".join(parts)
