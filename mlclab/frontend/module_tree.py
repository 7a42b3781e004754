"""An imported PyTorch model's module tree as text (what ``fn.source`` shows), and the module
path and ATen operator name of an exported graph node.

The tree is one line per submodule, so a binding can point at its module's line; the views
read it back with :func:`module_tree`. This module owns that format.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..lang.source import Span, displayable


@dataclass(frozen=True)
class ModuleLine:
    """One module's line of the module tree (``fn.source``)."""

    lineno: int                       # 1-based
    text: str                         # the line as listed: "        conv1: Conv2d(64, 64, ...)"
    head: str                         # its class and arguments: "Conv2d(64, 64, ...)"

    @property
    def span(self) -> Span:
        """The line's text, its indentation left out."""
        indent = len(self.text) - len(self.text.lstrip(" "))
        return Span(self.lineno, indent, self.lineno, len(self.text))


class ModuleListing:
    """The module tree as text, one line per submodule, so a binding can point at a line:
    the root's class first, then ``name: Class(...)`` per submodule, indented four spaces per
    level. :func:`module_tree` reads it back."""

    def __init__(self, module):
        self.lines: list[str] = []
        self.tree: dict[str, ModuleLine] = {}    # what module_tree(self.text) reads back
        self._add(module, "", "", 0)
        self.text = "\n".join(self.lines) + "\n"

    @property
    def line_of(self) -> dict[str, int]:
        """Module path -> its line number."""
        return {path: line.lineno for path, line in self.tree.items()}

    def _add(self, module, path: str, name: str, depth: int) -> None:
        head = displayable(f"{type(module).__name__}({_first_extra_line(module)})")
        text = "    " * depth + (f"{_one_line(name)}: {head}" if name else head)
        self.lines.append(text)
        self.tree[path] = ModuleLine(len(self.lines), text, head)
        for child, sub in module.named_children():
            self._add(sub, f"{path}.{child}" if path else child, child, depth + 1)

    def span(self, path: str) -> Span:
        """The listing line of ``path``, or of its nearest listed ancestor."""
        while path not in self.tree:
            path = path.rpartition(".")[0]
        return self.tree[path].span

    def source_line(self, span: Span) -> str:
        return self.lines[span.lineno - 1]

    def where(self, path: str) -> str:
        """``in layer1.0 (0: BasicBlock())``: a module path with its line, for messages."""
        line = self.source_line(self.span(path)).strip()
        return f"in {_one_line(path)} ({line})" if path else "in the model's own forward"


def _first_extra_line(module) -> str:
    # A student's extra_repr can raise or return anything: the tree is still drawn.
    try:
        extra = module.extra_repr()
        lines = str(extra or "").splitlines()
    except Exception:
        return "..."
    return lines[0] if lines else ""


def _one_line(name: str) -> str:
    """A submodule name as one displayable line (a name may hold a newline, a NUL, a lone
    surrogate: ``add_module`` takes any str)."""
    return displayable(name).replace("\n", "\\n").replace("\r", "\\r").replace("\0", "\\0")


def module_tree(listing: Optional[str]) -> dict:
    """Module path -> its :class:`ModuleLine` (``""``: the model itself), read back from a
    :class:`ModuleListing`'s text (an imported model's ``fn.source``, all the views have).
    Lines that do not read so are skipped."""
    lines = (listing or "").splitlines()
    if not lines:
        return {}
    tree = {"": ModuleLine(1, lines[0], lines[0].strip())}
    stack: list[str] = []             # the names of the current line's ancestors
    for lineno, line in enumerate(lines[1:], start=2):
        text = line.lstrip(" ")
        depth, rest = divmod(len(line) - len(text), 4)
        name, sep, head = text.partition(": ")
        if rest or depth < 1 or not sep or depth > len(stack) + 1:
            continue
        del stack[depth - 1:]
        stack.append(name)
        tree[".".join(stack)] = ModuleLine(lineno, line, head)
    return tree


def module_path(node) -> str:
    """The dotted path of the innermost module that made ATen ``node`` ("" for the root)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return _clean_path(str(path))


def _clean_path(path: str) -> str:
    # Some torch versions spell paths as Python: L['self'].layer1[0].conv1 -> layer1.0.conv1
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"\[['\"]([^'\"]+)['\"]\]", r".\1", path)
    return path.strip(".")


def function_name(class_name: str) -> str:
    """The Relax function's name: the module's class name when it is an identifier."""
    return class_name if class_name.isidentifier() and class_name.isascii() else "model"


def operator_name(node) -> str:
    """``aten.conv2d`` for an ATen call node."""
    return _op_text(node.target)


def user_operator_name(node) -> str:
    """The operator the model's code called, before decomposition: ``aten.index_copy`` for
    the ``aten.index_put`` it became (torch.export records it as ``original_aten``)."""
    original = node.meta.get("original_aten")
    return _op_text(original) if original is not None else operator_name(node)


def _op_text(target) -> str:
    text = str(getattr(target, "_overloadpacket", None) or getattr(target, "__name__", target))
    return text.removesuffix(".default")
