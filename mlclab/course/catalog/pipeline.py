"""Lesson 8's second exercise: predict what the pipeline will do to a program, checked against
the pipeline (so the answer follows mlclab's passes if they change; it is never printed)."""
import difflib

from ..spec import FAILED, Exercise, Unanswered

HEAD = """
def head(x: Tensor[("n", 16), f32], w: Tensor[(16, 8), f32], b: Tensor[(8,), f32]):
    h = relu(x @ w + b)
    return softmax(h * 2.0)
"""

# The passes the prediction is about, and what to think about when a prediction of one is wrong.
CANDIDATES = {
    "mlclab.FoldBatchNorm": "it folds an inference batch_norm with constant statistics into the "
                            "convolution before it: is there one here?",
    "mlclab.BlockConvLayout": "it re-lays out convolutions (and what runs between them) in "
                              "NCHW[x]c: does this program convolve?",
    "LegalizeOps": "every high-level operator needs a TensorIR implementation before code can be "
                   "made.",
    "FoldConstant": "it evaluates at compile time what depends on constants alone: does any value "
                    "here depend only on constants?",
    "FuseOps": "it groups neighbouring operators by their patterns: are there elementwise "
               "operators next to an anchor?",
    "FuseTIR": "it merges each group FuseOps made into one PrimFunc: were there groups?",
    "RewriteDataflowReshape": "it turns reshapes that only relabel memory into views: is there a "
                              "reshape left after legalization?",
}


def _pipeline_facts(source: str, name: str):
    from tvm import relax
    from ...api import compile as compile_program
    steps = compile_program(source)[name].pipeline()
    changed = {s.name for s in steps if s.changed and s.name in CANDIDATES}
    fused = steps["FuseTIR"].mod
    kernels = sum(1 for f in fused.functions.values() if not isinstance(f, relax.Function))
    return changed, kernels


def _judge_prediction(prediction, namespace):
    if not isinstance(prediction, dict) or set(prediction) != {"changes", "kernels"}:
        raise Unanswered('`prediction` should be a dict {"changes": {pass names}, '
                         '"kernels": a number}.')
    said, kernels = prediction["changes"], prediction["kernels"]
    if (not isinstance(said, (set, frozenset, list, tuple))
            or not all(isinstance(p, str) for p in said)):
        raise Unanswered('prediction["changes"] should be a set of pass names.')
    unknown = sorted(set(said) - set(CANDIDATES))
    if unknown:
        close = {name: difflib.get_close_matches(name, CANDIDATES, n=1, cutoff=0.6)
                 for name in unknown}
        named = "; ".join(f'"{name}" (did you mean "{close[name][0]}"?)' if close[name]
                          else f'"{name}"' for name in unknown)
        raise Unanswered(f"{named}: not one of the passes asked about ({', '.join(CANDIDATES)}).",
                         FAILED)
    if isinstance(kernels, bool) or not isinstance(kernels, int):
        shown = (f'the text "{kernels}"' if isinstance(kernels, str)
                 else f"a {type(kernels).__name__}")
        raise Unanswered(f'prediction["kernels"] should be a whole number (like 3), not {shown}.',
                         FAILED)
    changed, actual_kernels = _pipeline_facts(HEAD, "head")
    for name in CANDIDATES:                      # pipeline order: the first wrong one is named
        if (name in said) != (name in changed):
            verb = "changes" if name in said else "does not change"
            return f"you said {name} {verb} `head`; look again: {CANDIDATES[name]}"
    if kernels != actual_kernels:
        direction = "fewer" if kernels > actual_kernels else "more"
        return (f"the passes are right, but FuseTIR leaves {direction} kernels than {kernels}: "
                "count the anchors (a matmul, a reduction such as softmax's) — each starts its "
                "own group.")
    return None


PIPELINE_PREDICTION = Exercise(
    key="08-predict-passes", title="Lesson 8: predict what the pipeline does", answer="prediction",
    reference=None, judge=_judge_prediction,
    hints=["Go through the candidates in pipeline order and ask of each: is there anything in "
           "`head` this pass looks for?",
           "`head` has no convolution, no batch norm and no constant-only value.",
           "For the kernels: the matmul and softmax are anchors; elementwise operators join a "
           "neighbour."],
)

EXERCISES = [PIPELINE_PREDICTION]
