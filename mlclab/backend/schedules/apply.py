"""Running a target's rule list over PrimFuncs, and recording what was decided.

Every PrimFunc the pass considers gets two attributes, which the TIR view and the profile
read:

* ``mlclab.schedule``: the name of the rule that scheduled it (``UNSCHEDULED`` when every
  rule declined and it runs exactly as legalization made it);
* ``mlclab.declined``: ``"rule: reason"`` for each rule tried before, in order -- a rule
  that does not fit, or a schedule primitive that refused half-way (that rule's schedule is
  dropped whole and the next rule starts from the unscheduled function).

Scheduling is an optimisation, never a requirement: a function no rule schedules still
builds and runs, and the record says why it is slow.
"""
from __future__ import annotations

from .rules import CPU_RULES
from .tir_util import vector_lanes

# The attribute names other modules (the TIR view, the profile) read.
SCHEDULE_ATTR = "mlclab.schedule"
DECLINED_ATTR = "mlclab.declined"
UNSCHEDULED = "none"


class NotScheduled(ValueError):
    """``schedule_primfunc(..., strict=True)`` when every rule declined."""


def schedule_cpu(target, rules=CPU_RULES):
    """A module pass that schedules every not-yet-scheduled PrimFunc for the CPU ``target``
    with the first of ``rules`` that applies, recording the decision on each.

    Functions already marked ``tirx.is_scheduled`` (or carrying a decision) are left alone;
    every function this pass schedules gets that mark, so running it twice changes nothing.
    """
    import tvm
    from tvm import tirx

    lanes = vector_lanes(target)

    @tvm.transform.module_pass(opt_level=0, name="mlclab.ScheduleCPU")
    def _schedule(mod, ctx):
        updates = {}
        for gv, func in mod.functions_items():
            if isinstance(func, tirx.PrimFunc) and not _decided(func):
                updates[gv] = schedule_primfunc(func, lanes, rules=rules)
        if not updates:
            return mod
        # A new module rather than an in-place update: the input may still be on show in
        # a pipeline view.
        funcs = {gv: updates.get(gv, func) for gv, func in mod.functions_items()}
        return tvm.IRModule(funcs, attrs=mod.attrs, global_infos=mod.global_infos)

    return _schedule


def schedule_primfunc(func, lanes: int, strict: bool = False, rules=CPU_RULES):
    """``func`` scheduled for a CPU whose vectors hold ``lanes`` float32 values by the first
    of ``rules`` that applies, with the decision recorded in its attributes; when every
    rule declines, ``func`` as it was (plus the record).  ``strict=True`` raises
    ``NotScheduled`` instead, naming every rule's reason."""
    declined = []
    for rule in rules:
        sch, reason = rule.try_schedule(func, lanes)
        if sch is not None:
            return sch.mod["main"].with_attrs({
                "tirx.is_scheduled": True, SCHEDULE_ATTR: rule.name,
                DECLINED_ATTR: declined})
        declined.append(f"{rule.name}: {reason}")
    if strict:
        raise NotScheduled("no schedule rule applies: " + "; ".join(declined))
    return func.with_attrs({SCHEDULE_ATTR: UNSCHEDULED, DECLINED_ATTR: declined})


def schedule_decision(func):
    """``(rule name, [declined "rule: reason", ...])`` recorded on a PrimFunc, or None if
    the schedule pass never saw it."""
    attrs = func.attrs
    if attrs is None or SCHEDULE_ATTR not in attrs:
        return None
    return str(attrs[SCHEDULE_ATTR]), [str(r) for r in attrs.get(DECLINED_ATTR, [])]


def _decided(func) -> bool:
    attrs = func.attrs
    return attrs is not None and (bool(attrs.get("tirx.is_scheduled", False))
                                  or SCHEDULE_ATTR in attrs)
