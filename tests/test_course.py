"""mlclab.exercise: a check runs the student's answer on random inputs drawn from the exercise's
type hints against a reference kept in the package, and says what is wrong without showing the
answer."""
import numpy as np
import pytest

import mlclab
from mlclab.course import EXERCISES, ExerciseHandle, fingerprint
from mlclab.course.result import MIME

MSE_HEAD = 'def mse(pred: Tensor[("n", "m"), f32], target: Tensor[("n", "m"), f32]):\n'


def mse_check(body: str, head: str = MSE_HEAD):
    fn = mlclab.compile(head + body)["mse"]
    return ExerciseHandle(EXERCISES["01-mse"]).check(fn)


def test_a_right_answer_passes_on_random_symbolic_sizes():
    result = mse_check("    diff = pred - target\n    return mean(diff * diff)\n")
    assert result.passed, result
    assert result.to_json() == {"exercise": "01-mse", "status": "passed", "passed": True,
                                "message": result.message}


def test_an_answer_not_yet_run_is_named():
    result = mlclab.exercise("01-mse").check(namespace={})
    assert result.status == "not run" and "`mse` is not defined" in result.message


def test_none_and_the_starter_code_count_as_unchanged():
    assert mlclab.exercise("08-fused-groups").check(None).status == "unchanged"
    starter = MSE_HEAD + "    return mean(pred)      # replace this line\n"
    assert fingerprint("\n" + starter + "\n\n") in EXERCISES["01-mse"].stub_fingerprints
    assert mse_check("    return mean(pred)      # replace this line\n").status == "unchanged"


def test_a_known_misconception_is_named_as_a_concept():
    result = mse_check("    return sum((pred - target) * (pred - target))\n")
    assert result.status == "failed"
    assert "sum of squared errors" in result.message and "n·m" in result.message


def test_the_first_wrong_binding_is_named_with_its_line():
    result = mse_check("    d = pred - target\n    s = d + d\n    return mean(s * s)\n")
    assert result.status == "failed"
    assert "`s` (line 3: `s = d + d`)" in result.message


def test_a_fixed_shape_where_the_exercise_is_symbolic_is_the_difference_reported():
    result = mse_check("    return mean(pred)\n", MSE_HEAD.replace('"n", "m"', "8, 10"))
    assert "`pred` is declared Tensor[(8, 10), f32]" in result.message
    assert "Tensor[(n, m), f32]" in result.message


def test_a_probe_names_the_overflow_concept_and_structure_is_checked_after_values():
    head = 'def my_softmax(x: Tensor[("n",), f32]):\n'
    naive = mlclab.compile(head + "    return exp(x) / sum(exp(x))\n")["my_softmax"]
    result = ExerciseHandle(EXERCISES["04-softmax"]).check(naive)
    assert "not shifted by the max" in result.message and "88" in result.message
    twice = mlclab.compile(
        head + "    return exp(x - max(x)) / sum(exp(x - max(x)))\n")["my_softmax"]
    assert "computes exp 2 times" in ExerciseHandle(EXERCISES["04-softmax"]).check(twice).message


def test_a_student_error_is_a_result_not_a_crash():
    def mse(pred, target):
        raise ZeroDivisionError("boom")

    result = ExerciseHandle(EXERCISES["01-mse"]).check(mse)
    assert result.status == "failed" and "raised ZeroDivisionError" in result.message


def test_hints_unlock_one_at_a_time_and_the_result_says_how_many_are_left():
    handle = ExerciseHandle(EXERCISES["01-mse"])
    first = handle.check(namespace={})
    assert "shows hint 1 of 3" in first.text()
    assert handle.hint().text().startswith("Hint 1 of 3")
    assert handle.hint().text().startswith("Hint 2 of 3")
    assert "shows hint 3 of 3" in handle.check(namespace={}).text()
    handle.hint(), handle.hint()
    assert handle.hint().text().startswith("Hint 3 of 3")


def test_a_prediction_is_judged_without_revealing_the_number():
    handle = ExerciseHandle(EXERCISES["08-fused-groups"])
    wrong = handle.check(3)
    assert wrong.status == "failed" and "fewer groups than 3" in wrong.message
    assert not any(str(n) in wrong.message.replace("3", "") for n in range(1, 3))
    assert handle.check(1).passed
    assert "whole number" in handle.check("one").message


@pytest.mark.parametrize("key", sorted(EXERCISES))
def test_no_message_shows_the_reference(key):
    exercise = EXERCISES[key]
    result = ExerciseHandle(exercise).check(lambda *a: np.zeros(3, "float32"))
    shown = result.text() + result._repr_html_() + "".join(exercise.hints)
    if isinstance(exercise.reference, str):
        for line in exercise.reference.strip().splitlines()[1:]:
            assert line.strip() not in shown, (key, line)
    assert result._repr_mimebundle_()[MIME]["passed"] is False


def test_an_unknown_key_names_the_choices():
    with pytest.raises(ValueError, match="01-mse"):
        mlclab.exercise("1-mse")


def test_timing_verdicts_come_from_medians_and_spreads():
    from mlclab.course.timing import Timing, claim, verdict
    steady_fast, steady_slow = Timing([1.0, 1.01, 0.99, 1.0]), Timing([2.0, 2.02, 1.98, 2.0])
    noisy = Timing([1.0, 1.6, 0.8, 1.3, 1.1])
    assert verdict(steady_fast, steady_slow) == "faster"
    assert verdict(steady_slow, steady_fast) == "slower"
    # a 1.0x ratio inside the spread
    assert verdict(Timing([1.1, 1.12, 1.08]), noisy) == "within noise"
    assert claim("TVM", steady_fast, "numpy", steady_slow).startswith(
        "TVM is 2.00x faster than numpy here")
    assert claim("numpy", steady_slow, "TVM", steady_fast).startswith(
        "numpy is 2.00x slower than TVM here")


def test_a_solution_cell_does_not_run(capsys):
    from mlclab.course.solution_magic import NOTICE, SolutionMagics
    magics = SolutionMagics(shell=None)
    magics.solution("", "raise SystemExit('the body ran')")
    assert NOTICE in capsys.readouterr().out


TVM_TEXT = ("Check failed", "ErrorContext", "match_cast", "kMaxFloat16")


def _affine_module(x_shape, w_shape=(8, 3), b_shape=(3,), dtype="float32"):
    from tvm import relax
    from tvm.relax import op as R

    x, w, b = (relax.Var(n, relax.TensorType(s, dtype))
               for n, s in (("x", x_shape), ("w", w_shape), ("b", b_shape)))
    bb = relax.BlockBuilder()
    with bb.function("affine_relu", [x, w, b]):
        bb.emit_func_output(bb.emit(R.nn.relu(R.add(R.matmul(x, w), b))))
    return relax.transform.Normalize()(bb.get())


@pytest.mark.parametrize("module, said", [
    (lambda: _affine_module((4, 9), (9, 3)), 'parameter `x` is declared R.Tensor((4, 9)'),
    (lambda: _affine_module((4, 8), dtype="float64"), 'dtype="float64"'),
    (lambda: _affine_module((4, 8), b_shape=(1, 3)), "parameter `b` is declared"),
])
def test_a_relax_module_declaring_other_shapes_is_told_in_a_sentence(module, said):
    """TVM's argument check would say "Check failed ... match_cast"; the student reads which
    parameter is declared how, and what the exercise passes."""
    result = ExerciseHandle(EXERCISES["03-affine-relu"]).check(module())
    assert result.status == "failed" and said in result.message, result.message
    assert 'relax.TensorType(' in result.message
    assert not any(t in result.message for t in TVM_TEXT), result.message


def _te_kernel(n):
    from tvm import te

    a, b, bias = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B"), \
        te.placeholder((n,), name="bias")
    k = te.reduce_axis((0, n), name="k")
    mm = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="mm")
    out = te.compute((n, n), lambda i, j: te.max(mm[i, j] + bias[j], 0.0), name="out")
    return te.create_prim_func([a, b, bias, out])


def test_a_te_kernel_with_other_buffers_or_name_is_told_in_a_sentence():
    import tvm

    check = ExerciseHandle(EXERCISES["06-mm-bias-relu"]).check
    smaller = _te_kernel(128).with_attr("global_symbol", "mm_bias_relu")   # the check: 256
    result = check(tvm.IRModule({"mm_bias_relu": smaller}))
    assert "buffer `A` is (128, 128) float32" in result.message, result.message
    assert not any(t in result.message for t in TVM_TEXT), result.message
    unnamed = check(tvm.IRModule({"mm_bias_relu": _te_kernel(256)}))      # compiled as "main"
    assert '.with_attr("global_symbol", "mm_bias_relu")' in unnamed.message, unnamed.message


def test_tvm_refusing_an_argument_inside_a_student_function_is_a_sentence():
    """The same refusal from code the check cannot look into: a Python answer calling a
    compiled module whose parameter is declared another shape."""
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(_affine_module((4, 9), (9, 3)), target="llvm"),
                              tvm.cpu())

    def mse(pred, target):
        vm["affine_relu"](*(tvm.runtime.tensor(np.zeros(s, "float32"))
                            for s in ((4, 8), (8, 3), (3,))))
        return np.mean((pred - target) ** 2)

    result = ExerciseHandle(EXERCISES["01-mse"]).check(mse)
    assert "TVM refused the argument `x`: it is declared R.Tensor((4, 9)" in result.message
    assert not any(t in result.message for t in TVM_TEXT), result.message


def test_an_exercise_and_its_result_pickle_by_key():
    import copy
    import pickle

    result = mlclab.exercise("01-mse").check(namespace={})
    again = pickle.loads(pickle.dumps(result))
    assert again.exercise is EXERCISES["01-mse"] and again.message == result.message
    assert copy.deepcopy(result).exercise is EXERCISES["01-mse"]


def test_a_live_check_stops_a_looping_answer_and_names_the_limit():
    import dataclasses
    import time
    exercise = dataclasses.replace(EXERCISES["01-mse"], time_limit_s=0.5)

    def mse(pred, target):
        while True:
            pass

    start = time.monotonic()
    result = ExerciseHandle(exercise).check(mse)
    assert time.monotonic() - start < 30
    assert result.status == "failed"
    assert "after 0.5 s, the time limit of 01-mse" in result.message


def test_a_misspelt_pass_and_a_kernel_count_as_text_get_sentences():
    handle = ExerciseHandle(EXERCISES["08-predict-passes"])
    misspelt = handle.check({"changes": {"LegalizeOp"}, "kernels": 2})
    assert misspelt.status == "failed" and 'did you mean "LegalizeOps"?' in misspelt.message
    text = handle.check({"changes": {"LegalizeOps"}, "kernels": "2"})
    assert text.status == "failed" and 'not the text "2"' in text.message
    assert "TypeError" not in text.message


def test_the_checker_judges_data_and_never_a_claimed_verdict():
    from mlclab.course import checker, export
    source = MSE_HEAD + "    d = pred - target\n    return mean(d * d)\n"
    namespace = {"mse": mlclab.compile(source)["mse"], "predicted_groups": 1}
    answers = export.answers(["01-mse", "08-fused-groups", "04-softmax"], 7, namespace)
    assert answers["01-mse"] == {"kind": "dsl", "source": source, "name": "mse"}
    results = checker.check_answers(answers, ["01-mse", "08-fused-groups", "04-softmax"], 7)
    assert [results[k].status for k in ("01-mse", "08-fused-groups", "04-softmax")] == \
        ["passed", "passed", "not run"]
    forged = checker.check_answers({"01-mse": {"status": "passed"}, "08-fused-groups": "junk"},
                                   ["01-mse", "08-fused-groups"], 7)
    assert forged["01-mse"].status == "failed"
    assert "names its own verdict" in forged["01-mse"].message
    assert forged["08-fused-groups"].status == "not run"


def test_a_python_answer_is_graded_by_its_values_on_salted_inputs():
    from mlclab.course import checker, export

    def mse(pred, target):
        return np.mean((pred - target) ** 2, dtype=np.float32)

    answers = export.answers(["01-mse"], 11, {"mse": mse})
    assert answers["01-mse"]["kind"] == "outputs"
    assert checker.check_answers(answers, ["01-mse"], 11)["01-mse"].passed
    # values recorded for other inputs (a lookup table from the live check's seed) do not pass
    stale = export.answers(["01-mse"], 0, {"mse": mse})
    assert not checker.check_answers(stale, ["01-mse"], 11)["01-mse"].passed


def test_a_handed_in_reference_schedule_is_refused_and_an_untouched_one_is_unchanged():
    from mlclab.course import checker, export
    from mlclab.course.catalog.performance import _reference_schedule
    record = export.answers(["07-schedule"], 1, {"my_schedule": _reference_schedule})
    result = checker.check_answers(record, ["07-schedule"], 1)["07-schedule"]
    assert result.status == "failed" and "reference schedule" in result.message
    untouched = export.answers(["07-schedule"], 1, {"my_schedule": lambda sch: None})
    assert checker.check_answers(untouched, ["07-schedule"], 1)["07-schedule"].status == "unchanged"


def test_a_module_is_graded_by_its_values_and_its_script():
    """IR objects cannot be serialised in this TVM: a module leaves the sandbox as its values on
    the graded inputs plus its script text (the exercise's evidence), which the structure check
    reads."""
    import tvm
    from tvm import te
    from mlclab.course import checker, export
    n = 256
    a, b = te.placeholder((n, n), "float32", name="A"), te.placeholder((n, n), "float32", name="B")
    bias = te.placeholder((n,), "float32", name="bias")
    k = te.reduce_axis((0, n), name="k")
    mm = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="mm")
    out = te.compute((n, n), lambda i, j: te.max(mm[i, j] + bias[j], 0.0), name="out")
    func = te.create_prim_func([a, b, bias, out]).with_attr("global_symbol", "mm_bias_relu")
    module = tvm.IRModule({"mm_bias_relu": func})
    record = export.answers(["06-mm-bias-relu"], 3, {"scheduled_mod": module})
    assert record["06-mm-bias-relu"]["kind"] == "outputs"
    assert "evidence" in record["06-mm-bias-relu"]
    result = checker.check_answers(record, ["06-mm-bias-relu"], 3)["06-mm-bias-relu"]
    assert result.status == "failed" and "no loop is vectorized" in result.message
