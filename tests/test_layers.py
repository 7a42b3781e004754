"""mlclab's packages form layers, and imports only go downward (issue 9).

Data flows one way, and so do imports: a layer may import the layers listed before it and
modules of its own layer, never a later one; and no two modules import each other, even
lazily inside a function. Read from the source, so a function-level import counts too.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mlclab"

# bottom first
LAYERS = [
    ("base", ["mlclab.threadpool", "mlclab.tvm_setup", "mlclab.registry"]),
    ("lang", ["mlclab.lang"]),
    ("ops", ["mlclab.ops"]),
    ("frontend", ["mlclab.frontend", "mlclab.reference"]),
    ("backend", ["mlclab.backend"]),
    ("runtime", ["mlclab.runtime", "mlclab.kernel_plan"]),
    ("inspect", ["mlclab.inspect", "mlclab.viz"]),
    ("api", ["mlclab.api"]),
    ("notebook", ["mlclab.notebook"]),
    ("course", ["mlclab.course"]),
    ("entry points", ["mlclab.cli", "mlclab.__main__", "mlclab"]),
]


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every mlclab module that `path` imports, at module level or inside a function."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "mlclab")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "mlclab":
                continue
            for alias in node.names:   # `from . import ops` names a module
                sub = f"{target}.{alias.name}"
                found.add(sub if _is_module(sub) else target)
    found.discard(name)
    return found


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists()


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {m: imports_of(p) for m, p in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module):
    mine = layer_of(module)
    upward = sorted(t for t in GRAPH[module] if layer_of(t) > mine)
    assert not upward, (f"{module} ({LAYERS[mine][0]}) imports a higher layer: "
                        + ", ".join(f"{t} ({LAYERS[layer_of(t)][0]})" for t in upward))


def test_no_import_cycles():
    # Tarjan's strongly connected components over the module graph
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


MAX_MODULE_LINES = 500


def test_no_module_is_over_500_lines():
    """One module, one job: a file past 500 lines is doing several (split it by job)."""
    sources = list(PACKAGE.rglob("*.py")) + list((PACKAGE / "notebook" / "static").glob("*.js"))
    long = {str(p.relative_to(PACKAGE.parent)): n for p in sources
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"
