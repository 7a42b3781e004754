"""The command line: ``mlclab viz`` and ``mlclab text``."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from needs import need

import mlclab.viz.dot
from mlclab.cli import main

MODEL = '''\
from mlclab import Tensor, f32

def f(x: Tensor[(8,), f32]):
    y = log(x)
    return y + y

def main(x: Tensor[(8,), f32]):
    return f(x) * 2.0
'''


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_styles(model, capsys):
    code, out, _ = run(capsys, "text", model, "--function", "f", "--style", "relay")
    assert code == 0
    assert out == "fn (%x: Tensor[(8), float32]) {\n  %0 = log(%x);\n  add(%0, %0)\n}\n"
    code, out, _ = run(capsys, "text", model, "-f", "f", "--style", "let")
    assert "let %y = log(%x);" in out
    code, out, _ = run(capsys, "text", model, "--style", "relax")     # default: main
    assert "def main(" in out and "def f(" in out
    code, out, _ = run(capsys, "text", model, "-f", "f", "--style", "tir")
    assert "@T.prim_func" in out


def test_viz_text_views(model, capsys):
    code, out, _ = run(capsys, "viz", model, "-f", "f", "--view", "tree", "--format", "txt")
    assert code == 0 and out.count("Call log %y") == 2 and "recomputed" in out
    code, out, _ = run(capsys, "viz", model, "-f", "f", "--format", "txt")
    assert out.count("Call log %y") == 1 and "^ %y (shared" in out
    code, out, _ = run(capsys, "viz", model, "-f", "f", "--view", "let", "--format", "txt")
    assert "let y = log(x)" in out
    code, out, _ = run(capsys, "viz", model, "--collapse", "function", "--depth", "1",
                       "--format", "txt")
    assert "Collapsed fn f" in out and "Call log" not in out


def test_viz_draws_the_fused_step_of_the_build(model, capsys):
    # "fused" is the dataflow graph after the build's FuseOps pass, read from its record.
    code, out, _ = run(capsys, "viz", model, "-f", "f", "--view", "fused", "--format", "txt")
    assert code == 0 and "[fused_tir_log_add]" in out


def test_viz_writes_svg_png_pdf_and_infers_format_from_suffix(model, tmp_path, capsys):
    code, out, _ = run(capsys, "viz", model, "-f", "f", "-o", tmp_path / "g.svg")
    assert code == 0 and out.strip().endswith("g.svg")
    assert 'id="f:y"' in (tmp_path / "g.svg").read_text()
    run(capsys, "viz", model, "-o", tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    run(capsys, "viz", model, "--format", "pdf", "-o", tmp_path / "g.out")
    assert (tmp_path / "g.out").read_bytes()[:4] == b"%PDF"
    code, out, _ = run(capsys, "viz", model, "-f", "f")            # svg to stdout
    assert out.lstrip().startswith("<?xml") and "<svg" in out
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, _ = run(capsys, "viz", model, "--view", "tree", "--format", "png")
    finally:
        os.chdir(cwd)
    assert out.strip() == "model-main-tree.png" and (tmp_path / "model-main-tree.png").exists()


def test_viz_without_dot_falls_back_to_text(model, tmp_path, capsys, monkeypatch):
    # mlclab runs Graphviz itself (with a time limit): point it at a program that is not there.
    monkeypatch.setattr(mlclab.viz.dot, "DOT", "no-such-graphviz-dot")
    code, out, err = run(capsys, "viz", model, "-f", "f")
    assert code == 0 and "Call log %y" in out and "apt-get install graphviz" in err
    code, out, err = run(capsys, "viz", model, "-f", "f", "-o", tmp_path / "g.png")
    assert code == 0 and out.strip().endswith("g.txt") and "install" in err
    assert "Call log %y" in (tmp_path / "g.txt").read_text()


def test_errors(model, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["viz", str(model), "-f", "nope"])
    assert exc.value.code == 2 and "no function 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["text", str(tmp_path / "missing.py"), "--style", "relay"])
    assert exc.value.code == 2 and "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["text", str(model)])                                  # --style is required
    with pytest.raises(SystemExit):
        main(["viz", str(model), "--depth", "-1"])
    capsys.readouterr()
    bad = tmp_path / "bad.py"
    bad.write_text("def g(a: Tensor[(2, 3), f32], b: Tensor[(4, 4), f32]):\n    return a @ b\n")
    code, out, err = run(capsys, "text", bad, "--style", "relay")
    assert code == 1 and out == "" and "line 2" in err and "Traceback" not in err


def usage_error(capsys, *argv) -> str:
    """Run the CLI expecting a usage error: exit status 2, one line on stderr, no traceback."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == ""
    assert err.startswith("mlclab: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_output_to_a_missing_folder_or_a_directory_is_a_usage_error(model, tmp_path, capsys):
    err = usage_error(capsys, "viz", model, "-o", tmp_path / "nope" / "g.svg")
    assert "no such folder" in err and "nope" in err
    err = usage_error(capsys, "text", model, "--style", "relay", "-o", tmp_path / "nope" / "t")
    assert "no such folder" in err
    assert "is a directory" in usage_error(capsys, "viz", model, "-o", tmp_path)
    assert "is a directory" in usage_error(capsys, "text", model, "--style", "let", "-o", tmp_path)


def test_binary_and_latin1_inputs_are_usage_errors(tmp_path, capsys):
    binary = tmp_path / "model.pyc"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    assert "is a binary file" in usage_error(capsys, "text", binary, "--style", "relax")
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes("# café\ndef f(x: Tensor[(2,), f32]):\n    return x\n".encode("latin-1"))
    err = usage_error(capsys, "viz", latin1, "--format", "txt")
    assert "not UTF-8 text (byte 0xe9 on line 1)" in err and "save it as UTF-8" in err
    assert "no such file" in usage_error(capsys, "text", tmp_path, "--style", "relax")


def test_a_utf8_bom_is_read_as_text(tmp_path, capsys):
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + MODEL.encode())
    code, out, _ = run(capsys, "text", bom, "-f", "f", "--style", "let")
    assert code == 0 and "let %y = log(%x);" in out


def test_a_file_declaring_its_encoding_is_read_as_python_reads_it(tmp_path, capsys):
    declared = tmp_path / "latin1_declared.py"
    declared.write_bytes(("# -*- coding: latin-1 -*-\n# café\n" + MODEL).encode("latin-1"))
    code, out, _ = run(capsys, "text", declared, "-f", "f", "--style", "let")
    assert code == 0 and "let %y = log(%x);" in out
    unknown = tmp_path / "unknown.py"
    unknown.write_bytes(b"# coding: klingon\n" + MODEL.encode())
    assert "unknown encoding" in usage_error(capsys, "text", unknown, "--style", "relax")


def test_installed_console_script():
    script = Path(sys.executable).with_name("mlclab")
    need(script.exists(), f"the mlclab console script ({script}; pip install -e . makes it)")
    result = subprocess.run([str(script), "viz", "--help"], capture_output=True, text=True,
                            timeout=60)
    from mlclab.viz.registry import view_names

    assert result.returncode == 0 and "--view {" + ",".join(view_names()) + "}" in result.stdout
