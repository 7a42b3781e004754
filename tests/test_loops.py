"""for t in range(N) with literal bounds, unrolled when the program is checked."""
import numpy as np
import pytest

import mlclab
from mlclab import DSLError
from mlclab.frontend.parser import parse_program
from mlclab.frontend.statements import MAX_UNROLLED

rng = np.random.default_rng(0)


def compiled(src):
    prog = mlclab.compile(src)
    return prog[list(prog)[-1]]


def test_unrolled_rnn_of_64_steps_matches_numpy():
    src = ("def rnn(x: Tensor[(64, 2, 8), f32], w: Tensor[(16, 16), f32],\n"
           "        u: Tensor[(8, 16), f32], b: Tensor[(16,), f32], h0: Tensor[(2, 16), f32]):\n"
           "    h = h0\n"
           "    for t in range(64):\n"
           "        h = tanh(h @ w + x[t] @ u + b)\n"
           "    return h\n")
    shapes = [(64, 2, 8), (16, 16), (8, 16), (16,), (2, 16)]
    args = [rng.uniform(-0.3, 0.3, s).astype("float32") for s in shapes]
    x, w, u, b, h = args
    for t in range(64):
        h = np.tanh(h @ w + x[t] @ u + b)
    f = compiled(src)
    np.testing.assert_allclose(f(*args), h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f.reference(*args), h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("head,indices", [
    ("range(4)", range(4)), ("range(1, 4)", range(1, 4)), ("range(6, 0, -2)", range(6, 0, -2)),
    ("range(3, 3)", range(3, 3)), ("range(2 * 2)", range(4))])
def test_range_literals_and_the_loop_variable_as_an_int(head, indices):
    src = ("def f(x: Tensor[(7, 3), f32]):\n"
           "    y = x[0] * 0.0\n"
           f"    for i in {head}:\n"
           "        y = y + x[i] * (i + 1) + x[i:i + 1, ::-1][0]\n"
           "    return y\n")
    x = rng.uniform(-1, 1, (7, 3)).astype("float32")
    want = x[0] * 0
    for i in indices:
        want = want + x[i] * (i + 1) + x[i:i + 1, ::-1][0]
    np.testing.assert_allclose(compiled(src)(x), want, rtol=1e-5, atol=1e-6)


def test_nested_loops_and_if_in_the_body():
    src = ("def f(x: Tensor[(3, 3), f32]):\n"
           "    s = x[0, 0] * 0.0\n"
           "    for i in range(3):\n"
           "        for j in range(i):\n"
           "            s = s + x[i, j]\n"
           "        if s > 0.0:\n"
           "            s = s * 0.5\n"
           "        else:\n"
           "            s = s - 1.0\n"
           "    return s\n")
    x = rng.uniform(-1, 1, (3, 3)).astype("float32")
    s = np.float32(0)
    for i in range(3):
        for j in range(i):
            s = s + x[i, j]
        s = s * np.float32(0.5) if s > 0 else s - np.float32(1)
    np.testing.assert_allclose(compiled(src)(x), s, rtol=1e-5, atol=1e-6)


def test_unrolled_bindings_point_at_the_body_lines():
    program = parse_program("def f(x: Tensor[(3,), f32]):\n"
                            "    for t in range(3):\n"
                            "        x = x * 2.0\n"
                            "    return x\n")
    body = program.functions["f"].body
    assigns = [s for s in body if type(s).__name__ == "Assign"]
    assert len(assigns) == 3
    assert all(a.span.lineno == 3 and a.value.span.lineno == 3 for a in assigns)


def test_the_cap_counts_nested_iterations():
    ok = "def f(x: Tensor[(1,), f32]):\n    for t in range(%d):\n        x = x + 1.0\n    return x"
    parse_program(ok % MAX_UNROLLED)
    with pytest.raises(DSLError, match="more than 10000 iterations"):
        parse_program(ok % (MAX_UNROLLED + 1))


@pytest.mark.parametrize("body,phrase", [
    ("    for t in range(n):\n        x = x + 1.0\n    return x", "not defined"),
    ("    for t in range(x):\n        x = x + 1.0\n    return x", "range needs int literals"),
    ("    for t in range(2.0):\n        x = x + 1.0\n    return x", "range needs int literals"),
    ("    for t in range(1, 2, 0):\n        x = x + 1.0\n    return x", "non-zero step"),
    ("    for t in [1, 2]:\n        x = x + 1.0\n    return x", "runs over range(N)"),
    ("    for t in range(3):\n        continue\n    return x", "continue is not supported"),
    ("    for a, b in range(3):\n        x = x + 1.0\n    return x", "one name"),
    ("    for t in range(3):\n        x = x + 1.0\n    else:\n        x = x\n    return x",
     "for ... else"),
    ("    while True:\n        x = x + 1.0\n    return x", "while loops"),
    ("    for x in range(3):\n        y = x\n    return x", "would hide the tensor x"),
])
def test_dynamic_loops_are_located_errors(body, phrase):
    with pytest.raises(DSLError) as info:
        mlclab.compile("def f(x: Tensor[(3,), f32]):\n" + body)
    assert phrase in str(info.value) and not info.value.internal
    assert info.value.lineno in (2, 3)
