"""Where the time goes: each kernel of one call timed, with its FLOPs, bytes and roofline place.

How it measures (TVM 0.27's Relax VM has no per-op profiler, so mlclab builds the equivalent):
a VM instrument sees every kernel call of one run with its real arguments, and times that
kernel there, with those arguments, by TVM's own C++ timer (``Module.time_evaluator``, a
calibrated number of back-to-back runs so one sample lasts about a millisecond). The run is
repeated ``repeat`` times; a kernel's ``seconds`` is the median of its samples and
``spread`` their (min, max). FLOPs and bytes come from the kernel's TIR (``inspect.work``).
Only the program's own kernels are rows; the VM's bookkeeping between them (argument checks,
allocation, shape functions of symbolic sizes) is in ``call_seconds``, the whole call timed
without the instrument.

This machine's limits (:func:`peaks`), measured once per process with kernels built by TVM:
compute, a loop of independent vector fused multiply-adds that stays in registers
(``C[r, i] += A[r, i] * B[k]``, 16 accumulators of the widest vector, rows on threads);
memory, a STREAM-like copy of 32 MiB (more than the caches) counted as 8 bytes per element
(one read, one write). Each is the best of 7 samples.
"""
from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..viz.overlays import heat_colour, layer_for  # heat_colour re-exported
from .work import kernel_work

PEAK_METHOD = ("peak GFLOP/s: TVM-built loop of independent vector FMAs held in registers, "
               "best of 7; peak GB/s: TVM-built STREAM-like copy of 32 MiB, read + write "
               "bytes, best of 7; both measured once per process")
_SAMPLE_SECONDS = 1e-3   # one timing sample of a kernel lasts about this long


class Peaks:
    """This machine's roofs: ``gflops`` and ``gbps`` as given, or, left out, each measured the
    first time it is read (once per process, :func:`peaks`): the bandwidth's copy holds 64 MB
    while it runs, which a profile whose memory roof nobody reads (lesson 13 prints only the
    compute peak, at its largest model) need not pay."""

    def __init__(self, gflops: Optional[float] = None, gbps: Optional[float] = None,
                 method: str = PEAK_METHOD):
        self._gflops, self._gbps, self.method = gflops, gbps, method

    @property
    def gflops(self) -> float:
        return _peak_gflops() if self._gflops is None else self._gflops

    @property
    def gbps(self) -> float:
        return _peak_gbps() if self._gbps is None else self._gbps

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where the two roofs meet."""
        return self.gflops / self.gbps


@functools.cache
def peaks() -> Peaks:
    """This machine's compute and memory limits (see the module doc), each measured when
    first read and cached in-process."""
    return Peaks()


def _best(rt, name, args, work):
    from ..backend.passes import device_for, resolve_target

    timer = rt.mod.time_evaluator(name, dev=device_for(resolve_target("llvm")), number=5,
                                  repeat=7)
    return work / min(timer(*args).results) / 1e9


@functools.cache
def _peak_gflops() -> float:
    import numpy as np
    import tvm
    from tvm import te
    from tvm.s_tir import Schedule

    from ..backend.passes import device_for, resolve_target

    target = resolve_target("llvm")      # this machine's CPU: the roofs are the host's
    dev = device_for(target)
    rows, width, depth = 8, 256, 4096
    a = te.placeholder((rows, width), "float32", name="A")
    b = te.placeholder((depth,), "float32", name="B")
    k = te.reduce_axis((0, depth), name="k")
    c = te.compute((rows, width), lambda r, i: te.sum(a[r, i] * b[k], axis=k), name="C")
    sch = Schedule(tvm.IRModule({"peak_fma": te.create_prim_func([a, b, c])
                                 .with_attr("global_symbol", "peak_fma")}))
    blk = sch.get_sblock("C", func_name="peak_fma")
    r, i, kk = sch.get_loops(blk)
    io, ii = sch.split(i, factors=[None, 16])
    sch.reorder(r, kk, io, ii)
    sch.parallel(r)
    sch.unroll(io)
    sch.vectorize(ii)
    sch.decompose_reduction(blk, kk)
    rt = tvm.compile(sch.mod, target=target)
    args = [tvm.runtime.tensor(np.ones((rows, width), "float32")),
            tvm.runtime.tensor(np.ones(depth, "float32")), tvm.runtime.empty((rows, width),
                                                                            "float32", dev)]
    return _best(rt, "peak_fma", args, 2 * rows * width * depth)


@functools.cache
def _peak_gbps() -> float:
    import numpy as np
    import tvm
    from tvm import te
    from tvm.s_tir import Schedule

    from ..backend.passes import device_for, resolve_target

    target = resolve_target("llvm")
    dev = device_for(target)
    n = 1 << 23
    src = te.placeholder((n,), "float32", name="A")
    dst = te.compute((n,), lambda j: src[j], name="B")
    sch = Schedule(tvm.IRModule({"peak_copy": te.create_prim_func([src, dst])
                                 .with_attr("global_symbol", "peak_copy")}))
    (j,) = sch.get_loops(sch.get_sblock("B", func_name="peak_copy"))
    outer, inner = sch.split(j, factors=[None, 64])
    sch.parallel(outer)
    sch.vectorize(inner)
    rt = tvm.compile(sch.mod, target=target)
    # Filled in place: a numpy array copied in would be a third 32 MB while the two exist.
    args = [tvm.runtime.empty((n,), "float32", dev), tvm.runtime.empty((n,), "float32", dev)]
    np.from_dlpack(args[0])[...] = 1.0
    return _best(rt, "peak_copy", args, 2 * 4 * n)


@dataclass
class Kernel:
    """One kernel call of the profiled run."""

    name: str                    # the compiled kernel (e.g. "fused_matmul_add_relu")
    seconds: float               # median over the repeats
    spread: tuple                # (min, max) seconds over the repeats
    flops: int
    bytes: int
    lines: tuple = ()            # DSL lines of the graph nodes it computes
    nodes: tuple = ()            # ids of those nodes in the fused view (fn.graph("fused"))
    code: tuple = ()             # the text of those lines
    module: str = ""             # an imported model's module that computed them ("layer1.0")
    rule: Optional[str] = None   # the schedule rule that scheduled it (None: none did/known)
    declined: tuple = ()         # "rule: reason" of each rule that declined it first

    @property
    def gflops(self) -> float:
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def gbps(self) -> float:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else 0.0

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes else 0.0

    def roof(self, peaks: Peaks) -> float:
        """The attainable GFLOP/s at this intensity: min(compute peak, bandwidth * intensity)."""
        return min(peaks.gflops, peaks.gbps * self.intensity)

    def bound(self, peaks: Peaks) -> str:
        return "compute" if self.intensity >= peaks.ridge else "memory"

    def percent_of_roof(self, peaks: Peaks) -> float:
        """Achieved performance as a share of the roof above it (compute roof for a kernel
        without FLOPs: then of the bandwidth roof)."""
        if self.flops:
            return 100.0 * self.gflops / self.roof(peaks)
        return 100.0 * self.gbps / peaks.gbps


@dataclass
class Profile:
    """Kernels of one call, in the order they ran. Displays (table + roofline) come from the
    notebook layer through ``renderer``."""

    function: str
    kernels: list
    peaks: Peaks
    repeat: int
    call_seconds: float          # median of the whole call (VM + kernels), no instrument
    # What mlclab's pipeline could not do for the build profiled (mlclab.backend.record):
    # a profile of a fallback build says so.
    fallbacks: tuple = ()
    renderer: Optional[Callable] = field(default=None, repr=False, compare=False)
    compare_renderer: Optional[Callable] = field(default=None, repr=False, compare=False)

    @property
    def total_seconds(self) -> float:
        """The kernels' time: the sum of their medians."""
        return sum(k.seconds for k in self.kernels)

    @property
    def peak_gflops(self) -> float:
        return self.peaks.gflops

    @property
    def peak_gbps(self) -> float:
        return self.peaks.gbps

    def by_time(self) -> list:
        return sorted(self.kernels, key=lambda k: -k.seconds)

    def share(self, kernel: Kernel) -> float:
        total = self.total_seconds
        return kernel.seconds / total if total > 0 else 0.0

    def compare(self, other: "Profile") -> "Comparison":
        if not isinstance(other, Profile):
            raise TypeError(f"compare: other must be a Profile, got {type(other).__name__}")
        return Comparison(self, other, renderer=self.compare_renderer)

    def table(self) -> str:
        """A plain-text table, slowest first."""
        rows = [f"fallback: {f}" for f in self.fallbacks]
        rows.append(f"{'kernel':32} {'time':>10} {'share':>6} {'GFLOP':>9} {'MB':>8} "
                    f"{'GFLOP/s':>8} {'GB/s':>7} {'%roof':>6} {'rule':>12}  lines")
        for k in self.by_time():
            rows.append(f"{k.name[:32]:32} {seconds_text(k.seconds):>10} "
                        f"{100 * self.share(k):5.1f}% "
                        f"{k.flops / 1e9:9.4f} {k.bytes / 1e6:8.3f} {k.gflops:8.2f} "
                        f"{k.gbps:7.2f} {k.percent_of_roof(self.peaks):5.1f}% "
                        f"{(k.rule or '-')[:12]:>12}  {','.join(map(str, k.lines))}")
        rows.append(f"total {seconds_text(self.total_seconds)} in kernels; whole call "
                    f"{seconds_text(self.call_seconds)}; peaks {self.peak_gflops:.1f} GFLOP/s, "
                    f"{self.peak_gbps:.1f} GB/s ({self.peaks.method})")
        return "\n".join(rows)

    def __repr__(self) -> str:
        return self.table()

    def _repr_html_(self):
        return self.renderer(self) if self.renderer else None


@dataclass
class Comparison:
    """Two profiles of the same computation: per-kernel and total time ratios (b / a)."""

    a: Profile
    b: Profile
    renderer: Optional[Callable] = field(default=None, repr=False, compare=False)

    @property
    def ratio(self) -> float:
        """Total kernel time of b over a (below 1: b is faster)."""
        return self.b.total_seconds / self.a.total_seconds if self.a.total_seconds else 0.0

    def rows(self) -> list:
        """``(name, a Kernel or None, b Kernel or None)``, matched by kernel name."""
        b_by_name = {}
        for k in self.b.kernels:
            b_by_name.setdefault(k.name, k)
        out, seen = [], set()
        for k in self.a.kernels:
            out.append((k.name, k, b_by_name.get(k.name)))
            seen.add(k.name)
        out += [(k.name, None, k) for k in self.b.kernels if k.name not in seen]
        return out

    def table(self) -> str:
        lines = [f"{'kernel':32} {'a':>10} {'b':>10} {'b/a':>6}"]
        for name, ka, kb in self.rows():
            ta = seconds_text(ka.seconds) if ka else "-"
            tb = seconds_text(kb.seconds) if kb else "-"
            r = f"{kb.seconds / ka.seconds:6.2f}" if ka and kb and ka.seconds else ""
            lines.append(f"{name[:32]:32} {ta:>10} {tb:>10} {r:>6}")
        lines.append(f"{'total':32} {seconds_text(self.a.total_seconds):>10} "
                     f"{seconds_text(self.b.total_seconds):>10} {self.ratio:6.2f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()

    def _repr_html_(self):
        return self.renderer(self) if self.renderer else None


# ---------------------------------------------------------------------- measuring
def tir_functions(mod) -> dict:
    """Kernel name -> PrimFunc of ``mod``: the module after FuseTIR (before the CPU schedules,
    which reshape the loops but not the work)."""
    from tvm import tirx

    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tirx.PrimFunc)}


def kernel_origins(fused_graph) -> dict:
    """Kernel name -> one (node ids, DSL lines, their text, module path) per call of the
    kernel, in the order the calls run, from the fused view: a fused group's members, or the
    single op node of an unfused kernel. (A model calls one fused kernel at many places, e.g.
    each ResNet block's conv+add+relu: each call has its own nodes and lines.) The module path
    is what the nodes' modules share ("" for none)."""
    calls: dict = {}                    # (kernel name, group or node id) -> (ids, lines)
    for node in fused_graph.nodes.values():
        if node.kind in ("param", "const"):
            continue
        cluster = fused_graph.clusters.get(node.group) if node.group else None
        if cluster is not None and cluster.kind == "fused":
            key = (cluster.label, cluster.id)
        else:
            key = (node.op, node.id)
        ids, lines = calls.setdefault(key, ([], {}))
        ids.append(node.id)
        if node.source is not None:
            lines.setdefault(node.line, node.source.source_line.strip())
    origins: dict = {}
    for (name, _), (ids, lines) in calls.items():
        modules = [n.source.module.split(".") for n in map(fused_graph.nodes.get, ids)
                   if n.source is not None and n.source.module]
        origins.setdefault(name, []).append(
            (tuple(ids), tuple(sorted(lines)), tuple(lines[n] for n in sorted(lines)),
             ".".join(_common_prefix(modules))))
    return origins


def _common_prefix(paths: list) -> list:
    """The segments every path in ``paths`` starts with."""
    if not paths:
        return []
    out = []
    for parts in zip(*paths):
        if any(p != parts[0] for p in parts):
            break
        out.append(parts[0])
    return out


def _origin_of_call(origins: dict, name: str, index: int) -> tuple:
    """The ``index``-th call of kernel ``name``: its own origin, or all of them merged when
    the view saw fewer calls than ran."""
    found = origins.get(name, [])
    if index < len(found):
        return found[index]
    ids = tuple(i for o in found for i in o[0])
    lines = dict(pair for o in found for pair in zip(o[1], o[2]))
    module = ".".join(_common_prefix([o[3].split(".") for o in found if o[3]]))
    return ids, tuple(sorted(lines)), tuple(lines[n] for n in sorted(lines)), module


def measure(executable, function: str, tensors: list, tir: dict, origins: dict,
            repeat: int = 5, lock=None, *, device, decisions: Optional[dict] = None,
            fallbacks: tuple = (), plain_vm=None) -> Profile:
    """Profile one call of ``function`` of a compiled ``executable`` on TVM ``tensors``.

    ``tir``: kernel name -> PrimFunc (:func:`tir_functions`); ``origins``: kernel name ->
    (node ids, lines, line texts) per call (:func:`kernel_origins`). ``lock`` serializes the
    VM with other users; ``device`` is the target's (``backend.targets.device_for``).
    ``decisions``: kernel name -> (schedule rule, declined), as the build record has them;
    ``fallbacks``: the build record's, which the profile repeats. ``plain_vm``: the program's
    own VM, used for the whole-call timings instead of a second one (a VM keeps every
    intermediate of a call in its memory pool: tens of MB for a model).
    """
    import contextlib

    from tvm import relax

    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive int, got {repeat!r}")
    dev, decisions = device, decisions or {}
    lib = executable.mod.imports[0] if executable.mod.imports else executable.mod
    # Two VMs, used in turns: one instrumented for the kernels, one plain for the whole call
    # (the instrument's Python callback would slow every VM instruction), so both kinds of
    # sample see the same moments of a busy machine.
    vm = relax.VirtualMachine(executable, device=dev)
    plain_vm = plain_vm if plain_vm is not None else relax.VirtualMachine(executable, device=dev)
    entry, plain = vm[function], plain_vm[function]
    timers: dict = {}
    samples: list = []        # per run: [(name, seconds, args-shapes)]

    def time_kernel(name, args):
        timer = timers.get(name)
        if timer is None:
            once = lib.time_evaluator(name, dev=dev, number=1, repeat=1)(*args).mean
            number = max(1, min(1000, int(_SAMPLE_SECONDS / max(once, 1e-9))))
            timer = timers[name] = lib.time_evaluator(name, dev=dev, number=number, repeat=1)
        return timer(*args).mean

    def instrument(func, symbol, before, ret, *args):
        # The program's kernels only: VM builtins and the shape functions of symbolic sizes
        # are bookkeeping, counted in the whole call's time.
        symbol = str(symbol)
        if before and symbol in tir:
            shapes = [(tuple(a.shape), str(a.dtype)) for a in args if hasattr(a, "shape")]
            samples[-1].append((symbol, time_kernel(symbol, list(args)), shapes))
        return 0   # run the call as usual

    with lock or contextlib.nullcontext():
        entry(*tensors)                      # warm-up: first-touch of the memory plans
        plain(*tensors)
        vm.set_instrument(instrument)
        calls = []
        for _ in range(repeat):
            start = time.perf_counter()
            plain(*tensors)
            calls.append(time.perf_counter() - start)
            samples.append([])
            entry(*tensors)

    if any([n for n, _, _ in run] != [n for n, _, _ in samples[0]] for run in samples):
        raise RuntimeError(f"{function} ran different kernels on the same inputs from one run "
                           f"to the next; its profile cannot be put together")
    kernels = []
    seen: dict = {}                      # kernel name -> calls of it so far
    for index, (name, _, shapes) in enumerate(samples[0]):
        times = [run[index][1] for run in samples]
        work = kernel_work(tir[name], shapes)
        ids, lines, code, module = _origin_of_call(origins, name, seen.get(name, 0))
        seen[name] = seen.get(name, 0) + 1
        rule, declined = decisions.get(name, (None, ()))
        kernels.append(Kernel(name, float(statistics.median(times)),
                              (float(min(times)), float(max(times))), work.flops, work.bytes,
                              lines, ids, code, module, rule, declined))
    return Profile(function, kernels, peaks(), repeat, float(statistics.median(calls)),
                   fallbacks=tuple(fallbacks))


# ---------------------------------------------------------------------- graph overlay
def overlay(graph, profile: Profile):
    """Put each kernel's numbers in its nodes' attributes and tooltip (the plotters draw both;
    the colour is the ``profile`` overlay's look, :func:`overlay_entries`, painted by
    ``viz.paint``)."""
    entries = overlay_entries(profile)
    for nid, node in graph.nodes.items():
        e = entries.get(nid)
        if e is None:
            continue
        node.tooltip = e["text"]
        if not e.get("member"):        # a fused kernel's time is drawn once, on its output
            node.attrs = {**node.attrs, "time": f"{seconds_text(e['seconds'])} "
                                                f"({100 * e['share']:.0f}%)"}
    return graph


def overlay_entries(profile: Profile) -> dict:
    """The ``profile`` overlay layer (``mlclab.viz.overlays``): fused-view node id ->
    ``{kernel, call, seconds, share, fill, text}`` of the kernel call that computes it (``call``:
    its index in ``profile.kernels``, since one kernel may run several times). A fused kernel's
    time belongs to the whole group: its output (the last of its nodes) says it, and each other
    member says it is part of that kernel (``member``), so no member reads as taking it all."""
    out = {}
    for call, k in enumerate(profile.kernels):
        share = profile.share(k)
        text = (f"{k.name}: {seconds_text(k.seconds)} ({100 * share:.0f}% of kernel "
                f"time), {k.flops:,} FLOPs, {k.bytes:,} bytes, {k.gflops:.2f} GFLOP/s, "
                f"{k.gbps:.2f} GB/s, {k.percent_of_roof(profile.peaks):.0f}% of roof "
                f"({k.bound(profile.peaks)}-bound)")
        part = (f"part of fused kernel {k.name} ({len(k.nodes)} nodes); the kernel's time, "
                f"{seconds_text(k.seconds)} ({100 * share:.0f}%), is its whole group's, "
                f"shown on its output")
        for i, nid in enumerate(k.nodes):
            member = i < len(k.nodes) - 1
            out[nid] = {"kernel": k.name, "call": call, "seconds": float(k.seconds),
                        "share": float(share), "fill": heat_colour(share),
                        "text": part if member else text, **({"member": True} if member else {})}
    return out


def overlay_folded(shown, profile: Profile):
    """Say on each folded node of ``shown`` (a folded copy of the fused view, whose ``members``
    say which of its nodes each folded node stands for) by the time of all the kernels folded
    into it, and say it: ``share`` ("41 %", drawn as "layer3 · 41 % of time"), ``time`` and
    ``hottest`` (its slowest kernel) in its attributes, the sums in its tooltip. The sums are
    the ``profile`` overlay layer's aggregate (``mlclab.viz.overlays``), as every display has
    them. A folded ResNet stage thus answers "where does the time go" at a glance."""
    if not shown.members or profile.total_seconds <= 0:
        return shown
    entries = overlay_entries(profile)
    summed = layer_for(shown, "profile", entries)
    for nid, node in shown.nodes.items():
        e = summed.get(nid)
        if node.folded is None or e is None or nid in entries:
            continue
        share = float(e["share"])
        seconds = share * profile.total_seconds
        hottest = entries[e["hottest"]]
        node.attrs = {**node.attrs, "share": f"{100 * share:.0f} %",
                      "time": f"{seconds_text(seconds)} ({100 * share:.0f}%)",
                      "hottest": hottest["kernel"]}
        node.tooltip = (f"{node.op}: {seconds_text(seconds)}, {100 * share:.0f}% of kernel "
                        f"time; hottest {hottest['kernel']} "
                        f"({seconds_text(hottest['seconds'])})")
    return shown


def seconds_text(seconds: float) -> str:
    """``seconds`` with 3 significant digits in s, ms, µs or ns."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
