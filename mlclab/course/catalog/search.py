"""Lesson 10's design space and exercise: the naive 256 x 256 matmul with its two tile sizes left
to random draws (``sample_perfect_tile``), as MetaSchedule's MultiLevelTiling leaves them, and a
prediction of how many schedules that space holds, counted from the space's own trace."""
from ..spec import FAILED, Exercise, Unanswered
from .performance import N, naive_module
from .performance import _reference_schedule as hand_schedule  # lesson 7's register-tiled matmul

__all__ = ["N", "naive_module", "hand_schedule", "tile_space", "exercise_space", "space_size",
           "tile_draws"]


def tile_space(sch):
    """Register tiling with its two tile sizes drawn at random: a tile of ``rows`` x ``cols`` of C
    accumulates in registers while k sweeps, its rows unrolled and its columns vectorized."""
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    rows = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16)
    cols = sch.sample_perfect_tile(j, n=2, max_innermost_factor=64)
    io, ii = sch.split(i, rows)
    jo, ji = sch.split(j, cols)
    sch.reorder(io, jo, k, ii, ji)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, jo, preserve_unit_loops=True)   # same loops for every draw
    sch.unroll(ii)
    sch.vectorize(ji)
    sch.decompose_reduction(block, k)
    sch.vectorize(sch.get_loops(local)[-1])


def exercise_space(sch):
    """The exercise's space: other limits on the tiles, and the reduction loop tiled too."""
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    rows = sch.sample_perfect_tile(i, n=2, max_innermost_factor=8)
    cols = sch.sample_perfect_tile(j, n=2, max_innermost_factor=256)
    depth = sch.sample_perfect_tile(k, n=2, max_innermost_factor=16)
    io, ii = sch.split(i, rows)
    jo, ji = sch.split(j, cols)
    ko, ki = sch.split(k, depth)
    sch.reorder(io, jo, ko, ki, ii, ji)
    sch.vectorize(ji)


def tile_draws(trace):
    """The ``sample_perfect_tile`` instructions of ``trace``, in order."""
    return [inst for inst in trace.insts if inst.kind.name == "SamplePerfectTile"]


def space_size(space=tile_space) -> int:
    """How many distinct schedules ``space`` can draw: for each 2-way tile draw, the divisors of
    its loop's extent that ``max_innermost_factor`` allows, multiplied. Read from the trace (the
    draws' loops and attributes), so it follows the space if the space changes."""
    from tvm.s_tir import Schedule
    sch = Schedule(naive_module(), seed=1)
    space(sch)
    naive = Schedule(naive_module())
    extents = [int(naive.get(loop).extent) for loop in naive.get_loops(naive.get_sblock("C"))]
    get_loops = next(inst for inst in sch.trace.insts if inst.kind.name == "GetLoops")
    total = 1
    for inst in tile_draws(sch.trace):
        n, max_inner = (int(a) for a in inst.attrs[:2])
        if n != 2:
            raise ValueError("space_size counts 2-way tiles only")
        index = next(p for p, out in enumerate(get_loops.outputs) if out.same_as(inst.inputs[0]))
        extent = extents[index]
        total *= sum(1 for d in range(1, min(extent, max_inner) + 1) if extent % d == 0)
    return total


def _judge_size(answer, namespace):
    if isinstance(answer, bool) or not isinstance(answer, int):
        shown = f'the text "{answer}"' if isinstance(answer, str) else f"a {type(answer).__name__}"
        raise Unanswered(f"`predicted_size` should be a whole number (like 12), not {shown}.",
                         FAILED)
    actual = space_size(exercise_space)
    if answer != actual:
        direction = "more" if answer < actual else "fewer"
        return (f"the space holds {direction} schedules than {answer}: for each "
                "sample_perfect_tile, count the innermost factors it may choose, then multiply.")
    return None


SPACE_SIZE = Exercise(
    key="10-space-size", title="Lesson 10: how big is the design space?", answer="predicted_size",
    reference=None, judge=_judge_size,
    hints=["A 2-way perfect tile of a loop of 256 iterations is a pair (outer, inner) with "
           "outer x inner = 256: choosing the inner factor decides the outer one.",
           "The inner factor must divide 256 and be at most max_innermost_factor: which powers of "
           "two are those?",
           "The draws are independent: the space's size is the product of their counts."],
)

EXERCISES = [SPACE_SIZE]
