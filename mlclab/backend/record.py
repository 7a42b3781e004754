"""The build record: what each pass of mlclab's Relax pipeline did, taken once, on the compile
that really ran.

A TVM pass instrument (``tvm.instrument.pass_instrument``) watches ``tvm.compile`` and keeps,
for each top-level pass of the pipeline (``PIPELINE``, the ``Sequential`` that
``mlclab.backend.passes.recorded_build`` hands to TVM), its name, the module after it,
whether it changed anything and how long it took. Every view reads this record instead of
running the passes again (``fn.pipeline()``, the ``tir`` text, the fused view, the profile),
so what a view shows is what ran, a fallback included.

A pass of mlclab's own (``own_pass``) that raises during a recorded build is skipped (or
replaced by TVM's counterpart) and the build goes on: the record lists it as a ``Fallback``,
and the build warns with ``FallbackWarning``. Outside a recorded build the guard is
transparent, so a test compiling with ``build_passes`` directly still sees the failure.

Memory: passes that change nothing keep the previous pass's module (one object, not a copy),
and a module that changed shares every function the pass did not touch with the one
before (TVM's IR is immutable), so the record costs the functions the passes rewrote.
"""
from __future__ import annotations

import contextlib
import contextvars
import time
import warnings
from dataclasses import dataclass
from typing import Any, Optional

# The name of the ``Sequential`` holding mlclab's Relax pipeline: the instrument records the
# passes directly inside it, and not TVM's TIR pipeline or the passes nested in a pass.
PIPELINE = "mlclab.build"


class FallbackWarning(UserWarning):
    """mlclab's pipeline could not build a program as it is: a pass of its own failed and was
    skipped or replaced, or the whole build fell back to TVM's plain pipeline. The program
    still runs and matches; it may be slower. ``fn.build_record.fallbacks`` lists what
    happened, ``fn.pipeline()`` marks the pass."""


# Every fallback is said, not only the first from this line of mlclab (Python's default for a
# warning): two programs can fail the same way. Appended, so a student's own filter still wins.
warnings.filterwarnings("always", category=FallbackWarning, append=True)


@dataclass(frozen=True)
class Fallback:
    """One thing mlclab's pipeline could not do, and what ran instead."""

    stage: str          # the pass that failed, or "code generation" after the Relax passes
    error: str          # why, as TVM or the pass said it (cleaned for a student)
    instead: str        # what ran instead: "nothing (skipped)", a pass, TVM's plain pipeline

    def __str__(self) -> str:
        return f"{self.stage} failed ({self.error}); ran {self.instead} instead"


@dataclass(frozen=True)
class PassRun:
    """One pass of the pipeline as it ran."""

    index: int                        # 0-based position in the pipeline
    name: str                         # the pass's name, e.g. "FuseOps"
    mod: Any                          # the IRModule after it (the one before if unchanged)
    changed: bool
    seconds: float
    fallback: Optional[Fallback] = None   # set when this pass failed and was skipped/replaced


class BuildRecord:
    """The passes of one build, in order: indexable by position or pass name.

    ``optimized`` is True when mlclab's whole pipeline ran with none of its passes skipped;
    ``fallbacks`` says what did not run and what ran instead; ``fast_math`` whether the
    build let float arithmetic be rewritten (strict, numpy's answers, when False)."""

    def __init__(self, input_mod, runs: list, target, optimized: bool, fallbacks: tuple,
                 fast_math: bool = False):
        self.input = input_mod
        self.fast_math = bool(fast_math)
        self.runs = tuple(runs)
        self.target = target
        self.fallbacks = tuple(fallbacks)
        self.plain = not optimized          # TVM's plain pipeline built it: mlclab's failed
        self.optimized = optimized and not self.fallbacks

    @property
    def names(self) -> list:
        return [r.name for r in self.runs]

    @property
    def final(self):
        """The module the Relax pipeline handed to TIR lowering and code generation."""
        return self.runs[-1].mod if self.runs else self.input

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    def __len__(self):
        return len(self.runs)

    def __iter__(self):
        return iter(self.runs)

    def __getitem__(self, key) -> PassRun:
        if isinstance(key, str):
            return self.find(key)
        return self.runs[key]

    def find(self, name) -> PassRun:
        """The first pass called ``name``; a ValueError listing the passes if there is none."""
        for run in self.runs:
            if run.name == name:
                return run
        raise ValueError(f"no pass {name!r} in the build pipeline; it has "
                         f"{', '.join(self.names)}")

    def schedule_decisions(self) -> dict:
        """Kernel name -> ``(rule, declined)`` for each PrimFunc of the final module whose
        schedule pass recorded a decision (``schedule_decision``)."""
        from tvm import tirx

        out = {}
        for gv, func in self.final.functions_items():
            decision = schedule_decision(func) if isinstance(func, tirx.PrimFunc) else None
            if decision is not None:
                out[gv.name_hint] = decision
        return out

    def summary(self) -> str:
        head = ("TVM's plain pipeline (mlclab's failed)" if self.plain else
                "mlclab's pipeline" if self.optimized else "mlclab's pipeline, with fallbacks")
        rows = [f"{r.index:>2} {r.name:<28} {r.seconds * 1e3:8.1f} ms"
                f"{'' if r.changed else '  (no change)'}"
                f"{f'  FAILED, {r.fallback.instead} ran instead' if r.fallback else ''}"
                for r in self.runs]
        notes = [f"fallback: {f}" for f in self.fallbacks]
        math = "fast-math" if self.fast_math else "strict math"
        return "\n".join([f"<BuildRecord: {len(self.runs)} passes, {head}, {math}>", *rows,
                          *notes])

    def __repr__(self):
        return self.summary()


def schedule_decision(prim) -> Optional[tuple]:
    """``(rule, declined)`` as the schedule pass recorded them on a PrimFunc (see
    ``schedules.apply``, which writes them): the name of the rule that scheduled it (None when
    none did) and the ``"rule: reason"`` of each rule that declined it. None when the PrimFunc
    carries no decision (a pass that records none built it)."""
    from .schedules.apply import schedule_decision as recorded, UNSCHEDULED

    decision = recorded(prim)
    if decision is None:
        return None
    rule, declined = decision
    return (None if rule in ("", UNSCHEDULED) else rule), tuple(declined)


# ---------------------------------------------------------------------------- recording
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("mlclab_build_recorder", default=None)


class _Recorder:
    """What the instrument sees: a stack of the passes running, and the top-level runs."""

    def __init__(self):
        self.stack: list = []             # [(pass name, start time)]
        self.input = None
        self.runs: list = []
        self.pending: dict = {}           # pass name -> the Fallback of its failure

    def before(self, mod, info) -> None:
        if not self.stack and info.name == PIPELINE:
            self.input = mod
        self.stack.append((info.name, time.perf_counter()))

    def after(self, mod, info) -> None:
        # A pass run inside another that raised, caught there (a schedule rule probing TVM's
        # lowering of an intrinsic), got no ``run_after_pass``: its frame is dropped here, or
        # every later pass would be filed one level too deep and the record lose them.
        while len(self.stack) > 1 and self.stack[-1][0] != info.name:
            self.stack.pop()
        name, start = self.stack.pop()
        if len(self.stack) == 1 and self.stack[0][0] == PIPELINE:
            seconds = time.perf_counter() - start
            before = self.runs[-1].mod if self.runs else self.input
            changed = not _same(mod, before)
            self.runs.append(PassRun(len(self.runs), name, mod if changed else before,
                                     changed, seconds, self.pending.pop(name, None)))

    def failing_stage(self) -> str:
        """Which top-level pass was running when the build raised (the stack is left as it
        was: TVM calls no ``run_after_pass`` for a pass that raised)."""
        if len(self.stack) >= 2 and self.stack[0][0] == PIPELINE:
            return self.stack[1][0]
        return "code generation"

    def fallbacks(self) -> list:
        return [r.fallback for r in self.runs if r.fallback is not None]


def _same(after, before) -> bool:
    """Whether a pass left the module as it was: the same functions (cheap, and what most
    passes that change nothing return), else structurally equal."""
    import tvm_ffi

    if after.same_as(before):
        return True
    a, b = after.functions, before.functions
    if len(a) == len(b) and all(b.get(gv) is not None and f.same_as(b[gv]) for gv, f in a.items()):
        return True
    return bool(tvm_ffi.structural_equal(after, before))


def _instrument(recorder: _Recorder):
    import tvm

    @tvm.instrument.pass_instrument
    class BuildRecorder:
        def run_before_pass(self, mod, info):
            recorder.before(mod, info)

        def run_after_pass(self, mod, info):
            recorder.after(mod, info)

    return BuildRecorder()


@contextlib.contextmanager
def recording(config=None):
    """Record the passes of ``PIPELINE`` run in the body (the current PassContext's options kept,
    ``config`` added to its config)."""
    import tvm

    recorder = _Recorder()
    current = tvm.transform.PassContext.current()
    context = tvm.transform.PassContext(
        opt_level=current.opt_level, required_pass=list(current.required_pass),
        disabled_pass=list(current.disabled_pass), config={**current.config, **(config or {})},
        instruments=[*current.instruments, _instrument(recorder)])
    token = _ACTIVE.set(recorder)
    try:
        with context:
            yield recorder
    finally:
        _ACTIVE.reset(token)


def own_pass(inner, instead=None):
    """``inner`` (a pass of mlclab's own, or one it configures) guarded: if it raises during a
    recorded build, the build goes on with ``instead`` (TVM's counterpart) or without it, and
    the record says so. It keeps ``inner``'s name, so the pipeline lists it as before."""
    import tvm

    from .builder import clean_tvm_message

    info = inner.info

    @tvm.transform.module_pass(opt_level=info.opt_level, name=info.name)
    def guarded(mod, ctx):
        recorder = _ACTIVE.get()
        if recorder is None:
            return inner(mod)
        depth = len(recorder.stack)
        try:
            # A copy (of the function table, not of the functions): a pass that updates its
            # input in place (``mod[gv] = ...``) would rewrite the record's earlier modules.
            return inner(tvm.IRModule(mod.functions, attrs=mod.attrs,
                                      global_infos=mod.global_infos))
        except Exception as exc:   # the pass's own bug: a slower program, never none
            del recorder.stack[depth:]   # the failed pass's frames get no run_after_pass
            what = f"TVM's {instead.info.name}" if instead is not None else "nothing (skipped)"
            recorder.pending[info.name] = Fallback(info.name, clean_tvm_message(exc), what)
            return mod if instead is None else instead(mod)

    return guarded
