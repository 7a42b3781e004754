"""``mlclab.from_torch``: a PyTorch module compiled through mlclab's pipeline and used like a
DSL function -- called with numpy arrays or CPU tensors, shown in every view, validated
against the module itself.

mlclab compiles inference: the module is exported, and run as the reference, in eval mode
(its own mode is put back afterwards), without gradients.
"""
from __future__ import annotations

import contextlib
import gc
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import give_back_memory
from ..tvm_setup import holding_ir_lock
from .build import Built, check_target
from .errors import boundary, from_user_code
from .function import CompiledFunction
from .program import Program


@boundary("importing a PyTorch model")
@holding_ir_lock   # torch.export and TVM's builders are process-wide (tvm_setup.IR_LOCK)
def from_torch(module, *example_args, dynamic_batch: bool = False,
               params_as_inputs: bool = False, target="llvm",
               convert_map=None, fast_math: bool = False) -> "TorchFunction":
    """Compile the PyTorch ``module`` for inputs like ``example_args`` (tensors or arrays).

    ``torch.export`` captures it, TVM's ``from_exported_program`` translates it to Relax, and
    mlclab's own pipeline compiles it, as for a DSL program. ``dynamic_batch=True`` leaves
    dimension 0 of every input symbolic (``batch``); examples with a batch of 1 are fine
    (export sees them repeated to 2: torch.export fixes a size of 1). Weights become
    constants the compiled code owns -- packed, re-laid out or copied while it is built, never
    copied before (training the module afterwards does not change it; ``validate`` then says
    the module changed) -- ``params_as_inputs=True`` makes them extra inputs after the user's.
    ``convert_map`` maps ATen overload names (``"selu.default"``) to ``f(node, importer)``,
    TVM's ``custom_convert_map`` convention, used before mlclab's and TVM's own converters.
    ``fast_math=True`` lets TVM and LLVM rewrite float arithmetic, as ``mlclab.compile``'s.

    What torch.export cannot capture or TVM cannot translate is a ``ValueError`` that names
    the PyTorch operator and the module path -- or, when the module fails in PyTorch itself on
    the examples, PyTorch's own error.
    """
    torch = _torch()
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch(): module must be a torch.nn.Module, got "
                        f"{type(module).__name__}")
    if not example_args:
        raise TypeError("from_torch(): pass example inputs after the module, e.g. "
                        "from_torch(model, torch.randn(1, 3, 224, 224)); their shapes and "
                        "dtypes are the compiled function's")
    for flag, value in (("dynamic_batch", dynamic_batch), ("params_as_inputs", params_as_inputs),
                        ("fast_math", fast_math)):
        if not isinstance(value, bool):
            raise TypeError(f"from_torch(): {flag} must be True or False, got {value!r}")
    tensors = tuple(_example_tensor(torch, a, i) for i, a in enumerate(example_args))
    if dynamic_batch and any(t.ndim == 0 for t in tensors):
        raise ValueError("from_torch(): dynamic_batch=True needs every example input to have a "
                         "batch dimension (dimension 0)")
    check_target(target)

    from ..backend.trace import traced_module
    from ..backend.tvm_log import quiet
    from ..frontend.pytorch import UnsupportedModel, import_module
    from .torch_build import build_imported

    with eval_mode(module), quiet():
        try:
            imported = import_module(module, tensors, dynamic_batch=dynamic_batch,
                                     params_as_inputs=params_as_inputs, convert_map=convert_map)
        except UnsupportedModel as exc:
            # TVM's half-built function warns on stderr when it is freed: free it in here.
            exc.__context__ = None
            gc.collect()
            raise (_refused_by_torch(module, tensors) or exc).with_traceback(None) from None
    mod = imported.mod
    try:
        built = build_imported(mod, imported.name, imported.bindings, target,
                               lambda name: _Traced(traced_module(mod, name)), fast_math,
                               imported.loans)
    except UnsupportedModel as exc:
        with eval_mode(module):
            refused = _refused_by_torch(module, tensors)
        raise (refused or exc).with_traceback(None) from None
    program = TorchProgram(imported, module, target, built)
    give_back_memory()      # torch.export's and the build's intermediates
    return program[imported.name]


def _refused_by_torch(module, tensors):
    """An ``UnsupportedModel`` quoting PyTorch's own error when the module cannot run on the
    examples either (float inputs to a bitwise operator, an index out of range, shapes that do
    not broadcast): that, not TVM's check on the same mistake, is what the student must fix.
    None when PyTorch runs it (or the module cannot be copied). Asked only after TVM failed;
    the module is already in eval mode. A copy runs, so a forward that writes its buffers (a
    KV cache) or attributes leaves the student's module as it was."""
    from ..frontend.pytorch import UnsupportedModel

    try:
        copy = deepcopy(module)
    except Exception:                       # noqa: BLE001 - then TVM's reason stands
        return None
    try:
        copy(*(t.clone() for t in tensors))
    except Exception as exc:                # noqa: BLE001 - any refusal is PyTorch's answer
        message = str(exc).strip().split("\n")[0]
        return UnsupportedModel(
            f"from_torch(): the module's forward fails in PyTorch itself on these example "
            f"inputs ({type(exc).__name__}: {message}); pass example inputs it runs on")
    return None


def _torch():
    try:
        import torch
    except ModuleNotFoundError:
        raise ImportError("from_torch() needs PyTorch: pip install 'mlclab[torch]'") from None
    return torch


def _example_tensor(torch, value, index: int):
    if isinstance(value, np.ndarray):
        # np.asarray keeps a 0-d example 0-d (np.ascontiguousarray would make it shape (1,)).
        value = torch.from_numpy(np.asarray(value, order="C"))
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"from_torch(): example_args[{index}] must be a torch.Tensor or a numpy "
                        f"array, got {type(value).__name__}")
    if value.device.type != "cpu":
        raise ValueError(f"from_torch(): example_args[{index}] is on {value.device}; mlclab "
                         f"compiles for this CPU, pass a CPU tensor (.cpu())")
    if value.layout != torch.strided:
        raise ValueError(f"from_torch(): example_args[{index}] is a sparse tensor "
                         f"({value.layout}); the compiled function takes dense arrays: pass "
                         f"x.to_dense() and make forward take a dense tensor")
    if value.dtype in (torch.bfloat16,) or not _numpy_has(torch, value.dtype):
        raise ValueError(f"from_torch(): example_args[{index}] is {value.dtype}, which numpy "
                         f"cannot hold, so the compiled function could not be called with it: "
                         f"convert the model and its inputs, e.g. model.float() and x.float()")
    return value.detach()


def _numpy_has(torch, dtype) -> bool:
    try:
        torch.empty(0, dtype=dtype).numpy()
    except (TypeError, RuntimeError):
        return False
    return True


@contextlib.contextmanager
def eval_mode(module):
    """``module`` in eval mode, without gradients, for the duration; its modes restored."""
    import torch

    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        with torch.no_grad():
            yield module
    finally:
        for m, training in modes:
            m.training = training


@dataclass
class _Traced:
    mod: Any      # the module whose function also returns its top-level bindings


_PICKLE_INSTEAD = "save the PyTorch module (torch.save) and call mlclab.from_torch again"


@dataclass(frozen=True)
class Signature:
    """An imported function's interface: what calling it checks. There is no typed body:
    the reference is PyTorch, and sizes are read from the Relax types (:class:`RelaxSizes`)."""

    name: str
    params: list
    ret_type: Any


@dataclass(frozen=True)
class Signatures:
    """What a ``Program`` reads of its typed program, for an imported model: its one
    function's signature, and the module tree as the source."""

    functions: dict
    source: str
    filename: str


class TorchProgram(Program):
    """The one function an imported PyTorch module became, with the module kept as reference."""

    pickle_instead = _PICKLE_INSTEAD

    def __init__(self, imported, module, target, built: Built):
        signature = Signature(imported.name, list(imported.params), imported.ret_type)
        filename = f"<{type(module).__name__}: PyTorch module tree>"
        super().__init__(Signatures({imported.name: signature}, imported.listing, filename),
                         target, built)
        self.imported = imported
        self.module = module
        self.sizes = RelaxSizes(imported.mod[imported.name], imported.params)

    def renamed(self, filename: str, source: str) -> "TorchProgram":
        return self

    def __repr__(self):
        return f"<mlclab.TorchProgram {self.imported.name} ({self.target})>"


class RelaxSizes:
    """Each operator's bytes (its result and the tensor arguments that are not constants)
    as functions of the symbolic sizes, read once from the Relax types: the memory guard of
    an imported model, whose dynamic batch can ask for more than the machine has.  The
    constants (the weights) are not counted: the process holds them already, and counting
    GPT-2's 154 MB embedding table made every call of its decoding step read
    ``/proc/meminfo`` (``shapes.check_memory``)."""

    def __init__(self, func, params):
        from tvm import relax

        from ..backend.relax_exprs import is_constant

        self.steps: list = []          # [(dims, itemsize) of each tensor an operator touches]
        for block in func.body.blocks:
            for b in block.bindings:
                if not isinstance(b.value, relax.Call):
                    continue
                tensors = _tensor_types(b.var.ty)
                for arg in b.value.args:
                    if not is_constant(arg):
                        tensors += _tensor_types(getattr(arg, "ty", None))
                self.steps.append([(tuple(_dim(d) for d in t.shape.values),
                                    np.dtype(str(t.dtype)).itemsize if str(t.dtype) != "bool"
                                    else 1) for t in tensors if t.shape is not None
                                   and hasattr(t.shape, "values")])

    def need(self, sizes: dict) -> int:
        from ..lang import dims as D

        peak = 0
        for tensors in self.steps:
            total = 0
            for shape, itemsize in tensors:
                count = 1
                for d in shape:
                    count *= d if isinstance(d, int) else max(D.evaluate(d, sizes), 0)
                total += count * itemsize
            peak = max(peak, total)
        return peak


def _tensor_types(ty) -> list:
    from tvm import relax

    if isinstance(ty, relax.TensorType):
        return [ty]
    if isinstance(ty, relax.TupleType):
        return [t for f in ty.fields for t in _tensor_types(f)]
    return []


def _dim(d):
    from ..lang import dims as D

    value = getattr(d, "value", None)
    return int(value) if value is not None else D.parse(str(d))


class TorchFunction(CompiledFunction):
    """A PyTorch module compiled by mlclab: a ``CompiledFunction`` whose reference is PyTorch.

    ``fn.source`` is the module tree, one line per submodule; each binding's ``BindingInfo``
    names the module path that computed it (``fn.bindings[v].module``) and its ATen operator.
    """

    pickle_instead = _PICKLE_INSTEAD

    def __init__(self, program, name: str):
        super().__init__(program, name)
        checks = [c for c in program.imported.index_checks if not c.computed]
        if checks:
            self._value_check = _index_check(checks, [p.name for p in self.typed.params])

    def size_need(self, sizes: dict, origins: dict) -> int:
        """The bytes the largest operator needs for ``sizes`` (the batch), from the Relax
        types; torch.export has checked the sizes fit (every dimension is >= 0)."""
        return self.program.sizes.need(sizes)

    @property
    def module(self):
        """The PyTorch module this was compiled from (the reference)."""
        return self.program.module

    @property
    def reference_name(self) -> str:
        return f"PyTorch {type(self.module).__name__} (eval mode)"

    def __repr__(self):
        return f"<mlclab model {self.signature()}, from PyTorch>"

    def input_ranges(self) -> dict:
        """Inputs used as indices: name -> the (0, size) validate draws them from; an index
        computed from an input (``ids + 1``) draws that input from the lower half, so that
        the PyTorch reference, which refuses a bad index too, accepts it."""
        ranges: dict = {}
        for check in self.program.imported.index_checks:
            name = self.typed.params[check.param].name
            high = max(1, check.size // 2) if check.computed else check.size
            ranges[name] = (0, min(high, ranges.get(name, (0, high))[1]))
        return ranges

    def _split(self, arrays) -> tuple[list, dict]:
        """The user's inputs as tensors, and (with ``params_as_inputs``) the weights passed
        after them, by their state_dict names."""
        names = self.program.imported.weights
        tensors = _tensors(arrays)
        cut = len(tensors) - len(names)
        return tensors[:cut], dict(zip(names, tensors[cut:]))

    @boundary(lambda self, *args: f"running the PyTorch reference of {self.name}")
    def reference(self, *args):
        """The PyTorch module run on the same inputs (eval mode, no gradients), as numpy."""
        arrays = self.check_args(args, f"{self.name}.reference")
        torch = _torch()
        inputs, weights = self._split(arrays)
        with eval_mode(self.module) as module:
            try:
                if weights:
                    out = torch.func.functional_call(module, weights, tuple(inputs))
                else:
                    out = module(*inputs)
            except Exception as exc:     # the model's own refusal (a bad index): as it is
                raise from_user_code(exc)
        values = _flat_numpy(out)
        return values[0] if len(values) == 1 else tuple(values)

    def trace(self, *args) -> dict:
        """TVM's value of every top-level binding (``CompiledFunction.trace``); where TVM
        cannot compile the build that returns them all, a ``NotImplementedError`` naming the
        operator (``validate`` then compares outputs only, and says so)."""
        from ..lang.diagnostics import DSLError
        from .torch_build import traced_failure

        try:
            return super().trace(*args)
        except DSLError as exc:
            from ..backend.trace import traced_module

            traced = traced_module(self.program.mod, self.name)
            raise traced_failure(exc, traced, self.name, self.program.built.bindings[self.name],
                                 self.target) from None

    @boundary(lambda self, *args, **kw: f"tracing the PyTorch reference of {self.name}")
    def reference_trace(self, *args, each=None) -> dict:
        """PyTorch's value of every ATen node, keyed by the Relax binding that holds it; or,
        with ``each``, each handed to ``each(name, value)`` as it is computed, none kept."""
        import torch
        from torch.export.graph_signature import InputKind

        arrays = self.check_args(args, f"{self.name}.reference_trace")
        imported = self.program.imported
        exported = imported.exported
        user, weights = self._split(arrays)
        user = iter(user)
        state = {**exported.state_dict, **exported.constants, **weights}
        inputs = [next(user) if spec.kind == InputKind.USER_INPUT else state[spec.target]
                  for spec in exported.graph_signature.input_specs]
        values: dict = {}
        wanted = imported.node_values

        class Recorder(torch.fx.Interpreter):
            def run_node(self, node):
                out = super().run_node(node)
                if node.name in wanted and isinstance(out, torch.Tensor):
                    if each is None:
                        values[wanted[node.name]] = out.detach().numpy().copy()
                    else:   # compared at once, before anything can write into it
                        each(wanted[node.name], out.detach().numpy())
                return out

        with torch.no_grad():
            Recorder(exported.graph_module).run(*inputs)
        return {k: values[k] for k in self._trace_names() if k in values}


def _index_check(checks: list, names: list):
    """A value check (``CompiledFunction._value_check``) of the inputs used as indices: each
    inside its table, as PyTorch checks it; TVM's lookup would read outside the table."""

    def check(arrays, caller: str) -> None:
        for c in checks:
            c.refuse(np.asarray(arrays[c.param]), names[c.param], caller)

    return check


def _tensors(arrays) -> list:
    import torch

    # Own copies: PyTorch must not write into (or keep) the caller's arrays.
    return [torch.from_numpy(np.array(a)) for a in arrays]


# (TorchProgram is defined first: from_torch reads top-down, program then function.)
TorchProgram.function_class = TorchFunction


def _flat_numpy(out) -> list:
    """The module's output as the arrays the compiled function returns, flattened as
    ``torch.export`` flattens it: by torch's pytree, which knows tuples, lists, dicts and
    what libraries register (a transformers ``ModelOutput``, its ``DynamicCache``:
    ``frontend.transformers_compat``)."""
    import torch
    from torch.utils import _pytree

    values = []
    for leaf in _pytree.tree_leaves(out):
        if isinstance(leaf, torch.Tensor):
            values.append(leaf.detach().numpy().copy())
        elif isinstance(leaf, (bool, int, float)):   # x.item(): the compiled model's 0-d array
            values.append(np.asarray(leaf))
        else:
            raise TypeError(f"the PyTorch module returned {type(leaf).__name__} (in its "
                            f"{type(out).__name__} output), not tensors")
    return values
