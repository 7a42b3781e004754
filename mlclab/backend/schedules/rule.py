"""What a schedule rule is: one class per kind of PrimFunc, tried in a per-target order.

The shape is TVM's own ``s_tir.dlight.ScheduleRule`` (a rule can be handed to
``dlight.ApplyDefaultSchedule`` as is), plus what mlclab's views need and dlight lacks: a
rule says *why* it declines a function, so the build can record it (``apply.py``).
"""
from __future__ import annotations

from tvm.s_tir import dlight

from .inline import inline_producers
from .tir_util import blocks_of, child_blocks, vector_lanes


class Declined(Exception):
    """Raised by a rule's ``schedule`` when the function is not of its form; the message is
    the reason, recorded in the function's ``mlclab.declined`` attribute."""


class CPURule(dlight.ScheduleRule):
    """A schedule for one kind of PrimFunc on a CPU whose vectors hold ``lanes`` float32s.

    A subclass sets ``name`` (recorded in ``mlclab.schedule`` on the functions it
    schedules), may override ``is_applicable`` (a cheap look at the unscheduled function,
    before any Schedule is built) and implements ``schedule``.  Every rule starts from the
    unscheduled function with its free-to-inline producers inlined (``inline.py``).
    """

    name = "cpu_rule"

    def is_applicable(self, func) -> str | None:
        """None when the rule may apply to ``func``, else the reason it does not."""
        return None

    def schedule(self, sch, blocks, lanes: int) -> None:
        """Schedule ``sch`` (its root's child ``blocks`` after inlining) in place; raise
        ``Declined`` when the function turns out not to be of this rule's form.  Any other
        exception (a schedule primitive refusing) also declines, with its message."""
        raise NotImplementedError

    def try_schedule(self, func, lanes: int):
        """``(schedule, None)`` when the rule scheduled ``func``, ``(None, reason)`` when it
        declined or a schedule primitive refused."""
        import tvm
        from tvm import s_tir

        reason = self.is_applicable(func)
        if reason is not None:
            return None, reason
        if not blocks_of(func):
            return None, "no blocks to schedule (plain loops)"
        try:
            sch = s_tir.Schedule(tvm.IRModule({"main": func}))
            inline_producers(sch, child_blocks(sch))
            self.schedule(sch, child_blocks(sch), lanes)
        except Declined as exc:
            return None, str(exc)
        except Exception as exc:  # a schedule primitive refused: recorded, never fatal
            return None, _error_text(exc)
        return sch, None

    # dlight's contract: a Schedule, or None when the rule does not apply.
    def apply(self, func, target, tunable: bool = False):
        sch, _reason = self.try_schedule(func, vector_lanes(target))
        return sch

    def __repr__(self) -> str:
        return f"<schedule rule {self.name}>"


# How much of a refusal's message is recorded: TVM's errors carry the whole function.
REASON_CHARS = 200


def _error_text(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    # TVM puts its own "Traceback"/"File ..." lines first; the message is the last line.
    message = lines[-1] if lines else ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 3] + "..."
