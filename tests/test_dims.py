"""Dimensions as mlclab spells them (``mlclab.lang.dims``), read from TVM's printing too."""
import pytest

from mlclab.lang import dims as D


@pytest.mark.parametrize("tvm, python", [
    ("T.int64(8)", "8"),
    ("batch * T.int64(5)", "batch * 5"),
    ("(h - T.int32(3)) // T.int64(2) + 1", "(h - 3) // 2 + 1"),
])
def test_parse_reads_tvm_integers_as_integers(tvm, python):
    assert D.parse(tvm) == D.parse(python)


def test_a_parsed_tvm_dimension_evaluates():
    assert D.evaluate(D.parse("batch * T.int64(5)"), {"batch": 3}) == 15


@pytest.mark.parametrize("text", ["T.max(n, 1)", "n / 2", "T.int64(n)", "x.y", "n +"])
def test_parse_refuses_what_is_not_a_dimension(text):
    with pytest.raises(ValueError, match="not a dimension expression"):
        D.parse(text)
