"""The ``tir`` style: the TensorIR PrimFuncs the build pipeline lowers the function to."""
from __future__ import annotations

from ...viz.relax_info import Subject
from ..pass_steps import run_passes
from .registry import IRText, register_style


def render(subject: Subject) -> IRText:
    """PrimFuncs that the function runs after mlclab's whole Relax build pipeline."""
    import tvm
    from tvm import relax, tirx

    lowered = run_passes(subject.mod, subject.target)
    present = {gv.name_hint for gv in lowered.get_global_vars()}
    wanted, pending = [], [subject.name]
    while pending:                         # follow calls through Relax functions to PrimFuncs
        name = pending.pop(0)
        if name in wanted or name not in present:
            continue
        wanted.append(name)
        func = lowered[name]
        if isinstance(func, relax.Function):
            pending += [gv.name_hint for gv in relax.analysis.all_global_vars(func)]
    prims = {lowered.get_global_var(n): lowered[n] for n in wanted
             if isinstance(lowered[n], tirx.PrimFunc)}
    if not prims:
        return IRText("tir", "# no TensorIR: this function computes nothing itself\n")
    return IRText("tir", tvm.IRModule(prims).script(show_meta=False))


register_style("tir", render, title="tir",
               description="the lowered TensorIR PrimFuncs the function runs")
