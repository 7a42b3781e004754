"""The Relax builder: what validate()'s traced build shares with the build fn() runs."""
from mlclab.frontend.parser import parse_program
from mlclab.backend.builder import build_module

SOURCE = """\
def f(a: Tensor[(2, 3), f32], b: Tensor[(3, 4), f32]):
    c = a @ b
    d = relu(c) + 1.0
    e, g = d * 2.0, exp(d)
    return e + g
"""


def blocks(fn):
    """(is dataflow, binding names) of each block of a Relax function."""
    from tvm import relax

    return [(isinstance(blk, relax.DataflowBlock), [b.var.name for b in blk.bindings])
            for blk in fn.body.blocks]


def test_the_traced_build_keeps_the_dataflow_block_and_its_bindings():
    program = parse_program(SOURCE)
    plain = build_module(program).mod["f"]
    traced = build_module(program, trace="f").mod["f"]
    assert blocks(traced) == blocks(plain)
    assert blocks(plain)[0][0] is True


def test_the_traced_build_returns_every_top_level_binding_as_a_block_output():
    from tvm import relax

    traced = build_module(parse_program(SOURCE), trace="f").mod["f"]
    bindings = {b.var.name: b.var for b in traced.body.blocks[0].bindings}
    named = ["c", "d", "e", "g"]
    assert [v.name for v in traced.body.body.fields[1].fields] == named
    assert all(not isinstance(bindings[n], relax.DataflowVar) for n in named)
    assert isinstance(bindings["lv"], relax.DataflowVar)   # temporaries stay inside


def test_binding_info_gives_what_the_views_link_on():
    """BindingInfo.to_dict() has the keys of viz's SourceInfo.to_dict(), so the views can use
    BindingInfo (and Span.from_tvm for spans of plain IR) instead of a third location type."""
    from mlclab.viz.relax_info import SourceInfo

    built = build_module(parse_program(SOURCE))
    info = next(i for i in built.bindings["f"].values() if i.dsl_name == "c")
    assert info.to_dict() == {"lineno": 2, "col_offset": 8, "end_lineno": 2,
                              "end_col_offset": 13, "source_line": "    c = a @ b",
                              "dsl_name": "c"}
    assert info.to_dict().keys() == SourceInfo(1, 0, 1, 1).to_dict().keys()


def test_spans_round_trip_through_tvm():
    from tvm import ir

    from mlclab.lang.source import Span

    span = Span(3, 4, 5, 6)
    assert Span.from_tvm(span.to_tvm(ir.SourceName("<string>"))) == span
