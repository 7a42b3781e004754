"""mlclab.exercise: a check runs the student's answer on random inputs drawn from the exercise's type
hints against a reference kept in the package, and says what is wrong without showing the answer."""
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
    twice = mlclab.compile(head + "    return exp(x - max(x)) / sum(exp(x - max(x)))\n")["my_softmax"]
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
    assert verdict(Timing([1.1, 1.12, 1.08]), noisy) == "within noise"     # a 1.0x ratio inside the spread
    assert claim("TVM", steady_fast, "numpy", steady_slow).startswith("TVM is 2.00x faster than numpy here")
    assert claim("numpy", steady_slow, "TVM", steady_fast).startswith("numpy is 2.00x slower than TVM here")


def test_a_solution_cell_does_not_run(capsys):
    from mlclab.course.solution_magic import NOTICE, SolutionMagics
    magics = SolutionMagics(shell=None)
    magics.solution("", "raise SystemExit('the body ran')")
    assert NOTICE in capsys.readouterr().out
