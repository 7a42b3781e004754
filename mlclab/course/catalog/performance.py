"""Lesson 7's exercise: schedule a naive matmul; graded first on its values, then on its fraction
of this machine's roof, measured against a reference schedule in the same run (so a busy machine
slows both, and the bar moves with it).

The roof is one core's peak as ``peaks()`` measures it (a graded run is single-threaded, so its
FMA kernel runs on one core): on this AVX-512 Zen 5 core, two 16-lane FMAs a cycle, ~267 GFLOP/s.
The reference is register-tiled at the CPU's full vector width: 8 rows x 2 vectors of C (8 x 32
float32 with AVX-512; 4 rows with AVX2's 16 registers) accumulate in registers (a local
cache_write) while k sweeps, the rows, vectors and k (by 4) unrolled.  Timed interleaved on one
loaded core it reached ~88 % of the roof (rounds 86-90 %).  B packed into column panels was
slower at N = 256 (~78 %: the copy runs every call and costs more than the strided rows of B,
which stay in L1/L2).  The same tile at 8 lanes, half of AVX-512's width, reached ~0.53x the
reference and a loop reorder alone ~0.37x, so the bar (PASS_FRACTION of the reference, ~65 % of
the roof) asks for registers and full vectors."""
import functools

import numpy as np

from ..spec import Exercise, Misconception, Note, Unanswered

N = 256
PASS_FRACTION = 0.75       # of the reference schedule's fraction of the roof, measured alongside


def naive_module():
    import tvm
    from tvm import te
    A = te.placeholder((N, N), "float32", name="A")
    B = te.placeholder((N, N), "float32", name="B")
    k = te.reduce_axis((0, N), name="k")
    C = te.compute((N, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([A, B, C])})


def _reference_schedule(sch):
    from ...backend.passes import resolve_target
    from ...backend.schedules import vector_lanes
    lanes = vector_lanes(resolve_target("llvm"))    # the full vector width: 16 with AVX-512
    # rows x 2 vectors of C accumulate in registers, with two vectors of B and one broadcast of
    # A beside them: 19 of AVX-512's 32 vector registers at 8 rows; AVX2 has 16, so 4 rows.
    rows, cols = (8 if lanes >= 16 else 4), 2 * lanes
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [None, rows])
    jo, ji = sch.split(j, [None, cols])
    sch.reorder(io, jo, k, ii, ji)
    local = sch.cache_write(block, 0, "local")      # the tile of C, written back once
    sch.reverse_compute_at(local, jo)
    vectors, lane = sch.split(ji, [None, lanes])
    sch.unroll(ii)
    sch.unroll(vectors)
    sch.vectorize(lane)
    sch.decompose_reduction(block, k)                # block is now the update, k its loop 2
    # k unrolled by 4: neutral on AVX-512 here, +2 % with AVX2; it also keeps this trace apart
    # from the lesson's solution's on an AVX2 CPU, where both tiles are 4 rows x 2 vectors.
    _, k_inner = sch.split(sch.get_loops(block)[2], [None, 4])
    sch.unroll(k_inner)
    sch.vectorize(sch.get_loops(local)[-1])


def build(schedule):
    """The naive matmul with ``schedule(sch)`` applied, compiled for this CPU."""
    import tvm
    from tvm.s_tir import Schedule
    from ...backend.passes import resolve_target
    sch = Schedule(naive_module())
    schedule(sch)
    if not sch.trace.insts:
        raise Unanswered("`my_schedule` applies no schedule step yet: the matmul is still the "
                         "naive loop nest. Write your steps in the exercise cell and run it.",
                         "unchanged")
    return tvm.compile(sch.mod, target=resolve_target("llvm"))


def reference_trace() -> str:
    """The reference schedule's trace as JSON: a graded answer that is this, step for step, is the
    package's schedule handed in, not the student's."""
    from tvm.s_tir import Schedule
    from ..traces import trace_json
    sch = Schedule(naive_module())
    _reference_schedule(sch)
    return trace_json(sch.trace)


def _student_build(schedule):
    if not callable(schedule):
        raise Unanswered("`my_schedule` should be a function taking a Schedule, "
                         f"not {type(schedule).__name__}.")
    try:
        return build(schedule)
    except Unanswered:
        raise
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0][:300]
        raise Unanswered(f"your schedule failed: {type(exc).__name__}: {first_line}", "failed")


def _callables(schedule, namespace):
    import tvm
    lib = _student_build(schedule)

    def run(a, b):
        c = tvm.runtime.empty((N, N), "float32", tvm.cpu())
        lib["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
        return c.numpy()

    return {"your scheduled matmul": run}


def fraction_of_roof(ms: float) -> float:
    from ...inspect.profile import peaks
    return 2 * N**3 / (ms / 1e3) / 1e9 / peaks().gflops


def _fast_enough(schedule):
    import tvm
    from ..timing import measure
    libs = {"yours": _student_build(schedule), "reference": build(_reference_schedule)}
    rng = np.random.default_rng(0)
    a, b = (tvm.runtime.tensor(rng.standard_normal((N, N), dtype="float32")) for _ in range(2))
    c = tvm.runtime.empty((N, N), "float32", tvm.cpu())
    # Interleaved rounds: each side's median over the same stretch of machine load.
    times = {name: [] for name in libs}
    for _ in range(3):
        for name, lib in libs.items():
            call = functools.partial(lib["main"], a, b, c)
            times[name].extend(measure(call, min_repeats=5, budget_s=0.5).times)
    from ..timing import Timing
    yours, reference = Timing(times["yours"]), Timing(times["reference"])
    mine, bar = fraction_of_roof(yours.median_ms), fraction_of_roof(reference.median_ms)
    noise = max(yours.spread, reference.spread) / 2
    measured = (f"your kernel: {yours} = {mine:.1%} of this machine's roof; a register-tiled "
                f"schedule timed interleaved with it: {reference} = {bar:.1%} (noise about "
                f"±{noise:.0%})")
    if mine >= PASS_FRACTION * bar:
        return Note(f"{measured[0].upper()}{measured[1:]}: {mine / bar:.2f}x the tuned "
                    f"schedule's speed, over the bar of {PASS_FRACTION:.2f}x")
    return (f"right values, but too slow: {measured}; the bar is {PASS_FRACTION:.0%} of the tuned "
            "schedule's. Where does the time go: the loop order's memory access, the missing "
            "vector lanes, values that could stay in registers?")


MATMUL_SCHEDULE = Exercise(
    key="07-schedule", title="Lesson 7: make the matmul fast", answer="my_schedule",
    reference=lambda a, b: (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32),
    signature=f"a: Tensor[({N}, {N}), f32], b: Tensor[({N}, {N}), f32]",
    adapt=_callables, trials=2, rtol=1e-4, atol=1e-3, submit="schedule", time_limit_s=300,
    misconceptions=[Misconception(lambda a, b: np.zeros((N, N), np.float32),
                                  "the result is all zeros: did a decompose_reduction or "
                                  "compute_at move the initialisation after the update?")],
    structure=[_fast_enough],
    hints=["Order first: make the innermost loop walk B and C along a row (j innermost, k "
           "outside it).",
           "Tile i and j (split each, then reorder) so a block of C stays in cache while k runs.",
           "Then keep a small tile of C in registers while k runs: 4 rows x 2 vectors, "
           "sch.cache_write(block, 0, \"local\") placed with reverse_compute_at, the rows "
           "unrolled and the lanes vectorized at this CPU's full width: "
           "mlclab.backend.schedules.vector_lanes(resolve_target(\"llvm\")) float32 lanes "
           "(16 with AVX-512, 8 with AVX2)."],
)

EXERCISES = [MATMUL_SCHEDULE]
