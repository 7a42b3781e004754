"""The targets mlclab can build for and run on, one registration each.

A target is what a student passes as ``target=`` (``"llvm"``, a dict or JSON text such as
``{"kind": "llvm", "mcpu": "znver3"}``, or a ``tvm.target.Target``).  Each registered
``Backend`` says how such a value becomes a ``tvm.target.Target``, which Relax passes
(and so which schedules) build for it, and on which device the result runs.  Anything not
registered -- a GPU (``cuda``, ``opencl``, ``vulkan``, ...), C source, code for another
CPU -- is refused here, before any work, with the reason: TVM would compile most of them
and then fail inside its runtime at the first call, far from the mistake.

Today one backend exists, ``llvm`` (this machine's CPU).  Adding one is a ``Backend`` plus
``register``; ``resolve_target`` and ``build_passes`` (mlclab.backend.passes) pick it up.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Callable

# TVM target kinds that name real hardware mlclab does not drive, and why a student
# can't use them here.  Anything else unregistered is simply unknown.
NOT_HERE = {
    "cuda": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "rocm": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "opencl": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "vulkan": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "metal": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "webgpu": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "nvptx": "a GPU target, and mlclab runs compiled code on this machine's CPU only",
    "c": "C source for another toolchain, which mlclab can't load and run",
    "hexagon": "a DSP target, and mlclab runs compiled code on this machine's CPU only",
}


@dataclass(frozen=True)
class Backend:
    """One target mlclab can build for and run on."""

    kind: str  # the ``kind`` of its TVM targets, and the name a student types
    description: str
    # (user's target as a dict) -> tvm.target.Target; raises ValueError naming ``target``.
    resolve: Callable
    # (tvm.target.Target, optimized, fast_math) -> the ordered Relax passes of the build.
    passes: Callable
    # () -> the tvm.runtime.Device its code runs on.
    device: Callable


BACKENDS: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    BACKENDS[backend.kind] = backend
    return backend


def backend_for(target) -> Backend:
    """The registered backend of a resolved ``tvm.target.Target``."""
    return BACKENDS[str(target.kind.name)]


def device_for(target="llvm"):
    """The ``tvm.runtime.Device`` that code built for ``target`` runs on (its backend's)."""
    return backend_for(resolve_target(target)).device()


def resolve_target(target="llvm"):
    """The ``tvm.target.Target`` for a user's ``target``, or a ValueError (TypeError for a
    value of the wrong type) naming the parameter and why it can't be used."""
    import tvm

    if isinstance(target, tvm.target.Target):
        spec = dict(target.export())
        _backend(spec, target)
        _check_runs_here(spec, target)
        return target
    if isinstance(target, str):
        return _named_target(target)
    if isinstance(target, dict):
        return _from_dict(dict(target), target)
    raise TypeError(f"target must be \"llvm\", a dict such as {{\"kind\": \"llvm\"}} or a "
                    f"tvm.target.Target, got {type(target).__name__}")


@functools.cache
def _named_target(text: str):
    """Strings are resolved once per process (``"llvm"`` asks LLVM about the host)."""
    if text.strip().startswith("{"):
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"target: {text!r} is not valid JSON ({err})") from None
        return _from_dict(spec, text)
    return _from_dict({"kind": text.strip()}, text)


def _from_dict(spec: dict, original):
    if not isinstance(spec.get("kind"), str):
        raise ValueError(f"target: {original!r} needs a \"kind\", such as {{\"kind\": \"llvm\"}}")
    backend = _backend(spec, original)
    return backend.resolve(spec, original)


def _backend(spec: dict, original) -> Backend:
    kind = str(spec["kind"])
    if " " in kind or kind.startswith("-"):
        raise ValueError(f"target: {original!r}: options go in a dict, as in "
                         f"{{\"kind\": \"llvm\", \"mcpu\": \"znver3\"}} (TVM no longer reads "
                         f"\"llvm -mcpu=...\")")
    if kind in BACKENDS:
        return BACKENDS[kind]
    reason = NOT_HERE.get(kind, "not a target mlclab knows")
    raise ValueError(f"target: {original!r} is {reason}; use "
                     f"{' or '.join(repr(k) for k in BACKENDS)}")


def _check_runs_here(spec: dict, original) -> None:
    """Refuse a triple (``mtriple``) for another architecture: its code can't run here."""
    from tvm.target import codegen

    triple, host = spec.get("mtriple"), str(codegen.llvm_get_system_triple())
    if triple and str(triple).split("-")[0] != host.split("-")[0]:
        raise ValueError(f"target: {original!r} builds for {triple}, and code for another "
                         f"CPU can't run on this {host} machine")


# ------------------------------------------------------------------------------ llvm (CPU)
def _resolve_llvm(spec: dict, original):
    """Plain ``"llvm"`` means *this* CPU: TVM's default llvm target is generic x86-64 (SSE2,
    4-wide float vectors, no FMA), which leaves most of an AVX2/AVX-512 core unused.
    ``mcpu="native"`` is rejected by this LLVM build, so the host CPU is named explicitly.
    With FMA available LLVM contracts ``a*b+c`` into one rounding, so results may differ
    from numpy's two roundings by about 1e-6 absolute; ``{"kind": "llvm"}`` keeps the
    generic target for anyone who needs bit-for-bit numpy elementwise results."""
    import tvm
    from tvm.target import codegen

    _check_runs_here(spec, original)
    mcpu = spec.get("mcpu")
    if mcpu is not None:
        triple = str(spec.get("mtriple") or codegen.llvm_get_system_triple())
        if not isinstance(mcpu, str) or not codegen.llvm_is_valid_cpu(mcpu, triple):
            raise ValueError(f"target: {original!r}: {mcpu!r} is not a CPU LLVM knows; "
                             f"this machine is {host_cpu() or 'generic'}")
    if original == "llvm":
        cpu = host_cpu()
        spec = {"kind": "llvm", "mcpu": cpu} if cpu else spec
    try:
        return tvm.target.Target(spec)
    except Exception as exc:  # an unknown option: TVM's reason, our parameter name
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"target: {original!r} is not a valid llvm target ({first})") from None


@functools.cache
def host_cpu():
    """LLVM's name for this machine's CPU (e.g. ``"znver3"``), or None if LLVM can't tell."""
    from tvm.target import codegen

    try:
        cpu = str(codegen.llvm_get_system_cpu())
        triple = str(codegen.llvm_get_system_triple())
        if cpu and cpu != "generic" and codegen.llvm_is_valid_cpu(cpu, triple):
            return cpu
    except Exception:  # an LLVM without these queries: stay generic, which is always valid
        pass
    return None


def _llvm_passes(target, optimized: bool, fast_math: bool = False) -> list:
    """TVM's fusing CPU pipeline (``tvm.compile(mod, "llvm")`` alone does not fuse on CPU)
    with mlclab's additions: transpose folding, batch-norm folding and the blocked
    convolution layout before it, and CPU schedules after FuseTIR.
    ``optimized=False`` is TVM's own pipeline, which the build falls back to when the
    optimized one fails, so a bug in mlclab's passes costs speed, never a program.
    ``fast_math=False`` (strict) lowers arithmetic and comparisons so that neither TVM's
    simplifier nor LLVM changes an answer (ops/strict.py); ``True`` leaves them to TVM."""
    from tvm import relax
    from tvm.relax.backend import cpu_generic
    from tvm.relax.backend.cpu_generic.pipeline import dataflow_lower_passes

    from .alignment import relax_param_alignment
    from .concat import fuse_concat_norm_relu
    from .conv_layout import block_conv_layout
    from .empty_constants import make_empty_constants_at_run_time
    from .extra_passes import active as extra_passes
    from .fold_batchnorm import fold_batchnorm
    from .fold_kernels import fold_constants
    from .join_conv import read_join_parts
    from .own_constants import own_constants
    from .passed_asserts import drop_passed_asserts
    from .pack_weights import pack_weights
    from .record import own_pass
    from .schedules import schedule_cpu, vector_lanes

    legalize = _legalize_passes(target, optimized, fast_math)
    if optimized:
        # mlclab's own passes, and TVM's it configures, are guarded: one that fails is
        # skipped (or TVM's own runs instead) and the build goes on, recording it.
        plain = {p.info.name: p for p in _legalize_passes(target, False, fast_math)}
        # FoldConstant builds one LLVM module per constant kernel; mlclab's builds one for
        # them all, then runs TVM's on what is left (fold_kernels.py).
        ours = {"FuseOps": _bounded_fuse_ops(), "FoldConstant": fold_constants()}
        legalize = [own_pass(ours.get(p.info.name, p), plain[p.info.name])
                    if p.info.name in ("LegalizeOps", "FoldConstant", "FuseOps") else p
                    for p in legalize]
    def mlclab(p) -> list:   # an addition of mlclab's: in the optimized pipeline only, guarded
        return [own_pass(p)] if optimized else []

    return [
        # Constant matmul weights (a model's linear layers) packed into column panels
        # once, here, instead of in the kernel on every call (see pack_weights.py).
        *mlclab(pack_weights(vector_lanes(target))),
        # x @ w.T as one matmul kernel (linear's transpose folded in), which the CPU
        # schedules pack panel by panel instead of running a separate transpose.
        *mlclab(relax.transform.FuseTransposeMatmul()),
        *cpu_generic.library_dispatch_passes(target),
        # Inference batch norms folded into their convolutions' weights and a bias.
        *mlclab(fold_batchnorm()),
        # Convolutions in the NCHW[x]c layout, with their constant weights re-laid out
        # once here (see conv_layout.py).
        *mlclab(block_conv_layout(vector_lanes(target))),
        # A blocked concatenation followed by a folded batch norm and a ReLU (DenseNet's
        # layers) as one kernel, without the copy in between (see concat.py).
        *mlclab(fuse_concat_norm_relu(fast_math)),
        # A convolution reading a join reads the join's parts, without the copy in between
        # (SqueezeNet's Fire modules; see join_conv.py).
        *mlclab(read_join_parts()),
        # the user's own graph rewrites (mlclab.extra_passes), in both pipelines, guarded
        *[own_pass(p) for p in extra_passes()],
        *legalize,
        *mlclab(schedule_cpu(target)),
        # index checks whose condition folding made a constant true (position ids from
        # arange): none left for the VM to call back into Python for (passed_asserts.py)
        *mlclab(drop_passed_asserts),
        *dataflow_lower_passes(target),
        # in both pipelines: TVM's VM cannot load an empty constant back
        make_empty_constants_at_run_time,
        # in both pipelines: an imported model's weights read in PyTorch's memory are
        # copied where the executable keeps them as they are (own_constants.py)
        own_constants,
        *cpu_generic.finalize_passes(target),
        # last, after every pass that makes kernels: kernels that read numpy's
        # 16-byte-aligned arrays in place (see alignment.py)
        own_pass(relax_param_alignment()),
    ]


def _legalize_passes(target, optimized: bool = False, fast_math: bool = False) -> list:
    """TVM's CPU legalization, with the operator table's numpy-faithful lowerings (relu
    keeps NaN) in place of TVM's own -- in both pipelines, as they are about results --
    and the strict arithmetic unless ``fast_math``; in the optimized pipeline, also the
    lowering of blocked-layout convolutions."""
    from tvm import relax
    from tvm.relax.backend import cpu_generic

    from ..ops.lowering import LEGALIZE
    from ..ops.strict import STRICT
    from .blocked_pool import legalize_avg_pool2d, legalize_max_pool2d
    from .concat import legalize_concat
    from .conv_layout import legalize_conv2d
    from .fast_math import (legalize_gelu, legalize_sigmoid, legalize_silu, legalize_softmax,
                            legalize_tanh, legalize_gelu_tanh)
    from .power import legalize_power

    first, *rest = cpu_generic.legalize_passes(target)
    assert first.info.name == "LegalizeOps", first.info.name
    blocked = {"relax.nn.conv2d": legalize_conv2d, "relax.nn.max_pool2d": legalize_max_pool2d,
               "relax.nn.avg_pool2d": legalize_avg_pool2d,
               # a vectorizable erf and exp (fast_math.py)
               "relax.nn.gelu": legalize_gelu, "relax.nn.softmax": legalize_softmax,
               "relax.sigmoid": legalize_sigmoid, "relax.nn.silu": legalize_silu,
               "relax.tanh": legalize_tanh, "relax.nn.gelu_tanh": legalize_gelu_tanh,
               # one copy per input, not a choice per element (concat.py)
               "relax.concat": legalize_concat,
               # x ** 2 and x ** 3 as vector multiplications, not powf calls (power.py)
               "relax.power": legalize_power}
    rules = {**LEGALIZE, **blocked} if optimized else dict(LEGALIZE)
    if not fast_math:
        rules = {**STRICT, **rules}
    return [relax.transform.LegalizeOps(customize_legalize_map=rules), *rest]


# The most operators FuseOps puts in one fused function when mlclab schedules them (TVM's
# default is 256).  Each schedule primitive rewrites its whole function, so scheduling a
# function of n blocks costs about n**2: a chain of 400 ``h = tanh(h * 0.9 + 0.1)``
# (1,200 operators) compiled in 34 s in functions of 256, 2.5 s in functions of 32 (3.4 s
# of 64; 2 loaded cores).  A cut every 32 operators stores one intermediate per 32, which
# no kernel of the benchmarks or lessons notices (none has 32 operators in a chain).
FUSE_MAX_DEPTH = 32


def _bounded_fuse_ops():
    """TVM's FuseOps, with at most ``FUSE_MAX_DEPTH`` operators per fused function."""
    import tvm
    from tvm import relax

    @tvm.transform.module_pass(opt_level=0, name="FuseOps")
    def fuse_ops(mod, ctx):
        config = {**ctx.config, "relax.FuseOps.max_depth": FUSE_MAX_DEPTH}
        with tvm.transform.PassContext(opt_level=ctx.opt_level, config=config):
            return relax.transform.FuseOps()(mod)

    return fuse_ops


def _cpu():
    import tvm

    return tvm.cpu(0)


register(Backend(kind="llvm", description="this machine's CPU, through LLVM",
                 resolve=_resolve_llvm, passes=_llvm_passes, device=_cpu))
