"""What several text styles walk: the functions to print, in call order."""
from __future__ import annotations

from ...viz.relax_info import relax_function_names


def reachable(mod, name: str, also=(), prims: bool = False) -> list[str]:
    """``name`` and the Relax functions it calls, directly or not, in call order; then
    the functions ``also`` names (a whole module), each followed by what it calls. With
    ``prims`` the PrimFuncs called are listed too (a call's callees are only followed
    through Relax functions)."""
    from tvm import relax

    names = ({gv.name_hint for gv in mod.get_global_vars()} if prims
             else set(relax_function_names(mod)))
    order, pending, rest = [], [name], list(also)
    while pending or rest:
        fname = pending.pop(0) if pending else rest.pop(0)
        if fname in order or fname not in names:
            continue
        order.append(fname)
        func = mod[fname]
        if isinstance(func, relax.Function):
            pending += [gv.name_hint for gv in relax.analysis.all_global_vars(func)]
    return order
