"""Nothing from TVM's C++ logger reaches the student's output (Jupyter forwards fd 2 into the
cell)."""
import numpy as np

import mlclab


def test_power_compiles_without_tvm_log_lines(capfd):
    """TIR's pow warned 'Detected pow(x, y) where y >= 3' four times per compile, on fd 2,
    which Jupyter forwards into the cell."""
    capfd.readouterr()
    f = mlclab.compile("def f(x: Tensor[(3,), f32]):\n    return x ** 3 + x ** 3.5")["f"]
    x = np.array([0.5, 1.0, 2.0], "float32")
    np.testing.assert_allclose(f(x), x ** 3 + x ** np.float32(3.5), rtol=1e-5)
    mlclab.validate(f)
    f.text("tir")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_other_stderr_output_during_a_build_still_arrives(capfd):
    import os

    from mlclab.backend.tvm_log import quiet

    with quiet():
        os.write(2, b"[14:10:12] /project/src/x.cc:1: Warning: dropped\nkept line\n")
    assert capfd.readouterr().err == "kept line\n"
