"""Odd or huge programs a student can type: each compiles, or fails with a located DSLError.

Never a traceback from Python's parser, TVM or numpy, never a crash. Deep programs could
overflow a stack, so they run in a fresh interpreter (a crash is a negative return code).
"""
import ast
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlclab
from mlclab import DSLError
from mlclab.lang.recursion import MAX_DEPTH

HEAD = "def f(x: Tensor[(3, 3), f32]):\n"


def rejected(src):
    with pytest.raises(DSLError) as info:
        mlclab.compile(src)
    e = info.value
    assert not e.internal, str(e)
    str(e).encode("utf-8")   # printable, whatever the source held
    return e


def marked(e):
    """The text the caret marks in the quoted line."""
    lines = str(e).splitlines()
    quoted, marks = lines[1], lines[2]
    start = len(marks) - len(marks.lstrip())
    return quoted[start:start + marks.count("^")]


# ---------------------------------------------------------------------- deep programs
DEEP = textwrap.dedent("""
    import json, sys
    import numpy as np, mlclab

    HEAD = "def f(x: Tensor[(4,), f32]):\\n    return "

    def chain(n):
        src = "def f0(x: Tensor[(4,), f32]):\\n    return x + 1.0\\n"
        for i in range(1, n):
            src += f"def f{i}(x: Tensor[(4,), f32]):\\n    return f{i - 1}(x) * 1.0\\n"
        return src

    CASES = {
        "400-term sum": (HEAD + " + ".join(["x"] * 400), 400.0),
        "4000-term sum": (HEAD + " + ".join(["x"] * 4000), 4000.0),
        "300 unary minuses": (HEAD + "-" * 300 + "x", 1.0),
        "3001 unary minuses": (HEAD + "-" * 3001 + "x", -1.0),
        "chain of 400 functions": (chain(400), 2.0),
        "too deep": (HEAD + " + ".join(["x"] * (MAX_DEPTH + 10)), None),
    }
    MAX_DEPTH = mlclab.lang.recursion.MAX_DEPTH
    out = {}
    x = np.ones(4, np.float32)
    for name, (src, want) in CASES.items():
        src = src.replace("MAX_DEPTH", str(MAX_DEPTH))
        try:
            prog = mlclab.compile(src)
            fn = prog[list(prog)[-1]]
            out[name] = [float(fn(x)[0]), float(fn.reference(x)[0]), want]
        except mlclab.DSLError as e:
            out[name] = ["DSLError", e.lineno, str(e).splitlines()[0], e.internal]
    print(json.dumps(out))
""").replace('"too deep": (HEAD + " + ".join(["x"] * (MAX_DEPTH + 10)), None)',
             f'"too deep": (HEAD + " + ".join(["x"] * {MAX_DEPTH + 10}), None)')


@pytest.fixture(scope="module")
def deep_results():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mlclab.__file__)))
    run = subprocess.run([sys.executable, "-c", DEEP], capture_output=True, text=True,
                         timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", ["400-term sum", "4000-term sum", "300 unary minuses",
                                  "3001 unary minuses", "chain of 400 functions"])
def test_deep_programs_compile_and_agree_with_numpy(deep_results, case):
    compiled, reference, want = deep_results[case]
    assert compiled == reference == want


def test_too_deep_a_program_is_a_located_error(deep_results):
    kind, lineno, message, internal = deep_results["too deep"]
    assert kind == "DSLError" and lineno == 2 and not internal
    assert f"nested more than {MAX_DEPTH} levels" in message


def test_a_call_chain_deeper_than_the_vm_can_run_is_a_located_error():
    from mlclab.frontend.calls import MAX_CALL_DEPTH
    from mlclab.frontend.parser import parse_program

    src = "def f0(x: Tensor[(4,), f32]):\n    return x + 1.0\n"
    for i in range(1, MAX_CALL_DEPTH + 1):
        src += f"def f{i}(x: Tensor[(4,), f32]):\n    return f{i - 1}(x) * 1.0\n"
    parse_program(src.rsplit("def ", 1)[0])   # MAX_CALL_DEPTH functions deep: fine
    with pytest.raises(DSLError) as info:
        parse_program(src)
    assert info.value.lineno == 2 * MAX_CALL_DEPTH + 2 and "nest more than" in str(info.value)
    assert marked(info.value) == f"f{MAX_CALL_DEPTH - 1}(x)"


def test_pythons_parser_limits_are_located_errors():
    e = rejected(HEAD + "    return " + "(" * 300 + "x" + ")" * 300 + "\n")
    assert e.lineno == 2 and "too many nested parentheses" in str(e)


def test_checking_a_long_expression_unparses_nothing(monkeypatch):
    """How each argument was written is unparsed only for an error message: doing it for
    every call made checking ``x + x + ... + x`` quadratic in its length."""
    calls = []
    unparse = ast.unparse
    monkeypatch.setattr(ast, "unparse", lambda node: calls.append(1) or unparse(node))
    from mlclab.frontend.parser import parse_program

    parse_program(HEAD + "    return " + " + ".join(["x"] * 300))
    assert calls == []
    with pytest.raises(DSLError, match=r"f32 \(x @ x\) and i32 \(y\)"):
        parse_program(HEAD + "    y = astype(x, i32)\n    return (x @ x) + y")


def test_builder_names_many_temporaries_in_one_pass():
    from mlclab.frontend.parser import parse_program
    from mlclab.backend.builder import build_module

    built = build_module(parse_program(HEAD + "    return " + " + ".join(["x"] * 50)))
    names = [info.name for info in built.bindings["f"].values()]
    assert names == ["x", "lv"] + [f"lv{i}" for i in range(1, 48)] + ["gv"]


# ---------------------------------------------------------------------- symbolic size names
@pytest.mark.parametrize("size,phrase", [
    ('"if"', "'if' is a Python keyword"),
    ('"None"', "'None' is a Python keyword"),
    ('"True"', "'True' is a Python keyword"),
    ('"\ufb01"', "Python reads the name 'ﬁ' as 'fi'"),
    (str(2 ** 63), "does not fit in int64"),
])
def test_bad_symbolic_size_names_are_refused_at_the_annotation(size, phrase):
    e = rejected(f"def f(x: Tensor[({size}, 3), f32]):\n    return x\n")
    assert phrase in str(e)
    assert e.lineno == 1 and marked(e) == size


def test_the_largest_int64_size_is_a_size():
    prog = mlclab.frontend.parser.parse_program(
        f"def f(x: Tensor[({2 ** 63 - 1}, 3), f32]):\n    return x\n")
    assert prog.functions["f"].params[0].type.shape == (2 ** 63 - 1, 3)


# ---------------------------------------------------------------------- literals
@pytest.mark.parametrize("body,phrase,mark", [
    ("x / 1e-50", "division by the literal 1e-50, which is 0 in f32", "1e-50"),
    ("x / 0.0", "division by the literal 0.0:", "0.0"),
    ("x * 1e300 ** 2", "out of range", "1e300 ** 2"),
    ("x * 1e300", "1e+300 is out of range for f32", "1e300"),
    ("x * 1e999", "1e999 is beyond every float dtype (Python reads it as inf)", "1e999"),
    ("x + 10 ** 400", "out of range", "10 ** 400"),
    ("transpose(x, 0)", "must list each of the 2 axes once", "0"),
])
def test_literal_mistakes_are_located(body, phrase, mark):
    e = rejected(HEAD + f"    return {body}\n")
    assert phrase in str(e) and marked(e) == mark


def test_a_tiny_literal_is_fine_where_it_is_not_a_divisor():
    fn = mlclab.compile("def f(x: Tensor[(3,), f64]):\n    return x / 1e-50 + x * 1e300\n")["f"]
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(fn(x), x / 1e-50 + x * 1e300)


# ---------------------------------------------------------------------- odd text
BODY = "    y = x + 1.0  # {}\n    return y @ relu(y, y)\n"


@pytest.mark.parametrize("odd", ["\x1b[31mred\x1b[0m", "a\x0cb", "a\u2028b", "a\u2029b",
                                 "a\x85b", "a\x0bb", "a\x1cb"])
def test_odd_characters_in_a_comment_keep_the_quoted_line(odd):
    e = rejected(HEAD + BODY.format(odd))
    assert e.lineno == 3 and marked(e) == "relu(y, y)"
    assert str(e).splitlines()[1] == "    return y @ relu(y, y)"


def test_a_pasted_colour_escape_compiles_and_draws():
    fn = mlclab.compile(HEAD + "    y = x + 1.0  # \x1b[31mred\x1b[0m\n    return y @ x\n")["f"]
    lines = [info.source_line for info in fn.bindings.values() if info.dsl_name == "y"]
    # ESC shows as its control picture
    assert lines == ["    y = x + 1.0  # \u241b[31mred\u241b[0m"]
    assert "<svg" in fn.graph().svg()


def test_a_lone_surrogate_is_a_located_error():
    e = rejected(HEAD + "    y = x + 1.0  # a\ud800b\n    return y\n")
    assert e.lineno == 2 and "U+D800" in str(e) and marked(e) == "\ufffd"
    assert e.source_line == "    y = x + 1.0  # a\ufffdb"


def test_a_nul_character_is_a_located_error():
    e = rejected(HEAD + "    return x\0\n")
    assert e.lineno == 2 and "NUL" in str(e)


def test_a_byte_order_mark_is_accepted_like_python_does():
    fn = mlclab.compile("\ufeff" + HEAD + "    return x @ x\n")["f"]
    x = np.eye(3, dtype=np.float32)
    np.testing.assert_array_equal(fn(x), x)
    e = rejected("\ufeffdef f(x: Tensor[(3, 3), f32]):\n    return relu(x, x)\n")
    assert e.lineno == 2 and marked(e) == "relu(x, x)"
    e = rejected("\ufeffdef f(x: Tensor[(3, 3), f33]):\n    return x\n")
    assert e.lineno == 1 and marked(e) == "f33"


def test_carets_count_characters_not_utf8_bytes():
    e = rejected(HEAD + "    é = x + 1.0  # café\n    return é @ relu(é, é)\n")
    assert marked(e) == "relu(é, é)"


def test_line_ends_follow_pythons_tokenizer():
    from mlclab.lang.source import line_at, source_lines

    text = "a\r\nb\rc\x0cd\u2028e\nf"
    assert source_lines(text) == ["a", "b", "c\x0cd\u2028e", "f"]
    assert [line_at(text, n) for n in (0, 1, 4, 5)] == ["", "a", "f", ""]
    assert source_lines("\ufeffx = 1\n") == ["x = 1", ""]


# ---------------------------------------------------------------------- the frontend's fallback
@pytest.mark.parametrize("body,phrase,mark", [
    ("    return {x}\n", "a set is not part of tinynn", "{x}"),
    ("    return x if x else x\n", "conditional expression", "x if x else x"),
    ("    match x:\n        case _:\n            pass\n    return x\n",
     "Match statements are not part of tinynn", "match x:"),
    ("    async with x:\n        pass\n    return x\n", "AsyncWith statements", "async with x:"),
])
def test_python_that_tinynn_does_not_have_is_named_at_its_line(body, phrase, mark):
    e = rejected(HEAD + body)
    assert phrase in str(e) and marked(e) == mark


# ---------------------------------------------------------------------- linear cost
def python_lines(fn, *args) -> int:
    """How many lines of Python ``fn(*args)`` executes: a deterministic measure of its work
    (loops count, unlike calls)."""
    count = [0]

    def trace(frame, event, arg):
        count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count[0]


def layers(n):
    body = "".join("    h = tanh(h @ w + b)\n" for _ in range(n))
    return ('def f(x: Tensor[("n", 64), f32], w: Tensor[(64, 64), f32], '
            f'b: Tensor[(64,), f32]):\n    h = x\n{body}    return h\n')


def test_checking_and_building_cost_grows_linearly_with_program_length():
    """Work per layer stays the same at 1x, 10x and 100x a lesson's 8 layers."""
    from mlclab.frontend.parser import _Program
    from mlclab.backend.builder import _build_module

    _build_module(_Program(layers(1), "<string>").check(), None)   # TVM's lazy imports
    per_layer = {}
    for n in (8, 80, 800):
        src = layers(n)
        program = _Program(src, "<string>").check()
        check = python_lines(lambda: _Program(src, "<string>").check())  # noqa: B023 (called now)
        build = python_lines(_build_module, program, None)
        per_layer[n] = (check / n, build / n)
    for n in (80, 800):
        for now, lesson in zip(per_layer[n], per_layer[8]):
            assert now <= lesson * 1.1, per_layer


def test_deep_work_runs_in_place_when_no_big_stack_can_be_had(monkeypatch):
    """Under a tight address-space limit the worker thread cannot start: checking still works
    for ordinary programs, and a deep one is a DSLError rather than a RecursionError."""
    from mlclab.lang import recursion
    from mlclab.frontend.parser import parse_program

    monkeypatch.setattr(recursion, "_start", lambda work: None)
    assert "f" in parse_program(HEAD + "    return x + 1.0\n").functions
    with pytest.raises(DSLError, match="nested too deeply"):
        parse_program(HEAD + "    return " + " + ".join(["x"] * 2000))


@pytest.mark.parametrize("shape,new", [((0, 3), (3, 0)), ((0, 3), (5, -1)), ((0, 0, 3), (3, -1, 7)),
                                       ((3, 0), (2, 0, 5)), ((3, 0), (0,))])
def test_reshape_of_an_empty_tensor_follows_numpy(shape, new):
    """Relax's reshape reads a 0 as "keep this dimension"; numpy's empty results are built."""
    dims = ", ".join(map(str, shape))
    fn = mlclab.compile(f"def f(a: Tensor[({dims}), f32]):\n    return reshape(a, {new})\n")["f"]
    a = np.zeros(shape, "float32")
    assert fn(a).shape == fn.reference(a).shape == np.reshape(a, new).shape
