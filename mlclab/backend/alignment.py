"""Kernels that read their arguments wherever numpy put them.

TVM declares every PrimFunc parameter 64-byte aligned (``data_alignment`` in the buffer's
type), and MakePackedAPI turns that into a ``storage_alignment`` hint from which LLVM emits
aligned vector moves (``vmovaps``): a 16-byte-aligned numpy array -- which is how numpy
allocates most large arrays -- then crashes the process, so every such input had to be
copied into an aligned staging buffer first (8 ms of a 2048^2 fused chain's 9 ms).

``relax_param_alignment`` declares each parameter aligned only to its element size instead.
LLVM then emits unaligned vector moves (``vmovups``), which cost nothing extra on x86 cores
since Nehalem when the data happens to be aligned and one extra cycle per cache-line split
when it is not, and any C-contiguous array of the right dtype can be read in place.  Buffers
TVM allocates itself (intermediates, packed panels, results) stay 64-byte aligned.

This TIR has no Python statement mutator and ``PrimFunc.specialize`` refuses a different
alignment, so the body is left untouched: each old parameter buffer is re-declared at the
top of the body as a view of the new parameter's data (``DeclBuffer``), so only the
parameters carry (and MakePackedAPI only sees) the weaker alignment.
"""
from __future__ import annotations

# The alignment, in bytes, the compiled kernels assume for an argument: its element size.
# ``mlclab.runtime.Marshaller`` relies on this to pass unaligned arrays without a copy.
PARAM_ALIGNMENT = "element"


def relax_param_alignment():
    """A module pass declaring every PrimFunc parameter aligned to its element size."""
    import tvm
    from tvm import tirx

    @tvm.ir.transform.module_pass(opt_level=0, name="mlclab.RelaxParamAlignment")
    def relax_alignment(mod, _ctx):
        updates = {gv: _relaxed(func, tirx) for gv, func in mod.functions.items()
                   if isinstance(func, tirx.PrimFunc)}
        for gv, func in updates.items():
            if func is not None:
                mod[gv] = func
        return mod

    return relax_alignment


def _relaxed(func, tirx):
    """``func`` with element-aligned parameter buffers, or None when it has none to relax."""
    renamed = {}
    for param in func.params:
        if not tirx.is_buffer_var(param):
            continue
        ty = param.ty
        itemsize = max(1, _bits(ty.dtype) // 8)
        if ty.data_alignment <= itemsize:
            continue
        renamed[param] = tirx.decl_buffer(ty.shape, ty.dtype, param.name, None, ty.strides,
                                          ty.elem_offset, ty.storage_scope, itemsize,
                                          ty.offset_factor, layout=ty.layout)
    if not renamed:
        return None
    params = [renamed.get(p, p) for p in func.params]
    views = [tirx.DeclBuffer(old, data=tirx.buffer_data(new)) for old, new in renamed.items()]
    body = tirx.SeqStmt([*views, func.body])
    return tirx.PrimFunc(params, body, func.ret_type, func.attrs, func.span)


def _bits(dtype) -> int:
    import tvm

    return tvm.DataType(str(dtype)).bits
