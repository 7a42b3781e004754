"""``CompiledFunction``: one compiled tinynn function, called with numpy arrays."""
from __future__ import annotations

from typing import Optional

from .. import reference as _reference
from ..backend.alignment import PARAM_ALIGNMENT
from ..kernel_plan import kernel_plan, plan_arrays
from ..runtime import Marshaller
from . import displays
from .arguments import Bound, bind
from .errors import boundary, passes_through, shortened, translate
from .holds_ir import Bindings, HoldsCompiledIR
from .shapes import _ALWAYS_AVAILABLE as ALWAYS_AVAILABLE
from .shapes import check_memory, check_sizes

_SIZED_ENTRIES = 256


class _CallState:
    """What calling one compiled function prepares, kept by its ``Built`` and shared by every
    ``CompiledFunction`` made for it: a program holds its functions weakly, so
    ``prog["f"](x)`` written out each time makes a new one per call, and re-deriving all
    this (the size walk above all) cost ~140 us a call of a 4-element add."""

    def __init__(self, params, device):
        self.marshaller = Marshaller([p.type.dtype for p in params],
                                     kernel_alignment=PARAM_ALIGNMENT, device=device)
        self.vm_fn = None
        # The thin call (Marshaller.thin) for the shapes of the last call bind() accepted:
        # numpy arrays of exactly the declared dtypes and those shapes need no other check
        # (bind() would accept them again; the sizes and the memory need are the same).
        # A 4-element add cost ~12 us through bind(), against the VM's ~1 us.
        self.thin = None
        self.thin_shapes = None
        # The kernels the VM function runs, when that is all it does (kernel_plan.kernel_plan),
        # None if it does more, False until the first call asked.
        self.kernel_plan = False
        # Sizes already checked -> the bytes their largest operator needs. Walking the
        # program costs ~50 us a call (measured on a 5-binding function), as much as a small
        # kernel.
        self.sized: dict = {}


class CompiledFunction(HoldsCompiledIR):
    """One compiled tinynn function: call it with numpy arrays, get numpy arrays back."""

    # A check of the arguments' values, not only of their types and shapes, run on every call
    # (thin or not) and by everything that binds arguments: ``check(arrays, caller)`` raising
    # ``ValueError``. None for a DSL function; an imported model's index inputs have one
    # (api.torch_model). It must not hold the function: the thin call that runs it is kept
    # by the build, which the function points at.
    _value_check = None

    def __init__(self, program, name: str):
        self.program = program
        self.name = name
        self.__name__ = name
        self.__qualname__ = name
        self.typed = program.typed.functions[name]
        self.bindings = Bindings(program.built.bindings[name])
        state = program.built.call_states.get(name)
        if state is None:
            state = program.built.call_states.setdefault(
                name, _CallState(self.typed.params, program.built.device))
        self._state = state
        self._marshaller = state.marshaller
        self._sized = state.sized
        self._vm_fn = state.vm_fn
        self._thin = state.thin

    # the contract of docs/architecture.md
    @property
    def source(self) -> str:
        return self.program.source

    @property
    def mod(self):
        return self.program.mod

    @property
    def relax_function(self):
        return self.program.mod[self.name]

    @property
    def target(self):
        return self.program.target

    @property
    def executable(self):
        return self.program.executable

    @property
    def build_record(self):
        """What each pass of the build that made this function did: its name, the module after
        it, whether it changed anything, its time, and any fallback
        (``mlclab.backend.record.BuildRecord``); the views read it."""
        return self.program.build_record

    @property
    def params(self):
        return self.typed.params

    @property
    def ret_type(self):
        return self.typed.ret_type

    @property
    def reference_name(self) -> str:
        """What ``reference`` runs, as validation reports name it."""
        return f"numpy reference of {self.name}"

    def signature(self) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.typed.params)
        return f"{self.name}({params}) -> {self.typed.ret_type}"

    def __repr__(self):
        math = ", fast-math" if getattr(self.program, "fast_math", False) else ""
        return f"<mlclab function {self.signature()}{math}>"

    # ------------------------------------------------------------------ calling
    def bind(self, args, caller: Optional[str] = None) -> Bound:
        """The arguments checked and converted, with every value's size checked for them:
        a ``TypeError``/``ValueError``/``MemoryError`` before anything runs."""
        return self._bind(args, caller)[0]

    def _bind(self, args, caller: Optional[str] = None) -> tuple:
        """``bind``, and the bytes the largest operator needs for these sizes."""
        caller = caller or self.name
        bound = bind(self.typed.params, args, caller)
        if self._value_check is not None:
            self._value_check(bound.arrays, caller)
        key = tuple(sorted(bound.sizes.items()))
        need = self._sized.get(key)
        if need is None:
            need = self.size_need(bound.sizes, bound.origins)
            if len(self._sized) >= _SIZED_ENTRIES:
                self._sized.clear()
            self._sized[key] = need
        check_memory(need, caller)
        return bound, need

    def size_need(self, sizes: dict, origins: dict) -> int:
        """Every value's size checked for the symbolic ``sizes`` (``ValueError`` if one does
        not fit); the bytes the largest operator needs, for the memory check. A DSL function
        walks its typed program; an imported model overrides this with its Relax types."""
        return check_sizes(self.program.typed, self.name, sizes, origins)

    def check_args(self, args, caller: Optional[str] = None) -> list:
        """The arguments as numpy arrays of the declared dtypes, or a clear error."""
        return self.bind(args, caller).arrays

    def __call__(self, *args, **kwargs):
        # The api's exception policy (errors.boundary) written out: a decorator's extra call
        # and argument packing cost ~0.25 us, a quarter of the VM's own time on a tiny call.
        __tracebackhide__ = True  # noqa: F841 (IPython hides this frame; see errors.shortened)
        thin = self._thin
        if thin is not None and not kwargs:
            try:
                result = thin(args)
            except Exception as exc:
                if passes_through(exc):
                    raise shortened(exc)  # noqa: B904
                raise translate(exc, f"calling {self.name}") from exc
            if result is not None:
                return result
        # Raised again so that the traceback ends here: IPython always shows the last frame,
        # and the boundary's inside _call would be one frame more.
        try:
            return self._call(args, kwargs)
        except Exception as exc:
            raise shortened(exc)  # noqa: B904

    @boundary(lambda self, *args: f"calling {self.name}")
    def _call(self, args, kwargs):
        """The full call: every argument checked and converted by bind(), which decides
        anything unusual (lists, other dtypes, strided or read-only arrays, a new symbolic
        size), then prepares the thin call for these shapes."""
        if kwargs:
            params = ", ".join(p.name for p in self.typed.params)
            raise TypeError(f"{self.name}() takes its arguments by position ({params}), got "
                            f"keyword {', '.join(kwargs)}")
        bound, need = self._bind(args)
        built, state = self.program.built, self._state
        with built.lock:
            vm_fn = self._vm_fn
            if vm_fn is None:
                if state.vm_fn is None:
                    state.vm_fn = built.vm[self.name]
                vm_fn = self._vm_fn = state.vm_fn
            result = self._marshaller.call(vm_fn, bound.arrays)
        shapes = tuple(array.shape for array in bound.arrays)
        if shapes != state.thin_shapes:  # (a symbolic size changed, or this is the first call)
            state.thin_shapes = shapes
            checked = self._checked(vm_fn, need)
            direct = self._direct(result, bound.arrays) if checked is vm_fn else None
            state.thin = self._marshaller.thin(checked, built.lock, shapes, direct)
        self._thin = state.thin
        return result

    def _direct(self, result, arrays):
        """``(plan, arrays, kernels)`` when this function only runs kernels on its arguments
        and arrays it allocates, few and small (``kernel_plan.kernel_plan``, ``plan_arrays``;
        ``result`` is what the call on ``arrays`` returned), else None."""
        import numpy as np

        built = self.program.built
        if not built.optimized or type(result) is not np.ndarray:
            return None   # (a fallback build may be TVM's own, assuming 64-byte alignment)
        state = self._state
        if state.kernel_plan is False:  # (read once: a big model's bytecode is long)
            state.kernel_plan = kernel_plan(built.executable.as_text(), self.name,
                                            len(self.typed.params))
        plan = state.kernel_plan
        if plan is None:
            return None
        if len(plan.calls) == 1 and len(plan.allocated) == 1:
            shapes = {plan.result: (result.shape, result.dtype)}
        else:
            with built.lock:
                shapes = plan_arrays(built.executable, built.device, self.name, plan,
                                     self._marshaller.tensors(arrays))
            if shapes is None:
                return None
        module = built.executable.mod
        kernels = {name: module.get_function(name, query_imports=True)
                   for name, _ in plan.calls}
        return plan, shapes, kernels

    def _checked(self, vm_fn, need: int):
        """``vm_fn``, checking first the memory need where it is more than any machine has
        for certain (``shapes.check_memory`` then reads what is available, every call), and
        the arguments' values where the function has a value check."""
        value_check, memory = self._value_check, need > ALWAYS_AVAILABLE
        if value_check is None and not memory:
            return vm_fn
        name = self.name

        def checked(*arrays):
            if memory:
                check_memory(need, name)
            if value_check is not None:
                value_check(arrays, name)
            return vm_fn(*arrays)

        return checked

    @boundary(lambda self, *args: f"evaluating {self.name}.reference")
    def reference(self, *args):
        """The same program evaluated by numpy, operator by operator (for validation)."""
        arrays = self.check_args(args, f"{self.name}.reference")
        return _reference.evaluate(self.program.typed, self.name, arrays)

    @boundary(lambda self, *args, **kw: f"evaluating {self.name}.reference_trace")
    def reference_trace(self, *args, each=None) -> dict:
        """numpy's value of every top-level binding, keyed by its IR binding name; or, with
        ``each``, each handed to ``each(name, value)`` as it is computed, none kept (so
        ``validate`` holds one side's intermediates only)."""
        arrays = self.check_args(args, f"{self.name}.reference_trace")
        module, _ = self.program.built.traced(self.name)
        expr_vars = module.expr_vars[self.name]
        wanted = set(self._trace_names())
        out = {}

        def record(expr, value):
            var = expr_vars.get(expr)
            if var is not None and var.name in wanted:
                if each is None:
                    out[var.name] = value
                else:
                    each(var.name, value)

        _reference.evaluate(self.program.typed, self.name, arrays, record)
        return {k: out[k] for k in self._trace_names() if k in out}

    @boundary(lambda self, *args: f"tracing {self.name}")
    def trace(self, *args) -> dict:
        """TVM's value of every top-level binding, keyed by its IR binding name."""
        arrays = self.check_args(args, f"{self.name}.trace")
        built = self.program.built
        _, vm = built.traced(self.name)
        with built.lock:
            result = vm[self.name](*self._marshaller.to_tvm(arrays))
            values = self._marshaller.to_numpy(result[1])
        return dict(zip(self._trace_names(), values))

    def _trace_names(self) -> list:
        module, _ = self.program.built.traced(self.name)
        ret = module.mod[self.name].body.body
        inter = ret.fields[1].fields if hasattr(ret, "fields") else []
        return [v.name for v in inter]

    # ------------------------------------------------------------------ views
    def graph(self, view: str = "dataflow", profile=None, after=None, **opts):
        """The computation graph: a view of ``mlclab.viz.registry`` (``"dataflow"``, ``"tree"``,
        ``"let"``, ``"fused"``...). ``after="FuseOps"`` (any pass of ``fn.pipeline()``) draws
        the module as the build left it after that pass; a view registered with a step
        (``"fused"``: after FuseOps) is drawn there. ``profile=fn.profile()`` colours the
        graph after FuseOps by time."""
        from ..viz.registry import view_kind
        from ..viz.views import graph

        kind = view_kind(view)
        if after is None and profile is None:     # a step's view ("fused") too: viz.views
            return graph(self, view, **opts)
        step = after if after is not None else kind.after
        if step is None:
            raise ValueError(f"profile= overlays the \"fused\" view (the graph after "
                             f"FuseOps), not {view!r}")
        from .profiling import step_graph

        if not isinstance(step, str):
            raise TypeError(f"after must be a pass name (a str), got {step!r}")
        return step_graph(self, view, step, profile, **opts)

    @boundary(lambda self, *args, **kw: f"profiling {self.name}")
    def profile(self, *args, repeat: int = 5):
        """Each kernel of one call timed (median of ``repeat``), with FLOPs, bytes and its
        place on this machine's roofline (``mlclab.inspect.profile``); random inputs if none."""
        from .profiling import profile

        return profile(self, args, repeat)

    def text(self, style: str = "relax", **options) -> str:
        """The program as text: ``"relax"``, ``"relay"``, ``"let"`` or ``"tir"`` (options as in
        ``mlclab.inspect.text.text``, e.g. ``names="fresh"`` for ``%v1``-style let names)."""
        from ..inspect.text import text

        return text(self, style, **options)

    def pipeline(self):
        """The passes that built this function, one step each, read from ``build_record``."""
        from ..inspect.pipeline import pipeline

        return pipeline(self)

    def viewer(self, view: str = "dataflow", **options):
        """The interactive graph viewer (a widget; a static SVG where widgets cannot run),
        provided by the notebook layer through ``mlclab.api.displays``."""
        return displays.lookup("viewer")(self, view=view, **options)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """A notebook shows a function as a cell does: its graph, texts and validation in tabs
        (provided by the notebook layer through ``mlclab.api.displays``)."""
        return displays.lookup("function_display")(self)

    def _ipython_display_(self):
        """IPython (a cell's last expression, ``display(fn)``): the same tabs, shown in steps,
        the graph first and a progress line while the validation runs."""
        displays.lookup("show_function")(self)
