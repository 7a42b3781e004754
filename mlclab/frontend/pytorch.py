"""PyTorch modules -> Relax, remembering which module each binding came from.

``torch.export`` captures the module as an ATen graph; TVM's ``from_exported_program``
translates that graph node by node. mlclab wraps each translation to learn which Relax
bindings each ATen node produced, and reads the node's PyTorch module path
(``layer1.0.conv1``) from export's ``nn_module_stack``. The views group the graph by those
paths; validation compares each node's PyTorch value with its Relax value.

What a student typed that cannot be captured or translated is a ``ValueError`` naming the
PyTorch operator and the module path, never a TVM traceback.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..lang import typed as T
from ..lang.source import Span, displayable
from ..lang.typed import BindingInfo
from ..tvm_setup import tvm

# Dimension 0 of every input when ``dynamic_batch``: its name in signatures and views.
BATCH = "batch"


@dataclass
class ImportedModel:
    """A PyTorch module translated to Relax, with what the views and validation need."""

    mod: Any                        # tvm.IRModule: one Relax function, ``name``
    name: str                       # the function's name (the module class, snake_case)
    params: list                    # typed ``Param``s of the user inputs
    ret_type: Any                   # typed ``TensorType`` or ``TupleType``
    bindings: dict                  # relax.Var -> BindingInfo (with its module path)
    listing: str                    # the module tree, one line per submodule: the "source"
    exported: Any                   # the decomposed torch.export.ExportedProgram
    # ATen node name -> the Relax binding name holding its value (validation's layer map)
    node_values: dict = field(default_factory=dict)
    # With params_as_inputs: the state_dict names of the parameters after the user's inputs
    weights: list = field(default_factory=list)
    # Integer inputs used as indices (an Embedding's), checked at each call
    index_checks: list = field(default_factory=list)


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
        extra = (module.extra_repr() or "").splitlines()
        head = displayable(f"{type(module).__name__}({extra[0] if extra else ''})")
        text = "    " * depth + (f"{displayable(name)}: {head}" if name else head)
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
    return class_name if class_name.isidentifier() else "model"


def operator_name(node) -> str:
    """``aten.conv2d`` for an ATen call node."""
    target = node.target
    text = str(getattr(target, "_overloadpacket", None) or getattr(target, "__name__", target))
    return text.removesuffix(".default")


class UnsupportedModel(ValueError):
    """A model torch.export cannot capture or TVM cannot translate; says which part."""


# --------------------------------------------------------------------------- import
def import_module(module, example_args: tuple, *, dynamic_batch: bool = False,
                  params_as_inputs: bool = False) -> ImportedModel:
    """Export ``module`` on ``example_args`` and translate it to Relax (weights as constants,
    or as extra inputs after the user's with ``params_as_inputs``)."""
    import torch

    tvm()
    listing = ModuleListing(module)
    exported = _export(module, example_args, dynamic_batch)
    with torch.no_grad(), _quiet_torch():
        exported = exported.run_decompositions()
    mod, results = _translate(exported, params_as_inputs, listing)
    name = function_name(type(module).__name__)
    paths = _input_paths(exported)
    bindings, node_values = _binding_infos(mod["main"], results, listing, paths)
    mod, bindings = _renamed(mod, name, bindings)
    mod = _clipped_takes(mod, name)
    func = mod[name]
    params = [T.Param(p.name, _typed_type(p.ty), listing.span(paths.get(p.name, "")))
              for p in func.params]
    weights = [target for arg, target in _weight_targets(exported).items()
               if arg in {p.name for p in func.params}]
    return ImportedModel(mod, name, params, _typed_type(func.ret_ty), bindings, listing.text,
                         exported, node_values, weights, index_checks(func, bindings))


def _export(module, example_args, dynamic_batch):
    import torch

    dynamic_shapes = None
    if dynamic_batch:
        batch = torch.export.Dim(BATCH)
        dynamic_shapes = tuple({0: batch} if a.ndim else None for a in example_args)
    try:
        with torch.no_grad(), _quiet_torch():
            return torch.export.export(module, tuple(example_args), dynamic_shapes=dynamic_shapes)
    except Exception as exc:      # torch's own message says what it could not capture
        first = _first_line(exc)
        name = type(module).__name__
        if "data-dependent" in str(exc) or "DataDependent" in type(exc).__name__:
            raise UnsupportedModel(
                f"torch.export could not capture {name}: Python control flow on a tensor's "
                f"value{_user_line(exc)} (torch: {first.split(' (')[0].rstrip('.')}). One traced run "
                f"cannot decide such a branch for every input: use torch.where, or move the "
                f"branch out of forward") from None
        raise UnsupportedModel(
            f"torch.export could not capture {name} on the example inputs: {first} (does "
            f"model(*example_args) run in PyTorch?)") from None


@contextlib.contextmanager
def _quiet_torch():
    """torch.export prints the graph it was tracing, and logs warnings, when it gives up, and
    warns about its own internals: the error mlclab raises says what matters, so none of that
    reaches a notebook cell."""
    import io
    import logging
    import warnings

    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.ERROR + 1)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings():
            # torch's own deprecation notices about its internals ("LeafSpec is deprecated")
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(level)


def _user_line(exc) -> str:
    """Where in the model's code torch.export gave up (its message quotes the line), as
    `` at forward, line 8: `if h.sum() > 0:```, or ""."""
    found = re.search(r'File "[^"]*", line (\d+), in (\w+)\n[ \t]+(\S.*)', str(exc))
    if not found:
        return ""
    line, function, code = found.groups()
    return f" at {function}, line {line}: `{displayable(code.strip())}`"


def _first_line(exc) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


def _where(node, listing) -> str:
    path = module_path(node)
    line = listing.source_line(listing.span(path)).strip()
    return f"in {path} ({line})" if path else "in the model's own forward"


def _check_supported(exported, listing, known) -> None:
    """Every ATen operator of ``exported`` has a translation in ``known`` (the importer's
    table), or the error names the first that does not, with its module."""
    missing = [n for n in exported.graph.nodes
               if n.op == "call_function" and n.target.__name__ not in known]
    if missing:
        node = missing[0]
        others = sorted({operator_name(n) for n in missing[1:]} - {operator_name(node)})
        also = f" (also unsupported: {', '.join(others)})" if others else ""
        raise UnsupportedModel(
            f"PyTorch operator {operator_name(node)} {_where(node, listing)} has no translation "
            f"to Relax in TVM {tvm().__version__}{also}; replace that layer, or write it with "
            f"supported operations")


class _RecordingImporter:
    """TVM's importer with every node translation wrapped: which Relax value each ATen node
    produced, in order, and the node named when a translation fails."""

    def __init__(self, listing: ModuleListing):
        from tvm.relax.frontend.torch.exported_program_translator import ExportedProgramImporter

        self.listing = listing
        self.importer = ExportedProgramImporter()
        self.results: list = []          # (fx node, the Relax expression it produced)
        self.importer.convert_map = {k: self._wrap(f) for k, f in
                                     self.importer.convert_map.items()}

    def _wrap(self, convert):
        def translate(node, *rest):
            try:
                out = convert(node, *rest)
            except Exception as exc:
                raise UnsupportedModel(
                    f"TVM could not translate PyTorch operator {operator_name(node)} "
                    f"{_where(node, self.listing)}: {_first_line(exc)}") from None
            self.results.append((node, out))
            return out
        return translate


def _translate(exported, params_as_inputs, listing):
    recorder = _RecordingImporter(listing)
    _check_supported(exported, listing, recorder.importer.convert_map)
    try:
        mod = recorder.importer.from_exported_program(exported, params_as_inputs, True, False,
                                                      None)
    except UnsupportedModel:
        raise
    except Exception as exc:
        raise UnsupportedModel(f"TVM could not translate this model: {_first_line(exc)}") from None
    return mod, recorder.results


def _renamed(mod, name: str, bindings: dict):
    """``mod`` with its one function ``main`` called ``name``, and its symbolic sizes (torch
    calls them ``s0``, ``s31``...) called what they are: a dynamic batch is ``batch``.
    Renaming makes new variables, so ``bindings`` is carried over to them, position by
    position (the structure does not change)."""
    from tvm import tirx

    func = mod["main"].with_attr("global_symbol", name)
    sizes = [d for p in func.params[:1] for d in p.ty.shape.values[:1]
             if isinstance(d, tirx.Var)]
    if sizes:
        old = sizes[0]
        renamed = func.bind_symbolic_vars({old: tirx.Var(BATCH, "int64")})
        bounds = func.attrs.get("tir_var_lower_bound") if func.attrs is not None else None
        if bounds is not None and old.name in bounds:
            renamed = renamed.with_attr("tir_var_lower_bound", {BATCH: bounds[old.name]})
        bindings = {new: bindings[was] for was, new in zip(_all_vars(func), _all_vars(renamed))
                    if was in bindings}
        func = renamed
    return tvm().IRModule({name: func}), bindings


def _all_vars(func) -> list:
    return list(func.params) + [b.var for block in func.body.blocks for b in block.bindings]


# --------------------------------------------------------------------------- indices
# TVM's take (an Embedding) reads out of bounds on a bad index, and the process dies. PyTorch
# refuses such an index; mlclab checks inputs that are indices at each call, with the same
# message for the compiled model and its reference, and clips any other take so that an index
# computed inside the model can never read outside its table.
_VALUE_PRESERVING = {"relax.astype", "relax.reshape", "relax.permute_dims", "relax.expand_dims",
                     "relax.squeeze", "relax.flatten"}


@dataclass(frozen=True)
class IndexCheck:
    param: int          # which input
    size: int           # indices must lie in [0, size)
    where: str          # the layer, as the module tree spells it


def index_checks(func, bindings: dict) -> list:
    """The integer inputs that reach a ``take``'s indices unchanged, with the table size."""
    from tvm import relax

    origin: dict = {}                      # var -> the parameter index it carries unchanged
    for i, p in enumerate(func.params):
        if isinstance(p.ty, relax.TensorType) and str(p.ty.dtype).startswith(("int", "uint")):
            origin[p] = i
    checks = []
    for block in func.body.blocks:
        for b in block.bindings:
            value = b.value
            if not isinstance(value, relax.Call) or not isinstance(value.op, tvm().ir.Op):
                continue
            op = value.op.name
            if op in _VALUE_PRESERVING and value.args[0] in origin:
                origin[b.var] = origin[value.args[0]]
            elif op == "relax.take" and value.args[1] in origin:
                axis = int(value.attrs.axis) if value.attrs.axis is not None else 0
                dim = value.args[0].ty.shape.values[axis]
                if getattr(dim, "value", None) is not None:
                    info = bindings.get(b.var)
                    where = info.source_line.strip() if info else "a lookup"
                    checks.append(IndexCheck(origin[value.args[1]], int(dim.value), where))
    return checks


def _clipped_takes(mod, name: str):
    """``mod`` with every unchecked ``take`` clipping its indices (same bindings and vars)."""
    from tvm import relax

    func = mod[name]
    blocks = []
    for block in func.body.blocks:
        bindings = []
        for b in block.bindings:
            value = b.value
            if (isinstance(value, relax.Call) and isinstance(value.op, tvm().ir.Op)
                    and value.op.name == "relax.take" and value.attrs.mode == "fast"):
                value = relax.op.take(value.args[0], value.args[1], value.attrs.axis, "clip")
                b = relax.VarBinding(b.var, value)
            bindings.append(b)
        make = relax.DataflowBlock if isinstance(block, relax.DataflowBlock) else relax.BindingBlock
        blocks.append(make(bindings))
    body = relax.SeqExpr(blocks, func.body.body)
    out = relax.Function(func.params, body, func.ret_ty, func.is_pure, func.attrs)
    # Keep every other function (torch.cond's branches live beside main), and normalise: a
    # function rebuilt by hand lacks the struct info later passes look up (FuseTransposeMatmul
    # failed on BERT's, and the whole build fell back to TVM's unscheduled pipeline).
    funcs = {gv: (out if gv.name_hint == name else f) for gv, f in mod.functions_items()}
    rebuilt = tvm().IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)
    return relax.transform.Normalize()(rebuilt)


def _weight_targets(exported) -> dict:
    """Relax parameter name -> the state_dict name, for the module's parameters."""
    from torch.export.graph_signature import InputKind

    return {s.arg.name: s.target for s in exported.graph_signature.input_specs
            if s.kind == InputKind.PARAMETER}


def _input_paths(exported) -> dict:
    """Relax parameter name -> the module path that owns it ("" for the user's inputs)."""
    return {arg: target.rpartition(".")[0] for arg, target in _weight_targets(exported).items()}


def _binding_infos(func, results, listing, paths: dict):
    """relax.Var -> BindingInfo for the parameters and every binding of ``func``, and each
    ATen node's value name.

    Translation is sequential: the bindings a node produced come after the previous node's
    value, up to and including its own. A value another node already produced (an alias such
    as ``dropout`` in eval mode) belongs to that first node.
    """
    owner: dict = {}                 # relax.Var -> the fx node whose value it is
    for node, out in results:
        for var in _vars_in(out):
            owner.setdefault(var, node)
    node_values: dict = {}
    infos: dict = {}
    root = listing.span("")
    for param in func.params:
        path = paths.get(param.name, "")
        span = listing.span(path)
        infos[param] = BindingInfo(param.name, param.name, span, listing.source_line(span),
                                   "param", module=path)
    pending: list = []
    for block in func.body.blocks:
        for binding in block.bindings:
            pending.append(binding.var)
            node = owner.get(binding.var)
            if node is None:
                continue
            path = module_path(node)
            span = listing.span(path)
            for var in pending:
                infos[var] = BindingInfo(var.name, node.name if var.same_as(binding.var) else None,
                                         span, listing.source_line(span), "binding",
                                         module=path, origin=operator_name(node))
            node_values.setdefault(node.name, binding.var.name)
            pending = []
    for var in pending:              # the output tuple and what follows the last node
        infos[var] = BindingInfo(var.name, None, root, listing.source_line(root), "binding",
                                 module="")
    return infos, node_values


def _vars_in(out) -> list:
    from tvm import relax

    if isinstance(out, relax.Var):
        return [out]
    if isinstance(out, (list, tuple)):
        return [v for item in out for v in _vars_in(item)]
    return []


def _typed_type(sinfo):
    from tvm import relax

    if isinstance(sinfo, relax.TupleType):
        return T.TupleType(tuple(_typed_type(f) for f in sinfo.fields))
    shape = []
    for dim in sinfo.shape.values:
        value = getattr(dim, "value", None)
        shape.append(int(value) if value is not None else str(dim))
    return T.TensorType(tuple(shape), str(sinfo.dtype))
