"""What several text styles walk: the functions to print and every binding of one."""
from __future__ import annotations

from ...viz.relax_info import relax_function_names


def reachable(mod, name: str, also=()) -> list[str]:
    """``name`` and the Relax functions it calls, directly or not, in call order; then
    the functions ``also`` names (a whole module), each followed by what it calls."""
    from tvm import relax

    order, pending, rest = [], [name], list(also)
    relax_names = set(relax_function_names(mod))
    while pending or rest:
        fname = pending.pop(0) if pending else rest.pop(0)
        if fname in order:
            continue
        order.append(fname)
        func = mod[fname]
        if isinstance(func, relax.Function):
            for gv in relax.analysis.all_global_vars(func):
                if gv.name_hint in relax_names:
                    pending.append(gv.name_hint)
    return order


def all_bindings(func) -> list:
    """Every binding of ``func`` in order, those of an ``if``'s branches right after it."""
    from tvm import relax

    out = []

    def walk(seq):
        if not isinstance(seq, relax.SeqExpr):
            return
        for block in seq.blocks:
            for b in block.bindings:
                out.append(b)
                if isinstance(b.value, relax.If):
                    walk(b.value.true_branch)
                    walk(b.value.false_branch)

    walk(func.body)
    return out
