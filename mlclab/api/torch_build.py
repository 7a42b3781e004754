"""Compiling an imported model, and saying which PyTorch operator TVM could not compile.

A DSL program that passed mlclab's checks and fails in TVM is an mlclab bug, reported at its
line. An imported model has no line: when TVM cannot compile it, each distinct operator call
prefix is compiled, by bisection, until the binding that makes it fail is found, and the error
names its ATen operator and module path, as translation errors do.
"""
from __future__ import annotations

from ..frontend.pytorch import UnsupportedModel
from ..lang.diagnostics import DSLError
from ..tvm_setup import tvm
from .build import Built, build_executable

# An imported model is stored on disk only up to this much of weights: TVM's export packs the
# executable into the library through LLVM, a transient of two to three times the weights
# (lesson 13's GPT-2-shaped model, 366 MB: a student's server and kernel reached 3.6 GB by their
# high-water marks, the kernel 1.9 GB without), and the entry would be most of the cache's
# 512 MB. ResNet-18 (45 MB) and smaller are stored.
MAX_STORED_WEIGHTS = 64 * 2**20

# Bisection steps at most (each compiles a prefix of the model; a failure is the only time
# this runs).
_MAX_TRIES = 40


def build_imported(mod, name: str, bindings: dict, target, trace,
                   fast_math: bool = False, loans=None) -> Built:
    """``Built`` for the imported function ``name`` -- loaded from the disk cache when this
    module (its IR and its weights' bytes) was built before for ``target`` -- or an
    :class:`UnsupportedModel` naming the operator TVM could not compile."""
    try:
        return Built(mod, {name: bindings}, target, trace, fast_math,
                     _stored(mod, target, fast_math), loans)
    except DSLError as exc:
        reason = str(exc).partition("TVM could not compile this program: ")[2] or str(exc)
        reason = reason.split("\n")[0]
        culprit = _failing_binding(mod[name], bindings, target)
    if culprit is None:
        raise UnsupportedModel(f"TVM could not compile this model: {reason}") from None
    where = f"in {culprit.module} ({culprit.source_line.strip()})" if culprit.module else \
        "in the model's own forward"
    raise UnsupportedModel(f"TVM could not compile PyTorch operator {culprit.origin or 'a step'} "
                           f"{where}: {reason}") from None


def _stored(mod, target, fast_math: bool):
    """The model's place in the disk cache (``api.cache``), or None when the build may not
    be shared: user passes in the pipeline, or a student's own operator in the table (as for
    ``mlclab.compile``)."""
    from .. import ops
    from ..backend import extra_passes
    from . import cache

    if extra_passes.active() or any(not op.built_in for op in ops.OPS.values()):
        return None
    if not cache.LEVELS.ready().user and not cache.LEVELS.shared:
        return None                   # off: not even the key's hashing is spent
    options = {"from": "torch", **({"fast_math": True} if fast_math else {})}
    try:
        constants = cache.module_constants(mod)
    except Exception as exc:     # a constant numpy cannot hold: built, just not kept on disk
        return _not_stored(f"a constant numpy cannot hold ({type(exc).__name__}: {exc})")
    weights = sum(item[1].nbytes for item in constants if not isinstance(item, str))
    if weights > MAX_STORED_WEIGHTS:
        return _not_stored(f"{weights / 2**20:.0f} MB of weights, over the "
                           f"{MAX_STORED_WEIGHTS / 2**20:.0f} MB stored")
    text = cache.module_text(mod, constants)
    return cache.Stored(cache.key(text, target, options, ops.generation()))


def _not_stored(reason: str) -> None:
    from . import cache

    cache.NOT_STORED["models"] += 1
    cache.NOT_STORED["reason"] = reason
    return None


def traced_failure(exc: DSLError, traced_mod, name: str, bindings: dict, target):
    """The error for a layer-by-layer (traced) build TVM could not compile
    though the model itself compiled: the culprit named as :func:`build_imported` names it."""
    reason = (str(exc).partition("TVM could not compile this program: ")[2] or str(exc))
    by_name = {var.name: info for var, info in bindings.items()}
    func = traced_mod[name]
    infos = {b.var: by_name.get(b.var.name) for block in func.body.blocks for b in block.bindings}
    culprit = _failing_binding(func, infos, target)
    step = f"PyTorch operator {culprit.origin} in {culprit.module or 'the forward'}" \
        if culprit is not None and culprit.origin else "one of its operators"
    # NotImplementedError: validate then compares the outputs only, and its report says why.
    return NotImplementedError(f"TVM could not compile {name} layer by layer (the build that "
                               f"returns every value) at {step}: {reason.splitlines()[0]}; the "
                               f"model itself compiled and runs")


def _failing_binding(func, bindings: dict, target):
    """The ``BindingInfo`` of the binding of ``func`` whose addition makes it fail to compile
    (the shortest failing prefix, found by bisection: ~log2(bindings) compiles), or None.
    Alone, an operator often compiles: TVM fails on it fused with its neighbours."""
    from tvm import relax

    plain = relax.transform.ToNonDataflow()(tvm().IRModule({"main": func}))["main"]
    flat = [b for block in plain.body.blocks for b in block.bindings]
    originals = [b.var for block in func.body.blocks for b in block.bindings]

    def fails(count: int) -> bool:
        prefix = flat[:count]
        values = [b.var for b in prefix if isinstance(b.var.ty, relax.TensorType)]
        body = relax.SeqExpr([relax.BindingBlock(prefix)], relax.Tuple(values))
        part = relax.Function(plain.params, body, relax.TupleType([v.ty for v in values]),
                              plain.is_pure, plain.attrs)
        try:
            module = relax.transform.ConvertToDataflow(min_size=1)(tvm().IRModule({"main": part}))
            build_executable(relax.transform.Normalize()(module), target)
        except DSLError:
            return True
        except Exception:          # a prefix TVM cannot even form: no evidence either way
            return False
        return False

    low, high = 0, len(flat)          # a prefix of `low` bindings compiles; of `high`, not
    if not fails(high):
        return None
    for _ in range(_MAX_TRIES):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        low, high = (low, middle) if fails(middle) else (middle, high)
    return bindings.get(originals[high - 1])
