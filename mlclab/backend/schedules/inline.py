"""Inlining the producers of a fused function without duplicating work (the first step
of every schedule rule)."""
from __future__ import annotations

import functools

from ...ops.strict import is_fence
from .tir_util import is_reduction, try_inline


def inline_producers(sch, blocks) -> None:
    """Inline the spatial blocks that feed later blocks (an elementwise chain, an
    epilogue) so each is computed where it is used -- where that duplicates no work.
    Blocks before the first reduction stay: an inlined padding block would put a bounds
    check in the innermost reduction loop."""
    first_reduction = next((k for k, b in enumerate(blocks) if is_reduction(sch, b)), None)
    start = 0 if first_reduction is None else first_reduction + 1
    for b in blocks[start:-1]:  # the last block writes the output: it can't be inlined
        if not is_reduction(sch, b) and _inlining_is_free(sch, b):
            try_inline(sch, b)


def inline_elementwise_prologue(sch, blocks) -> list:
    """Inline the element-wise blocks before the first reduction into their consumers too,
    where that duplicates no work, when each reads its inputs at its own position (no
    padding, which would put a bounds check in the reduction loop); returns the blocks
    left.  PyTorch's safe softmax asks per row whether any score is finite: three
    full-size boolean passes (equal, not, cast) before a max, 0.1-0.8 ms for MobileViT's
    4 x 4 x 256 x 256 scores, where one pass of the max reads the scores alone."""
    first_reduction = next((k for k, b in enumerate(blocks) if is_reduction(sch, b)), None)
    if first_reduction is None:
        return blocks
    kept = []
    for k, b in enumerate(blocks):
        if k < first_reduction and _reads_at_own_position(sch, b) and \
                _inlining_is_free(sch, b) and _inlined(sch, b):
            continue
        kept.append(b)
    return kept


def _reads_at_own_position(sch, block) -> bool:
    """Whether every input of a spatial block is read at exactly the block's iterators, in
    order (an element-wise operation), or at none of them (a scalar)."""
    node = sch.get(block)
    if is_reduction(sch, block) or len(node.writes) != 1:
        return False
    own = [iv.var for iv in node.iter_vars]
    for region in node.reads:
        indices = [r.min for r in region.region]
        if not (len(indices) == len(own) and all(i.same_as(v) for i, v in zip(indices, own))):
            return False
    return True


def _inlined(sch, block) -> bool:
    try:
        sch.compute_inline(block)
    except Exception:  # a pattern compute_inline refuses: the block stays, always correct
        return False
    return True


# ---------------------------------------------------------------------------------------
# inlining without duplicated work
#
# Inlining a producer copies its expression into every place a consumer reads it.  Read
# once per element, that saves a round trip through memory; read twice (``y = y + y``,
# ``h * sigmoid(h)``, or once under ``tanh``, whose LLVM lowering uses its argument 5
# times), the work doubles -- and along a chain it compounds: inlining every link of
# ``h = tanh(h)`` made 8 links take 81 s to compile and 30 links of ``y = y + y`` abort
# with std::bad_alloc.  So a producer is inlined only when that evaluates it at most once
# per element, or when it is so small (one operation on loads and constants) that
# recomputing it is cheaper than storing it; once inlined it is no longer that small, so
# the copies cannot compound.  Everything else stays materialised in its own buffer, as
# TVM's unscheduled code has it, and every expression stays linear in the program's size.

# The most expression nodes (operations, loads, constants; not index arithmetic) a producer
# may have and still be recomputed at each read: ``x * 0.5`` is 3.
CHEAP_NODES = 3

# Read once is not always free.  mlclab's vector sigmoid, SiLU and tanh (backend/fast_math.py)
# bind their intermediates with ``Let``, so each link reads its input once -- but TVM's LLVM
# code generator hands every Let's value to its arithmetic analyzer (``analyzer_->Bind``),
# whose simplifier substitutes the values of the Lets bound before it, and whose bound
# analyses then walk that DAG as a tree.  A Let whose value holds the previous link's Lets
# costs that link's expansion again, so the cost multiplies with every link: 5 links of
# ``h = sigmoid(h * 0.9 + 0.1)`` in one expression took over 300 s to compile.  A buffer
# load stops the substitution, so a producer stays materialised when inlining it would nest
# Lets (counted through their values) deeper than this; one sigmoid is 2, two are 3.
MAX_LET_NESTING = 3


def _inlining_is_free(sch, block) -> bool:
    """Whether inlining ``block`` into its consumers evaluates nothing more than once per
    element (or only something cheaper than a store and a load)."""
    store = sch.get(block).body
    if not _is_store(store):
        return False
    if _size(store.value) <= CHEAP_NODES:
        return True
    buffer = sch.get(block).writes[0].source
    nesting = _let_nesting(store.value)
    reads = 0
    for consumer in sch.get_consumers(block):
        body = sch.get(consumer).body
        if not _is_store(body):
            return False
        reads += _evaluations(body.value, lambda node: _is_load_of(node, buffer))
        if nesting and _let_nesting(body.value, buffer, nesting) > MAX_LET_NESTING:
            return False
    return reads <= 1


def _let_nesting(expr, buffer=None, loaded: int = 0) -> int:
    """How deeply ``expr``'s Lets nest through their values (a Let inside another Let's value
    counts one more; its body does not), with a load of ``buffer`` counted as ``loaded``: the
    nesting ``expr`` would have with that producer inlined.  Linear in the DAG."""
    from tvm.tirx import Let

    def is_producer(node) -> bool:
        return buffer is not None and _is_load_of(node, buffer)

    def nesting(node, folded) -> int:
        if is_producer(node):
            return loaded
        depth = max((folded(c) for c in _operands(node, True)), default=0)
        return max(depth, 1 + folded(node.value)) if isinstance(node, Let) else depth

    return _fold(expr, lambda node: [] if is_producer(node) else _operands(node, True), nesting)


def _is_store(stmt) -> bool:
    from tvm.tirx import BufferStore

    return isinstance(stmt, BufferStore)


def _is_load_of(node, buffer) -> bool:
    from tvm.ir.expr import TensorLoad as BufferLoad  # what tirx.BufferLoad(...) builds

    return isinstance(node, BufferLoad) and node.source.same_as(buffer)  # source: the buffer


def _size(expr) -> int:
    """The nodes of ``expr`` outside index arithmetic; a call to an intrinsic counts as
    more than cheap."""
    from tvm.ir import Call

    return _evaluations(expr, lambda node: 0 if is_fence(node) else
                        CHEAP_NODES + 1 if isinstance(node, Call) else 1, indices=False)


def _evaluations(expr, count, indices: bool = True) -> int:
    """The sum of ``count(node)`` over ``expr`` read as a tree -- each shared node counted as
    often as it is reached, and each intrinsic's argument as often as its lowering uses it
    -- computed over the DAG in linear time."""
    from tvm.ir import Call
    from tvm.ir.expr import TensorLoad as BufferLoad  # what tirx.BufferLoad(...) builds

    def operands(node):
        return _operands(node, indices or not isinstance(node, BufferLoad))

    def total(node, folded) -> int:
        uses = (_argument_uses(node.op.name)
                if isinstance(node, Call) and hasattr(node.op, "name") else 1)
        return int(count(node)) + uses * sum(folded(c) for c in operands(node))

    return _fold(expr, operands, total)


def _fold(expr, operands, combine):
    """``combine(node, folded)`` for every node of ``expr``'s DAG, each once, its operands
    first (``folded(child)`` is a child's result); the root's result."""
    memo = {}
    # An explicit stack, not recursion: a chain of a few hundred inlined links nests deeper
    # than Python's recursion limit.
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        key = node.__chandle__()
        if key in memo:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in operands(node))
            continue
        memo[key] = combine(node, lambda child: memo[child.__chandle__()])
    return memo[expr.__chandle__()]


# The fields of a TIR expression that hold its operands.
_OPERAND_FIELDS = ("a", "b", "value", "condition", "true_value", "false_value", "args",
                   "base", "stride", "body")


def _operands(node, with_indices: bool):
    from tvm.ir.expr import Expr

    if is_fence(node):      # strict math's fence emits no instruction: only its operand counts
        yield node.args[1]
        return

    fields = _OPERAND_FIELDS + (("indices",) if with_indices else ())
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, Expr):
            yield value
        elif value is not None and type(value).__name__ == "Array":
            yield from (item for item in value if isinstance(item, Expr))


@functools.cache
def _argument_uses(op_name: str) -> int:
    """How many times LLVM's lowering of the intrinsic ``op_name`` evaluates its argument:
    1 for ``exp`` (one LLVM intrinsic), 5 for ``tanh`` (a select over two exp formulas).
    Asked of TVM's own lowering rather than listed, so a new operator can't be missed."""
    import tvm
    from tvm import tirx

    x = tirx.Var("x", "float32")
    try:
        call = tirx.call_intrin("float32", op_name, x)
        func = tirx.PrimFunc([x], tirx.Evaluate(call)).with_attrs(
            {"target": tvm.target.Target("llvm"), "global_symbol": "probe"})
        lowered = tirx.transform.LowerIntrin()(tvm.IRModule({"probe": func}))["probe"]
        return max(1, _evaluations(lowered.body.value,
                                   lambda node: isinstance(node, tirx.Var) and node.same_as(x)))
    except Exception:  # not a unary float intrinsic (if_then_else, a cast, ...): read once
        return 1

