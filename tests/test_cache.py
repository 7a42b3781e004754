"""The compile cache: keyed by the exact text (no two programs share a key), independent of the
filename (an unchanged re-run cell hits), and an evicted program is freed at once."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlclab
from mlclab.api import cache

BASE = "def keyed(a: Tensor[(2,), f32]):\n    b = a + 1.0\n{sep}    return b * 2.0\n"


@pytest.mark.parametrize("sep", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_characters_splitlines_knows_do_not_merge_keys(sep):
    plain = BASE.format(sep="")
    odd = "def keyed(a: Tensor[(2,), f32]):\n    b = a + 1.0" + sep + "\n    return b * 2.0\n"
    assert cache.normalize(plain) != cache.normalize(odd)
    assert cache.key(plain, "llvm") != cache.key(odd, "llvm")


def test_two_programs_differing_only_by_a_form_feed_line_get_their_own_code():
    mlclab.clear_cache()
    one = "def ff(a: Tensor[(2,), f32]):\n    return a + 1.0\n"
    # A form feed line and a blank line read the same after splitlines; the programs do not.
    two = "def ff(a: Tensor[(2,), f32]):\n    return a \x0c+ 2.0\n"
    first = mlclab.compile(one)["ff"]
    try:
        second = mlclab.compile(two)["ff"]
    except mlclab.DSLError:
        return              # rejected is fine; being handed ``one``'s code is not
    np.testing.assert_array_equal(first([0.0, 0.0]), [1.0, 1.0])
    np.testing.assert_array_equal(second([0.0, 0.0]), [2.0, 2.0])


def test_trailing_blanks_change_nothing_but_leading_lines_do():
    text = BASE.format(sep="")
    assert cache.key(text, "llvm") == cache.key(text.replace("\n", "  \n") + "\n\n \t\n", "llvm")
    # Leading lines number the lines errors point at.
    assert cache.key(text, "llvm") != cache.key("\n" + text, "llvm")
    assert cache.key(text, "llvm") != cache.key(text, {"kind": "llvm"})


def test_a_hit_from_another_filename_reports_its_own_name():
    mlclab.clear_cache()
    text = BASE.format(sep="").replace("keyed", "renamed_fn")
    first = mlclab.compile(text, filename="<tinynn cell [1]>")
    again = mlclab.compile(text, filename="<tinynn cell [2]>")
    assert mlclab.cache_info()["hits"] == 1
    assert again.built is first.built                    # the compiled code is shared
    assert again.filename == again.typed.filename == "<tinynn cell [2]>"
    assert first.filename == "<tinynn cell [1]>"
    assert again["renamed_fn"].source == text
    np.testing.assert_array_equal(again["renamed_fn"]([1.0, 2.0]), [4.0, 6.0])
    assert mlclab.compile(text, filename="<tinynn cell [1]>") is first


def test_an_unchanged_rerun_cell_hits_the_cache(ipython_shell):
    from IPython.utils.capture import capture_output

    ip = ipython_shell
    ip.run_line_magic("load_ext", "mlclab")
    mlclab.clear_cache()
    cell = "def rerun(a: Tensor[(2,), f32]):\n    return a - 1.0\n"
    with capture_output():
        ip.run_cell_magic("tinynn", "--quiet", cell)
        first = ip.user_ns["rerun"].program.filename
        ip.history_manager.input_hist_raw.append(cell)       # the next cell number
        ip.run_cell_magic("tinynn", "--quiet", cell)
    assert ip.user_ns["rerun"].program.filename != first
    assert mlclab.cache_info()["hits"] == 1


def test_an_evicted_program_is_freed_without_the_cyclic_gc():
    # In a fresh process: the first compile also imports TVM, which once held the caller's
    # frames in garbage cycles.
    code = """
        import gc, weakref, mlclab
        gc.disable()
        for n in range(2):
            prog = mlclab.compile(f"def ev{n}(a: Tensor[(2,), f32]):\\n    return a + 1.0\\n")
            fn = prog[f"ev{n}"]
            fn([1.0, 2.0]); fn.reference([1.0, 2.0]); fn.trace([1.0, 2.0])
            mlclab.validate(fn, seed=1)
            fn.text("relax"); fn.text("tir"); fn.pipeline()[3].text(); fn.graph()
            refs = [weakref.ref(prog), weakref.ref(prog.built), weakref.ref(fn)]
            del prog, fn
            mlclab.clear_cache()
            assert all(r() is None for r in refs), [r() for r in refs]
        print("ok")
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
