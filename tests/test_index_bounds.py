"""An int index on a symbolic axis is checked at every call with numpy's rule and message.

``x[5]`` on ``x: Tensor[("n", 4), f32]`` called with n = 2 returned memory from outside the
array. Each case runs in a fresh interpreter: a read out of bounds may crash the process.
"""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

CASE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import mlclab
    body, n = sys.argv[1], int(sys.argv[2])
    fn = mlclab.compile('def f(x: Tensor[("n", 4), f32]):\\n    return ' + body + '\\n')["f"]
    x = np.arange(n * 4, dtype="float32").reshape(n, 4)
    out = {}
    for name, call in (("call", fn), ("reference", fn.reference)):
        try:
            out[name] = ["ok", np.asarray(call(x)).tolist()]
        except Exception as e:
            out[name] = [type(e).__name__, isinstance(e, IndexError), str(e)]
    print(json.dumps(out))
""")


def run(body: str, n: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CASE, body, str(n)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("body,n,index", [
    ("x[5]", 2, 5), ("x[-3]", 2, -3), ("x[0]", 0, 0), ("x[-1]", 0, -1), ("x[2, 1]", 2, 2),
    ("x[5] * 2.0", 3, 5),
])
def test_an_index_outside_the_axis_is_numpys_index_error(body, n, index):
    result = run(body, n)
    for path in ("call", "reference"):
        kind, is_index_error, message = result[path]
        assert is_index_error, result
        assert f"index {index} is out of bounds for axis 0 with size {n}" in message
        assert f"x has n={n}" in message and "line 2" in message


@pytest.mark.parametrize("body,n", [("x[5]", 6), ("x[-3]", 3), ("x[0]", 1), ("x[-1]", 2),
                                    ("x[1][3]", 2)])
def test_an_index_inside_the_axis_is_the_row(body, n):
    x = np.arange(n * 4, dtype="float32").reshape(n, 4)  # noqa: F841 (eval reads it)
    want = eval(body).tolist()       # the test's own numpy expression
    result = run(body, n)
    assert result["call"] == ["ok", want] and result["reference"] == ["ok", want]
