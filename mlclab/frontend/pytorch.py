"""PyTorch modules -> Relax, remembering which module each binding came from.

``torch.export`` captures the module as an ATen graph (``torch_export``); TVM's
``from_exported_program`` translates that graph node by node, with mlclab's converter table
merged in (``torch_convert``), learning which Relax bindings each ATen node produced; the
node's PyTorch module path (``layer1.0.conv1``) comes from export's ``nn_module_stack``
(``module_tree``). The views group the graph by those paths; validation compares each node's
PyTorch value with its Relax value. Every index operand is then checked (``torch_indices``).

What a student typed that cannot be captured or translated is a ``ValueError`` naming the
PyTorch operator and the module path, never a TVM traceback.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lang import typed as T
from ..lang.typed import BindingInfo
from ..tvm_setup import tvm
from .module_tree import (ModuleLine, ModuleListing, function_name, module_path,  # noqa: F401
                          module_tree, operator_name, user_operator_name)
from .borrowed import Loans
from .torch_convert import RecordingImporter, check_convert_map
from .torch_export import BATCH, UnsupportedModel, batch_of_two, export  # noqa: F401
from .torch_indices import IndexCheck, guard_indices  # noqa: F401


@dataclass
class ImportedModel:
    """A PyTorch module translated to Relax, with what the views and validation need."""

    mod: Any                        # tvm.IRModule: the Relax function ``name`` (and callees)
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
    # Integer inputs that reach an index unchanged, checked in Python at each call
    index_checks: list = field(default_factory=list)
    # The large weights ``mod`` reads in PyTorch's memory (frontend.borrowed): the builds
    # from it own what they keep, and check that they are unchanged first
    loans: Loans = field(default_factory=Loans)


def import_module(module, example_args: tuple, *, dynamic_batch: bool = False,
                  params_as_inputs: bool = False, convert_map=None) -> ImportedModel:
    """Export ``module`` on ``example_args`` and translate it to Relax (weights as constants,
    or as extra inputs after the user's with ``params_as_inputs``). ``convert_map``: ATen
    overload name -> ``f(node, importer)``, over mlclab's and TVM's converters."""
    tvm()
    convert_map = check_convert_map(convert_map)
    listing = ModuleListing(module)
    if dynamic_batch:
        example_args = batch_of_two(example_args)
    exported = export(module, example_args, dynamic_batch)
    _check_mutations(exported, type(module).__name__)
    loans = Loans(f"the {type(module).__name__} module")
    recorder = RecordingImporter(listing, convert_map, loans)
    mod = recorder.translate(exported, params_as_inputs)
    name = function_name(type(module).__name__)
    paths = _input_paths(exported)
    bindings, node_values, operators = _binding_infos(mod["main"], recorder.results, listing,
                                                      paths)
    mod, bindings, operators = _renamed(mod, name, bindings, operators)
    mod, bindings, checks = guard_indices(
        mod, name, bindings, operators,
        lambda info: listing.where(info.module if info and info.module else ""))
    func = mod[name]
    params = [T.Param(p.name, typed_type(p.ty, "input"), listing.span(paths.get(p.name, "")))
              for p in func.params]
    weights = [target for arg, target in _weight_targets(exported).items()
               if arg in {p.name for p in func.params}]
    return ImportedModel(mod, name, params, typed_type(func.ret_ty, "output"), bindings,
                         listing.text, exported, node_values, weights, checks, loans)


class InputMutationWarning(UserWarning):
    """The model changes an input in place; the compiled function leaves its arguments as
    they are and returns what ``forward`` returns."""


def _check_mutations(exported, name: str) -> None:
    """A buffer changed in place is refused (compiled weights are constants, so the change
    would be lost between calls); an input changed in place is said: the compiled function
    does not write into its arguments, only what ``forward`` returns carries the change."""
    import warnings

    from torch.export.graph_signature import OutputKind

    specs = exported.graph_signature.output_specs
    buffers = [s.target for s in specs if s.kind == OutputKind.BUFFER_MUTATION]
    if buffers:
        raise UnsupportedModel(
            f"{name} changes its buffer {buffers[0]!r} in place (a cache kept in the module?); "
            f"mlclab compiles buffers as constants, so the change would be lost between calls: "
            f"pass that tensor to forward as an input and return its new value")
    inputs = [s.target for s in specs if s.kind == OutputKind.USER_INPUT_MUTATION]
    if inputs:
        warnings.warn(InputMutationWarning(
            f"{name} changes its input {inputs[0]!r} in place; the compiled function leaves "
            f"its arguments unchanged: use the values it returns (return the updated tensor "
            f"from forward)"), stacklevel=_outside_mlclab())


def _outside_mlclab() -> int:
    """The ``stacklevel`` of the first caller outside the mlclab package (the student's
    cell), however many of mlclab's wrappers lie between."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _renamed(mod, name: str, bindings: dict, operators: dict):
    """``mod`` with its function ``main`` called ``name`` (every other function kept:
    torch.cond's branches live beside it), and its symbolic sizes (torch calls them ``s0``,
    ``s31``...) called what they are: a dynamic batch is ``batch``. Renaming makes new
    variables, so ``bindings`` and ``operators`` are carried over to them, position by
    position (the structure does not change)."""
    from tvm import relax, tirx

    main = mod["main"]
    func = main.with_attr("global_symbol", name)
    sizes = [d for p in func.params[:1] for d in p.ty.shape.values[:1]
             if isinstance(d, tirx.Var)]
    if sizes:
        old = sizes[0]
        renamed = func.bind_symbolic_vars({old: tirx.Var(BATCH, "int64")})
        bounds = func.attrs.get("tir_var_lower_bound") if func.attrs is not None else None
        if bounds is not None and old.name in bounds:
            renamed = renamed.with_attr("tir_var_lower_bound", {BATCH: bounds[old.name]})
        pairs = list(zip(_all_vars(func), _all_vars(renamed)))
        bindings = {new: bindings[was] for was, new in pairs if was in bindings}
        operators = {new: operators[was] for was, new in pairs if was in operators}
        func = renamed
    funcs = {}
    for gv, f in mod.functions_items():
        if gv.name_hint == "main":
            funcs[relax.GlobalVar(name)] = func
        else:
            funcs[gv] = f
    return tvm().IRModule(funcs, attrs=mod.attrs), bindings, operators


def _all_vars(func) -> list:
    return list(func.params) + [b.var for block in func.body.blocks for b in block.bindings]


def _weight_targets(exported) -> dict:
    """Relax parameter name -> the state_dict name, for the module's parameters."""
    from torch.export.graph_signature import InputKind

    return {s.arg.name: s.target for s in exported.graph_signature.input_specs
            if s.kind == InputKind.PARAMETER}


def _input_paths(exported) -> dict:
    """Relax parameter name -> the module path that owns it ("" for the user's inputs)."""
    return {arg: target.rpartition(".")[0] for arg, target in _weight_targets(exported).items()}


def _binding_infos(func, results, listing, paths: dict):
    """relax.Var -> BindingInfo for the parameters and every binding of ``func``, each ATen
    node's value name, and relax.Var -> the ATen operator the model called for it.

    Translation is sequential: the bindings a node produced come after the previous node's
    value, up to and including its own. A value another node already produced (an alias such
    as ``dropout`` in eval mode) belongs to that first node.
    """
    owner: dict = {}                 # relax.Var -> the fx node whose value it is
    for node, out in results:
        for var in _vars_in(out):
            owner.setdefault(var, node)
    node_values: dict = {}
    operators: dict = {}
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
                operators[var] = user_operator_name(node)
            node_values.setdefault(node.name, binding.var.name)
            pending = []
    for var in pending:              # the output tuple and what follows the last node
        infos[var] = BindingInfo(var.name, None, root, listing.source_line(root), "binding",
                                 module="")
    return infos, node_values, operators


def _vars_in(out) -> list:
    from tvm import relax

    if isinstance(out, relax.Var):
        return [out]
    if isinstance(out, (list, tuple)):
        return [v for item in out for v in _vars_in(item)]
    return []


def typed_type(sinfo, what: str = "value"):
    """The typed-program type of a Relax type; an ``UnsupportedModel`` for what mlclab's
    calling convention cannot hold (an output of data-dependent shape, a ``None`` output)."""
    from tvm import relax

    if isinstance(sinfo, relax.TupleType):
        return T.TupleType(tuple(typed_type(f, what) for f in sinfo.fields))
    if not isinstance(sinfo, relax.TensorType):
        raise UnsupportedModel(
            f"the model's {what} is {sinfo} where mlclab needs tensors (a None or a Python "
            f"number among the outputs?): return only tensors from forward")
    if sinfo.shape is None or not hasattr(sinfo.shape, "values"):
        raise UnsupportedModel(
            f"the model's {what} has a shape that depends on the input values ({sinfo}; "
            f"torch.masked_select, nonzero and boolean-mask indexing do that): mlclab compiles "
            f"for shapes known from the input shapes; use torch.where with a fill value instead")
    shape = []
    for dim in sinfo.shape.values:
        value = getattr(dim, "value", None)
        shape.append(int(value) if value is not None else str(dim))
    return T.TensorType(tuple(shape), str(sinfo.dtype))
