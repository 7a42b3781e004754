"""Every class of rejected program: a DSLError at the right line and column, in plain words."""
import pytest

import mlclab
from mlclab import DSLError

HEAD = "def f(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32], i: Tensor[(2, 3), i32]):\n"


def err(body, head=HEAD):
    with pytest.raises(DSLError) as info:
        mlclab.compile(head + body)
    e = info.value
    assert not e.internal, str(e)
    return e


def caret(e):
    """The (column, width) the caret marks in the quoted line."""
    lines = str(e).splitlines()
    quoted, marks = lines[1], lines[2]
    start = len(marks) - len(marks.lstrip())
    return quoted[start:start + marks.count("^")]


CASES = [
    # body, line, col, phrase, the span the caret must mark
    ("    c = a @ a\n    return c", 2, 8, "inner dimensions to match: 3 vs 2", "a @ a"),
    ("    c = a + b\n    return c", 2, 8, "cannot broadcast", "a + b"),
    ("    return a + i", 2, 15, "got f32 (a) and i32 (i)", "i"),
    ("    c = a + i\n    return c", 2, 12, "one dtype", "i"),
    ("    return a / astype(i, f32) + i / i", 2, 32, "use // for integer", "i / i"),
    ("    return relux(a)", 2, 11, "unknown operator 'relux'", "relux"),
    ("    return relu(c)", 2, 16, "name 'c' is not defined", "c"),
    ("    return sum(a, axis=3)", 2, 23, "axis 3 is out of range", "3"),
    ("    return sum(a, axes=1)", 2, 18, "no parameter 'axes'", "axes=1"),
    ("    return softmax()", 2, 11, "missing its argument 'x'", "softmax()"),
    ("    return relu(a, a)", 2, 11, "at most 1 arguments", "relu(a, a)"),
    ("    return reshape(a, (4, 2))", 2, 22, "has 6 elements", "(4, 2)"),
    ("    for k in a:\n        pass\n    return a", 2, 13, "looping over a tensor", "a"),
    ("    while a:\n        pass\n    return a", 2, 4, "while loops", "while a:"),
    ("    import numpy\n    return a", 2, 4, "import is not allowed", "import numpy"),
    ("    return a.T", 2, 11, "use transpose(a)", "a.T"),
    ("    return a.size", 2, 11, "attribute access", "a.size"),
    ("    return a[5]", 2, 13, "index 5 is out of range for axis 0 of size 2", "5"),
    ("    return a[:, -4]", 2, 16, "index -4 is out of range for axis 1", "-4"),
    ("    return a[0, 0, 0]", 2, 13, "too many indices", "0, 0, 0"),
    ("    return a[i]", 2, 13, "not a tensor", "i"),
    ("    return a[::0]", 2, 15, "step cannot be zero", "0"),
    ("    return a[None]", 2, 13, "expand_dims", "None"),
    ("    c = a\n    c[0] = 1.0\n    return c", 3, 4, "where(mask, new, old)", "c[0]"),
    ("    c = a\n    c[0] += 1.0\n    return c", 3, 4, "changed in place", "c[0]"),
    ("    return a * a.shape[0]", 2, 15, "annotation", "a.shape"),
    ("    return [a, a]", 2, 11, "use a tuple: (a, a)", "[a, a]"),
    ("    return transpose(b, 0, 1)", 2, 11, "transpose(b, axes=(1, 0))", "transpose(b, 0, 1)"),
    ("    for t in range(b):\n        a = a + 1.0\n    return a", 2, 19, "range needs int literals",
     "b"),
    ("    for t in range(3):\n        break\n    return a", 3, 8, "break is not supported",
     "break"),
    ("    for t in range(3):\n        return a\n    return a", 3, 8, "return is not supported",
     "return a"),
    ("    for t in range(3):\n        t = a\n    return a", 3, 8, "cannot be assigned", "t"),
    ("    for t in range(200):\n        for s in range(200):\n            a = a + 1.0\n"
     "    return a", 3, 8, "more than 10000 iterations", "for s in range(200):"),
    ("    return log(i)", 2, 15, "floating-point", "i"),
    ("    c = a * 0.5\n    return i * 0.5", 3, 15, "does not promote", "0.5"),
    ("    x = 1\n    return a", 2, 8, "bare number", "1"),
    ("    relu(a)\n    return a", 2, 4, "does nothing", "relu(a)"),
    ("    c = relu(a)", 1, 0, "does not return", "def f"),
    ("    return a\n    c = a", 3, 4, "can never run", "c = a"),
    ("    if a:\n        c = a\n    else:\n        c = a\n    return c", 2, 7, "bool scalar", "a"),
    ("    return a < b < b", 2, 11, "chained comparisons", "a < b < b"),
    ("    return conv2d(a, b)", 2, 18, "NCHW", "a"),
    ("    return lambda: a", 2, 11, "lambda is not part", "lambda: a"),
]


@pytest.mark.parametrize("body,line,col,phrase,span", CASES, ids=[c[3] for c in CASES])
def test_error_is_located_and_explained(body, line, col, phrase, span):
    e = err(body)
    assert phrase in str(e)
    assert (e.lineno, e.col_offset) == (line, col)
    assert caret(e) == span


def test_error_message_layout():
    e = err("    d = a @ a\n    return d")
    lines = str(e).splitlines()
    assert lines[0].startswith("<string>, line 2: '@' needs the inner dimensions to match")
    assert lines[1] == "    d = a @ a"
    assert lines[2] == "        ^^^^^"
    assert lines[3].startswith("hint:")


def test_mixed_dtype_suggests_astype():
    e = err("    return a + i")
    assert "astype(i, f32)" in e.hint


def test_syntax_error_is_a_dsl_error():
    with pytest.raises(DSLError) as info:
        mlclab.compile("def f(a: Tensor[(2,), f32]):\n    return a +\n")
    assert info.value.lineno == 2 and "syntax" in str(info.value)


@pytest.mark.parametrize("src,phrase", [
    ("def f(a):\n    return a", "needs a type annotation"),
    ("def f(a: int):\n    return a", "expected a Tensor annotation"),
    ("def f(a: Tensor[(2,), f99]):\n    return a", "unknown dtype"),
    ("def f(a: Tensor[(2.5,), f32]):\n    return a", "a size is a non-negative int"),
    ("def f(a: Tensor[(2,), f32]) -> Tensor[(3,), f32]:\n    return a", "annotated to return"),
    ("x = 1\ndef f(a: Tensor[(2,), f32]):\n    return a", "only def statements"),
    ("", "no function found"),
    ("def f(a: Tensor[(2,), f32], a: Tensor[(2,), f32]):\n    return a",
     "parameter 'a' is listed twice"),
    ("def f(a: Tensor[(2,), f32]):\n    return a\ndef f(a: Tensor[(2,), f32]):\n    return a",
     "defined twice"),
    ("@staticmethod\ndef f(a: Tensor[(2,), f32]):\n    return a", "only @mlclab.function"),
])
def test_signature_errors(src, phrase):
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    assert phrase in str(info.value)


def test_recursion_is_rejected_at_the_call():
    src = ("def f(a: Tensor[(2,), f32]):\n    return g(a)\n"
           "def g(a: Tensor[(2,), f32]):\n    return f(a) + a\n")
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    assert "recursion" in str(info.value) and "f -> g -> f" in str(info.value)
    assert info.value.lineno == 4


def test_call_between_functions_checks_arguments():
    src = ("def g(x: Tensor[(\"n\", 3), f32]):\n    return relu(x)\n"
           "def f(a: Tensor[(2, 4), f32]):\n    return g(a)\n")
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    assert info.value.lineno == 4 and "parameter x" in str(info.value)


def test_if_branches_must_agree():
    head = "def f(a: Tensor[(2,), f32]):\n    s = sum(a) > 0.0\n"
    e = err("    if s:\n        return a\n    else:\n        c = a\n    return c", head)
    assert "both branches" in str(e)
    e = err("    if s:\n        c = a\n    else:\n        d = a\n    return c", head)
    assert "binds no name" in str(e)
    e = err("    if s:\n        c = a\n        d = a\n    else:\n        c = a\n    return d", head)
    assert "only one branch" in str(e)


def test_symbolic_sizes_must_match_by_name():
    src = "def f(a: Tensor[(\"n\", 3), f32], b: Tensor[(\"m\", 3), f32]):\n    return a + b"
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    assert "symbolic sizes must be the same name" in str(info.value)


def test_error_lines_count_in_the_decorated_functions_file(tmp_path):
    import importlib.util

    path = tmp_path / "model.py"
    path.write_text("import mlclab\nfrom mlclab import Tensor, f32\n\n\n"
                    "@mlclab.function\ndef f(a: Tensor[(2, 3), f32]):\n    return a @ a\n")
    spec = importlib.util.spec_from_file_location("model_under_test", path)
    with pytest.raises(DSLError) as info:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert info.value.lineno == 7 and info.value.filename == str(path)
    assert "    return a @ a" in str(info.value)


def test_dsl_error_pickles_with_its_fields():
    import pickle

    e = err("    return a @ a")
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.lineno, e2.col_offset, str(e2)) == (e.lineno, e.col_offset, str(e))


def test_a_huge_name_gives_a_short_message_that_still_says_which():
    name = "x" * 100_000
    e = err(f"    return {name}")
    text = str(e)
    assert len(text) < 1_000, len(text)
    assert "(100,000 characters)" in text and "is not defined" in text
    assert e.message.count("x") >= 100_000   # the full text stays on the error


def test_a_very_long_line_is_quoted_around_its_caret():
    terms = " + ".join(["a"] * 3000)
    e = err(f"    return {terms} + zz + a")
    assert len(str(e)) < 1_000
    assert caret(e) == "zz"
    assert str(e).splitlines()[1].lstrip().startswith("…")


def test_a_long_line_with_its_error_at_the_start_is_cut_after_it():
    terms = " + ".join(["a"] * 3000)
    e = err(f"    return zz + {terms}")
    assert caret(e) == "zz"
    assert str(e).splitlines()[1].endswith("…")
