"""Symbolic sizes are checked at call time against what every operator needs: a kernel larger
than its input, an empty max/min or a result larger than the machine's memory is a clear
error before TVM runs (it returned uninitialised memory, or died in bad_alloc)."""
import numpy as np
import pytest

import mlclab
from mlclab.api.shapes import available_memory, check_sizes

CNN = """def cnn(x: Tensor[("n", 1, "h", "w"), f32], k: Tensor[(2, 1, 3, 3), f32]):
    y = conv2d(x, k)
    return flatten(y) + 1.0

def outer(img: Tensor[("b", 1, "s", "s"), f32], k: Tensor[(2, 1, 3, 3), f32]):
    return cnn(img, k)
"""


@pytest.fixture(scope="module")
def prog():
    return mlclab.compile(CNN)


def kernel():
    return np.ones((2, 1, 3, 3), "f4")


@pytest.mark.parametrize("shape, message", [
    ((1, 1, 1, 1), "conv2d at line 2 needs h >= 3 and w >= 3; x has h=1, w=1"),
    ((1, 1, 1, 100), "conv2d at line 2 needs h >= 3; x has h=1"),
    ((1, 1, 2, 5), "conv2d at line 2 needs h >= 3; x has h=2"),
])
def test_an_image_smaller_than_the_kernel_is_a_value_error(prog, shape, message):
    for call in (prog["cnn"], prog["cnn"].reference):
        with pytest.raises(ValueError) as info:
            call(np.ones(shape, "f4"), kernel())
        assert str(info.value) == message


def test_sizes_checked_inside_a_called_function(prog):
    with pytest.raises(ValueError, match=r"conv2d at line 2 needs h >= 3 and w >= 3; img has s=2"):
        prog["outer"](np.ones((1, 1, 2, 2), "f4"), kernel())


def test_sizes_that_fit_and_empty_batches_still_run(prog):
    x = np.random.default_rng(0).standard_normal((2, 1, 3, 4)).astype("f4")
    np.testing.assert_allclose(prog["cnn"](x, kernel()), prog["cnn"].reference(x, kernel()),
                               rtol=1e-5, atol=1e-5)
    assert prog["cnn"](np.ones((0, 1, 5, 5), "f4"), kernel()).shape == (0, 18)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_of_nothing_raise_like_numpy(op):
    f = mlclab.compile(f"def r(a: Tensor[(\"n\", 3), f32]):\n    return {op}(a, axis=0)\n")["r"]
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        np.max(np.ones((0, 3)), axis=0)
    for call in (f, f.reference):
        with pytest.raises(ValueError, match=f"{op} at line 2: zero-size array to reduction"):
            call(np.ones((0, 3), "f4"))
    # Reducing along the non-empty axis of an empty array is fine, as in numpy.
    g = mlclab.compile(f"def r(a: Tensor[(\"n\", 3), f32]):\n    return {op}(a, axis=1)\n")["r"]
    assert g(np.ones((0, 3), "f4")).shape == (0,)


def test_a_result_larger_than_memory_is_a_memory_error():
    f = mlclab.compile("def outer_sum(a: Tensor[(\"n\", 1), f32], b: Tensor[(1, \"m\"), f32]):\n"
                       "    return a + b\n")["outer_sum"]
    n = 1 << 20          # a 4 MiB input each, a 4 TiB result
    with pytest.raises(MemoryError, match=r"4,096.0 GiB .* available"):
        f(np.ones((n, 1), "f4"), np.ones((1, n), "f4"))
    assert f(np.ones((3, 1), "f4"), np.ones((1, 2), "f4")).shape == (3, 2)


def test_available_memory_is_known_here():
    have = available_memory()
    assert have is not None and have > 0


def test_check_sizes_reports_the_largest_operator(prog):
    # conv2d on (2, 1, 5, 5): input 200 B + kernel 72 B + result 2*2*3*3*4 = 144 B.
    need = check_sizes(prog.typed, "cnn", {"n": 2, "h": 5, "w": 5}, {})
    assert need == 200 + 72 + 144


def test_validate_draws_sizes_that_fit(prog):
    # Sizes below 3 do not fit the kernel; every seed must find sizes that do.
    for seed in range(12):
        report = mlclab.validate(prog["cnn"], seed=seed)
        assert report.ok and report.sizes["h"] >= 3 and report.sizes["w"] >= 3, report.sizes


def test_validate_refuses_random_inputs_whose_results_are_too_big():
    # Two 78 KiB inputs, but their sum is 1.5 GiB: over the random-input budget.
    f = mlclab.compile("def big(a: Tensor[(20000, 1), f32], b: Tensor[(1, 20000), f32]):\n"
                       "    return a + b\n")["big"]
    with pytest.raises(ValueError, match=r"would need 1,526 MiB for one operator"):
        mlclab.validate(f, seed=1)


def test_validate_says_when_no_sizes_fit():
    # The draw widens up to 640; this kernel needs a width of 1000.
    f = mlclab.compile("def wide(x: Tensor[(1, 1, \"h\", \"w\"), f32], "
                       "k: Tensor[(1, 1, 1, 1000), f32]):\n    return conv2d(x, k)\n")["wide"]
    with pytest.raises(ValueError, match=r"no random sizes for h, w .* needs w >= 1000"):
        mlclab.validate(f, seed=1)


def test_each_called_function_is_size_checked_once_per_sizes(monkeypatch):
    # f20 calls f19 twice, which calls f18 twice, ...: 2**20 walks if each call site were
    # walked again, 21 when a callee is checked once for the sizes it gets.
    lines = ["def f0(a: Tensor[(\"n\",), f32]):\n    return a + 1.0\n"]
    for i in range(1, 21):
        lines.append(f"def f{i}(a: Tensor[(\"n\",), f32]):\n    return f{i - 1}(a) + f{i - 1}(a)\n")
    prog = mlclab.compile("".join(lines))
    from mlclab.api import shapes

    walks = []
    real = shapes._ShapeWalker.function
    monkeypatch.setattr(shapes._ShapeWalker, "function",
                        lambda self, fn, *rest: (walks.append(fn.name), real(self, fn, *rest)))
    check_sizes(prog.typed, "f20", {"n": 3}, {})
    assert len(walks) == 21


@pytest.mark.parametrize("body, args", [
    ("return sum(a, axis=0)", [np.zeros((0, 4), "f4")]),
    ("return mean(a, axis=0)", [np.zeros((0, 4), "f4")]),
    ("return var(a, axis=0)", [np.zeros((0, 4), "f4")]),
    ("return transpose(a) @ a", [np.zeros((0, 4), "f4")]),
])
def test_a_reduction_over_nothing_is_refused_not_left_unset(body, args):
    # TVM's kernels set a reduction's start value inside its loop; over an empty axis the loop
    # never runs and the result held whatever the memory did (different on every call).
    f = mlclab.compile(f'def f(a: Tensor[("n", 4), f32]):\n    {body}\n')["f"]
    with pytest.raises(ValueError, match=r"at line 2 would reduce over nothing: .* a has n=0"):
        f(*args)
    assert f(np.ones((3, 4), "f4")).shape in ((4,), (4, 4))


def test_operators_that_read_an_empty_tensor_on_purpose_still_run():
    f = mlclab.compile('def f(a: Tensor[("n", 4), f32]):\n'
                       '    return sum(a, axis=1), concat((a, a), axis=0) + 1.0, relu(a)\n')["f"]
    s, c, r = f(np.zeros((0, 4), "f4"))
    assert s.shape == (0,) and c.shape == (0, 4) and r.shape == (0, 4)
